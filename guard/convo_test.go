package guard_test

import (
	"context"
	"fmt"
	"reflect"
	"slices"
	"strings"
	"testing"

	"github.com/agentguard/agentguard/guard"
	"github.com/agentguard/agentguard/guard/guardtest"
	"github.com/agentguard/agentguard/memory"
	"github.com/agentguard/agentguard/trace"
	"github.com/tmc/langchaingo/llms"
)

// TestModelCallReadsAsBefore runs growing conversations (Chinese and
// English turns, tool exchanges, the guard's retry feedback) through a
// wrapped model that reports no usage, with the card off, on, and on under
// token budgets, rewriting the history now and then (a message in the
// middle replaced, the conversation cut short, a new one), and checks
// each call against what the guard computed before it kept the
// conversation between calls: the model receives memory.Inject(memory.
// Compress(messages)) with the trace's card, the step's TokensIn is the
// estimate over every message received, and the trace's user turns are
// the user messages.
func TestModelCallReadsAsBefore(t *testing.T) {
	model := guardtest.Func(func(context.Context, []llms.MessageContent, llms.CallOptions) (guardtest.Reply, error) {
		return guardtest.Text("Sure."), nil
	})
	// history is n turns: each a user turn and an answer, a tool exchange
	// every third turn, the guard's feedback now and then.
	history := func(n int) []llms.MessageContent {
		msgs := []llms.MessageContent{llms.TextParts(llms.ChatMessageTypeSystem, "You are the after-sales assistant of a small online shop. Be brief.")}
		for i := range n {
			msgs = append(msgs, llms.TextParts(llms.ChatMessageTypeHuman, cardTurns[i%len(cardTurns)]))
			if i%3 == 1 {
				id := fmt.Sprintf("call_%d", i)
				msgs = append(msgs,
					llms.MessageContent{Role: llms.ChatMessageTypeAI, Parts: []llms.ContentPart{llms.ToolCall{ID: id, Type: "function", FunctionCall: &llms.FunctionCall{Name: "query_order", Arguments: `{"order_id":"A1004"}`}}}},
					llms.MessageContent{Role: llms.ChatMessageTypeTool, Parts: []llms.ContentPart{llms.ToolCallResponse{ToolCallID: id, Name: "query_order", Content: fmt.Sprintf(`{"order_id":"A1004","status":"shipped","note":"%s"}`, slices.Repeat([]byte("包裹已从上海仓发出 "), 8))}}})
			}
			if i%7 == 5 {
				msgs = append(msgs, llms.TextParts(llms.ChatMessageTypeHuman, "[agentguard] Your answer was rejected: try again."))
			}
			msgs = append(msgs, llms.TextParts(llms.ChatMessageTypeAI, fmt.Sprintf("Noted (%d).", i)))
		}
		return msgs
	}
	configs := []struct {
		name string
		mem  *guard.MemoryOptions
	}{
		{"card=off", &guard.MemoryOptions{Off: true}},
		{"card=on", nil},
		{"budget=300", &guard.MemoryOptions{Budget: 300}},
		{"budget=1500", &guard.MemoryOptions{Budget: 1500}},
	}
	for _, c := range configs {
		t.Run(c.name, func(t *testing.T) {
			g := guard.New(guard.Config{Memory: c.mem})
			wrapped := g.WrapModel(model)
			ctx, rec := g.StartTrace(context.Background(), "convo", "")
			calls := 0
			call := func(what string, msgs []llms.MessageContent) {
				t.Helper()
				if _, err := wrapped.GenerateContent(ctx, msgs); err != nil {
					t.Fatalf("%s: %v", what, err)
				}
				calls++
				received := model.Received()
				got := received[len(received)-1]
				tr := rec.Trace()
				want := msgs
				if c.mem == nil || !c.mem.Off {
					card := memory.CardOf(tr)
					sent := msgs
					if c.mem != nil {
						sent, _ = memory.Compress(msgs, c.mem.Budget, card)
					}
					want = memory.Inject(sent, card)
				}
				if !reflect.DeepEqual(got, want) {
					t.Fatalf("%s: the model received %d messages, not the %d expected", what, len(got), len(want))
				}
				var step *trace.Step
				for _, s := range slices.Backward(tr.Steps) {
					if s.Kind == trace.KindModel {
						step = s
						break
					}
				}
				if step == nil {
					t.Fatalf("%s: no model step", what)
				}
				if want := estimate(got); step.TokensIn != want {
					t.Fatalf("%s: TokensIn %d, want %d", what, step.TokensIn, want)
				}
			}
			full := history(24)
			for k := 2; k <= len(full); k++ {
				if full[k-1].Role == llms.ChatMessageTypeHuman {
					call(fmt.Sprintf("%d messages", k), full[:k])
				}
			}
			middle := slices.Clone(full)
			middle[len(middle)/2] = llms.TextParts(llms.ChatMessageTypeAI, "(an old answer, cleared)")
			call("a middle message replaced", middle)
			call("cut short", full[:len(full)/2])
			call("a new conversation", history(5))
			var users []string
			for _, m := range full {
				if m.Role == llms.ChatMessageTypeHuman && len(m.Parts) == 1 && !isFeedbackText(m) {
					users = append(users, m.Parts[0].(llms.TextContent).Text)
				}
			}
			if got := rec.Trace().UserTurns; !slices.Equal(got, users) {
				t.Errorf("user turns:\n%q\nwant\n%q", got, users)
			}
		})
	}
}

func isFeedbackText(m llms.MessageContent) bool {
	t, ok := m.Parts[0].(llms.TextContent)
	return ok && len(t.Text) > len("[agentguard] ") && t.Text[:len("[agentguard] ")] == "[agentguard] "
}

// estimate is the guard's usage estimate of what a model received, as the
// guard computed it before it kept the conversation between calls.
func estimate(messages []llms.MessageContent) int {
	in := 0
	for _, m := range messages {
		for _, p := range m.Parts {
			switch p := p.(type) {
			case llms.TextContent:
				in += trace.EstimateTokens(p.Text)
			case llms.ToolCallResponse:
				in += trace.EstimateTokens(p.Content)
			case llms.ToolCall:
				if p.FunctionCall != nil {
					in += trace.EstimateTokens(p.FunctionCall.Arguments)
				}
			}
		}
	}
	return in
}

// TestRunAppendsInPlace follows a conversation through Run as a chat
// client keeps it: each turn appends the user's reply to the last
// Result.Messages, and the run appends to the same array. When the client
// rewrites the history in that array instead (it cuts it short and
// appends other turns, longer than before), the model still gets the new
// turns, and the card and the trace's user turns are read from them (the
// trace counts user turns, so the two turns at the places of its two
// earlier ones are not read as new).
func TestRunAppendsInPlace(t *testing.T) {
	model := guardtest.Func(func(_ context.Context, msgs []llms.MessageContent, _ llms.CallOptions) (guardtest.Reply, error) {
		return guardtest.Text("好的：" + messageText(msgs[len(msgs)-1])), nil
	})
	g := guard.New(guard.Config{})
	ctx, rec := g.StartTrace(context.Background(), "s", "r")
	user := func(s string) llms.MessageContent { return llms.TextParts(llms.ChatMessageTypeHuman, s) }
	history := []llms.MessageContent{llms.TextParts(llms.ChatMessageTypeSystem, "Be brief."), user("订单 A1001 到哪了？")}
	res, err := g.Run(ctx, model, nil, history)
	if err != nil {
		t.Fatal(err)
	}
	history = append(res.Messages, user("And order A1002?"))
	res, err = g.Run(ctx, model, nil, history)
	if err != nil {
		t.Fatal(err)
	}
	if &res.Messages[0] != &history[0] || !reflect.DeepEqual(res.Messages[:len(history)], history) {
		t.Fatal("the run did not append to the conversation's array")
	}
	// Rewritten in the same array: the turns after the system message replaced.
	rewritten := append(res.Messages[:1], user("Please don't text me."), user("My address is now 48 Pine Avenue, Shelbyville."),
		user("我的新地址是北京市朝阳区建国路88号。"), user("Where is order B2002?"), user("还有 B2003？"), user("谢谢"))
	if len(rewritten) < len(res.Messages) || &rewritten[0] != &res.Messages[0] {
		t.Fatalf("the test rewrites %d of %d messages in a new array", len(rewritten), len(res.Messages))
	}
	if _, err := g.Run(ctx, model, nil, rewritten); err != nil {
		t.Fatal(err)
	}
	got := model.Received()
	last := got[len(got)-1]
	if len(last) != len(rewritten) {
		t.Fatalf("the model got %d messages, want %d", len(last), len(rewritten))
	}
	for i := 1; i < len(rewritten); i++ {
		if messageText(last[i]) != messageText(rewritten[i]) {
			t.Errorf("message %d: the model got %q, want %q", i, messageText(last[i]), messageText(rewritten[i]))
		}
	}
	if card := messageText(last[0]); !strings.Contains(card, "建国路88号") || !strings.Contains(card, "B2003") {
		t.Errorf("the card was not read from the rewritten turns:\n%s", card)
	}
	if turns := rec.Trace().UserTurns; !slices.Contains(turns, "Where is order B2002?") {
		t.Errorf("the trace's user turns miss the rewritten ones: %q", turns)
	}
}

// TestInPlaceRewriteNoticed: a caller that keeps one array for a long
// conversation and rewrites it in place — drops an old turn, compresses
// the head into a summary — shifts the messages after the change, and the
// guard, which samples the old history of such an array rather than
// comparing all of it (a turn costs the same at 10,000 messages as at 10),
// reads the conversation again: the step's token estimate is that of what
// the model received, not of the history before the rewrite.
func TestInPlaceRewriteNoticed(t *testing.T) {
	model := guardtest.Func(func(context.Context, []llms.MessageContent, llms.CallOptions) (guardtest.Reply, error) {
		return guardtest.Text("Sure."), nil
	})
	history := func() []llms.MessageContent {
		msgs := make([]llms.MessageContent, 0, 1024)
		msgs = append(msgs, llms.TextParts(llms.ChatMessageTypeSystem, "Be brief."))
		for i := range 150 {
			msgs = append(msgs, llms.TextParts(llms.ChatMessageTypeHuman, cardTurns[i%len(cardTurns)]),
				llms.TextParts(llms.ChatMessageTypeAI, fmt.Sprintf("Noted (%d): %s", i, strings.Repeat("好的。", i%5))))
		}
		return msgs
	}
	rewrites := []struct {
		name    string
		rewrite func([]llms.MessageContent) []llms.MessageContent
	}{
		{"an old turn dropped", func(m []llms.MessageContent) []llms.MessageContent { return append(m[:41], m[43:]...) }},
		{"the head compressed into a summary", func(m []llms.MessageContent) []llms.MessageContent {
			return append(append(m[:1], llms.TextParts(llms.ChatMessageTypeSystem, "Summary: the user asked about order A1004 and gave an address.")), m[201:]...)
		}},
		{"the latest answer replaced", func(m []llms.MessageContent) []llms.MessageContent {
			m[len(m)-1] = llms.TextParts(llms.ChatMessageTypeAI, "（已撤回）")
			return m
		}},
	}
	for _, rw := range rewrites {
		t.Run(rw.name, func(t *testing.T) {
			g := guard.New(guard.Config{Memory: &guard.MemoryOptions{Off: true}})
			wrapped := g.WrapModel(model)
			ctx, rec := g.StartTrace(context.Background(), "s", "")
			msgs := history()
			if _, err := wrapped.GenerateContent(ctx, msgs); err != nil {
				t.Fatal(err)
			}
			start := &msgs[0]
			msgs = append(rw.rewrite(msgs), llms.TextParts(llms.ChatMessageTypeHuman, "Where is order A1004?"))
			if &msgs[0] != start {
				t.Fatal("the rewrite made a new array: the test is of one kept in place")
			}
			if _, err := wrapped.GenerateContent(ctx, msgs); err != nil {
				t.Fatal(err)
			}
			ms := steps(rec.Trace(), trace.KindModel)
			if got, want := ms[len(ms)-1].TokensIn, estimate(msgs); got != want {
				t.Errorf("TokensIn = %d, want %d, the estimate of the rewritten conversation", got, want)
			}
		})
	}
}
