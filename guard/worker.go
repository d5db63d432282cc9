package guard

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"sync/atomic"
	"time"

	"github.com/tmc/langchaingo/tools"
)

// ErrHungLimit is returned (wrapped in *Error) when a call was not made
// because too many calls abandoned at their timeout are still running (see
// Resilience.MaxAbandoned).
var ErrHungLimit = errors.New("too many abandoned calls still running")

// workerIdle is how long an idle worker waits for work before it exits.
const workerIdle = 10 * time.Second

// workers runs the calls that may ignore their context — every model call,
// and every tool call not declared context-honouring — off the caller's
// goroutine, so that the caller can walk away at the deadline. Workers are
// long-lived: a call is handed to an idle one over a channel, and a new one
// is started only when none is idle, so a sequential agent reuses one or
// two goroutines for all its calls. An idle worker exits after workerIdle,
// or at once when the guard is closed (which a test under testing/synctest
// must do before its bubble ends).
//
// A call that does not return by its deadline is abandoned: its worker is
// lost to it until it returns. Abandoned calls still running are counted
// and bounded by max: past it, calls fail at once with ErrHungLimit, so a
// tool that never returns costs at most max goroutines.
type workers struct {
	jobs      chan *job // unbuffered: a send succeeds only into an idle worker
	max       int64
	hung      atomic.Int64  // abandoned calls still running
	abandoned atomic.Uint64 // calls abandoned in all
	free      sync.Pool     // *job, per guard so no timer crosses a synctest bubble
	quit      chan struct{} // closed by Guard.Close: idle workers exit
	closing   sync.Once
}

func newWorkers(max int) *workers {
	return &workers{jobs: make(chan *job), max: int64(max), quit: make(chan struct{})}
}

// close lets idle workers exit now, and busy ones when their call returns.
// Calls made afterwards still run, each on a worker that exits after it.
func (p *workers) close() { p.closing.Do(func() { close(p.quit) }) }

// job is one call handed to a worker. A tool call is kept in fields, so
// that the common path allocates no closure; anything else is fn.
type job struct {
	ctx   context.Context
	tool  tools.Tool
	input string
	run   toolRun
	fn    func()
	err   error // the tool's error, or a panic that escaped fn

	state atomic.Int32  // jobRunning, then jobDone or jobAbandoned
	done  chan struct{} // signalled once at jobDone
	timer *time.Timer   // the caller's deadline, reused
}

const (
	jobRunning int32 = iota
	jobDone
	jobAbandoned
)

func (p *workers) get() *job {
	if j, ok := p.free.Get().(*job); ok {
		j.state.Store(jobRunning)
		return j
	}
	return &job{done: make(chan struct{}, 1)}
}

func (p *workers) put(j *job) {
	j.ctx, j.tool, j.input, j.run, j.fn, j.err = nil, nil, "", toolRun{}, nil, nil
	p.free.Put(j)
}

// full reports whether the abandoned calls still running reached the bound.
func (p *workers) full() bool { return p.max > 0 && p.hung.Load() >= p.max }

// start hands j to an idle worker, or to a new one when none is idle.
func (p *workers) start(j *job) {
	select {
	case p.jobs <- j:
	default:
		go p.work(j)
	}
}

// work runs j, then whatever it is handed next, until a whole workerIdle
// passed without work or the guard is closed. Its idle timer is re-armed
// once per period, not per call.
func (p *workers) work(j *job) {
	idle := time.NewTimer(workerIdle)
	defer idle.Stop()
	busy := true
	for {
		p.do(j)
		if j.state.CompareAndSwap(jobRunning, jobDone) {
			j.done <- struct{}{} // j belongs to the caller again from here
		} else {
			p.hung.Add(-1) // an abandoned call returned: nobody waits for it
		}
		for j = nil; j == nil; {
			select {
			case j = <-p.jobs:
				busy = true
			case <-p.quit:
				return
			case <-idle.C:
				if !busy {
					return
				}
				busy = false
				idle.Reset(workerIdle)
			}
		}
	}
}

// do runs one job; a panic that escapes it becomes the job's error, so no
// call can take a worker, or the process, down.
func (p *workers) do(j *job) {
	defer func() {
		if r := recover(); r != nil {
			j.err = fmt.Errorf("%w: %v", ErrToolPanic, r)
		}
	}()
	if j.fn != nil {
		j.fn()
		return
	}
	j.run, j.err = invoke(j.ctx, j.tool, j.input)
}

// wait waits for j for at most d, or until ctx is done. It reports false
// when it gave up: j is abandoned to its worker and must not be touched.
func (p *workers) wait(ctx context.Context, j *job, d time.Duration) bool {
	if j.timer == nil {
		j.timer = time.NewTimer(d)
	} else {
		j.timer.Reset(d)
	}
	select {
	case <-j.done:
		j.timer.Stop()
		return true
	case <-j.timer.C:
	case <-ctx.Done():
		j.timer.Stop()
	}
	p.hung.Add(1)
	if !j.state.CompareAndSwap(jobRunning, jobAbandoned) {
		p.hung.Add(-1)
		<-j.done // it returned just now
		return true
	}
	p.abandoned.Add(1)
	return false
}

// callPooled runs one attempt at a tool call on a worker, with a context
// that expires at start+timeout (see callCtx), and waits for it until then
// or until ctx is done, whichever is first. A call that returns at or past
// its deadline fails with ErrTimeout whatever it returned, as one that was
// abandoned does.
func (g *Guard) callPooled(ctx context.Context, t tools.Tool, input string, start time.Time, timeout time.Duration) (toolRun, error) {
	if err := ctx.Err(); err != nil {
		return toolRun{}, err
	}
	p := g.breakers.pool
	if p.full() {
		return toolRun{}, ErrHungLimit
	}
	deadline := start.Add(timeout)
	cc := newCallCtx(ctx, deadline, g.now)
	j := p.get()
	j.ctx, j.tool, j.input = cc, t, input
	p.start(j)
	ok := p.wait(ctx, j, deadline.Sub(g.now()))
	cc.release()
	end := g.now()
	if ok {
		run, err := j.run, j.err
		p.put(j)
		run.end = end
		if end.Before(deadline) {
			return run, err
		}
	} else {
		g.logAbandoned(ctx, "tool", t.Name(), timeout)
	}
	if err := ctx.Err(); err != nil {
		return toolRun{end: end}, err
	}
	return toolRun{end: end}, fmt.Errorf("%w after %v", ErrTimeout, timeout)
}

// callWorker runs fn on a worker with a deadline d from now, abandoning it
// if it does not return in time or parent is done first. A negative d
// means no deadline: fn runs on the caller's goroutine.
func callWorker[T any](g *Guard, parent context.Context, op, name string, d time.Duration, fn func(context.Context) (T, error)) (T, error) {
	var v T
	var err error
	if d < 0 {
		return fn(parent)
	}
	if err := parent.Err(); err != nil {
		return v, err
	}
	p := g.breakers.pool
	if p.full() {
		return v, ErrHungLimit
	}
	ctx, cancel := context.WithTimeout(parent, d)
	defer cancel()
	j := p.get()
	j.fn = func() { v, err = fn(ctx) }
	p.start(j)
	if !p.wait(parent, j, d) {
		g.logAbandoned(parent, op, name, d)
		var zero T
		if err := parent.Err(); err != nil {
			return zero, err
		}
		return zero, fmt.Errorf("%w after %v", ErrTimeout, d)
	}
	if j.err != nil && err == nil {
		err = j.err
	}
	p.put(j)
	return v, err
}

func (g *Guard) logAbandoned(ctx context.Context, op, name string, after time.Duration) {
	if log := g.cfg.Observe.Logger; log != nil {
		p := g.breakers.pool
		log.WarnContext(ctx, "agentguard abandoned a call at its deadline", "op", op, "name", name, "after", after,
			"abandoned_running", p.hung.Load(), "abandoned_total", p.abandoned.Load())
	}
}

// Abandoned reports the calls abandoned at their timeout or the caller's
// deadline: how many still run on their workers, and how many there were
// since the guard was made. Safe for concurrent use.
func (g *Guard) Abandoned() (running int, total uint64) {
	p := g.breakers.pool
	return int(p.hung.Load()), p.abandoned.Load()
}
