package memory

import (
	"fmt"
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
						if !reflect.DeepEqual(gotRep, wantRep) {
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
