package guard_test

import (
	"context"
	"fmt"
	"runtime"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/agentguard/agentguard/guard"
	"github.com/agentguard/agentguard/guard/guardtest"
	"github.com/agentguard/agentguard/guard/rules"
	"github.com/agentguard/agentguard/trace"
)

// TestUntracedCallsAreIndependent is a service that wraps a tool but never
// calls StartTrace: sixty independent one-call requests must all run. When
// untraced calls shared one guard-lifetime trace, request 26 and every one
// after it were handed off by max-steps, and the service was dead until a
// restart.
func TestUntracedCallsAreIndependent(t *testing.T) {
	var ran atomic.Int32
	tool := guard.New(guard.Config{}).WrapTool(guardtest.NewTool("query_order", "Look up an order", func(context.Context, string) (string, error) {
		ran.Add(1)
		return `{"status":"shipped"}`, nil
	}))
	for i := range 60 {
		out, err := tool.Call(context.Background(), fmt.Sprintf(`{"order_id":"A%d"}`, 1000+i))
		if err != nil {
			t.Fatalf("request %d: %v", i+1, err)
		}
		if out != `{"status":"shipped"}` {
			t.Fatalf("request %d: got %q", i+1, out)
		}
	}
	// The same request sixty times is no loop either: each is its own trace.
	for i := range 60 {
		if _, err := tool.Call(context.Background(), `{"order_id":"A1000"}`); err != nil {
			t.Fatalf("repeated request %d: %v", i+1, err)
		}
	}
	if got := ran.Load(); got != 120 {
		t.Errorf("tool ran %d times, want 120", got)
	}
}

// TestConcurrentCallsInOneTraceHoldLimits proposes many calls at once in one
// trace: judging and recording are atomic per trace, so the step budget and
// the loop limit hold however the calls interleave.
func TestConcurrentCallsInOneTraceHoldLimits(t *testing.T) {
	for _, tt := range []struct {
		name    string
		cfg     guard.Config
		args    func(i int) string
		allowed int
		rule    string
	}{
		{"step budget", guard.Config{Gates: guard.Gates{MaxSteps: 5, LoopLimit: -1}}, func(i int) string { return fmt.Sprintf(`{"order_id":"A%d"}`, i) }, 5, rules.MaxSteps},
		{"loop limit", guard.Config{Gates: guard.Gates{MaxSteps: -1, LoopLimit: 3}}, func(int) string { return `{"order_id":"A1"}` }, 2, rules.Loop},
	} {
		t.Run(tt.name, func(t *testing.T) {
			g := guard.New(tt.cfg)
			release := make(chan struct{})
			var ran atomic.Int32
			tool := g.WrapTool(guardtest.NewTool("query_order", "Look up an order", func(context.Context, string) (string, error) {
				ran.Add(1)
				<-release // every allowed call is still running while the others are judged
				return `{"status":"shipped"}`, nil
			}))
			ctx, rec := g.StartTrace(context.Background(), "s", "")
			const calls = 20
			var wg sync.WaitGroup
			for i := range calls {
				wg.Go(func() { _, _ = tool.Call(ctx, tt.args(i)) })
			}
			// Wait until every call has been judged: the allowed ones are
			// pending, the others recorded as blocked.
			for {
				done := 0
				rec.View(func(tr *trace.Trace) {
					done = len(tr.Pending)
					for _, s := range tr.Steps {
						if s.Kind == trace.KindTool {
							done++
						}
					}
				})
				if done == calls {
					break
				}
				runtime.Gosched()
			}
			close(release)
			wg.Wait()
			if got := int(ran.Load()); got != tt.allowed {
				t.Errorf("%d calls ran, want %d", got, tt.allowed)
			}
			stopped := 0
			for _, s := range rec.Trace().Steps {
				if s.Kind == trace.KindGate && s.Name == tt.rule {
					stopped++
				}
			}
			if stopped != calls-tt.allowed {
				t.Errorf("%s stopped %d calls, want %d", tt.rule, stopped, calls-tt.allowed)
			}
			rec.View(func(tr *trace.Trace) {
				if len(tr.Pending) != 0 {
					t.Errorf("%d calls still pending after all returned", len(tr.Pending))
				}
			})
		})
	}
}
