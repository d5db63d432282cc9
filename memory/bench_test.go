package memory

import (
	"context"
	"fmt"
	"slices"
	"testing"

	"github.com/agentguard/agentguard/trace"
)

// longConversation is n user turns, alternating Chinese and English, with a
// tool exchange every third turn and constraints sprinkled in.
func longConversation(n int) []exchange {
	base := append(smsConversation(), addressConversation()...)
	out := make([]exchange, n)
	for i := range out {
		e := base[i%len(base)]
		if i%len(base) == 0 && i > 0 {
			e.user = fmt.Sprintf("Another thing about order A%d: please don't call me.", 1000+i)
		}
		if i%3 == 0 && len(e.calls) == 0 {
			e.calls = []call{{"search_kb", fmt.Sprintf(`{"query":"question %d"}`, i), bulky(fmt.Sprint("topic ", i))}}
		}
		for j := range e.calls {
			if e.calls[j].name == "send_sms" || e.calls[j].name == "update_address" || e.calls[j].name == "submit_return" {
				e.calls[j].name = "query_order" // keep the run free of findings
			}
		}
		out[i] = e
	}
	return out
}

func BenchmarkMemory200Turns(b *testing.B) {
	const turns, budget = 200, 4000
	ex := longConversation(turns)
	r := simulate(b, "bench", ex, 0)
	ctx := context.Background()
	msgs := r.messages

	b.Run("baseline-estimate-tokens", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			n := 0
			for _, m := range msgs {
				n += messageTokens(m)
			}
			_ = n
		}
	})
	b.Run("extract+compress+inject", func(b *testing.B) {
		// The whole conversation: 200 extractions, then one compression
		// and one injection of the 200-turn history.
		b.ReportAllocs()
		for b.Loop() {
			card := &Card{}
			for k, e := range ex {
				card.Observe(ctx, RuleBased(nil), k, e.user)
			}
			sent, _ := Compress(msgs, budget, card)
			_ = Inject(sent, card)
		}
	})
	b.Run("per-model-call", func(b *testing.B) {
		// What the guard adds to one model call at turn 200: extract the
		// new turn, compress, inject.
		card := CardFromTrace(r.rec.Trace(), turns-2)
		last := ex[turns-1].user
		b.ReportAllocs()
		for b.Loop() {
			card.Observe(ctx, RuleBased(nil), turns-1, last)
			sent, _ := Compress(msgs, budget, card)
			_ = Inject(sent, card)
		}
	})
	tr := r.rec.Trace()
	send := &trace.Step{Index: len(tr.Steps), Kind: trace.KindTool, Name: "send_sms", Args: `{"phone":"1","text":"hi"}`, Turn: turns - 1}
	b.Run("enforce-with-card-steps", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			if len((Enforcer{}).Check(tr, send)) == 0 {
				b.Fatal("no finding")
			}
		}
	})
	imported := withoutMemorySteps(tr)
	b.Run("enforce-imported-log", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			if len((Enforcer{}).Check(imported, send)) == 0 {
				b.Fatal("no finding")
			}
		}
	})
}

// BenchmarkCardPerCall measures what the card adds to one model call at
// turn 10, 100 and 1,000 of a conversation whose turns all went through
// the card: bring the trace's card up to date (CardOf; one new card step
// per call, as a new user turn brings) and inject it into the messages.
// The baseline is copying the message slice, which Inject does so that
// the caller's messages are never modified.
func BenchmarkCardPerCall(b *testing.B) {
	for _, turns := range []int{10, 100, 1000} {
		ex := longConversation(turns)
		r := simulate(b, "bench", ex, 0)
		msgs := r.messages
		b.Run(fmt.Sprintf("turns=%d/baseline-copy", turns), func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				_ = slices.Clone(msgs)
			}
		})
		b.Run(fmt.Sprintf("turns=%d/card", turns), func(b *testing.B) {
			rec := simulate(b, "bench", ex, 0).rec
			b.ReportAllocs()
			for i := 0; b.Loop(); i++ {
				rec.Add(CardStep(turns-1, nil)) // what a new turn records
				var c *Card
				rec.View(func(t *trace.Trace) { c = CardOf(t) })
				_ = Inject(msgs, c)
			}
		})
		b.Run(fmt.Sprintf("turns=%d/card-injector", turns), func(b *testing.B) {
			// The same through an Injector, as the guard injects: the
			// messages are not copied again on every call.
			rec := simulate(b, "bench", ex, 0).rec
			var j Injector
			b.ReportAllocs()
			for i := 0; b.Loop(); i++ {
				rec.Add(CardStep(turns-1, nil))
				var c *Card
				rec.View(func(t *trace.Trace) { c = CardOf(t) })
				_ = j.Inject(msgs, c)
			}
		})
		b.Run(fmt.Sprintf("turns=%d/compressor-budget=4000", turns), func(b *testing.B) {
			// Compressing to a budget through a Compressor, as the guard
			// does: each message is estimated and classified once.
			card := CardFromTrace(r.rec.Trace(), turns-1)
			var z Compressor
			b.ReportAllocs()
			for b.Loop() {
				_, _ = z.Compress(msgs, 4000, card)
			}
		})
		b.Run(fmt.Sprintf("turns=%d/compress-budget=4000", turns), func(b *testing.B) {
			// The baseline: Compress from scratch on every call.
			card := CardFromTrace(r.rec.Trace(), turns-1)
			b.ReportAllocs()
			for b.Loop() {
				_, _ = Compress(msgs, 4000, card)
			}
		})
		b.Run(fmt.Sprintf("turns=%d/rebuild-from-trace", turns), func(b *testing.B) {
			// What every call did before the card was kept on the trace.
			tr := r.rec.Trace()
			b.ReportAllocs()
			for b.Loop() {
				_ = Inject(msgs, CardFromTrace(tr, turns-1))
			}
		})
	}
}

// BenchmarkCardNewIDs is the cost of one user turn on a card that already
// holds n turns, each naming a new order and e-mail, as a support session
// that goes from order to order does: Observe, then Text for the prompt.
// The card is started afresh, untimed, whenever it has grown by a tenth,
// so every measured turn sees a card of about n turns. Cost per turn
// should be flat: the 10,000 figure within 2× of the 10 one.
func BenchmarkCardNewIDs(b *testing.B) {
	ctx := context.Background()
	say := func(i int) string {
		if i%2 == 0 {
			return fmt.Sprintf("Please check order A%d for me, my email is c%d@example.com", 100000+i, i)
		}
		return fmt.Sprintf("订单 A%d 到哪里了？我的邮箱是 c%d@example.com", 100000+i, i)
	}
	for _, n := range []int{10, 1000, 10000} {
		b.Run(fmt.Sprintf("turns=%d", n), func(b *testing.B) {
			var card *Card
			turns, every := 0, max(3, n/10)
			start := func() {
				b.StopTimer()
				card = &Card{}
				for i := range n {
					if _, err := card.Observe(ctx, RuleBased(nil), i, say(i)); err != nil {
						b.Fatal(err)
					}
				}
				turns = 0
				b.StartTimer()
			}
			start()
			b.ReportAllocs()
			for i := 0; b.Loop(); i++ {
				if turns == every {
					start()
				}
				if _, err := card.Observe(ctx, RuleBased(nil), n+turns, say(n+i)); err != nil {
					b.Fatal(err)
				}
				if card.Text() == "" {
					b.Fatal("empty card")
				}
				turns++
			}
		})
	}
}

// BenchmarkExtractTurn is the rule-based extraction of one user turn that
// names a new order and nothing else the card keeps, in English or in
// Chinese: the work each turn of a support chat costs the card.
func BenchmarkExtractTurn(b *testing.B) {
	ctx := context.Background()
	card := &Card{}
	b.ReportAllocs()
	for i := 0; b.Loop(); i++ {
		text := fmt.Sprintf("Please send the invoice of order A%d to its customer.", 1000+i)
		if i%2 == 1 {
			text = fmt.Sprintf("请把订单 A%d 的发票发给客户。", 1000+i)
		}
		if _, err := card.Extract(ctx, nil, i, text); err != nil {
			b.Fatal(err)
		}
	}
}
