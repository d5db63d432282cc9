package health

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"strings"

	"github.com/agentguard/agentguard/guard"
	"github.com/agentguard/agentguard/guard/internal/judge"
	"github.com/tmc/langchaingo/llms"
)

// Rater is one of the independent raters of the screened cases: a judge
// model, or a person whose scores were collected in a file (LoadScores).
// Exactly one of Model and Scores is set. Every rater is given the same
// question: the case's turns and answers, its baseline answer (the
// reference and its must/must-not elements) and the excerpts of the rules
// it touches.
type Rater struct {
	// Name names the rater in the report: "openai:gpt-4o", "reviewer:li".
	Name string
	// Model is a judge model, called once per screened case at temperature
	// 0 in JSON mode, from several goroutines at once.
	Model llms.Model
	// Pricing prices a Model's tokens. Zero means its cost is 0.
	Pricing guard.Pricing
	// Scores are a person's scores by case id.
	Scores Scores
}

// Scores are a person's ratings of screened cases, by case id.
type Scores map[string]Rating

// MaxGap is the largest gap between two raters' scores of a case that
// needs no review: a gap above it sends the case to review.
const MaxGap = 1.0

// RaterVerdict is one rater's verdict on a case.
type RaterVerdict struct {
	Rater  string `json:"rater"`
	Score  int    `json:"score,omitempty"`
	Reason string `json:"reason,omitempty"`
	// Error says why there is no score: the call failed, its answer was
	// not a verdict, or the person did not score the case.
	Error     string  `json:"error,omitempty"`
	TokensIn  int     `json:"tokens_in,omitempty"`
	TokensOut int     `json:"tokens_out,omitempty"`
	Estimated bool    `json:"tokens_estimated,omitempty"`
	Cost      float64 `json:"cost,omitempty"`
}

// LoadScores reads a person's scores: one JSON object a line,
// {"case": "B05", "score": 2, "reason": "…"}, with score an integer from 1
// to 5 on the rubric's anchors and reason optional; blank lines are
// skipped. A case scored twice, an unknown key or a bad score is an error
// naming source and line.
func LoadScores(r io.Reader, source string) (Scores, error) {
	out := Scores{}
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 0, 64<<10), 1<<20)
	var errs []error
	line := 0
	for sc.Scan() {
		line++
		b := bytes.TrimSpace(sc.Bytes())
		if len(b) == 0 {
			continue
		}
		fail := func(format string, a ...any) {
			errs = append(errs, &Error{Op: "scores", Err: fmt.Errorf("%s:%d: %w: %s", source, line, ErrScores, fmt.Sprintf(format, a...))})
		}
		var v struct {
			Case   string   `json:"case"`
			Score  *float64 `json:"score"`
			Reason string   `json:"reason"`
		}
		dec := json.NewDecoder(bytes.NewReader(b))
		dec.DisallowUnknownFields()
		if err := dec.Decode(&v); err != nil {
			fail("want {\"case\": ID, \"score\": 1-5, \"reason\": TEXT}: %v", err)
			continue
		}
		switch {
		case strings.TrimSpace(v.Case) == "":
			fail(`missing "case"`)
		case v.Score == nil:
			fail("case %s: missing \"score\"", v.Case)
		case *v.Score != math.Trunc(*v.Score) || *v.Score < 1 || *v.Score > 5:
			fail("case %s: score %v is not an integer from 1 to 5", v.Case, *v.Score)
		default:
			if _, dup := out[v.Case]; dup {
				fail("case %s is scored twice", v.Case)
				continue
			}
			out[v.Case] = Rating{Score: int(*v.Score), Reason: strings.TrimSpace(v.Reason)}
		}
	}
	if err := sc.Err(); err != nil {
		errs = append(errs, &Error{Op: "scores", Err: fmt.Errorf("%s: %w", source, err)})
	}
	return out, errors.Join(errs...)
}

// raters returns the raters of a scoring: Options.Judge first, then
// Options.Raters.
func (o *Options) raters() []Rater {
	var out []Rater
	if o.Judge != nil {
		out = append(out, Rater{Name: o.JudgeName, Model: o.Judge, Pricing: o.JudgePricing})
	}
	return append(out, o.Raters...)
}

func validateRaters(rs []Rater) error {
	for i, r := range rs {
		if (r.Model == nil) == (r.Scores == nil) {
			return &Error{Op: "raters", Err: fmt.Errorf("%w: rater %d (%q): set exactly one of Model and Scores", ErrRater, i, r.Name)}
		}
	}
	return nil
}

// rate asks one rater about a case.
func (s *scorer) rate(ctx context.Context, r Rater, caseID, prompt string) (v RaterVerdict, called bool) {
	v.Rater = r.Name
	if r.Scores != nil {
		rt, ok := r.Scores[caseID]
		if !ok {
			v.Error = "not scored by " + r.Name
			return v, false
		}
		v.Score, v.Reason = rt.Score, rt.Reason
		return v, false
	}
	rt, u, err := judge.Ask(ctx, r.Model, judgeRubric, prompt, judge.Options{Timeout: s.opts.JudgeTimeout, Cost: r.Pricing.Cost})
	v.TokensIn, v.TokensOut, v.Estimated, v.Cost = u.TokensIn, u.TokensOut, u.Estimated, u.Cost
	if err != nil {
		v.Error = (&Error{Op: "judge", Err: err}).Error()
		return v, true
	}
	v.Score, v.Reason = rt.Score, rt.Reason
	return v, true
}

// combine sets a case's verdict from its raters': the mean of the valid
// scores, the gap between the highest and the lowest, and review when the
// gap is above MaxGap or, with two raters or more, fewer than two scored.
func combine(out *JudgedCase, vs []RaterVerdict) {
	var sum float64
	var n int
	lo, hi := 6, 0
	var errs []string
	for _, v := range vs {
		out.TokensIn += v.TokensIn
		out.TokensOut += v.TokensOut
		out.Estimated = out.Estimated || v.Estimated
		out.Cost += v.Cost
		if v.Error != "" {
			errs = append(errs, v.Error)
			continue
		}
		if out.Reason == "" {
			out.Reason = v.Reason
		}
		sum += float64(v.Score)
		n++
		lo, hi = min(lo, v.Score), max(hi, v.Score)
	}
	if len(vs) > 1 {
		out.Ratings = vs
	}
	if n == 0 {
		out.Error = strings.Join(errs, "; ")
		out.Review = len(vs) > 1
		return
	}
	out.Mean = sum / float64(n)
	out.Score = int(math.Round(out.Mean))
	if len(vs) > 1 {
		out.Gap = float64(hi - lo)
		out.Review = out.Gap > MaxGap || n < 2
	}
}
