package guard

import (
	"github.com/agentguard/agentguard/guard/internal/rulekit"
	"github.com/agentguard/agentguard/trace"
)

// turnScan is the last step of the latest turn a rule looks for, kept in
// the trace's memo and advanced over new steps only: judging a step costs
// the same at step 10 and at step 10,000 of one turn (a session with no
// user turns is one long turn).
type turnScan struct {
	n, turn int         // steps scanned; the turn of the last one
	last    *trace.Step // the last step of that turn that matched, or what fold made of the turn
	match   func(*trace.Step) bool
	fold    func(last, p *trace.Step) *trace.Step // when set, replaces match: the scan's value after p
}

// turnScanKey names one rule's scan in a trace's memo.
type turnScanKey struct{ id *byte }

func newTurnScanKey() turnScanKey { return turnScanKey{new(byte)} }

// lastInTurn returns the last step of t in turn for which match holds, or
// nil. match must depend on the step alone.
func lastInTurn(t *trace.Trace, key turnScanKey, turn int, match func(*trace.Step) bool) *trace.Step {
	sc := t.Memo(key, newTurnScan).(*turnScan) // a func that captures nothing: no allocation
	return sc.lastOf(t, turn, match)
}

// lastOf is lastInTurn with the scan sc, kept in t's memo.
func (sc *turnScan) lastOf(t *trace.Trace, turn int, match func(*trace.Step) bool) *trace.Step {
	sc.match = match
	return sc.at(t, turn)
}

// foldOf is the scan's value for turn with fold, which must depend on its
// arguments alone: the fold of the turn's steps from nil.
func (sc *turnScan) foldOf(t *trace.Trace, turn int, fold func(last, p *trace.Step) *trace.Step) *trace.Step {
	sc.fold = fold
	return sc.at(t, turn)
}

// at advances the scan over t's new steps and returns its value for turn.
func (sc *turnScan) at(t *trace.Trace, turn int) *trace.Step {
	if sc.n > t.Len() {
		sc = &turnScan{turn: -2, match: sc.match, fold: sc.fold} // a shorter prefix than the memo scanned
	}
	sc.scan(t)
	switch {
	case sc.turn == turn:
		return sc.last
	case sc.turn > turn: // a step of an earlier turn: scan that turn afresh
		var last *trace.Step
		for _, p := range rulekit.SameTurn(t, turn) {
			last = sc.next(last, p)
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
		sc.last = sc.next(sc.last, p)
	}
}

// next is the scan's value after p, given its value last before it.
func (sc *turnScan) next(last, p *trace.Step) *trace.Step {
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
func (sc *turnScan) Release(t *trace.Trace, n int) { sc.scan(t) }

// hotState is what the built-in rules read of a trace on every tool call,
// kept in one entry of the trace's memo: the judge looks it up once per
// call and hands it to each rule that reads it (hotRule), rather than each
// rule looking up its own.
type hotState struct {
	tools  toolCount // the tool steps (MaxSteps)
	intent turnScan  // the last step of the latest turn that reported an intent (IntentGate)
}

type hotKey struct{}

func newHot() any { return &hotState{intent: turnScan{turn: -2, match: hasIntent}} }

// hotOf returns t's hot state, making it on first use.
func hotOf(t *trace.Trace) *hotState { return t.Memo(hotKey{}, newHot).(*hotState) }

// Release brings the state up to date with the steps about to be
// released (trace.Releaser).
func (h *hotState) Release(t *trace.Trace, n int) {
	h.tools.count(t)
	h.intent.scan(t)
}

// hotRule is a rule that reads the trace's hot state: the judge calls
// checkHot, with the state, instead of Check, which looks it up itself.
// Both give the same findings.
type hotRule interface {
	Rule
	checkHot(t *trace.Trace, s *trace.Step, h *hotState) []trace.Finding
}

// hotRules returns, for each of rules, the rule as a hotRule, or nil.
func hotRules(rules []Rule) []hotRule {
	out := make([]hotRule, len(rules))
	for i, r := range rules {
		out[i], _ = r.(hotRule)
	}
	return out
}
