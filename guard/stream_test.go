package guard_test

import (
	"context"
	"slices"
	"strings"
	"testing"

	"github.com/agentguard/agentguard/guard"
	"github.com/agentguard/agentguard/guard/guardtest"
	"github.com/agentguard/agentguard/trace"
	"github.com/tmc/langchaingo/llms"
)

func TestStreamingNeverBypassesChecks(t *testing.T) {
	fabricated := guardtest.Text("Per clause 7.3 you get ¥50.")
	honest := guardtest.Text("Let me check that for you.")
	tests := []struct {
		name       string
		cfg        guard.Config
		route      string
		script     []guardtest.Reply
		wantStream string
		wantTag    bool // findings tagged already-streamed
	}{
		{"pass-through, allowed", guard.Config{}, "", []guardtest.Reply{honest}, "Let me check that for you.", false},
		{"buffered, allowed", guard.Config{Answers: guard.Answers{BufferStreams: true}}, "", []guardtest.Reply{honest}, "Let me check that for you.", false},
		{"buffered, refused: the fabrication never goes out", guard.Config{Answers: guard.Answers{BufferStreams: true}}, "", []guardtest.Reply{fabricated, fabricated}, guard.DefaultRefusal, false},
		{"buffered route, retried then allowed", guard.Config{Answers: guard.Answers{BufferRoutes: []string{"policy"}}}, "policy", []guardtest.Reply{fabricated, honest}, "Let me check that for you.", false},
		{"pass-through, corrected after streaming", guard.Config{}, "", []guardtest.Reply{fabricated}, "Per clause 7.3 you get ¥50.\n\n" + guard.DefaultRefusal, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			g := guard.New(tt.cfg)
			var got strings.Builder
			stream := llms.WithStreamingFunc(func(_ context.Context, chunk []byte) error {
				got.Write(chunk)
				return nil
			})
			ctx, _ := g.StartTrace(context.Background(), "s", tt.route)
			res, err := g.Run(ctx, guardtest.Script(tt.script...), nil, human("Refund?"), stream)
			if err != nil {
				t.Fatal(err)
			}
			if got.String() != tt.wantStream {
				t.Errorf("streamed %q, want %q", got.String(), tt.wantStream)
			}
			tagged := slices.ContainsFunc(res.Findings, func(f trace.Finding) bool { return slices.Contains(f.Tags, "already-streamed") })
			if tagged != tt.wantTag {
				t.Errorf("already-streamed tag = %v, want %v (%+v)", tagged, tt.wantTag, res.Findings)
			}
		})
	}
}
