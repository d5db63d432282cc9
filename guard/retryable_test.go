package guard_test

import (
	"errors"
	"testing"

	"github.com/agentguard/agentguard/guard"
)

func TestRetryable(t *testing.T) {
	for msg, want := range map[string]bool{
		"API returned unexpected status code: 429: rate limited": true,
		"API returned unexpected status code: 500":               true,
		"API returned unexpected status code: 401: bad key":      false,
		"status code: 400 invalid request: messages too long":    false,
		"404 Not Found": false,
		"dial tcp 127.0.0.1:1: connect: connection refused": true,
		"anthropic: status=408 request timeout":             true,
		"guard: model: model returned an empty answer":      true,
	} {
		if got := guard.Retryable(errors.New(msg)); got != want {
			t.Errorf("Retryable(%q) = %v, want %v", msg, got, want)
		}
	}
}
