package otelexport_test

import (
	"context"
	"net/http"
	"net/http/httptest"
	"testing"

	"github.com/agentguard/agentguard/guard"
	"github.com/agentguard/agentguard/trace/otelexport"
	"github.com/tmc/langchaingo/llms"
	"github.com/tmc/langchaingo/llms/anthropic"
	"github.com/tmc/langchaingo/llms/openai"
	"go.opentelemetry.io/otel/attribute"
	semconv "go.opentelemetry.io/otel/semconv/v1.39.0"
)

// TestChatSpansFromTheWire records a guarded turn of langchaingo's real
// openai and anthropic clients against a loopback server, exports it with
// the zero Options, as the README shows, and checks the chat span against
// the semantic conventions' own constants: provider and request model come
// from the wrapped client, response model, id and finish reason from the
// wire (guard.Transport).
func TestChatSpansFromTheWire(t *testing.T) {
	tests := []struct {
		name, path, body string
		model            func(url string, c *http.Client) (llms.Model, error)
		provider         attribute.KeyValue
		span, request    string
		response, id     string
		finish           string
	}{
		{
			name: "openai", path: "/v1/chat/completions",
			body: `{"id":"chatcmpl-BfT3yKc2","object":"chat.completion","created":1748770201,"model":"gpt-4o-2024-08-06","choices":[{"index":0,"message":{"role":"assistant","content":"Order A1001 has shipped."},"finish_reason":"stop"}],"usage":{"prompt_tokens":31,"completion_tokens":7,"total_tokens":38}}`,
			model: func(url string, c *http.Client) (llms.Model, error) {
				return openai.New(openai.WithBaseURL(url+"/v1"), openai.WithToken("test"), openai.WithModel("gpt-4o"), openai.WithHTTPClient(c))
			},
			provider: semconv.GenAIProviderNameOpenAI, span: "chat gpt-4o", request: "gpt-4o",
			response: "gpt-4o-2024-08-06", id: "chatcmpl-BfT3yKc2", finish: "stop",
		},
		{
			name: "anthropic", path: "/v1/messages",
			body: `{"id":"msg_01XFDUDYJgAACzvnptvVoYEL","type":"message","role":"assistant","model":"claude-sonnet-4-20250514","content":[{"type":"text","text":"订单 A1001 已发货。"}],"stop_reason":"end_turn","stop_sequence":null,"usage":{"input_tokens":31,"output_tokens":9}}`,
			model: func(url string, c *http.Client) (llms.Model, error) {
				return anthropic.New(anthropic.WithBaseURL(url+"/v1"), anthropic.WithToken("test"), anthropic.WithModel("claude-sonnet-4-20250514"), anthropic.WithHTTPClient(c))
			},
			provider: semconv.GenAIProviderNameAnthropic, span: "chat claude-sonnet-4-20250514", request: "claude-sonnet-4-20250514",
			response: "claude-sonnet-4-20250514", id: "msg_01XFDUDYJgAACzvnptvVoYEL", finish: "end_turn",
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				if r.URL.Path != tt.path {
					http.NotFound(w, r)
					return
				}
				w.Header().Set("Content-Type", "application/json")
				w.Write([]byte(tt.body))
			}))
			defer srv.Close()
			m, err := tt.model(srv.URL, &http.Client{Transport: guard.Transport(nil)})
			if err != nil {
				t.Fatal(err)
			}
			g := guard.New(guard.Config{})
			res, err := g.Run(context.Background(), g.WrapModel(m), nil, human("Where is order A1001?"))
			if err != nil {
				t.Fatal(err)
			}
			spans := export(t, context.Background(), res.Trace, otelexport.Options{})
			var chat *attribute.Set
			for _, s := range spans {
				if s.Name == tt.span {
					set := attribute.NewSet(s.Attributes...)
					chat = &set
				}
			}
			if chat == nil {
				t.Fatalf("no span %q in %v", tt.span, names(spans))
			}
			for _, want := range []attribute.KeyValue{
				semconv.GenAIOperationNameChat,
				tt.provider,
				semconv.GenAIRequestModel(tt.request),
				semconv.GenAIResponseModel(tt.response),
				semconv.GenAIResponseID(tt.id),
				semconv.GenAIResponseFinishReasons(tt.finish),
			} {
				if got, ok := chat.Value(want.Key); !ok || got != want.Value {
					t.Errorf("%s = %v, want %v", want.Key, got.Emit(), want.Value.Emit())
				}
			}
		})
	}
}
