package shop

import (
	"fmt"
	"slices"

	"github.com/agentguard/agentguard/guard"
	"github.com/agentguard/agentguard/trace"
)

// GuardConfig is the guard configuration the demo agent runs under: the
// built-in gates, a domain policy, the intent classifier, the memory card,
// approval for returns, tool annotations and gpt-4o's list prices (USD),
// with the given ledger and mode.
func GuardConfig(ledger guard.Sink, shadow bool) guard.Config {
	return guard.Config{
		Shadow: shadow,
		Rules:  []guard.Rule{AddressOnlyWhilePending},
		Tools: guard.ToolPolicies{
			"search_kb":      {Retrieval: true},
			"update_address": {Confirm: true},
		},
		Memory: &guard.MemoryOptions{Budget: 2000},
		Gates: guard.Gates{
			RequireApproval: []string{"submit_return"},
			Classifier:      guard.ClassifierFunc(Classify),
			Intents:         Intents,
		},
		Observe: guard.Observation{
			Ledger:  ledger,
			Pricing: guard.Pricing{InputPerMillion: 2.5, OutputPerMillion: 10},
		},
	}
}

// AddressOnlyWhilePending is a domain policy written as code: a delivery
// address changes only while the order is pending, as the order lookup in
// the trace says.
var AddressOnlyWhilePending = guard.NewRule("address-only-while-pending", func(t *trace.Trace, s *trace.Step) []trace.Finding {
	if s.Kind != trace.KindTool || s.Name != "update_address" {
		return nil
	}
	id := s.ArgString("order_id")
	for _, p := range slices.Backward(t.ToolSteps("query_order")) {
		if p.ArgString("order_id") != id {
			continue
		}
		if status := p.ResultString("status"); status != "pending" {
			return []trace.Finding{{
				Rule: "address-only-while-pending", Verdict: trace.Handoff, Dimension: trace.Accuracy, Severity: trace.SeverityError,
				Message: fmt.Sprintf("order %s is %s; its address can no longer change", id, status), Tags: []string{"policy"},
			}}
		}
		return nil
	}
	return nil
})
