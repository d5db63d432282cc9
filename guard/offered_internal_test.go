package guard

import (
	"testing"

	"github.com/agentguard/agentguard/trace"
	"github.com/tmc/langchaingo/llms"
)

// The tools a model call offers are recorded as specs once per trace while
// later calls offer the same definitions; a definition that changes (a new
// schema, another description) is recorded anew.
func TestOfferedSpecsReusedWhileTheSame(t *testing.T) {
	schema := map[string]any{"type": "object", "properties": map[string]any{"order_id": map[string]any{"type": "string"}}}
	offer := func(desc string, params any) llms.CallOptions {
		return llms.CallOptions{Tools: []llms.Tool{{Type: "function", Function: &llms.FunctionDefinition{Name: "get_order", Description: desc, Parameters: params}}}}
	}
	type point struct {
		Type string `json:"type"`
	}
	tests := []struct {
		name          string
		first, second llms.CallOptions
		reused        bool
		want          string // the second call's recorded parameters
	}{
		{"the same definition again", offer("Looks an order up.", schema), offer("Looks an order up.", schema), true, `{"properties":{"order_id":{"type":"string"}},"type":"object"}`},
		{"a new schema", offer("Looks an order up.", schema), offer("Looks an order up.", map[string]any{"type": "object"}), false, `{"type":"object"}`},
		{"another description", offer("Looks an order up.", schema), offer("查询订单。", schema), false, `{"properties":{"order_id":{"type":"string"}},"type":"object"}`},
		{"a struct schema", offer("d", point{"object"}), offer("d", point{"object"}), false, `{"type":"object"}`},
		{"schema as text", offer("d", `{"type":"object"}`), offer("d", `{"type":"object"}`), true, `"{\"type\":\"object\"}"`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			rec := trace.NewRecorder("t", "s", "r", trace.RecorderOptions{})
			a := offeredSpecs(rec, tt.first)
			b := offeredSpecs(rec, tt.second)
			if len(a) != 1 || len(b) != 1 {
				t.Fatalf("specs %v then %v, want one each", a, b)
			}
			if reused := &a[0] == &b[0]; reused != tt.reused {
				t.Errorf("reused = %v, want %v", reused, tt.reused)
			}
			if got := string(b[0].Parameters); got != tt.want {
				t.Errorf("second call recorded %s, want %s", got, tt.want)
			}
			if b[0].Description != tt.second.Tools[0].Function.Description {
				t.Errorf("second call recorded description %q", b[0].Description)
			}
		})
	}
	if got := offeredSpecs(trace.NewRecorder("t", "s", "r", trace.RecorderOptions{}), llms.CallOptions{}); got != nil {
		t.Errorf("no tools offered: specs %v", got)
	}
}
