package guard_test

import (
	"context"
	"fmt"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	"github.com/agentguard/agentguard/guard"
	"github.com/agentguard/agentguard/ledger"
	"github.com/agentguard/agentguard/ledger/badgerstore"
	"github.com/agentguard/agentguard/trace"
)

// gateSink blocks every append until open is closed, counting batches.
type gateSink struct {
	violationSink
	open    chan struct{}
	mu      sync.Mutex
	batches []int
}

func (s *gateSink) Append(ctx context.Context, v trace.Violation) (uint64, error) {
	<-s.open
	s.record(1)
	return s.violationSink.Append(ctx, v)
}

func (s *gateSink) AppendBatch(ctx context.Context, vs []trace.Violation) ([]uint64, error) {
	<-s.open
	s.record(len(vs))
	seqs := make([]uint64, len(vs))
	for i, v := range vs {
		seqs[i], _ = s.violationSink.Append(ctx, v)
	}
	return seqs, nil
}

func (s *gateSink) record(n int) {
	s.mu.Lock()
	s.batches = append(s.batches, n)
	s.mu.Unlock()
}

// loopCalls makes n calls through a tool wrapped by g that loop from the
// second call on (LoopLimit 2), so each but the first is a violation.
func loopCalls(t *testing.T, g *guard.Guard, n int) *trace.Recorder {
	t.Helper()
	ctx, rec := g.StartTrace(context.Background(), "s", "")
	tool := g.WrapTool(benchTool{})
	for range n {
		if _, err := tool.Call(ctx, `{"order_id":"A1001"}`); err != nil {
			t.Fatal(err)
		}
	}
	return rec
}

// A ledger that is slow to append (a durable one waiting for its sync)
// does not hold up the agent's steps; Flush waits for it, and the
// findings queued meanwhile go out in batches, in order.
//
// The report tests run in a synctest bubble: a step blocked on the shut
// sink is seen as blocked (synctest.Wait), not guessed at with a sleep.
// The guard is closed in the bubble, so that its reporter goroutine ends
// with it.
func TestReportsLeaveTheStep(t *testing.T) {
	synctest.Test(t, testReportsLeaveTheStep)
}

func testReportsLeaveTheStep(t *testing.T) {
	sink := &gateSink{open: make(chan struct{})}
	g := guard.New(guard.Config{Gates: guard.Gates{LoopLimit: 2, MaxSteps: -1}, Observe: guard.Observation{Ledger: sink}})
	defer g.Close(context.Background())
	var rec *trace.Recorder
	within(t, 10*time.Second, func() { rec = loopCalls(t, g, 51) }) // the sink is shut: only a queue lets these return
	close(sink.open)
	if err := g.Flush(context.Background()); err != nil {
		t.Fatal(err)
	}
	got, want := sink.violations(), findingsOf(rec.Trace())
	if len(got) != 50 || len(want) != 50 {
		t.Fatalf("ledger got %d violations, trace has %d; want 50", len(got), len(want))
	}
	for i := range got {
		if got[i].Step != want[i].Step {
			t.Fatalf("violation %d is for step %d, want %d: out of order", i, got[i].Step, want[i].Step)
		}
	}
	if len(sink.batches) >= 50 {
		t.Errorf("%d appends for 50 queued findings, want batches", len(sink.batches))
	}
}

// When the queue is full the step delivers its finding itself: slower,
// but nothing is lost.
func TestFullReportQueueLosesNothing(t *testing.T) {
	synctest.Test(t, testFullReportQueueLosesNothing)
}

func testFullReportQueueLosesNothing(t *testing.T) {
	sink := &gateSink{open: make(chan struct{})}
	g := guard.New(guard.Config{Gates: guard.Gates{LoopLimit: 2, MaxSteps: -1}, Observe: guard.Observation{Ledger: sink}})
	done := make(chan struct{})
	go func() {
		defer close(done)
		loopCalls(t, g, 1001)
	}()
	synctest.Wait() // the queue is full and a step blocks on the shut sink
	close(sink.open)
	within(t, 30*time.Second, func() { <-done })
	if err := g.Close(context.Background()); err != nil {
		t.Fatal(err)
	}
	if got := len(sink.violations()); got != 1000 {
		t.Errorf("ledger got %d violations, want 1000", got)
	}
}

// After Close, findings are delivered on the step; Flush and Close may be
// called again.
func TestReportAfterClose(t *testing.T) {
	sink := &violationSink{}
	g := guard.New(guard.Config{Gates: guard.Gates{LoopLimit: 2}, Observe: guard.Observation{Ledger: sink}})
	loopCalls(t, g, 2)
	if err := g.Close(context.Background()); err != nil {
		t.Fatal(err)
	}
	if got := len(sink.violations()); got != 1 {
		t.Fatalf("after Close the ledger holds %d violations, want 1", got)
	}
	loopCalls(t, g, 3)
	if got := len(sink.violations()); got != 3 {
		t.Errorf("ledger holds %d violations, want 3: a finding after Close must be delivered on the step", got)
	}
	for _, f := range []func(context.Context) error{g.Flush, g.Close} {
		if err := f(context.Background()); err != nil {
			t.Error(err)
		}
	}
}

// The real ledger in durable mode receives the guard's findings in
// batches, each acknowledged after its sync, none on the step.
func TestDurableLedgerThroughTheGuard(t *testing.T) {
	led, err := badgerstore.Open(t.TempDir(), badgerstore.Options{Durable: true})
	if err != nil {
		t.Fatal(err)
	}
	defer led.Close()
	g := guard.New(guard.Config{Gates: guard.Gates{LoopLimit: 2, MaxSteps: -1}, Observe: guard.Observation{Ledger: led}})
	rec := loopCalls(t, g, 41)
	if err := g.Close(context.Background()); err != nil {
		t.Fatal(err)
	}
	n := 0
	for e, err := range led.Entries(context.Background(), ledger.Query{TraceID: rec.ID()}) {
		if err != nil {
			t.Fatal(err)
		}
		if e.Rule != guard.RuleLoop {
			t.Errorf("entry %d: rule %s, want %s", e.Seq, e.Rule, guard.RuleLoop)
		}
		n++
	}
	if n != 40 {
		t.Errorf("ledger holds %d entries for the trace, want 40", n)
	}
}

func ExampleGuard_Close() {
	led, err := badgerstore.Open("", badgerstore.Options{InMemory: true})
	if err != nil {
		panic(err)
	}
	defer led.Close()
	g := guard.New(guard.Config{Gates: guard.Gates{LoopLimit: 2}, Observe: guard.Observation{Ledger: led}})
	// ... the agent runs; findings reach the ledger off its steps ...
	ctx, _ := g.StartTrace(context.Background(), "s1", "")
	tool := g.WrapTool(benchTool{})
	tool.Call(ctx, `{"order_id":"A1001"}`)
	tool.Call(ctx, `{"order_id":"A1001"}`) // a loop

	// Before exit (or before reading the ledger), deliver what is queued.
	if err := g.Close(context.Background()); err != nil {
		panic(err)
	}
	for e := range led.Entries(context.Background(), ledger.Query{}) {
		fmt.Println(e.Rule, e.Verdict)
	}
	// Output: loop block
}
