package guard_test

import (
	"strings"
	"testing"

	"github.com/agentguard/agentguard/guard"
	"github.com/agentguard/agentguard/guard/internal/testkit"
	"github.com/agentguard/agentguard/guard/rules"
	"github.com/agentguard/agentguard/trace"
)

// TestLoopDefinition is where the guard departs from seed 003, which
// defines a loop as "the same tool three times in a row" whatever the
// arguments. The loop rule keys on the call — tool and arguments — because
// reading three orders in a row is how a legitimate agent works: on the
// corpus's legitimate runs the seed's definition fires on 52 of 126
// successful τ runs and 59 of 695 clean AgentDojo runs, the guard's on
// none of the τ runs and 2 of AgentDojo's.
func TestLoopDefinition(t *testing.T) {
	g := guard.New(guard.Config{})
	loops := func(tr *trace.Trace) bool {
		for _, f := range g.Evaluate(tr).Findings {
			if f.Rule == rules.Loop {
				return true
			}
		}
		return false
	}
	call := func(tool string, args ...string) *trace.Trace {
		tr := &trace.Trace{ID: "t", UserTurns: []string{"Where are orders A1001, A1002 and A1003?"}}
		for i, a := range args {
			id := string(rune('a' + i))
			tr.Steps = append(tr.Steps,
				&trace.Step{Index: len(tr.Steps), Kind: trace.KindModel, Calls: []trace.Call{{ID: id, Name: tool, Args: a}}},
				&trace.Step{Index: len(tr.Steps) + 1, Kind: trace.KindTool, Name: tool, CallID: id, Args: a, Result: `{"status":"shipped"}`})
		}
		return tr
	}
	same := `{"order_id":"A1001"}`
	if !loops(call("query_order", same, same, same)) {
		t.Error("the same call three times in a row: no loop finding")
	}
	if loops(call("query_order", `{"order_id":"A1001"}`, `{"order_id":"A1002"}`, `{"order_id":"A1003"}`)) {
		t.Error("three orders read in a row: a loop finding")
	}

	// The measurement behind the departure.
	type tally struct{ runs, seed, guard int }
	var tau, dojo tally
	for _, file := range []string{"agentdojo.jsonl", "agentdojo_models.jsonl", "taubench_airline.jsonl", "tau2_retail.jsonl", "tau2_telecom.jsonl", "tau2_models.jsonl"} {
		dojoFile := strings.HasPrefix(file, "agentdojo")
		for _, r := range testkit.LoadCorpus(t, file) {
			l := r.Line.Labels
			if dojoFile && l.AttackType != nil || !dojoFile && l.Outcome != "success" {
				continue
			}
			tl := &tau
			if dojoFile {
				tl = &dojo
			}
			tl.runs++
			if sameToolThrice(r.Trace) {
				tl.seed++
			}
			if loops(r.Trace) {
				tl.guard++
			}
		}
	}
	t.Logf("legitimate τ runs: %d; the seed's loop fires on %d, the guard's on %d", tau.runs, tau.seed, tau.guard)
	t.Logf("clean AgentDojo runs: %d; the seed's loop fires on %d, the guard's on %d", dojo.runs, dojo.seed, dojo.guard)
	if tau.guard*100 > tau.runs || dojo.guard*100 > dojo.runs {
		t.Errorf("the guard's loop rule flags more than 1%% of legitimate runs")
	}
	if tau.seed*4 < tau.runs {
		t.Errorf("the seed's definition fires on fewer than a quarter of legitimate τ runs: revisit the departure")
	}
}

// sameToolThrice reports whether tr has three tool steps of one tool in a
// row, whatever their arguments: seed 003's loop.
func sameToolThrice(tr *trace.Trace) bool {
	prev, run := "", 0
	for _, s := range tr.Steps {
		if s.Kind != trace.KindTool {
			continue
		}
		if s.Name == prev {
			run++
		} else {
			prev, run = s.Name, 1
		}
		if run >= 3 {
			return true
		}
	}
	return false
}
