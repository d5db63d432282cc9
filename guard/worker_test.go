package guard

import (
	"context"
	"errors"
	"sync"
	"testing"
	"testing/synctest"
	"time"
)

// cpuTime is the process's CPU time, user and system, where it can be read
// (worker_cpu_unix_test.go); zero elsewhere.
var cpuTime = func() time.Duration { return 0 }

type nopTool struct{}

func (nopTool) Name() string                                 { return "nop" }
func (nopTool) Description() string                          { return "" }
func (nopTool) Call(context.Context, string) (string, error) { return "ok", nil }

// BenchmarkHandOff is one attempt at a tool call that returns at once, on
// a worker (pooled) and on the caller's goroutine (inline): the difference
// is what the hand-off costs, without the rules around it.
func BenchmarkHandOff(b *testing.B) {
	for _, bc := range []struct {
		name     string
		deadline bool // the caller's context has a deadline, as a server's request has
		call     func(g *Guard, ctx context.Context, start time.Time) (toolRun, error)
	}{
		{"pooled", false, func(g *Guard, ctx context.Context, start time.Time) (toolRun, error) {
			return g.callPooled(ctx, nopTool{}, "", start, time.Minute)
		}},
		{"pooled, caller deadline", true, func(g *Guard, ctx context.Context, start time.Time) (toolRun, error) {
			return g.callPooled(ctx, nopTool{}, "", start, time.Minute)
		}},
		{"inline", false, func(g *Guard, ctx context.Context, start time.Time) (toolRun, error) {
			return g.callInline(ctx, &toolState{}, nopTool{}, "", start, time.Minute)
		}},
	} {
		b.Run(bc.name, func(b *testing.B) {
			g := New(Config{})
			defer g.Close(context.Background())
			ctx := context.Background()
			if bc.deadline {
				var cancel context.CancelFunc
				ctx, cancel = context.WithTimeout(ctx, time.Hour)
				defer cancel()
			}
			b.ReportAllocs()
			cpu := cpuTime()
			for b.Loop() {
				if _, err := bc.call(g, ctx, g.now()); err != nil {
					b.Fatal(err)
				}
			}
			if cpu > 0 {
				b.ReportMetric(float64(cpuTime()-cpu)/float64(b.N), "cpu-ns/op")
			}
		})
	}
}

// funcTool is a tool that runs fn.
type funcTool func(ctx context.Context, input string) (string, error)

func (funcTool) Name() string                                          { return "t" }
func (funcTool) Description() string                                   { return "" }
func (f funcTool) Call(ctx context.Context, in string) (string, error) { return f(ctx, in) }

// idleWorkers is how many workers wait on g's idle stack.
func idleWorkers(g *Guard) int {
	p := g.breakers.pool
	p.mu.Lock()
	defer p.mu.Unlock()
	return len(p.idle)
}

// Calls running at once, with deadlines in any order, each return at their
// own deadline: the pool's one watchdog is re-armed for an earlier deadline
// when a call brings one, and for the next deadline when it fires.
func TestWatchdogMeetsEveryDeadline(t *testing.T) {
	tests := []struct {
		name string
		// each call starts after its delay, with its timeout; all hang
		delays, timeouts []time.Duration
	}{
		{name: "later deadline second", delays: []time.Duration{0, time.Second}, timeouts: []time.Duration{3 * time.Second, 3 * time.Second}},
		{name: "earlier deadline second", delays: []time.Duration{0, time.Second}, timeouts: []time.Duration{10 * time.Second, time.Second}},
		{name: "same deadline", delays: []time.Duration{0, time.Second}, timeouts: []time.Duration{2 * time.Second, time.Second}},
		{name: "many, shuffled", delays: []time.Duration{0, 0, time.Second, 2 * time.Second, 2 * time.Second},
			timeouts: []time.Duration{5 * time.Second, time.Second, 7 * time.Second, time.Second, 30 * time.Second}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				release := make(chan struct{})
				hung := funcTool(func(context.Context, string) (string, error) { <-release; return "late", nil })
				g := New(Config{})
				defer g.Close(context.Background())
				var wg sync.WaitGroup
				for i := range tt.delays {
					wg.Go(func() {
						time.Sleep(tt.delays[i])
						start := time.Now()
						_, err := g.callPooled(context.Background(), hung, "", start, tt.timeouts[i])
						if got := time.Since(start); got != tt.timeouts[i] {
							t.Errorf("call %d returned after %v, want its timeout %v", i, got, tt.timeouts[i])
						}
						if !errors.Is(err, ErrTimeout) {
							t.Errorf("call %d: err = %v, want ErrTimeout", i, err)
						}
					})
				}
				wg.Wait()
				if running, total := g.Abandoned(); running != len(tt.delays) || total != uint64(len(tt.delays)) {
					t.Errorf("Abandoned() = %d, %d; want %d, %d", running, total, len(tt.delays), len(tt.delays))
				}
				close(release)
				synctest.Wait()
				if running, _ := g.Abandoned(); running != 0 {
					t.Errorf("after release %d abandoned calls still run, want 0", running)
				}
			})
		})
	}
}

// A call whose caller gives up (its context is canceled) returns at once,
// abandoned to its worker; it is counted back when the tool returns.
func TestCallerCancelAbandonsCall(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		release := make(chan struct{})
		hung := funcTool(func(context.Context, string) (string, error) { <-release; return "late", nil })
		g := New(Config{})
		defer g.Close(context.Background())
		ctx, cancel := context.WithCancel(context.Background())
		time.AfterFunc(time.Second, cancel)
		start := time.Now()
		_, err := g.callPooled(ctx, hung, "", start, time.Minute)
		if got := time.Since(start); got != time.Second {
			t.Errorf("returned after %v, want 1s, when the caller canceled", got)
		}
		if !errors.Is(err, context.Canceled) {
			t.Errorf("err = %v, want context.Canceled", err)
		}
		if running, total := g.Abandoned(); running != 1 || total != 1 {
			t.Errorf("Abandoned() = %d, %d; want 1, 1", running, total)
		}
		close(release)
		synctest.Wait()
		if running, _ := g.Abandoned(); running != 0 {
			t.Errorf("after release %d abandoned calls still run, want 0", running)
		}
		if n := idleWorkers(g); n != 1 {
			t.Errorf("%d idle workers after the hung call returned, want its worker back", n)
		}
	})
}

// A call that returns exactly at its deadline races the watchdog: whoever
// wins, the caller gets ErrTimeout at the deadline, and nothing is left
// counted as running.
func TestCallReturningAtItsDeadline(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		const timeout = time.Second
		g := New(Config{})
		defer g.Close(context.Background())
		tool := funcTool(func(context.Context, string) (string, error) { time.Sleep(timeout); return "just late", nil })
		for i := range 20 {
			start := time.Now()
			_, err := g.callPooled(context.Background(), tool, "", start, timeout)
			if got := time.Since(start); got != timeout || !errors.Is(err, ErrTimeout) {
				t.Errorf("call %d: returned after %v with %v, want ErrTimeout after %v", i, got, err, timeout)
			}
		}
		synctest.Wait()
		if running, _ := g.Abandoned(); running != 0 {
			t.Errorf("%d abandoned calls still run, want 0", running)
		}
	})
}

// A panic that escapes a call on a worker becomes the call's error; the
// worker survives it and runs the next call.
func TestWorkerSurvivesPanics(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		g := New(Config{})
		defer g.Close(context.Background())
		panics := funcTool(func(context.Context, string) (string, error) { panic("boom") })
		for range 3 {
			if _, err := g.callPooled(context.Background(), panics, "", time.Now(), time.Second); !errors.Is(err, ErrToolPanic) {
				t.Errorf("err = %v, want ErrToolPanic", err)
			}
		}
		_, err := callWorker(g, context.Background(), "model", "primary", time.Second, func(context.Context) (int, error) { panic("boom") })
		if !errors.Is(err, ErrToolPanic) {
			t.Errorf("callWorker err = %v, want the panic as ErrToolPanic", err)
		}
		run, err := g.callPooled(context.Background(), nopTool{}, "", time.Now(), time.Second)
		if err != nil || run.out != "ok" {
			t.Errorf("after the panics: %q, %v; want ok", run.out, err)
		}
		if n := idleWorkers(g); n != 1 {
			t.Errorf("%d idle workers, want the one that ran every call", n)
		}
	})
}

// Workers idle for a whole workerIdle exit without Close: this bubble ends
// without closing its guard, which synctest allows only once every worker
// has exited. A worker kept busy is not reaped.
func TestIdleWorkersExit(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		g := New(Config{})
		release := make(chan struct{})
		slow := funcTool(func(context.Context, string) (string, error) { <-release; return "ok", nil })
		var wg sync.WaitGroup
		for range 3 {
			wg.Go(func() { g.callPooled(context.Background(), slow, "", time.Now(), time.Minute) })
		}
		synctest.Wait()
		close(release)
		wg.Wait()
		synctest.Wait()
		if n := idleWorkers(g); n != 3 {
			t.Fatalf("%d idle workers after 3 concurrent calls, want 3", n)
		}
		// One call a second for three periods keeps one worker busy.
		for range 3 * workerIdle / time.Second {
			time.Sleep(time.Second)
			if _, err := g.callPooled(context.Background(), nopTool{}, "", time.Now(), time.Minute); err != nil {
				t.Fatal(err)
			}
		}
		synctest.Wait()
		if n := idleWorkers(g); n != 1 {
			t.Errorf("%d idle workers after %v of sequential calls, want the one in use", n, 3*workerIdle)
		}
		time.Sleep(2 * workerIdle)
		synctest.Wait()
		if n := idleWorkers(g); n != 0 {
			t.Errorf("%d idle workers after %v without a call, want 0", n, 2*workerIdle)
		}
	})
}

// Close lets idle workers exit at once; a call running at Close still
// returns its result, and a call made after Close still runs.
func TestCloseWithCallRunning(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		g := New(Config{})
		release := make(chan struct{})
		slow := funcTool(func(context.Context, string) (string, error) { <-release; return "done", nil })
		got := make(chan string)
		go func() {
			run, _ := g.callPooled(context.Background(), slow, "", time.Now(), time.Minute)
			got <- run.out
		}()
		synctest.Wait()
		g.Close(context.Background())
		close(release)
		if out := <-got; out != "done" {
			t.Errorf("call running at Close returned %q, want done", out)
		}
		if run, err := g.callPooled(context.Background(), nopTool{}, "", time.Now(), time.Minute); err != nil || run.out != "ok" {
			t.Errorf("call after Close: %q, %v; want ok", run.out, err)
		}
		synctest.Wait()
		if n := idleWorkers(g); n != 0 {
			t.Errorf("%d idle workers after Close, want 0", n)
		}
	})
}
