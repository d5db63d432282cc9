package guard

import "github.com/agentguard/agentguard/trace"

// turnScan is the last step of the latest turn a rule looks for, kept in
// the trace's memo and advanced over new steps only: judging a step costs
// the same at step 10 and at step 10,000 of one turn (a session with no
// user turns is one long turn).
type turnScan struct {
	n, turn int         // steps scanned; the turn of the last one
	last    *trace.Step // the last step of that turn that matched
	match   func(*trace.Step) bool
}

// turnScanKey names one rule's scan in a trace's memo.
type turnScanKey struct{ id *byte }

func newTurnScanKey() turnScanKey { return turnScanKey{new(byte)} }

// lastInTurn returns the last step of t in turn for which match holds, or
// nil. match must depend on the step alone.
func lastInTurn(t *trace.Trace, key turnScanKey, turn int, match func(*trace.Step) bool) *trace.Step {
	sc := t.Memo(key, newTurnScan).(*turnScan) // a func that captures nothing: no allocation
	if sc.n > t.Len() {
		sc = &turnScan{turn: -2} // a shorter prefix than the memo scanned
	}
	sc.match = match
	sc.scan(t)
	switch {
	case sc.turn == turn:
		return sc.last
	case sc.turn > turn: // a step of an earlier turn: scan that turn afresh
		var last *trace.Step
		for _, p := range sameTurn(t, turn) {
			if match(p) {
				last = p
			}
		}
		return last
	}
	return nil // the turn has no step yet
}

func newTurnScan() any { return &turnScan{turn: -2} }

func (sc *turnScan) scan(t *trace.Trace) {
	sc.n = max(sc.n, t.Released) // a scan begun after a release reads what is kept
	for ; sc.n < t.Len(); sc.n++ {
		p := t.Step(sc.n)
		if p.Turn != sc.turn {
			sc.turn, sc.last = p.Turn, nil
		}
		if sc.match(p) {
			sc.last = p
		}
	}
}

// Release scans the steps about to be released (trace.Releaser): the last
// match of the latest turn stays known after its step left memory.
func (sc *turnScan) Release(t *trace.Trace, n int) { sc.scan(t) }
