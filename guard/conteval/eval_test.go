package conteval

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"iter"
	"math"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/agentguard/agentguard/guard/guardtest"
	"github.com/agentguard/agentguard/guard/replay"
	"github.com/agentguard/agentguard/ledger"
	"github.com/agentguard/agentguard/ledger/badgerstore"
	"github.com/agentguard/agentguard/trace"
	"github.com/tmc/langchaingo/llms"
)

var roundTime = time.Date(2025, 6, 1, 12, 0, 0, 0, time.UTC)

// population returns n traces shaped like guarded production runs on two
// routes: "api" answers JSON, "chat" answers text. About 4% of the api
// answers are not JSON, 1% of chat runs call a tool off the allow-list,
// 2% of runs hit a tool error and 3% have a vague intent.
func population(n int, seed uint64) []*trace.Trace {
	out := make([]*trace.Trace, 0, n)
	for t := range populationSeq(n, seed) {
		out = append(out, t)
	}
	return out
}

// populationSeq yields population(n, seed) one trace at a time, for
// streamed rounds that must not hold them all.
func populationSeq(n int, seed uint64) iter.Seq2[*trace.Trace, error] {
	return func(yield func(*trace.Trace, error) bool) {
		rng := rand.New(rand.NewPCG(seed, 1))
		for i := range n {
			if !yield(populationTrace(rng, i, n), nil) {
				return
			}
		}
	}
}

func populationTrace(rng *rand.Rand, i, n int) *trace.Trace {
	route := "chat"
	if i%2 == 0 {
		route = "api"
	}
	conf := 0.9
	if rng.IntN(100) < 3 {
		conf = 0.4
	}
	q := toolCall("query_order", `{"order_id":"A1001"}`, `{"status":"shipped"}`)
	q.Cost = 0.001
	if rng.IntN(100) < 2 {
		q.Error, q.Result = "timeout", ""
	}
	steps := []*trace.Step{intent("check_order_status", conf), q}
	if route == "chat" && rng.IntN(100) < 1 {
		steps = append(steps, toolCall("issue_voucher", `{"value":5}`, "ok"))
	}
	text := "Order A1001 has shipped."
	if route == "api" {
		text = `{"order_id":"A1001","status":"shipped"}`
		if rng.IntN(100) < 4 {
			text = `{"order_id":"A1001","status":`
		}
	}
	a := answer(text)
	a.Cost = 0.002 + rng.Float64()*0.002
	steps = append(steps, a)
	t := tr(fmt.Sprintf("t%06d", i), route, steps...)
	t.SessionID = fmt.Sprintf("s%d", i)
	t.UserTurns = []string{"Where is order A1001?"}
	t.Start = roundTime.Add(-time.Duration(n-i) * time.Second)
	return t
}

func testConfig() Config {
	return Config{
		Version:       "test-1",
		Sampling:      Sampling{Seed: 1, HeadRate: 0.1},
		Gate:          Gate{Seed: 1, Resamples: 2000},
		Assertions:    AssertionConfig{AllowedTools: []string{"query_order"}, JSONRoutes: []string{"api"}},
		CostPerSample: 0.0001,
	}
}

func TestRun(t *testing.T) {
	traces := population(3000, 1)
	ev := &Evaluator{Config: testConfig()}
	rep, err := ev.Run(context.Background(), traces, roundTime)
	if err != nil {
		t.Fatal(err)
	}
	t.Log(rep.GateLine())
	if rep.Traces != 3000 || rep.ConfigVersion != "test-1" || rep.ConfigFingerprint != testConfig().Fingerprint() {
		t.Errorf("traces %d, version %q, fingerprint %q", rep.Traces, rep.ConfigVersion, rep.ConfigFingerprint)
	}
	// The counts add up.
	var head, all Count
	for _, s := range rep.Samples {
		all.add(s.Passed)
		if s.Bands.Has(BandHead) {
			head.add(s.Passed)
		}
		if len(s.Results) != 5 {
			t.Fatalf("sample %s has %d results, want 5", s.TraceID, len(s.Results))
		}
		if s.Passed != (len(s.Failed()) == 0) {
			t.Errorf("sample %s: passed %v with %d failures", s.TraceID, s.Passed, len(s.Failed()))
		}
	}
	if rep.Head.N != head.N || rep.Head.Passes != head.Passes || rep.All.N != all.N || rep.All.Passes != all.Passes {
		t.Errorf("curves %d/%d and %d/%d, want %d/%d and %d/%d", rep.Head.Passes, rep.Head.N, rep.All.Passes, rep.All.N, head.Passes, head.N, all.Passes, all.N)
	}
	// About 1% of chat runs call a tool off the allow-list: each is
	// sampled, and they make the verdict red whatever the head says.
	if rep.Privilege == 0 || rep.Bands[BandPrivilege] != rep.Privilege || rep.Verdict != Red {
		t.Errorf("privilege %d (band %d), verdict %s; want some, and red", rep.Privilege, rep.Bands[BandPrivilege], rep.Verdict)
	}
	// The forced bands hold every trace with an error or a vague intent.
	wantForced := 0
	for _, tr := range traces {
		for _, s := range tr.Steps {
			if s.Error != "" || (s.Intent != "" && s.Confidence < 0.6) {
				wantForced++
				break
			}
		}
	}
	if got := rep.Bands[BandError] + rep.Bands[BandLowConfidence] - countBoth(rep); got != wantForced {
		t.Errorf("error or low-confidence samples = %d, want %d", got, wantForced)
	}
	// Head ≈ 10% of all traces; the problem density over all samples is
	// higher than the head's rate would suggest only if forced samples fail
	// more: here the failures are independent of the bands, so both
	// curves sit near the true pass rate (about 97.5%).
	if rep.Head.N < 240 || rep.Head.N > 360 {
		t.Errorf("head sample %d, want about 300", rep.Head.N)
	}
	stats := map[string]AssertionStats{}
	for _, a := range rep.Assertions {
		stats[a.Name] = a
	}
	if s := stats[NameJSONAnswer]; s.Failed == 0 || s.Applied == 0 {
		t.Errorf("json-answer stats %+v, want failures", s)
	}
	if s := stats[NameAllowedTools]; s.Failed == 0 {
		t.Errorf("allow-list stats %+v, want failures", s)
	}
	if s := stats[NameCitationsRetrieved]; s.Applied != 0 || s.Skipped != len(rep.Samples) {
		t.Errorf("citations stats %+v, want skipped everywhere", s)
	}
	// Cost: samples × cost each, no judge.
	if want := float64(len(rep.Samples)) * 0.0001; rep.Cost.Total != want || rep.Cost.JudgeCalls != 0 {
		t.Errorf("cost %+v, want total %v", rep.Cost, want)
	}
	if !strings.Contains(rep.GateLine(), "config test-1") || !strings.Contains(rep.GateLine(), "cost ") {
		t.Errorf("gate line %q lacks the cost or the config version", rep.GateLine())
	}
	// One case per red sample, carrying the version.
	if got, want := len(rep.Cases)+rep.Uncased, len(rep.Red()); got != want || rep.Uncased != 0 {
		t.Errorf("%d cases and %d uncased for %d red samples", len(rep.Cases), rep.Uncased, want)
	}
	for _, c := range rep.Cases {
		// Nobody has checked the case yet: unverified, tagged for review;
		// the round's date is Case.Time.
		if c.ConfigVersion != "test-1" || c.Case.LastVerified != "" || !slices.Contains(c.Case.Tags, TagReview) || c.Time.Format("2006-01-02") != "2025-06-01" {
			t.Errorf("case %s: version %q, last verified %q, tags %v, round %v", c.Case.ID, c.ConfigVersion, c.Case.LastVerified, c.Case.Tags, c.Time)
		}
	}
	if tp := rep.Trend; tp.ConfigVersion != "test-1" || tp.VersionChanged || tp.Samples != len(rep.Samples) {
		t.Errorf("trend point %+v", tp)
	}
}

func countBoth(rep *Report) int {
	n := 0
	for _, s := range rep.Samples {
		if s.Bands.Has(BandError) && s.Bands.Has(BandLowConfidence) {
			n++
		}
	}
	return n
}

// TestRunDeterministic: the same traces, config and time give the same
// report, byte for byte.
func TestRunDeterministic(t *testing.T) {
	traces := population(2000, 2)
	var out [2][]byte
	for i := range out {
		rep, err := (&Evaluator{Config: testConfig()}).Run(context.Background(), traces, roundTime)
		if err != nil {
			t.Fatal(err)
		}
		out[i], _ = json.Marshal(rep)
	}
	if !bytes.Equal(out[0], out[1]) {
		t.Error("two runs over the same input gave different reports")
	}
}

// TestConfigVersionRecorded: the version goes into the report, the trend
// point, the cases; a new version is marked on the trend, and so is a
// parameter change without one.
func TestConfigVersionRecorded(t *testing.T) {
	traces := population(1000, 3)
	cfg := testConfig()
	first, err := (&Evaluator{Config: cfg}).Run(context.Background(), traces, roundTime)
	if err != nil {
		t.Fatal(err)
	}
	history := []TrendPoint{first.Trend}

	tests := []struct {
		name           string
		edit           func(*Config)
		version        string
		changed, param bool
	}{
		{"same config", func(*Config) {}, "test-1", false, false},
		{"new version", func(c *Config) { c.Version = "test-2"; c.Sampling.HeadRate = 0.2 }, "test-2", true, false},
		{"edited, same version", func(c *Config) { c.Gate.Floor = 0.9 }, "test-1", false, true},
		{"explicit defaults are no change", func(c *Config) { c.Gate.MaxWidth = DefaultMaxWidth }, "test-1", false, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c := cfg
			tt.edit(&c)
			rep, err := (&Evaluator{Config: c, History: history}).Run(context.Background(), traces, roundTime.Add(time.Hour))
			if err != nil {
				t.Fatal(err)
			}
			if rep.ConfigVersion != tt.version || rep.Trend.ConfigVersion != tt.version {
				t.Errorf("version %q / %q, want %q", rep.ConfigVersion, rep.Trend.ConfigVersion, tt.version)
			}
			if rep.Trend.VersionChanged != tt.changed || rep.Trend.ParamsChanged != tt.param {
				t.Errorf("version_changed %v, params_changed %v; want %v, %v", rep.Trend.VersionChanged, rep.Trend.ParamsChanged, tt.changed, tt.param)
			}
			for _, c := range rep.Cases {
				if c.ConfigVersion != tt.version {
					t.Fatalf("case %s has version %q", c.Case.ID, c.ConfigVersion)
				}
				if n := len(c.RouteHistory); n != 2 || c.RouteHistory[0].ConfigVersion != "test-1" {
					t.Fatalf("case %s history %+v, want the first round and this one", c.Case.ID, c.RouteHistory)
				}
			}
		})
	}
}

// TestRedToRegressionCase: red samples become cases that the health
// check's loader reads back, tagged ce_<assertion>, with the trace id, the
// failed assertion and the route's history in the details.
func TestRedToRegressionCase(t *testing.T) {
	traces := population(1000, 4)
	// A red sample for each built-in assertion that the population lacks.
	extra := []*trace.Trace{
		tr("cite", "chat", toolCall("search_kb", `{"query":"returns"}`, `[{"id":"KB-RET-01","score":2}]`), answer("Returns are free. [KB-RET-09]")),
		tr("norefuse", "chat", toolCall("search_kb", `{"query":"vip"}`, `[]`), answer("According to clause 7.3 you get ¥50.")),
		tr("amount", "api", toolCall("issue_refund", `{"order_id":"A1","amount":-3}`, "ok"), answer(`{"refund":"ok"}`)),
		tr("voucher", "chat", toolCall("issue_voucher", `{"value":5}`, "ok"), answer("Here is a voucher.")),
	}
	for _, x := range extra {
		x.UserTurns = []string{"Can you help me?", "Please."}
		x.Steps[0].Error = "" // keep them out of the error band: the head or tail must find them
	}
	traces = append(traces, extra...)
	cfg := testConfig()
	cfg.Sampling.HeadRate = 1 // every trace in the head
	cfg.Assertions.RetrievalTools = []string{"search_kb"}
	cfg.Assertions.AllowedTools = []string{"query_order", "search_kb"}
	rep, err := (&Evaluator{Config: cfg}).Run(context.Background(), traces, roundTime)
	if err != nil {
		t.Fatal(err)
	}
	var buf bytes.Buffer
	if err := WriteCases(&buf, rep.Cases); err != nil {
		t.Fatal(err)
	}
	loaded, err := replay.LoadCases(&buf, "cases.jsonl")
	if err != nil {
		t.Fatalf("the health check's loader rejects the cases: %v", err)
	}
	if len(loaded) != len(rep.Cases) || len(loaded) == 0 {
		t.Fatalf("loaded %d cases, wrote %d", len(loaded), len(rep.Cases))
	}
	byID := map[string]replay.Case{}
	for i, c := range loaded {
		if c.ID != rep.Cases[i].Case.ID {
			t.Errorf("case %d: id %q, want %q", i, c.ID, rep.Cases[i].Case.ID)
		}
		byID[c.ID] = c
	}
	tests := []struct {
		trace, tag string
		check      func(replay.Case) bool
	}{
		{"cite", "ce_citations-retrieved", func(c replay.Case) bool { return slices.Contains(c.Answer.MustNot, "KB-RET-09") }},
		{"norefuse", "ce_refusal-without-evidence", func(c replay.Case) bool {
			return len(c.Answer.Must) == 1 && strings.Contains(c.Answer.Must[0], "I could not find a reliable answer")
		}},
		{"amount", "ce_non-negative-amounts", func(c replay.Case) bool { return true }},
		{"voucher", "ce_allow-list", func(c replay.Case) bool {
			return len(c.Constraints) == 1 && c.Constraints[0].NoTool == "issue_voucher"
		}},
	}
	for _, tt := range tests {
		c, ok := byID["ce-"+tt.trace]
		switch {
		case !ok:
			t.Errorf("no case for trace %s", tt.trace)
		case !slices.Contains(c.Tags, tt.tag) || !slices.Contains(c.Tags, TagContinuousEval):
			t.Errorf("case %s tags %v, want %s", c.ID, c.Tags, tt.tag)
		case !tt.check(c):
			t.Errorf("case %s: %+v", c.ID, c)
		case !strings.Contains(c.Title, tt.trace) || len(c.Turns) != 2:
			t.Errorf("case %s: title %q, turns %v", c.ID, c.Title, c.Turns)
		}
	}
	// The details file carries the provenance and reads back whole.
	buf.Reset()
	if err := WriteCaseDetails(&buf, rep.Cases); err != nil {
		t.Fatal(err)
	}
	details, err := ReadCaseDetails(&buf)
	if err != nil {
		t.Fatal(err)
	}
	a, _ := json.Marshal(details)
	b, _ := json.Marshal(rep.Cases)
	if !bytes.Equal(a, b) {
		t.Errorf("details do not round-trip:\n%s\n%s", a, b)
	}
	for _, c := range details {
		if c.TraceID == "" || len(c.Failed) == 0 || !strings.HasPrefix(c.Failed[0].Rule, RulePrefix) || len(c.RouteHistory) != 1 {
			t.Errorf("details of %s: %+v", c.Case.ID, c)
		}
	}
}

// TestLedgerFiling files red samples in a real (in-memory) ledger, once:
// a second round over the same traces files nothing new.
func TestLedgerFiling(t *testing.T) {
	led, err := badgerstore.Open("", badgerstore.Options{InMemory: true})
	if err != nil {
		t.Fatal(err)
	}
	defer led.Close()
	traces := population(1500, 5)
	ev := &Evaluator{Config: testConfig(), Ledger: led}
	rep, err := ev.Run(context.Background(), traces, roundTime)
	if err != nil {
		t.Fatal(err)
	}
	want := 0
	for _, s := range rep.Red() {
		want += len(s.Failed())
	}
	if rep.Filed != want || want == 0 {
		t.Fatalf("filed %d violations, want %d", rep.Filed, want)
	}
	entries, err := led.Query(context.Background(), ledger.Query{Rule: RulePrefix + NameJSONAnswer})
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range entries {
		if e.TraceID == "" || e.Verdict == "" || e.Message == "" || !e.Time.Equal(roundTime) {
			t.Errorf("entry %+v", e)
		}
	}
	again, err := ev.Run(context.Background(), traces, roundTime.Add(time.Hour))
	if err != nil {
		t.Fatal(err)
	}
	if again.Filed != 0 || again.AlreadyFiled != want {
		t.Errorf("second round filed %d, skipped %d; want 0 and %d", again.Filed, again.AlreadyFiled, want)
	}
}

func TestRunErrors(t *testing.T) {
	ctx := context.Background()
	bad := &Evaluator{Config: Config{Sampling: Sampling{HeadRate: 2}}}
	if _, err := bad.Run(ctx, nil, roundTime); !errors.Is(err, ErrConfig) {
		t.Errorf("head rate 2: %v, want ErrConfig", err)
	}
	dup := &Evaluator{Assertions: []Assertion{JSONAnswer(), Assert(NameJSONAnswer, func(*trace.Trace) Outcome { return Passed() })}}
	if _, err := dup.Run(ctx, nil, roundTime); !errors.Is(err, ErrConfig) {
		t.Errorf("duplicate names: %v, want ErrConfig", err)
	}
	rep, err := (&Evaluator{}).Run(ctx, nil, roundTime)
	if err != nil || rep.Verdict != NotEnough || rep.ConfigVersion != Unversioned {
		t.Errorf("no traces: %v, %v", rep, err)
	}
}

// judgeModel is a judge stand-in: it scores 2 the runs whose automatic
// checks failed, and one passing run in ten by the length of its prompt;
// the others 5.
func judgeModel(usage bool) *guardtest.Model {
	return guardtest.Func(func(_ context.Context, msgs []llms.MessageContent, _ llms.CallOptions) (guardtest.Reply, error) {
		prompt := msgs[len(msgs)-1].Parts[0].(llms.TextContent).Text
		r := guardtest.Text(`{"score": 5, "reason": "The answer follows from the order lookup."}`)
		if strings.Contains(prompt, "Automatic checks that failed") || len(prompt)%10 == 0 {
			r = guardtest.Text(`{"score": 2, "reason": "The answer is not what the tools returned."}`)
		}
		if usage {
			r.Usage = &guardtest.Usage{In: 1000, Out: 20}
		}
		return r, nil
	})
}

func TestJudge(t *testing.T) {
	traces := population(2000, 6)
	for _, usage := range []bool{true, false} {
		t.Run(fmt.Sprintf("usage=%v", usage), func(t *testing.T) {
			cfg := testConfig()
			cfg.Judge = JudgeConfig{HeadShare: 0.2, InputPerMillion: 1, OutputPerMillion: 4}
			model := judgeModel(usage)
			rep, err := (&Evaluator{Config: cfg, Judge: model}).Run(context.Background(), traces, roundTime)
			if err != nil {
				t.Fatal(err)
			}
			js := rep.Judge
			red := len(rep.Red())
			if js.Red != red || js.Confirmed != red || js.Disputed != 0 {
				t.Errorf("judge %+v, want all %d red samples confirmed", js, red)
			}
			passingHead := 0
			for _, s := range rep.Samples {
				if s.Bands.Has(BandHead) && s.Passed {
					passingHead++
				}
			}
			// About a fifth of the passing head samples, at least one.
			if js.Head < 1 || js.Head > passingHead/2 {
				t.Errorf("judged %d of %d passing head samples, want about %d", js.Head, passingHead, passingHead/5)
			}
			if js.Calls != len(model.Received()) || js.Calls != js.Red+js.Head {
				t.Errorf("calls %d, model saw %d, red %d + head %d", js.Calls, len(model.Received()), js.Red, js.Head)
			}
			if usage && (js.TokensIn != 1000*js.Calls || math.Abs(js.Cost-float64(js.Calls)*(1000*1+20*4)/1e6) > 1e-12) {
				t.Errorf("usage: tokens %d, cost %v for %d calls", js.TokensIn, js.Cost, js.Calls)
			}
			if !usage && (js.TokensIn == 0 || js.Cost == 0) {
				t.Errorf("estimated usage: tokens %d, cost %v", js.TokensIn, js.Cost)
			}
			if want := float64(len(rep.Samples))*cfg.CostPerSample + js.Cost; math.Abs(rep.Cost.Total-want) > 1e-12 || rep.Cost.JudgeCalls != js.Calls {
				t.Errorf("round cost %+v, want total %v", rep.Cost, want)
			}
			// The judge's verdicts never change the pass rates.
			plain, _ := (&Evaluator{Config: cfg}).Run(context.Background(), traces, roundTime)
			if plain.Head != rep.Head || plain.All != rep.All {
				t.Error("judging changed the curves")
			}
		})
	}
	t.Run("max calls and errors", func(t *testing.T) {
		cfg := testConfig()
		cfg.Judge.MaxCalls = 3
		broken := guardtest.Func(func(context.Context, []llms.MessageContent, llms.CallOptions) (guardtest.Reply, error) {
			return guardtest.Text("maybe"), nil
		})
		rep, err := (&Evaluator{Config: cfg, Judge: broken}).Run(context.Background(), traces, roundTime)
		if err != nil {
			t.Fatal(err)
		}
		if js := rep.Judge; js.Calls != 3 || js.Errors != 3 || js.Left == 0 {
			t.Errorf("judge %+v, want 3 unparsable calls and some left", js)
		}
	})
}
