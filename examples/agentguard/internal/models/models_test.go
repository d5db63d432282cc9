package models

import (
	"context"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/agentguard/agentguard/guard/guardtest"
	"github.com/tmc/langchaingo/llms"
)

func TestOpen(t *testing.T) {
	scripted := guardtest.Script(guardtest.Text("offline"))
	if m, err := Open("", scripted); err != nil || m != scripted {
		t.Errorf(`Open("") = %v, %v; want the scripted model`, m, err)
	}
	for _, bad := range []string{"openai", "openai:", "gemini:pro"} {
		if _, err := Open(bad, scripted); err == nil {
			t.Errorf("Open(%q): no error", bad)
		}
	}
}

// TestRealClients points langchaingo's real clients at a local server that
// speaks each provider's wire format.
func TestRealClients(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		w.Header().Set("Content-Type", "application/json")
		switch {
		case strings.HasSuffix(r.URL.Path, "/chat/completions"):
			if !strings.Contains(string(body), `"model":"gpt-4o"`) {
				t.Errorf("openai request: %s", body)
			}
			io.WriteString(w, `{"id":"x","object":"chat.completion","created":1,"model":"gpt-4o","choices":[{"index":0,"message":{"role":"assistant","content":"hello from openai"},"finish_reason":"stop"}],"usage":{"prompt_tokens":5,"completion_tokens":3,"total_tokens":8}}`)
		case r.URL.Path == "/api/chat":
			io.WriteString(w, `{"model":"qwen2.5","created_at":"2026-01-01T00:00:00Z","message":{"role":"assistant","content":"hello from ollama"},"done":true,"prompt_eval_count":5,"eval_count":3}`)
		default:
			http.NotFound(w, r)
		}
	}))
	defer srv.Close()
	t.Setenv("OPENAI_API_KEY", "test")
	t.Setenv("OPENAI_BASE_URL", srv.URL+"/v1")
	t.Setenv("OLLAMA_HOST", srv.URL)
	for spec, want := range map[string]string{"openai:gpt-4o": "hello from openai", "ollama:qwen2.5": "hello from ollama"} {
		m, err := Open(spec, nil)
		if err != nil {
			t.Fatalf("%s: %v", spec, err)
		}
		got, err := llms.GenerateFromSinglePrompt(context.Background(), m, "hi")
		if err != nil || got != want {
			t.Errorf("%s: %q, %v; want %q", spec, got, err, want)
		}
	}
}
