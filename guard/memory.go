package guard

import (
	"context"

	"github.com/agentguard/agentguard/memory"
	"github.com/agentguard/agentguard/trace"
	"github.com/tmc/langchaingo/llms"
)

// MemoryOptions configures the pinned memory card (package memory), which
// is on unless Off is set: the constraints the user states are extracted
// from every user turn and recorded as memory steps, the card is merged
// into the first system message of every model call (on a copy), the
// messages are compressed to a token budget without losing a constraint,
// and tool calls that break an active constraint are stopped
// (memory.Enforcer). The card is kept on the trace (memory.CardOf) and
// updated per turn, so a model call costs the same at turn 1,000 as at
// turn 10.
type MemoryOptions struct {
	// Off turns the card off: nothing is extracted, injected, compressed
	// or enforced. Config.Disable with RuleMemory leaves out only the
	// enforcement.
	Off bool
	// Extractor reads constraints from a user turn. Nil means
	// memory.RuleBased(Config.Lexicon); combine it with
	// memory.LLMExtractor for a model's recall:
	// memory.Combine(memory.RuleBased(nil), memory.LLMExtractor(m)).
	Extractor memory.Extractor
	// Budget is the token budget of what is sent to the model; longer
	// conversations are compressed (memory.Compress). Zero means no
	// compression.
	Budget int
}

// on reports whether the card is on: m is nil or not Off.
func (m *MemoryOptions) on() bool { return m == nil || !m.Off }

// budget is m's Budget, 0 for nil.
func (m *MemoryOptions) budget() int {
	if m == nil {
		return 0
	}
	return m.Budget
}

// observeTurns records the user turns of messages the trace has not seen,
// each followed, when the card is on, by a memory step holding what the
// card extracted from it, and returns the trace's card (nil when off) and
// the latest new turn's text. The card is the one kept on the trace: each
// call reads only the steps recorded since the last.
func (g *Guard) observeTurns(ctx context.Context, rec *trace.Recorder, messages []llms.MessageContent) (*memory.Card, string) {
	on := g.cfg.Memory.on() && !g.cfg.Bypass
	seen := rec.UserTurns()
	n := 0
	latest := ""
	for _, m := range messages {
		if m.Role != llms.ChatMessageTypeHuman || isGuardFeedback(m) {
			continue
		}
		if n >= seen {
			latest = messageText(m)
			var current []memory.Constraint
			if on { // the card before the turn: after it, a turn without its card step would be read as an imported log's
				current = traceCard(rec).Active()
			}
			rec.UserTurn(latest)
			if on {
				turn := rec.UserTurns() - 1
				cs, err := memory.Extract(ctx, g.extractor, turn, latest, current)
				if err != nil && g.cfg.Observe.Logger != nil {
					g.cfg.Observe.Logger.LogAttrs(ctx, errorLevel, "agentguard memory extraction failed", attrTrace(rec.ID()), attrError(err))
				}
				step := memory.CardStep(turn, cs)
				step.Start = g.now()
				rec.Add(step)
			}
		}
		n++
	}
	if !on {
		return nil, latest
	}
	return traceCard(rec), latest
}

// traceCard returns the card kept on rec's trace, brought up to date.
func traceCard(rec *trace.Recorder) *memory.Card {
	var c *memory.Card
	rec.View(func(t *trace.Trace) { c = memory.CardOf(t) })
	return c
}

// withCard returns what is sent to the model: the messages compressed to
// the memory budget (recorded as a memory step when anything changed) and
// the card injected. Without a card, or in shadow mode, where the card is
// still kept and enforced in detect-only fashion, it returns messages
// unchanged.
func (g *Guard) withCard(rec *trace.Recorder, card *memory.Card, messages []llms.MessageContent) []llms.MessageContent {
	if card == nil || g.cfg.Shadow {
		return messages // shadow mode observes; it must not help the model
	}
	sent := messages
	if b := g.cfg.Memory.budget(); b > 0 {
		var rep memory.CompressReport
		sent, rep = memory.Compress(messages, b, card)
		if len(rep.Dropped) > 0 || len(rep.Elided) > 0 || rep.OverBudget {
			step := memory.CompressStep(rep)
			step.Start = g.now()
			rec.Add(step)
		}
	}
	return memory.Inject(sent, card)
}
