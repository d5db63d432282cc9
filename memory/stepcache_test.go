package memory

import (
	"testing"

	"github.com/agentguard/agentguard/trace"
)

// TestDecodeCached decodes each card step once per trace: the memo answers
// the second time, and a broken step keeps its error.
func TestDecodeCached(t *testing.T) {
	step := func(value string) *trace.Step {
		return CardStep(0, []Constraint{{Kind: KindPreference, Key: "language", Value: value, Status: Active}})
	}
	a, b := step("en"), step("zh")
	bad := &trace.Step{Kind: trace.KindMemory, Name: StepCard, Result: "{"}
	tr := &trace.Trace{Steps: []*trace.Step{a, b, bad}}
	for _, tt := range []struct {
		name string
		s    *trace.Step
		want string
	}{
		{"first decode", a, "en"},
		{"memoised", a, "en"},
		{"second step", b, "zh"},
	} {
		cs, err := decodeCached(tr, tt.s)
		if err != nil || len(cs) != 1 || cs[0].Value != tt.want {
			t.Errorf("%s: decode = %v, %v; want %s", tt.name, cs, err, tt.want)
		}
	}
	// The memo, not the step, answers once a step was decoded: recorded
	// steps never change.
	a.Result = "{"
	if cs, err := decodeCached(tr, a); err != nil || len(cs) != 1 {
		t.Errorf("memoised step decoded again: %v, %v", cs, err)
	}
	for range 2 {
		if _, err := decodeCached(tr, bad); err == nil {
			t.Error("a broken card step decoded without error")
		}
	}
	// Another trace holding the same step has a memo of its own.
	if _, err := decodeCached(&trace.Trace{}, a); err == nil {
		t.Error("a fresh trace answered from another trace's memo")
	}
}

// TestCardOfKeptWithoutUserTurns: a trace with no user turn yet (a
// long-running agent's) keeps its card in the memo like any other, instead
// of building one from the whole trace on every call.
func TestCardOfKeptWithoutUserTurns(t *testing.T) {
	tr := &trace.Trace{}
	for i := range 100 {
		tr.Steps = append(tr.Steps, &trace.Step{Index: i, Kind: trace.KindTool, Name: "read"})
	}
	first := CardOf(tr)
	if got := CardOf(tr); got != first {
		t.Fatal("the card was rebuilt on the second call")
	}
	if n := testing.AllocsPerRun(100, func() { CardOf(tr) }); n != 0 {
		t.Errorf("CardOf allocates %v times a call on a kept card, want 0", n)
	}
}
