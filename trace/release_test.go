package trace

import (
	"bytes"
	"errors"
	"strings"
	"testing"
)

// countingIndex is a memo value that counts the tool steps it has read,
// as a rule's index does, and hears of releases.
type countingIndex struct{ n, tools, released int }

func (x *countingIndex) update(t *Trace) {
	for ; x.n < t.Len(); x.n++ {
		if t.Step(x.n).Kind == KindTool {
			x.tools++
		}
	}
}

func (x *countingIndex) Release(t *Trace, n int) { x.update(t); x.released = n }

type countKey struct{}
type decodedKey struct{}

func TestRecorderRelease(t *testing.T) {
	rec := NewRecorder("r", "s", "", RecorderOptions{})
	for i := range 10 {
		rec.Add(&Step{Kind: KindTool, Name: "read", Args: strings.Repeat("x", i)})
	}
	var idx *countingIndex
	rec.View(func(tr *Trace) {
		idx = tr.Memo(countKey{}, func() any { return &countingIndex{} }).(*countingIndex)
		idx.update(tr) // reads 10 steps
		for _, s := range tr.Steps {
			tr.StepMemo(s, decodedKey{}, func() any { return len(s.Args) })
		}
	})
	for range 5 { // steps the index has not read yet
		rec.Add(&Step{Kind: KindTool, Name: "write"})
	}
	prepared := false
	if got, want := rec.Release(12, func(tr *Trace) { prepared = tr.Len() == 15 }), 12; got != want {
		t.Fatalf("Release(12) released %d, want %d", got, want)
	}
	if !prepared {
		t.Error("prepare did not see the whole trace before the release")
	}
	if idx.released != 12 || idx.tools != 15 {
		t.Errorf("index heard release %d, counted %d tools; want 12, 15", idx.released, idx.tools)
	}
	if got := rec.Release(12, nil); got != 0 {
		t.Errorf("releasing again released %d", got)
	}

	i := rec.Add(&Step{Kind: KindTool, Name: "read"})
	if i != 15 {
		t.Errorf("next step got index %d, want 15", i)
	}
	tr := rec.Trace()
	if tr.Released != 12 || len(tr.Steps) != 4 || tr.Len() != 16 {
		t.Fatalf("after release: Released %d, %d steps, Len %d; want 12, 4, 16", tr.Released, len(tr.Steps), tr.Len())
	}
	for j, s := range tr.Steps {
		if s.Index != 12+j || tr.Step(s.Index) != s {
			t.Errorf("step %d has index %d", j, s.Index)
		}
	}
	if tr.Step(11) != nil || tr.Step(16) != nil {
		t.Error("Step returns a released or unrecorded step")
	}
	if p := tr.Prefix(14); p.Len() != 14 || len(p.Steps) != 2 {
		t.Errorf("Prefix(14): Len %d, %d steps; want 14, 2", p.Len(), len(p.Steps))
	}
	rec.View(func(tr *Trace) {
		kept := 0
		for _, m := range tr.stepMemo {
			kept += len(m)
		}
		if kept != 0 { // the 10 memoised steps were all released
			t.Errorf("%d step memos outlived their steps", kept)
		}
	})

	// A segment round-trips through JSONL, and says where it starts.
	var buf bytes.Buffer
	if err := NewWriter(&buf).Write(tr); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(buf.String(), `"released":12`) {
		t.Errorf("segment line lacks its start: %.120s", buf.String())
	}
	back, err := NewReader(&buf).Read()
	if err != nil {
		t.Fatal(err)
	}
	if back.Released != 12 || back.Steps[0].Index != 12 {
		t.Errorf("read back Released %d, first index %d", back.Released, back.Steps[0].Index)
	}
}

func TestSegmentIndexMustFollowReleased(t *testing.T) {
	for _, tc := range []struct{ name, line string }{
		{"index before released", `{"v":1,"trace_id":"a","released":3,"steps":[{"i":0,"kind":"tool","turn":-1}]}`},
		{"negative released", `{"v":1,"trace_id":"a","released":-1,"steps":[]}`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := NewReader(strings.NewReader(tc.line + "\n")).Read()
			if !errors.Is(err, ErrInvalid) {
				t.Errorf("got %v, want ErrInvalid", err)
			}
		})
	}
}
