package judge

import (
	"context"
	"errors"
	"strings"
	"testing"
	"testing/synctest"
	"time"
	"unicode/utf8"

	"github.com/agentguard/agentguard/guard/guardtest"
	"github.com/agentguard/agentguard/trace"
	"github.com/tmc/langchaingo/llms"
)

func TestParseRating(t *testing.T) {
	long := strings.Repeat("é", MaxReason+1)
	tests := []struct {
		name   string
		answer string
		want   Rating
		err    string // "" means valid
	}{
		{"good", `{"score": 4, "reason": "Right answer, terse."}`, Rating{4, "Right answer, terse."}, ""},
		{"keys in any order, white space", "\n {\"reason\":\" Invents clause 7.3. \",\"score\":1}\n", Rating{1, "Invents clause 7.3."}, ""},
		{"integral float", `{"score": 2.0, "reason": "r"}`, Rating{2, "r"}, ""},
		{"code fence", "```json\n{\"score\": 3, \"reason\": \"Declined.\"}\n```", Rating{3, "Declined."}, ""},
		{"bare code fence", "```\n{\"score\": 5, \"reason\": \"Fine.\"}\n```", Rating{5, "Fine."}, ""},
		{"reason at the limit", `{"score": 5, "reason": "` + long[:len(long)-len("é")] + `"}`, Rating{5, long[:len(long)-len("é")]}, ""},
		{"empty", "  ", Rating{}, "empty answer"},
		{"prose", "The answer is fine.", Rating{}, "not a JSON object"},
		{"prose before", `Verdict: {"score": 4, "reason": "r"}`, Rating{}, "not a JSON object"},
		{"the old PASS/FAIL answer", "PASS\nThe answer follows from the order lookup.", Rating{}, "not a JSON object"},
		{"text after", `{"score": 4, "reason": "r"} I hope this helps.`, Rating{}, "text after the JSON object"},
		{"two objects", `{"score": 4, "reason": "r"}{"score": 1, "reason": "r"}`, Rating{}, "text after the JSON object"},
		{"unclosed fence", "```json\n{\"score\": 4, \"reason\": \"r\"}", Rating{}, "code fence"},
		{"labelled fence", "```yaml\n{\"score\": 4, \"reason\": \"r\"}\n```", Rating{}, "code fence"},
		{"array", `[{"score": 4, "reason": "r"}]`, Rating{}, "got a JSON array"},
		{"null", `null`, Rating{}, `no "score"`},
		{"truncated", `{"score": 4, "reason": "r`, Rating{}, "ends inside the object"},
		{"unknown key", `{"score": 4, "reason": "r", "confidence": 0.9}`, Rating{}, `unknown field "confidence"`},
		{"dimension scores", `{"accuracy": 4, "score": 4, "reason": "r"}`, Rating{}, `unknown field "accuracy"`},
		{"a pass flag", `{"pass": true, "score": 4, "reason": "r"}`, Rating{}, `unknown field "pass"`},
		{"no score", `{"reason": "r"}`, Rating{}, `no "score"`},
		{"no reason", `{"score": 4}`, Rating{}, `no "reason"`},
		{"score as a string", `{"score": "4", "reason": "r"}`, Rating{}, `"score" is a JSON string`},
		{"score 0", `{"score": 0, "reason": "r"}`, Rating{}, "score 0 is not an integer from 1 to 5"},
		{"score 6", `{"score": 6, "reason": "r"}`, Rating{}, "score 6 is not an integer from 1 to 5"},
		{"score 10 of 10", `{"score": 10, "reason": "r"}`, Rating{}, "score 10 is not"},
		{"half a point", `{"score": 3.5, "reason": "r"}`, Rating{}, "score 3.5 is not"},
		{"negative", `{"score": -1, "reason": "r"}`, Rating{}, "score -1 is not"},
		{"empty reason", `{"score": 4, "reason": "  "}`, Rating{}, "empty reason"},
		{"reason not a string", `{"score": 4, "reason": ["a"]}`, Rating{}, `"reason" is a JSON array`},
		{"reason too long", `{"score": 4, "reason": "` + long + `"}`, Rating{}, "over 800"},
		{"answer too long", `{"score": 4, "reason": "r"}` + strings.Repeat(" ", MaxAnswer), Rating{}, "bytes, over 4096"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := ParseRating(tt.answer)
			if tt.err == "" {
				if err != nil || got != tt.want {
					t.Errorf("ParseRating = %+v, %v; want %+v", got, err, tt.want)
				}
				return
			}
			if err == nil || !errors.Is(err, ErrVerdict) || !strings.HasPrefix(err.Error(), "invalid verdict: ") || !strings.Contains(err.Error(), tt.err) {
				t.Errorf("ParseRating = %+v, %v; want an ErrVerdict saying %q", got, err, tt.err)
			}
			if got != (Rating{}) {
				t.Errorf("ParseRating = %+v with an error, want the zero Rating", got)
			}
		})
	}
}

// FuzzParseRating: whatever the answer, ParseRating accepts only a verdict
// within the limits, and every error wraps ErrVerdict. Its corpus
// (testdata/fuzz/FuzzParseRating) holds answers real judges gave.
func FuzzParseRating(f *testing.F) {
	for _, s := range []string{`{"score": 4, "reason": "r"}`, "```json\n{\"score\":1,\"reason\":\"x\"}\n```", `{"score": 9}`, `[]`, `{"score":1e0,"reason":"r"}`} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		v, err := ParseRating(s)
		if err != nil {
			if !errors.Is(err, ErrVerdict) {
				t.Fatalf("error %v does not wrap ErrVerdict", err)
			}
			return
		}
		if v.Score < 1 || v.Score > 5 || strings.TrimSpace(v.Reason) == "" || utf8.RuneCountInString(v.Reason) > MaxReason || len(s) > MaxAnswer {
			t.Fatalf("ParseRating(%q) = %+v: invalid verdict accepted", s, v)
		}
	})
}

var testRubric = Rubric{
	Intro: "You review a run.\n\nIt is short.",
	Task:  "Score the run from 1 to 5:",
	Anchors: [5]string{
		"unusable: misleads",
		"structural errors: invents",
		"errors recovered: asks",
		"minor flaws: terse",
		"healthy: correct",
	},
}

func TestSystem(t *testing.T) {
	want := "You review a run.\n\nIt is short.\n\n" +
		"Score the run from 1 to 5:\n" +
		"5 healthy: correct\n4 minor flaws: terse\n3 errors recovered: asks\n2 structural errors: invents\n1 unusable: misleads\n\n" +
		`Reply with only this JSON object, and no other text: {"score": <integer 1 to 5>, "reason": "<one or two sentences, at most 300 characters>"}`
	if got := testRubric.System(); got != want {
		t.Errorf("System() =\n%s\nwant\n%s", got, want)
	}
	msgs := testRubric.Messages("the prompt")
	if len(msgs) != 2 || msgs[0].Role != llms.ChatMessageTypeSystem || msgs[1].Role != llms.ChatMessageTypeHuman ||
		msgs[0].Parts[0] != llms.TextPart(want) || msgs[1].Parts[0] != llms.TextPart("the prompt") {
		t.Errorf("Messages = %+v", msgs)
	}
}

type noChoices struct{}

func (noChoices) GenerateContent(context.Context, []llms.MessageContent, ...llms.CallOption) (*llms.ContentResponse, error) {
	return &llms.ContentResponse{}, nil
}

func (noChoices) Call(context.Context, string, ...llms.CallOption) (string, error) { return "", nil }

// twoChoices answers with two choices, the second carrying the usage.
type twoChoices struct{}

func (twoChoices) GenerateContent(context.Context, []llms.MessageContent, ...llms.CallOption) (*llms.ContentResponse, error) {
	return &llms.ContentResponse{Choices: []*llms.ContentChoice{
		{Content: "a"}, nil, {Content: "b", GenerationInfo: map[string]any{"InputTokens": 10, "OutputTokens": 2}},
	}}, nil
}

func (twoChoices) Call(context.Context, string, ...llms.CallOption) (string, error) { return "", nil }

func TestCall(t *testing.T) {
	const prompt = "Route: order-status\nThe run: …"
	price := func(in, out int) float64 { return float64(in)*1 + float64(out)*10 }
	estimatedIn := trace.EstimateTokens(testRubric.System()) + trace.EstimateTokens(prompt)
	slow := guardtest.Func(func(ctx context.Context, _ []llms.MessageContent, _ llms.CallOptions) (guardtest.Reply, error) {
		<-ctx.Done()
		return guardtest.Reply{}, ctx.Err()
	})
	tests := []struct {
		name  string
		model llms.Model
		opts  Options
		text  string
		usage Usage
		err   string
	}{
		{"reported usage", guardtest.Script(guardtest.Reply{Text: "ok", Usage: &guardtest.Usage{In: 900, Out: 30}}), Options{Cost: price},
			"ok", Usage{TokensIn: 900, TokensOut: 30, Cost: 900 + 300}, ""},
		{"estimated usage", guardtest.Script(guardtest.Text("a longer answer")), Options{Cost: price},
			"a longer answer", Usage{TokensIn: estimatedIn, TokensOut: trace.EstimateTokens("a longer answer"), Estimated: true,
				Cost: float64(estimatedIn) + 10*float64(trace.EstimateTokens("a longer answer"))}, ""},
		{"no cost function", guardtest.Script(guardtest.Reply{Text: "ok", Usage: &guardtest.Usage{In: 9, Out: 3}}), Options{},
			"ok", Usage{TokensIn: 9, TokensOut: 3}, ""},
		{"every choice, usage from the first that has it", twoChoices{}, Options{Cost: price}, "a\nb", Usage{TokensIn: 10, TokensOut: 2, Cost: 30}, ""},
		{"model error", guardtest.Script(guardtest.Reply{Err: errors.New("judge unavailable")}), Options{Cost: price}, "", Usage{}, "judge unavailable"},
		{"panic", guardtest.Func(func(context.Context, []llms.MessageContent, llms.CallOptions) (guardtest.Reply, error) {
			panic("judge exploded")
		}), Options{Cost: price}, "", Usage{}, "judge model panicked: judge exploded"},
		{"no choices", noChoices{}, Options{Cost: price}, "", Usage{}, "judge model returned no answer"},
		{"timeout", slow, Options{Timeout: 30 * time.Second}, "", Usage{}, "context deadline exceeded"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var (
				text string
				u    Usage
				err  error
			)
			// The timeout passes on the bubble's clock, at once.
			synctest.Test(t, func(*testing.T) {
				text, u, err = Call(context.Background(), tt.model, testRubric.Messages(prompt), tt.opts)
			})
			if text != tt.text || u != tt.usage {
				t.Errorf("Call = %q, %+v; want %q, %+v", text, u, tt.text, tt.usage)
			}
			if (err == nil) != (tt.err == "") || (err != nil && err.Error() != tt.err) {
				t.Errorf("err %v, want %q", err, tt.err)
			}
		})
	}
}

func TestCallOptions(t *testing.T) {
	m := guardtest.Script(guardtest.Text("ok"))
	var deadline time.Time
	probe := guardtest.Func(func(ctx context.Context, _ []llms.MessageContent, _ llms.CallOptions) (guardtest.Reply, error) {
		deadline, _ = ctx.Deadline()
		return guardtest.Text("ok"), nil
	})
	if _, _, err := Call(context.Background(), m, testRubric.Messages("p"), Options{}); err != nil {
		t.Fatal(err)
	}
	if o := m.Options()[0]; o.Temperature != 0 || !o.JSONMode {
		t.Errorf("call options %+v, want temperature 0, JSON mode", o)
	}
	tests := []struct {
		name    string
		timeout time.Duration
		want    time.Duration // 0: no deadline
	}{
		{"zero means the default", 0, DefaultTimeout},
		{"set", time.Second, time.Second},
		{"negative means none", -1, 0},
	}
	for _, tt := range tests {
		// In a bubble, the clock stands still while the call runs.
		synctest.Test(t, func(t *testing.T) {
			deadline = time.Time{}
			start := time.Now()
			if _, _, err := Call(context.Background(), probe, nil, Options{Timeout: tt.timeout}); err != nil {
				t.Fatal(err)
			}
			switch got := deadline.Sub(start); {
			case tt.want == 0 && !deadline.IsZero():
				t.Errorf("%s: deadline in %v, want none", tt.name, got)
			case tt.want != 0 && got != tt.want:
				t.Errorf("%s: deadline in %v, want %v", tt.name, got, tt.want)
			}
		})
	}
}

func TestAsk(t *testing.T) {
	price := func(in, out int) float64 { return float64(in + out) }
	tests := []struct {
		name  string
		reply guardtest.Reply
		want  Rating
		cost  float64
		err   string
	}{
		{"verdict", guardtest.Reply{Text: `{"score": 2, "reason": "Invents clause 7.3."}`, Usage: &guardtest.Usage{In: 10, Out: 5}}, Rating{2, "Invents clause 7.3."}, 15, ""},
		{"not a verdict, still paid for", guardtest.Reply{Text: "PASS", Usage: &guardtest.Usage{In: 10, Out: 1}}, Rating{}, 11, "invalid verdict: not a JSON object"},
		{"failed call, free", guardtest.Reply{Err: errors.New("rate limited")}, Rating{}, 0, "rate limited"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			m := guardtest.Script(tt.reply)
			got, u, err := Ask(context.Background(), m, testRubric, "p", Options{Cost: price})
			if got != tt.want || u.Cost != tt.cost {
				t.Errorf("Ask = %+v, cost %v; want %+v, cost %v", got, u.Cost, tt.want, tt.cost)
			}
			if (err == nil) != (tt.err == "") || (err != nil && !strings.HasPrefix(err.Error(), tt.err)) {
				t.Errorf("err %v, want %q", err, tt.err)
			}
			if msgs := m.Received(); len(msgs) != 1 || msgs[0][0].Parts[0] != llms.TextPart(testRubric.System()) {
				t.Errorf("the model got %+v, want the rubric's system prompt", msgs)
			}
		})
	}
}
