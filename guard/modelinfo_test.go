package guard_test

import (
	"io"
	"net/http"
	"net/http/httptest"
	"testing"

	"github.com/agentguard/agentguard/guard"
	"github.com/agentguard/agentguard/guard/guardtest"
	"github.com/tmc/langchaingo/llms"
	"github.com/tmc/langchaingo/llms/anthropic"
	"github.com/tmc/langchaingo/llms/ollama"
	"github.com/tmc/langchaingo/llms/openai"
)

func TestDescribedModel(t *testing.T) {
	oa, _ := openai.New(openai.WithToken("x"), openai.WithModel("gpt-4o-mini"))
	an, _ := anthropic.New(anthropic.WithToken("x"), anthropic.WithModel("claude-sonnet-4-20250514"))
	ol, _ := ollama.New(ollama.WithModel("qwen2.5:7b"))
	g := guard.New(guard.Config{})
	tests := []struct {
		name  string
		model llms.Model
		want  guard.ModelInfo
	}{
		{"openai", oa, guard.ModelInfo{Provider: "openai", Model: "gpt-4o-mini"}},
		{"anthropic", an, guard.ModelInfo{Provider: "anthropic", Model: "claude-sonnet-4-20250514"}},
		{"ollama", ol, guard.ModelInfo{Provider: "ollama", Model: "qwen2.5:7b"}},
		{"wrapped", g.WrapModel(oa), guard.ModelInfo{Provider: "openai", Model: "gpt-4o-mini"}},
		{"described, provider only", guard.DescribeModel(oa, guard.ModelInfo{Provider: "azure.ai.openai"}), guard.ModelInfo{Provider: "azure.ai.openai", Model: "gpt-4o-mini"}},
		{"described unknown client", guard.DescribeModel(guardtest.Script(), guard.ModelInfo{Model: "scripted"}), guard.ModelInfo{Model: "scripted"}},
		{"unknown client", guardtest.Script(), guard.ModelInfo{}},
		{"nil", nil, guard.ModelInfo{}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := guard.DescribedModel(tt.model); got != tt.want {
				t.Errorf("DescribedModel = %+v, want %+v", got, tt.want)
			}
		})
	}
}

// TestTransportPassesOtherRequests checks that a request that is not a
// guarded model call reaches the client untouched.
func TestTransportPassesOtherRequests(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		io.WriteString(w, `{"id":"x","model":"m","data":"ok"}`)
	}))
	defer srv.Close()
	c := &http.Client{Transport: guard.Transport(nil)}
	resp, err := c.Get(srv.URL)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	body, _ := io.ReadAll(resp.Body)
	if string(body) != `{"id":"x","model":"m","data":"ok"}` {
		t.Errorf("body = %q", body)
	}
}
