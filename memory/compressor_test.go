package memory

import (
	"context"
	"fmt"
	"math/rand/v2"
	"reflect"
	"slices"
	"testing"

	"github.com/tmc/langchaingo/llms"
)

// TestCompressorMatchesCompress follows conversations message by message
// with one Compressor, at several budgets, and checks every call's result
// and report against the reference: Compress as it was before Compressor,
// which read every message on every call. It also rewrites the history
// between calls (the last message, the first, one in the middle, a
// shorter conversation, a retry's feedback taken back, the last message
// changed in place), where a Compressor must read again.
func TestCompressorMatchesCompress(t *testing.T) {
	r := simulate(t, "z", longConversation(48), 0)
	tr := r.rec.Trace()
	plain := r.messages
	// the same with the guard's retry feedback now and then: not a user turn
	var withFeedback []llms.MessageContent
	for i, m := range plain {
		withFeedback = append(withFeedback, m)
		if i%17 == 5 {
			withFeedback = append(withFeedback, userMsg("[agentguard] Your answer was rejected: try again."))
		}
	}
	noSystem := plain[1:]
	convs := []struct {
		name string
		msgs []llms.MessageContent
	}{{"plain", plain}, {"feedback", withFeedback}, {"no-system", noSystem}}
	for _, conv := range convs {
		for _, budget := range []int{0, 200, 600, 1500, 4000, 1 << 20} {
			t.Run(fmt.Sprintf("%s/budget=%d", conv.name, budget), func(t *testing.T) {
				var z Compressor
				msgs := conv.msgs
				check := func(what string, msgs []llms.MessageContent) {
					t.Helper()
					users := 0
					for _, m := range msgs {
						if m.Role == llms.ChatMessageTypeHuman && !isFeedback(m) {
							users++
						}
					}
					for _, card := range []*Card{nil, CardFromTrace(tr, users-1)} {
						before := deepCopy(msgs)
						got, gotRep := z.Compress(msgs, budget, card)
						want, wantRep := compressRef(msgs, budget, card)
						if !reflect.DeepEqual(msgs, before) {
							t.Fatalf("%s: Compressor changed its input", what)
						}
						if !reflect.DeepEqual(got, want) {
							t.Fatalf("%s: messages differ from Compress's (%d and %d kept)", what, len(got), len(want))
						}
						if !sameReport(gotRep, wantRep) {
							t.Fatalf("%s: report\n%+v\nwant\n%+v", what, gotRep, wantRep)
						}
					}
				}
				for k := 1; k <= len(msgs); k++ {
					check(fmt.Sprintf("%d messages", k), msgs[:k])
				}
				last := slices.Clone(msgs)
				last[len(last)-1] = userMsg("Actually, please don't call me, email me instead.")
				check("last message rewritten", last)
				check("back to the original", msgs)
				check("shorter", msgs[:len(msgs)/2])
				first := slices.Clone(msgs)
				first[0] = sysMsg("You are a terse assistant.")
				check("first message rewritten", first)
				middle := slices.Clone(msgs)
				check("before a middle message is replaced", middle)
				middle[len(middle)/2] = userMsg("(an old turn, cleared by the agent)")
				check("a middle message replaced", middle)
				retry := append(slices.Clip(msgs), userMsg("[agentguard] Your answer was rejected: try again."))
				check("retry", retry)
				check("retry taken back", append(slices.Clip(msgs), aiMsg("Sure.")))
				inPlace := slices.Clone(msgs)
				check("before an in-place change", inPlace)
				inPlace[len(inPlace)-1].Parts[0] = llms.TextContent{Text: "changed in place"}
				check("after an in-place change", inPlace)
			})
		}
	}
}

// TestCompressorReadsOnlyNewMessages pins what makes a Compressor flat:
// once it has read a conversation, a call under budget allocates nothing
// more for a longer history.
func TestCompressorReadsOnlyNewMessages(t *testing.T) {
	msgs := simulate(t, "z", longConversation(60), 0).messages
	var z Compressor
	z.Compress(msgs, 1<<20, nil)
	if got := testing.AllocsPerRun(100, func() { z.Compress(msgs, 1<<20, nil) }); got != 0 {
		t.Errorf("a call on a conversation already read allocates %v times, want 0", got)
	}
}

// sameReport reports whether two reports say the same; an empty list and
// none say the same.
func sameReport(a, b CompressReport) bool {
	return a.Budget == b.Budget && a.TokensBefore == b.TokensBefore && a.TokensAfter == b.TokensAfter &&
		a.Messages == b.Messages && a.Kept == b.Kept && a.OverBudget == b.OverBudget &&
		slices.Equal(a.Elided, b.Elided) && slices.Equal(a.Dropped, b.Dropped) && slices.Equal(a.Pinned, b.Pinned)
}

// randomConversation builds a conversation from script, a byte per
// message, including what real logs rarely hold and Compress must still
// handle as before: results answering calls far back or no call at all,
// tool messages without a result, user messages with tool parts, the
// guard's feedback, generic and function messages, several system
// messages. Its user turns, in Chinese and English, state constraints now
// and then; the card is what RuleBased finds in them.
func randomConversation(script []byte) ([]llms.MessageContent, *Card) {
	turns := []string{
		"Hi, I need help with order A1004.", "请不要给我打电话，有事发邮件。", "How long does shipping take?",
		"好的，谢谢。", "Please don't text me, I'm in meetings all day.", "我的收货地址改成上海市徐汇区淮海中路8号。",
		"Oh and the delivery spot is different now — 221 Baker Street, London NW1 6XE.", "嗯嗯，明白了。",
		"You may text me again now.", "6月1日到6月5日之间送货比较好。",
	}
	var msgs []llms.MessageContent
	var ids []string
	card := &Card{}
	users := 0
	for k, b := range script {
		id := func() string {
			if len(ids) == 0 {
				return "none"
			}
			return ids[int(b>>4)%len(ids)] // often far back
		}
		content := "ok"
		if b&1 == 0 {
			content = bulky(fmt.Sprint("topic ", k))
		}
		switch b % 16 {
		case 0:
			msgs = append(msgs, sysMsg("Be brief."))
		case 1, 2, 3:
			text := turns[(k+int(b>>4))%len(turns)]
			card.Observe(context.Background(), nil, users, text)
			users++
			msgs = append(msgs, userMsg(text))
		case 4:
			msgs = append(msgs, userMsg("[agentguard] Your answer was rejected: try again."))
		case 5, 6, 7:
			msgs = append(msgs, aiMsg(fmt.Sprintf("Noted (%d). Anything else?", k)))
		case 8, 9:
			n := 1 + int(b>>6)
			var cs []string
			for range n {
				ids = append(ids, fmt.Sprint("c", k, "-", len(ids)))
				cs = append(cs, ids[len(ids)-1])
			}
			msgs = append(msgs, callMsg(cs...))
		case 10, 11:
			if len(ids) > 0 {
				msgs = append(msgs, resultMsg(ids[len(ids)-1], content))
			} else {
				msgs = append(msgs, resultMsg("lost", content))
			}
		case 12:
			msgs = append(msgs, resultMsg(id(), content))
		case 13:
			msgs = append(msgs, llms.TextParts(llms.ChatMessageTypeTool, "a tool message without a result"))
		case 14:
			m := resultMsg(id(), content)
			m.Role = llms.ChatMessageTypeHuman
			if b&2 == 0 {
				text := turns[k%len(turns)]
				m.Parts = append(m.Parts, llms.TextContent{Text: text})
			}
			msgs = append(msgs, m)
		case 15:
			role := llms.ChatMessageTypeGeneric
			if b&2 == 0 {
				role = llms.ChatMessageTypeFunction
			}
			msgs = append(msgs, llms.TextParts(role, fmt.Sprint("aside ", k)))
		}
	}
	return msgs, card
}

// checkAgainstRef compresses every prefix of the conversation script
// makes, growing, with one Compressor, and compares each call with the
// reference, with the card and without.
func checkAgainstRef(t *testing.T, script []byte, budgets []int) {
	t.Helper()
	msgs, card := randomConversation(script)
	for _, budget := range budgets {
		var z Compressor
		for k := 1; k <= len(msgs); k++ {
			for _, c := range []*Card{card, card, nil} { // the second call finds nothing changed
				got, gotRep := z.Compress(msgs[:k], budget, c)
				want, wantRep := compressRef(msgs[:k], budget, c)
				if !reflect.DeepEqual(got, want) {
					t.Fatalf("budget %d, %d messages, card %v: messages differ from Compress's (%d and %d kept)", budget, k, c != nil, len(got), len(want))
				}
				if !sameReport(gotRep, wantRep) {
					t.Fatalf("budget %d, %d messages, card %v: report\n%+v\nwant\n%+v", budget, k, c != nil, gotRep, wantRep)
				}
				if got, want := CompressStep(gotRep).Result, mustMarshal(t, gotRep); got != want {
					t.Fatalf("CompressStep writes\n%s\nencoding/json\n%s", got, want)
				}
			}
		}
	}
}

// TestCompressorMatchesCompressRandom checks random conversations, grown a
// message at a time, at budgets from tight to loose.
func TestCompressorMatchesCompressRandom(t *testing.T) {
	rng := rand.New(rand.NewPCG(19, 1000))
	n := 80
	if testing.Short() {
		n = 20
	}
	for k := range n {
		script := make([]byte, 10+rng.IntN(120))
		for i := range script {
			script[i] = byte(rng.Uint32())
		}
		t.Run(fmt.Sprint(k), func(t *testing.T) { checkAgainstRef(t, script, []int{60, 200, 500, 1500}) })
	}
}

func FuzzCompressor(f *testing.F) {
	f.Add([]byte{0, 1, 5, 8, 10, 1, 6, 2, 9, 11, 12, 7, 3})
	f.Add([]byte{1, 8, 0x48, 10, 11, 12, 0x2c, 13, 14, 15, 2, 5, 4, 3, 0x31, 7})
	f.Add([]byte("a conversation of many kinds of messages, made from bytes"))
	f.Fuzz(func(t *testing.T, script []byte) {
		if len(script) > 200 {
			script = script[:200]
		}
		checkAgainstRef(t, script, []int{50, 300, 1000})
	})
}

// benchTurns are ordinary user turns, small talk with a constraint now
// and then, as the guard's BenchmarkCardModelCall has them.
var benchTurns = []string{
	"Hi, I need help with order A1004.", "我的收货地址是北京市朝阳区建国路88号。", "How long does shipping take?",
	"好的，谢谢。", "Please don't text me, I'm in meetings all day.", "有没有保修？",
	"Oh and the delivery spot is different now — 221 Baker Street, London NW1 6XE.", "那发货后大概几天能到？",
	"Thanks, that's all for now.", "6月1日到6月5日之间送货比较好。", "What's your return policy?", "嗯嗯，明白了。",
}

// BenchmarkCompressorCall measures one call of a Compressor following a
// conversation at turn 10, 100, 1,000 and 10,000, with a budget of 4,000
// tokens (which the conversation passes after about 130 turns) and the
// card of its turns: "follow-up" sends the same messages again,
// "new-turn" a user turn and an answer more on every call. Issue 19 wants
// turn 1,000 within 2× of turn 10.
func BenchmarkCompressorCall(b *testing.B) {
	for _, turns := range []int{10, 100, 1000, 10000} {
		card := &Card{}
		msgs := []llms.MessageContent{sysMsg("You are the after-sales assistant of a small online shop. Be brief.")}
		for i := range turns {
			text := benchTurns[i%len(benchTurns)]
			card.Observe(context.Background(), nil, i, text)
			msgs = append(msgs, userMsg(text), aiMsg(fmt.Sprintf("Noted (%d). Is there anything else I can help with?", i)))
		}
		msgs = msgs[:len(msgs)-1]
		b.Run(fmt.Sprintf("follow-up/turns=%d", turns), func(b *testing.B) {
			var z Compressor
			z.Compress(msgs, 4000, card)
			b.ReportAllocs()
			for b.Loop() {
				z.Compress(msgs, 4000, card)
			}
		})
		b.Run(fmt.Sprintf("new-turn/turns=%d", turns), func(b *testing.B) {
			var z Compressor
			grown := slices.Clip(msgs)
			z.Compress(grown, 4000, card)
			b.ReportAllocs()
			for i := 0; b.Loop(); i++ {
				if i%64 == 63 { // keep the conversation near its turn
					b.StopTimer()
					grown = slices.Clip(msgs)
					z.Compress(grown, 4000, card)
					b.StartTimer()
				}
				grown = append(grown, aiMsg("Sure."), userMsg(benchTurns[i%len(benchTurns)]))
				z.Compress(grown, 4000, card)
			}
		})
	}
}

func mustMarshal(t *testing.T, v any) string {
	t.Helper()
	b, err := marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}
