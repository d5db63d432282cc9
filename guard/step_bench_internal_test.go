package guard

import (
	"context"
	"testing"
	"time"

	"github.com/agentguard/agentguard/trace"
)

// BenchmarkJudgeCleanCall is the guard's own judging of one clean tool
// call, every default rule on: the call proposed and judged by the rules
// its tool's plan runs, then committed to the trace, as callPlanned does,
// without running the tool or reading the clock. Like BenchmarkGuardedStep
// it starts a fresh trace every 16 calls, outside the timer. Read it
// against BenchmarkOTelSpanBaseline in the same run: it is the part of a
// guarded step that is the guard's alone.
func BenchmarkJudgeCleanCall(b *testing.B) {
	g := New(Config{})
	defer g.Close(context.Background())
	g.WrapTool(judgeTool{})
	tp := g.plan(judgeTool{}.Name())
	args := []string{`{"order_id":"A1001"}`, `{"order_id":"A1002"}`}
	const perTrace, batch = 16, 1024
	recs := make([]*trace.Recorder, batch)
	ctx := context.Background()
	b.ReportAllocs()
	cpu, untimed := cpuTime(), time.Duration(0)
	for i := 0; b.Loop(); i++ {
		if i%(perTrace*batch) == 0 {
			b.StopTimer()
			from := cpuTime()
			for j := range recs {
				recs[j] = g.newRecorder("s", "r")
			}
			untimed += cpuTime() - from
			b.StartTimer()
		}
		rec := recs[i/perTrace%batch]
		s := &trace.Step{Kind: trace.KindTool, Name: tp.name, Args: args[i%2]}
		findings, v := g.judgeWith(rec, s, tp.rules, tp.hot)
		if v != trace.Allow || len(findings) > 0 {
			b.Fatalf("a clean call was judged %s: %v", v, findings)
		}
		s.Result = `{"status":"shipped"}`
		g.commit(ctx, rec, s, findings)
	}
	if cpu > 0 {
		b.ReportMetric(float64(cpuTime()-cpu-untimed)/float64(b.N), "cpu-ns/op")
	}
}

type judgeTool struct{}

func (judgeTool) Name() string        { return "query_order" }
func (judgeTool) Description() string { return "Looks an order up by id." }
func (judgeTool) Parameters() any {
	return map[string]any{"type": "object", "properties": map[string]any{"order_id": map[string]any{"type": "string"}}, "required": []string{"order_id"}}
}
func (judgeTool) Call(context.Context, string) (string, error) { return `{"status":"shipped"}`, nil }
