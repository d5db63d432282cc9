package guard

import (
	"context"
	"sync"
	"sync/atomic"

	"github.com/agentguard/agentguard/trace"
)

// BatchSink is a Sink that can append several violations at once; the
// ledger package's *Ledger implements it. The guard uses it to deliver the
// violations that queued up while a batch was being written in one write.
type BatchSink interface {
	Sink
	AppendBatch(ctx context.Context, vs []trace.Violation) ([]uint64, error)
}

// reportQueue is how many findings wait for the reporter before report
// delivers them itself, on the step.
const reportQueue = 256

// reporter delivers findings to the logger and the ledger off the agent's
// step: report queues them and one goroutine, started on the first
// finding, logs and appends them in order, in batches when the sink is a
// BatchSink. A full queue is not a reason to lose a finding: report then
// delivers it on the step.
type reporter struct {
	g       *Guard
	once    sync.Once
	started atomic.Bool  // set once q exists and run is running
	mu      sync.RWMutex // guards closed against sends on a closed queue
	q       chan report
	// closed is set by Close; later findings are delivered on the step.
	closed bool
	done   chan struct{} // closed when the goroutine has drained q
}

// report is one finding on its way, or a flush marker (flushed != nil).
type report struct {
	ctx     context.Context
	v       trace.Violation
	flushed chan struct{}
}

// start makes the queue and its goroutine on the first finding, so that a
// guard that never reports anything (a replay run, say) costs neither.
// Callers hold r.mu for reading and have seen closed false.
func (r *reporter) start() {
	r.once.Do(func() {
		r.q = make(chan report, reportQueue)
		r.done = make(chan struct{})
		go r.run()
		r.started.Store(true)
	})
}

// send queues f, or delivers it at once when the queue is full or closed.
func (r *reporter) send(ctx context.Context, v trace.Violation) {
	rep := report{v: v}
	if r.g.cfg.Observe.Logger != nil {
		rep.ctx = context.WithoutCancel(ctx) // for the handler's values, past the step's end
	}
	r.mu.RLock()
	if !r.closed {
		r.start()
		select {
		case r.q <- rep:
			r.mu.RUnlock()
			return
		default:
		}
	}
	r.mu.RUnlock()
	r.g.deliver([]report{rep})
}

func (r *reporter) run() {
	defer close(r.done)
	batch := make([]report, 0, 64)
	for rep := range r.q {
		batch = append(batch[:0], rep)
	more:
		for len(batch) < cap(batch) {
			select {
			case rep, ok := <-r.q:
				if !ok {
					break more
				}
				batch = append(batch, rep)
			default:
				break more
			}
		}
		r.g.deliver(batch)
		clear(batch) // drop references to contexts and findings
	}
}

// flush waits until every finding queued before it was delivered.
func (r *reporter) flush(ctx context.Context) error {
	marker := report{flushed: make(chan struct{})}
	r.mu.RLock()
	if r.closed || !r.started.Load() {
		r.mu.RUnlock()
		return nil // nothing was ever queued, or Close delivered the queue
	}
	select {
	case r.q <- marker:
	case <-ctx.Done():
		r.mu.RUnlock()
		return ctx.Err()
	}
	r.mu.RUnlock()
	select {
	case <-marker.flushed:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}

func (r *reporter) close(ctx context.Context) error {
	r.mu.Lock()
	started := r.started.Load()
	if !r.closed && started {
		close(r.q)
	}
	r.closed = true
	r.mu.Unlock()
	if !started {
		return nil
	}
	select {
	case <-r.done:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}

// deliver logs and appends a batch of findings, in order, and releases
// the flush markers among them once everything before them is done.
func (g *Guard) deliver(batch []report) {
	var vs []trace.Violation
	for i := range batch {
		rep := &batch[i]
		if rep.flushed != nil {
			g.appendViolations(vs)
			vs = vs[:0]
			close(rep.flushed)
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
}

// appendViolations writes vs to the ledger. A failing ledger never stops
// the agent: the error is logged.
func (g *Guard) appendViolations(vs []trace.Violation) {
	if len(vs) == 0 || g.cfg.Observe.Ledger == nil {
		return
	}
	ctx := context.Background()
	var err error
	if b, ok := g.cfg.Observe.Ledger.(BatchSink); ok && len(vs) > 1 {
		_, err = b.AppendBatch(ctx, vs)
	} else {
		for _, v := range vs {
			if _, e := g.cfg.Observe.Ledger.Append(ctx, v); e != nil {
				err = e
			}
		}
	}
	if err != nil && g.cfg.Observe.Logger != nil {
		g.cfg.Observe.Logger.LogAttrs(ctx, errorLevel, "agentguard ledger append failed", attrRule(vs[0].Rule), attrError(err))
	}
}

// Flush waits until every finding reported so far has been logged and
// appended to the ledger, or ctx is done. Call it before reading the ledger
// for what a run just did.
func (g *Guard) Flush(ctx context.Context) error { return g.reports.flush(ctx) }

// Close delivers the findings still queued and stops the goroutine that
// delivers them, and lets the guard's idle call workers exit. Findings reported after Close are delivered on the step.
// Call it before the process exits: queued findings are otherwise lost to
// the ledger (they stay in their traces).
func (g *Guard) Close(ctx context.Context) error {
	g.breakers.pool.close()
	return g.reports.close(ctx)
}
