package memory

import (
	"context"
	"encoding/json"
	"fmt"

	"github.com/agentguard/agentguard/trace"
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
	b, err := marshal(nonNil(cs))
	if err != nil { // cannot happen: constraints are strings and ints
		panic(err)
	}
	return &trace.Step{Kind: trace.KindMemory, Name: StepCard, Turn: turn, Result: string(b)}
}

// CompressStep returns the memory step that records a compression: Kind
// trace.KindMemory, Name StepCompress, and Result the report as JSON.
func CompressStep(r CompressReport) *trace.Step {
	b, err := marshal(r)
	if err != nil {
		panic(err)
	}
	return &trace.Step{Kind: trace.KindMemory, Name: StepCompress, Result: string(b)}
}

// decodeStep reads the Result of a card step. Every constraint must pass
// Validate and be Active or Revoked.
func decodeStep(result string) ([]Constraint, error) {
	var cs []Constraint
	if err := json.Unmarshal([]byte(result), &cs); err != nil {
		return nil, &Error{Op: "decode", Err: fmt.Errorf("card step: %w", err)}
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
type decodedKey struct{ s *trace.Step }

type decodedStep struct {
	cs  []Constraint // shared: callers only read it
	err error
}

func decodeCached(t *trace.Trace, s *trace.Step) ([]Constraint, error) {
	d := t.Memo(decodedKey{s}, func() any {
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
// The result is a new card, owned by the caller.
func CardFromTrace(t *trace.Trace, upTo int) *Card {
	return cardFromTrace(t, upTo, RuleBased(nil))
}

// cardFromTrace is CardFromTrace with ex in place of RuleBased(nil).
func cardFromTrace(t *trace.Trace, upTo int, ex Extractor) *Card {
	c := &Card{}
	recorded := false
	for _, s := range t.Steps {
		if s == nil || s.Kind != trace.KindMemory || s.Name != StepCard {
			continue
		}
		recorded = true
		if s.Turn > upTo {
			continue
		}
		cs, err := decodeCached(t, s)
		if err != nil {
			continue
		}
		for _, n := range cs {
			c.apply(n)
		}
	}
	if recorded {
		return c
	}
	for k := 0; k <= upTo && k < len(t.UserTurns); k++ {
		c.Observe(context.Background(), ex, k, t.UserTurns[k]) // RuleBased never fails
	}
	return c
}
