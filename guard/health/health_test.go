package health

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/agentguard/agentguard/guard"
	"github.com/agentguard/agentguard/guard/replay"
	"github.com/agentguard/agentguard/ledger/badgerstore"
	"github.com/agentguard/agentguard/trace"
	"github.com/agentguard/agentguard/trace/redact"
)

var update = flag.Bool("update", false, "rewrite the golden files under testdata")

func TestWeightsValidate(t *testing.T) {
	tests := []struct {
		name string
		w    Weights
		ok   bool
	}{
		{"default", DefaultWeights(), true},
		{"all on one", Weights{Accuracy: 100}, true},
		{"fractions", Weights{12.5, 12.5, 25, 25, 25}, true},
		{"sum 90", Weights{30, 25, 20, 15, 0}, false},
		{"sum 110", Weights{40, 25, 20, 15, 10}, false},
		{"negative", Weights{130, -30, 0, 0, 0}, false},
		{"NaN", Weights{math.NaN(), 25, 20, 15, 10}, false},
		{"infinite", Weights{math.Inf(1), 0, 0, 0, 0}, false},
		{"zero", Weights{}, false}, // Options treats the zero value as the default
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			err := tt.w.Validate()
			if (err == nil) != tt.ok {
				t.Fatalf("Validate() = %v, want ok=%v", err, tt.ok)
			}
			if err != nil && (!errors.Is(err, ErrWeights) || !strings.HasPrefix(err.Error(), "health: weights: ")) {
				t.Errorf("err = %q, want an ErrWeights with the package prefix", err)
			}
		})
	}
}

func TestScoreRejectsBadWeightsAndRubric(t *testing.T) {
	if _, err := Score(context.Background(), nil, nil, nil, Options{Weights: Weights{Accuracy: 50}}); !errors.Is(err, ErrWeights) {
		t.Errorf("bad weights: err = %v", err)
	}
	for _, r := range []Rubric{{MinorFlaws: -1}} {
		if _, err := Score(context.Background(), nil, nil, nil, Options{Rubric: r}); !errors.Is(err, ErrRubric) {
			t.Errorf("rubric %+v: err = %v", r, err)
		}
	}
}

func TestTotal(t *testing.T) {
	tests := []struct {
		name          string
		w             Weights
		scores        [5]float64
		total, points float64
	}{
		{"seed check", DefaultWeights(), [5]float64{4, 4, 5, 3, 4}, 4.05, 81},
		{"all healthy", DefaultWeights(), [5]float64{5, 5, 5, 5, 5}, 5, 100},
		{"all unusable", DefaultWeights(), [5]float64{1, 1, 1, 1, 1}, 1, 20},
		{"accuracy only", Weights{Accuracy: 100}, [5]float64{2, 5, 5, 5, 5}, 2, 40},
		{"fractions", DefaultWeights(), [5]float64{2.4, 2.3, 3, 4, 4}, 2.895, 57.9},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			scores := map[trace.Dimension]float64{}
			for i, d := range Dimensions {
				scores[d] = tt.scores[i]
			}
			total, points := tt.w.Total(scores)
			if math.Abs(total-tt.total) > 1e-9 || math.Abs(points-tt.points) > 1e-9 {
				t.Errorf("Total = %v, %v; want %v, %v", total, points, tt.total, tt.points)
			}
		})
	}
}

// TestWorkedExamples pins the method's two worked examples: the total on
// the 1–5 scale, the points, and the band with its action.
func TestWorkedExamples(t *testing.T) {
	tests := []struct {
		scores [5]float64
		total  float64
		points string
		label  string
	}{
		{[5]float64{4, 4, 5, 3, 4}, 4.05, "81", "sub-healthy, local repair"},
		{[5]float64{3.3, 3.7, 4.0, 4.2, 4.4}, 3.785, "76", "sub-healthy, local repair"},
	}
	for _, tt := range tests {
		scores := map[trace.Dimension]float64{}
		for i, d := range Dimensions {
			scores[d] = tt.scores[i]
		}
		total, points := DefaultWeights().Total(scores)
		if math.Abs(total-tt.total) > 1e-9 {
			t.Errorf("%v: total %v, want %v", tt.scores, total, tt.total)
		}
		if got := fmt.Sprintf("%.0f", points); got != tt.points {
			t.Errorf("%v: points %s, want %s", tt.scores, got, tt.points)
		}
		if got := BandOf(points).Label(); got != tt.label {
			t.Errorf("%v: band %q, want %q", tt.scores, got, tt.label)
		}
	}
}

// TestBandOf pins the band table at and around each boundary.
func TestBandOf(t *testing.T) {
	for _, tt := range []struct {
		points float64
		want   Band
		action string
	}{
		{100, Healthy, "keep monitoring"}, {90, Healthy, "keep monitoring"},
		{89.9, SubHealthy, "local repair"}, {81, SubHealthy, "local repair"}, {75.7, SubHealthy, "local repair"}, {75, SubHealthy, "local repair"},
		{74.9, Unhealthy, "structural repair"}, {60, Unhealthy, "structural repair"},
		{59.9, Critical, "not releasable: rework before release"}, {20, Critical, "not releasable: rework before release"}, {0, Critical, "not releasable: rework before release"},
	} {
		got := BandOf(tt.points)
		if got != tt.want || got.Action() != tt.action {
			t.Errorf("BandOf(%v) = %s (%s), want %s (%s)", tt.points, got, got.Action(), tt.want, tt.action)
		}
	}
}

func TestHeadline(t *testing.T) {
	if got, want := Headline(2.08, 41.6), "2.08 of 5 (42 of 100 points, critical, not releasable: rework before release)"; got != want {
		t.Errorf("Headline = %q, want %q", got, want)
	}
}

func TestWeightsFrom(t *testing.T) {
	w, err := ParseWeights("accuracy=25, coherence=25,memory=20,stability=10,efficiency=20")
	if err != nil || w != (Weights{25, 25, 20, 10, 20}) {
		t.Errorf("ParseWeights = %+v, %v", w, err)
	}
	for _, bad := range []string{
		"accuracy=30,coherence=25,memory=20,stability=15",                // efficiency missing
		"accuracy=30,coherence=25,memory=20,stability=15,efficiency=20",  // 110
		"accuracy=30,coherence=25,memory=20,stability=15,speed=10",       // unknown
		"accuracy=30,accuracy=25,memory=20,stability=15,efficiency=10",   // twice
		"accuracy=-10,coherence=65,memory=20,stability=15,efficiency=10", // negative
		"accuracy=thirty,coherence=25,memory=20,stability=15,efficiency=10",
		"",
	} {
		if _, err := ParseWeights(bad); !errors.Is(err, ErrWeights) {
			t.Errorf("ParseWeights(%q): err = %v, want ErrWeights", bad, err)
		}
	}
}

func TestParseDimensions(t *testing.T) {
	got, err := ParseDimensions("accuracy, memory,accuracy")
	if err != nil || !slices.Equal(got, []trace.Dimension{trace.Accuracy, trace.Memory}) {
		t.Errorf("ParseDimensions = %v, %v", got, err)
	}
	if got, err := ParseDimensions(""); err != nil || got != nil {
		t.Errorf("ParseDimensions(\"\") = %v, %v", got, err)
	}
	if _, err := ParseDimensions("accuracy,speed"); !errors.Is(err, ErrDimension) {
		t.Errorf("unknown dimension: err = %v", err)
	}
}

func TestCheckFloor(t *testing.T) {
	for _, ok := range []float64{0, 50, 70, 100, 5.5} {
		if err := CheckFloor(ok); err != nil {
			t.Errorf("CheckFloor(%v) = %v", ok, err)
		}
	}
	for _, bad := range []float64{150, -5, 3.5, 5, math.NaN()} {
		if err := CheckFloor(bad); !errors.Is(err, ErrFloor) {
			t.Errorf("CheckFloor(%v) = %v, want ErrFloor", bad, err)
		}
	}
	if err := CheckFloor(3.5); !strings.Contains(err.Error(), "use 70") {
		t.Errorf("CheckFloor(3.5) = %v, want the hint to use 70", err)
	}
}

// TestRubricScore quotes the method's rubric: "5 clean; 4 one or two minor
// flaws; 3 recovered by a fallback; 2 structural defects; 1 unusable",
// applied to each run.
func TestRubricScore(t *testing.T) {
	tests := []struct {
		name   string
		rubric Rubric
		hits   RunHits
		want   int
	}{
		{"clean", Rubric{}, RunHits{Answered: true}, 5},
		{"one minor flaw", Rubric{}, RunHits{Minor: 1, Answered: true}, 4},
		{"two minor flaws", Rubric{}, RunHits{Minor: 2, Answered: true}, 4},
		{"three minor flaws are more than a couple", Rubric{}, RunHits{Minor: 3, Answered: true}, 3},
		{"recovered by a fallback", Rubric{}, RunHits{Recovered: 1, Minor: 1, Answered: true}, 3},
		{"structural defect", Rubric{}, RunHits{Failed: 1, Recovered: 2, Answered: true}, 2},
		{"a defect and no answer: unusable", Rubric{}, RunHits{Failed: 1}, 1},
		{"no answer but nothing failed", Rubric{}, RunHits{Minor: 1}, 4},
		{"a stricter rubric: one minor flaw only", Rubric{MinorFlaws: 1}, RunHits{Minor: 2, Answered: true}, 3},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := tt.rubric.Score(tt.hits); got != tt.want {
				t.Errorf("Score(%+v) = %d, want %d", tt.hits, got, tt.want)
			}
		})
	}
}

// TestMeanScore: a dimension is the mean of its runs, so one structural
// defect in ten runs costs 0.3, not the band.
func TestMeanScore(t *testing.T) {
	tests := []struct {
		scores []float64
		want   float64
		reason string
	}{
		{[]float64{5, 5, 5, 5, 5, 5, 5, 5, 5, 2}, 4.7, "mean of 10 runs: 9 clean, 1 structural"},
		{[]float64{4, 3, 2, 1}, 2.5, "mean of 4 runs: 1 minor flaws, 1 recovered, 1 structural, 1 unusable"},
		{nil, 5, "no run exercised it"},
	}
	for _, tt := range tests {
		got, _, reason := meanScore(tt.scores, 0)
		if got != tt.want || reason != tt.reason {
			t.Errorf("meanScore(%v) = %v %q, want %v %q", tt.scores, got, reason, tt.want, tt.reason)
		}
	}
}

// run builds a run of caseID from answers and steps.
func run(caseID string, answers []string, steps ...*trace.Step) *replay.Run {
	r := &replay.Run{Case: caseID, TraceID: caseID + "-1", Trace: &trace.Trace{ID: caseID + "-1"}}
	for i, s := range steps {
		s.Index = i
		r.Trace.Steps = append(r.Trace.Steps, s)
	}
	for _, a := range answers {
		r.Turns = append(r.Turns, replay.Turn{Answer: a, Status: guard.StatusDone})
	}
	return r
}

func tool(turn int, name, args, result string) *trace.Step {
	return &trace.Step{Kind: trace.KindTool, Turn: turn, Name: name, Args: args, Result: result}
}

func causes(hits []Hit) []string {
	var out []string
	for _, h := range hits {
		out = append(out, h.Tag+": "+h.Cause)
	}
	return out
}

func TestFabrication(t *testing.T) {
	kb := newKnowledgeBase([]Document{{ID: "KB-1", Text: "Returns within 7 days; see clause 2.1 and 第3条."}})
	retrievers := map[string]bool{"search_kb": true}
	docs := `[{"id":"KB-1","score":3.2}]`
	tests := []struct {
		name   string
		turns  []string
		answer string
		steps  []*trace.Step
		want   []string
	}{
		{"grounded", []string{"q"}, "Per clause 2.1 and 第3条 you may return it. [KB-1]", []*trace.Step{tool(0, "search_kb", "", docs)}, nil},
		{"numbers that are not clauses", []string{"q"}, "Within 7 days, for ¥50, order A1003.", nil, nil},
		{"invented clause after an empty retrieval", []string{"q"}, "According to clause 7.3 you get ¥50.", []*trace.Step{tool(0, "search_kb", "", "[]")},
			[]string{"invented-clause: empty retrieval → invented clause"}},
		{"invented section beside a real document", []string{"q"}, "Per section 4.2, it is covered. [KB-1]", []*trace.Step{tool(0, "search_kb", "", docs)},
			[]string{"invented-clause: retrieved documents → invented clause"}},
		{"unknown citation", []string{"q"}, "See [KB-9].", nil, []string{"bad-citation: no retrieval → cites an unknown document"}},
		{"agreeing with the user's clause", []string{"第5条说意外损坏也保修，对吧？"}, "是的，第5条规定意外损坏也保修。", nil,
			[]string{"invented-clause: user-asserted clause → agreed"}},
		{"empty lookup of another tool", []string{"q"}, "Per rule 9 it does not exist.", []*trace.Step{tool(0, "query_order", "", "[]")},
			[]string{"invented-clause: empty query_order → invented clause"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c := &replay.Case{ID: "c", Turns: tt.turns}
			got := causes(fabrication(c, run("c", []string{tt.answer}, tt.steps...), kb, retrievers))
			if !slices.Equal(got, tt.want) {
				t.Errorf("hits %q, want %q", got, tt.want)
			}
		})
	}
}

// TestCascade quotes seed 000's cascade: a wrong early step counts when
// "every later step" went on from it — a failed or empty step the flow
// continued after (a write ran, or the answer neither asked nor said it
// failed), not any failed intermediate step.
func TestCascade(t *testing.T) {
	empty := tool(0, "query_order", `{"order_id":"A9"}`, "[]")
	failed := &trace.Step{Kind: trace.KindTool, Name: "logistics", Error: "carrier down"}
	found := tool(0, "query_order", `{"order_id":"A1"}`, `{"status":"shipped"}`)
	write := tool(0, "update_address", `{"order_id":"A9"}`, `{"ok":true}`)
	blockedWrite := &trace.Step{Kind: trace.KindTool, Name: "update_address", Blocked: true}
	tests := []struct {
		name   string
		answer string
		status guard.RunStatus
		steps  []*trace.Step
		want   []string
	}{
		{"clean", "It has shipped.", guard.StatusDone, []*trace.Step{found}, nil},
		{"asserted absence", "There are no records of order A9.", guard.StatusDone, []*trace.Step{empty},
			[]string{"asserted-absence: empty query_order → asserted absence"}},
		{"answer went on", "It ships tomorrow.", guard.StatusDone, []*trace.Step{empty}, []string{"empty-result: empty query_order → answer went on"}},
		{"failed step, answer went on", "It is on its way.", guard.StatusDone, []*trace.Step{failed}, []string{"failed-result: failed logistics → answer went on"}},
		{"failed step, acknowledged", "I cannot get a tracking update right now.", guard.StatusDone, []*trace.Step{failed}, nil},
		{"asks the user", "I found nothing for A9. Could you check the number?", guard.StatusDone, []*trace.Step{empty}, nil},
		{"guard clarified", "There are no records.", guard.StatusClarify, []*trace.Step{empty}, nil},
		{"looked again and found it", "It has shipped.", guard.StatusDone, []*trace.Step{empty, found}, nil},
		{"write after an empty lookup", "I could not change it.", guard.StatusDone, []*trace.Step{empty, write},
			[]string{"write-after-failure: empty query_order → update_address ran"}},
		{"blocked write", "I could not change it.", guard.StatusDone, []*trace.Step{empty, blockedWrite}, nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := run("c", []string{tt.answer}, tt.steps...)
			r.Turns[0].Status = tt.status
			got := causes(cascade(&replay.Case{ID: "c"}, r))
			if !slices.Equal(got, tt.want) {
				t.Errorf("hits %q, want %q", got, tt.want)
			}
		})
	}
}

func TestAmnesia(t *testing.T) {
	c := &replay.Case{ID: "c", Turns: []string{"Don't text me.", "Move it."}, Constraints: []replay.Constraint{{ID: "no-sms", Turn: 0, NoTool: "send_sms"}}}
	sms := func() *replay.Run {
		return run("c", []string{"ok", "moved"}, tool(1, "send_sms", `{"phone":"1"}`, "sent"))
	}
	quiet := func() *replay.Run { return run("c", []string{"ok", "moved"}, tool(1, "update_address", `{}`, "ok")) }
	tests := []struct {
		name    string
		runs    []*replay.Run
		min     int
		want    int
		outcome Outcome
	}{
		{"kept", []*replay.Run{quiet(), quiet(), quiet()}, 2, 0, ""},
		{"lost once: minor", []*replay.Run{sms(), quiet(), quiet()}, 2, 1, Minor},
		{"lost twice: amnesia", []*replay.Run{sms(), quiet(), sms()}, 2, 2, Failed},
		{"lost twice, threshold 3", []*replay.Run{sms(), quiet(), sms()}, 3, 2, Minor},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			runs := make([]replay.Run, len(tt.runs))
			checks := make([]replay.Check, len(tt.runs))
			for i, r := range tt.runs {
				runs[i] = *r
				checks[i] = c.Check(r)
			}
			hits := amnesia(c, runs, checks, tt.min)
			if len(hits) != tt.want {
				t.Fatalf("%d hits, want %d: %+v", len(hits), tt.want, hits)
			}
			for _, h := range hits {
				if h.Outcome != tt.outcome || h.Dimension != trace.Memory || h.Cause != `constraint "no-sms" of turn 0 forgotten` || h.Detail != "send_sms ran" {
					t.Errorf("hit %+v", h)
				}
			}
		})
	}
}

func TestDriftScreen(t *testing.T) {
	c := &replay.Case{ID: "c", Answer: replay.Answer{MustNot: []string{"return"}}}
	mk := func(answers ...string) []replay.Run {
		var runs []replay.Run
		for i, a := range answers {
			r := run("c", []string{a})
			r.TraceID = "c-" + string(rune('1'+i))
			runs = append(runs, *r)
		}
		return runs
	}
	tests := []struct {
		name      string
		runs      []replay.Run
		threshold float64
		want      []string // trace ids hit
	}{
		{"agree", mk("shipped", "shipped", "shipped"), 0.25, nil},
		{"one of three differs", mk("shipped", "return started", "shipped"), 0.25, []string{"c-2"}},
		{"one of three, tolerated", mk("shipped", "return started", "shipped"), 0.34, nil},
		{"one of five, tolerated", mk("a", "b return", "a", "a", "a"), 0.25, nil},
		{"one of five, any difference", mk("a", "b return", "a", "a", "a"), 0, []string{"c-2"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var got []string
			for _, h := range drift(c, tt.runs, tt.threshold) {
				got = append(got, h.TraceID)
				if h.Outcome != Failed || h.Dimension != trace.Stability {
					t.Errorf("hit %+v", h)
				}
			}
			if !slices.Equal(got, tt.want) {
				t.Errorf("hits %q, want %q", got, tt.want)
			}
		})
	}
}

func TestViolationHit(t *testing.T) {
	tests := []struct {
		sev     trace.Severity
		shadow  bool
		verdict trace.Verdict
		want    Outcome
	}{
		{trace.SeverityError, true, trace.Block, Failed},
		{trace.SeverityCritical, true, trace.Retry, Failed},
		{trace.SeverityError, false, trace.Block, Recovered},
		{trace.SeverityCritical, false, trace.Allow, Recovered}, // a recovered tool panic
		{trace.SeverityWarning, true, trace.Clarify, Minor},
		{trace.SeverityWarning, false, trace.Clarify, Minor},
		{trace.SeverityInfo, false, trace.Allow, Minor},
	}
	for _, tt := range tests {
		v := trace.Violation{TraceID: "t", Finding: trace.Finding{Rule: "r", Verdict: tt.verdict, Severity: tt.sev, Shadow: tt.shadow, Dimension: trace.Coherence, Tags: []string{"cascade", "asserted-absence"}}}
		h := violationHit("c", v)
		if h.Outcome != tt.want || h.Tag != "asserted-absence" || h.Dimension != trace.Coherence || h.Screen != "violation" {
			t.Errorf("%s shadow=%v: hit %+v, want outcome %s", tt.sev, tt.shadow, h, tt.want)
		}
	}
}

func TestCompareSideEffect(t *testing.T) {
	rep := func(points float64, scores ...float64) *Report {
		r := &Report{Points: points, Total: points / 20}
		for i, d := range Dimensions {
			r.Dimensions = append(r.Dimensions, DimensionScore{Dimension: d, Score: scores[i]})
		}
		return r
	}
	tests := []struct {
		name          string
		before, after *Report
		target        []trace.Dimension
		want          []trace.Dimension
	}{
		{"gain, nothing falls", rep(50, 2, 2, 3, 3, 3), rep(70, 4, 3, 3, 3, 3), nil, nil},
		{"gain, a target falls", rep(50, 2, 2, 3, 3, 3), rep(60, 5, 5, 1, 3, 3), []trace.Dimension{trace.Memory}, nil},
		{"gain, a non-target falls by 2", rep(50, 2, 2, 3, 3, 3), rep(60, 5, 5, 3, 1, 3), []trace.Dimension{trace.Accuracy}, []trace.Dimension{trace.Stability}},
		{"gain, falls by 1.9 only", rep(50, 2, 2, 3, 3, 3), rep(60, 5, 4, 3, 1.1, 3), nil, nil},
		{"gain under 8 points", rep(50, 2, 2, 3, 3, 3), rep(57.9, 5, 5, 3, 1, 3), nil, nil},
		{"no target: any dimension", rep(40, 1, 1, 3, 3, 3), rep(48, 4, 4, 1, 3, 3), nil, []trace.Dimension{trace.Memory}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c := Compare(tt.before, tt.after, tt.target...)
			if !slices.Equal(c.SideEffects, tt.want) || c.Flagged != (len(tt.want) > 0) {
				t.Errorf("side effects %v (flagged %v), want %v", c.SideEffects, c.Flagged, tt.want)
			}
			if c.PointsDelta != tt.after.Points-tt.before.Points {
				t.Errorf("PointsDelta = %v", c.PointsDelta)
			}
		})
	}
}

func TestScoreFixture(t *testing.T) {
	unguarded := fixtureReport(t, "unguarded", true)
	guarded := fixtureReport(t, "guarded", false)
	if !(guarded.Rates.Fabrication < unguarded.Rates.Fabrication && guarded.Rates.Cascade < unguarded.Rates.Cascade) {
		t.Errorf("rates: unguarded %+v, guarded %+v; want fabrication and cascade lower when guarded", unguarded.Rates, guarded.Rates)
	}
	if got := unguarded.Score(trace.Accuracy).Score; got != 3 {
		t.Errorf("unguarded accuracy = %v, want 3", got)
	}
	// Memory is scored over the one case with something to remember; each
	// of its runs answered, with a structural defect.
	if got := unguarded.Score(trace.Memory); got.Score != 2 || got.Failed != 1 || got.ByScore != [5]int{0, 3, 0, 0, 0} {
		t.Errorf("unguarded memory = %+v, want 2 with every run of the constrained case failed", got)
	}
	if !(guarded.Points > unguarded.Points) {
		t.Errorf("points: unguarded %v, guarded %v", unguarded.Points, guarded.Points)
	}
	// The problem cases of the unguarded run, with their traces.
	var ids []string
	for _, p := range unguarded.Problems {
		ids = append(ids, p.Case)
		if len(p.Traces) == 0 || unguarded.traces[p.Traces[0]] == nil {
			t.Errorf("problem %s has no trace to link to", p.Case)
		}
	}
	if want := []string{"vip", "ghost", "no-sms", "vague"}; !slices.Equal(ids, want) {
		t.Errorf("problem cases %v, want %v", ids, want)
	}
	if !guarded.Baseline.Stale || guarded.Baseline.Oldest != "2026-08-01" || guarded.Baseline.AgeDays != 120 {
		t.Errorf("baseline %+v, want stale since 2026-08-01", guarded.Baseline)
	}
}

// TestScoreFromLedger checks that the violations read from a ledger are
// those the traces carry.
func TestScoreFromLedger(t *testing.T) {
	led, err := badgerstore.Open("", badgerstore.Options{InMemory: true})
	if err != nil {
		t.Fatal(err)
	}
	defer led.Close()
	cases := fixtureCases(t)
	runs := fixtureRuns(t, "unguarded", true, led, false)
	// An earlier replay into the same ledger, with the same trace ids.
	if _, err := led.Append(context.Background(), trace.Violation{Time: runs[0].Start.Add(-time.Hour), TraceID: runs[0].TraceID, Finding: trace.Finding{Rule: "stale", Severity: trace.SeverityError, Shadow: true}}); err != nil {
		t.Fatal(err)
	}
	opts := Options{Now: fixtureNow}
	fromLedger, err := Score(context.Background(), cases, runs, led, opts)
	if err != nil {
		t.Fatal(err)
	}
	fromTraces, err := Score(context.Background(), cases, runs, nil, opts)
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(fromLedger.Violations, fromTraces.Violations) || len(fromLedger.Violations) == 0 {
		t.Errorf("from the ledger:\n%+v\nfrom the traces:\n%+v", fromLedger.Violations, fromTraces.Violations)
	}
	if !reflect.DeepEqual(fromLedger.Dimensions, fromTraces.Dimensions) {
		t.Errorf("scores differ:\n%+v\n%+v", fromLedger.Dimensions, fromTraces.Dimensions)
	}
}

func TestReportGolden(t *testing.T) {
	unguarded := fixtureReport(t, "unguarded", true)
	guarded := fixtureReport(t, "guarded", false)
	for _, tt := range []struct {
		dir   string
		write func(dir string) error
	}{
		{"report", guarded.WriteFiles},
		{"comparison", Compare(unguarded, guarded, trace.Accuracy, trace.Coherence).WriteFiles},
	} {
		t.Run(tt.dir, func(t *testing.T) {
			out := t.TempDir()
			if err := tt.write(out); err != nil {
				t.Fatal(err)
			}
			for _, name := range []string{FileJSON, FileMarkdown, FileHTML} {
				got, err := os.ReadFile(filepath.Join(out, name))
				if err != nil {
					t.Fatal(err)
				}
				path := filepath.Join("testdata", tt.dir, name)
				if *update {
					if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
						t.Fatal(err)
					}
					if err := os.WriteFile(path, got, 0o644); err != nil {
						t.Fatal(err)
					}
					continue
				}
				want, err := os.ReadFile(path)
				if err != nil {
					t.Fatalf("%v (run go test -update to create it)", err)
				}
				if string(got) != string(want) {
					t.Errorf("%s differs from %s (run go test -update after checking the change)\n%s", name, path, firstDiff(string(got), string(want)))
				}
			}
		})
	}
}

// firstDiff shows the first line where got and want differ.
func firstDiff(got, want string) string {
	g, w := strings.Split(got, "\n"), strings.Split(want, "\n")
	for i := range min(len(g), len(w)) {
		if g[i] != w[i] {
			return "line " + strconv.Itoa(i+1) + ":\ngot:  " + g[i] + "\nwant: " + w[i]
		}
	}
	return "lengths differ: " + strconv.Itoa(len(g)) + " and " + strconv.Itoa(len(w)) + " lines"
}

// TestOverRefusal counts the runs of answerable cases that ended refused
// or handed off, and leaves out the cases whose baseline declines.
func TestOverRefusal(t *testing.T) {
	cases := []replay.Case{
		{ID: "ask", Category: replay.Normal, Turns: []string{"Where is A1001?"}, LastVerified: "2026-11-20"},
		{ID: "decline", Category: replay.Boundary, Turns: []string{"Price match?"}, Answer: replay.Answer{Declines: true}, LastVerified: "2026-11-20"},
	}
	run := func(c string, i int, s guard.RunStatus) replay.Run {
		return replay.Run{Case: c, Repeat: i, TraceID: fmt.Sprint(c, i), Turns: []replay.Turn{{Answer: "…", Status: s}}}
	}
	runs := []replay.Run{
		run("ask", 1, guard.StatusDone), run("ask", 2, guard.StatusRefused), run("ask", 3, guard.StatusHandoff), run("ask", 4, guard.StatusClarify),
		run("decline", 1, guard.StatusRefused), run("decline", 2, guard.StatusHandoff),
	}
	rep, err := Score(context.Background(), cases, runs, nil, Options{Now: time.Date(2026, 12, 1, 0, 0, 0, 0, time.UTC)})
	if err != nil {
		t.Fatal(err)
	}
	if got, want := rep.Rates.OverRefusal, 2.0/4; got != want {
		t.Errorf("OverRefusal = %v, want %v", got, want)
	}
}

// TestScoreNothing: a health check of no case, or of runs of no case,
// is an error, never a perfect score.
func TestScoreNothing(t *testing.T) {
	if _, err := Score(context.Background(), nil, nil, nil, Options{}); !errors.Is(err, ErrNoCases) {
		t.Errorf("no cases: err = %v, want ErrNoCases", err)
	}
	cases := []replay.Case{{ID: "a", Category: replay.Normal, Turns: []string{"hi"}, LastVerified: "2026-11-20"}}
	runs := []replay.Run{{Case: "b", Repeat: 1, TraceID: "b1", Turns: []replay.Turn{{Answer: "hi"}}}}
	if _, err := Score(context.Background(), cases, runs, nil, Options{}); !errors.Is(err, ErrNoRuns) {
		t.Errorf("no runs of the cases: err = %v, want ErrNoRuns", err)
	}
}

// TestForcedCitation: on a route that forces citations, an answer after a
// retrieval must cite a retrieved document; other routes are not screened.
func TestForcedCitation(t *testing.T) {
	cases := []replay.Case{{ID: "policy", Category: replay.Normal, Route: "after-sales", Turns: []string{"退货政策？", "Opened headphones?"}, LastVerified: "2026-11-20"}}
	retrieval := func(turn int) *trace.Step {
		return &trace.Step{Kind: trace.KindRetrieval, Name: "search_kb", Turn: turn, DocIDs: []string{"KB-RET-01"}}
	}
	run := replay.Run{Case: "policy", Repeat: 1, TraceID: "p1",
		Trace: &trace.Trace{ID: "p1", Steps: []*trace.Step{retrieval(0), retrieval(1)}},
		Turns: []replay.Turn{{Answer: "签收后7天内可无理由退货 [KB-RET-01]。"}, {Answer: "Within 7 days if defective."}}}
	now := time.Date(2026, 12, 1, 0, 0, 0, 0, time.UTC)
	for _, tt := range []struct {
		routes []string
		want   int
	}{{nil, 0}, {[]string{"order-status"}, 0}, {[]string{"after-sales"}, 1}} {
		rep, err := Score(context.Background(), cases, []replay.Run{run}, nil, Options{Now: now, CitationRoutes: tt.routes})
		if err != nil {
			t.Fatal(err)
		}
		var got []Hit
		for _, h := range rep.Hits {
			if h.Screen == "citation" {
				got = append(got, h)
			}
		}
		if len(got) != tt.want {
			t.Errorf("routes %v: %d citation hits %+v, want %d", tt.routes, len(got), got, tt.want)
			continue
		}
		if tt.want == 1 {
			if h := got[0]; h.Turn != 1 || h.Tag != "uncited" || h.Outcome != Failed {
				t.Errorf("hit %+v, want turn 1 uncited failed", h)
			}
			if rc := rep.RootCauses[0]; rc.Tag != "uncited" || rc.Fix.Kind != "prompt" {
				t.Errorf("root cause %+v, want uncited with its fix direction", rc)
			}
		}
	}
}

// TestReportFilesRedacted: with Options.Redact the files hold no personal
// data, from the report's own text or from the traces of its timelines,
// and change nowhere else; an identity redactor writes the golden files
// byte for byte.
func TestReportFilesRedacted(t *testing.T) {
	guarded := fixtureReport(t, "guarded", false)
	guarded.redact = func(s string) string { return s }
	out := t.TempDir()
	if err := guarded.WriteFiles(out); err != nil {
		t.Fatal(err)
	}
	for _, name := range []string{FileJSON, FileMarkdown, FileHTML} {
		got, _ := os.ReadFile(filepath.Join(out, name))
		want, _ := os.ReadFile(filepath.Join("testdata", "report", name))
		if string(got) != string(want) {
			t.Errorf("%s through an identity redactor differs from the golden file\n%s", name, firstDiff(string(got), string(want)))
		}
	}

	const phoneCN, phoneGB = "+86 138 0000 1001", "020 7946 0958"
	planted := fixtureReport(t, "guarded", false)
	if len(planted.Problems) == 0 || len(planted.traces) == 0 {
		t.Fatal("the fixture has no problem case or timeline to plant personal data in")
	}
	planted.Problems[0].Causes = append(planted.Problems[0].Causes, "answered with the customer's number "+phoneCN)
	for _, tr := range planted.traces {
		tr.UserTurns = append(slices.Clip(tr.UserTurns), "我的电话是 "+phoneGB)
		break
	}
	raw := t.TempDir()
	if err := planted.WriteFiles(raw); err != nil {
		t.Fatal(err)
	}
	for name, pii := range map[string]string{FileJSON: phoneCN, FileMarkdown: phoneCN, FileHTML: phoneGB} {
		if got, _ := os.ReadFile(filepath.Join(raw, name)); !strings.Contains(string(got), pii) {
			t.Fatalf("without a redactor %s lacks the planted %q: the test plants nothing", name, pii)
		}
	}
	planted.redact = redact.String
	out = t.TempDir()
	if err := planted.WriteFiles(out); err != nil {
		t.Fatal(err)
	}
	for _, name := range []string{FileJSON, FileMarkdown, FileHTML} {
		got, _ := os.ReadFile(filepath.Join(out, name))
		for _, pii := range []string{phoneCN, "138 0000 1001", phoneGB, "7946 0958"} {
			if strings.Contains(string(got), pii) {
				t.Errorf("%s holds %q", name, pii)
			}
		}
	}
	var back Report
	js, _ := os.ReadFile(filepath.Join(out, FileJSON))
	if err := json.Unmarshal(js, &back); err != nil || back.Points != planted.Points || back.Metrics != planted.Metrics {
		t.Errorf("the redacted report.json reads back as %v, points %v, metrics %+v; want points %v", err, back.Points, back.Metrics, planted.Points)
	}
}

// TestCompareReweighted: a before/after whose weights differ says how much
// of the gain the weights alone account for, as a +3.2 gain that came from
// reweighting alone should have been flagged.
func TestCompareReweighted(t *testing.T) {
	scores := map[trace.Dimension]float64{trace.Accuracy: 4.5, trace.Coherence: 3, trace.Memory: 3, trace.Stability: 3, trace.Efficiency: 3}
	report := func(w Weights) *Report {
		r := &Report{Weights: w}
		for _, d := range Dimensions {
			r.Dimensions = append(r.Dimensions, DimensionScore{Dimension: d, Score: scores[d]})
		}
		r.Total, r.Points = w.orDefault().Total(scores)
		return r
	}
	same := Compare(report(Weights{}), report(DefaultWeights()))
	if same.Reweighted || len(same.Warnings()) > 0 {
		t.Errorf("default and zero weights: reweighted %v, warnings %v; want none", same.Reweighted, same.Warnings())
	}
	c := Compare(report(Weights{}), report(Weights{Accuracy: 50, Coherence: 20, Memory: 10, Stability: 10, Efficiency: 10}))
	if !c.Reweighted || c.PointsDelta != c.ReweightingDelta || c.ReweightedPoints != report(Weights{}).Points {
		t.Fatalf("comparison %+v: want the whole change put on the weights", c)
	}
	w := c.Warnings()
	if len(w) != 1 || !strings.Contains(w[0], "accuracy 30 → 50") || !strings.Contains(w[0], "+0.0 the agent's") {
		t.Errorf("warnings %q", w)
	}
}

// TestRelease: the verdict is the exit code's — critical is not
// releasable at the default floor — and below the floor it names what cost
// the points.
func TestRelease(t *testing.T) {
	report := func(scores map[trace.Dimension]float64, causes ...RootCause) *Report {
		r := &Report{RootCauses: causes}
		for _, d := range Dimensions {
			r.Dimensions = append(r.Dimensions, DimensionScore{Dimension: d, Score: scores[d]})
		}
		r.Total, r.Points = r.Weights.orDefault().Total(scores)
		r.Band = BandOf(r.Points)
		return r
	}
	critical := report(map[trace.Dimension]float64{trace.Accuracy: 2, trace.Coherence: 3, trace.Memory: 3, trace.Stability: 3, trace.Efficiency: 3},
		RootCause{Tag: "intent", Dimension: trace.Coherence, Failed: 6, Cases: []string{"A03", "A04"}},
		RootCause{Tag: "fabricated-clause", Dimension: trace.Accuracy, Failed: 4, Cases: []string{"B08"}})
	rel := critical.release(0)
	if rel.Releasable || rel.Floor != DefaultFloor || critical.Band.Releasable() {
		t.Fatalf("%v points (%s): %+v; want not releasable at the default floor", critical.Points, critical.Band, rel)
	}
	if !strings.Contains(rel.Why, "< the floor 60: critical, not releasable") {
		t.Errorf("why = %q", rel.Why)
	}
	want := []string{
		"accuracy 2.0: 18.0 points lost, most to fabricated-clause (4 failed, cases B08)",
		"coherence 3.0: 10.0 points lost, most to intent (6 failed, cases A03 A04)",
	}
	if len(rel.Blockers) < 2 || !slices.Equal(rel.Blockers[:2], want) {
		t.Errorf("blockers %q, want first %q", rel.Blockers, want)
	}
	healthy := report(map[trace.Dimension]float64{trace.Accuracy: 4.5, trace.Coherence: 4, trace.Memory: 4, trace.Stability: 4, trace.Efficiency: 4})
	if rel := healthy.release(0); !rel.Releasable || len(rel.Blockers) > 0 || !healthy.Band.Releasable() {
		t.Errorf("%v points: %+v, want releasable with no blockers", healthy.Points, rel)
	}
	if rel := healthy.release(90); rel.Releasable || len(rel.Blockers) == 0 {
		t.Errorf("a floor of 90: %+v, want blocked", rel)
	}
}
