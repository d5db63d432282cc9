package guard

import (
	"context"

	"github.com/agentguard/agentguard/memory"
	"github.com/agentguard/agentguard/trace"
	"github.com/tmc/langchaingo/llms"
)

// MemoryOptions turns on the pinned memory card (package memory): the
// constraints the user states are extracted from every user turn and
// recorded as memory steps, the card is merged into the first system
// message of every model call (on a copy), the messages are compressed to
// a token budget without losing a constraint, and tool calls that break an
// active constraint are blocked (memory.Enforcer).
type MemoryOptions struct {
	// Extractor reads constraints from a user turn. Nil means
	// memory.RuleBased(nil); combine it with memory.LLMExtractor for recall.
	Extractor memory.Extractor
	// Budget is the token budget of what is sent to the model; longer
	// conversations are compressed (memory.Compress). Zero means no
	// compression.
	Budget int
}

// observeTurns records the user turns of messages the trace has not seen,
// each followed by a memory step holding what the card extracted from it,
// and returns the card and the latest new turn's text.
func (g *Guard) observeTurns(ctx context.Context, rec *trace.Recorder, messages []llms.MessageContent) (*memory.Card, string) {
	var card *memory.Card
	if g.cfg.Memory != nil && !g.cfg.Bypass {
		card = memory.CardFromTrace(rec.Trace(), rec.UserTurns()-1)
	}
	seen := rec.UserTurns()
	n := 0
	latest := ""
	for _, m := range messages {
		if m.Role != llms.ChatMessageTypeHuman || isGuardFeedback(m) {
			continue
		}
		if n >= seen {
			latest = messageText(m)
			rec.UserTurn(latest)
			if card != nil {
				turn := rec.UserTurns() - 1
				cs, err := card.Observe(ctx, g.extractor, turn, latest)
				if err != nil && g.cfg.Observe.Logger != nil {
					g.cfg.Observe.Logger.LogAttrs(ctx, errorLevel, "agentguard memory extraction failed", attrTrace(rec.ID()), attrError(err))
				}
				rec.Add(memory.CardStep(turn, cs))
			}
		}
		n++
	}
	return card, latest
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
	if g.cfg.Memory.Budget > 0 {
		var rep memory.CompressReport
		sent, rep = memory.Compress(messages, g.cfg.Memory.Budget, card)
		if len(rep.Dropped) > 0 || len(rep.Elided) > 0 || rep.OverBudget {
			rec.Add(memory.CompressStep(rep))
		}
	}
	return memory.Inject(sent, card)
}
