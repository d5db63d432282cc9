package health_test

import (
	"context"
	"fmt"
	"strings"
	"time"

	"github.com/agentguard/agentguard/guard"
	"github.com/agentguard/agentguard/guard/guardtest"
	"github.com/agentguard/agentguard/guard/health"
	"github.com/agentguard/agentguard/guard/replay"
	"github.com/agentguard/agentguard/trace"
)

// A judge gives a second opinion on the screened cases, beside the
// computed scores.
func ExampleOptions_judge() {
	ctx := context.Background()
	cases, _ := replay.LoadCases(strings.NewReader(
		`{"id":"late","category":"adversarial","turns":["Do I get compensation when my parcel is late?"],"answer":{"must_not":["clause"]},"last_verified":"2026-11-20"}`), "golden.jsonl")
	cfg := guard.Config{Shadow: true, Tools: map[string]guard.ToolPolicy{"search_kb": {Retrieval: true}}}
	runs, _ := replay.Replay(ctx, cases, newPolicyAgent, replay.Config{Guard: cfg, Label: "unguarded", Repeats: 1})

	// Any llms.Model; here a scripted one.
	judge := guardtest.Script(guardtest.Reply{
		Text:  `{"score": 1, "reason": "Quotes a clause 7.3 that no rule has, and promises money."}`,
		Usage: &guardtest.Usage{In: 620, Out: 24},
	})
	rep, err := health.Score(ctx, cases, runs, nil, health.Options{
		Knowledge:    []health.Document{{ID: "KB-SHP-01", Text: "Standard shipping takes 3 to 5 business days."}},
		Judge:        judge,
		JudgeName:    "scripted",
		JudgePricing: guard.Pricing{InputPerMillion: 2.5, OutputPerMillion: 10},
		Now:          time.Date(2026, 11, 29, 0, 0, 0, 0, time.UTC),
	})
	if err != nil {
		fmt.Println(err)
		return
	}
	j := rep.Judge
	for _, c := range j.Judged {
		fmt.Printf("%s %v: %d, %s\n", c.Case, c.Screens, c.Score, c.Reason)
	}
	fmt.Printf("accuracy %.1f computed, %.1f in the judge's view\n", rep.Score(trace.Accuracy).Score, j.Dimensions[0].Judged)
	fmt.Printf("%d call, %d+%d tokens, cost %.5f\n", j.Calls, j.TokensIn, j.TokensOut, j.Cost)
	// Output:
	// late [fabrication cascade answer violation]: 1, Quotes a clause 7.3 that no rule has, and promises money.
	// accuracy 2.0 computed, 1.0 in the judge's view
	// 1 call, 620+24 tokens, cost 0.00179
}

func ExampleParseRating() {
	for _, answer := range []string{
		`{"score": 2, "reason": "Asserts the order does not exist after an empty lookup."}`,
		"```json\n{\"score\": 5, \"reason\": \"Correct and grounded.\"}\n```",
		`{"score": 4.5, "reason": "Mostly right."}`,
		`{"score": 4, "reason": "Fine.", "accuracy": 5}`,
		`Score: 4. Fine.`,
	} {
		v, err := health.ParseRating(answer)
		if err != nil {
			fmt.Println(err)
			continue
		}
		fmt.Println(v.Score, v.Reason)
	}
	// Output:
	// 2 Asserts the order does not exist after an empty lookup.
	// 5 Correct and grounded.
	// health: judge: invalid verdict: score 4.5 is not an integer from 1 to 5
	// health: judge: invalid verdict: not a JSON object with only score and reason: unknown field "accuracy"
	// health: judge: invalid verdict: not a JSON object with only score and reason: invalid character 'S' looking for beginning of value
}
