package main

import (
	"context"
	"fmt"
	"hash/fnv"
	"slices"

	"github.com/agentguard/agentguard/examples/customerservice/shop"
	"github.com/agentguard/agentguard/guard"
	"github.com/agentguard/agentguard/trace"
	"github.com/agentguard/agentguard/trace/replay"
	"github.com/tmc/langchaingo/llms"
	"github.com/tmc/langchaingo/tools"
)

// demoConfig is the guard configuration of the demo customer-service agent,
// as examples/customerservice runs it — gates, domain policy, classifier,
// memory card, approval for returns — with the ledger and the mode of this
// replay.
func demoConfig(led guard.Sink, shadow bool) guard.Config {
	return guard.Config{
		Ledger:          led,
		Shadow:          shadow,
		Rules:           []guard.Rule{addressOnlyWhilePending},
		RequireApproval: []string{"submit_return"},
		Classifier:      guard.ClassifierFunc(shop.Classify),
		Intents:         shop.Intents,
		Tools: guard.ToolPolicies{
			"search_kb":      {Retrieval: true},
			"update_address": {Confirm: true},
		},
		Memory:  &guard.MemoryOptions{Budget: 2000},
		Pricing: guard.Pricing{InputPerMillion: 2.5, OutputPerMillion: 10},
	}
}

// addressOnlyWhilePending is the demo's domain policy written as code: a
// delivery address changes only while the order is pending, as the order
// lookup in this trace says.
var addressOnlyWhilePending = guard.RuleFunc(func(t *trace.Trace, s *trace.Step) []trace.Finding {
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
				Rule: "address-only-while-pending", Verdict: trace.Handoff, Dimension: trace.Accuracy, Severity: trace.Error,
				Message: fmt.Sprintf("order %s is %s; its address can no longer change", id, status), Tags: []string{"policy"},
			}}
		}
		return nil
	}
	return nil
})

// demoAgent is one conversation with the demo agent: a fresh shop, its
// tools, and the scripted model sampling with a seed of its own.
type demoAgent struct {
	model llms.Model
	tools []tools.Tool
}

// newDemoAgent is the replay.Factory of the demo agent. The model's seed
// depends on the case and the repeat, so that repeats of an ambiguous
// request may be read differently, the same way in every replay.
func newDemoAgent(c *replay.Case, repeat int) (replay.Agent, error) {
	h := fnv.New64a()
	fmt.Fprintf(h, "%s/%d", c.ID, repeat)
	return &demoAgent{model: shop.ModelSeed(h.Sum64()), tools: shop.New().Tools()}, nil
}

// Respond runs one user turn through the guard; calls that wait for a
// human (submit_return) are approved, as the demo's supervisor does.
func (a *demoAgent) Respond(ctx context.Context, g *guard.Guard, history []llms.MessageContent) (*guard.Result, error) {
	res, err := g.Run(ctx, a.model, a.tools, history)
	for err == nil && res.Status == guard.StatusPaused {
		decisions := map[string]guard.Decision{}
		for _, p := range res.Pending {
			decisions[p.ID] = guard.Decision{Approve: true}
		}
		res, err = g.Resume(ctx, a.model, a.tools, res, decisions)
	}
	return res, err
}
