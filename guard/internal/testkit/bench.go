package testkit

import (
	"context"
	"testing"
	"time"

	"github.com/agentguard/agentguard/guard"
	"github.com/agentguard/agentguard/trace"
)

// BenchTool is the tool the benchmarks call: it answers at once and keeps
// nothing, so that what is measured is the wrapper.
type BenchTool struct{}

func (BenchTool) Name() string                                 { return "query_order" }
func (BenchTool) Description() string                          { return "Looks an order up by id." }
func (BenchTool) Parameters() any                              { return OrderSchema }
func (BenchTool) Call(context.Context, string) (string, error) { return `{"status":"shipped"}`, nil }

// BenchStep runs one tool call through a wrapped tool per iteration, in a
// fresh trace every 16 calls so the trace stays small. Traces are started
// in batches with the timer stopped, so the measure is the step alone.
func BenchStep(b *testing.B, g *guard.Guard, args func(i int) string) {
	BenchStepSaying(b, g, "", args)
}

// BenchStepSaying is BenchStep with a user turn opening every trace, as a
// conversation recorded through WrapModel or Run has: the provenance rules
// then judge every id a read uses against what the user said.
//
// Besides wall time it reports the process's CPU time per call, the
// trace starts left out (cpu-ns/op): on a busy machine wall time measures
// the neighbours too, and CPU time counts what a hand-off to another
// goroutine costs the other core.
func BenchStepSaying(b *testing.B, g *guard.Guard, said string, args func(i int) string) {
	const perTrace, batch = 16, 1024
	tool := g.WrapTool(BenchTool{})
	ctxs := make([]context.Context, batch)
	b.ReportAllocs()
	cpu, untimed := ProcessCPU(), time.Duration(0)
	defer func() { ReportCPU(b, cpu+untimed) }()
	for i := 0; b.Loop(); i++ {
		if i%(perTrace*batch) == 0 {
			b.StopTimer()
			from := ProcessCPU()
			for j := range ctxs {
				var rec *trace.Recorder
				ctxs[j], rec = g.StartTrace(context.Background(), "s", "r")
				if said != "" {
					rec.UserTurn(said)
				}
			}
			untimed += ProcessCPU() - from
			b.StartTimer()
		}
		if _, err := tool.Call(ctxs[i/perTrace%batch], args(i)); err != nil {
			b.Fatal(err)
		}
	}
}

// OrderArgs are the arguments BenchStep's callers alternate between.
var OrderArgs = []string{`{"order_id":"A1001"}`, `{"order_id":"A1002"}`}

// OrderSchema is the argument schema of the order tools the tests call.
var OrderSchema = map[string]any{
	"type":       "object",
	"properties": map[string]any{"order_id": map[string]any{"type": "string"}},
	"required":   []string{"order_id"},
}
