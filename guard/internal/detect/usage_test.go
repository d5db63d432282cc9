package detect

import (
	"testing"
)

func TestUsage(t *testing.T) {
	tests := []struct {
		name    string
		info    map[string]any
		in, out int
		ok      bool
	}{
		{"openai", map[string]any{"PromptTokens": 131, "CompletionTokens": 12, "PromptCachedTokens": 64}, 131, 12, true},
		{"anthropic adds cache reads and writes", map[string]any{"InputTokens": 480, "OutputTokens": 19, "CacheReadInputTokens": 1024, "CacheCreationInputTokens": 10}, 1514, 19, true},
		{"snake case", map[string]any{"input_tokens": 7.0, "output_tokens": 3.0}, 7, 3, true},
		{"zero counts mean not counted", map[string]any{"PromptTokens": 0, "CompletionTokens": 0}, 0, 0, false},
		{"nothing", nil, 0, 0, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			in, out, ok := Usage(tt.info)
			if in != tt.in || out != tt.out || ok != tt.ok {
				t.Errorf("Usage = %d, %d, %v; want %d, %d, %v", in, out, ok, tt.in, tt.out, tt.ok)
			}
		})
	}
}
