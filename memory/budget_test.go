package memory

import (
	"fmt"
	"strings"
	"testing"

	"github.com/agentguard/agentguard/trace"
)

// smallTalk is n turns of chat about nothing the card keeps, with the
// assistant's long answers.
func smallTalk(n int) []exchange {
	users := []string{
		"By the way, how is your day going?", "哈哈，你们客服还挺快的。", "Is it raining where you are?",
		"我今天加班到很晚，好累。", "Do you like working in customer service?", "嗯嗯，明白了。", "Haha, fair enough.",
		"你们周末也上班吗？", "Sorry, my cat just walked over the keyboard.", "好的好的。",
	}
	out := make([]exchange, n)
	for i := range out {
		out[i] = exchange{
			user:  users[i%len(users)],
			reply: fmt.Sprintf("That's nice to hear! (%d) %s", i, strings.Repeat("We are always happy to chat while we look after your order. ", 3)),
		}
	}
	return out
}

// TestBudget300 holds issue 15's target: at a 300-token budget the SMS ban
// of the 26-turn case and an address changed among 15 turns of small talk
// both reach every later model call and stop the call that breaks them.
func TestBudget300(t *testing.T) {
	const budget = 300
	t.Run("26-turn SMS case", func(t *testing.T) {
		r := simulate(t, "sms-300", smsConversation(), budget)
		for _, c := range r.calls {
			if c.turn < 6 {
				continue
			}
			if !containsText(c.sent, "不要自动给我发短信通知") || !strings.Contains(texts(c.sent)[0], "- prohibition sms: ") {
				t.Errorf("turn %d: the ban is not in what the model got: %+v", c.turn, c.report)
			}
			if !c.report.OverBudget && c.report.TokensAfter > budget {
				t.Errorf("turn %d: %d tokens, budget %d", c.turn, c.report.TokensAfter, budget)
			}
			if c.report.OverBudget {
				t.Logf("turn %d: over budget, %d tokens must stay", c.turn, c.report.TokensAfter)
			}
		}
		if len(r.online) != 1 || r.online[0].Rule != RuleProhibition || r.rec.Trace().Steps[r.online[0].Step].Turn != 24 {
			t.Errorf("findings = %+v, want the send_sms of turn 24 blocked", r.online)
		}
	})
	t.Run("address changed amid 15 turns of small talk", func(t *testing.T) {
		ex := []exchange{{user: "Hi! My address is 12 Oak Street, Springfield.", reply: "Thanks, noted."}}
		talk := smallTalk(15)
		ex = append(ex, talk[:7]...)
		ex = append(ex, exchange{user: "Oh and the delivery spot is different now — 221 Baker Street, London NW1 6XE.", reply: "Got it."})
		ex = append(ex, talk[7:]...)
		ex = append(ex, exchange{user: "OK, please ship my order now.",
			calls: []call{{"update_address", `{"order_id":"A1004","address":"12 Oak Street, Springfield"}`, `{"ok":true}`}}, reply: "Done."})
		changed := 8
		r := simulate(t, "address-300", ex, budget)
		for _, c := range r.calls {
			if c.turn < changed {
				continue
			}
			if !strings.Contains(texts(c.sent)[0], "221 Baker Street, London NW1 6XE") {
				t.Errorf("turn %d: the new address is not on the card the model got", c.turn)
			}
			if !c.report.OverBudget && c.report.TokensAfter > budget {
				t.Errorf("turn %d: %d tokens, budget %d", c.turn, c.report.TokensAfter, budget)
			}
		}
		if last := r.calls[len(r.calls)-1]; len(last.report.Dropped) == 0 {
			t.Errorf("nothing was dropped at the end (%d tokens): the budget does not bite", last.report.TokensBefore)
		}
		if len(r.online) != 1 || r.online[0].Verdict != trace.Clarify ||
			!strings.Contains(r.online[0].Question, "12 Oak Street, Springfield") || !strings.Contains(r.online[0].Question, "221 Baker Street") {
			t.Errorf("findings = %+v, want the old address questioned", r.online)
		}
	})
}
