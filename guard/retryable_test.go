package guard_test

import (
	"context"
	"errors"
	"fmt"
	"testing"
	"testing/synctest"

	"github.com/agentguard/agentguard/guard"
	"github.com/agentguard/agentguard/guard/guardtest"
	"github.com/agentguard/agentguard/trace"
	"github.com/tmc/langchaingo/llms"
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

// Provider errors typed by langchaingo are judged by their code, not their
// text; a typed error with no useful code falls back to the text.
func TestRetryableTyped(t *testing.T) {
	typed := func(code llms.ErrorCode, msg string) error { return llms.NewError(code, "openai", msg) }
	tests := []struct {
		name string
		err  error
		want bool
	}{
		{"rate limit", typed(llms.ErrCodeRateLimit, "Rate limit exceeded"), true},
		{"timeout", typed(llms.ErrCodeTimeout, "deadline"), true},
		{"provider unavailable", typed(llms.ErrCodeProviderUnavailable, "try later"), true},
		{"authentication", typed(llms.ErrCodeAuthentication, "Invalid or missing API key"), false},
		{"invalid request", typed(llms.ErrCodeInvalidRequest, "Invalid request"), false},
		{"resource not found", typed(llms.ErrCodeResourceNotFound, "Model not found"), false},
		{"quota exceeded", typed(llms.ErrCodeQuotaExceeded, "API quota exceeded"), false},
		{"content filter", typed(llms.ErrCodeContentFilter, "filtered"), false},
		{"token limit", typed(llms.ErrCodeTokenLimit, "Context length exceeded"), false},
		{"not implemented", typed(llms.ErrCodeNotImplemented, "no streaming"), false},
		{"canceled", typed(llms.ErrCodeCanceled, "canceled"), false},
		{"sentinel", llms.ErrRateLimit, true},
		{"the code beats the text", typed(llms.ErrCodeInvalidRequest, "status code: 500"), false},
		{"the code beats the text, the other way", typed(llms.ErrCodeRateLimit, "API returned unexpected status code: 400"), true},
		{"unknown code, client error in the text", typed(llms.ErrCodeUnknown, "API returned unexpected status code: 401: bad key"), false},
		{"unknown code, nothing in the text", typed(llms.ErrCodeUnknown, "connection reset by peer"), true},
		{"unknown code, client error in the cause", typed(llms.ErrCodeUnknown, "failed").(*llms.Error).WithCause(errors.New("404 Not Found")), false},
		{"unknown code, server error in the cause", typed(llms.ErrCodeUnknown, "failed").(*llms.Error).WithCause(errors.New("status code: 502")), true},
		{"wrapped by the guard", &guard.Error{Op: "model", Name: "primary", Err: typed(llms.ErrCodeAuthentication, "bad key")}, false},
		{"wrapped with %w", fmt.Errorf("generate: %w", typed(llms.ErrCodeProviderUnavailable, "down")), true},
		{"mapped by llms.ErrorMapper", llms.NewErrorMapper("anthropic").Map(errors.New("401 Unauthorized: invalid x-api-key")), false},
		{"mapped rate limit", llms.NewErrorMapper("anthropic").Map(errors.New("429 Too Many Requests")), true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := guard.Retryable(tt.err); got != tt.want {
				t.Errorf("Retryable(%v) = %v, want %v", tt.err, got, tt.want)
			}
		})
	}
}

// The model path retries a typed rate limit and gives up at once on a typed
// authentication failure, whatever their texts say.
func TestModelRetriesByErrorCode(t *testing.T) {
	tests := []struct {
		name       string
		err        error
		wantErr    bool
		wantFailed int
	}{
		{"rate limit is retried", llms.NewError(llms.ErrCodeRateLimit, "openai", "status code: 400"), false, 1},
		{"authentication is not", llms.NewError(llms.ErrCodeAuthentication, "openai", "status code: 500"), true, 1},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) { // the backoff waits on the bubble's clock
				model := guardtest.Script(guardtest.Reply{Err: tt.err}, guardtest.Text("Second try."))
				g := guard.New(guard.Config{Resilience: guard.Resilience{ModelRetries: 2}})
				defer g.Close(context.Background())
				ctx, rec := g.StartTrace(context.Background(), "s", "")
				_, err := g.Run(ctx, model, nil, human("hi"))
				if gotErr := err != nil; gotErr != tt.wantErr {
					t.Errorf("Run error = %v, want error %v", err, tt.wantErr)
				}
				failed := 0
				for _, s := range rec.Trace().Steps {
					if s.Kind == trace.KindModel && s.Error != "" {
						failed++
					}
				}
				if failed != tt.wantFailed {
					t.Errorf("failed model attempts recorded = %d, want %d", failed, tt.wantFailed)
				}
			})
		})
	}
}
