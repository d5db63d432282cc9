package badgerstore

import (
	"fmt"
	"iter"
	"math/rand/v2"
	"os"
	"path/filepath"
	"reflect"
	"runtime"
	"slices"
	"testing"
	"time"

	"github.com/agentguard/agentguard/ledger"
	"github.com/agentguard/agentguard/trace"
	"github.com/dgraph-io/badger/v4"
)

var day0 = time.Date(2026, 11, 1, 0, 0, 0, 0, time.UTC)

// mixed returns n violations over 30 days, mostly in time order with some
// out of it (a clock set wrong, a replica's late batch), over 7 rules,
// 5 tags (none, one or two each), 40 traces and 9 sessions.
func mixed(n int, seed uint64) []trace.Violation {
	r := rand.New(rand.NewPCG(seed, 1))
	tags := []string{"no-citation", "loop", "pii", "幻觉", "stale"}
	vs := make([]trace.Violation, n)
	for i := range vs {
		v := violation(fmt.Sprint("rule-", r.IntN(7)), fmt.Sprint("trace-", r.IntN(40)))
		v.SessionID = fmt.Sprint("session-", r.IntN(9))
		v.Tags = nil
		for range r.IntN(3) {
			v.Tags = append(v.Tags, tags[r.IntN(len(tags))])
		}
		v.Dimension = []trace.Dimension{trace.Accuracy, trace.Memory}[r.IntN(2)]
		v.Time = day0.Add(time.Duration(i) * (30 * 24 * time.Hour / time.Duration(n)))
		if r.IntN(20) == 0 {
			v.Time = v.Time.Add(-time.Duration(r.IntN(72)) * time.Hour)
		}
		vs[i] = v
	}
	return vs
}

func indexQueries() []ledger.Query {
	return []ledger.Query{
		{},
		{TraceID: "trace-7"},
		{TraceID: "trace-7", AfterSeq: 100, Limit: 3},
		{TraceID: "missing"},
		{SessionID: "session-3", Rule: "rule-2"},
		{Rule: "rule-4"},
		{Rule: "rule-4", Limit: 10},
		{Tag: "幻觉"},
		{Tag: "loop", Rule: "rule-1"},
		{Rule: "rule-0", Dimension: trace.Memory},
		{Since: day0.Add(24 * time.Hour), Until: day0.Add(48 * time.Hour)},
		{Since: day0.Add(10*24*time.Hour + 17*time.Minute + 5*time.Second), Until: day0.Add(10*24*time.Hour + 3*time.Hour)},
		{Since: day0.Add(29 * 24 * time.Hour)},
		{Until: day0.Add(time.Hour)},
		{Since: day0.Add(-48 * time.Hour), Until: day0.Add(-24 * time.Hour)},
		{Since: day0.Add(5 * 24 * time.Hour), Until: day0.Add(6 * 24 * time.Hour), Rule: "rule-3", Tag: "pii"},
		{Since: day0.Add(5 * 24 * time.Hour), Until: day0.Add(6 * 24 * time.Hour), AfterSeq: 900},
		{Until: day0},
	}
}

// brute is what a query must return: every entry through Matches.
func brute(all []ledger.Entry, q ledger.Query) []ledger.Entry {
	var out []ledger.Entry
	for _, e := range all {
		if e.Seq > q.AfterSeq && q.Matches(&e) {
			out = append(out, e)
			if q.Limit > 0 && len(out) == q.Limit {
				break
			}
		}
	}
	return out
}

func each(es []ledger.Entry) iter.Seq2[ledger.Entry, error] {
	return func(yield func(ledger.Entry, error) bool) {
		for _, e := range es {
			if !yield(e, nil) {
				return
			}
		}
	}
}

// checkIndexed compares every query and lesson through the indexes with
// the same over a plain scan of the entries.
func checkIndexed(t *testing.T, l *Store) {
	t.Helper()
	all, _, _, err := l.scanPage(ctx, 0, 1<<30)
	if err != nil {
		t.Fatal(err)
	}
	for _, q := range indexQueries() {
		got, err := l.Query(ctx, q)
		if err != nil {
			t.Fatal(err)
		}
		if want := brute(all, q); !slices.Equal(seqsOf(got), seqsOf(want)) {
			t.Errorf("Query(%+v) = %d entries %v, want %d %v", q, len(got), head(seqsOf(got)), len(want), head(seqsOf(want)))
		}
		lq := q
		lq.AfterSeq = 0
		gotL, err := l.Lessons(ctx, lq)
		if err != nil {
			t.Fatal(err)
		}
		lq.Limit = 0
		wantL, err := ledger.Learn(each(brute(all, lq)), q)
		if err != nil {
			t.Fatal(err)
		}
		if !lessonsEqual(gotL, wantL) {
			t.Errorf("Lessons(%+v):\n got %v\nwant %v", q, gotL, wantL)
		}
	}
}

func head(s []uint64) []uint64 { return s[:min(len(s), 8)] }

func lessonsEqual(a, b []ledger.Lesson) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		x, y := a[i], b[i]
		if !x.FirstSeen.Equal(y.FirstSeen) || !x.LastSeen.Equal(y.LastSeen) {
			return false
		}
		x.FirstSeen, x.LastSeen, y.FirstSeen, y.LastSeen = time.Time{}, time.Time{}, time.Time{}, time.Time{}
		if !reflect.DeepEqual(x, y) {
			return false
		}
	}
	return true
}

// Queries through the indexes and lessons from the aggregates return what
// a scan of every entry returns, for appends one by one, in batches, and
// from a durable group commit.
func TestIndexedQueriesMatchAScan(t *testing.T) {
	oneGoroutine(t)
	vs := mixed(3000, 1)
	for _, mode := range []string{"append", "batch", "durable"} {
		t.Run(mode, func(t *testing.T) {
			l := openMem(t, Options{Durable: mode == "durable"})
			switch mode {
			case "batch":
				for i := 0; i < len(vs); i += 97 {
					if _, err := l.AppendBatch(ctx, vs[i:min(i+97, len(vs))]); err != nil {
						t.Fatal(err)
					}
				}
			default:
				for _, v := range vs {
					mustAppend(t, l, v)
				}
			}
			if !l.indexed.Load() {
				t.Fatal("a new ledger is not indexed")
			}
			checkIndexed(t, l)
		})
	}
}

// unindex makes l look like a ledger written before the indexes: its
// entries alone.
func unindex(t *testing.T, l *Store) {
	t.Helper()
	if err := l.db.DropPrefix([]byte(indexPrefix), []byte(bucketPrefix), []byte(lessonPrefix), []byte(metaIndexKey)); err != nil {
		t.Fatal(err)
	}
}

// A ledger written before the indexes is read by a scan when opened
// read-only, indexed by the first read-write Open, and can be indexed again
// at any time with Reindex.
func TestMigrationAndReindex(t *testing.T) {
	oneGoroutine(t)
	dir := t.TempDir()
	l, err := Open(dir, Options{})
	if err != nil {
		t.Fatal(err)
	}
	vs := mixed(2000, 2)
	if _, err := l.AppendBatch(ctx, vs); err != nil {
		t.Fatal(err)
	}
	unindex(t, l)
	if err := l.Close(); err != nil {
		t.Fatal(err)
	}

	if runtime.GOOS != "windows" && runtime.GOOS != "plan9" {
		ro, err := Open(dir, Options{ReadOnly: true})
		if err != nil {
			t.Fatal(err)
		}
		if ro.indexed.Load() {
			t.Error("read-only open of an old ledger claims indexes")
		}
		checkIndexed(t, ro) // by scan
		if _, err := ro.Reindex(ctx); err == nil {
			t.Error("Reindex on a read-only ledger succeeded")
		}
		ro.Close()
	}

	l, err = Open(dir, Options{})
	if err != nil {
		t.Fatal(err)
	}
	if !l.indexed.Load() {
		t.Fatal("read-write Open did not index an old ledger")
	}
	checkIndexed(t, l)
	mustAppend(t, l, violation("rule-1", "trace-new", "loop"))
	n, err := l.Reindex(ctx)
	if err != nil || n != 2001 {
		t.Fatalf("Reindex = %d, %v; want 2001", n, err)
	}
	checkIndexed(t, l)
	if err := l.Close(); err != nil {
		t.Fatal(err)
	}
	l, err = Open(dir, Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	checkIndexed(t, l) // lessons as loaded from disk
}

// Values longer than an index key holds are indexed by head and hash, and
// found exactly.
func TestIndexLongValues(t *testing.T) {
	l := openMem(t, Options{})
	long := func(c string) string { return fmt.Sprint(c, string(make([]byte, 300)), c) }
	a, b := long("a"), long("b") // same head, different tails
	mustAppend(t, l, violation("r", a, a))
	mustAppend(t, l, violation("r", b, b))
	for _, q := range []ledger.Query{{TraceID: a}, {TraceID: b}, {Tag: a}, {Tag: b, Rule: "r"}} {
		es, err := l.Query(ctx, q)
		if err != nil || len(es) != 1 {
			t.Errorf("query by a long value: %d entries, %v; want 1", len(es), err)
		}
	}
}

// Lessons are written every lessonCheckpoint entries and at Close; after
// a crash, Open counts the entries since the last checkpoint again.
func TestLessonsAfterACrash(t *testing.T) {
	oneGoroutine(t)
	dir := t.TempDir()
	l, err := Open(dir, Options{})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := l.AppendBatch(ctx, mixed(lessonCheckpoint+1500, 3)); err != nil {
		t.Fatal(err)
	}
	if l.lessonSeq == 0 || l.lessonSeq >= l.next-1 {
		t.Fatalf("checkpoint at %d of %d entries", l.lessonSeq, l.next-1)
	}
	// A crash: Close does not get to write the lessons.
	l.lessonSeq = l.next - 1
	if err := l.Close(); err != nil {
		t.Fatal(err)
	}
	l, err = Open(dir, Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	checkIndexed(t, l)
}

// Ledgers written by the previous version of the indexes (version 1, which
// wrote an entry's minute bucket with the entry) open and answer every
// query as a scan does: testdata/ledger-v1 was closed cleanly,
// testdata/ledger-v1-crashed never wrote its lessons. Both hold
// mixed(1500, 11), appended in batches of 100 by that version.
func TestOpenIndexVersion1(t *testing.T) {
	oneGoroutine(t)
	for _, name := range []string{"ledger-v1", "ledger-v1-crashed"} {
		t.Run(name, func(t *testing.T) {
			dir := t.TempDir()
			if err := os.CopyFS(dir, os.DirFS(filepath.Join("testdata", name))); err != nil {
				t.Fatal(err)
			}
			if runtime.GOOS != "windows" && runtime.GOOS != "plan9" {
				ro, err := Open(dir, Options{ReadOnly: true})
				if err != nil {
					t.Fatal(err)
				}
				if !ro.indexed.Load() {
					t.Error("read-only open of a version 1 ledger does not use its indexes")
				}
				checkIndexed(t, ro)
				ro.Close()
			}
			l, err := Open(dir, Options{})
			if err != nil {
				t.Fatal(err)
			}
			if l.next-1 != 1500 {
				t.Fatalf("%d entries, want 1500", l.next-1)
			}
			checkIndexed(t, l)
			vs := mixed(lessonCheckpoint+100, 12) // past a checkpoint of version 2
			if _, err := l.AppendBatch(ctx, vs); err != nil {
				t.Fatal(err)
			}
			checkIndexed(t, l)
			if err := l.Close(); err != nil {
				t.Fatal(err)
			}
			l, err = Open(dir, Options{})
			if err != nil {
				t.Fatal(err)
			}
			defer l.Close()
			var version []byte
			l.db.View(func(txn *badger.Txn) error {
				item, err := txn.Get([]byte(metaIndexKey))
				if err == nil {
					version, err = item.ValueCopy(nil)
				}
				return err
			})
			if string(version) != indexVersion {
				t.Errorf("index version %q after a read-write Open, want %q", version, indexVersion)
			}
			checkIndexed(t, l)
		})
	}
}

// Between checkpoints the minute buckets live in memory; a range query
// sees the entries appended since the last one, before and after a crash.
func TestTimeRangeBetweenCheckpoints(t *testing.T) {
	oneGoroutine(t)
	dir := t.TempDir()
	l, err := Open(dir, Options{})
	if err != nil {
		t.Fatal(err)
	}
	vs := mixed(lessonCheckpoint+700, 5)
	for i := 0; i < len(vs); i += 300 {
		if _, err := l.AppendBatch(ctx, vs[i:min(i+300, len(vs))]); err != nil {
			t.Fatal(err)
		}
	}
	if l.lessonSeq == 0 || len(l.dirty) == 0 {
		t.Fatalf("checkpoint at %d, %d minute buckets in memory: want some of both", l.lessonSeq, len(l.dirty))
	}
	checkIndexed(t, l)
	// A crash: Close writes no checkpoint.
	l.lessonSeq = l.next - 1
	clear(l.dirty)
	if err := l.Close(); err != nil {
		t.Fatal(err)
	}
	l, err = Open(dir, Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	checkIndexed(t, l)
}

// oneGoroutine skips t under the race detector. t drives the store from one
// goroutine, through volumes (reindexing, version-1 files, thousands of
// tags) that the detector's instrumentation makes minutes long: it can find
// nothing there that the plain run (the README's test command) does not
// test. The concurrent tests run under it.
func oneGoroutine(t *testing.T) {
	t.Helper()
	if raceOn {
		t.Skip("one goroutine drives the store: the plain run tests it; under -race it took 5-45 s, with nothing concurrent to check")
	}
}
