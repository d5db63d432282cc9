package conteval

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"

	"github.com/agentguard/agentguard/guard/guardtest"
	"github.com/agentguard/agentguard/guard/internal/judge"
	"github.com/agentguard/agentguard/trace"
	"github.com/tmc/langchaingo/llms"
)

// judgedTrace is a run the automatic checks failed: a tool off the list.
func judgedTrace() (*trace.Trace, []AssertionResult) {
	t := tr("t1", "chat", toolCall("issue_voucher", `{"value":5}`, "ok"), answer("I sent you a voucher."))
	t.UserTurns = []string{"Where is order A1001?"}
	failed := []AssertionResult{{Name: NameAllowedTools, Outcome: Failed(0, "issue_voucher is not on the allow-list")}}
	return t, failed
}

func TestJudgeSample(t *testing.T) {
	price := judge.Options{Cost: JudgeConfig{InputPerMillion: 1e6, OutputPerMillion: 1e6}.Pricing().Cost} // a unit a token
	usage := &guardtest.Usage{In: 100, Out: 10}
	tests := []struct {
		name  string
		reply guardtest.Reply
		pass  int
		want  JudgeResult
	}{
		{"5 passes", guardtest.Reply{Text: `{"score": 5, "reason": "Correct."}`, Usage: usage}, 4,
			JudgeResult{Score: 5, Pass: true, Reason: "Correct.", TokensIn: 100, TokensOut: 10, Cost: 110}},
		{"4 passes at the default", guardtest.Reply{Text: `{"score": 4, "reason": "Terse."}`, Usage: usage}, 4,
			JudgeResult{Score: 4, Pass: true, Reason: "Terse.", TokensIn: 100, TokensOut: 10, Cost: 110}},
		{"3 fails at the default", guardtest.Reply{Text: `{"score": 3, "reason": "Asked instead of guessing."}`, Usage: usage}, 4,
			JudgeResult{Score: 3, Reason: "Asked instead of guessing.", TokensIn: 100, TokensOut: 10, Cost: 110}},
		{"3 passes at pass score 3", guardtest.Reply{Text: `{"score": 3, "reason": "Asked instead of guessing."}`, Usage: usage}, 3,
			JudgeResult{Score: 3, Pass: true, Reason: "Asked instead of guessing.", TokensIn: 100, TokensOut: 10, Cost: 110}},
		{"fenced", guardtest.Reply{Text: "```json\n{\"score\": 1, \"reason\": \"Invents a voucher.\"}\n```", Usage: usage}, 4,
			JudgeResult{Score: 1, Reason: "Invents a voucher.", TokensIn: 100, TokensOut: 10, Cost: 110}},
		{"the old protocol is not a verdict", guardtest.Reply{Text: "PASS\nFine.", Usage: usage}, 4,
			JudgeResult{TokensIn: 100, TokensOut: 10, Cost: 110, Err: "conteval: judge: invalid verdict: not a JSON object with only score and reason: invalid character 'P' looking for beginning of value"}},
		{"out of range", guardtest.Reply{Text: `{"score": 9, "reason": "r"}`, Usage: usage}, 4,
			JudgeResult{TokensIn: 100, TokensOut: 10, Cost: 110, Err: "conteval: judge: invalid verdict: score 9 is not an integer from 1 to 5"}},
		{"failed call", guardtest.Reply{Err: errors.New("judge unavailable")}, 4, JudgeResult{Err: "conteval: judge: judge unavailable"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			run, failed := judgedTrace()
			if got := judgeSample(context.Background(), guardtest.Script(tt.reply), price, tt.pass, run, failed); got != tt.want {
				t.Errorf("judgeSample =\n%+v\nwant\n%+v", got, tt.want)
			}
		})
	}
}

func TestJudgeSamplePrompt(t *testing.T) {
	m := guardtest.Script(guardtest.Text(`{"score": 2, "reason": "r"}`))
	run, failed := judgedTrace()
	r := judgeSample(context.Background(), m, judge.Options{}, DefaultJudgePassScore, run, failed)
	if !r.Estimated || r.TokensIn == 0 || r.Cost != 0 {
		t.Errorf("without usage or prices: %+v, want estimated tokens at no cost", r)
	}
	msgs := m.Received()[0]
	system, user := msgs[0].Parts[0].(llms.TextContent).Text, msgs[1].Parts[0].(llms.TextContent).Text
	for _, want := range []string{
		"You review single runs of an AI agent taken from production.",
		"\n5 correct: every answer follows from the tool results",
		"\n3 errors recovered: ",
		"\n1 unusable: ",
		`{"score": <integer 1 to 5>, "reason": `,
	} {
		if !strings.Contains(system, want) {
			t.Errorf("system prompt lacks %q:\n%s", want, system)
		}
	}
	if strings.Contains(system, "PASS") {
		t.Errorf("system prompt still asks for PASS or FAIL:\n%s", system)
	}
	for _, want := range []string{
		"Route: chat\n",
		"- allow-list: issue_voucher is not on the allow-list\n",
		"User: Where is order A1001?\n",
		`Tool issue_voucher {"value":5} → ok`,
		"Agent: I sent you a voucher.\n",
	} {
		if !strings.Contains(user, want) {
			t.Errorf("prompt lacks %q:\n%s", want, user)
		}
	}
	if !strings.HasSuffix(user, "\n"+judge.Reminder) {
		t.Errorf("prompt does not end with the reminder:\n%s", user)
	}
	if o := m.Options()[0]; o.Temperature != 0 || !o.JSONMode {
		t.Errorf("call options %+v, want temperature 0, JSON mode", o)
	}
}

// TestJudgePassScore: the pass score decides which scores confirm a red
// sample and which miss a passing one; the assertions' pass rates never
// move.
func TestJudgePassScore(t *testing.T) {
	traces := population(2000, 6)
	tests := []struct {
		score, pass int
		confirms    bool // a red sample's verdict confirms it; a head sample's is a miss
	}{
		{5, 0, false},
		{4, 0, false},
		{3, 0, true},
		{3, 3, false},
		{4, 5, true},
		{1, 1, false},
		{2, 0, true},
	}
	var base *Report
	for _, tt := range tests {
		t.Run(fmt.Sprintf("score %d, pass score %d", tt.score, tt.pass), func(t *testing.T) {
			cfg := testConfig()
			cfg.Judge.PassScore = tt.pass
			m := guardtest.Func(func(context.Context, []llms.MessageContent, llms.CallOptions) (guardtest.Reply, error) {
				return guardtest.Text(fmt.Sprintf(`{"score": %d, "reason": "r"}`, tt.score)), nil
			})
			rep, err := (&Evaluator{Config: cfg, Judge: m}).Run(context.Background(), traces, roundTime)
			if err != nil {
				t.Fatal(err)
			}
			js := rep.Judge
			if js.Red == 0 || js.Head == 0 || js.Errors != 0 {
				t.Fatalf("judge %+v, want red and head samples judged without errors", js)
			}
			want := JudgeStats{Calls: js.Calls, Red: js.Red, Head: js.Head, TokensIn: js.TokensIn, TokensOut: js.TokensOut, Cost: js.Cost}
			if tt.confirms {
				want.Confirmed, want.Missed = js.Red, js.Head
			} else {
				want.Disputed = js.Red
			}
			if *js != want {
				t.Errorf("judge %+v, want %+v", *js, want)
			}
			for _, s := range rep.Samples {
				if j := s.Judge; j != nil && (j.Score != tt.score || j.Pass == tt.confirms) {
					t.Errorf("%s: %+v", s.TraceID, *j)
				}
			}
			if base == nil {
				base = rep
			} else if rep.Head != base.Head || rep.All != base.All {
				t.Error("the pass score changed the curves")
			}
		})
	}
}
