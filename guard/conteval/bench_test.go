package conteval

import (
	"context"
	"fmt"
	"math/rand/v2"
	"testing"
	"time"

	"github.com/agentguard/agentguard/trace"
)

// synthetic returns n small traces over 8 routes, built from a pool of
// shared step lists so that a million of them fit in memory: an intent
// step, an order lookup and an answer, JSON on the api routes. About 1% of
// them hold a tool error, 2% a vague intent, 2% a bad JSON answer.
func synthetic(n int) []*trace.Trace {
	const pool = 4096
	rng := rand.New(rand.NewPCG(1, 2))
	routes := []string{"api-1", "api-2", "chat-1", "chat-2", "chat-3", "chat-4", "chat-5", "chat-6"}
	templates := make([][][]*trace.Step, len(routes))
	for r, route := range routes {
		templates[r] = make([][]*trace.Step, pool)
		for i := range pool {
			conf := 0.9
			if rng.IntN(50) == 0 {
				conf = 0.3
			}
			q := &trace.Step{Index: 1, Kind: trace.KindTool, Name: "query_order", Args: `{"order_id":"A1001","amount":12.5}`, Result: `{"status":"shipped"}`, Cost: 0.0002}
			if rng.IntN(100) == 0 {
				q.Error, q.Result = "timeout", ""
			}
			answer := "Order A1001 has shipped."
			if route[:3] == "api" {
				answer = `{"order_id":"A1001","status":"shipped"}`
				if rng.IntN(25) == 0 {
					answer = `{"order_id":"A1001",`
				}
			}
			templates[r][i] = []*trace.Step{
				{Index: 0, Kind: trace.KindModel, Name: "intent", Intent: "check_order_status", Confidence: conf, Result: "check_order_status"},
				q,
				{Index: 2, Kind: trace.KindModel, Result: answer, Cost: 0.001 + rng.ExpFloat64()*0.001},
			}
		}
	}
	tools := []trace.ToolSpec{{Name: "query_order"}}
	out := make([]*trace.Trace, n)
	structs := make([]trace.Trace, n)
	for i := range out {
		r := i % len(routes)
		structs[i] = trace.Trace{ID: fmt.Sprintf("t%07d", i), Route: routes[r], Tools: tools, Steps: templates[r][rng.IntN(pool)]}
		out[i] = &structs[i]
	}
	return out
}

var benchTraces []*trace.Trace

func benchmarkTraces(b *testing.B) []*trace.Trace {
	if benchTraces == nil {
		benchTraces = synthetic(1_000_000)
	}
	return benchTraces
}

// BenchmarkRound is one round over a million traces: sample, assert on
// every sample with the five built-in assertions, gate both curves.
func BenchmarkRound(b *testing.B) {
	traces := benchmarkTraces(b)
	ev := &Evaluator{Config: Config{
		Version:    "bench",
		Sampling:   Sampling{Seed: 1, HashConsistent: true},
		Assertions: AssertionConfig{JSONRoutes: []string{"api-1", "api-2"}, AllowedTools: []string{"query_order"}},
	}}
	now := time.Date(2025, 6, 1, 0, 0, 0, 0, time.UTC)
	b.ReportAllocs()
	b.ResetTimer()
	var rep *Report
	for b.Loop() {
		var err error
		if rep, err = ev.Run(context.Background(), traces, now); err != nil {
			b.Fatal(err)
		}
	}
	b.ReportMetric(float64(len(rep.Samples)), "samples")
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N)/float64(len(traces)), "ns/trace")
}

// BenchmarkSelect is the sampler alone over a million traces, in both key
// modes.
func BenchmarkSelect(b *testing.B) {
	traces := benchmarkTraces(b)
	for _, hash := range []bool{false, true} {
		b.Run(fmt.Sprintf("hash=%v", hash), func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				Select(traces, Sampling{Seed: 1, HashConsistent: hash})
			}
		})
	}
}

// BenchmarkGate is the gate alone over a million flags, against the named
// baseline of a bootstrap that resamples the flags themselves: O(n) per
// resample instead of one binomial draw.
func BenchmarkGate(b *testing.B) {
	flags := make([]bool, 1_000_000)
	for i := range flags {
		flags[i] = i%17 != 0
	}
	b.Run("binomial-10000-resamples", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			Gate{Seed: 1}.JudgeFlags(flags)
		}
	})
	b.Run("baseline-flag-resampling-10-resamples", func(b *testing.B) {
		b.ReportAllocs()
		rng := rand.New(rand.NewPCG(1, 2))
		for b.Loop() {
			for range 10 {
				passes := 0
				for range flags {
					if flags[rng.IntN(len(flags))] {
						passes++
					}
				}
				_ = passes
			}
		}
	})
}

func BenchmarkBinomial(b *testing.B) {
	for _, tt := range []struct {
		n int
		p float64
	}{{120, 0.933}, {1000, 0.02}, {1_000_000, 0.95}} {
		b.Run(fmt.Sprintf("n=%d,p=%g", tt.n, tt.p), func(b *testing.B) {
			rng := rand.New(rand.NewPCG(1, 2))
			for b.Loop() {
				binomial(rng, tt.n, tt.p)
			}
		})
	}
}
