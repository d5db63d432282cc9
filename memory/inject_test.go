package memory

import (
	"fmt"
	"reflect"
	"slices"
	"strings"
	"testing"

	"github.com/tmc/langchaingo/llms"
)

// deepCopy copies messages down to their parts, to compare against later.
func deepCopy(messages []llms.MessageContent) []llms.MessageContent {
	if messages == nil {
		return nil
	}
	out := make([]llms.MessageContent, len(messages))
	for i, m := range messages {
		out[i] = llms.MessageContent{Role: m.Role, Parts: slices.Clone(m.Parts)}
	}
	return out
}

func TestInject(t *testing.T) {
	card := observeAll(t, "不要自动给我发短信通知", "My address is now 48 Pine Avenue, Shelbyville.")
	block := CardBegin + "\n" + card.Text() + "\n" + CardEnd
	human := llms.TextParts(llms.ChatMessageTypeHuman, "hi")
	sys := func(parts ...string) llms.MessageContent { return llms.TextParts(llms.ChatMessageTypeSystem, parts...) }
	tests := []struct {
		name string
		in   []llms.MessageContent
		card *Card
		want []llms.MessageContent
	}{
		{"prepends a system message", []llms.MessageContent{human}, card,
			[]llms.MessageContent{sys(block), human}},
		{"appends to the system message", []llms.MessageContent{sys("Be brief."), human}, card,
			[]llms.MessageContent{sys("Be brief.\n\n" + block), human}},
		{"appends to the last text part", []llms.MessageContent{sys("Be brief.", "Be kind."), human}, card,
			[]llms.MessageContent{sys("Be brief.", "Be kind.\n\n"+block), human}},
		{"uses the first system message", []llms.MessageContent{human, sys("A"), sys("B")}, card,
			[]llms.MessageContent{human, sys("A\n\n" + block), sys("B")}},
		{"adds a part after an image", []llms.MessageContent{{Role: llms.ChatMessageTypeSystem, Parts: []llms.ContentPart{llms.TextContent{Text: "A"}, llms.ImageURLContent{URL: "u"}}}, human}, card,
			[]llms.MessageContent{{Role: llms.ChatMessageTypeSystem, Parts: []llms.ContentPart{llms.TextContent{Text: "A"}, llms.ImageURLContent{URL: "u"}, llms.TextContent{Text: block}}}, human}},
		{"replaces an old card", []llms.MessageContent{sys("Be brief.\n\n" + CardBegin + "\nold card\n" + CardEnd + "\nTrailing rule."), human}, card,
			[]llms.MessageContent{sys("Be brief.\nTrailing rule.\n\n" + block), human}},
		{"an empty card removes the old one", []llms.MessageContent{sys("Be brief.\n\n" + CardBegin + "\nold\n" + CardEnd), human}, &Card{},
			[]llms.MessageContent{sys("Be brief."), human}},
		{"an empty card removes a system message that held only the card", []llms.MessageContent{sys(CardBegin + "\nold\n" + CardEnd), human}, nil,
			[]llms.MessageContent{human}},
		{"an empty card and no old one change nothing", []llms.MessageContent{sys("Be brief."), human}, &Card{},
			[]llms.MessageContent{sys("Be brief."), human}},
		{"no messages", nil, card, []llms.MessageContent{sys(block)}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			before := deepCopy(tt.in)
			got := Inject(tt.in, tt.card)
			if !reflect.DeepEqual(got, tt.want) {
				t.Errorf("Inject =\n%#v\nwant\n%#v", got, tt.want)
			}
			if !reflect.DeepEqual(tt.in, before) {
				t.Errorf("Inject changed its input:\n%#v\nwas\n%#v", tt.in, before)
			}
			if again := Inject(got, tt.card); !reflect.DeepEqual(again, got) {
				t.Errorf("Inject is not idempotent:\n%#v\nthen\n%#v", got, again)
			}
		})
	}
}

func TestInjectLeavesCallerUntouched(t *testing.T) {
	card := observeAll(t, "Don't text me.")
	backing := make([]llms.MessageContent, 2, 8) // spare capacity: appending must not write here
	backing[0] = llms.TextParts(llms.ChatMessageTypeSystem, "Be brief.", "Answer in English.")
	backing[1] = llms.TextParts(llms.ChatMessageTypeHuman, "hi")
	sysParts := backing[0].Parts
	before := deepCopy(backing[:cap(backing)])

	got := Inject(backing, card)
	got = append(got, llms.TextParts(llms.ChatMessageTypeAI, "hello"))
	got[1].Parts = append(got[1].Parts, llms.TextContent{Text: "appended"})
	got[0].Parts[0] = llms.TextContent{Text: "overwritten"}

	if !reflect.DeepEqual(backing[:cap(backing)], before) {
		t.Errorf("the caller's backing array changed:\n%#v", backing[:cap(backing)])
	}
	if sysParts[0].(llms.TextContent).Text != "Be brief." || sysParts[1].(llms.TextContent).Text != "Answer in English." {
		t.Errorf("the caller's Parts changed: %#v", sysParts)
	}

	// Nothing to inject: the same messages, clipped.
	empty := Inject(backing, nil)
	if &empty[0] != &backing[0] || cap(empty) != len(backing) {
		t.Errorf("Inject with no card copied or did not clip")
	}
	if n := testing.AllocsPerRun(100, func() { Inject(backing, nil) }); n != 0 {
		t.Errorf("Inject with no card allocates %v times", n)
	}
}

func TestStripBlocks(t *testing.T) {
	for in, want := range map[string]string{
		"A\n\n" + CardBegin + "\nx\n" + CardEnd:                                          "A",
		"A\n\n" + CardBegin + "\nx\n" + CardEnd + "\n\n" + CardBegin + "\ny\n" + CardEnd: "A",
		"A\n\n" + CardBegin + "\nno end":                                                 "A",
		"no card":                                                                        "no card",
	} {
		if got := stripBlocks(in); got != want {
			t.Errorf("stripBlocks(%q) = %q, want %q", in, got, want)
		}
	}
	if strings.Contains(Inject([]llms.MessageContent{llms.TextParts(llms.ChatMessageTypeSystem, "A")}, &Card{})[0].Parts[0].(llms.TextContent).Text, CardBegin) {
		t.Error("an empty card was injected")
	}
}

// TestInjectorMatchesInject follows conversations message by message with
// one Injector and checks every call's result against Inject's. With
// detach, a caller keeps and extends every slice returned (calling Detach
// before the next call), and none of them changed afterwards; without, the
// Injector changes the card in place, and only the last slice returned is
// kept. The card grows with the turns, so the system message changes now
// and then.
func TestInjectorMatchesInject(t *testing.T) {
	r := simulate(t, "j", longConversation(48), 0)
	tr := r.rec.Trace()
	plain := r.messages
	withOldBlock := slices.Clone(plain)
	withOldBlock[0] = sysMsg(systemPrompt + "\n\n" + CardBegin + "\n- old\n" + CardEnd)
	convs := []struct {
		name string
		msgs []llms.MessageContent
	}{
		{"plain", plain},
		{"old block", withOldBlock},
		{"no system", plain[1:]},
		{"card-only system", append([]llms.MessageContent{sysMsg(CardBegin + "\n- old\n" + CardEnd)}, plain[1:]...)},
		{"system later", append([]llms.MessageContent{userMsg("hi"), sysMsg("Be brief.")}, plain[1:]...)},
	}
	for _, conv := range convs {
		for _, c := range []struct{ withCard, detach, extend bool }{
			{true, true, false}, {false, true, false}, {true, false, false}, {false, false, false}, {true, false, true}, {false, true, true},
		} {
			withCard := c.withCard
			t.Run(fmt.Sprintf("%s/card=%v/detach=%v/extend=%v", conv.name, withCard, c.detach, c.extend), func(t *testing.T) {
				var j Injector
				var kept, copies [][]llms.MessageContent
				appending := false // msgs extend the last call's: Extend may be used
				check := func(what string, msgs []llms.MessageContent) {
					t.Helper()
					users := 0
					for _, m := range msgs {
						if m.Role == llms.ChatMessageTypeHuman && !isFeedback(m) {
							users++
						}
					}
					var card *Card
					if withCard {
						card = CardFromTrace(tr, users-1)
					}
					{
						before := deepCopy(msgs)
						inject := j.Inject
						if c.extend && appending {
							inject = j.Extend
						}
						got, want := inject(msgs, card), Inject(msgs, card)
						if !reflect.DeepEqual(msgs, before) {
							t.Fatalf("%s: Injector changed its input", what)
						}
						if !reflect.DeepEqual(got, want) {
							t.Fatalf("%s: got %d messages, not Inject's %d", what, len(got), len(want))
						}
						// a model appending to its messages must not write into the Injector's
						got = append(got, aiMsg("appended by the model"))
						if !c.detach {
							kept, copies = kept[:0], copies[:0]
						}
						kept, copies = append(kept, got), append(copies, deepCopy(got))
						if c.detach {
							j.Detach()
						}
					}
				}
				msgs := conv.msgs
				for k := 1; k <= len(msgs); k++ {
					check(fmt.Sprintf("%d messages", k), msgs[:k])
					appending = true
				}
				appending = false
				last := slices.Clone(msgs)
				last[len(last)-1] = userMsg("Actually, please don't call me.")
				check("last rewritten", last)
				check("shorter", msgs[:len(msgs)/2])
				first := slices.Clone(msgs)
				first[0] = sysMsg("You are a terse assistant.")
				check("first rewritten", first)
				middle := slices.Clone(msgs)
				check("before a middle message is replaced", middle)
				middle[len(middle)/2] = aiMsg("(an old answer, cleared)")
				check("a middle message replaced", middle)
				middle[len(middle)/3].Parts = slices.Clone(middle[len(middle)/3].Parts)
				middle[len(middle)/3].Parts[0] = llms.TextContent{Text: "(cleared in a copy)"}
				check("a middle message's parts replaced", middle)
				for i := range kept {
					if !reflect.DeepEqual(kept[i], copies[i]) {
						t.Fatalf("call %d's result changed after it was returned", i)
					}
				}
			})
		}
	}
}

// TestInjectorChangesCardInPlace checks that a new card costs one message,
// not a copy of the conversation: the result shares its messages with the
// last one, whose system message now holds the new card; after Detach the
// last result stays as it was and the new card goes into a copy.
func TestInjectorChangesCardInPlace(t *testing.T) {
	for _, system := range []bool{true, false} {
		t.Run(fmt.Sprintf("system=%v", system), func(t *testing.T) {
			var msgs []llms.MessageContent
			if system {
				msgs = append(msgs, sysMsg("Be brief."))
			}
			for i := range 500 {
				msgs = append(msgs, userMsg(fmt.Sprintf("订单 A%d 的发票", i)), aiMsg("好的。"))
			}
			var j Injector
			first := j.Inject(msgs, observeAll(t, "Don't text me."))
			second := j.Inject(msgs, observeAll(t, "Don't text me.", "My address is now 48 Pine Avenue, Shelbyville."))
			if &first[len(first)-1] != &second[len(second)-1] {
				t.Fatal("a new card copied the conversation")
			}
			if want := Inject(msgs, observeAll(t, "Don't text me.", "My address is now 48 Pine Avenue, Shelbyville.")); !reflect.DeepEqual(second, want) {
				t.Fatal("the card changed in place is not Inject's")
			}
			kept := deepCopy(second)
			j.Detach()
			third := j.Inject(msgs, observeAll(t, "我的地址改成了北京市朝阳区建国路88号。"))
			if &third[len(third)-1] == &second[len(second)-1] {
				t.Fatal("after Detach, a new card did not go into a copy")
			}
			if !reflect.DeepEqual(second, kept) {
				t.Fatal("after Detach, the slice returned last changed")
			}
			if want := Inject(msgs, observeAll(t, "我的地址改成了北京市朝阳区建国路88号。")); !reflect.DeepEqual(third, want) {
				t.Fatal("the card changed in a copy is not Inject's")
			}
		})
	}
}
