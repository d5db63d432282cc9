package guard

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"sync"
	"sync/atomic"
	"time"

	"github.com/agentguard/agentguard/ledger"
	"github.com/agentguard/agentguard/trace"
)

// batchSink is a Sink that can append several violations at once (see
// Sink); the ledger package's *Ledger is one. The guard uses it to deliver
// the violations that queued up while a batch was being written in one
// write.
type batchSink interface {
	Sink
	AppendBatch(ctx context.Context, vs []trace.Violation) ([]uint64, error)
}

// reportQueue is how many findings wait for the reporter, and traceQueue
// how many traces: findings are small and each is a lesson; traces are
// large, and a later save of a growing trace covers an earlier one.
const (
	reportQueue = 4096
	traceQueue  = 64
)

// reportWait is the longest a step waits for room in a full report
// queue: a ledger slower than the agent for a while (a durable ledger
// syncing, badger stalling writes while it compacts) holds the agent back
// rather than lose findings. When a step has waited that long (the ledger
// hangs, or is slower than the agent for long), the oldest queued finding
// or trace is dropped to make room, counted in ReportStats and returned
// by the next Flush or Close as ErrDropped; until the reporter delivers
// again, later steps drop without waiting. A stuck ledger never stops the
// agent, and the findings stay in their traces.
const reportWait = time.Second

// reportBatch is the most findings the reporter appends at once: a durable
// ledger syncs once per batch, so a backlog is cleared in few syncs.
const reportBatch = 512

// reporter delivers findings to the logger and the ledger, and traces to
// the trace sink, off the agent's step: send queues them and one
// goroutine, started on the first one, logs and appends them in order, in
// batches when the sink is a BatchSink, findings before traces.
type reporter struct {
	g       *Guard
	once    sync.Once
	started atomic.Bool  // set once the queues exist and run is running
	stuck   atomic.Bool  // a step waited reportWait for room; cleared by the next delivery
	mu      sync.RWMutex // guards closed against sends on closed queues
	q       chan report  // findings
	tq      chan report  // traces
	// closed is set by Close; later findings are delivered on the step.
	closed bool
	done   chan struct{} // closed when the goroutine has drained the queues

	// queued counts what was queued, settled what left the queue and was
	// delivered or dropped, for findings [0] and traces [1]; Flush waits
	// for settled to reach queued.
	queued, settled [2]atomic.Uint64
	waitMu          sync.Mutex
	waiters         []flushWaiter

	stats struct {
		delivered, dropped, unstored       atomic.Uint64
		traces, tracesDropped, tracesFails atomic.Uint64
		stepsReleased                      atomic.Uint64
	}
	// Used by the delivering goroutine (or a step after Close) under logMu.
	logMu       sync.Mutex
	failing     bool   // the last append failed
	loggedDrops uint64 // drops when last logged
	// returnedDrops is the drops when Flush or Close last returned them.
	returnedDrops atomic.Uint64
}

type flushWaiter struct {
	target [2]uint64
	ch     chan struct{}
}

// report is one finding, or one trace to save (tr != nil), on its way.
type report struct {
	ctx context.Context
	v   trace.Violation
	tr  *trace.Trace
	// auto holds, instead of tr, an autosave's trace: the latest save due
	// when the report is delivered (see autosaveState).
	auto *autosaveState
	rec  *trace.Recorder // the trace's recorder, for an autosave: released from once the trace is stored
}

func (rep *report) kind() int {
	if rep.tr != nil || rep.auto != nil {
		return 1
	}
	return 0
}

// ReportStats counts what the guard's reporter did with findings and
// traces since the guard was made: a metrics hook reads them. All counts
// but Queued only grow.
type ReportStats struct {
	// Delivered is the findings appended to the ledger.
	Delivered uint64
	// Dropped is the findings dropped from a full queue (see Observation.Ledger).
	Dropped uint64
	// Unstored is the findings the ledger refused: a full disk, a closed
	// or failing ledger. They were logged and are in their traces.
	Unstored uint64
	// Queued is the findings and traces waiting now.
	Queued uint64
	// TracesSaved, TracesDropped and TracesUnsaved count traces stored,
	// dropped from a full queue and refused by the trace sink.
	TracesSaved, TracesDropped, TracesUnsaved uint64
	// StepsReleased counts the steps released from memory once their
	// trace was stored (Observation.KeepSteps).
	StepsReleased uint64
}

// ReportStats returns the reporter's counts. It is safe to call at any
// time, from any goroutine.
func (g *Guard) ReportStats() ReportStats {
	r := &g.reports
	var waiting uint64
	for k := range 2 {
		q, s := r.queued[k].Load(), r.settled[k].Load()
		waiting += q - min(q, s)
	}
	return ReportStats{
		Delivered:     r.stats.delivered.Load(),
		Dropped:       r.stats.dropped.Load(),
		Unstored:      r.stats.unstored.Load(),
		Queued:        waiting,
		TracesSaved:   r.stats.traces.Load(),
		TracesDropped: r.stats.tracesDropped.Load(),
		TracesUnsaved: r.stats.tracesFails.Load(),
		StepsReleased: r.stats.stepsReleased.Load(),
	}
}

// start makes the queues and their goroutine on the first report, so that
// a guard that never reports anything (a replay run, say) costs neither.
// Callers hold r.mu for reading and have seen closed false.
func (r *reporter) start() {
	r.once.Do(func() {
		r.q = make(chan report, reportQueue)
		r.tq = make(chan report, traceQueue)
		r.done = make(chan struct{})
		go r.run()
		r.started.Store(true)
	})
}

// send queues rep. When its queue is full it waits up to reportWait for
// room, then drops the oldest report of its kind (at once while the
// reporter is stuck); after Close it delivers rep itself.
func (r *reporter) send(ctx context.Context, rep report) {
	if r.g.cfg.Observe.Logger != nil {
		rep.ctx = context.WithoutCancel(ctx) // for the handler's values, past the step's end
	}
	r.mu.RLock()
	if r.closed {
		r.mu.RUnlock()
		r.g.deliver([]report{rep})
		return
	}
	defer r.mu.RUnlock()
	r.start()
	k := rep.kind()
	q := r.q
	if k == 1 {
		q = r.tq
	}
	r.queued[k].Add(1)
	select {
	case q <- rep:
		return
	default:
	}
	if !r.stuck.Load() {
		t := time.NewTimer(reportWait)
		select {
		case q <- rep:
			t.Stop()
			return
		case <-t.C:
			r.stuck.Store(true)
		}
	}
	for {
		select {
		case q <- rep:
			return
		default:
		}
		select {
		case old := <-q:
			r.drop(old)
		default:
		}
	}
}

// drop counts a report taken off its queue undelivered.
func (r *reporter) drop(rep report) {
	if rep.auto != nil {
		rep.auto.take()
	}
	if rep.kind() == 1 {
		r.stats.tracesDropped.Add(1)
	} else {
		r.stats.dropped.Add(1)
	}
	r.settle(rep.kind(), 1)
}

// settle records n reports of kind k as out of their queue and releases
// the Flush calls that waited for them.
func (r *reporter) settle(k, n int) {
	if n == 0 {
		return
	}
	r.settled[k].Add(uint64(n))
	r.waitMu.Lock()
	keep := r.waiters[:0]
	for _, w := range r.waiters {
		if r.reached(w.target) {
			close(w.ch)
		} else {
			keep = append(keep, w)
		}
	}
	clear(r.waiters[len(keep):])
	r.waiters = keep
	r.waitMu.Unlock()
}

func (r *reporter) reached(target [2]uint64) bool {
	return r.settled[0].Load() >= target[0] && r.settled[1].Load() >= target[1]
}

// run delivers findings in batches, and a trace whenever no finding waits.
func (r *reporter) run() {
	defer close(r.done)
	batch := make([]report, 0, reportBatch)
	q, tq := r.q, r.tq
	for q != nil || tq != nil {
		batch = batch[:0]
		// Findings first: take what is there without waiting.
	more:
		for q != nil && len(batch) < cap(batch) {
			select {
			case rep, ok := <-q:
				if !ok {
					q = nil
					break more
				}
				batch = append(batch, rep)
			default:
				break more
			}
		}
		if len(batch) == 0 {
			select {
			case rep, ok := <-q:
				if !ok {
					q = nil
					continue
				}
				batch = append(batch, rep)
			case rep, ok := <-tq:
				if !ok {
					tq = nil
					continue
				}
				batch = append(batch, rep)
			}
		}
		r.g.deliver(batch)
		r.stuck.Store(false)
		n := len(batch)
		traces := 0
		if n == 1 && batch[0].kind() == 1 {
			traces = 1
		}
		clear(batch) // drop references to contexts, findings and traces
		r.settle(0, n-traces)
		r.settle(1, traces)
	}
}

// flush waits until every report queued before it was delivered or
// dropped.
func (r *reporter) flush(ctx context.Context) error {
	r.mu.RLock()
	if r.closed || !r.started.Load() {
		r.mu.RUnlock()
		return r.dropped() // nothing was ever queued, or Close delivered the queue
	}
	w := flushWaiter{target: [2]uint64{r.queued[0].Load(), r.queued[1].Load()}, ch: make(chan struct{})}
	r.mu.RUnlock()
	r.waitMu.Lock()
	if r.reached(w.target) {
		r.waitMu.Unlock()
		return r.dropped()
	}
	r.waiters = append(r.waiters, w)
	r.waitMu.Unlock()
	select {
	case <-w.ch:
		return r.dropped()
	case <-ctx.Done():
		return ctx.Err()
	}
}

// dropped returns an error wrapping ErrDropped when reports were dropped
// since it last did.
func (r *reporter) dropped() error {
	f, t := r.stats.dropped.Load(), r.stats.tracesDropped.Load()
	before := r.returnedDrops.Swap(f + t)
	if f+t <= before {
		return nil
	}
	return fmt.Errorf("guard: %w: %d since the last Flush or Close (%d findings and %d traces in all)", ErrDropped, f+t-before, f, t)
}

func (r *reporter) close(ctx context.Context) error {
	r.mu.Lock()
	started := r.started.Load()
	if !r.closed && started {
		close(r.q)
		close(r.tq)
	}
	r.closed = true
	r.mu.Unlock()
	if !started {
		return nil
	}
	select {
	case <-r.done:
		return r.dropped()
	case <-ctx.Done():
		return ctx.Err()
	}
}

// deliver logs and appends a batch of findings, in order, then saves the
// traces among them.
func (g *Guard) deliver(batch []report) {
	var vs []trace.Violation
	for i := range batch {
		rep := &batch[i]
		if rep.kind() == 1 {
			continue
		}
		if log := g.cfg.Observe.Logger; log != nil {
			f := rep.v.Finding
			log.LogAttrs(rep.ctx, levelOf(f), "agentguard finding",
				attrRule(f.Rule), attrVerdict(f.Verdict), attrTrace(rep.v.TraceID), attrStep(f.Step), attrMessage(f.Message))
		}
		vs = append(vs, rep.v)
	}
	g.appendViolations(vs)
	for i := range batch {
		rep := &batch[i]
		switch {
		case rep.tr != nil:
			g.putTrace(rep.tr, rep.rec)
		case rep.auto != nil:
			if t := rep.auto.take(); t != nil {
				g.putTrace(t, rep.rec)
			}
		}
	}
	g.reports.logDrops()
}

// appendViolations writes vs to the ledger. A failing ledger never stops
// the agent: what it refused is counted and logged, once when appends
// start failing and once when they succeed again (a full disk that was
// cleared, say).
func (g *Guard) appendViolations(vs []trace.Violation) {
	led := g.cfg.Observe.Ledger
	if len(vs) == 0 || led == nil {
		return
	}
	ctx := context.Background()
	stored := 0
	var err error
	if b, ok := led.(batchSink); ok && len(vs) > 1 {
		if _, err = b.AppendBatch(ctx, vs); err == nil {
			stored = len(vs)
		} else if !errors.Is(err, ledger.ErrDiskFull) && !errors.Is(err, ledger.ErrClosed) {
			// Something in the batch may be at fault: try each, so that
			// one bad finding does not take the others with it.
			err = nil
			for _, v := range vs {
				if _, e := led.Append(ctx, v); e != nil {
					err = e
				} else {
					stored++
				}
			}
		}
	} else {
		for _, v := range vs {
			if _, e := led.Append(ctx, v); e != nil {
				err = e
			} else {
				stored++
			}
		}
	}
	r := &g.reports
	r.stats.delivered.Add(uint64(stored))
	r.stats.unstored.Add(uint64(len(vs) - stored))
	log := g.cfg.Observe.Logger
	r.logMu.Lock()
	defer r.logMu.Unlock()
	switch {
	case err != nil && !r.failing:
		r.failing = true
		if log != nil {
			log.LogAttrs(ctx, errorLevel, "agentguard ledger append failed", attrRule(vs[0].Rule), attrError(err),
				slog.Uint64("unstored", r.stats.unstored.Load()))
		}
	case err == nil && r.failing:
		r.failing = false
		if log != nil {
			log.LogAttrs(ctx, slog.LevelInfo, "agentguard ledger appends resumed", slog.Uint64("unstored", r.stats.unstored.Load()))
		}
	}
}

// logDrops logs, from the delivering goroutine, findings dropped from a
// full queue since it last did.
func (r *reporter) logDrops() {
	log := r.g.cfg.Observe.Logger
	if log == nil {
		return
	}
	d := r.stats.dropped.Load() + r.stats.tracesDropped.Load()
	r.logMu.Lock()
	defer r.logMu.Unlock()
	if d == r.loggedDrops {
		return
	}
	log.LogAttrs(context.Background(), slog.LevelWarn, "agentguard report queue full: dropped the oldest",
		slog.Uint64("dropped", d-r.loggedDrops), slog.Uint64("dropped_total", d))
	r.loggedDrops = d
}

// Flush waits until every finding reported and trace saved so far has
// been delivered — logged, appended to the ledger, stored — or dropped
// from a full queue, or ctx is done. Call it before reading the ledger for
// what a run just did. When reports were dropped since the last Flush or
// Close, it says how many in an error wrapping ErrDropped.
func (g *Guard) Flush(ctx context.Context) error { return g.reports.flush(ctx) }

// Close delivers the findings and traces still queued, stops the goroutine
// that delivers them, and lets the guard's idle call workers exit. Findings
// reported after Close are delivered on the step. Call it before the
// process exits: queued findings are otherwise lost to the ledger (they
// stay in their traces). Like Flush, it returns an error wrapping
// ErrDropped when reports were dropped since the last Flush or Close.
func (g *Guard) Close(ctx context.Context) error {
	g.breakers.pool.close()
	return g.reports.close(ctx)
}
