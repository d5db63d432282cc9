package badgerstore

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	"github.com/agentguard/agentguard/ledger"
	"github.com/agentguard/agentguard/trace"
)

// openDurable opens a Durable ledger on disk in a new directory.
func openDurable(t *testing.T) *Store {
	t.Helper()
	l, err := Open(t.TempDir(), Options{Durable: true})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { l.Close() })
	return l
}

// holdCommitter makes the committer stop before its next transaction until
// the returned release is called; held receives the requests it holds.
func holdCommitter(l *Store) (held <-chan []*request, release func()) {
	ch := make(chan []*request, 1)
	gate := make(chan struct{})
	var once sync.Once
	l.gc.testHook = func(reqs []*request) {
		once.Do(func() {
			ch <- reqs
			<-gate
		})
	}
	return ch, func() { close(gate) }
}

// queued waits until every other goroutine of the test's synctest bubble
// is blocked — the appenders on their requests, the committer on its hook
// or its queue, badger on its tickers — and checks that the committer's
// queue then holds n requests.
//
// The committer tests run in a bubble although their ledger is on disk:
// badger's goroutines do real file I/O, which is not durably blocking, but
// synctest.Wait only waits the longer for it; what the tests wait for is
// appenders blocking on channels of the bubble.
func queued(t *testing.T, l *Store, n int) {
	t.Helper()
	synctest.Wait()
	l.gc.mu.Lock()
	got := len(l.gc.queue)
	l.gc.mu.Unlock()
	if got < n {
		t.Fatalf("queue never reached %d requests", n)
	}
}

type result struct {
	seq uint64
	err error
}

func appendAsync(l *Store, ctx context.Context, v trace.Violation) <-chan result {
	ch := make(chan result, 1)
	go func() {
		seq, err := l.Append(ctx, v)
		ch <- result{seq, err}
	}()
	return ch
}

// The JSON an entry is stored as is json.Marshal's: of the ledger.Entry
// (appendWithSeq), and of the violation from a reused encoder (jsonBuf),
// HTML escaping included.
func TestEntryJSONMatchesMarshal(t *testing.T) {
	v := violation("r", "t1", "a", "b")
	v.Time = time.Date(2025, 1, 2, 3, 4, 5, 6, time.UTC)
	v.Evidence = `{"q":"<&>"} 订单 \u2028`
	j := getJSONBuf()
	defer putJSONBuf(j)
	for _, seq := range []uint64{0, 1, 42, 1<<64 - 1} {
		body, err := j.marshal(&v)
		if err != nil {
			t.Fatal(err)
		}
		if want, _ := json.Marshal(&v); string(body) != string(want) {
			t.Errorf("jsonBuf.marshal = %s, want %s", body, want)
		}
		want, _ := json.Marshal(ledger.Entry{Seq: seq, Violation: v})
		if got := appendWithSeq([]byte("prefix"), seq, body); string(got) != "prefix"+string(want) {
			t.Errorf("appendWithSeq(%d) = %s, want prefix%s", seq, got, want)
		}
		if n := len(want) - len(body); n > maxSeqJSON {
			t.Errorf("the sequence number %d adds %d bytes, more than maxSeqJSON (%d)", seq, n, maxSeqJSON)
		}
	}
	if got := appendWithSeq(nil, 7, []byte("{}")); string(got) != `{"seq":7}` {
		t.Errorf("appendWithSeq of {} = %s", got)
	}
}

func TestDurableConcurrentAppend(t *testing.T) {
	appendConcurrently(t, openDurable(t), 32, 40, 8)
}

func TestDurableAppendGroupsShareACommit(t *testing.T) {
	synctest.Test(t, testDurableAppendGroupsShareACommit)
}

func testDurableAppendGroupsShareACommit(t *testing.T) {
	l := openDurable(t)
	held, release := holdCommitter(l)
	first := appendAsync(l, ctx, violation("r", "first"))
	reqs := <-held // the committer holds the first request
	if len(reqs) != 1 {
		t.Fatalf("first group has %d requests, want 1", len(reqs))
	}
	var rest []<-chan result
	for i := 0; i < 10; i++ {
		rest = append(rest, appendAsync(l, ctx, violation("r", fmt.Sprint("t", i))))
	}
	queued(t, l, 10)
	var groups []int
	l.gc.testHook = func(reqs []*request) { groups = append(groups, len(reqs)) }
	release()
	if r := <-first; r.err != nil || r.seq != 1 {
		t.Fatalf("first = %d, %v; want 1, nil", r.seq, r.err)
	}
	seen := map[uint64]bool{}
	for _, ch := range rest {
		r := <-ch
		if r.err != nil || r.seq < 2 || r.seq > 11 || seen[r.seq] {
			t.Errorf("got %d, %v", r.seq, r.err)
		}
		seen[r.seq] = true
	}
	// All ten queued while the first was held: one transaction, one sync.
	if len(groups) != 1 || groups[0] != 10 {
		t.Errorf("groups after the first = %v, want [10]", groups)
	}
}

func TestDurableCancel(t *testing.T) {
	synctest.Test(t, testDurableCancel)
}

func testDurableCancel(t *testing.T) {
	l := openDurable(t)
	held, release := holdCommitter(l)

	// A is taken by the committer, then its context ends: A still waits for
	// its commit and reports it.
	actx, acancel := context.WithCancel(ctx)
	a := appendAsync(l, actx, violation("r", "a"))
	<-held
	// B waits in the queue when its context ends: B returns at once,
	// unwritten.
	bctx, bcancel := context.WithCancel(ctx)
	b := appendAsync(l, bctx, violation("r", "b"))
	queued(t, l, 1)
	bcancel()
	if r := <-b; !errors.Is(r.err, context.Canceled) {
		t.Errorf("B = %d, %v; want context.Canceled", r.seq, r.err)
	}
	acancel()
	synctest.Wait() // A has seen its context end and still waits for its commit
	select {
	case r := <-a:
		t.Fatalf("A returned %d, %v while its commit was held", r.seq, r.err)
	default:
	}
	release()
	if r := <-a; r.err != nil || r.seq != 1 {
		t.Errorf("A = %d, %v; want 1, nil", r.seq, r.err)
	}
	// C after them gets the next number: B's was never used.
	if seq := mustAppend(t, l, violation("r", "c")); seq != 2 {
		t.Errorf("C = %d, want 2", seq)
	}
	es, err := l.Query(ctx, ledger.Query{})
	if err != nil {
		t.Fatal(err)
	}
	var ids []string
	for _, e := range es {
		ids = append(ids, fmt.Sprint(e.Seq, e.TraceID))
	}
	if got, want := strings.Join(ids, " "), "1a 2c"; got != want {
		t.Errorf("stored %q, want %q", got, want)
	}
}

func TestDurableTooBigInAGroup(t *testing.T) {
	synctest.Test(t, testDurableTooBigInAGroup)
}

func testDurableTooBigInAGroup(t *testing.T) {
	l, err := Open(t.TempDir(), Options{Durable: true, MaxEvidence: -1})
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	held, release := holdCommitter(l)
	first := appendAsync(l, ctx, violation("r", "first"))
	<-held

	big := func(id string, n int) []trace.Violation {
		vs := make([]trace.Violation, n)
		for i := range vs {
			vs[i] = violation("r", id)
			vs[i].Evidence = strings.Repeat("x", 300<<10)
		}
		return vs
	}
	type batchResult struct {
		seqs []uint64
		err  error
	}
	batch := func(vs []trace.Violation) <-chan batchResult {
		ch := make(chan batchResult, 1)
		go func() {
			seqs, err := l.AppendBatch(ctx, vs)
			ch <- batchResult{seqs, err}
		}()
		return ch
	}
	// Queued in this order: 600 KB, 6 MB (split in ten), a small one,
	// 900 KB (split in two).
	a := batch(big("a", 2))
	queued(t, l, 1)
	b := batch(big("b", 20))
	queued(t, l, 2)
	c := appendAsync(l, ctx, violation("r", "c"))
	queued(t, l, 3)
	d := batch(big("d", 3))
	queued(t, l, 4)
	release()

	if r := <-first; r.err != nil {
		t.Fatal(r.err)
	}
	ra, rb, rc, rd := <-a, <-b, <-c, <-d
	if ra.err != nil || rc.err != nil || rd.err != nil {
		t.Fatalf("a, c, d: %v, %v, %v", ra.err, rc.err, rd.err)
	}
	if rb.err != nil {
		t.Errorf("b: %v; a batch larger than a transaction is split, not refused", rb.err)
	}
	// Each request's numbers grow; a batch that needed several
	// transactions may have others' entries between its parts.
	all := map[uint64]bool{}
	for _, seqs := range [][]uint64{ra.seqs, rb.seqs, {rc.seq}, rd.seqs} {
		for i, s := range seqs {
			if i > 0 && s <= seqs[i-1] || all[s] {
				t.Errorf("sequence numbers %v: not increasing or given twice", seqs)
			}
			all[s] = true
		}
	}
	if es, err := l.Query(ctx, ledger.Query{}); err != nil || len(es) != 27 {
		t.Errorf("stored %d entries, %v; want 27", len(es), err)
	}
}

func TestDurableCloseDrains(t *testing.T) {
	needReadOnly(t)
	dir := t.TempDir()
	l, err := Open(dir, Options{Durable: true})
	if err != nil {
		t.Fatal(err)
	}
	var (
		wg    sync.WaitGroup
		mu    sync.Mutex
		acked []uint64
	)
	for w := 0; w < 16; w++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for {
				seq, err := l.Append(ctx, violation("r", "t"))
				if errors.Is(err, ledger.ErrClosed) {
					return
				} else if err != nil {
					t.Error(err)
					return
				}
				mu.Lock()
				acked = append(acked, seq)
				mu.Unlock()
			}
		}()
	}
	// Close while appends are in flight, once some have gone through. This
	// test stays on the real clock: its sixteen appenders keep the
	// committer in fdatasync, real file I/O that is not durably blocking,
	// so a bubble's clock would hardly move and tell nothing a bounded real
	// wait does not.
	for deadline := time.Now().Add(10 * time.Second); time.Now().Before(deadline); time.Sleep(time.Millisecond) {
		mu.Lock()
		n := len(acked)
		mu.Unlock()
		if n >= 32 {
			break
		}
	}
	if err := l.Close(); err != nil {
		t.Fatal(err)
	}
	wg.Wait()
	l, err = Open(dir, Options{ReadOnly: true})
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	es, err := l.Query(ctx, ledger.Query{})
	if err != nil {
		t.Fatal(err)
	}
	stored := map[uint64]bool{}
	for _, e := range es {
		stored[e.Seq] = true
	}
	for _, s := range acked {
		if !stored[s] {
			t.Errorf("acknowledged seq %d missing after Close", s)
		}
	}
	if len(acked) == 0 || len(es) != len(acked) {
		t.Errorf("%d acknowledged, %d stored", len(acked), len(es))
	}
}

func TestDurableFollowsMemtableRotation(t *testing.T) {
	l, err := Open(t.TempDir(), Options{Durable: true})
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	start := l.gc.fid
	vs := make([]trace.Violation, 100)
	for i := range vs {
		vs[i] = violation("r", "t")
		vs[i].Evidence = strings.Repeat("e", 4000)
	}
	// 3,000 entries of 4 KB: 12 MB, more than one 8 MB memtable.
	for i := 0; i < 30; i++ {
		if _, err := l.AppendBatch(ctx, vs); err != nil {
			t.Fatal(err)
		}
	}
	if l.gc.fid == start {
		t.Fatalf("committer still syncs memtable log %d after 12 MB", start)
	}
	// It syncs the newest log, the one badger writes to.
	_, newest, err := openLogFID(l.path)
	if err != nil {
		t.Fatal(err)
	}
	if l.gc.fid != newest {
		t.Errorf("committer syncs log %d, newest is %d", l.gc.fid, newest)
	}
	if want := memFile(l.path, newest); l.gc.log.Name() != want {
		t.Errorf("committer holds %s open, want %s", l.gc.log.Name(), want)
	}
	if fi, err := os.Stat(memFile(l.path, l.gc.fid)); err != nil || fi.Size() == 0 {
		t.Errorf("synced log: %v", err)
	}
}

// openLogFID returns the file name and number of the newest memtable log.
func openLogFID(dir string) (string, int, error) {
	f, fid, err := openLog(dir)
	if err != nil {
		return "", 0, err
	}
	f.Close()
	return filepath.Base(f.Name()), fid, nil
}

func TestDurableInMemory(t *testing.T) {
	l := openMem(t, Options{Durable: true})
	seqs, err := l.AppendBatch(ctx, []trace.Violation{violation("a", "t"), violation("b", "t")})
	if err != nil || fmt.Sprint(seqs) != "[1 2]" {
		t.Errorf("AppendBatch = %v, %v", seqs, err)
	}
}

func TestDurableSyncFailureIsSticky(t *testing.T) {
	l := openDurable(t)
	mustAppend(t, l, violation("r", "ok"))
	// Make the next sync fail: the committer is idle, nothing is in flight.
	l.gc.log.Close()
	_, err1 := l.Append(ctx, violation("r", "a"))
	_, err2 := l.Append(ctx, violation("r", "b"))
	if err1 == nil || err2 == nil {
		t.Fatalf("appends after a failed sync: %v, %v; want errors", err1, err2)
	}
	var le1, le2 *ledger.Error
	if !errors.As(err1, &le1) || !errors.As(err2, &le2) || le2.Op != "append" {
		t.Fatalf("errors %#v, %#v; want *ledger.Error", err1, err2)
	}
	if le2.Err != le1.Err {
		t.Errorf("second append: %v, want the failed sync's error again: %v", err2, err1)
	}
}
