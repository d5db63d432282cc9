package badgerstore

import (
	"bufio"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"runtime/debug"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/agentguard/agentguard/ledger"
	"github.com/agentguard/agentguard/trace"
	"github.com/dgraph-io/badger/v4"
)

// large adds a ledger of 1,000,000 entries to BenchmarkLedgerQueries:
//
//	go test ./ledger/badgerstore -run '^$' -bench LedgerQueries -ledger.large
//
// Building it takes about a minute.
var large = flag.Bool("ledger.large", false, "also benchmark queries on a ledger of 1,000,000 entries")

// benchDir keeps the benchmark ledgers in a directory of their own,
// reused by the next run, so that a second run measures a process that
// only opens and reads a ledger, as a reporting tool does:
//
//	go test ./ledger/badgerstore -run '^$' -bench LedgerQueries -ledger.large -ledger.dir /tmp/ledgers # builds
//	go test ./ledger/badgerstore -run '^$' -bench LedgerQueries -ledger.large -ledger.dir /tmp/ledgers # reads
var benchDir = flag.String("ledger.dir", "", "keep the benchmark ledgers in this directory and reuse them")

// benchRules is how many rules the query benchmarks' entries spread over.
const benchRules = 20

// fillBench appends n entries spread evenly over 30 days, in time order:
// ten per trace id (trace-<i/10>), rules rule-0 to rule-19 with one or two
// tags, and one entry in every n/100 of rule "rare" — the ledger of an
// agent in production for a month.
func fillBench(b *testing.B, l *Store, n int) {
	const batch = 1000
	vs := make([]trace.Violation, 0, batch)
	for i := range n {
		v := fillViolation(i, n)
		vs = append(vs, v)
		if len(vs) == batch || i == n-1 {
			if _, err := l.AppendBatch(ctx, vs); err != nil {
				b.Fatal(err)
			}
			vs = vs[:0]
		}
	}
}

// fillViolation is the i-th of n entries that fillBench appends.
func fillViolation(i, n int) trace.Violation {
	tags := [...]string{"no-citation", "loop", "pii", "幻觉", "stale"}
	v := violation(fmt.Sprint("rule-", i%benchRules), fmt.Sprint("trace-", i/10), tags[i%5])
	if i%3 == 0 {
		v.Tags = append(v.Tags, tags[(i+1)%5])
	}
	if i%(max(n/100, 1)) == 0 {
		v.Rule = "rare"
	}
	v.SessionID = fmt.Sprint("session-", i/40)
	v.Evidence = strings.Repeat("x", 200)
	v.Time = day0.Add(time.Duration(i) * (30 * 24 * time.Hour / time.Duration(n)))
	return v
}

// procStatus returns the memory figures of /proc/self/status, in MiB.
func procStatus() map[string]float64 {
	m := map[string]float64{}
	f, err := os.Open("/proc/self/status")
	if err != nil {
		return m
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		name, val, ok := strings.Cut(sc.Text(), ":")
		if !ok || !strings.HasSuffix(val, " kB") {
			continue
		}
		kb, _ := strconv.ParseFloat(strings.TrimSuffix(strings.TrimSpace(val), " kB"), 64)
		m[name] = kb / 1024
	}
	return m
}

// reportRSS reports the peak RSS since the last resetPeakRSS, and the
// anonymous (heap, badger's buffers) and file-backed (badger's mmapped
// tables, which the kernel may reclaim) parts of the current RSS.
func reportRSS(b *testing.B) {
	m := procStatus()
	b.ReportMetric(m["VmHWM"], "peak-RSS-MiB")
	b.ReportMetric(m["RssAnon"], "anon-MiB")
	b.ReportMetric(m["RssFile"], "file-MiB")
}

// resetPeakRSS makes VmHWM start again from the current RSS (Linux).
func resetPeakRSS() {
	runtime.GC()
	debug.FreeOSMemory()
	os.WriteFile("/proc/self/clear_refs", []byte("5"), 0)
}

// settle waits until badger has no compaction to do — it compacts the
// tables left by the appends after Open — and returns how long that took.
func settle(l *Store, limit time.Duration) time.Duration {
	start := time.Now()
	for time.Since(start) < limit {
		busy := false
		for _, li := range l.db.Levels() {
			busy = busy || li.Score >= 1
		}
		if !busy {
			break
		}
		time.Sleep(100 * time.Millisecond)
	}
	return time.Since(start)
}

// BenchmarkLedgerQueries measures queries on ledgers of 10,000 and 100,000
// entries (and 1,000,000 with -ledger.large), built by fillBench and
// reopened, so that the queries start from what is on disk:
//
//   - ByTrace: the 10 entries of one trace;
//   - ByRule: the 100 entries of a rare rule;
//   - ByRuleFirstPage: the first 100 of a rule with n/20 entries;
//   - ByCommonRule: all n/20 entries of that rule (see ns/hit);
//   - Day: every entry of one day (n/30 of them; see ns/hit);
//   - Lessons: every rule and tag, from the aggregates;
//   - KeyScan: badger alone iterating every entry key, values unread —
//     the baseline that any query scanning the ledger would exceed.
//
// peak-RSS-MiB is the process's resident memory at its highest since the
// queries began, on Linux, after badger finished compacting what the
// appends left (the log reports that phase's own peak).
func BenchmarkLedgerQueries(b *testing.B) {
	sizes := []int{10_000, 100_000}
	if *large {
		sizes = append(sizes, 1_000_000)
	}
	for _, n := range sizes {
		b.Run(fmt.Sprint("n=", n), func(b *testing.B) {
			dir := b.TempDir()
			if *benchDir != "" {
				dir = filepath.Join(*benchDir, fmt.Sprint(n))
			}
			l, err := Open(dir, Options{})
			if err != nil {
				b.Fatal(err)
			}
			if l.next == 1 {
				start := time.Now()
				fillBench(b, l, n)
				b.Logf("%d entries appended in %v", n, time.Since(start))
			} else if l.next-1 != uint64(n) {
				b.Fatalf("%s holds %d entries, want %d", dir, l.next-1, n)
			}
			if err := l.Close(); err != nil {
				b.Fatal(err)
			}
			resetPeakRSS()
			l, err = Open(dir, Options{})
			if err != nil {
				b.Fatal(err)
			}
			defer l.Close()
			took := settle(l, 5*time.Minute)
			m := procStatus()
			b.Logf("n=%d: badger compacted for %v after reopening; peak RSS %.0f MiB meanwhile, now anon %.0f + file %.0f MiB",
				n, took, m["VmHWM"], m["RssAnon"], m["RssFile"])
			resetPeakRSS()
			mid := n / 2
			queries := []struct {
				name string
				q    ledger.Query
			}{
				{"ByTrace", ledger.Query{TraceID: fmt.Sprint("trace-", mid/10)}},
				{"ByRule", ledger.Query{Rule: "rare"}},
				{"ByCommonRule", ledger.Query{Rule: "rule-3"}}, // one entry in twenty: a rule that fires all day
				{"ByRuleFirstPage", ledger.Query{Rule: "rule-3", Limit: 100}},
				{"Day", ledger.Query{Since: day0.Add(15 * 24 * time.Hour), Until: day0.Add(16 * 24 * time.Hour)}},
			}
			for _, qc := range queries {
				b.Run(qc.name, func(b *testing.B) {
					b.ReportAllocs()
					hits := 0
					for b.Loop() {
						hits = 0
						for _, err := range l.Entries(ctx, qc.q) {
							if err != nil {
								b.Fatal(err)
							}
							hits++
						}
					}
					b.ReportMetric(float64(hits), "hits")
					b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N*max(hits, 1)), "ns/hit")
					reportRSS(b)
				})
			}
			b.Run("Lessons", func(b *testing.B) {
				b.ReportAllocs()
				var ls []ledger.Lesson
				for b.Loop() {
					if ls, err = l.Lessons(ctx, ledger.Query{}); err != nil {
						b.Fatal(err)
					}
				}
				b.ReportMetric(float64(len(ls)), "lessons")
				reportRSS(b)
			})
			b.Run("KeyScan", func(b *testing.B) {
				keys := 0
				for b.Loop() {
					keys = 0
					err := l.db.View(func(txn *badger.Txn) error {
						it := txn.NewIterator(badger.IteratorOptions{Prefix: []byte(entryPrefix)})
						defer it.Close()
						for it.Rewind(); it.Valid(); it.Next() {
							keys++
						}
						return nil
					})
					if err != nil {
						b.Fatal(err)
					}
				}
				b.ReportMetric(float64(keys), "keys")
				reportRSS(b)
			})
		})
	}
}
