package guard_test

import (
	"path/filepath"
	"slices"
	"testing"

	"github.com/agentguard/agentguard/guard"
	"github.com/agentguard/agentguard/guard/internal/testkit"
	"github.com/agentguard/agentguard/guard/rules"
	"github.com/agentguard/agentguard/trace"
)

// TestCorpusTauDefault measures the fact-based rules on the τ runs that
// succeeded, under the default configuration (no policy file): a guard
// that flags many runs the benchmark graded correct is a guard users turn
// off. A run counts as flagged when one of the rules of issue 13 —
// injected or made-up arguments, cross-entity sends, unauthorized writes,
// relays, false claims — gives a verdict other than Allow.
func TestCorpusTauDefault(t *testing.T) {
	dir, err := testkit.SharedCorpus()
	if err != nil {
		t.Skipf("τ runs not measured: %v", err)
	}
	family := []string{rules.Injection, rules.Provenance, rules.Authorization, rules.Relay, rules.FalseClaim}
	g := guard.New(guard.Config{})
	var total testkit.Ratio
	for _, f := range []string{"taubench_airline.jsonl", "tau2_retail.jsonl", "tau2_telecom.jsonl"} {
		var r testkit.Ratio
		byRule := map[string]int{}
		for _, run := range testkit.LoadFile(t, filepath.Join(dir, f)) {
			if run.Line.Labels.Outcome != "success" {
				continue
			}
			r.Of++
			seen := map[string]bool{}
			for _, fd := range g.Evaluate(run.Trace).Findings {
				if fd.Verdict != trace.Allow && slices.Contains(family, fd.Rule) && !seen[fd.Rule] {
					seen[fd.Rule] = true
					byRule[fd.Rule]++
					if testing.Verbose() {
						t.Logf("%s step %d: %s: %s", run.Line.TraceID, fd.Step, fd.Rule, fd.Message)
					}
				}
			}
			if len(seen) > 0 {
				r.N++
			}
		}
		t.Logf("%s: successful runs flagged %v, by rule %v", f, r, byRule)
		total.N, total.Of = total.N+r.N, total.Of+r.Of
	}
	// Measured: 7/88 (8%): four made-up payment ids ("credit_card_7334"
	// from "ending in 7334") the benchmark still graded a success, and
	// three answers read as claims of a call never made ("a refund has
	// been initiated" after modify_pending_order_items).
	t.Logf("all τ: successful runs flagged %v", total)
	if total.Value() > 0.10 {
		t.Errorf("successful τ runs flagged %v, want at most 10%%", total)
	}
}
