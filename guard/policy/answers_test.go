package policy_test

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/tmc/langchaingo/llms"
	"github.com/tmc/langchaingo/llms/openai"

	"github.com/agentguard/agentguard/guard"
	"github.com/agentguard/agentguard/guard/rules"
	"github.com/agentguard/agentguard/trace"
)

// answerPolicy says what τ's policies ask of the agent's words after a
// call: "To transfer, first make a tool call to transfer_to_human_agents,
// and then send the message 'YOU ARE BEING TRANSFERRED TO A HUMAN AGENT.
// PLEASE HOLD ON.' to the user", and, of a call, "X only after Y in the
// same turn".
const answerPolicy = `
checks:
  - name: transfer-message
    on: answer
    when: size(turn_calls) > 0 && turn_calls[size(turn_calls) - 1].name == 'transfer_to_human_agents'
    require: answer.upperAscii().contains('YOU ARE BEING TRANSFERRED TO A HUMAN AGENT') || answer.contains('正在为您转接人工客服')
    message: after the transfer, tell the user they are being transferred
    verdict: retry
  - name: refund-after-lookup
    when: tool == 'refund'
    require: turn_calls.exists(c, c.name == 'get_order' && !c.failed)
    message: a refund follows a lookup of the order in the same turn
`

// answered builds a trace of one user turn: the calls, then the agent's
// answer.
func answered(user, answer string, calls ...*trace.Step) *trace.Trace {
	tr := &trace.Trace{ID: "t", UserTurns: []string{user}}
	tr.Steps = append(tr.Steps, calls...)
	if answer != "" {
		tr.Steps = append(tr.Steps, &trace.Step{Kind: trace.KindModel, Result: answer})
	}
	numbered(tr.Steps...)
	return tr
}

func TestAnswerChecks(t *testing.T) {
	p := checkPolicy(t, answerPolicy)
	transfer := func() *trace.Step {
		return tool("transfer_to_human_agents", `{"summary":"wants a refund for a damaged lamp"}`, "Transfer successful")
	}
	lookup := func(failed bool) *trace.Step {
		s := tool("get_order", `{"order_id":"#W1"}`, `{"status":"delivered"}`)
		if failed {
			s.Error = "Error: order not found"
		}
		return s
	}
	refund := func() *trace.Step { return tool("refund", `{"order_id":"#W1"}`, "ok") }
	for _, tt := range []struct {
		name string
		tr   *trace.Trace
		want []string
	}{
		{"the transfer message follows the transfer", answered("I want a human.", "YOU ARE BEING TRANSFERRED TO A HUMAN AGENT. PLEASE HOLD ON.", transfer()), nil},
		{"the message, in other case and inside JSON", answered("Get me a person.", `{"message": "You are being transferred to a human agent. Please hold on."}`, transfer()), nil},
		{"转接之后的中文提示", answered("我要人工。", "正在为您转接人工客服，请稍候。", transfer()), nil},
		{"another answer after the transfer", answered("I want a human.", "Is there anything else I can help with?", transfer()), []string{"1:transfer-message"}},
		{"转接之后答非所问", answered("我要人工。", "还有别的需要帮忙的吗？", transfer()), []string{"1:transfer-message"}},
		{"an answer with no transfer before it", answered("Where is my order?", "It is on its way.", lookup(false)), nil},
		{"a refund after a lookup", answered("Refund order #W1.", "", lookup(false), refund()), nil},
		{"a refund with no lookup this turn", answered("Refund order #W1.", "", refund()), []string{"0:refund-after-lookup"}},
		{"a refund after a failed lookup", answered("退款订单 #W1。", "", lookup(true), refund()), []string{"1:refund-after-lookup"}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			if got := fired(checksOnly(p), tt.tr); !slices.Equal(got, tt.want) {
				t.Errorf("fired %v, want %v", got, tt.want)
			}
		})
	}
}

// TestAnswerCheckFinding: an answer check's finding names the answer as
// what it judged, with the answer as evidence, and its verdict.
func TestAnswerCheckFinding(t *testing.T) {
	p := checkPolicy(t, answerPolicy)
	tr := answered("I want a human.", "Anything else?", tool("transfer_to_human_agents", `{}`, "Transfer successful"))
	var got *trace.Finding
	for _, f := range checksOnly(p).Evaluate(tr).Findings {
		if f.Rule == "transfer-message" {
			got = &f
		}
	}
	if got == nil {
		t.Fatal("no transfer-message finding")
	}
	if got.Verdict != trace.Retry || got.Evidence != "Anything else?" || got.Facts[0].Kind != trace.FactAnswer || got.Facts[0].Step != 1 {
		t.Errorf("finding %+v: want a retry on the answer at step 1, the answer as evidence", *got)
	}
}

// TestAnswerCheckOnline: online, an answer that breaks an answer check is
// judged as the model returns it, and the model is asked again (verdict
// retry), so the user gets the transfer message.
func TestAnswerCheckOnline(t *testing.T) {
	p := checkPolicy(t, answerPolicy)
	cfg := p.Config()
	cfg.Disable = append(cfg.Disable, rules.Builtin()...)
	g := guard.New(cfg)
	srv := chatServer(t, "Anything else?", "YOU ARE BEING TRANSFERRED TO A HUMAN AGENT. PLEASE HOLD ON.")
	llm, err := openai.New(openai.WithBaseURL(srv.URL+"/v1"), openai.WithToken("test"), openai.WithModel("gpt-4o"))
	if err != nil {
		t.Fatal(err)
	}
	model := g.WrapModel(llm)
	tr := g.WrapTool(fixedTool{"transfer_to_human_agents", "Transfer successful"})
	ctx, rec := g.StartTrace(context.Background(), "s", "r")
	rec.UserTurn("I want a human.")
	if _, err := tr.Call(ctx, `{"summary":"wants a human"}`); err != nil {
		t.Fatal(err)
	}
	resp, err := model.GenerateContent(ctx, []llms.MessageContent{llms.TextParts(llms.ChatMessageTypeHuman, "I want a human.")})
	if err != nil {
		t.Fatal(err)
	}
	if out := resp.Choices[0].Content; !strings.Contains(out, "TRANSFERRED") || srv.calls.Load() != 2 {
		t.Errorf("answer %q after %d model calls: want the transfer message, on the second", out, srv.calls.Load())
	}
}

// answerServer is a loopback endpoint speaking OpenAI's chat completions
// wire format, answering each request with the next of its texts.
type answerServer struct {
	*httptest.Server
	calls atomic.Int32
}

func chatServer(t *testing.T, answers ...string) *answerServer {
	s := &answerServer{}
	s.Server = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		n := int(s.calls.Add(1))
		if n > len(answers) {
			http.Error(w, `{"error":{"message":"no more answers"}}`, http.StatusTeapot)
			return
		}
		w.Header().Set("Content-Type", "application/json")
		json.NewEncoder(w).Encode(map[string]any{
			"id": fmt.Sprintf("chatcmpl-%d", n), "object": "chat.completion", "model": "gpt-4o",
			"choices": []any{map[string]any{"index": 0, "finish_reason": "stop",
				"message": map[string]any{"role": "assistant", "content": answers[n-1]}}},
			"usage": map[string]any{"prompt_tokens": 12, "completion_tokens": 9, "total_tokens": 21},
		})
	}))
	t.Cleanup(s.Close)
	return s
}
