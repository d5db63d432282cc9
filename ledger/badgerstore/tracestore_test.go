package badgerstore

import (
	"errors"
	"strings"
	"testing"

	"github.com/agentguard/agentguard/ledger"
	"github.com/agentguard/agentguard/trace"
)

var _ ledger.TraceStore = (*Store)(nil)

func sampleTrace(id string, steps int) *trace.Trace {
	t := &trace.Trace{ID: id, SessionID: "s1", Route: "refund",
		UserTurns: []string{"Refund order 1234, call me on 13812345678", "退款到 alice@example.com"}}
	for i := range steps {
		t.Steps = append(t.Steps, &trace.Step{Index: i, Kind: trace.KindTool, Name: "lookup",
			Args: `{"order":"1234","email":"bob@example.com"}`, Result: "ok " + strings.Repeat("x", i)})
	}
	return t
}

func TestTraceStoreRoundTrip(t *testing.T) {
	l := openMem(t, Options{})
	in := sampleTrace("tr-1", 3)
	if err := l.PutTrace(ctx, in); err != nil {
		t.Fatal(err)
	}
	got, err := l.Trace(ctx, "tr-1")
	if err != nil {
		t.Fatal(err)
	}
	if got.ID != "tr-1" || got.SessionID != "s1" || got.Route != "refund" || len(got.Steps) != 3 {
		t.Fatalf("got %+v", got)
	}
	for i, s := range got.Steps {
		if s.Index != i || s.Result != in.Steps[i].Result {
			t.Errorf("step %d = %+v", i, s)
		}
	}
	// Redacted like ledger entries; the caller's trace is left alone.
	for _, s := range append(got.UserTurns, got.Steps[0].Args) {
		if strings.Contains(s, "13812345678") || strings.Contains(s, "@example.com") {
			t.Errorf("personal data stored: %q", s)
		}
	}
	if !strings.Contains(in.UserTurns[0], "13812345678") {
		t.Error("PutTrace changed its argument")
	}
}

func TestTraceNotFound(t *testing.T) {
	l := openMem(t, Options{})
	for _, id := range []string{"missing", "", strings.Repeat("x", 2000)} {
		_, err := l.Trace(ctx, id)
		var le *ledger.Error
		if !errors.Is(err, ledger.ErrNotFound) || !errors.As(err, &le) || le.Op != "trace" {
			t.Errorf("Trace(%.10q) = %v, want ErrNotFound in a *ledger.Error", id, err)
		}
	}
	if err := l.PutTrace(ctx, &trace.Trace{}); err == nil {
		t.Error("PutTrace of a trace without id succeeded")
	}
}

// A growing trace stored again adds its new steps; steps the caller
// dropped after storing them stay stored.
func TestTraceStoreIncremental(t *testing.T) {
	l := openMem(t, Options{})
	full := sampleTrace("tr-2", 10)
	part := *full
	part.Steps = full.Steps[:4]
	part.UserTurns = full.UserTurns[:1]
	if err := l.PutTrace(ctx, &part); err != nil {
		t.Fatal(err)
	}
	rest := *full
	rest.Steps = full.Steps[6:] // 4 and 5 were never given: a gap, not an error
	if err := l.PutTrace(ctx, &rest); err != nil {
		t.Fatal(err)
	}
	if err := l.PutTrace(ctx, full); err != nil { // 4 and 5 are older than the last stored: skipped
		t.Fatal(err)
	}
	got, err := l.Trace(ctx, "tr-2")
	if err != nil {
		t.Fatal(err)
	}
	var idx []int
	for _, s := range got.Steps {
		idx = append(idx, s.Index)
	}
	if want := []int{0, 1, 2, 3, 6, 7, 8, 9}; !equalInts(idx, want) {
		t.Errorf("stored steps %v, want %v", idx, want)
	}
	if len(got.UserTurns) != 2 {
		t.Errorf("user turns %d, want 2 (the latest header wins)", len(got.UserTurns))
	}
}

func equalInts(a, b []int) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}

func TestTraceStoreBounded(t *testing.T) {
	l := openMem(t, Options{MaxTraceBytes: 80_000})
	tr := sampleTrace("tr-3", 50)
	for _, s := range tr.Steps {
		s.Result = strings.Repeat("x", 1000)
	}
	tr.Steps[0].Result = strings.Repeat("长", 200_000) // 600 KB, model-controlled
	tr.Steps[1].Calls = make([]trace.Call, 3000)
	for i := range tr.Steps[1].Calls {
		tr.Steps[1].Calls[i] = trace.Call{Name: "f", Args: strings.Repeat("a", 1000)}
	}
	if err := l.PutTrace(ctx, tr); err != nil {
		t.Fatal(err)
	}
	got, err := l.Trace(ctx, "tr-3")
	if err != nil {
		t.Fatal(err)
	}
	if !got.Steps[0].Truncated || !strings.HasSuffix(got.Steps[0].Result, trace.TruncationMarker) {
		t.Errorf("oversized result not cut: %d bytes", len(got.Steps[0].Result))
	}
	if s := got.Steps[1]; !s.Truncated || len(s.Calls) != 0 || s.Name != "lookup" {
		t.Errorf("step with 3,000 calls not reduced: %d calls", len(s.Calls))
	}
	if got.Meta[droppedMeta] == "" || len(got.Steps) >= 50 {
		t.Errorf("no steps dropped at the cap: %d stored, meta %v", len(got.Steps), got.Meta)
	}
}

func TestTraceStorePersists(t *testing.T) {
	dir := t.TempDir()
	l, err := Open(dir, Options{Durable: true})
	if err != nil {
		t.Fatal(err)
	}
	if err := l.PutTrace(ctx, sampleTrace("tr-4", 5)); err != nil {
		t.Fatal(err)
	}
	mustAppend(t, l, violation("r", "tr-4"))
	if err := l.Close(); err != nil {
		t.Fatal(err)
	}
	l, err = Open(dir, Options{ReadOnly: true})
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	got, err := l.Trace(ctx, "tr-4")
	if err != nil || len(got.Steps) != 5 {
		t.Fatalf("after reopen: %v, %v", got, err)
	}
	if err := l.PutTrace(ctx, sampleTrace("x", 1)); !errors.Is(err, ledger.ErrReadOnly) {
		t.Errorf("PutTrace read-only = %v", err)
	}
}
