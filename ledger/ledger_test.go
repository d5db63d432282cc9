package ledger_test

import (
	"context"
	"errors"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/agentguard/agentguard/ledger"
	"github.com/agentguard/agentguard/trace"
)

// entries yields es as a store's Entries does.
func entries(es ...ledger.Entry) func(func(ledger.Entry, error) bool) {
	return func(yield func(ledger.Entry, error) bool) {
		for _, e := range es {
			if !yield(e, nil) {
				return
			}
		}
	}
}

func entry(seq uint64, at time.Time, traceID, rule string, tags ...string) ledger.Entry {
	return ledger.Entry{Seq: seq, Violation: trace.Violation{Time: at, TraceID: traceID,
		Finding: trace.Finding{Rule: rule, Tags: tags, Dimension: trace.Accuracy, Verdict: trace.Block}}}
}

func TestLearn(t *testing.T) {
	t0 := time.Date(2026, 12, 1, 9, 0, 0, 0, time.UTC)
	es := []ledger.Entry{
		entry(1, t0, "t1", "injected-argument", "third-party-recipient"),
		entry(2, t0.Add(time.Hour), "t2", "injected-argument", "third-party-recipient", "third-party-recipient"), // a tag given twice counts once
		entry(3, t0.Add(2*time.Hour), "t1", "injected-argument", "third-party-recipient"),                        // an example trace given once
		entry(4, t0.Add(-time.Hour), "t3", "write-authorization"),                                                // no tag: the lesson ""
		entry(5, t0, "t4", "empty-result", "empty-then-fabricated", "no-records-claim"),                          // two tags: two lessons
	}
	tests := []struct {
		name string
		q    ledger.Query
		want []ledger.Lesson // Rule, Tag, Count, FirstSeen, LastSeen, Examples
	}{
		{"every entry", ledger.Query{}, []ledger.Lesson{
			{Rule: "injected-argument", Tag: "third-party-recipient", Count: 3, FirstSeen: t0, LastSeen: t0.Add(2 * time.Hour), Examples: []string{"t1", "t2"}},
			{Rule: "empty-result", Tag: "empty-then-fabricated", Count: 1, FirstSeen: t0, LastSeen: t0, Examples: []string{"t4"}},
			{Rule: "empty-result", Tag: "no-records-claim", Count: 1, FirstSeen: t0, LastSeen: t0, Examples: []string{"t4"}},
			{Rule: "write-authorization", Tag: "", Count: 1, FirstSeen: t0.Add(-time.Hour), LastSeen: t0.Add(-time.Hour), Examples: []string{"t3"}},
		}},
		{"one tag", ledger.Query{Tag: "no-records-claim"}, []ledger.Lesson{
			{Rule: "empty-result", Tag: "no-records-claim", Count: 1, FirstSeen: t0, LastSeen: t0, Examples: []string{"t4"}},
		}},
		{"a limit keeps lessons, not entries", ledger.Query{Limit: 1}, []ledger.Lesson{
			{Rule: "injected-argument", Tag: "third-party-recipient", Count: 3, FirstSeen: t0, LastSeen: t0.Add(2 * time.Hour), Examples: []string{"t1", "t2"}},
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var selected []ledger.Entry
			for _, e := range es {
				if tt.q.Tag == "" || slices.Contains(e.Tags, tt.q.Tag) {
					selected = append(selected, e)
				}
			}
			got, err := ledger.Learn(entries(selected...), tt.q)
			if err != nil {
				t.Fatal(err)
			}
			for i := range got {
				got[i].Dimension = "" // the latest entry's; not what this test is about
			}
			if len(got) != len(tt.want) {
				t.Fatalf("got %d lessons %+v, want %d", len(got), got, len(tt.want))
			}
			for i := range got {
				g, w := got[i], tt.want[i]
				if g.Rule != w.Rule || g.Tag != w.Tag || g.Count != w.Count || !g.FirstSeen.Equal(w.FirstSeen) || !g.LastSeen.Equal(w.LastSeen) || !slices.Equal(g.Examples, w.Examples) {
					t.Errorf("lesson %d = %+v\nwant %+v", i, g, w)
				}
			}
		})
	}
}

func TestLearnStopsAtAnError(t *testing.T) {
	broken := errors.New("read failed")
	_, err := ledger.Learn(func(yield func(ledger.Entry, error) bool) {
		if yield(entry(1, time.Now(), "t1", "loop"), nil) {
			yield(ledger.Entry{}, broken)
		}
	}, ledger.Query{})
	if !errors.Is(err, broken) {
		t.Fatalf("Learn over a failing read: %v, want %v", err, broken)
	}
}

// TestTraceFile: each save is one redacted line that trace.Reader reads
// back, the file is the owner's alone, and the trace given is not changed.
func TestTraceFile(t *testing.T) {
	path := filepath.Join(t.TempDir(), "traces.jsonl")
	tf, err := ledger.OpenTraceFile(path, nil)
	if err != nil {
		t.Fatal(err)
	}
	tr := &trace.Trace{ID: "t1", UserTurns: []string{"My e-mail is li.na@example.com, 请把发票发给我。"}}
	for range 2 {
		if err := tf.PutTrace(context.Background(), tr); err != nil {
			t.Fatal(err)
		}
	}
	if err := tf.Close(); err != nil {
		t.Fatal(err)
	}
	if strings.Contains(tr.UserTurns[0], "***") || !strings.Contains(tr.UserTurns[0], "li.na@example.com") {
		t.Errorf("PutTrace changed the caller's trace: %q", tr.UserTurns[0])
	}
	if fi, err := os.Stat(path); err != nil {
		t.Fatal(err)
	} else if fi.Mode().Perm() != 0o600 {
		t.Errorf("trace file mode %v, want 0600", fi.Mode().Perm())
	}
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	r := trace.NewReader(f)
	var lines int
	for {
		got, err := r.Read()
		if err == io.EOF {
			break
		} else if err != nil {
			t.Fatal(err)
		}
		lines++
		if got.ID != "t1" || strings.Contains(got.UserTurns[0], "li.na@example.com") || !strings.Contains(got.UserTurns[0], "请把发票发给我") {
			t.Errorf("line %d: %q, want t1 with the e-mail masked and the rest kept", lines, got.UserTurns)
		}
	}
	if lines != 2 {
		t.Errorf("%d lines, want one per save (2)", lines)
	}
}

// TestTraceFileAfterClose: a save after Close is an error naming the
// file, not a crash of the delivering goroutine.
func TestTraceFileAfterClose(t *testing.T) {
	path := filepath.Join(t.TempDir(), "traces.jsonl")
	tf, err := ledger.OpenTraceFile(path, nil)
	if err != nil {
		t.Fatal(err)
	}
	if err := tf.Close(); err != nil {
		t.Fatal(err)
	}
	err = tf.PutTrace(context.Background(), &trace.Trace{ID: "t1"})
	if err == nil || !strings.Contains(err.Error(), path) || !errors.Is(err, ledger.ErrClosed) {
		t.Fatalf("PutTrace after Close: %v, want ErrClosed naming %s", err, path)
	}
	if err := tf.Close(); err != nil {
		t.Fatalf("a second Close: %v", err)
	}
}

// TestOpenTraceFileErrors: a path that cannot be opened is an *Error
// naming it.
func TestOpenTraceFileErrors(t *testing.T) {
	path := filepath.Join(t.TempDir(), "missing", "traces.jsonl")
	_, err := ledger.OpenTraceFile(path, nil)
	var le *ledger.Error
	if !errors.As(err, &le) || !strings.Contains(err.Error(), path) {
		t.Fatalf("OpenTraceFile(%s): %v, want a *ledger.Error naming the path", path, err)
	}
}
