package healthcmd

import (
	"context"
	"fmt"
	"hash/fnv"

	"github.com/agentguard/agentguard/examples/agentguard/internal/shop"
	"github.com/agentguard/agentguard/guard"
	"github.com/agentguard/agentguard/guard/replay"
	"github.com/tmc/langchaingo/llms"
	"github.com/tmc/langchaingo/tools"
)

// demoAgent is one conversation with the demo agent: a fresh shop, its
// tools, and the scripted model sampling with a seed of its own (or the
// model of -model).
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

// newAgentFactory returns the replay.Factory of the demo agent with model,
// or, when model is nil, newDemoAgent. Each run gets a fresh shop and its
// tools; a real model is shared, as its clients are safe for concurrent use.
func newAgentFactory(model llms.Model) replay.Factory {
	if model == nil {
		return newDemoAgent
	}
	return func(*replay.Case, int) (replay.Agent, error) {
		return &demoAgent{model: model, tools: shop.New().Tools()}, nil
	}
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
