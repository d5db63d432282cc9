package authz

import (
	"fmt"
	"testing"

	"github.com/agentguard/agentguard/guard/internal/detect"
	"github.com/agentguard/agentguard/guard/internal/rulekit"
	"github.com/agentguard/agentguard/trace"
)

// BenchmarkAuthorization is the check of a write at the end of a session
// of n steps, its index read once before, as online: the cost should not
// grow with the session (10 / 1k / 10k steps).
func BenchmarkAuthorization(b *testing.B) {
	for _, n := range []int{10, 1000, 10000} {
		b.Run(fmt.Sprint(n), func(b *testing.B) {
			r := NewAuthorization(rulekit.NewTools(detect.Default(), nil), true)
			t := &trace.Trace{ID: "s", UserTurns: []string{"Please send each customer of order A1000 their invoice."}}
			for i := range n {
				s := &trace.Step{Index: i, Kind: trace.KindTool, Name: "get_invoice", Args: fmt.Sprintf(`{"order":"A%d"}`, i), Result: `{"total":12}`}
				if i%3 == 2 {
					s.Name, s.Args, s.Result = "send_email", fmt.Sprintf(`{"to":"c%d@example.com"}`, i), "sent"
				}
				t.Steps = append(t.Steps, s)
			}
			write := &trace.Step{Index: n, Kind: trace.KindTool, Name: "send_email", Args: `{"to":"last@example.com"}`}
			r.Check(t, write)
			b.ReportAllocs()
			for b.Loop() {
				if ff := r.Check(t, write); len(ff) != 0 {
					b.Fatalf("a requested write flagged: %v", ff)
				}
			}
		})
	}
}
