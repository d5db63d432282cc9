package guard_test

import (
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/agentguard/agentguard/guard"
	"github.com/agentguard/agentguard/guard/internal/testkit"
)

var writeFigures = flag.Bool("bench.figures", false, "run the benchmarks the README quotes and rewrite testdata/benchmarks.md")

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
// Without the flag it skips: the figures take a minute to measure.
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
		figure{perCall, "guarded, 10 turns in (BenchmarkConversation)", func(b *testing.B) { benchConversation(b, 10) }, "one OpenTelemetry span (BenchmarkOTelSpanBaseline)", false, 7, false})
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
	var results []result
	_, noCorpus := testkit.SharedCorpus()
	for _, f := range figures {
		if f.corpus && noCorpus != nil {
			t.Logf("%s: left out: %v", f.group, noCorpus)
			continue
		}
		r := testing.Benchmark(f.run)
		if r.N == 0 {
			t.Fatalf("%s: %s did not run", f.group, f.name)
		}
		results = append(results, result{f, r})
	}
	var b, short strings.Builder
	machine := fmt.Sprintf("%s/%s, %d CPUs, %s, load average %s", runtime.GOOS, runtime.GOARCH, runtime.NumCPU(), runtime.Version(), loadAverage())
	fmt.Fprintf(&short, "Generated by `go test ./guard -run TestBenchmarkFigures -bench.figures` on %s (every figure: guard/testdata/benchmarks.md); ratios against the baseline measured in the same run.\n\n| measured | against | ratio | allocs/op |\n|---|---|---|---|\n", machine)
	fmt.Fprintf(&b, "# Benchmark figures\n\nGenerated by `go test ./guard -run TestBenchmarkFigures -bench.figures` on %s, %s; do not edit. Ratios are against the baseline of each table, measured in the same run: compare ratios, and allocations, which the machine's load does not move.\n",
		machine, time.Now().UTC().Format("2006-01-02"))
	group := ""
	for _, r := range results {
		if r.group != group {
			group = r.group
			fmt.Fprintf(&b, "\n## %s\n\n| | ns/op | allocs/op | ratio |\n|---|---|---|---|\n", group)
		}
		ratio := "1 (baseline)"
		for _, o := range results {
			if o.group == r.group && o.name == r.base {
				ratio = fmt.Sprintf("%.2f×", float64(r.nsPerCall())/float64(o.nsPerCall()))
			}
		}
		fmt.Fprintf(&b, "| %s | %d | %d | %s |\n", r.name, r.nsPerCall(), r.allocsPerCall(), ratio)
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

// result is a figure as measured.
type result struct {
	figure
	r testing.BenchmarkResult
}

// nsPerCall is the figure's time per op, or per call when an op makes
// several.
func (r result) nsPerCall() int64 { return r.r.NsPerOp() / int64(max(r.per, 1)) }

func (r result) allocsPerCall() int64 { return r.r.AllocsPerOp() / int64(max(r.per, 1)) }

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
