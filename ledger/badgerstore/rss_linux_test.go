package badgerstore

import (
	"flag"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"runtime/metrics"
	"runtime/pprof"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/agentguard/agentguard/ledger"
)

// rssEntries turns on TestPeakRSS: how many entries its appending process
// writes, one Append at a time, as a guard does:
//
//	go test ./ledger/badgerstore -run TestPeakRSS -ledger.rss 1000000 -v
//
// At a million it takes a few minutes. Set AGENTGUARD_RSS_PROFILE to a
// directory to have each process write a heap profile there each time its
// heap grows by a quarter.
var rssEntries = flag.Int("ledger.rss", 0, "run TestPeakRSS with a ledger of this many entries")

// rssLimit is the peak resident memory, in MiB, TestPeakRSS allows each of
// its processes: the target is 64 (see "Memory" in the package
// documentation for what is met).
var rssLimit = flag.Float64("ledger.rss.limit", 64, "the peak RSS in MiB TestPeakRSS allows")

// rssAppendLimit, when set, replaces rssLimit for the appending process,
// which does not meet the target; "Memory" in the package documentation
// gives the bounds CI runs it with and why.
var rssAppendLimit = flag.Float64("ledger.rss.append.limit", 0, "the peak RSS in MiB TestPeakRSS allows the appending process (0: -ledger.rss.limit)")

// TestPeakRSS measures the peak resident memory (VmHWM) of three
// processes, each a fresh copy of the test binary: one that appends
// -ledger.rss entries to a new ledger and waits for badger's compactions
// to finish, one that reopens it and waits for the compactions that
// reopening starts, and one that reopens it and runs the queries of
// BenchmarkLedgerQueries, a whole day's entries among them. Each must stay
// under rssLimit MiB (the appending one under rssAppendLimit when set),
// file-backed pages (badger's memory-mapped tables) included; the log
// gives the anonymous and file-backed parts at their highest.
func TestPeakRSS(t *testing.T) {
	if *rssEntries <= 0 {
		t.Skip("set -ledger.rss N to measure the peak RSS of processes appending N entries and querying them")
	}
	dir := t.TempDir()
	if *benchDir != "" {
		dir = filepath.Join(*benchDir, fmt.Sprint("rss-", *rssEntries))
	}
	for _, phase := range []string{"append", "reopen", "query"} {
		cmd := exec.Command(os.Args[0], "-test.run=^TestPeakRSSHelper$", "-test.count=1",
			fmt.Sprint("-ledger.rss=", *rssEntries))
		cmd.Env = append(os.Environ(), envHelper+"=TestPeakRSSHelper", envDir+"="+dir, "AGENTGUARD_RSS_PHASE="+phase)
		cmd.Stderr = os.Stderr
		out, err := cmd.Output()
		if err != nil {
			t.Fatalf("%s: %v\n%s", phase, err, out)
		}
		limit := *rssLimit
		if phase == "append" && *rssAppendLimit > 0 {
			limit = *rssAppendLimit
		}
		for line := range strings.Lines(string(out)) {
			if rest, ok := strings.CutPrefix(line, "rss "); ok {
				t.Log(phase, strings.TrimSpace(rest))
				var peak float64
				if _, err := fmt.Sscanf(rest, "peak=%f", &peak); err == nil && peak >= limit {
					t.Errorf("%s: peak RSS %.1f MiB, want under %g", phase, peak, limit)
				}
			}
		}
	}
}

// TestPeakRSSHelper is one process of TestPeakRSS.
func TestPeakRSSHelper(t *testing.T) {
	dir := helperDir(t)
	n := *rssEntries
	phase := os.Getenv("AGENTGUARD_RSS_PHASE")
	mon := startRSSMonitor()
	start := time.Now()
	l, err := Open(dir, Options{})
	if err != nil {
		t.Fatal(err)
	}
	report := func(what string) {
		s := mon.snapshot()
		fmt.Printf("rss peak=%.1f MiB (anon %.1f, file %.1f, heap %.1f, go total %.1f at most) %s\n",
			s.peak, s.anon, s.file, s.heap, s.goTotal, what)
	}
	switch phase {
	case "append":
		if l.next != 1 {
			t.Fatalf("%s is not empty", dir)
		}
		for i := range n {
			if _, err := l.Append(ctx, fillViolation(i, n)); err != nil {
				t.Fatal(err)
			}
		}
		took := time.Since(start)
		c := settle(l, 10*time.Minute)
		report(fmt.Sprintf("appending %d entries (%v, %.0f/s), then compacting (%v)", n, took.Round(time.Millisecond),
			float64(n)/took.Seconds(), c.Round(time.Millisecond)))
	case "reopen":
		opened := time.Since(start)
		c := settle(l, 10*time.Minute)
		report(fmt.Sprintf("opening (%v), then compacting (%v)", opened.Round(time.Millisecond), c.Round(time.Millisecond)))
	case "query":
		settle(l, 10*time.Minute)
		mon.reset()
		mid := n / 2
		for _, q := range []ledger.Query{
			{TraceID: fmt.Sprint("trace-", mid/10)},
			{Rule: "rare"},
			{Rule: "rule-3", Limit: 100},
			{Since: day0.Add(15 * 24 * time.Hour), Until: day0.Add(16 * 24 * time.Hour)},
			{},
		} {
			hits := 0
			qs := time.Now()
			for _, err := range l.Entries(ctx, q) {
				if err != nil {
					t.Fatal(err)
				}
				hits++
			}
			report(fmt.Sprintf("query %+v: %d hits in %v", q, hits, time.Since(qs).Round(time.Microsecond)))
		}
		ls, err := l.Lessons(ctx, ledger.Query{})
		if err != nil {
			t.Fatal(err)
		}
		report(fmt.Sprintf("Lessons: %d", len(ls)))
	default:
		t.Fatalf("phase %q", phase)
	}
	if err := l.Close(); err != nil {
		t.Fatal(err)
	}
	mon.stop()
	report("in all, Close included")
}

// rssMonitor samples the process's memory every 20 ms and keeps the
// highest figures; the kernel's VmHWM catches what falls between samples.
type rssMonitor struct {
	mu                        sync.Mutex
	anon, file, heap, goTotal float64
	quit, done                chan struct{}
	profiled                  uint64 // heap bytes at the last profile
	profiles                  int
}

type rssSnapshot struct{ peak, anon, file, heap, goTotal float64 }

func startRSSMonitor() *rssMonitor {
	m := &rssMonitor{quit: make(chan struct{}), done: make(chan struct{})}
	go func() {
		defer close(m.done)
		tick := time.NewTicker(20 * time.Millisecond)
		defer tick.Stop()
		for {
			m.sample()
			select {
			case <-tick.C:
			case <-m.quit:
				return
			}
		}
	}()
	return m
}

func (m *rssMonitor) sample() {
	st := procStatus()
	ms := []metrics.Sample{{Name: "/memory/classes/heap/objects:bytes"}, {Name: "/memory/classes/total:bytes"}}
	metrics.Read(ms)
	m.mu.Lock()
	defer m.mu.Unlock()
	if dir := os.Getenv("AGENTGUARD_RSS_PROFILE"); dir != "" {
		// A heap profile each time the heap grows by a quarter.
		if h := ms[0].Value.Uint64(); h > m.profiled+m.profiled/4 {
			m.profiled = h
			m.profiles++
			if f, err := os.Create(filepath.Join(dir, fmt.Sprintf("heap-%02d-%dMiB.pprof", m.profiles, h>>20))); err == nil {
				pprof.Lookup("heap").WriteTo(f, 0)
				f.Close()
			}
		}
	}
	m.anon = max(m.anon, st["RssAnon"])
	m.file = max(m.file, st["RssFile"]+st["RssShmem"])
	m.heap = max(m.heap, float64(ms[0].Value.Uint64())/(1<<20))
	m.goTotal = max(m.goTotal, float64(ms[1].Value.Uint64())/(1<<20))
}

func (m *rssMonitor) snapshot() rssSnapshot {
	m.sample()
	m.mu.Lock()
	defer m.mu.Unlock()
	return rssSnapshot{peak: procStatus()["VmHWM"], anon: m.anon, file: m.file, heap: m.heap, goTotal: m.goTotal}
}

// reset starts the peaks again from now.
func (m *rssMonitor) reset() {
	resetPeakRSS()
	m.mu.Lock()
	m.anon, m.file, m.heap, m.goTotal = 0, 0, 0, 0
	m.mu.Unlock()
}

func (m *rssMonitor) stop() {
	close(m.quit)
	<-m.done
}
