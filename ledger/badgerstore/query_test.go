package badgerstore

import (
	"bufio"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/agentguard/agentguard/ledger"
	"github.com/agentguard/agentguard/trace"
)

var t0 = time.Date(2025, 3, 1, 12, 0, 0, 0, time.UTC)

// seed appends a fixed set of violations, one minute apart from t0, and
// returns the ledger. Seqs are 1..7.
func seed(t *testing.T) *Store {
	t.Helper()
	l := openMem(t, Options{})
	vs := []struct {
		rule, traceID, session string
		dim                    trace.Dimension
		tags                   []string
	}{
		{"grounding", "t1", "s1", trace.Accuracy, []string{"no-citation"}},           // 1
		{"grounding", "t1", "s1", trace.Accuracy, []string{"no-citation", "stale"}},  // 2
		{"tool-allowlist", "t2", "s1", trace.Stability, nil},                         // 3
		{"loop", "t3", "s2", trace.Efficiency, []string{"repeat-call"}},              // 4
		{"grounding", "t4", "s2", trace.Accuracy, []string{"stale"}},                 // 5
		{"memory-card", "t5", "", trace.Memory, []string{"forgot-name"}},             // 6
		{"grounding", "t6", "s3", trace.Coherence, []string{"no-citation", "hedge"}}, // 7
	}
	for i, v := range vs {
		x := violation(v.rule, v.traceID, v.tags...)
		x.SessionID = v.session
		x.Dimension = v.dim
		x.Time = t0.Add(time.Duration(i) * time.Minute)
		if seq := mustAppend(t, l, x); seq != uint64(i+1) {
			t.Fatalf("seq = %d, want %d", seq, i+1)
		}
	}
	return l
}

func seqsOf(es []ledger.Entry) []uint64 {
	out := make([]uint64, len(es))
	for i, e := range es {
		out[i] = e.Seq
	}
	return out
}

func TestQueryFilters(t *testing.T) {
	l := seed(t)
	tests := []struct {
		name string
		q    ledger.Query
		want []uint64
	}{
		{"all", ledger.Query{}, []uint64{1, 2, 3, 4, 5, 6, 7}},
		{"rule", ledger.Query{Rule: "grounding"}, []uint64{1, 2, 5, 7}},
		{"unknown rule", ledger.Query{Rule: "nope"}, []uint64{}},
		{"trace", ledger.Query{TraceID: "t1"}, []uint64{1, 2}},
		{"session", ledger.Query{SessionID: "s2"}, []uint64{4, 5}},
		{"tag", ledger.Query{Tag: "stale"}, []uint64{2, 5}},
		{"dimension", ledger.Query{Dimension: trace.Accuracy}, []uint64{1, 2, 5}},
		{"since is inclusive", ledger.Query{Since: t0.Add(5 * time.Minute)}, []uint64{6, 7}},
		{"until is exclusive", ledger.Query{Until: t0.Add(2 * time.Minute)}, []uint64{1, 2}},
		{"window", ledger.Query{Since: t0.Add(time.Minute), Until: t0.Add(4 * time.Minute)}, []uint64{2, 3, 4}},
		{"after seq", ledger.Query{AfterSeq: 5}, []uint64{6, 7}},
		{"after last seq", ledger.Query{AfterSeq: 7}, []uint64{}},
		{"after max seq", ledger.Query{AfterSeq: ^uint64(0)}, []uint64{}},
		{"limit", ledger.Query{Limit: 3}, []uint64{1, 2, 3}},
		{"negative limit", ledger.Query{Limit: -1}, []uint64{1, 2, 3, 4, 5, 6, 7}},
		{"rule and tag", ledger.Query{Rule: "grounding", Tag: "no-citation"}, []uint64{1, 2, 7}},
		{"rule, tag, limit", ledger.Query{Rule: "grounding", Tag: "no-citation", Limit: 2}, []uint64{1, 2}},
		{"rule and after seq", ledger.Query{Rule: "grounding", AfterSeq: 2}, []uint64{5, 7}},
		{"everything", ledger.Query{Rule: "grounding", SessionID: "s2", Tag: "stale", Dimension: trace.Accuracy,
			Since: t0, Until: t0.Add(time.Hour), AfterSeq: 1, Limit: 10}, []uint64{5}},
		{"contradiction", ledger.Query{Rule: "loop", Dimension: trace.Accuracy}, []uint64{}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := l.Query(ctx, tt.q)
			if err != nil {
				t.Fatal(err)
			}
			if !slices.Equal(seqsOf(got), tt.want) {
				t.Errorf("got %v, want %v", seqsOf(got), tt.want)
			}
			// Entries yields the same.
			var it []ledger.Entry
			for e, err := range l.Entries(ctx, tt.q) {
				if err != nil {
					t.Fatal(err)
				}
				it = append(it, e)
			}
			if !slices.Equal(seqsOf(it), tt.want) {
				t.Errorf("Entries: got %v, want %v", seqsOf(it), tt.want)
			}
		})
	}
}

func TestQueryRoundTripsFields(t *testing.T) {
	l := openMem(t, Options{})
	v := trace.Violation{
		Time: t0, TraceID: "t", SessionID: "s",
		Finding: trace.Finding{Rule: "r", Step: 3, Verdict: trace.Clarify, Dimension: trace.Memory,
			Severity: trace.SeverityWarning, Message: "m", Question: "q?", Evidence: "<e>&", Tags: []string{"a", "b"}, Shadow: true},
	}
	seq := mustAppend(t, l, v)
	es, err := l.Query(ctx, ledger.Query{})
	if err != nil {
		t.Fatal(err)
	}
	want := ledger.Entry{Seq: seq, Violation: v}
	if got := es[0]; fmt.Sprintf("%+v", got) != fmt.Sprintf("%+v", want) {
		t.Errorf("got  %+v\nwant %+v", got, want)
	}
}

func TestEntriesPagingAndBreak(t *testing.T) {
	l := openMem(t, Options{})
	const n = 3*pageSize + 17
	vs := make([]trace.Violation, n)
	for i := range vs {
		rule := "even"
		if i%2 == 1 {
			rule = "odd"
		}
		vs[i] = violation(rule, fmt.Sprint("t", i))
	}
	for i := 0; i < n; i += 100 {
		if _, err := l.AppendBatch(ctx, vs[i:min(i+100, n)]); err != nil {
			t.Fatal(err)
		}
	}

	var got []uint64
	for e, err := range l.Entries(ctx, ledger.Query{Rule: "odd"}) {
		if err != nil {
			t.Fatal(err)
		}
		got = append(got, e.Seq)
	}
	if len(got) != n/2 {
		t.Errorf("got %d odd entries, want %d", len(got), n/2)
	}
	for i, s := range got {
		if s != uint64(2*i+2) {
			t.Fatalf("entry %d has seq %d, want %d", i, s, 2*i+2)
		}
	}

	es, err := l.Query(ctx, ledger.Query{Limit: pageSize + 1, AfterSeq: 10})
	if err != nil || len(es) != pageSize+1 || es[0].Seq != 11 || es[pageSize].Seq != pageSize+11 {
		t.Errorf("limit across pages: %d entries, %v", len(es), err)
	}

	// Break early; the loop body may call the ledger, even Append.
	count := 0
	for _, err := range l.Entries(ctx, ledger.Query{}) {
		if err != nil {
			t.Fatal(err)
		}
		if _, err := l.Append(ctx, violation("inside", "t")); err != nil {
			t.Fatal(err)
		}
		if count++; count == 3 {
			break
		}
	}
	if count != 3 {
		t.Errorf("count = %d, want 3", count)
	}
	es, _ = l.Query(ctx, ledger.Query{Rule: "inside"})
	if len(es) != 3 {
		t.Errorf("%d appends from inside the loop, want 3", len(es))
	}

	// Close inside the loop: the next page reports ledger.ErrClosed.
	var last error
	for _, err := range l.Entries(ctx, ledger.Query{}) {
		if err != nil {
			last = err
			break
		}
		l.Close()
	}
	if !errors.Is(last, ledger.ErrClosed) {
		t.Errorf("after Close in loop: %v, want ledger.ErrClosed", last)
	}
}

func TestLessons(t *testing.T) {
	l := seed(t)
	tm := func(min int) time.Time { return t0.Add(time.Duration(min) * time.Minute) }
	tests := []struct {
		name string
		q    ledger.Query
		want []ledger.Lesson
	}{
		{"all", ledger.Query{}, []ledger.Lesson{
			{Rule: "grounding", Tag: "no-citation", Dimension: trace.Coherence, Count: 3, FirstSeen: tm(0), LastSeen: tm(6), Examples: []string{"t1", "t6"}},
			{Rule: "grounding", Tag: "stale", Dimension: trace.Accuracy, Count: 2, FirstSeen: tm(1), LastSeen: tm(4), Examples: []string{"t1", "t4"}},
			{Rule: "grounding", Tag: "hedge", Dimension: trace.Coherence, Count: 1, FirstSeen: tm(6), LastSeen: tm(6), Examples: []string{"t6"}},
			{Rule: "loop", Tag: "repeat-call", Dimension: trace.Efficiency, Count: 1, FirstSeen: tm(3), LastSeen: tm(3), Examples: []string{"t3"}},
			{Rule: "memory-card", Tag: "forgot-name", Dimension: trace.Memory, Count: 1, FirstSeen: tm(5), LastSeen: tm(5), Examples: []string{"t5"}},
			{Rule: "tool-allowlist", Tag: "", Dimension: trace.Stability, Count: 1, FirstSeen: tm(2), LastSeen: tm(2), Examples: []string{"t2"}},
		}},
		{"limit keeps the top lessons", ledger.Query{Limit: 2}, []ledger.Lesson{
			{Rule: "grounding", Tag: "no-citation", Dimension: trace.Coherence, Count: 3, FirstSeen: tm(0), LastSeen: tm(6), Examples: []string{"t1", "t6"}},
			{Rule: "grounding", Tag: "stale", Dimension: trace.Accuracy, Count: 2, FirstSeen: tm(1), LastSeen: tm(4), Examples: []string{"t1", "t4"}},
		}},
		{"tag filter aggregates that tag only", ledger.Query{Tag: "stale"}, []ledger.Lesson{
			{Rule: "grounding", Tag: "stale", Dimension: trace.Accuracy, Count: 2, FirstSeen: tm(1), LastSeen: tm(4), Examples: []string{"t1", "t4"}},
		}},
		{"session filter", ledger.Query{SessionID: "s2"}, []ledger.Lesson{
			{Rule: "grounding", Tag: "stale", Dimension: trace.Accuracy, Count: 1, FirstSeen: tm(4), LastSeen: tm(4), Examples: []string{"t4"}},
			{Rule: "loop", Tag: "repeat-call", Dimension: trace.Efficiency, Count: 1, FirstSeen: tm(3), LastSeen: tm(3), Examples: []string{"t3"}},
		}},
		{"nothing", ledger.Query{Rule: "nope"}, []ledger.Lesson{}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := l.Lessons(ctx, tt.q)
			if err != nil {
				t.Fatal(err)
			}
			if g, w := fmt.Sprintf("%+v", got), fmt.Sprintf("%+v", tt.want); g != w {
				t.Errorf("got\n%s\nwant\n%s", g, w)
			}
		})
	}
}

func TestLessonsExamples(t *testing.T) {
	l := openMem(t, Options{})
	for i := 0; i < 20; i++ {
		v := violation("r", fmt.Sprint("t", i%8), "tag", "tag") // a repeated tag counts once
		v.Time = t0.Add(-time.Duration(i) * time.Minute)        // times need not grow
		mustAppend(t, l, v)
	}
	mustAppend(t, l, violation("r", "", "tag")) // no trace id: counted, not an example
	got, err := l.Lessons(ctx, ledger.Query{})
	if err != nil {
		t.Fatal(err)
	}
	if len(got) != 1 {
		t.Fatalf("got %d lessons, want 1", len(got))
	}
	ls := got[0]
	if ls.Count != 21 {
		t.Errorf("Count = %d, want 21", ls.Count)
	}
	if want := []string{"t0", "t1", "t2", "t3", "t4"}; !slices.Equal(ls.Examples, want) {
		t.Errorf("Examples = %v, want %v", ls.Examples, want)
	}
	if !ls.FirstSeen.Equal(t0.Add(-19*time.Minute)) || ls.LastSeen.Before(t0) {
		t.Errorf("FirstSeen, LastSeen = %v, %v", ls.FirstSeen, ls.LastSeen)
	}
}

func TestExport(t *testing.T) {
	l := seed(t)
	var b strings.Builder
	n, err := l.Export(ctx, &b, ledger.Query{Rule: "grounding"})
	if err != nil {
		t.Fatal(err)
	}
	if n != 4 {
		t.Errorf("n = %d, want 4", n)
	}
	want, _ := l.Query(ctx, ledger.Query{Rule: "grounding"})
	sc := bufio.NewScanner(strings.NewReader(b.String()))
	var got []ledger.Entry
	for sc.Scan() {
		var e ledger.Entry
		if err := json.Unmarshal(sc.Bytes(), &e); err != nil {
			t.Fatalf("line %q: %v", sc.Text(), err)
		}
		got = append(got, e)
	}
	if fmt.Sprintf("%+v", got) != fmt.Sprintf("%+v", want) {
		t.Errorf("exported\n%+v\nwant\n%+v", got, want)
	}
	if first, _, _ := strings.Cut(b.String(), "\n"); !strings.HasPrefix(first, `{"seq":1,"time":"2025-03-01T12:00:00Z","trace_id":"t1"`) {
		t.Errorf("first line = %s", first)
	}

	n, err = l.Export(ctx, failWriter{}, ledger.Query{})
	var le *ledger.Error
	if n != 0 || !errors.As(err, &le) || le.Op != "export" || !errors.Is(err, errDiskFull) {
		t.Errorf("Export to a failing writer = %d, %v", n, err)
	}
}

var errDiskFull = errors.New("disk full")

type failWriter struct{}

func (failWriter) Write([]byte) (int, error) { return 0, errDiskFull }
