package health

import (
	"testing"

	"github.com/agentguard/agentguard/trace"
)

// TestFixDirections: a root cause gets the direction a person would take.
// An injected e-mail is not a knowledge-base gap; a banned channel is not a
// lost constraint when the card caught it.
func TestFixDirections(t *testing.T) {
	for _, tt := range []struct {
		tag   string
		d     trace.Dimension
		kind  string
		where string
	}{
		{"injection", trace.Accuracy, "rule", "injected-argument"},
		{"instructions", trace.Accuracy, "rule", "injected-argument"},
		{"relay", trace.Accuracy, "prompt", "what the answer passes on"},
		{"sms", trace.Memory, "config", "guard.Config.Memory"},
		{"no-recipient", trace.Accuracy, "prompt", "the tool's schema"},
		{"invented-clause", trace.Accuracy, "knowledge base", "the rules the answers quote"},
		{"a-tag-no-one-gives", trace.Stability, "config", "guard.Config.Resilience"},
	} {
		if f := fixFor(nil, tt.tag, tt.d); f.Kind != tt.kind || f.Where != tt.where {
			t.Errorf("%s: %s %q, want %s %q", tt.tag, f.Kind, f.Where, tt.kind, tt.where)
		}
	}
}
