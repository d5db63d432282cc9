package main

import (
	"bytes"
	"context"
	"strings"
	"testing"

	"github.com/agentguard/agentguard/examples/agentguard/internal/cli"
)

// TestDispatch checks the verbs' dispatch: usage, help, unknown verbs.
func TestDispatch(t *testing.T) {
	for _, tt := range []struct {
		name   string
		args   []string
		want   int
		stdout string // a substring of the standard output
		stderr string // a substring of the standard error
	}{
		{"no verb", nil, cli.ExitUsage, "", "missing verb"},
		{"-h", []string{"-h"}, cli.ExitPassed, "verbs:", ""},
		{"help", []string{"help"}, cli.ExitPassed, "verbs:", ""},
		{"help verb", []string{"help", "ledger"}, cli.ExitPassed, "usage: agentguard ledger", ""},
		{"unknown verb", []string{"healthcheck"}, cli.ExitUsage, "", `unknown verb "healthcheck"`},
	} {
		t.Run(tt.name, func(t *testing.T) {
			var stdout, stderr bytes.Buffer
			if got := run(context.Background(), tt.args, &stdout, &stderr); got != tt.want {
				t.Errorf("exit %d, want %d", got, tt.want)
			}
			if !strings.Contains(stdout.String(), tt.stdout) || !strings.Contains(stderr.String(), tt.stderr) {
				t.Errorf("stdout %q, stderr %q: want %q and %q", stdout.String(), stderr.String(), tt.stdout, tt.stderr)
			}
		})
	}
}
