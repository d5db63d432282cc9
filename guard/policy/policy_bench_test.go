package policy_test

import (
	"fmt"
	"strings"
	"testing"

	"github.com/agentguard/agentguard/guard"
	"github.com/agentguard/agentguard/guard/internal/testkit"
	"github.com/agentguard/agentguard/guard/policy"
	"github.com/agentguard/agentguard/trace"
)

// benchPolicy writes a policy of 30 checks in the shape of the worked
// policies: on the judged tool, preconditions on the record fetched
// earlier for the same entity (last), counts of earlier calls (calls),
// argument bounds and a table lookup. perTool of them are on the judged
// tool, cancel_order; the others on nine other tools.
func benchPolicy(perTool int) string {
	var b strings.Builder
	b.WriteString("tables:\n  limit: {gold: 5, silver: 3, regular: 1}\ntools:\n")
	exprs := []string{
		`last('get_order', args.order_id).status == 'pending'`,
		`size(calls('cancel_order', args.order_id)) == 0`,
		`args.reason in ['no longer needed', 'ordered by mistake']`,
		`last('get_order', args.order_id).total >= 0`,
		`tables.limit[last('get_user', last('get_order', args.order_id).user_id).tier] >= 1`,
		`!has(args.amount) || args.amount <= last('get_order', args.order_id).total`,
	}
	write := func(tool string, n, from int) {
		fmt.Fprintf(&b, "  %s:\n    checks:\n", tool)
		for i := range n {
			fmt.Fprintf(&b, "      - name: %s-%d\n        require: %q\n", tool, from+i, exprs[(from+i)%len(exprs)])
		}
	}
	write("cancel_order", perTool, 0)
	rest, tools := 30-perTool, 9
	for i := range tools {
		n := rest / tools
		if i < rest%tools {
			n++
		}
		if n > 0 {
			write(fmt.Sprintf("tool_%d", i), n, 0)
		}
	}
	return b.String()
}

// benchTrace is a session of n steps: lookups of orders and users, one
// in three a write on another order; the order judged is looked up first.
func benchTrace(n int) *trace.Trace {
	tr := &trace.Trace{ID: "bench", UserTurns: []string{"cancel order #W7, I no longer need it"}}
	add := func(s *trace.Step) {
		s.Index = len(tr.Steps)
		tr.Steps = append(tr.Steps, s)
	}
	add(&trace.Step{Kind: trace.KindTool, Name: "get_user", Args: `{"user_id":"u1"}`, Result: `{"user_id":"u1","tier":"gold"}`})
	add(&trace.Step{Kind: trace.KindTool, Name: "get_order", Args: `{"order_id":"#W7"}`, Result: `{"order_id":"#W7","user_id":"u1","status":"pending","total":120.5}`})
	for i := 0; len(tr.Steps) < n; i++ {
		id := fmt.Sprintf("#W%d", 1000+i)
		if i%3 == 2 {
			add(&trace.Step{Kind: trace.KindTool, Name: "modify_order", Args: fmt.Sprintf(`{"order_id":%q,"items":["a","b"]}`, id), Result: `{"status":"modified"}`})
			continue
		}
		add(&trace.Step{Kind: trace.KindTool, Name: "get_order", Args: fmt.Sprintf(`{"order_id":%q}`, id), Result: fmt.Sprintf(`{"order_id":%q,"user_id":"u1","status":"delivered","total":%d}`, id, i)})
	}
	return tr
}

// BenchmarkPolicyChecks judges one tool call against a policy of 30
// checks, its record looked up through the per-trace index, at session
// lengths 10, 1,000 and 10,000: the cost must not grow with the session.
// "on the tool" puts all 30 on the judged tool; "spread" puts 3 there and
// 27 on nine other tools, as a domain policy is written. Compare with
// BenchmarkGuardedStep in the same run.
func BenchmarkPolicyChecks(b *testing.B) {
	for _, layout := range []struct {
		name    string
		perTool int
	}{{"on the tool", 30}, {"spread", 3}} {
		p, err := policy.Read("bench.yaml", []byte(benchPolicy(layout.perTool)))
		if err != nil {
			b.Fatal(err)
		}
		rule := p.Config().Rules[0]
		for _, n := range []int{10, 1000, 10000} {
			b.Run(fmt.Sprintf("%s/steps=%d", layout.name, n), func(b *testing.B) {
				tr := benchTrace(n)
				call := &trace.Step{Index: n, Kind: trace.KindTool, Name: "cancel_order", Args: `{"order_id":"#W7","reason":"no longer needed"}`}
				if fs := rule.Check(tr, call); len(fs) != 0 {
					b.Fatalf("the call is judged a violation: %+v", fs)
				}
				b.ReportAllocs()
				cpu := testkit.ProcessCPU()
				for b.Loop() {
					rule.Check(tr, call)
				}
				testkit.ReportCPU(b, cpu)
			})
		}
	}
}

// BenchmarkPolicyIndexGrowth appends one step and judges one call per
// iteration, so the index's update is measured with the lookups: the
// cost per step must stay flat as the session grows.
func BenchmarkPolicyIndexGrowth(b *testing.B) {
	p, err := policy.Read("bench.yaml", []byte(benchPolicy(3)))
	if err != nil {
		b.Fatal(err)
	}
	rule := p.Config().Rules[0]
	for _, n := range []int{10, 1000, 10000} {
		b.Run(fmt.Sprintf("steps=%d", n), func(b *testing.B) {
			base := benchTrace(n)
			call := &trace.Step{Kind: trace.KindTool, Name: "cancel_order", Args: `{"order_id":"#W7","reason":"no longer needed"}`}
			tr := &trace.Trace{ID: "grow", UserTurns: base.UserTurns, Steps: base.Steps}
			rule.Check(tr, call)
			b.ReportAllocs()
			cpu := testkit.ProcessCPU()
			i := 0
			for b.Loop() {
				s := &trace.Step{Index: len(tr.Steps), Kind: trace.KindTool, Name: "get_order", Args: fmt.Sprintf(`{"order_id":"#X%d"}`, i), Result: `{"status":"delivered","total":1}`}
				tr.Steps = append(tr.Steps, s)
				call.Index = len(tr.Steps)
				rule.Check(tr, call)
				i++
			}
			testkit.ReportCPU(b, cpu)
		})
	}
}

// BenchmarkPolicyBaseline is BenchmarkGuardedStep (one clean tool call
// through the wrapper, default rules) with its CPU time per call
// reported, the baseline the policy benchmarks are read against. Its CPU
// time includes starting a trace every 16 calls.
func BenchmarkPolicyBaseline(b *testing.B) {
	cpu := testkit.ProcessCPU()
	testkit.BenchStep(b, guard.New(guard.Config{}), func(i int) string { return testkit.OrderArgs[i%2] })
	testkit.ReportCPU(b, cpu)
}
