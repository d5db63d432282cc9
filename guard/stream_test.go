package guard_test

import (
	"context"
	"slices"
	"strings"
	"testing"

	"github.com/agentguard/agentguard/guard"
	"github.com/agentguard/agentguard/guard/guardtest"
	"github.com/agentguard/agentguard/guard/internal/testkit"
	"github.com/agentguard/agentguard/guard/rules"
	"github.com/agentguard/agentguard/trace"
	"github.com/tmc/langchaingo/llms"
)

func TestStreamingNeverBypassesChecks(t *testing.T) {
	fabricated := guardtest.Text("Per clause 7.3 you get ¥50.")
	honest := guardtest.Text("Let me check that for you.")
	passThrough := guard.Config{Answers: guard.Answers{PassThrough: true}}
	tests := []struct {
		name       string
		cfg        guard.Config
		route      string
		script     []guardtest.Reply
		wantStream string
		wantTag    bool // findings tagged already-streamed
	}{
		{"pass-through, allowed", passThrough, "", []guardtest.Reply{honest}, "Let me check that for you.", false},
		{"default buffers, allowed", guard.Config{}, "", []guardtest.Reply{honest}, "Let me check that for you.", false},
		{"default buffers, refused: the fabrication never goes out", guard.Config{}, "", []guardtest.Reply{fabricated, fabricated}, testkit.Refusal, false},
		{"default buffers, retried then allowed", guard.Config{}, "policy", []guardtest.Reply{fabricated, honest}, "Let me check that for you.", false},
		{"pass-through route, corrected after streaming", guard.Config{Answers: guard.Answers{PassThroughRoutes: []string{"chat"}}}, "chat", []guardtest.Reply{fabricated}, "Per clause 7.3 you get ¥50.\n\n" + testkit.Refusal, true},
		{"pass-through, corrected after streaming", passThrough, "", []guardtest.Reply{fabricated}, "Per clause 7.3 you get ¥50.\n\n" + testkit.Refusal, true},
		{"no answer rule: nothing to wait for", guard.Config{Disable: answerRules()}, "", []guardtest.Reply{fabricated}, "Per clause 7.3 you get ¥50.", false},
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

// answerRules names every rule but the tool-only ones.
func answerRules() []string {
	var out []string
	for _, r := range rules.Builtin() {
		if !slices.Contains([]string{rules.AllowList, rules.Arguments, rules.Loop, rules.MaxSteps}, r) {
			out = append(out, r)
		}
	}
	return out
}
