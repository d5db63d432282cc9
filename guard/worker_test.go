package guard

import (
	"context"
	"testing"
	"time"
)

// cpuTime is the process's CPU time, user and system, where it can be read
// (worker_cpu_unix_test.go); zero elsewhere.
var cpuTime = func() time.Duration { return 0 }

type nopTool struct{}

func (nopTool) Name() string                                 { return "nop" }
func (nopTool) Description() string                          { return "" }
func (nopTool) Call(context.Context, string) (string, error) { return "ok", nil }

// BenchmarkHandOff is one attempt at a tool call that returns at once, on
// a worker (pooled) and on the caller's goroutine (inline): the difference
// is what the hand-off costs, without the rules around it.
func BenchmarkHandOff(b *testing.B) {
	for _, bc := range []struct {
		name string
		call func(g *Guard, ctx context.Context, start time.Time) (toolRun, error)
	}{
		{"pooled", func(g *Guard, ctx context.Context, start time.Time) (toolRun, error) {
			return g.callPooled(ctx, nopTool{}, "", start, time.Minute)
		}},
		{"inline", func(g *Guard, ctx context.Context, start time.Time) (toolRun, error) {
			return g.callInline(ctx, &toolState{}, nopTool{}, "", start, time.Minute)
		}},
	} {
		b.Run(bc.name, func(b *testing.B) {
			g := New(Config{})
			defer g.Close(context.Background())
			ctx := context.Background()
			b.ReportAllocs()
			cpu := cpuTime()
			for b.Loop() {
				if _, err := bc.call(g, ctx, g.now()); err != nil {
					b.Fatal(err)
				}
			}
			if cpu > 0 {
				b.ReportMetric(float64(cpuTime()-cpu)/float64(b.N), "cpu-ns/op")
			}
		})
	}
}
