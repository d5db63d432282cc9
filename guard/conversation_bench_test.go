package guard_test

import (
	"context"
	"fmt"
	"testing"

	"github.com/agentguard/agentguard/guard"
	"github.com/agentguard/agentguard/guard/rules"
	"github.com/tmc/langchaingo/llms"
	"github.com/tmc/langchaingo/tools"
)

// conversationModel answers each user turn of benchConversation as a
// customer-service model does: it looks the order the turn names up,
// reads its customer, e-mails the invoice and says so, in the shape
// langchaingo's openai client returns. It keeps nothing of what it is
// sent (guardtest.Model keeps every call's messages, which a conversation
// of 10,000 turns would make the measure of), so the benchmark measures
// the guard.
type conversationModel struct {
	order func() string // the order of the current turn
	phase int
	calls int
}

func (m *conversationModel) GenerateContent(_ context.Context, msgs []llms.MessageContent, _ ...llms.CallOption) (*llms.ContentResponse, error) {
	if msgs[len(msgs)-1].Role == llms.ChatMessageTypeHuman {
		m.phase = 0
	}
	m.phase++
	m.calls++
	o := m.order()
	email := "c-" + o + "@example.com"
	call := func(name, args string) *llms.ContentResponse {
		fc := &llms.FunctionCall{Name: name, Arguments: args}
		return &llms.ContentResponse{Choices: []*llms.ContentChoice{{StopReason: "tool_calls", FuncCall: fc,
			ToolCalls: []llms.ToolCall{{ID: fmt.Sprintf("call_%d", m.calls), Type: "function", FunctionCall: fc}}}}}
	}
	switch m.phase {
	case 1:
		return call("get_invoice", fmt.Sprintf(`{"order_id":%q}`, o)), nil
	case 2:
		return call("get_customer", fmt.Sprintf(`{"email":%q}`, email)), nil
	case 3:
		return call("send_email", fmt.Sprintf(`{"to":%q,"body":"Your invoice INV-%s, total 120.50"}`, email, o)), nil
	}
	return &llms.ContentResponse{Choices: []*llms.ContentChoice{{StopReason: "stop",
		Content: fmt.Sprintf("I have e-mailed invoice INV-%s to %s.", o, email)}}}, nil
}

func (m *conversationModel) Call(ctx context.Context, prompt string, options ...llms.CallOption) (string, error) {
	return llms.GenerateFromSinglePrompt(ctx, m, prompt, options...)
}

// turnText is user turn i of benchConversation: a request naming a new
// order, in English or in Chinese.
func turnText(i int) (text, order string) {
	order = fmt.Sprintf("A%d", 1000+i)
	if i%2 == 1 {
		return fmt.Sprintf("请把订单 %s 的发票发给客户。", order), order
	}
	return fmt.Sprintf("Please send the invoice of order %s to its customer.", order), order
}

// BenchmarkConversation is the workload of a chat agent's guard: a
// conversation in which every user turn names a new order, in English or
// in Chinese, and the model looks it up, reads the customer, e-mails the
// invoice and says so — driven by Run with the default rules and the
// memory card on, the history growing turn by turn as a chat client keeps
// it. An op is one whole user turn (four model calls, three tool calls);
// the conversation already holds about the stated number of turns, and is
// started afresh, untimed, when it has grown by a tenth. Cost per turn
// should not grow with the conversation.
func BenchmarkConversation(b *testing.B) {
	for _, n := range []int{10, 1000, 10000} {
		b.Run(fmt.Sprintf("turns=%d", n), func(b *testing.B) { benchConversation(b, n) })
	}
}

// BenchmarkConversationParts splits BenchmarkConversation's turn, 10 turns
// in, by what it pays for: the default guard, then without the memory
// card, without the rules (every built-in rule disabled: what is left
// records the steps, hands the calls to the workers, retries, breaks
// circuits and extracts the card), and without either — the floor every
// guarded turn costs before anything is judged.
func BenchmarkConversationParts(b *testing.B) {
	for _, p := range []struct {
		name            string
		noRules, noCard bool
	}{{"default", false, false}, {"card-off", false, true}, {"rules-off", true, false}, {"rules-and-card-off", true, true}} {
		b.Run(p.name, func(b *testing.B) { benchConversationWith(b, 10, conversationConfig(p.noRules, p.noCard)) })
	}
}

// conversationConfig is the guard of benchConversation: the defaults, with
// no loop or step limit (a conversation of 10,000 turns repeats its calls),
// and, when asked, every built-in rule or the memory card off.
func conversationConfig(noRules, noCard bool) guard.Config {
	cfg := guard.Config{Gates: guard.Gates{LoopLimit: -1, MaxSteps: -1}}
	if noRules {
		cfg.Disable = rules.Builtin()
	}
	if noCard {
		cfg.Memory = &guard.MemoryOptions{Off: true}
	}
	return cfg
}

func benchConversation(b *testing.B, n int) {
	benchConversationWith(b, n, conversationConfig(false, false))
}

func benchConversationWith(b *testing.B, n int, cfg guard.Config) {
	g := guard.New(cfg)
	invoice, customer, send := sessionTools(g)
	ts := []tools.Tool{invoice, customer, send}
	var (
		ctx     context.Context
		history []llms.MessageContent
		current string
		turn    int
	)
	model := &conversationModel{order: func() string { return current }}
	say := func() {
		var text string
		text, current = turnText(turn)
		turn++
		history = append(history, llms.TextParts(llms.ChatMessageTypeHuman, text))
		res, err := g.Run(ctx, model, ts, history)
		if err != nil || res.Status != guard.StatusDone {
			b.Fatalf("turn %d: %v %v: %s (%v)", turn, res.Status, err, res.Answer, res.Findings)
		}
		history = res.Messages
	}
	rounds, every := 0, max(3, n/10)
	start := func() {
		b.StopTimer()
		ctx, _ = g.StartTrace(context.Background(), "s", "r")
		history, turn = nil, 0
		for range n {
			say()
		}
		rounds = 0
		b.StartTimer()
	}
	start()
	b.ReportAllocs()
	for b.Loop() {
		if rounds == every {
			start()
		}
		say()
		rounds++
	}
}
