package judge

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/agentguard/agentguard/guard/internal/detect"
	"github.com/agentguard/agentguard/trace"
	"github.com/tmc/langchaingo/llms"
)

// Limits of an answer (see ParseRating).
const (
	// MaxAnswer is the longest answer ParseRating accepts, in bytes.
	MaxAnswer = 4 << 10
	// MaxReason is the longest reason ParseRating accepts, in characters.
	MaxReason = 800
)

// Format is the last paragraph of every system prompt: the one answer a
// judge may give.
const Format = `Reply with only this JSON object, and no other text: {"score": <integer 1 to 5>, "reason": "<one or two sentences, at most 300 characters>"}`

// Reminder is the line a judge's user message ends with.
const Reminder = "Reply with only the JSON object."

// DefaultTimeout bounds a call whose Options.Timeout is zero.
const DefaultTimeout = time.Minute

// ErrVerdict: an answer is not a valid verdict. ParseRating's errors wrap
// it; a use re-exports it (health.ErrVerdict) so that errors.Is works on
// its own errors.
var ErrVerdict = errors.New("invalid verdict")

// Rubric is what varies between the uses of the judge: what it reviews and
// what each score means. The zero Rubric builds a prompt with no
// instructions and empty anchors; every use sets all three fields.
type Rubric struct {
	// Intro tells the judge what it reviews and what the user message
	// gives it: one or more paragraphs.
	Intro string
	// Task asks for the score and ends with the colon before the anchors:
	// "Score the agent's behaviour in the case from 1 to 5:".
	Task string
	// Anchors[s-1] says what score s means, as "healthy: correct,
	// grounded, and keeps every constraint". The prompt lists them from
	// 5 down to 1, each after its score.
	Anchors [5]string
}

// System returns the system prompt: Intro, a blank line, Task, the anchors
// one a line from 5 down to 1, a blank line and Format.
func (r Rubric) System() string {
	var b strings.Builder
	b.WriteString(r.Intro)
	b.WriteString("\n\n")
	b.WriteString(r.Task)
	for s := 5; s >= 1; s-- {
		fmt.Fprintf(&b, "\n%d %s", s, r.Anchors[s-1])
	}
	b.WriteString("\n\n")
	b.WriteString(Format)
	return b.String()
}

// Messages returns the messages of a call about prompt: the system prompt,
// then prompt as the user's message.
func (r Rubric) Messages(prompt string) []llms.MessageContent {
	return []llms.MessageContent{
		llms.TextParts(llms.ChatMessageTypeSystem, r.System()),
		llms.TextParts(llms.ChatMessageTypeHuman, prompt),
	}
}

// Options are the settings of one call. The zero value bounds the call by
// DefaultTimeout and prices it at 0.
type Options struct {
	// Timeout bounds the call. Zero means DefaultTimeout; negative, no
	// bound but the context's.
	Timeout time.Duration
	// Cost prices the call's tokens, as guard.Pricing.Cost does. Nil means
	// the call costs 0.
	Cost func(in, out int) float64
}

// Usage is what a call cost.
type Usage struct {
	// TokensIn and TokensOut are the provider's counts, or, when it gave
	// none, estimates (trace.EstimateTokens) of the prompt's and the
	// answer's text, which Estimated then reports. Both are 0 when the
	// call failed.
	TokensIn  int
	TokensOut int
	Estimated bool
	// Cost is Options.Cost of the tokens.
	Cost float64
}

// Call sends msgs to m once, at temperature 0 in JSON mode, under
// o.Timeout, and returns the text of its answer (the choices' contents,
// one a line) and what the call cost. An error of the model, a panic in it
// ("judge model panicked: …") and an answer with no choice ("judge model
// returned no answer") are errors, and then the call counts no tokens.
func Call(ctx context.Context, m llms.Model, msgs []llms.MessageContent, o Options) (text string, u Usage, err error) {
	defer func() {
		if p := recover(); p != nil {
			text, u, err = "", Usage{}, fmt.Errorf("judge model panicked: %v", p)
		}
	}()
	timeout := o.Timeout
	if timeout == 0 {
		timeout = DefaultTimeout
	}
	if timeout > 0 {
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeout(ctx, timeout)
		defer cancel()
	}
	resp, err := m.GenerateContent(ctx, msgs, llms.WithTemperature(0), llms.WithJSONMode())
	if err != nil {
		return "", Usage{}, err
	}
	if resp == nil || len(resp.Choices) == 0 {
		return "", Usage{}, errors.New("judge model returned no answer")
	}
	var parts []string
	ok := false
	for _, c := range resp.Choices {
		if c == nil {
			continue
		}
		if c.Content != "" {
			parts = append(parts, c.Content)
		}
		if !ok {
			u.TokensIn, u.TokensOut, ok = detect.Usage(c.GenerationInfo)
		}
	}
	text = strings.Join(parts, "\n")
	if !ok {
		u.TokensIn, u.TokensOut, u.Estimated = 0, trace.EstimateTokens(text), true
		for _, m := range msgs {
			for _, p := range m.Parts {
				if t, isText := p.(llms.TextContent); isText {
					u.TokensIn += trace.EstimateTokens(t.Text)
				}
			}
		}
	}
	if o.Cost != nil {
		u.Cost = o.Cost(u.TokensIn, u.TokensOut)
	}
	return text, u, nil
}

// Ask asks m about prompt under r — Call with r.Messages(prompt) — and
// reads the answer with ParseRating. The usage is the call's whatever the
// error: an answer that is not a verdict was still paid for.
func Ask(ctx context.Context, m llms.Model, r Rubric, prompt string, o Options) (Rating, Usage, error) {
	text, u, err := Call(ctx, m, r.Messages(prompt), o)
	if err != nil {
		return Rating{}, u, err
	}
	v, err := ParseRating(text)
	return v, u, err
}

// Rating is a judge's verdict.
type Rating struct {
	// Score is from 1 to 5, on the anchors of the Rubric asked.
	Score  int    `json:"score"`
	Reason string `json:"reason"`
}

// ParseRating reads a judge's answer: exactly one JSON object with
// exactly the keys "score", an integer from 1 to 5, and "reason", a
// non-empty string of at most MaxReason characters; the answer is at most
// MaxAnswer bytes. White space around the object, and one Markdown code
// fence around it (```json … ```), are the only other text allowed. The
// reason is returned trimmed. Any other answer is an error wrapping
// ErrVerdict: "invalid verdict: WHY".
func ParseRating(answer string) (Rating, error) {
	fail := func(format string, a ...any) (Rating, error) {
		return Rating{}, fmt.Errorf("%w: "+format, append([]any{ErrVerdict}, a...)...)
	}
	if len(answer) > MaxAnswer {
		return fail("answer is %d bytes, over %d", len(answer), MaxAnswer)
	}
	s := strings.TrimSpace(answer)
	if rest, ok := strings.CutPrefix(s, "```"); ok {
		body, ok := strings.CutSuffix(rest, "```")
		first, after, nl := strings.Cut(body, "\n")
		if !ok || !nl || strings.TrimSpace(strings.TrimPrefix(strings.TrimSpace(first), "json")) != "" {
			return fail("not a JSON object: an unclosed or labelled code fence")
		}
		s = strings.TrimSpace(after)
	}
	if s == "" {
		return fail("empty answer")
	}
	var raw struct {
		Score  *float64 `json:"score"`
		Reason *string  `json:"reason"`
	}
	dec := json.NewDecoder(strings.NewReader(s))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&raw); err != nil {
		return fail("not a JSON object with only score and reason: %s", jsonError(err))
	}
	if _, err := dec.Token(); err != io.EOF {
		return fail("text after the JSON object")
	}
	switch {
	case raw.Score == nil:
		return fail(`no "score"`)
	case raw.Reason == nil:
		return fail(`no "reason"`)
	}
	if v := *raw.Score; v != math.Trunc(v) || v < 1 || v > 5 {
		return fail("score %v is not an integer from 1 to 5", v)
	}
	reason := strings.TrimSpace(*raw.Reason)
	if reason == "" {
		return fail("empty reason")
	}
	if n := utf8.RuneCountInString(reason); n > MaxReason {
		return fail("reason has %d characters, over %d", n, MaxReason)
	}
	return Rating{Score: int(*raw.Score), Reason: reason}, nil
}

func jsonError(err error) string {
	var te *json.UnmarshalTypeError
	switch {
	case errors.As(err, &te) && te.Field != "":
		return fmt.Sprintf("%q is a JSON %s", te.Field, te.Value)
	case errors.As(err, &te):
		return "got a JSON " + te.Value
	case errors.Is(err, io.ErrUnexpectedEOF):
		return "the answer ends inside the object"
	}
	return strings.TrimPrefix(err.Error(), "json: ")
}
