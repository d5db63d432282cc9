package conteval_test

import (
	"context"
	"fmt"
	"math/rand/v2"
	"os"
	"strings"
	"time"

	"github.com/agentguard/agentguard/guard"
	"github.com/agentguard/agentguard/guard/conteval"
	"github.com/agentguard/agentguard/guard/guardtest"
	"github.com/agentguard/agentguard/guard/rules"
	"github.com/agentguard/agentguard/trace"
	"github.com/tmc/langchaingo/llms"
)

// The issue's seed check: 120 flags, every 17th failing.
func ExampleGate_Judge() {
	flags := make([]bool, 120)
	for i := range flags {
		flags[i] = i%17 != 0 // flags 0, 17, ..., 119 fail: 8 of 120
	}
	e := conteval.Gate{}.JudgeFlags(flags)
	fmt.Println(e)
	fmt.Printf("width %.3f, exit status %d\n", e.Interval().Width(), e.Verdict.ExitCode())
	// Output:
	// 0.933 (112/120), 95% CI bootstrap [0.883, 0.975], Wilson [0.874, 0.966] → red (rate and lower bound below floor 0.95)
	// width 0.092, exit status 1
}

func ExampleWilson() {
	// Newcombe (1998), Table I: 81 of 263.
	fmt.Println(conteval.Wilson(81, 263, 0.95))
	// Output: [0.255, 0.366]
}

func ExampleBootstrap() {
	rng := rand.New(rand.NewPCG(1, 2))
	// A million flags cost as much as ten: each resample is one binomial draw.
	iv := conteval.Bootstrap(950_000, 1_000_000, 10_000, 0.95, rng)
	fmt.Printf("[%.5f, %.5f]\n", iv.Lo, iv.Hi)
	// Output: [0.94957, 0.95043]
}

func ExampleSelect() {
	var traces []*trace.Trace
	for i := range 100 {
		traces = append(traces, &trace.Trace{ID: fmt.Sprintf("t%02d", i), Route: "order-status",
			Steps: []*trace.Step{{Kind: trace.KindModel, Result: "ok", Cost: 0.001 + float64(i%7)/10000}}})
	}
	traces[3].Steps[0].Error = "429 Too Many Requests"
	traces[4].Steps = append(traces[4].Steps, &trace.Step{Index: 1, Kind: trace.KindModel, Intent: "return_an_item", Confidence: 0.4})
	traces[5].Steps[0].Cost = 0.05 // far above twice the route's p99

	sel := conteval.Select(traces, conteval.Sampling{Seed: 1, HashConsistent: true})
	for _, s := range sel.Samples {
		fmt.Printf("%s %-20s cost %.4f\n", s.Trace.ID, s.Bands, s.Cost)
	}
	// Output:
	// t03 error                cost 0.0013
	// t04 low-confidence       cost 0.0014
	// t05 over-cost            cost 0.0500
	// t06 tail                 cost 0.0016
	// t13 tail                 cost 0.0016
	// t14 head                 cost 0.0010
	// t16 head                 cost 0.0012
	// t20 tail                 cost 0.0016
	// t22 head                 cost 0.0011
	// t66 head                 cost 0.0013
	// t77 head                 cost 0.0010
	// t84 head                 cost 0.0010
}

func ExampleHashKey() {
	// Every evaluator with seed 1 takes this trace into a 5% head sample,
	// whatever else it reads, and leaves it out of a 2% one.
	k := conteval.HashKey(1, "prod-00040")
	fmt.Printf("key %.4f: in a 2%% head %v, in a 5%% head %v\n", k, k < 0.02, k < 0.05)
	// Output: key 0.0224: in a 2% head false, in a 5% head true
}

func ExampleAssert() {
	// A property of the demo shop: an answer about an order names it.
	namesOrder := conteval.Assert("answer-names-order", func(t *trace.Trace) conteval.Outcome {
		var id string
		for _, s := range t.ToolSteps("query_order") {
			id = s.ArgString("order_id")
		}
		if id == "" {
			return conteval.Skipped()
		}
		last := t.Steps[len(t.Steps)-1]
		if !strings.Contains(last.Result, id) {
			return conteval.Failed(last.Index, "the answer does not name order %s", id)
		}
		return conteval.Passed()
	})
	t := &trace.Trace{ID: "t1", Steps: []*trace.Step{
		{Index: 0, Kind: trace.KindTool, Name: "query_order", Args: `{"order_id":"A1001"}`, Result: `{"status":"shipped"}`},
		{Index: 1, Kind: trace.KindModel, Result: "Your order has shipped."},
	}}
	o := namesOrder.Check(t)
	fmt.Println(o.Status, o.Finding.Step, o.Finding.Message)
	// Output: fail 1 the answer does not name order A1001
}

func ExampleFromRule() {
	// The guard's loop rule, as an assertion on what ran.
	rule, _ := guard.New(guard.Config{}).Rule(rules.Loop)
	loop := conteval.FromRule("loop", rule)
	t := &trace.Trace{ID: "t1"}
	for i := range 4 {
		t.Steps = append(t.Steps, &trace.Step{Index: i, Kind: trace.KindTool, Name: "logistics", Args: `{"tracking_no":"SF404"}`, Result: "no new scan"})
	}
	o := loop.Check(t)
	fmt.Println(o.Status, o.Finding.Step, o.Finding.Message)
	// Output: fail 2 tool "logistics" called 3 times in a row with the same arguments
}

func ExampleEvaluator_Run() {
	// A day of an order API whose answers must be JSON; one in 25 is cut short.
	var traces []*trace.Trace
	for i := range 2000 {
		answer := `{"order_id":"A1001","status":"shipped"}`
		if i%25 == 0 {
			answer = `{"order_id":"A1001","status":`
		}
		traces = append(traces, &trace.Trace{ID: fmt.Sprintf("t%04d", i), Route: "order-api", UserTurns: []string{"status A1001"},
			Steps: []*trace.Step{{Kind: trace.KindModel, Result: answer, Cost: 0.001}}})
	}
	ev := &conteval.Evaluator{Config: conteval.Config{
		Version:    "v1",
		Sampling:   conteval.Sampling{Seed: 1, HashConsistent: true, HeadRate: 0.1},
		Assertions: conteval.AssertionConfig{JSONRoutes: []string{"order-api"}},
	}}
	rep, err := ev.Run(context.Background(), traces, time.Date(2025, 6, 1, 0, 0, 0, 0, time.UTC))
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Println(rep.GateLine())
	fmt.Println(len(rep.Cases), "cases; the first:", rep.Cases[0].Case.ID, rep.Cases[0].Case.Tags)
	// Output:
	// gate: head pass rate 0.960 (191/199), 95% CI bootstrap [0.930, 0.985] Wilson [0.923, 0.979] → YELLOW (rate ≥ floor 0.95, lower bound 0.930 below it) · cost 0.000000 = 202 samples × 0.000000 + 0 judge calls 0.000000 · config v1
	// 9 cases; the first: ce-t0000 [ce_json-answer continuous-eval review]
}

// A judge model gives a second opinion on the red samples and a share of
// the head sample: a score from 1 to 5 with a reason, as one JSON object.
// A sample passes in its view at judge.pass_score (4 by default) or above.
func ExampleEvaluator_judge() {
	var traces []*trace.Trace
	for i := range 2000 {
		answer := `{"order_id":"A1001","status":"shipped"}`
		if i%25 == 0 {
			answer = `{"order_id":"A1001","status":`
		}
		traces = append(traces, &trace.Trace{ID: fmt.Sprintf("t%04d", i), Route: "order-api", UserTurns: []string{"status A1001"},
			Steps: []*trace.Step{{Kind: trace.KindModel, Result: answer, Cost: 0.001}}})
	}
	// Any llms.Model; here a scripted one that reads the automatic checks
	// from its prompt and reports its usage.
	judge := guardtest.Func(func(_ context.Context, msgs []llms.MessageContent, _ llms.CallOptions) (guardtest.Reply, error) {
		r := guardtest.Reply{Text: `{"score": 4, "reason": "The status comes from the order record; terse."}`, Usage: &guardtest.Usage{In: 400, Out: 20}}
		if strings.Contains(msgs[1].Parts[0].(llms.TextContent).Text, "Automatic checks that failed") {
			r.Text = `{"score": 2, "reason": "The answer is cut off: no client can read it."}`
		}
		return r, nil
	})
	ev := &conteval.Evaluator{
		Config: conteval.Config{
			Version:    "v1",
			Sampling:   conteval.Sampling{Seed: 1, HashConsistent: true, HeadRate: 0.1},
			Judge:      conteval.JudgeConfig{HeadShare: 0.05, InputPerMillion: 2.5, OutputPerMillion: 10},
			Assertions: conteval.AssertionConfig{JSONRoutes: []string{"order-api"}},
		},
		Judge: judge,
	}
	rep, err := ev.Run(context.Background(), traces, time.Date(2025, 6, 1, 0, 0, 0, 0, time.UTC))
	if err != nil {
		fmt.Println(err)
		return
	}
	j := rep.Judge
	fmt.Printf("%d calls: %d red samples, %d confirmed, %d disputed; %d head samples, %d missed; cost %.4f\n",
		j.Calls, j.Red, j.Confirmed, j.Disputed, j.Head, j.Missed, j.Cost)
	for _, s := range rep.Samples {
		if s.Judge != nil && s.TraceID == "t0000" {
			fmt.Printf("%s: score %d, pass %v: %s\n", s.TraceID, s.Judge.Score, s.Judge.Pass, s.Judge.Reason)
		}
	}
	// Output:
	// 18 calls: 9 red samples, 9 confirmed, 0 disputed; 9 head samples, 0 missed; cost 0.0216
	// t0000: score 2, pass false: The answer is cut off: no client can read it.
}

func ExampleParseConfig() {
	cfg, err := conteval.ParseConfig([]byte(`{
		"version": "2025-06-01",
		"sampling": {"head_rate": 0.1, "hash_consistent": true},
		"gate": {"floor": 0.9}
	}`))
	fmt.Println(cfg.Version, cfg.Sampling.HeadRate, cfg.Gate.Floor, err)
	_, err = conteval.ParseConfig([]byte(`{"version": "2025-06-01", "gate": {"flor": 0.9}}`))
	fmt.Println(err)
	// Output:
	// 2025-06-01 0.1 0.9 <nil>
	// conteval: config: invalid config: json: unknown field "flor"
}

func ExampleWriteCases() {
	t := &trace.Trace{ID: "prod-7", Route: "after-sales", UserTurns: []string{"What is the return policy?"},
		Steps: []*trace.Step{
			{Index: 0, Kind: trace.KindRetrieval, Name: "kb", DocIDs: []string{"KB-RET-01"}, Scores: []float64{2}},
			{Index: 1, Kind: trace.KindModel, Result: "Seven days. [KB-RET-04]"},
		}}
	rep, _ := (&conteval.Evaluator{Config: conteval.Config{Version: "v1"}}).Run(context.Background(), []*trace.Trace{t}, time.Date(2025, 6, 1, 0, 0, 0, 0, time.UTC))
	_ = conteval.WriteCases(os.Stdout, rep.Cases)
	// Output:
	// {"id":"ce-prod-7","category":"normal","title":"citations-retrieved failed on production trace prod-7 (route after-sales); route pass rate over all samples, last 1 rounds: 0.00","route":"after-sales","turns":["What is the return policy?"],"answer":{"must_not":["KB-RET-04"]},"tags":["ce_citations-retrieved","continuous-eval","review"]}
}

func ExampleFromEvaluate() {
	// The agent proposed a tool it was not given; the guard blocked it.
	// FromRule judges what ran and passes; FromEvaluate judges what the
	// agent attempted, as Guard.Evaluate does, and fails.
	t := &trace.Trace{ID: "t1", Tools: []trace.ToolSpec{{Name: "query_order"}}, Steps: []*trace.Step{
		{Index: 0, Kind: trace.KindTool, Name: "cancel_order", Args: `{"order_id":"A1002"}`, Blocked: true},
	}}
	g := guard.New(guard.Config{})
	allow, _ := g.Rule(rules.AllowList)
	fmt.Println(conteval.FromRule("allow-list", allow).Check(t).Status)
	o := conteval.FromEvaluate("guard", g.Evaluate).Check(t)
	fmt.Println(o.Status, o.Finding.Rule, o.Finding.Message)
	// Output:
	// pass
	// fail tool-allow-list tool "cancel_order" is not on the allow-list
}

func ExampleDefaults() {
	for _, a := range conteval.Defaults(conteval.AssertionConfig{
		JSONRoutes: []string{"order-api"},
		Disable:    []string{conteval.NameAllowedTools},
		GuardRules: []string{rules.Grounding},
	}) {
		fmt.Println(a.Name())
	}
	// Output:
	// json-answer
	// non-negative-amounts
	// citations-retrieved
	// refusal-without-evidence
	// grounding
}

func ExampleJSONAnswer() {
	a := conteval.JSONAnswer("order-api")
	t := &trace.Trace{ID: "t1", Route: "order-api", Steps: []*trace.Step{
		{Index: 0, Kind: trace.KindModel, Result: `{"order_id":"A1001","status":`},
	}}
	o := a.Check(t)
	fmt.Println(o.Status, o.Finding.Tags)
	// Output: fail [bad-json-answer]
}

func ExampleReadTrend() {
	var buf strings.Builder
	for i, version := range []string{"v1", "v1", "v2"} {
		_ = conteval.WriteTrendPoint(&buf, conteval.TrendPoint{
			Time: time.Date(2025, 6, 1, i, 0, 0, 0, time.UTC), ConfigVersion: version,
			VersionChanged: i == 2, Head: conteval.CurvePoint{N: 150, Passes: 145 - i, Rate: float64(145-i) / 150},
		})
	}
	points, err := conteval.ReadTrend(strings.NewReader(buf.String()))
	for _, p := range points {
		fmt.Printf("%s %s head %.3f version changed %v\n", p.Time.Format("15:04"), p.ConfigVersion, p.Head.Rate, p.VersionChanged)
	}
	fmt.Println(err)
	// Output:
	// 00:00 v1 head 0.967 version changed false
	// 01:00 v1 head 0.960 version changed false
	// 02:00 v2 head 0.953 version changed true
	// <nil>
}

func ExampleCaseID() {
	fmt.Println(conteval.CaseID("prod-00042-9f3a"))
	fmt.Println(conteval.CaseID("session 7 / run 3"))
	// Output:
	// ce-prod-00042-9f3a
	// ce-session7run3-b7916e29
}

// A streamed round reads traces one at a time, in memory that does not
// grow with their number; a call outside the allow-list makes it red by
// itself.
func ExampleEvaluator_RunStream() {
	seq := func(yield func(*trace.Trace, error) bool) {
		for i := range 1000 {
			t := &trace.Trace{ID: fmt.Sprintf("t%04d", i), Route: "order-status", Steps: []*trace.Step{
				{Kind: trace.KindTool, Name: "query_order", Args: `{"order_id":"A1"}`, Result: `{"status":"shipped"}`},
				{Index: 1, Kind: trace.KindModel, Result: "Shipped.", Cost: 0.001},
			}}
			if i == 500 {
				t.Steps[0].Name = "issue_refund"
			}
			if !yield(t, nil) {
				return
			}
		}
	}
	ev := &conteval.Evaluator{Config: conteval.Config{Version: "v1", Sampling: conteval.Sampling{Seed: 1, HashConsistent: true},
		Assertions: conteval.AssertionConfig{AllowedTools: []string{"query_order"}}}}
	rep, err := ev.RunStream(context.Background(), seq, time.Date(2025, 6, 1, 0, 0, 0, 0, time.UTC))
	if err != nil {
		panic(err)
	}
	fmt.Println(rep.Traces, "traces,", rep.Privilege, "outside the allow-list, verdict", rep.Verdict, "exit", rep.Verdict.ExitCode())
	fmt.Println(len(rep.Warnings), "assertions applied to nothing")
	// Output:
	// 1000 traces, 1 outside the allow-list, verdict red exit 1
	// 4 assertions applied to nothing
}
