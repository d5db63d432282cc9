package guard

import (
	"context"
	"sync"

	"github.com/agentguard/agentguard/guard/internal/rulekit"
	"github.com/agentguard/agentguard/trace"
)

// TraceSink stores finished traces, so that a ledger entry's trace can be
// fetched again and turned into a regression case. ledger/badgerstore's
// *Store implements it (it is a ledger.TraceStore) in the ledger's own
// directory; ledger.TraceFile writes trace JSONL instead.
//
// When a trace is finished, and so saved:
//   - when Run or Resume returns (a paused run is saved too, and again
//     when it resumes);
//   - when the caller says so with Guard.SaveTrace — what a user of
//     WrapModel and WrapTool (an agents.Executor, a loop of their own)
//     calls when a request ends;
//   - every Observation.TraceEvery recorded steps, for sessions that
//     never end.
//
// A trace may thus be saved several times as it grows: a sink should keep
// the latest. badgerstore.Store writes only the steps it has not stored.
// Once steps are released from memory (Observation.KeepSteps), a save
// holds only the steps kept: its Trace.Released says where it starts, and
// a sink adds its steps to those it stored (as ledger.TraceStore does).
type TraceSink interface {
	PutTrace(ctx context.Context, t *trace.Trace) error
}

// TraceSinkFunc adapts a function to the TraceSink interface.
type TraceSinkFunc func(ctx context.Context, t *trace.Trace) error

// PutTrace calls f.
func (f TraceSinkFunc) PutTrace(ctx context.Context, t *trace.Trace) error { return f(ctx, t) }

// DiscardTraces is a TraceSink that stores nothing: set
// Observation.Traces to it to keep traces out of a ledger that would
// store them.
var DiscardTraces TraceSink = discardTraces{}

type discardTraces struct{}

func (discardTraces) PutTrace(context.Context, *trace.Trace) error { return nil }

// traceSink is where finished traces go: Observation.Traces, or else the
// ledger when it stores traces too; nil for none.
func (g *Guard) traceSink() TraceSink {
	switch s := g.cfg.Observe.Traces.(type) {
	case discardTraces:
		return nil
	case nil:
		ts, _ := g.cfg.Observe.Ledger.(TraceSink)
		return ts
	default:
		return s
	}
}

// SaveTrace queues the trace rec has recorded so far for the trace sink
// (Observation.Traces). It does not wait for it to be stored (Flush
// does) and, like a finding, never holds up the step for longer than
// 20ms. Run saves its own traces; call SaveTrace when a request
// served through WrapModel and WrapTool ends. Without a trace sink it
// does nothing.
func (g *Guard) SaveTrace(ctx context.Context, rec *trace.Recorder) {
	if rec == nil || g.traceSink() == nil {
		return
	}
	g.saveTrace(ctx, rec.Trace(), nil)
}

// saveTrace queues t for the trace sink; once the sink stored it, steps of
// rec (t's recorder) are released as Observation.KeepSteps says, when rec
// is not nil.
func (g *Guard) saveTrace(ctx context.Context, t *trace.Trace, rec *trace.Recorder) {
	if t == nil || g.traceSink() == nil {
		return
	}
	g.reports.send(ctx, report{tr: t, rec: rec})
}

// autosaveKey keys, in a trace's Memo, its *autosaveState.
type autosaveKey struct{}

// autosaveState is a trace's periodic saving: how many steps it had when
// last due, and the save waiting in the trace queue, if one does. A save
// that comes due while the last is still queued replaces it there: the
// sink stores the latest, which holds the earlier, and a sink slower than
// the agent gets one save per trace to catch up on instead of a backlog
// that fills the queue and drops other traces' saves.
type autosaveState struct {
	saved int // guarded by the recorder's lock

	mu     sync.Mutex
	queued *trace.Trace // the save waiting to be taken by the reporter
}

// take returns the save waiting, now taken off the queue, or nil when a
// report for it was delivered already.
func (s *autosaveState) take() *trace.Trace {
	s.mu.Lock()
	defer s.mu.Unlock()
	t := s.queued
	s.queued = nil
	return t
}

// autosave saves rec's trace once Observation.TraceEvery steps were
// recorded since it last did.
func (g *Guard) autosave(ctx context.Context, rec *trace.Recorder) {
	every := g.cfg.Observe.TraceEvery
	if every <= 0 || g.traceSink() == nil {
		return
	}
	var st *autosaveState
	rec.View(func(t *trace.Trace) {
		s := t.Memo(autosaveKey{}, func() any { return new(autosaveState) }).(*autosaveState)
		if t.Len()-s.saved >= every {
			s.saved, st = t.Len(), s
		}
	})
	if st == nil {
		return
	}
	snap := rec.Trace()
	st.mu.Lock()
	waiting := st.queued != nil
	if !waiting || snap.Len() >= st.queued.Len() { // two calls' saves may cross: keep the longer
		st.queued = snap
	}
	st.mu.Unlock()
	if waiting {
		return // the queued report now carries snap
	}
	var release *trace.Recorder
	if g.cfg.Observe.KeepSteps >= 0 {
		release = rec
	}
	g.reports.send(ctx, report{auto: st, rec: release})
}

// defaultKeepSteps is how many recent steps a trace keeps in memory when
// Observation.KeepSteps is zero. It is far more than the built-in rules
// read back within a turn (a loop is a handful of calls), and small
// enough that a session of any length holds a few megabytes of steps.
const defaultKeepSteps = 1000

// release drops from rec the steps of t, which the trace sink stored,
// but the last KeepSteps recorded; the rules' per-trace indexes take in
// the steps first (see releaseIndexes).
func (g *Guard) release(rec *trace.Recorder, t *trace.Trace) {
	keep := g.cfg.Observe.KeepSteps
	if keep == 0 {
		keep = defaultKeepSteps
	}
	keep = max(keep, 1) // facts and turn scans go on from the last step
	n := t.Len()
	rec.View(func(live *trace.Trace) { n = min(n, live.Len()-keep) })
	g.reports.stats.stepsReleased.Add(uint64(rec.Release(n, g.releaseIndexes)))
}

// releaseIndexes brings up to date, before steps are released, the
// per-trace indexes that the guard's rules read and that are built on
// first use: a rule that has not run yet on a session must still see what
// the released steps held. Indexes that exist already (turn scans, the
// false-claims facts, the memory card, the policy checks' index) do so
// themselves, as trace.Releasers.
func (g *Guard) releaseIndexes(t *trace.Trace) {
	for _, r := range g.rules {
		if ix, ok := r.(rulekit.Indexer); ok {
			ix.Index(t)
		}
	}
}

// putTrace stores t, on the delivering goroutine, then releases from rec,
// when not nil, the steps stored.
func (g *Guard) putTrace(t *trace.Trace, rec *trace.Recorder) {
	sink := g.traceSink()
	if sink == nil {
		return
	}
	r := &g.reports
	if err := sink.PutTrace(context.Background(), t); err != nil {
		r.stats.tracesFails.Add(1)
		if log := g.cfg.Observe.Logger; log != nil {
			log.LogAttrs(context.Background(), errorLevel, "agentguard trace not saved", attrTrace(t.ID), attrError(err))
		}
		return
	}
	r.stats.traces.Add(1)
	if rec != nil {
		g.release(rec, t)
	}
}
