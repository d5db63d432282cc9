package guard_test

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/agentguard/agentguard/guard"
	"github.com/agentguard/agentguard/guard/internal/testkit"
	"github.com/tmc/langchaingo/llms"
)

// instantModel answers every call at once and keeps nothing, so that what
// a benchmark measures is the wrapper (guardtest's models record every
// call's messages, which at turn 1,000 is most of the cost).
type instantModel struct{}

func (instantModel) GenerateContent(context.Context, []llms.MessageContent, ...llms.CallOption) (*llms.ContentResponse, error) {
	return &llms.ContentResponse{Choices: []*llms.ContentChoice{{Content: "Sure.", StopReason: "stop"}}}, nil
}

func (m instantModel) Call(ctx context.Context, prompt string, options ...llms.CallOption) (string, error) {
	return llms.GenerateFromSinglePrompt(ctx, m, prompt, options...)
}

// cardTurns are ordinary user turns: small talk and questions, with a
// constraint now and then, in Chinese and English.
var cardTurns = []string{
	"Hi, I need help with order A1004.", "我的收货地址是北京市朝阳区建国路88号。", "How long does shipping take?",
	"好的，谢谢。", "Please don't text me, I'm in meetings all day.", "有没有保修？",
	"Oh and the delivery spot is different now — 221 Baker Street, London NW1 6XE.", "那发货后大概几天能到？",
	"Thanks, that's all for now.", "6月1日到6月5日之间送货比较好。", "What's your return policy?", "嗯嗯，明白了。",
}

// conversation is n turns of user and assistant messages after a system
// message.
func conversation(n int) []llms.MessageContent {
	msgs := []llms.MessageContent{llms.TextParts(llms.ChatMessageTypeSystem, "You are the after-sales assistant of a small online shop. Be brief.")}
	for i := range n {
		msgs = append(msgs,
			llms.TextParts(llms.ChatMessageTypeHuman, cardTurn(i)),
			llms.TextParts(llms.ChatMessageTypeAI, fmt.Sprintf("Noted (%d). Is there anything else I can help with?", i)))
	}
	return msgs
}

// cardTurn is user turn i of a conversation: one of cardTurns, naming a
// new ticket every turn, as a chat does (the card keeps the ids the user
// gives, so it changes at every turn).
func cardTurn(i int) string {
	if i%2 == 1 {
		return fmt.Sprintf("%s 工单号 T%d。", cardTurns[i%len(cardTurns)], 100000+i)
	}
	return fmt.Sprintf("%s Ticket T%d.", cardTurns[i%len(cardTurns)], 100000+i)
}

// BenchmarkCardModelCall measures one model call through the wrapped model
// (a model that answers at once) at turn 10, 100, 1,000 and 10,000 of a
// conversation, with the memory card off, on (the default) and on with a
// token budget of 4,000 (which the conversation passes after about 130
// turns). "follow-up" is a call within the turn that sends the same
// messages again (no new user turn); "new-turn" brings a new user turn to
// extract, and its trace grows by one turn per call from the given turn,
// in windows of max(64, turns/10) calls rebuilt with the timer stopped.
// Besides wall time it reports cpu-ns/op, the process's CPU time in the
// timed part (steadier on a shared machine; run with -cpu 1). Compare
// each to the same configuration at turn 10: issue 29 wants turn 10,000
// within 2x.
func BenchmarkCardModelCall(b *testing.B) {
	model := instantModel{}
	configs := []struct {
		name string
		mem  *guard.MemoryOptions
	}{
		{"card=off", &guard.MemoryOptions{Off: true}},
		{"card=on", nil},
		{"card=on-budget-4000", &guard.MemoryOptions{Budget: 4000}},
	}
	for _, turns := range []int{10, 100, 1000, 10000} {
		for _, c := range configs {
			g := guard.New(guard.Config{Memory: c.mem})
			wrapped := g.WrapModel(model)
			b.Run(fmt.Sprintf("follow-up/turns=%d/%s", turns, c.name), func(b *testing.B) {
				ctx, msgs := startCardConversation(b, g, turns)
				msgs = msgs[:len(msgs)-1] // ends with the user's turn, already recorded
				b.ReportAllocs()
				cpu := testkit.ProcessCPU()
				for b.Loop() {
					if _, err := wrapped.GenerateContent(ctx, msgs); err != nil {
						b.Fatal(err)
					}
				}
				b.ReportMetric(float64(testkit.ProcessCPU()-cpu)/float64(b.N), "cpu-ns/op")
			})
			b.Run(fmt.Sprintf("new-turn/turns=%d/%s", turns, c.name), func(b *testing.B) { benchCardNewTurn(b, g, turns) })
		}
	}
}

// startCardConversation records turns 0..n-1 of conversation(n) through
// g's wrapped model, as a chat would have, and returns the trace's
// context and the messages.
func startCardConversation(b *testing.B, g *guard.Guard, n int) (context.Context, []llms.MessageContent) {
	wrapped := g.WrapModel(instantModel{})
	ctx, _ := g.StartTrace(context.Background(), "bench", "")
	msgs := conversation(n)
	for k := 1; k <= n; k++ {
		if _, err := wrapped.GenerateContent(ctx, msgs[:2*k]); err != nil {
			b.Fatal(err)
		}
	}
	return ctx, msgs
}

// benchCardNewTurn is a model call through g's wrapped model that brings
// a new user turn, naming a new ticket, at about turn n: see
// BenchmarkCardModelCall.
func benchCardNewTurn(b *testing.B, g *guard.Guard, turns int) {
	wrapped := g.WrapModel(instantModel{})
	window := max(64, turns/10)
	var ctx context.Context
	var msgs []llms.MessageContent
	var cpu time.Duration // in the timed part
	since := testkit.ProcessCPU()
	b.ReportAllocs()
	for i := 0; b.Loop(); i++ {
		if i%window == 0 {
			b.StopTimer()
			cpu += testkit.ProcessCPU() - since
			ctx, msgs = startCardConversation(b, g, turns)
			since = testkit.ProcessCPU()
			b.StartTimer()
		}
		msgs = append(msgs, llms.TextParts(llms.ChatMessageTypeHuman, cardTurn(turns+i%window)))
		if _, err := wrapped.GenerateContent(ctx, msgs); err != nil {
			b.Fatal(err)
		}
		msgs = append(msgs, llms.TextParts(llms.ChatMessageTypeAI, "Sure."))
	}
	cpu += testkit.ProcessCPU() - since
	b.ReportMetric(float64(cpu)/float64(b.N), "cpu-ns/op")
}
