package guard_test

import (
	"context"
	"errors"
	"sync/atomic"
	"testing"
	"time"

	"github.com/agentguard/agentguard/guard"
	"github.com/agentguard/agentguard/guard/guardtest"
	"github.com/agentguard/agentguard/guard/internal/testkit"
)

// stepClock is a clock that moves on by step at every reading.
func stepClock(base time.Time, step time.Duration) func() time.Time {
	var n atomic.Int64
	return func() time.Time { return base.Add(time.Duration(n.Add(1)) * step) }
}

// Every time a guard records comes from its clock: the trace's start, each
// step's start and duration, and the time of each finding in the ledger.
func TestGuardClockDatesEverything(t *testing.T) {
	base := time.Date(2001, 2, 3, 4, 5, 6, 0, time.UTC)
	sink := &violationSink{}
	g := guard.New(guard.Config{Gates: guard.Gates{LoopLimit: 2}, Observe: guard.Observation{Ledger: sink}})
	guard.SetClockForTest(g, stepClock(base, time.Millisecond))
	ctx, rec := g.StartTrace(context.Background(), "s", "r")
	tool := g.WrapTool(testkit.BenchTool{})
	for range 2 { // the second call is a loop
		if _, err := tool.Call(ctx, `{"order_id":"A1001"}`); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := g.Run(ctx, guardtest.Script(guardtest.Text("It has shipped.")), nil, human("Where is A1001?")); err != nil {
		t.Fatal(err)
	}
	if err := g.Close(context.Background()); err != nil {
		t.Fatal(err)
	}
	onClock := func(at time.Time) bool { return at.After(base) && at.Before(base.Add(time.Second)) }
	tr := rec.Trace()
	if !onClock(tr.Start) {
		t.Errorf("trace start %v is not on the guard's clock", tr.Start)
	}
	for _, s := range tr.Steps {
		if !onClock(s.Start) || s.Duration%time.Millisecond != 0 {
			t.Errorf("step %d (%s %s) start %v, duration %v: not on the guard's clock", s.Index, s.Kind, s.Name, s.Start, s.Duration)
		}
	}
	vs := sink.violations()
	if len(vs) == 0 {
		t.Fatal("no finding reached the ledger")
	}
	for _, v := range vs {
		if !onClock(v.Time) {
			t.Errorf("finding %s at %v: not on the guard's clock", v.Rule, v.Time)
		}
	}
}

// An inline call's deadline is on the guard's clock: a clock that jumps a
// minute while the tool runs times the call out, though it took no time.
func TestGuardClockTimesInlineCalls(t *testing.T) {
	g := guard.New(guard.Config{Resilience: guard.Resilience{ToolTimeout: 30 * time.Second}})
	guard.SetClockForTest(g, stepClock(time.Date(2001, 2, 3, 4, 5, 6, 0, time.UTC), time.Minute))
	_, err := g.WrapTool(testkit.BenchTool{}).Call(context.Background(), `{"order_id":"A1001"}`)
	if !errors.Is(err, guard.ErrTimeout) {
		t.Errorf("error = %v, want ErrTimeout", err)
	}
}
