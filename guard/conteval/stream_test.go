package conteval

import (
	"context"
	"fmt"
	"iter"
	"math"
	"runtime"
	"slices"
	"testing"

	"github.com/agentguard/agentguard/trace"
)

// A streamed round agrees with Run on what both judge exactly: the traces,
// the head sample and its verdict, the forced bands known on arrival, the
// privilege count and the assertion counts of the head.
func TestStreamAgreesWithRun(t *testing.T) {
	for _, hash := range []bool{false, true} {
		t.Run(fmt.Sprintf("hash=%v", hash), func(t *testing.T) {
			cfg := testConfig()
			cfg.Sampling.HashConsistent = hash
			ev := &Evaluator{Config: cfg}
			want, err := ev.Run(context.Background(), population(3000, 5), roundTime)
			if err != nil {
				t.Fatal(err)
			}
			got, err := ev.RunStream(context.Background(), populationSeq(3000, 5), roundTime)
			if err != nil {
				t.Fatal(err)
			}
			if got.Traces != want.Traces || got.Head != want.Head || got.Verdict != want.Verdict || got.Privilege != want.Privilege {
				t.Errorf("stream: %d traces, head %+v, %s, privilege %d\nrun:    %d traces, head %+v, %s, privilege %d",
					got.Traces, got.Head, got.Verdict, got.Privilege, want.Traces, want.Head, want.Verdict, want.Privilege)
			}
			for _, b := range []Band{BandError, BandLowConfidence, BandPrivilege, BandHead, BandTail} {
				if got.Bands[b] != want.Bands[b] {
					t.Errorf("band %s: stream %d, run %d", b, got.Bands[b], want.Bands[b])
				}
			}
			for i := range want.Assertions {
				g, w := got.Assertions[i], want.Assertions[i]
				if g.HeadApplied != w.HeadApplied || g.HeadFailed != w.HeadFailed {
					t.Errorf("assertion %s on the head: stream %d/%d, run %d/%d", w.Name, g.HeadFailed, g.HeadApplied, w.HeadFailed, w.HeadApplied)
				}
			}
			if len(got.Red()) != len(want.Red()) || len(got.Cases) != len(want.Cases) {
				t.Errorf("stream: %d red, %d cases; run: %d red, %d cases", len(got.Red()), len(got.Cases), len(want.Red()), len(want.Cases))
			}
			for name, w := range want.Routes {
				g := got.Routes[name]
				if g.Traces != w.Traces || math.Abs(g.Percentile-w.Percentile) > 0.01*w.Percentile {
					t.Errorf("route %q: stream %+v, run %+v (p99 within 1%%)", name, g, w)
				}
			}
			if got.Cost != want.Cost || got.Trend.Samples != want.Trend.Samples {
				t.Errorf("stream: cost %+v, trend samples %d; run: %+v, %d", got.Cost, got.Trend.Samples, want.Cost, want.Trend.Samples)
			}
			if got.Streamed == nil || got.Streamed.RedDropped != 0 {
				t.Errorf("Streamed = %+v, want nothing dropped", got.Streamed)
			}
		})
	}
}

// Red samples past KeepRed are counted, not kept.
func TestStreamKeepsBoundedRed(t *testing.T) {
	ev := &Evaluator{Config: testConfig(), KeepRed: 5}
	rep, err := ev.RunStream(context.Background(), populationSeq(3000, 5), roundTime)
	if err != nil {
		t.Fatal(err)
	}
	red := 0
	for _, st := range rep.RouteCounts {
		red += st.All.N - st.All.Passes
	}
	if len(rep.Red()) != 5 || rep.Streamed.RedDropped != red-5 {
		t.Errorf("kept %d red, dropped %d; want 5 and %d", len(rep.Red()), rep.Streamed.RedDropped, red-5)
	}
}

// A stream's error stops the round and is returned as it was.
func TestStreamStopsAtError(t *testing.T) {
	bad := &trace.ParseError{Line: 7, Err: fmt.Errorf("boom")}
	seq := func(yield func(*trace.Trace, error) bool) {
		for t := range populationSeq(10, 1) {
			if !yield(t, nil) {
				return
			}
		}
		yield(nil, bad)
	}
	if _, err := (&Evaluator{Config: testConfig()}).RunStream(context.Background(), seq, roundTime); err != bad {
		t.Errorf("err = %v, want the stream's", err)
	}
}

// heapAfter streams n synthetic traces through a round and returns the
// live heap, after a collection, while the round is open and about to
// finish: what the round holds.
func heapAfter(t testing.TB, n int) uint64 {
	r, err := (&Evaluator{Config: testConfig()}).Start(roundTime)
	if err != nil {
		t.Fatal(err)
	}
	var peak uint64
	var ms runtime.MemStats
	i := 0
	for tr := range populationSeq(n, 9) {
		r.Add(tr)
		if i++; i%(n/4) == 0 {
			runtime.GC()
			runtime.ReadMemStats(&ms)
			peak = max(peak, ms.HeapAlloc)
		}
	}
	if _, err := r.Finish(context.Background()); err != nil {
		t.Fatal(err)
	}
	return peak
}

// The memory a streamed round holds grows with the samples it keeps (the
// ids of the 5% head sample and the forced bands), never with the traces
// it reads: a trace read costs the round a few bytes at most, where Run
// holds every trace whole (kilobytes each). (The issue measured 6.7 GB for
// a million traces read by Run; BenchmarkStreamMemory measures 1M.)
func TestStreamMemoryIsBounded(t *testing.T) {
	if testing.Short() {
		t.Skip("streams 110,000 traces")
	}
	base := heapAfter(t, 100)
	small, large := heapAfter(t, 10_000)-min(base, heapAfter(t, 10_000)), heapAfter(t, 100_000)-min(base, heapAfter(t, 100_000))
	t.Logf("live heap above baseline: 10k traces %d KB, 100k traces %d KB (%d bytes a trace)", small>>10, large>>10, large/100_000)
	if perTrace := large / 100_000; perTrace > 64 {
		t.Errorf("100k traces hold %d KB, %d bytes a trace read: the round keeps more than its samples' ids", large>>10, perTrace)
	}
}

// BenchmarkStreamMemory reports the live heap of a streamed round at
// 10k, 100k and 1M traces (MB-live), against Run holding the same traces
// (run-MB-live, up to 100k: the slice alone grows linearly).
func BenchmarkStreamMemory(b *testing.B) {
	for _, n := range []int{10_000, 100_000, 1_000_000} {
		b.Run(fmt.Sprint(n), func(b *testing.B) {
			for b.Loop() {
				b.ReportMetric(float64(heapAfter(b, n))/(1<<20), "MB-live")
			}
		})
	}
	for _, n := range []int{10_000, 100_000} {
		b.Run(fmt.Sprintf("run-%d", n), func(b *testing.B) {
			for b.Loop() {
				traces := slices.Collect(func(yield func(*trace.Trace) bool) {
					for t := range populationSeq(n, 9) {
						if !yield(t) {
							return
						}
					}
				})
				var ms runtime.MemStats
				runtime.GC()
				runtime.ReadMemStats(&ms)
				if _, err := (&Evaluator{Config: testConfig()}).Run(context.Background(), traces, roundTime); err != nil {
					b.Fatal(err)
				}
				b.ReportMetric(float64(ms.HeapAlloc)/(1<<20), "run-MB-live")
			}
		})
	}
}

var _ iter.Seq2[*trace.Trace, error] = populationSeq(0, 0)
