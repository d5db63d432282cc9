package guard_test

import (
	"context"
	"testing"

	"github.com/agentguard/agentguard/guard"
	"github.com/agentguard/agentguard/guard/internal/testkit"
	"github.com/agentguard/agentguard/memory"
	"github.com/agentguard/agentguard/trace"
	"github.com/tmc/langchaingo/tools"
	"go.opentelemetry.io/otel/attribute"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
)

// BenchmarkGuardedStep is one tool call through the wrapper with every
// default rule on and in-memory recording, no violation.
func BenchmarkGuardedStep(b *testing.B) {
	testkit.BenchStep(b, guard.New(guard.Config{}), func(i int) string { return testkit.OrderArgs[i%2] })
}

// BenchmarkGuardedStepConversation is BenchmarkGuardedStep in a recorded
// conversation: the user's turn names the orders, and every read's id is
// looked up in the trace's origins index, which each result is added to.
func BenchmarkGuardedStepConversation(b *testing.B) {
	testkit.BenchStepSaying(b, guard.New(guard.Config{}), "Where are my orders A1001 and A1002?", func(i int) string { return testkit.OrderArgs[i%2] })
}

// BenchmarkGuardedStepViolation is the same with a violation (a loop) on
// every other call, written to a sink.
func BenchmarkGuardedStepViolation(b *testing.B) {
	sink := guard.SinkFunc(func(context.Context, trace.Violation) (uint64, error) { return 1, nil })
	testkit.BenchStep(b, guard.New(guard.Config{Gates: guard.Gates{LoopLimit: 2}, Observe: guard.Observation{Ledger: sink}}), func(int) string { return testkit.OrderArgs[0] })
}

// BenchmarkOTelSpanBaseline is the yardstick: one OpenTelemetry SDK span
// with a simple processor, an exporter that drops everything and five
// attributes.
func BenchmarkOTelSpanBaseline(b *testing.B) {
	tp := sdktrace.NewTracerProvider(sdktrace.WithSpanProcessor(sdktrace.NewSimpleSpanProcessor(discardExporter{})))
	defer tp.Shutdown(context.Background())
	tracer := tp.Tracer("bench")
	ctx := context.Background()
	b.ReportAllocs()
	defer testkit.ReportCPU(b, testkit.ProcessCPU())
	for b.Loop() {
		_, span := tracer.Start(ctx, "execute_tool query_order")
		span.SetAttributes(
			attribute.String("gen_ai.operation.name", "execute_tool"),
			attribute.String("gen_ai.tool.name", "query_order"),
			attribute.String("gen_ai.tool.call.id", "call_1"),
			attribute.Int("agentguard.step", 3),
			attribute.Bool("agentguard.blocked", false),
		)
		span.End()
	}
}

type discardExporter struct{}

func (discardExporter) ExportSpans(context.Context, []sdktrace.ReadOnlySpan) error { return nil }
func (discardExporter) Shutdown(context.Context) error                             { return nil }

// BenchmarkGuardDisabled is the kill switch: a wrapped tool call with the
// guard disabled, which must cost what the bare call costs.
func BenchmarkGuardDisabled(b *testing.B) {
	benchCall(b, guard.New(guard.Config{Bypass: true}).WrapTool(testkit.BenchTool{}))
}

// BenchmarkBareTool is the tool called directly, without a guard.
func BenchmarkBareTool(b *testing.B) { benchCall(b, testkit.BenchTool{}) }

func benchCall(b *testing.B, tool tools.Tool) {
	ctx := context.Background()
	b.ReportAllocs()
	for b.Loop() {
		if _, err := tool.Call(ctx, `{"order_id":"A1001"}`); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkGuardedStepMemory is BenchmarkGuardedStep with the memory card
// on and three constraints on it: the enforcer rebuilds the card from the
// trace before every call.
func BenchmarkGuardedStepMemory(b *testing.B) {
	g := guard.New(guard.Config{Memory: &guard.MemoryOptions{}})
	tool := g.WrapTool(testkit.BenchTool{})
	start := func() context.Context {
		ctx, rec := g.StartTrace(context.Background(), "s", "r")
		for k, turn := range []string{"My address is now 12 Oak St.", "Please don't text me.", "Where is A1001?"} {
			rec.UserTurn(turn)
			cs, _ := memory.CardFromTrace(rec.Trace(), k-1).Observe(ctx, nil, k, turn)
			rec.Add(memory.CardStep(k, cs))
		}
		return ctx
	}
	ctx := start()
	b.ReportAllocs()
	for i := 0; b.Loop(); i++ {
		if i%16 == 0 {
			b.StopTimer()
			ctx = start()
			b.StartTimer()
		}
		if _, err := tool.Call(ctx, testkit.OrderArgs[i%2]); err != nil {
			b.Fatal(err)
		}
	}
}
