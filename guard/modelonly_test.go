package guard_test

import (
	"context"
	"testing"

	"github.com/agentguard/agentguard/guard"
	"github.com/agentguard/agentguard/guard/guardtest"
	"github.com/agentguard/agentguard/guard/rules"
	"github.com/agentguard/agentguard/trace"
	"github.com/tmc/langchaingo/llms"
	"github.com/tmc/langchaingo/tools"
)

// TestWrapModelOnlyReadsToolResults: a loop that wraps only the model and
// runs its tools itself still has its tool results judged, read from the
// messages of the next model call: an empty lookup then an answer that
// takes it as "no records" is stopped, as it is with WrapTool. And a run
// whose tools the guard ran records each result once.
func TestWrapModelOnlyReadsToolResults(t *testing.T) {
	for _, tt := range []struct{ name, user, answer string }{
		{"English", "Where is order A42?", "There are no records of order A42."},
		{"Chinese", "订单 A42 在哪里？", "没有订单 A42 的记录。"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			g := guard.New(guard.Config{})
			model := g.WrapModel(guardtest.Script(
				guardtest.ToolCall("query_order", `{"order_id":"A42"}`),
				guardtest.Text(tt.answer)))
			ctx, rec := g.StartTrace(context.Background(), "s", "")
			msgs := []llms.MessageContent{llms.TextParts(llms.ChatMessageTypeHuman, tt.user)}
			resp, err := model.GenerateContent(ctx, msgs)
			if err != nil {
				t.Fatal(err)
			}
			call := resp.Choices[0].ToolCalls[0]
			// The caller's own loop runs the tool, unwrapped.
			msgs = append(msgs,
				llms.MessageContent{Role: llms.ChatMessageTypeAI, Parts: []llms.ContentPart{call}},
				llms.MessageContent{Role: llms.ChatMessageTypeTool, Parts: []llms.ContentPart{
					llms.ToolCallResponse{ToolCallID: call.ID, Name: call.FunctionCall.Name, Content: "[]"}}})
			resp, err = model.GenerateContent(ctx, msgs)
			if err != nil {
				t.Fatal(err)
			}
			tr := rec.Trace()
			tools := steps(tr, trace.KindTool)
			if len(tools) != 1 || tools[0].Result != "[]" || tools[0].Args != `{"order_id":"A42"}` || tools[0].CallID != call.ID {
				t.Fatalf("tool steps %+v", tools)
			}
			found := false
			for _, s := range tr.Steps {
				found = found || s.Kind == trace.KindGate && s.Finding.Rule == rules.EmptyResult
			}
			if !found || resp.Choices[0].Content == tt.answer {
				t.Errorf("the answer %q after an empty lookup went through: %q", tt.answer, resp.Choices[0].Content)
			}
			// The same messages read again record nothing new.
			model.GenerateContent(ctx, msgs)
			if n := len(steps(rec.Trace(), trace.KindTool)); n != 1 {
				t.Errorf("%d tool steps after reading the messages again, want 1", n)
			}
		})
	}
	t.Run("Run records each result once", func(t *testing.T) {
		g := guard.New(guard.Config{})
		lookup := guardtest.NewTool("query_order", "Look an order up", func(context.Context, string) (string, error) {
			return `{"order_id":"A42","status":"shipped"}`, nil
		})
		res, err := g.Run(context.Background(), guardtest.Script(
			guardtest.ToolCall("query_order", `{"order_id":"A42"}`),
			guardtest.ToolCall("query_order", `{"order_id":"A42","fields":"eta"}`),
			guardtest.Text("Order A42 has shipped.")), []tools.Tool{lookup}, human("Where is order A42?"))
		if err != nil {
			t.Fatal(err)
		}
		if n := len(steps(res.Trace, trace.KindTool)); n != 2 {
			t.Errorf("%d tool steps, want 2", n)
		}
	})
}
