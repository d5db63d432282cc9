package memory

import (
	"context"
	"encoding/json"
	"fmt"

	"github.com/agentguard/agentguard/trace"
	"github.com/agentguard/agentguard/trace/lexicon"
)

// Names of the memory steps (trace.KindMemory) this package writes and reads.
const (
	// StepCard records the constraints extracted from one user turn.
	StepCard = "card"
	// StepCompress records a CompressReport.
	StepCompress = "compress"
)

// CardStep returns the memory step that records the constraints extracted
// from user turn turn, as Card.Observe returned them: Kind trace.KindMemory,
// Name StepCard, Turn turn, and Result the JSON array of the constraints
// ("[]" when there are none). Record one for every user turn, right after
// the turn itself, so that the recorder's Turn agrees with turn.
func CardStep(turn int, cs []Constraint) *trace.Step {
	size := 2
	for _, c := range cs {
		size += 80 + len(c.Kind) + len(c.Key) + len(c.Value) + len(c.Status) + len(c.Source) // the names, the punctuation and two numbers
	}
	return &trace.Step{Kind: trace.KindMemory, Name: StepCard, Turn: turn, Result: string(appendCardStep(make([]byte, 0, size), cs))}
}

// CompressStep returns the memory step that records a compression: Kind
// trace.KindMemory, Name StepCompress, and Result the report as JSON.
func CompressStep(r CompressReport) *trace.Step {
	return &trace.Step{Kind: trace.KindMemory, Name: StepCompress, Result: string(r.appendJSON(nil))}
}

// decodeStep reads the Result of a card step. Every constraint must pass
// Validate and be Active or Revoked.
func decodeStep(result string) ([]Constraint, error) {
	cs, ok := readCardStep(result)
	if !ok {
		if err := json.Unmarshal([]byte(result), &cs); err != nil {
			return nil, &Error{Op: "decode", Err: fmt.Errorf("card step: %w", err)}
		}
	}
	for _, c := range cs {
		if err := checkNew(c); err != nil {
			return nil, err
		}
	}
	return cs, nil
}

// decodedKey memoises what a card step decoded to in its trace (see
// trace.Trace.Memo). Recorded steps never change, and CardFromTrace reads
// every card step of a trace again before each tool call (memory.Enforcer),
// so that without it a long conversation would decode its whole history on
// every call.
type decodedKey struct{}

type decodedStep struct {
	cs  []Constraint // shared: callers only read it
	err error
}

// StepConstraints returns the constraints card step s of t records (see
// CardStep), decoded once per trace (trace.Trace.StepMemo) and shared with
// CardOf: read them, do not change them. A result that does not decode, a
// truncated one say, is an error, as is a step that is not a card step.
func StepConstraints(t *trace.Trace, s *trace.Step) ([]Constraint, error) {
	if s.Kind != trace.KindMemory || s.Name != StepCard {
		return nil, &Error{Op: "decode", Err: fmt.Errorf("step %d is not a card step", s.Index)}
	}
	return decodeCached(t, s)
}

func decodeCached(t *trace.Trace, s *trace.Step) ([]Constraint, error) {
	d := t.StepMemo(s, decodedKey{}, func() any {
		cs, err := decodeStep(s.Result)
		return decodedStep{cs, err}
	}).(decodedStep)
	return d.cs, d.err
}

// CardFromTrace rebuilds the card as it stood after user turn upTo of t
// (counting from 0; use len(t.UserTurns)-1 for the whole trace). It is a
// pure function of t, so that a rule gets the same card online and offline:
//
//   - When t holds card steps (StepCard), they are the card: the
//     constraints of each step whose Turn is at most upTo are applied in
//     step order. A step whose Result does not decode (a truncated one, say)
//     is skipped.
//   - Otherwise, as in a trace imported from a chat log, RuleBased(nil) runs
//     over t.UserTurns[0..upTo], as Observe would have.
//
// The result is a new card, owned by the caller. To follow a trace as it
// grows, use CardOf, which costs only what is new.
func CardFromTrace(t *trace.Trace, upTo int) *Card {
	return cardFromTrace(t, upTo, RuleBased(nil))
}

// cardFromTrace is CardFromTrace with ex in place of RuleBased(nil).
func cardFromTrace(t *trace.Trace, upTo int, ex Extractor) *Card {
	k := newKept()
	k.sync(t, upTo, ex, true)
	return k.card
}

// CardOf returns the card of t as its card steps make it, kept in t's memo
// (trace.Trace.Memo) and brought up to date with the steps recorded since
// the last call: a call costs what is new, not the whole trace. A trace
// without card steps gets its card from RuleBased(nil) over its user
// turns, as in CardFromTrace.
//
// The card is shared by every caller of CardOf on t: read it, do not
// Apply to it or Observe with it (record card steps instead). Like Memo,
// CardOf is not safe for concurrent use: call it under the recorder's lock
// (trace.Recorder.View) or on a trace of one goroutine; the card it returns
// is safe to read from any goroutine.
func CardOf(t *trace.Trace) *Card {
	return cardOf(t, len(t.UserTurns)-1, defaultRules())
}

// keptKey keys the card kept in a trace's memo, per extractor for traces
// without card steps.
type keptKey struct{ w *lexicon.Compiled }

// kept is a card following a trace: steps and user turns read so far.
type kept struct {
	card     *Card
	steps    int  // steps read
	turns    int  // user turns extracted, for traces without card steps
	maxTurn  int  // the highest turn applied
	recorded bool // t holds card steps
	ex       Extractor
}

// newKept is an empty card that has applied no turn: maxTurn is -1, so
// that a trace with no user turn yet (upTo -1) keeps it instead of
// rebuilding a card from the whole trace on every call.
func newKept() *kept { return &kept{card: &Card{}, maxTurn: -1} }

func newKeptAny() any { return newKept() }

// cardOf returns the card of t after user turn upTo, kept in t's memo. A
// trace that has gone back — a prefix shorter than one read before, a turn
// earlier than one applied — gets a new card instead.
func cardOf(t *trace.Trace, upTo int, ex *ruleBased) *Card {
	k := t.Memo(keptKey{ex.w}, newKeptAny).(*kept)
	k.ex = ex
	if k.steps > t.Len() || k.maxTurn > upTo || (!k.recorded && k.turns > upTo+1) || !k.sync(t, upTo, ex, false) {
		return cardFromTrace(t, upTo, ex)
	}
	return k.card
}

// sync applies the card steps of t after those read, up to turn upTo, or,
// for a trace without card steps, extracts its user turns up to upTo. A
// card step past upTo is skipped when oneOff is set; otherwise sync stops
// there and reports false, since a kept card cannot take it back later.
func (k *kept) sync(t *trace.Trace, upTo int, ex Extractor, oneOff bool) bool {
	c := k.card
	k.steps = max(k.steps, t.Released) // a card begun after a release reads what is kept
	for ; k.steps < t.Len(); k.steps++ {
		s := t.Step(k.steps)
		if s == nil || s.Kind != trace.KindMemory || s.Name != StepCard {
			continue
		}
		if !k.recorded {
			if k.turns > 0 { // turns were extracted before the first card step: start again
				*c = Card{}
				k.turns, k.maxTurn = 0, -1
			}
			k.recorded = true
		}
		if s.Turn > upTo {
			if !oneOff {
				return false
			}
			continue
		}
		cs, err := decodeCached(t, s)
		if err != nil {
			continue
		}
		c.mu.Lock()
		for _, n := range cs {
			c.apply(n)
		}
		c.mu.Unlock()
		k.maxTurn = max(k.maxTurn, s.Turn)
	}
	if k.recorded {
		return true
	}
	for ; k.turns <= upTo && k.turns < len(t.UserTurns); k.turns++ {
		c.Observe(context.Background(), ex, k.turns, t.UserTurns[k.turns]) // RuleBased never fails
		k.maxTurn = max(k.maxTurn, k.turns)
	}
	return true
}

// Release applies the card steps about to be released from memory
// (trace.Releaser), so that the card kept in the memo holds them after
// they are gone.
func (k *kept) Release(t *trace.Trace, n int) {
	if k.ex != nil {
		k.sync(t, max(len(t.UserTurns)-1, k.maxTurn), k.ex, true)
	}
}
