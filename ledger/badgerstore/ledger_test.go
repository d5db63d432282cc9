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
	"time"
	"unicode/utf8"

	"github.com/agentguard/agentguard/ledger"
	"github.com/agentguard/agentguard/trace"
)

var ctx = context.Background()

func openMem(t testing.TB, opts Options) *Store {
	t.Helper()
	opts.InMemory = true
	l, err := Open("", opts)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { l.Close() })
	return l
}

func violation(rule, traceID string, tags ...string) trace.Violation {
	return trace.Violation{
		TraceID: traceID,
		Finding: trace.Finding{
			Rule: rule, Verdict: trace.Block, Dimension: trace.Accuracy,
			Severity: trace.SeverityError, Message: rule + " fired", Tags: tags,
		},
	}
}

func mustAppend(t testing.TB, l *Store, v trace.Violation) uint64 {
	t.Helper()
	seq, err := l.Append(ctx, v)
	if err != nil {
		t.Fatal(err)
	}
	return seq
}

func TestEntryJSONIsFlat(t *testing.T) {
	e := ledger.Entry{Seq: 7, Violation: violation("r", "t1", "x")}
	e.Time = time.Date(2025, 1, 2, 3, 4, 5, 0, time.UTC)
	b, err := json.Marshal(e)
	if err != nil {
		t.Fatal(err)
	}
	var m map[string]any
	if err := json.Unmarshal(b, &m); err != nil {
		t.Fatal(err)
	}
	for _, k := range []string{"seq", "time", "trace_id", "rule", "verdict", "tags"} {
		if _, ok := m[k]; !ok {
			t.Errorf("key %q missing from %s", k, b)
		}
	}
	for _, k := range []string{"Violation", "Finding"} {
		if _, ok := m[k]; ok {
			t.Errorf("key %q present in %s: not flat", k, b)
		}
	}
	if !strings.HasPrefix(string(b), `{"seq":7,`) {
		t.Errorf("got %s, want it to start with seq", b)
	}
}

func TestAppendFillsTimeAndReturnsSeq(t *testing.T) {
	l := openMem(t, Options{})
	before := time.Now()
	seq := mustAppend(t, l, violation("r", "t1"))
	if seq != 1 {
		t.Errorf("first seq = %d, want 1", seq)
	}
	es, err := l.Query(ctx, ledger.Query{})
	if err != nil {
		t.Fatal(err)
	}
	if len(es) != 1 {
		t.Fatalf("got %d entries, want 1", len(es))
	}
	got := es[0].Time
	if got.Location() != time.UTC || got.Before(before.Add(-time.Second)) || got.After(time.Now().Add(time.Second)) {
		t.Errorf("Time = %v, want now in UTC", got)
	}
	given := time.Date(2020, 5, 6, 7, 8, 9, 0, time.UTC)
	v := violation("r", "t2")
	v.Time = given
	mustAppend(t, l, v)
	es, _ = l.Query(ctx, ledger.Query{TraceID: "t2"})
	if len(es) != 1 || !es[0].Time.Equal(given) {
		t.Errorf("given time not kept: %+v", es)
	}
}

func TestAppendBatch(t *testing.T) {
	l := openMem(t, Options{})
	mustAppend(t, l, violation("a", "t0"))
	seqs, err := l.AppendBatch(ctx, []trace.Violation{violation("a", "t1"), violation("b", "t2"), violation("c", "t3")})
	if err != nil {
		t.Fatal(err)
	}
	if want := []uint64{2, 3, 4}; fmt.Sprint(seqs) != fmt.Sprint(want) {
		t.Errorf("seqs = %v, want %v", seqs, want)
	}
	es, _ := l.Query(ctx, ledger.Query{})
	if len(es) != 4 || es[3].Rule != "c" || es[3].Seq != 4 {
		t.Errorf("got %+v", es)
	}
	seqs, err = l.AppendBatch(ctx, nil)
	if seqs != nil || err != nil {
		t.Errorf("empty batch = %v, %v; want nil, nil", seqs, err)
	}
}

// A batch larger than one transaction is split into several, each entry
// whole: findings = entries, whatever the batch size.
func TestAppendBatchTooBigIsSplit(t *testing.T) {
	for _, durable := range []bool{false, true} {
		t.Run(fmt.Sprint("durable=", durable), func(t *testing.T) {
			l := openMem(t, Options{MaxEvidence: -1, Durable: durable})
			big := strings.Repeat("x", 64<<10)
			vs := make([]trace.Violation, 100) // 6.4 MB: more than one transaction takes
			for i := range vs {
				vs[i] = violation("r", fmt.Sprint("t", i))
				vs[i].Evidence = big
			}
			seqs, err := l.AppendBatch(ctx, vs)
			if err != nil || len(seqs) != 100 {
				t.Fatalf("AppendBatch = %d seqs, %v", len(seqs), err)
			}
			es, err := l.Query(ctx, ledger.Query{})
			if err != nil || len(es) != 100 {
				t.Fatalf("stored %d entries, %v; want 100", len(es), err)
			}
			for i, e := range es {
				if e.Seq != seqs[i] || e.TraceID != vs[i].TraceID || len(e.Evidence) != len(big) {
					t.Errorf("entry %d: seq %d trace %s, %d bytes of evidence", i, e.Seq, e.TraceID, len(e.Evidence))
				}
			}
		})
	}
}

func TestEvidenceTruncation(t *testing.T) {
	long := strings.Repeat("é", 5000) // 10,000 bytes, two per rune
	tests := []struct {
		name    string
		max     int
		wantLen int // bytes kept, marker included; -1 = all
	}{
		{"default", 0, DefaultMaxEvidence},
		{"small", 100, 100},
		{"unbounded", -1, -1},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			l := openMem(t, Options{MaxEvidence: tt.max})
			v := violation("r", "t")
			v.Evidence = long
			mustAppend(t, l, v)
			es, err := l.Query(ctx, ledger.Query{})
			if err != nil {
				t.Fatal(err)
			}
			got := es[0].Evidence
			if tt.wantLen < 0 {
				if got != long {
					t.Errorf("evidence cut to %d bytes, want all", len(got))
				}
				return
			}
			if len(got) > tt.wantLen || len(got) < tt.wantLen-4 {
				t.Errorf("len = %d, want about %d", len(got), tt.wantLen)
			}
			if !strings.HasSuffix(got, trace.TruncationMarker) || !utf8.ValidString(got) {
				t.Errorf("evidence %q… not cut cleanly", got[len(got)-30:])
			}
		})
	}
	l := openMem(t, Options{MaxEvidence: 100})
	v := violation("r", "t")
	v.Evidence = "short"
	mustAppend(t, l, v)
	if es, _ := l.Query(ctx, ledger.Query{}); es[0].Evidence != "short" {
		t.Errorf("short evidence changed to %q", es[0].Evidence)
	}
}

func TestPersistence(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "ledger") // created by Open
	l, err := Open(dir, Options{})
	if err != nil {
		t.Fatal(err)
	}
	if l.Path() != dir {
		t.Errorf("Path() = %q, want %q", l.Path(), dir)
	}
	seen := map[uint64]bool{}
	var last uint64
	appendN := func(l *Store, n int) {
		for i := 0; i < n; i++ {
			v := violation(fmt.Sprintf("rule%d", i%7), fmt.Sprintf("trace%d", i))
			v.Evidence = strings.Repeat("e", i%300)
			seq := mustAppend(t, l, v)
			if seq <= last || seen[seq] {
				t.Fatalf("seq %d after %d (seen before: %v)", seq, last, seen[seq])
			}
			seen[seq], last = true, seq
		}
	}
	appendN(l, 1000)
	if err := l.Close(); err != nil {
		t.Fatal(err)
	}
	if fi, err := os.Stat(dir); err != nil || fi.Mode().Perm() != 0o700 {
		t.Errorf("dir mode = %v, %v; want 0700", fi.Mode().Perm(), err)
	}

	for round := 0; round < 2; round++ {
		l, err = Open(dir, Options{})
		if err != nil {
			t.Fatal(err)
		}
		es, err := l.Query(ctx, ledger.Query{})
		if err != nil {
			t.Fatal(err)
		}
		if len(es) != len(seen) {
			t.Fatalf("round %d: read %d entries, want %d", round, len(es), len(seen))
		}
		for i, e := range es {
			if !seen[e.Seq] || (i > 0 && e.Seq <= es[i-1].Seq) {
				t.Fatalf("round %d: entry %d has seq %d", round, i, e.Seq)
			}
		}
		appendN(l, 100)
		if _, err := l.AppendBatch(ctx, []trace.Violation{violation("b", "tb")}); err != nil {
			t.Fatal(err)
		}
		last++
		seen[last] = true
		if err := l.Close(); err != nil {
			t.Fatal(err)
		}
	}
	if len(seen) != 1202 {
		t.Errorf("%d distinct seqs, want 1202", len(seen))
	}
}

func TestDurable(t *testing.T) {
	dir := t.TempDir()
	l, err := Open(dir, Options{Durable: true})
	if err != nil {
		t.Fatal(err)
	}
	mustAppend(t, l, violation("r", "t"))
	l.Close()
	l, err = Open(dir, Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	if es, err := l.Query(ctx, ledger.Query{}); err != nil || len(es) != 1 {
		t.Errorf("got %d entries, %v; want 1", len(es), err)
	}
}

func TestLocked(t *testing.T) {
	dir := t.TempDir()
	l, err := Open(dir, Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	l2, err := Open(dir, Options{})
	if err == nil {
		l2.Close()
		t.Fatal("second Open succeeded")
	}
	if !errors.Is(err, ledger.ErrLocked) {
		t.Errorf("err = %v, want ledger.ErrLocked", err)
	}
	var le *ledger.Error
	if !errors.As(err, &le) || le.Path != dir || le.Op != "open" {
		t.Errorf("err = %#v, want *ledger.Error{Op: open, Path: %q}", err, dir)
	}
	if want := fmt.Sprintf("ledger: open %q: dir is locked by another process", dir); err.Error() != want {
		t.Errorf("message = %q, want %q", err, want)
	}
	// The first ledger still works, and the lock goes with Close.
	mustAppend(t, l, violation("r", "t"))
	l.Close()
	l3, err := Open(dir, Options{})
	if err != nil {
		t.Fatalf("reopen after Close: %v", err)
	}
	l3.Close()
}

// corrupt writes a closed ledger holding a table file, then damages it.
func corrupt(t *testing.T, damage func(dir string, files []string)) string {
	t.Helper()
	dir := t.TempDir()
	l, err := Open(dir, Options{})
	if err != nil {
		t.Fatal(err)
	}
	for i := 0; i < 2000; i++ {
		mustAppend(t, l, violation("r", fmt.Sprint("t", i)))
	}
	if err := l.Close(); err != nil {
		t.Fatal(err)
	}
	ents, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	var files []string
	for _, e := range ents {
		files = append(files, e.Name())
	}
	damage(dir, files)
	return dir
}

func garble(t *testing.T, dir string, files []string, match func(string) bool, from func(size int) int) {
	t.Helper()
	n := 0
	for _, f := range files {
		if !match(f) {
			continue
		}
		p := filepath.Join(dir, f)
		b, err := os.ReadFile(p)
		if err != nil {
			t.Fatal(err)
		}
		for i := from(len(b)); i < len(b); i++ {
			b[i] = byte(i*7 + 3)
		}
		if err := os.WriteFile(p, b, 0o600); err != nil {
			t.Fatal(err)
		}
		n++
	}
	if n == 0 {
		t.Fatalf("no file to damage among %v", files)
	}
}

func TestCorrupt(t *testing.T) {
	oneGoroutine(t)
	ext := func(e string) func(string) bool { return func(f string) bool { return filepath.Ext(f) == e } }
	name := func(n string) func(string) bool { return func(f string) bool { return f == n } }
	all := func(int) int { return 0 }
	tail := func(size int) int { return size - 64 }
	tests := []struct {
		name   string
		match  func(string) bool
		from   func(size int) int
		strict bool // must be ledger.ErrCorrupt, not just an *ledger.Error
	}{
		{"manifest garbage", name("MANIFEST"), all, true},
		{"manifest tail", name("MANIFEST"), func(size int) int { return size / 2 }, true},
		{"table garbage", ext(".sst"), all, true},
		{"table footer", ext(".sst"), tail, true},
		{"table middle", ext(".sst"), func(size int) int { return size / 3 }, true},
		{"value log garbage", ext(".vlog"), all, true},
		{"key registry garbage", name("KEYREGISTRY"), all, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			dir := corrupt(t, func(dir string, files []string) { garble(t, dir, files, tt.match, tt.from) })
			l, err := Open(dir, Options{})
			if err == nil {
				// badger may shrug off some damage; then reading must not panic.
				defer l.Close()
				_, qerr := l.Query(ctx, ledger.Query{})
				if tt.strict {
					t.Fatalf("Open succeeded on a damaged ledger (query: %v)", qerr)
				}
				return
			}
			var le *ledger.Error
			if !errors.As(err, &le) || le.Path != dir {
				t.Errorf("err = %v, want an *ledger.Error naming %q", err, dir)
			}
			if tt.strict && !errors.Is(err, ledger.ErrCorrupt) {
				t.Errorf("err = %v, want ledger.ErrCorrupt", err)
			}
			t.Log(err)
		})
	}
}

func TestCorruptEntry(t *testing.T) {
	l := openMem(t, Options{})
	mustAppend(t, l, violation("r", "t"))
	txn := l.db.NewTransaction(true)
	txn.Set(key(2), []byte("{not json"))
	if err := txn.Commit(); err != nil {
		t.Fatal(err)
	}
	_, err := l.Query(ctx, ledger.Query{})
	if !errors.Is(err, ledger.ErrCorrupt) || !strings.Contains(err.Error(), "entry 2") {
		t.Errorf("err = %v, want ledger.ErrCorrupt naming entry 2", err)
	}
}

func TestClosed(t *testing.T) {
	l, err := Open("", Options{InMemory: true})
	if err != nil {
		t.Fatal(err)
	}
	if err := l.Close(); err != nil {
		t.Fatal(err)
	}
	if err := l.Close(); err != nil {
		t.Errorf("second Close = %v, want nil", err)
	}
	calls := map[string]func() error{
		"Append": func() error { _, err := l.Append(ctx, violation("r", "t")); return err },
		"AppendBatch": func() error {
			_, err := l.AppendBatch(ctx, []trace.Violation{violation("r", "t")})
			return err
		},
		"ledger.Query": func() error { _, err := l.Query(ctx, ledger.Query{}); return err },
		"Lessons":      func() error { _, err := l.Lessons(ctx, ledger.Query{}); return err },
		"Export":       func() error { _, err := l.Export(ctx, new(strings.Builder), ledger.Query{}); return err },
		"Entries": func() error {
			for _, err := range l.Entries(ctx, ledger.Query{}) {
				return err
			}
			return nil
		},
	}
	for name, call := range calls {
		t.Run(name, func(t *testing.T) {
			err := call()
			if !errors.Is(err, ledger.ErrClosed) {
				t.Errorf("err = %v, want ledger.ErrClosed", err)
			}
			var le *ledger.Error
			if !errors.As(err, &le) {
				t.Errorf("err = %#v, want *ledger.Error", err)
			}
		})
	}
}

func TestCanceledContext(t *testing.T) {
	l := openMem(t, Options{})
	cctx, cancel := context.WithCancel(ctx)
	cancel()
	if _, err := l.Append(cctx, violation("r", "t")); !errors.Is(err, context.Canceled) {
		t.Errorf("Append err = %v, want context.Canceled", err)
	}
	if _, err := l.Query(cctx, ledger.Query{}); !errors.Is(err, context.Canceled) {
		t.Errorf("ledger.Query err = %v, want context.Canceled", err)
	}
	if es, _ := l.Query(ctx, ledger.Query{}); len(es) != 0 {
		t.Errorf("canceled Append stored %d entries", len(es))
	}
}

func TestConcurrentAppend(t *testing.T) {
	appendConcurrently(t, openMem(t, Options{}), 16, 200, 10)
}

// appendConcurrently has writers goroutines make each appends apiece to
// l, every batchEvery-th a batch of two, while a reader queries; and checks
// that no sequence number is given twice, that every read sees a gap-free
// prefix (entries are committed in order), and that the ledger holds
// exactly the acknowledged entries, each under the writer it was
// acknowledged to.
func appendConcurrently(t *testing.T, l *Store, writers, each, batchEvery int) {
	t.Helper()
	var (
		wg   sync.WaitGroup
		mu   sync.Mutex
		seqs = map[uint64]string{}
	)
	for w := 0; w < writers; w++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := 0; i < each; i++ {
				id := fmt.Sprintf("w%d-%d", w, i)
				var got []uint64
				if i%batchEvery == 0 {
					s, err := l.AppendBatch(ctx, []trace.Violation{violation("b", id), violation("b", id)})
					if err != nil {
						t.Error(err)
						return
					}
					got = s
				} else {
					s, err := l.Append(ctx, violation("r", id))
					if err != nil {
						t.Error(err)
						return
					}
					got = []uint64{s}
				}
				mu.Lock()
				for _, s := range got {
					if prev, dup := seqs[s]; dup {
						t.Errorf("seq %d given to %s and %s", s, prev, id)
					}
					seqs[s] = id
				}
				mu.Unlock()
			}
		}()
	}
	wg.Add(1)
	go func() {
		defer wg.Done()
		for i := 0; i < 20; i++ {
			es, err := l.Query(ctx, ledger.Query{})
			if err != nil {
				t.Error(err)
				return
			}
			for j, e := range es {
				if e.Seq != uint64(j+1) {
					t.Errorf("read %d: entry %d has seq %d", i, j, e.Seq)
					return
				}
			}
		}
	}()
	wg.Wait()
	want := writers * (each + (each+batchEvery-1)/batchEvery)
	if len(seqs) != want {
		t.Errorf("%d distinct seqs, want %d", len(seqs), want)
	}
	es, err := l.Query(ctx, ledger.Query{})
	if err != nil {
		t.Fatal(err)
	}
	if len(es) != len(seqs) {
		t.Fatalf("stored %d entries, acknowledged %d", len(es), len(seqs))
	}
	for _, e := range es {
		if seqs[e.Seq] != e.TraceID {
			t.Errorf("entry %d belongs to %q, was acknowledged to %q", e.Seq, e.TraceID, seqs[e.Seq])
		}
	}
}

func TestOpenErrors(t *testing.T) {
	_, err := Open("", Options{})
	var le *ledger.Error
	if !errors.As(err, &le) || le.Op != "open" {
		t.Errorf("Open(\"\") err = %v, want *ledger.Error", err)
	}
	file := filepath.Join(t.TempDir(), "file")
	os.WriteFile(file, nil, 0o600)
	_, err = Open(filepath.Join(file, "sub"), Options{})
	if !errors.As(err, &le) || le.Path != filepath.Join(file, "sub") {
		t.Errorf("Open under a file: err = %v, want *ledger.Error with the path", err)
	}
	if errors.Is(err, ledger.ErrCorrupt) || errors.Is(err, ledger.ErrLocked) {
		t.Errorf("Open under a file: err = %v, want neither ledger.ErrCorrupt nor ledger.ErrLocked", err)
	}
}

func TestLogger(t *testing.T) {
	var buf strings.Builder
	var mu sync.Mutex
	h := slogHandlerFunc(func(msg string) { mu.Lock(); buf.WriteString(msg + "\n"); mu.Unlock() })
	dir := t.TempDir()
	l, err := Open(dir, Options{Logger: h})
	if err != nil {
		t.Fatal(err)
	}
	mustAppend(t, l, violation("r", "t"))
	l.Close()
	mu.Lock()
	quiet := buf.String()
	buf.Reset()
	mu.Unlock()
	if quiet != "" {
		t.Errorf("a quiet open/append/close logged:\n%s", quiet)
	}
	a := slogAdapter{h}
	a.Infof("chatter")
	a.Warningf("value log %d is big\n", 3)
	mu.Lock()
	defer mu.Unlock()
	if got := buf.String(); got != "WARN value log 3 is big component=badger\n" {
		t.Errorf("logged %q", got)
	}
}
