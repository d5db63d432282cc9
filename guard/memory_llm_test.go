package guard_test

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/agentguard/agentguard/guard"
	"github.com/agentguard/agentguard/guard/guardtest"
	"github.com/agentguard/agentguard/memory"
	"github.com/agentguard/agentguard/trace"
	"github.com/tmc/langchaingo/llms"
	"github.com/tmc/langchaingo/tools"
)

// A turn the rule-based extractor does not read: no channel word it knows.
const offThePhone = "Keep me off the phone lines, I mean it."

// extractionAnswer is what the extraction model answers for the turn.
const extractionAnswer = `{"constraints":[{"kind":"prohibition","key":"call","value":"","status":"active","quote":"Keep me off the phone lines"}]}`

// isExtraction reports whether a request is memory.LLMExtractor's.
func isExtraction(system string) bool {
	return strings.Contains(system, "memory card") && strings.Contains(system, "JSON only")
}

// openAIServer answers chat completions as OpenAI would: the extraction
// request with extractionAnswer, the agent's first call with a call to
// call_customer, later ones with text. It keeps the extraction requests'
// bodies.
func openAIServer(t *testing.T) (*httptest.Server, func() []map[string]any) {
	var mu sync.Mutex
	var extractions []map[string]any
	agentCalls := 0
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		var body map[string]any
		if err := json.NewDecoder(r.Body).Decode(&body); err != nil || r.URL.Path != "/v1/chat/completions" {
			http.Error(w, "bad request", http.StatusBadRequest)
			return
		}
		msgs, _ := body["messages"].([]any)
		system := ""
		if len(msgs) > 0 {
			if m, ok := msgs[0].(map[string]any); ok && m["role"] == "system" {
				system = fmt.Sprint(m["content"])
			}
		}
		message := map[string]any{"role": "assistant", "content": "I will not call you."}
		finish := "stop"
		mu.Lock()
		switch {
		case isExtraction(system):
			extractions = append(extractions, body)
			message["content"] = extractionAnswer
		case agentCalls == 0:
			agentCalls++
			message = map[string]any{"role": "assistant", "content": nil, "tool_calls": []any{map[string]any{
				"id": "call_1", "type": "function", "function": map[string]any{"name": "call_customer", "arguments": `{"reason":"follow-up"}`}}}}
			finish = "tool_calls"
		}
		mu.Unlock()
		w.Header().Set("Content-Type", "application/json")
		json.NewEncoder(w).Encode(map[string]any{
			"id": "chatcmpl-1", "object": "chat.completion", "created": 1, "model": "gpt-4o",
			"choices": []any{map[string]any{"index": 0, "message": message, "finish_reason": finish}},
			"usage":   map[string]any{"prompt_tokens": 20, "completion_tokens": 5, "total_tokens": 25},
		})
	}))
	t.Cleanup(srv.Close)
	return srv, func() []map[string]any {
		mu.Lock()
		defer mu.Unlock()
		return slices.Clone(extractions)
	}
}

// TestModelExtractor plugs a model extractor in beside the rules: the
// model reads the ban the rules miss, its answer is validated and merged,
// recorded with source "model", and the call it forbids is blocked. Over
// langchaingo's real OpenAI client against a local server, and offline
// with guardtest's scripted model.
func TestModelExtractor(t *testing.T) {
	srv, extractions := openAIServer(t)
	for _, tc := range []struct {
		name  string
		agent llms.Model
		ex    llms.Model
	}{
		{"openai wire", newOpenAI(t, srv.URL), newOpenAI(t, srv.URL)},
		{"scripted", guardtest.Script(guardtest.ToolCall("call_customer", `{"reason":"follow-up"}`), guardtest.Text("I will not call you.")),
			guardtest.Func(func(_ context.Context, msgs []llms.MessageContent, _ llms.CallOptions) (guardtest.Reply, error) {
				if !isExtraction(fmt.Sprint(msgs[0].Parts[0])) {
					return guardtest.Reply{}, fmt.Errorf("not an extraction request: %v", msgs[0])
				}
				return guardtest.Text(extractionAnswer), nil
			})},
	} {
		t.Run(tc.name, func(t *testing.T) {
			g := guard.New(guard.Config{Memory: &guard.MemoryOptions{
				Extractor: memory.Combine(memory.RuleBased(nil), memory.LLMExtractor(tc.ex, llms.WithJSONMode(), llms.WithTemperature(0))),
			}})
			res, err := g.Run(context.Background(), tc.agent, []tools.Tool{fixed("call_customer", "ok")}, human(offThePhone))
			if err != nil {
				t.Fatal(err)
			}
			if got := ruleVerdicts(res.Findings); len(got) == 0 || got[0] != memory.RuleProhibition+"@block" {
				t.Errorf("findings = %v, want the call blocked by the card", got)
			}
			var step *trace.Step
			for _, s := range res.Trace.Steps {
				if s.Kind == trace.KindMemory && s.Name == memory.StepCard {
					step = s
				}
			}
			if step == nil || !strings.Contains(step.Result, `"source":"model"`) || !strings.Contains(step.Result, `"key":"call"`) {
				t.Errorf("card step = %+v, want the model's call ban", step)
			}
		})
	}
	reqs := extractions()
	if len(reqs) != 1 {
		t.Fatalf("%d extraction requests over the wire, want 1", len(reqs))
	}
	if rf, _ := reqs[0]["response_format"].(map[string]any); rf["type"] != "json_object" {
		t.Errorf("extraction request's response_format = %v, want json_object", reqs[0]["response_format"])
	}
}

// TestModelExtractorCannotInvent: a model's constraint whose quote is not
// in the user's words is dropped, and the rules' finding stands.
func TestModelExtractorCannotInvent(t *testing.T) {
	ex := guardtest.Func(func(context.Context, []llms.MessageContent, llms.CallOptions) (guardtest.Reply, error) {
		return guardtest.Text(`{"constraints":[{"kind":"prohibition","key":"email","value":"","status":"active","quote":"never e-mail me"}]}`), nil
	})
	g := guard.New(guard.Config{Memory: &guard.MemoryOptions{Extractor: memory.Combine(memory.RuleBased(nil), memory.LLMExtractor(ex))}})
	res, err := g.Run(context.Background(), guardtest.Script(guardtest.ToolCall("send_email", `{"text":"hi"}`), guardtest.Text("Sent.")),
		[]tools.Tool{fixed("send_email", "ok")}, human("Please don't text me."))
	if err != nil {
		t.Fatal(err)
	}
	if got := ruleVerdicts(res.Findings); slices.Contains(got, memory.RuleProhibition+"@block") {
		t.Errorf("findings = %v: an invented e-mail ban was enforced", got)
	}
	if card := res.Trace.Steps[0]; !strings.Contains(card.Result, `"key":"sms"`) || strings.Contains(card.Result, `"key":"email"`) {
		t.Errorf("card step %s, want the rules' sms ban and no e-mail ban", card.Result)
	}
}
