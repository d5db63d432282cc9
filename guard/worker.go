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

// workerIdle is how long an idle worker waits for work before it exits:
// at least this long, at most twice it.
const workerIdle = 10 * time.Second

// workers runs the calls that may ignore their context — every model call,
// and every tool call not declared context-honouring — off the caller's
// goroutine, so that the caller can walk away at the deadline.
//
// Workers are long-lived and each has its own channel. An idle worker waits
// on it in a stack, so a call costs two goroutine switches (to the worker
// and back) and no select: the caller pops the worker on top and hands it
// the job, the worker runs it, puts itself back on the stack and then wakes
// the caller, which therefore finds it idle for its next call. A new worker
// is started only when the stack is empty, so a sequential agent reuses one
// goroutine for all its calls.
//
// Two timers serve the whole pool, not one per call. The watchdog is armed
// for the earliest deadline of the calls running; when it fires, it
// abandons the calls past their deadline and re-arms for the next, so a
// call whose deadline is later than one already watched arms nothing. The
// reaper, armed once per workerIdle while a worker is idle, lets the
// workers idle for a whole period exit; Guard.Close lets them all exit at
// once (a test under testing/synctest must close its guard, or let its
// fake clock run, before its bubble ends).
//
// A call that does not return by its deadline is abandoned: its worker is
// lost to it until it returns. Abandoned calls still running are counted
// and bounded by max: past it, calls fail at once with ErrHungLimit, so a
// tool that never returns costs at most max goroutines.
type workers struct {
	max       int64
	now       func() time.Time // the guard's clock, which deadlines are on
	hung      atomic.Int64     // abandoned calls still running
	abandoned atomic.Uint64    // calls abandoned in all
	free      sync.Pool        // *job

	mu       sync.Mutex
	running  []*job      // calls on a worker and waited for; job.slot indexes it
	watchdog *time.Timer // expire, armed while a call runs
	watchAt  time.Time   // when watchdog fires; zero when it is not armed
	idle     []*worker   // a stack: the worker that finished last is on top
	epoch    uint64      // periods of workerIdle reaped so far
	reaper   *time.Timer // reap, armed while a worker is idle
	reaping  bool        // reaper is armed
	closed   bool
}

// worker is one worker goroutine's mailbox. A nil job tells it to exit.
type worker struct {
	jobs  chan *job // buffered: the hand-off never waits for the worker
	epoch uint64    // the pool's epoch when it became idle
}

func newWorkers(max int, now func() time.Time) *workers {
	return &workers{max: int64(max), now: now}
}

// close lets idle workers exit now, and busy ones when their call returns.
// Calls made afterwards still run, each on a worker that exits after it.
// Running calls are still watched.
func (p *workers) close() {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.closed = true
	p.dismiss(len(p.idle))
	if p.reaping {
		p.reaper.Stop()
		p.reaping = false
	}
}

// dismiss tells the n workers at the bottom of the idle stack, idle the
// longest, to exit. p.mu is held.
func (p *workers) dismiss(n int) {
	for _, w := range p.idle[:n] {
		w.jobs <- nil // the worker is idle: its channel is empty
	}
	p.idle = append(p.idle[:0], p.idle[n:]...)
	clear(p.idle[len(p.idle):cap(p.idle)])
}

// reap runs once per workerIdle while a worker is idle: the workers that
// were idle already at the previous run exit.
func (p *workers) reap() {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.closed {
		return
	}
	n := 0 // epochs grow up the stack
	for n < len(p.idle) && p.idle[n].epoch < p.epoch {
		n++
	}
	p.dismiss(n)
	p.epoch++
	if p.reaping = len(p.idle) > 0; p.reaping {
		p.reaper.Reset(workerIdle)
	}
}

// job is one call handed to a worker. A tool call is kept in fields, so
// that the common path allocates no closure; anything else is fn. A job
// whose call was abandoned belongs to its worker, which drops it.
type job struct {
	ctx   context.Context
	tool  tools.Tool
	input string
	run   toolRun
	fn    func()
	err   error // the tool's error, or a panic that escaped fn

	deadline time.Time
	slot     int           // index in workers.running; -1 once out of it
	state    atomic.Int32  // jobRunning, then jobDone or jobAbandoned
	wake     chan struct{} // signalled once, by whoever ended jobRunning
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
	return &job{slot: -1, wake: make(chan struct{}, 1)}
}

func (p *workers) put(j *job) {
	j.ctx, j.tool, j.input, j.run, j.fn, j.err = nil, nil, "", toolRun{}, nil, nil
	p.free.Put(j)
}

// full reports whether the abandoned calls still running reached the bound.
func (p *workers) full() bool { return p.max > 0 && p.hung.Load() >= p.max }

// start hands j, due by deadline on the guard's clock, to the idle worker
// on top of the stack, or to a new one when none is idle, and watches it.
func (p *workers) start(j *job, deadline time.Time) {
	j.deadline = deadline
	p.mu.Lock()
	j.slot = len(p.running)
	p.running = append(p.running, j)
	if p.watchAt.IsZero() || deadline.Before(p.watchAt) {
		p.watch(deadline)
	}
	if n := len(p.idle) - 1; n >= 0 {
		w := p.idle[n]
		p.idle[n] = nil
		p.idle = p.idle[:n]
		p.mu.Unlock()
		w.jobs <- j
		return
	}
	p.mu.Unlock()
	go p.work(&worker{jobs: make(chan *job, 1)}, j)
}

// watch arms the watchdog to fire at deadline. p.mu is held.
func (p *workers) watch(deadline time.Time) {
	p.watchAt = deadline
	d := deadline.Sub(p.now())
	if p.watchdog == nil {
		p.watchdog = time.AfterFunc(d, p.expire)
	} else {
		p.watchdog.Reset(d)
	}
}

// forget takes j out of the running calls. p.mu is held.
func (p *workers) forget(j *job) {
	if j.slot < 0 {
		return
	}
	last := len(p.running) - 1
	p.running[j.slot] = p.running[last]
	p.running[j.slot].slot = j.slot
	p.running[last] = nil
	p.running = p.running[:last]
	j.slot = -1
}

// expire is the watchdog: it abandons the running calls past their
// deadline, waking their callers, and re-arms for the earliest deadline
// left. A fire that finds nothing due (the call it was armed for returned)
// only re-arms.
func (p *workers) expire() {
	p.mu.Lock()
	defer p.mu.Unlock()
	now := p.now()
	var next time.Time
	for i := 0; i < len(p.running); {
		j := p.running[i]
		if j.deadline.After(now) {
			if next.IsZero() || j.deadline.Before(next) {
				next = j.deadline
			}
			i++
			continue
		}
		// Due. A call its worker has just finished stays for the worker
		// to take out; its caller is woken by the worker.
		if p.abandon(j) {
			p.forget(j)
			j.wake <- struct{}{}
			continue
		}
		i++
	}
	p.watchAt = time.Time{}
	if !next.IsZero() {
		p.watch(next)
	}
}

// work runs j, then whatever it is handed next, until it is told to exit.
func (p *workers) work(w *worker, j *job) {
	for {
		p.do(j)
		done := j.state.CompareAndSwap(jobRunning, jobDone)
		if !done {
			p.hung.Add(-1) // an abandoned call returned: nobody waits for it
		}
		// Idle before the caller wakes, so that its next call finds w.
		idle := p.park(w, j)
		if done {
			j.wake <- struct{}{} // j belongs to the caller again from here
		}
		if !idle {
			return
		}
		if j = <-w.jobs; j == nil {
			return
		}
	}
}

// park takes j, which w has run, out of the running calls and puts w on
// the idle stack; it reports false when the guard is closed and w must
// exit instead.
func (p *workers) park(w *worker, j *job) bool {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.forget(j)
	if p.closed {
		return false
	}
	w.epoch = p.epoch
	p.idle = append(p.idle, w)
	if !p.reaping {
		p.reaping = true
		if p.reaper == nil {
			p.reaper = time.AfterFunc(workerIdle, p.reap)
		} else {
			p.reaper.Reset(workerIdle)
		}
	}
	return true
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

// abandon ends j's run unless its worker ended it first; it reports
// whether it did.
func (p *workers) abandon(j *job) bool {
	p.hung.Add(1) // before the swap: the worker's decrement follows it
	if !j.state.CompareAndSwap(jobRunning, jobAbandoned) {
		p.hung.Add(-1)
		return false
	}
	p.abandoned.Add(1)
	return true
}

// wait waits for j until its worker returns it, the watchdog abandons it,
// or ctx is done. It reports false when it gave up: j is abandoned to its
// worker and must not be touched.
//
// It waits on j.wake alone, which the worker or the watchdog signals,
// whichever ends the run; on ctx.Done too only when ctx has one.
func (p *workers) wait(ctx context.Context, j *job) bool {
	if done := ctx.Done(); done == nil {
		<-j.wake
	} else {
		select {
		case <-j.wake:
		case <-done:
			if p.abandon(j) {
				p.mu.Lock()
				p.forget(j)
				p.mu.Unlock()
				return false
			}
			<-j.wake // the worker or the watchdog ended the run just now
		}
	}
	return j.state.Load() == jobDone
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
	p.start(j, deadline)
	ok := p.wait(ctx, j)
	cc.release()
	end := g.endOf(start)
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
	p.start(j, g.now().Add(d))
	if !p.wait(parent, j) {
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
