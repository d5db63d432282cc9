package guard_test

import (
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/agentguard/agentguard/guard"
	"github.com/agentguard/agentguard/guard/internal/testkit"
)

var (
	writeFigures = flag.Bool("bench.figures", false, "run the benchmarks the README quotes and rewrite testdata/benchmarks.md")
	figureRounds = flag.Int("bench.rounds", 3, "with -bench.figures: rounds of every benchmark, interleaved; each figure is the median")
)

// figure is one benchmark the README quotes, and the one it is read
// against in the same run.
type figure struct {
	group, name string
	run         func(b *testing.B)
	base        string // the figure of this group it is a ratio of; "" for the group's baseline
	detail      bool   // only in testdata/benchmarks.md, not in the README
	per         int    // the calls an op makes, when the figure is per call (0: per op)
	corpus      bool   // reads ../shared/corpus: left out, saying so, where it is absent
}

// TestBenchmarkFigures runs the benchmarks the README's figures come from,
// in one process, and writes testdata/benchmarks.md: each as ns/op,
// allocations and its ratio to the baseline of its group, measured in the
// same run, so that the file (and the README, which quotes only it) says
// what a benchmark in the repository produces on the machine it ran on.
//
//	go test ./guard -run TestBenchmarkFigures -bench.figures
//
// Without the flag it skips: the figures take about two minutes a round
// (-bench.rounds, 3 by default) to measure.
func TestBenchmarkFigures(t *testing.T) {
	if !*writeFigures {
		t.Skip("-bench.figures not set: testdata/benchmarks.md is not re-measured")
	}
	figures := []figure{
		{"one clean tool call", "one OpenTelemetry span (BenchmarkOTelSpanBaseline)", BenchmarkOTelSpanBaseline, "", false, 0, false},
		{"one clean tool call", "guarded, on the worker pool (BenchmarkGuardedStep)", BenchmarkGuardedStep, "one OpenTelemetry span (BenchmarkOTelSpanBaseline)", false, 0, false},
		{"one clean tool call", "guarded, inline (BenchmarkGuardedStepInline)", BenchmarkGuardedStepInline, "one OpenTelemetry span (BenchmarkOTelSpanBaseline)", false, 0, false},
		{"one clean tool call", "guarded, in a conversation (BenchmarkGuardedStepConversation)", BenchmarkGuardedStepConversation, "one OpenTelemetry span (BenchmarkOTelSpanBaseline)", false, 0, false},
	}
	// The workload of a chat agent: a user turn of a conversation (four
	// model calls and three tool calls, card on), per call, against the
	// span each call would cost.
	const perCall = "a call of a conversation (a user turn naming a new order makes four model calls and three tool calls, card on: the turn over its seven calls)"
	figures = append(figures,
		figure{perCall, "one OpenTelemetry span (BenchmarkOTelSpanBaseline)", BenchmarkOTelSpanBaseline, "", false, 0, false},
		figure{perCall, "guarded, 10 turns in (BenchmarkConversation)", func(b *testing.B) { benchConversation(b, 10) }, "one OpenTelemetry span (BenchmarkOTelSpanBaseline)", false, 7, false},
		figure{perCall, "the same, every built-in rule off (BenchmarkConversationParts rules-off)", func(b *testing.B) { benchConversationWith(b, 10, conversationConfig(true, false)) }, "one OpenTelemetry span (BenchmarkOTelSpanBaseline)", false, 7, false},
		figure{perCall, "the same, the rules and the card off: recording, hand-offs, retries and breakers only (BenchmarkConversationParts rules-and-card-off)", func(b *testing.B) { benchConversationWith(b, 10, conversationConfig(true, true)) }, "one OpenTelemetry span (BenchmarkOTelSpanBaseline)", false, 7, false})
	// The CLI's path: `agentguard evaluate` over the corpus's trace lines.
	const cli = "the CLI's import path (every trace of ../shared/corpus as trace lines)"
	figures = append(figures,
		figure{cli, "decoded with encoding/json, nothing else (BenchmarkCorpusDecode)", BenchmarkCorpusDecode, "", false, 0, true},
		figure{cli, "read by trace.Import (BenchmarkCorpusImport)", BenchmarkCorpusImport, "decoded with encoding/json, nothing else (BenchmarkCorpusDecode)", false, 0, true},
		figure{cli, "read by trace.Import and judged by Evaluate (BenchmarkCorpusEvaluate)", BenchmarkCorpusEvaluate, "decoded with encoding/json, nothing else (BenchmarkCorpusDecode)", false, 0, true})
	sizes := []int{10, 1000, 10000}
	for _, n := range sizes {
		figures = append(figures, figure{"a tool call in a session of n steps opened by one user turn (BenchmarkSessionGrowth)", fmt.Sprintf("%d steps", n), func(b *testing.B) {
			benchSessionStep(b, "Please send each customer of order A1000 their invoice.", n)
		}, sizeBase(n), false, 0, false})
	}
	for _, n := range sizes {
		figures = append(figures, figure{"a user turn of a conversation of n turns, each naming a new order (BenchmarkConversation)", fmt.Sprintf("%d turns", n), func(b *testing.B) {
			benchConversation(b, n)
		}, sizeBaseTurns(n), false, 0, false})
	}
	for _, n := range sizes {
		figures = append(figures, figure{"a model call bringing a user turn that names a new ticket, card on (BenchmarkCardModelCall new-turn)", fmt.Sprintf("%d turns", n), func(b *testing.B) {
			benchCardNewTurn(b, guard.New(guard.Config{}), n)
		}, sizeBaseTurns(n), false, 0, false})
	}
	for _, n := range sizes {
		figures = append(figures, figure{"a write's provenance check at step n (BenchmarkProvenanceWrite)", fmt.Sprintf("%d steps", n), func(b *testing.B) { benchProvenanceWrite(b, n) }, sizeBase(n), true, 0, false})
	}
	var results []*result
	_, noCorpus := testkit.SharedCorpus()
	for _, f := range figures {
		if f.corpus && noCorpus != nil {
			t.Logf("%s: left out: %v", f.group, noCorpus)
			continue
		}
		results = append(results, &result{figure: f})
	}
	// Every benchmark runs once a round, so that a machine whose speed
	// drifts over the minutes (a shared VM's neighbours) slows a figure
	// and its baseline alike within a round.
	rounds := max(*figureRounds, 1)
	for range rounds {
		for _, r := range results {
			br := testing.Benchmark(r.run)
			if br.N == 0 {
				t.Fatalf("%s: %s did not run", r.group, r.name)
			}
			r.rounds = append(r.rounds, br)
		}
	}
	var b, short strings.Builder
	machine := fmt.Sprintf("%s/%s, %d CPUs, %s, load average %s", runtime.GOOS, runtime.GOARCH, runtime.NumCPU(), runtime.Version(), loadAverage())
	fmt.Fprintf(&short, "Generated by `go test ./guard -run TestBenchmarkFigures -bench.figures` on %s (every figure: guard/testdata/benchmarks.md); each ratio is the median, over %d interleaved rounds, of the ratio to the baseline measured in the same round.\n\n| measured | against | ratio | allocs/op |\n|---|---|---|---|\n", machine, rounds)
	fmt.Fprintf(&b, "# Benchmark figures\n\nGenerated by `go test ./guard -run TestBenchmarkFigures -bench.figures` on %s, %s; do not edit. Every benchmark ran once in each of %d rounds; ns/op is the median over the rounds, and each ratio the median of the ratios to the baseline of its table measured in the same round: compare ratios, and allocations, which the machine's load does not move.\n",
		machine, time.Now().UTC().Format("2006-01-02"), rounds)
	group := ""
	for _, r := range results {
		if r.group != group {
			group = r.group
			fmt.Fprintf(&b, "\n## %s\n\n| | ns/op | allocs/op | ratio |\n|---|---|---|---|\n", group)
		}
		ratio := "1 (baseline)"
		for _, o := range results {
			if o.group == r.group && o.name == r.base {
				ratios := make([]float64, rounds)
				for i := range ratios {
					ratios[i] = r.nsPerCall(i) / o.nsPerCall(i)
				}
				ratio = fmt.Sprintf("%.2f×", median(ratios))
			}
		}
		ns := make([]float64, rounds)
		for i := range ns {
			ns[i] = r.nsPerCall(i)
		}
		fmt.Fprintf(&b, "| %s | %.0f | %d | %s |\n", r.name, median(ns), r.allocsPerCall(), ratio)
		if r.base != "" && !r.detail {
			fmt.Fprintf(&short, "| %s: %s | %s | %s | %d |\n", r.group, r.name, r.base, ratio, r.allocsPerCall())
		}
	}
	if err := os.WriteFile(filepath.Join("testdata", "benchmarks.md"), []byte(b.String()), 0o644); err != nil {
		t.Fatal(err)
	}
	updateReadme(t, filepath.Join("..", "README.md"), "benchmarks", short.String())
	t.Log(b.String())
}

// result is a figure as measured, once a round.
type result struct {
	figure
	rounds []testing.BenchmarkResult
}

// nsPerCall is the figure's time per op in round i, or per call when an
// op makes several.
func (r *result) nsPerCall(i int) float64 {
	br := r.rounds[i]
	return float64(br.T.Nanoseconds()) / float64(br.N) / float64(max(r.per, 1))
}

// allocsPerCall is the figure's allocations per op (or call) in its first
// round: they do not move with the machine.
func (r *result) allocsPerCall() int64 { return r.rounds[0].AllocsPerOp() / int64(max(r.per, 1)) }

// median is the middle of xs, or the mean of the two in the middle.
func median(xs []float64) float64 {
	s := slices.Sorted(slices.Values(xs))
	n := len(s)
	if n%2 == 1 {
		return s[n/2]
	}
	return (s[n/2-1] + s[n/2]) / 2
}

// sizeBase names the baseline of a growth table: its smallest size.
func sizeBase(n int) string {
	if n == 10 {
		return ""
	}
	return "10 steps"
}

// sizeBaseTurns names the baseline of a table by turns: its smallest size.
func sizeBaseTurns(n int) string {
	if n == 10 {
		return ""
	}
	return "10 turns"
}

// loadAverage is the machine's load over the last minute when the figures
// were measured, or "unknown" where /proc/loadavg is not.
func loadAverage() string {
	b, err := os.ReadFile("/proc/loadavg")
	if f := strings.Fields(string(b)); err == nil && len(f) > 0 {
		return f[0]
	}
	return "unknown"
}
