package replay

import (
	"encoding/json"
	"math"
	"reflect"
	"testing"
	"time"

	"github.com/agentguard/agentguard/guard"
	"github.com/agentguard/agentguard/trace"
)

func TestContains(t *testing.T) {
	tests := []struct {
		text, element string
		want          bool
	}{
		{"Order A1 has SHIPPED.", "shipped", true},
		{"Order A1 has shipped.", "delivered|shipped", true},
		{"Order A1 has shipped.", "delivered|returned", false},
		{"deliver to  9   Lake\nRoad", "9 lake road", true},
		{"已发货", "shipped|已发货", true},
		{"anything", "", false},
		{"anything", "|", false},
	}
	for _, tt := range tests {
		if got := Contains(tt.text, tt.element); got != tt.want {
			t.Errorf("Contains(%q, %q) = %v, want %v", tt.text, tt.element, got, tt.want)
		}
	}
}

func answered(caseID string, repeat int, answers ...string) Run {
	r := Run{Case: caseID, Repeat: repeat, TraceID: caseID + "-" + string(rune('0'+repeat))}
	for _, a := range answers {
		r.Turns = append(r.Turns, Turn{Answer: a, Status: guard.StatusDone})
	}
	return r
}

func TestDrift(t *testing.T) {
	keyed := &Case{ID: "k", Answer: Answer{Must: []string{"shipped"}, MustNot: []string{"no records"}}}
	free := &Case{ID: "f"}
	tests := []struct {
		name string
		c    *Case
		runs []Run
		want float64
	}{
		{"one run", keyed, []Run{answered("k", 1, "shipped")}, 0},
		{"same elements, other words", keyed, []Run{answered("k", 1, "It has shipped."), answered("k", 2, "Shipped today!"), answered("k", 3, "shipped")}, 0},
		{"one differs", keyed, []Run{answered("k", 1, "shipped"), answered("k", 2, "shipped"), answered("k", 3, "There are no records.")}, 1.0 / 3},
		{"all differ", keyed, []Run{answered("k", 1, "shipped"), answered("k", 2, "no records"), answered("k", 3, "hm")}, 2.0 / 3},
		{"an error is an outcome", keyed, []Run{answered("k", 1, "shipped"), {Case: "k", Err: "boom"}}, 0.5},
		{"other cases' runs are ignored", keyed, []Run{answered("k", 1, "shipped"), answered("x", 1, "hm"), answered("k", 2, "shipped")}, 0},
		{"no elements: the answer, digits folded", free, []Run{answered("f", 1, "Ticket 12 open"), answered("f", 2, "ticket 47  open")}, 0},
		{"no elements: words differ", free, []Run{answered("f", 1, "open"), answered("f", 2, "closed")}, 0.5},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := Drift(tt.c, tt.runs); math.Abs(got-tt.want) > 1e-9 {
				t.Errorf("Drift = %v, want %v", got, tt.want)
			}
		})
	}
}

// recorded builds a trace from steps, numbering them.
func recorded(turns []string, steps ...*trace.Step) *trace.Trace {
	for i, s := range steps {
		s.Index = i
	}
	return &trace.Trace{ID: "t", UserTurns: turns, Steps: steps}
}

func TestCheck(t *testing.T) {
	c := &Case{
		ID: "no-sms", Turns: []string{"Don't text me.", "Move A1 to 9 Lake Road.", "yes"},
		Intent: "change_address", IntentTurn: -2,
		Trajectory: &Trajectory{Match: TrajectorySuperset, Args: ArgsSuperset, Calls: []Call{
			{Name: "update_address", Args: json.RawMessage(`{"address":"9 Lake Road"}`)},
		}},
		Answer: Answer{Must: []string{"9 Lake Road", "done|完成"}, MustNot: []string{"SMS"}},
		Constraints: []Constraint{
			{ID: "no-sms", Turn: 0, NoTool: "send_sms"},
			{ID: "addr", Turn: 1, Tool: "update_address", Arg: "address", Value: "9 lake road"},
			{ID: "quiet", Turn: 0, AnswerNot: []string{"text message"}},
		},
	}
	r := answered(c.ID, 1, "Noted.", "Shall I? I will send a text message.", "Moved to 9 Lake Road; I sent you an SMS.")
	r.Trace = recorded(c.Turns,
		&trace.Step{Kind: trace.KindModel, Name: "intent", Turn: 1, Intent: "change_address", Confidence: 0.8},
		&trace.Step{Kind: trace.KindTool, Name: "update_address", Turn: 1, Args: `{"order_id":"A1","address":"1 Old St"}`, Blocked: true},
		&trace.Step{Kind: trace.KindTool, Name: "update_address", Turn: 2, Args: `{"order_id":"A1","address":"9 Lake Road"}`, Result: "ok"},
		&trace.Step{Kind: trace.KindTool, Name: "update_address", Turn: 2, Args: `{"order_id":"A1","address":"2 Other Rd"}`, Result: "ok"},
		&trace.Step{Kind: trace.KindTool, Name: "send_sms", Turn: 2, Args: `{"phone":"1"}`, Result: "sent"},
	)
	got := c.Check(&r)
	want := Check{
		Missing:      []string{"done|完成"},
		Forbidden:    []string{"SMS"},
		Intent:       "change_address",
		IntentOK:     true,
		TrajectoryOK: true,
		Losses: []Loss{
			{Constraint: "quiet", Turn: 1, Step: -1, What: `answer says "text message"`},
			{Constraint: "addr", Turn: 2, Step: 3, What: `update_address address="2 Other Rd", not "9 lake road"`},
			{Constraint: "no-sms", Turn: 2, Step: 4, What: "send_sms ran"},
		},
		ToolCalls: 3, // the blocked update_address never ran
		Budget:    2,
	}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("Check =\n%+v\nwant\n%+v", got, want)
	}
	if got.AnswerOK() {
		t.Error("AnswerOK() = true with missing and forbidden elements")
	}

	// The same run read as another intent, against a strict trajectory.
	c.Intent = "track_order"
	c.Trajectory.Match = TrajectoryStrict
	got = c.Check(&r)
	if got.IntentOK || got.TrajectoryOK || got.TrajectoryDiff == "" {
		t.Errorf("IntentOK = %v, TrajectoryOK = %v (%q); want both false with a diff", got.IntentOK, got.TrajectoryOK, got.TrajectoryDiff)
	}
}

func TestCheckWithoutTrace(t *testing.T) {
	c := &Case{ID: "x", Turns: []string{"hi"}, Intent: "greet", Answer: Answer{Must: []string{"hello"}}}
	r := answered("x", 1, "Hello!")
	if got := c.Check(&r); !got.IntentOK || !got.TrajectoryOK || !got.AnswerOK() || got.ToolCalls != 0 {
		t.Errorf("Check = %+v, want everything fine", got)
	}
}

func TestMeasure(t *testing.T) {
	cases := []Case{
		{ID: "a", Turns: []string{"1", "2"}, Answer: Answer{Must: []string{"ok"}}},
		{ID: "b", Turns: []string{"1"}},
		{ID: "c", Turns: []string{"1"}},
	}
	ok := func(caseID string, repeat int, d time.Duration, steps ...*trace.Step) Run {
		r := answered(caseID, repeat, "ok", "ok")
		r.Duration = d
		r.Trace = recorded(nil, steps...)
		return r
	}
	model := func(in, out int) *trace.Step { return &trace.Step{Kind: trace.KindModel, TokensIn: in, TokensOut: out} }
	tool := func(blocked bool) *trace.Step { return &trace.Step{Kind: trace.KindTool, Name: "t", Blocked: blocked} }
	retry := &trace.Step{Kind: trace.KindGate, Finding: &trace.Finding{Verdict: trace.Retry}}
	shadowRetry := &trace.Step{Kind: trace.KindGate, Finding: &trace.Finding{Verdict: trace.Retry, Shadow: true}}
	failedModel := &trace.Step{Kind: trace.KindModel, Error: "503"}
	timedOutModel := &trace.Step{Kind: trace.KindModel, Error: "guard: model: call timed out after 1m0s"}
	runs := []Run{
		ok("a", 1, 10*time.Millisecond, model(100, 10), tool(false), tool(true)),
		ok("a", 2, 30*time.Millisecond, model(50, 0), shadowRetry),
		{Case: "b", Repeat: 1, Err: "boom", Trace: recorded(nil), Duration: 20 * time.Millisecond},           // no answer
		{Case: "b", Repeat: 2, Turns: []Turn{{Answer: " "}}, Trace: recorded(nil, failedModel, model(1, 1))}, // blank, retried
		{Case: "c", Repeat: 1, Turns: []Turn{{Answer: "x"}}, Trace: recorded(nil, retry, timedOutModel), TimedOut: true},
	}
	got := Measure(cases, runs)
	want := Metrics{
		Cases:         3,
		Runs:          5,
		MeanDuration:  12 * time.Millisecond,
		MeanTokens:    162.0 / 5,
		MeanToolCalls: 1.0 / 5, // the blocked call never ran
		NoOutputRate:  2.0 / 7, // turns: 2+2+1+1+1; b/1 answered none, b/2 a blank one
		TimeoutRate:   2.0 / 7, // external calls: 2 in a/1, 1 in a/2, 2 in b/2, c/1's timed-out model call and its run timeout
		RetryRate:     2.0 / 5, // b/2 retried a failed model call, c/1 the guard sent back; a/2's was in shadow
		DriftRate:     1.0 / 2, // a agrees with itself; b's runs differ (error vs blank); c ran once
	}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("Measure =\n%+v\nwant\n%+v", got, want)
	}
	if got := Measure(cases, nil); got != (Metrics{Cases: 3}) {
		t.Errorf("Measure of no runs = %+v", got)
	}
}

// TestNoOutputExcludesHandoff: a turn handed to a person is an outcome,
// not a missing answer, whatever its text.
func TestNoOutputExcludesHandoff(t *testing.T) {
	cases := []Case{{ID: "a", Turns: []string{"1", "2"}}}
	runs := []Run{{Case: "a", Repeat: 1, Turns: []Turn{{Answer: "ok"}, {Answer: "", Status: guard.StatusHandoff}}}}
	if got := Measure(cases, runs).NoOutputRate; got != 0 {
		t.Errorf("NoOutputRate = %v, want 0", got)
	}
	runs[0].Turns[1].Status = guard.StatusDone
	if got := Measure(cases, runs).NoOutputRate; got != 0.5 {
		t.Errorf("NoOutputRate = %v, want 0.5", got)
	}
}
