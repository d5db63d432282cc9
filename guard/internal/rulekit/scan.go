package rulekit

import "github.com/agentguard/agentguard/trace"

// TurnScan is the last step of the latest turn a rule looks for, kept in
// the trace's memo and advanced over new steps only: judging a step costs
// the same at step 10 and at step 10,000 of one turn (a session with no
// user turns is one long turn).
type TurnScan struct {
	n, turn int         // steps scanned; the turn of the last one
	last    *trace.Step // the last step of that turn that matched, or what fold made of the turn
	match   func(*trace.Step) bool
	fold    func(last, p *trace.Step) *trace.Step // when set, replaces match: the scan's value after p
}

// ScanKey names one rule's scan in a trace's memo.
type ScanKey struct{ id *byte }

// NewScanKey returns a key of its own.
func NewScanKey() ScanKey { return ScanKey{new(byte)} }

// ScanOf returns the scan kept in t's memo under key.
func ScanOf(t *trace.Trace, key ScanKey) *TurnScan {
	return t.Memo(key, newTurnScan).(*TurnScan) // a func that captures nothing: no allocation
}

// LastInTurn returns the last step of t in turn for which match holds, or
// nil. match must depend on the step alone.
func LastInTurn(t *trace.Trace, key ScanKey, turn int, match func(*trace.Step) bool) *trace.Step {
	return ScanOf(t, key).LastOf(t, turn, match)
}

// LastOf is LastInTurn with the scan sc, kept in t's memo.
func (sc *TurnScan) LastOf(t *trace.Trace, turn int, match func(*trace.Step) bool) *trace.Step {
	sc.match = match
	return sc.at(t, turn)
}

// FoldOf is the scan's value for turn with fold, which must depend on its
// arguments alone: the fold of the turn's steps from nil.
func (sc *TurnScan) FoldOf(t *trace.Trace, turn int, fold func(last, p *trace.Step) *trace.Step) *trace.Step {
	sc.fold = fold
	return sc.at(t, turn)
}

// at advances the scan over t's new steps and returns its value for turn.
func (sc *TurnScan) at(t *trace.Trace, turn int) *trace.Step {
	if sc.n > t.Len() {
		sc = &TurnScan{turn: -2, match: sc.match, fold: sc.fold} // a shorter prefix than the memo scanned
	}
	sc.scan(t)
	switch {
	case sc.turn == turn:
		return sc.last
	case sc.turn > turn: // a step of an earlier turn: scan that turn afresh
		var last *trace.Step
		for _, p := range SameTurn(t, turn) {
			last = sc.next(last, p)
		}
		return last
	}
	return nil // the turn has no step yet
}

func newTurnScan() any { return &TurnScan{turn: -2} }

func (sc *TurnScan) scan(t *trace.Trace) {
	sc.n = max(sc.n, t.Released) // a scan begun after a release reads what is kept
	for ; sc.n < t.Len(); sc.n++ {
		p := t.Step(sc.n)
		if p.Turn != sc.turn {
			sc.turn, sc.last = p.Turn, nil
		}
		sc.last = sc.next(sc.last, p)
	}
}

// next is the scan's value after p, given its value last before it.
func (sc *TurnScan) next(last, p *trace.Step) *trace.Step {
	switch {
	case sc.fold != nil:
		return sc.fold(last, p)
	case sc.match(p):
		return p
	}
	return last
}

// Release scans the steps about to be released (trace.Releaser): the last
// match of the latest turn stays known after its step left memory.
func (sc *TurnScan) Release(t *trace.Trace, n int) { sc.scan(t) }

// Hot is what the built-in rules read of a trace on every tool call, kept
// in one entry of the trace's memo: the guard looks it up once per call
// and hands it to each rule that reads it (HotRule), rather than each rule
// looking up its own.
type Hot struct {
	Tools  ToolCount // the tool steps (max-steps)
	Intent TurnScan  // the last step of the latest turn that reported an intent (intent-confidence)
}

type hotKey struct{}

// HasIntent is the step Hot.Intent looks for in a turn.
func HasIntent(p *trace.Step) bool { return p.Intent != "" }

func newHot() any { return &Hot{Intent: TurnScan{turn: -2, match: HasIntent}} }

// HotOf returns t's hot state, making it on first use.
func HotOf(t *trace.Trace) *Hot { return t.Memo(hotKey{}, newHot).(*Hot) }

// Release brings the state up to date with the steps about to be
// released (trace.Releaser).
func (h *Hot) Release(t *trace.Trace, n int) {
	h.Tools.count(t)
	h.Intent.scan(t)
}

// ToolCount is the number of tool steps among a trace's first steps, kept
// in the trace's hot state so that counting them costs O(new steps) per
// call. It counts the steps released from memory too (trace.Releaser).
type ToolCount struct{ steps, tools int }

// Of returns how many of t's steps are tool steps, c being the count kept
// in t's hot state.
func (c *ToolCount) Of(t *trace.Trace) int {
	if c.steps > t.Len() { // a shorter prefix than the memo counted
		c = &ToolCount{}
	}
	c.count(t)
	return c.tools
}

func (c *ToolCount) count(t *trace.Trace) {
	c.steps = max(c.steps, t.Released) // a count begun after a release counts what is kept
	for ; c.steps < t.Len(); c.steps++ {
		if t.Step(c.steps).Kind == trace.KindTool {
			c.tools++
		}
	}
}
