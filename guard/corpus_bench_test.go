package guard_test

import (
	"bufio"
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"reflect"
	"regexp"
	"slices"
	"testing"
	"time"

	"github.com/agentguard/agentguard/guard"
	"github.com/agentguard/agentguard/guard/internal/detect"
	"github.com/agentguard/agentguard/guard/internal/testkit"
	"github.com/agentguard/agentguard/trace"
)

// corpusBytes reads every trace file of the shared corpus into memory, so
// the benchmarks below measure decoding and judging, not the disk, and
// counts the steps its traces hold.
func corpusBytes(b *testing.B) (lines [][]byte, steps int) {
	b.Helper()
	dir := testkit.CorpusDir(b)
	for _, name := range []string{"taubench_airline.jsonl", "tau2_retail.jsonl", "tau2_telecom.jsonl", "agentdojo.jsonl"} {
		data, err := os.ReadFile(filepath.Join(dir, name))
		if err != nil {
			b.Fatal(err)
		}
		sc := bufio.NewScanner(bytes.NewReader(data))
		sc.Buffer(nil, 16<<20)
		for sc.Scan() {
			if line := bytes.TrimSpace(sc.Bytes()); len(line) > 0 {
				lines = append(lines, bytes.Clone(line))
			}
		}
	}
	for _, line := range lines {
		steps += len(corpusTrace(b, line).Steps)
	}
	return lines, steps
}

// corpusTrace is the trace of one labelled corpus line.
func corpusTrace(b *testing.B, line []byte) *trace.Trace {
	var l testkit.Line
	if err := json.Unmarshal(line, &l); err != nil {
		b.Fatal(err)
	}
	tr, _, err := l.ToTrace()
	if err != nil {
		b.Fatal(err)
	}
	return tr
}

// reportCorpus reports the corpus steps judged per second of wall time and
// per second of the process's CPU time, and the CPU time per pass
// (cpu-ns/op): on a shared machine wall time measures the neighbours too,
// so compare the CPU figures, run with -cpu 1 so that the garbage
// collector's share is counted once.
func reportCorpus(b *testing.B, steps int, cpu time.Duration) {
	b.ReportMetric(float64(steps*b.N)/b.Elapsed().Seconds(), "steps/s")
	if used := testkit.ProcessCPU() - cpu; cpu > 0 && used > 0 {
		b.ReportMetric(float64(used)/float64(b.N), "cpu-ns/op")
		b.ReportMetric(float64(steps*b.N)/used.Seconds(), "steps/cpu-s")
	}
}

// corpusTraceLines is the corpus as the CLI reads it: every trace in the
// trace format, one JSON line each, as trace.Writer writes it (and
// `agentguard import` leaves it).
func corpusTraceLines(b *testing.B) (data []byte, steps int) {
	b.Helper()
	lines, steps := corpusBytes(b)
	var buf bytes.Buffer
	w := trace.NewWriter(&buf)
	for _, line := range lines {
		if err := w.Write(corpusTrace(b, line)); err != nil {
			b.Fatal(err)
		}
	}
	return buf.Bytes(), steps
}

// BenchmarkCorpusDecode is the yardstick for BenchmarkCorpusEvaluate: the
// same trace lines decoded into trace.Trace with encoding/json and nothing
// else (no checks, no rules).
func BenchmarkCorpusDecode(b *testing.B) {
	data, steps := corpusTraceLines(b)
	b.SetBytes(int64(len(data)))
	b.ReportAllocs()
	cpu := testkit.ProcessCPU()
	for b.Loop() {
		for line := range bytes.Lines(data) {
			var t trace.Trace
			if err := json.Unmarshal(line, &t); err != nil {
				b.Fatal(err)
			}
		}
	}
	reportCorpus(b, steps, cpu)
}

// BenchmarkCorpusImport is the corpus's trace lines read by trace.Import,
// as the CLI reads a file: format detection, the checks every line gets
// (duplicate keys, indexes, ranges), nothing judged.
func BenchmarkCorpusImport(b *testing.B) {
	data, steps := corpusTraceLines(b)
	b.SetBytes(int64(len(data)))
	b.ReportAllocs()
	cpu := testkit.ProcessCPU()
	for b.Loop() {
		for _, err := range trace.Import(bytes.NewReader(data), "corpus.jsonl", "") {
			if err != nil {
				b.Fatal(err)
			}
		}
	}
	reportCorpus(b, steps, cpu)
}

// BenchmarkCorpusEvaluate is what `agentguard evaluate` does with the
// corpus (every trace of ../shared/corpus, in the trace format): read by
// trace.Import, judged offline by Evaluate with the default rules.
func BenchmarkCorpusEvaluate(b *testing.B) {
	data, steps := corpusTraceLines(b)
	g := guard.New(guard.Config{})
	b.SetBytes(int64(len(data)))
	b.ReportAllocs()
	cpu := testkit.ProcessCPU()
	for b.Loop() {
		for tr, err := range trace.Import(bytes.NewReader(data), "corpus.jsonl", "") {
			if err != nil {
				b.Fatal(err)
			}
			g.Evaluate(tr)
		}
	}
	reportCorpus(b, steps, cpu)
}

// compiledPatterns collects every pattern reachable from v: the lexicon's
// phrases, and its dates and clocks, which the memory card's extractor
// prefilters too.
func compiledPatterns(v reflect.Value, out []*regexp.Regexp) []*regexp.Regexp {
	switch v.Kind() {
	case reflect.Pointer:
		if re, ok := v.Interface().(*regexp.Regexp); ok {
			if re != nil {
				out = append(out, re)
			}
		} else if !v.IsNil() {
			out = compiledPatterns(v.Elem(), out)
		}
	case reflect.Struct:
		for i := range v.NumField() {
			if v.Type().Field(i).IsExported() {
				out = compiledPatterns(v.Field(i), out)
			}
		}
	case reflect.Slice:
		for i := range v.Len() {
			out = compiledPatterns(v.Index(i), out)
		}
	}
	return out
}

// TestPrefiltersOnCorpus checks the lexicon patterns' prefilters on every
// text of the shared corpus: what a pattern matches, MayMatch lets through.
func TestPrefiltersOnCorpus(t *testing.T) {
	dir := testkit.CorpusDir(t)
	w := detect.Default()
	patterns := compiledPatterns(reflect.ValueOf(w), nil)
	texts, matched := 0, 0
	for _, name := range []string{"taubench_airline.jsonl", "tau2_retail.jsonl", "tau2_telecom.jsonl", "agentdojo.jsonl"} {
		for _, ct := range testkit.LoadFile(t, filepath.Join(dir, name)) {
			all := slices.Clone(ct.Trace.UserTurns)
			for _, s := range ct.Trace.Steps {
				all = append(all, s.Args, s.Result)
			}
			for _, text := range all {
				texts++
				for _, re := range patterns {
					if re.MatchString(text) {
						matched++
						if !w.MayMatch(re, text) {
							t.Errorf("%s: %.80q matches %.60s but MayMatch says no", ct.Trace.ID, text, re)
						}
					}
				}
			}
		}
	}
	t.Logf("%d texts, %d pattern matches, none turned away", texts, matched)
}
