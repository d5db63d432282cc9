package guard_test

import (
	"fmt"
	"testing"

	"github.com/agentguard/agentguard/guard"
	"github.com/agentguard/agentguard/guard/rules"
	"github.com/agentguard/agentguard/trace"
)

// sessionTrace is a long session as the provenance rules see it: a user
// turn naming an order, then reads and writes 2:1, each write addressed to
// an e-mail an earlier read returned and quoting that read's result.
func sessionTrace(steps int) *trace.Trace {
	t := &trace.Trace{ID: "bench", UserTurns: []string{"Please send each customer of order A1000 their invoice."}}
	for i := 0; len(t.Steps) < steps; i++ {
		email := fmt.Sprintf("customer%d@example.com", i)
		t.Steps = append(t.Steps,
			&trace.Step{Index: len(t.Steps), Kind: trace.KindTool, Name: "get_invoice", Args: fmt.Sprintf(`{"order_id":"A%d"}`, 1000+i),
				Result: fmt.Sprintf(`{"order_id":"A%d","email":%q,"invoice":"INV-%05d","total":%d.50}`, 1000+i, email, i, 100+i)},
			&trace.Step{Index: len(t.Steps) + 1, Kind: trace.KindTool, Name: "get_customer", Args: fmt.Sprintf(`{"email":%q}`, email),
				Result: fmt.Sprintf(`{"email":%q,"name":"Customer %d"}`, email, i)},
			&trace.Step{Index: len(t.Steps) + 2, Kind: trace.KindTool, Name: "send_email", Args: fmt.Sprintf(`{"to":%q,"body":"Invoice INV-%05d, total %d.50"}`, email, i, 100+i)},
		)
	}
	t.Steps = t.Steps[:steps]
	return t
}

// BenchmarkProvenanceWrite is the provenance check of one write near the
// end of a session of 10, 100, 1,000 and 10,000 steps, the way the guard
// runs it online: the trace's origins index is already up to date, so the
// check costs O(the write's arguments) and stays flat in session length.
// The baseline is the same check at 10 steps.
func BenchmarkProvenanceWrite(b *testing.B) {
	for _, n := range []int{10, 100, 1000, 10000} {
		b.Run(fmt.Sprint(n), func(b *testing.B) { benchProvenanceWrite(b, n) })
	}
}

// benchProvenanceWrite is one sized run of BenchmarkProvenanceWrite: the
// check of a write at the end of a session of n steps.
func benchProvenanceWrite(b *testing.B, n int) {
	rule, _ := guard.New(guard.Config{}).Rule(rules.Provenance)
	t := sessionTrace((n + 2) / 3 * 3) // ends with a write
	last := len(t.Steps) - 1
	prefix, write := t.Prefix(last), t.Steps[last]
	rule.Check(prefix, write) // index the session once, as online
	b.ReportAllocs()
	for b.Loop() {
		if ff := rule.Check(prefix, write); len(ff) != 0 {
			b.Fatalf("clean write flagged: %v", ff)
		}
	}
}

// BenchmarkSessionRules is one session judged step by step with every
// default rule, as Evaluate does online and offline: the cost per step
// should not grow with the session (10 / 1k / 10k steps).
func BenchmarkSessionRules(b *testing.B) {
	g := guard.New(guard.Config{Gates: guard.Gates{LoopLimit: -1, MaxSteps: -1}})
	for _, n := range []int{10, 1000, 10000} {
		b.Run(fmt.Sprint(n), func(b *testing.B) {
			t := sessionTrace(n)
			b.ReportAllocs()
			for b.Loop() {
				g.Evaluate(t)
			}
			b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N*n), "ns/step")
		})
	}
}
