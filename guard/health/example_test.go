package health_test

import (
	"context"
	"fmt"
	"os"
	"strings"
	"time"

	"github.com/agentguard/agentguard/guard"
	"github.com/agentguard/agentguard/guard/guardtest"
	"github.com/agentguard/agentguard/guard/health"
	"github.com/agentguard/agentguard/guard/replay"
	"github.com/agentguard/agentguard/ledger/badgerstore"
	"github.com/agentguard/agentguard/trace"
	"github.com/tmc/langchaingo/llms"
	"github.com/tmc/langchaingo/tools"
)

func ExampleWeights_Total() {
	w := health.DefaultWeights()
	total, points := w.Total(map[trace.Dimension]float64{
		trace.Accuracy: 4, trace.Coherence: 4, trace.Memory: 5, trace.Stability: 3, trace.Efficiency: 4,
	})
	fmt.Println(health.Headline(total, points))
	fmt.Println(health.Weights{Accuracy: 50, Coherence: 40}.Validate())
	// Output:
	// 4.05 of 5 (81 of 100 points, sub-healthy, local repair)
	// health: weights: invalid weights: they sum to 90, not 100
}

func ExampleRubric_Score() {
	var r health.Rubric // the defaults: up to two minor flaws score 4
	for _, h := range []health.RunHits{
		{Answered: true},
		{Minor: 2, Answered: true},
		{Recovered: 1, Answered: true},
		{Failed: 1, Answered: true},
		{Failed: 1},
	} {
		fmt.Printf("%+v: %d\n", h, r.Score(h))
	}
	// Output:
	// {Failed:0 Recovered:0 Minor:0 Answered:true}: 5
	// {Failed:0 Recovered:0 Minor:2 Answered:true}: 4
	// {Failed:0 Recovered:1 Minor:0 Answered:true}: 3
	// {Failed:1 Recovered:0 Minor:0 Answered:true}: 2
	// {Failed:1 Recovered:0 Minor:0 Answered:false}: 1
}

// The agent under test answers a policy question from a knowledge base that
// has no answer, and makes one up.
type policyAgent struct {
	model llms.Model
	tools []tools.Tool
}

func newPolicyAgent(*replay.Case, int) (replay.Agent, error) {
	search := guardtest.NewTool("search_kb", "Search the policies", func(context.Context, string) (string, error) { return "[]", nil })
	model := guardtest.Func(func(_ context.Context, msgs []llms.MessageContent, _ llms.CallOptions) (guardtest.Reply, error) {
		if msgs[len(msgs)-1].Role == llms.ChatMessageTypeTool {
			return guardtest.Text("Per clause 7.3 you get ¥50 for each day of delay."), nil
		}
		return guardtest.ToolCall("search_kb", `{"query":"late delivery compensation"}`), nil
	})
	return &policyAgent{model, []tools.Tool{search}}, nil
}

func (a *policyAgent) Respond(ctx context.Context, g *guard.Guard, h []llms.MessageContent) (*guard.Result, error) {
	return g.Run(ctx, a.model, a.tools, h)
}

func ExampleScore() {
	ctx := context.Background()
	cases, _ := replay.LoadCases(strings.NewReader(
		`{"id":"late","category":"adversarial","turns":["Do I get compensation when my parcel is late?"],"answer":{"must_not":["clause"]},"last_verified":"2026-11-20"}`), "golden.jsonl")
	led, _ := badgerstore.Open("", badgerstore.Options{InMemory: true})
	defer led.Close()
	for _, shadow := range []bool{true, false} {
		cfg := guard.Config{Shadow: shadow, Tools: map[string]guard.ToolPolicy{"search_kb": {Retrieval: true}}, Observe: guard.Observation{Ledger: led}}
		label := map[bool]string{true: "unguarded", false: "guarded"}[shadow]
		runs, _ := replay.Replay(ctx, cases, newPolicyAgent, replay.Config{Guard: cfg, Label: label})
		rep, err := health.Score(ctx, cases, runs, led, health.Options{Now: time.Date(2026, 11, 29, 0, 0, 0, 0, time.UTC)})
		if err != nil {
			fmt.Println(err)
			return
		}
		fmt.Printf("%s: accuracy %.1f, fabrication %.0f%%, total %.2f (%s)\n", rep.Label, rep.Score(trace.Accuracy).Score, 100*rep.Rates.Fabrication, rep.Total, rep.Band)
		fmt.Println("  ", runs[0].Final())
	}
	// Output:
	// unguarded: accuracy 2.0, fabrication 100%, total 3.35 (unhealthy)
	//    Per clause 7.3 you get ¥50 for each day of delay.
	// guarded: accuracy 4.0, fabrication 0%, total 4.70 (healthy)
	//    I could not find a reliable answer to this, so I will not guess. Let me transfer you to a colleague who can help.
}

func ExampleCompare() {
	report := func(label string, scores ...float64) *health.Report {
		r := &health.Report{Label: label}
		m := map[trace.Dimension]float64{}
		for i, d := range health.Dimensions {
			m[d] = scores[i]
			r.Dimensions = append(r.Dimensions, health.DimensionScore{Dimension: d, Score: scores[i]})
		}
		r.Total, r.Points = health.DefaultWeights().Total(m)
		return r
	}
	before := report("prompt-v1", 2, 3, 3, 4, 4)
	after := report("prompt-v2", 5, 4, 3, 2, 4) // more accurate, less stable
	c := health.Compare(before, after, trace.Accuracy)
	for _, d := range c.Deltas {
		fmt.Printf("%-10s %.1f → %.1f\n", d.Dimension, d.Before, d.After)
	}
	fmt.Printf("total %+.0f points, side effects %v\n", c.PointsDelta, c.SideEffects)
	// Output:
	// accuracy   2.0 → 5.0
	// coherence  3.0 → 4.0
	// memory     3.0 → 3.0
	// stability  4.0 → 2.0
	// efficiency 4.0 → 4.0
	// total +17 points, side effects [stability]
}

func ExampleReport_WriteFiles() {
	rep := &health.Report{Label: "nightly", Generated: time.Date(2026, 11, 29, 0, 0, 0, 0, time.UTC)}
	for _, d := range health.Dimensions {
		rep.Dimensions = append(rep.Dimensions, health.DimensionScore{Dimension: d, Score: 5})
	}
	dir, _ := os.MkdirTemp("", "health")
	defer os.RemoveAll(dir)
	if err := rep.WriteFiles(dir); err != nil {
		fmt.Println(err)
	}
	entries, _ := os.ReadDir(dir)
	for _, e := range entries {
		fmt.Println(e.Name())
	}
	// Output:
	// report.html
	// report.json
	// report.md
}
