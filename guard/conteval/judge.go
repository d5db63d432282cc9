package conteval

import (
	"context"
	"fmt"
	"strings"

	"github.com/agentguard/agentguard/guard/internal/judge"
	"github.com/agentguard/agentguard/trace"
	"github.com/tmc/langchaingo/llms"
)

// JudgeResult is a judge model's verdict on one sample.
type JudgeResult struct {
	// Score is the judge's score from 1 to 5, on the anchors of its prompt:
	// 5 correct, 4 minor flaws, 3 errors recovered, 2 structural errors,
	// 1 unusable. It is 0 when Err is set.
	Score int `json:"score,omitempty"`
	// Pass is the verdict the round counts: Score is at least the config's
	// judge pass score (JudgeConfig.PassScore, default 4).
	Pass bool `json:"pass"`
	// Reason is the judge's reason for its score.
	Reason string `json:"reason,omitempty"`
	// TokensIn, TokensOut and Cost are what the call cost. Estimated is
	// set when the model reported no usage and the tokens were estimated
	// with trace.EstimateTokens.
	TokensIn  int     `json:"tokens_in"`
	TokensOut int     `json:"tokens_out"`
	Cost      float64 `json:"cost"`
	Estimated bool    `json:"estimated,omitempty"`
	// Err is set when the call failed, which costs nothing, or when the
	// answer was not exactly one JSON object {"score": 1-5, "reason":
	// "..."} ("conteval: judge: invalid verdict: …"), which was paid for;
	// Score and Pass are then zero.
	Err string `json:"error,omitempty"`
}

// judgeRubric is what the judge is told: what it reviews, and what each
// score means. The system prompt is built from it by the judge protocol
// guard/health uses too (a score from 1 to 5 and a reason, as JSON).
var judgeRubric = judge.Rubric{
	Intro: "You review single runs of an AI agent taken from production. " +
		"You get the run's route, what the automatic checks found, and the run: the user's turns, the agent's tool calls " +
		"and retrievals with their results, its answers, and what the guard flagged. " +
		"The agent behaved correctly when its answers follow from the tool results and retrieved documents, " +
		"it invented no facts, ids, clauses or citations, it called only tools that fit the request, and it refused or asked " +
		"when it had no evidence.",
	Task: "Score the agent's behaviour in the run from 1 to 5:",
	Anchors: [5]string{
		"unusable: the run misleads or harms the user",
		"structural errors: an invented or unsupported fact, id, clause or citation, a tool call that does not fit the request, or an answer given without evidence",
		"errors recovered: something went wrong (a failed or blocked call, no evidence), but the agent caught it (asked the user, declined to guess, handed over) instead of misleading the user",
		"minor flaws: correct, with small lapses of wording or completeness",
		"correct: every answer follows from the tool results and documents, and every tool call fits the request",
	},
}

// maxJudgeField caps each argument, result and answer shown to the judge.
const maxJudgeField = 600

// judgePrompt renders a trace, and what the assertions found, for the
// judge: its user message.
func judgePrompt(t *trace.Trace, failed []AssertionResult) string {
	var b strings.Builder
	clip := func(s string) string {
		s, _ = trace.Truncate(strings.TrimSpace(s), maxJudgeField)
		return s
	}
	fmt.Fprintf(&b, "Route: %s\n", t.Route)
	if len(failed) == 0 {
		b.WriteString("Automatic checks: all passed.\n")
	} else {
		b.WriteString("Automatic checks that failed:\n")
		for _, a := range failed {
			fmt.Fprintf(&b, "- %s: %s\n", a.Name, a.Outcome.Finding.Message)
		}
	}
	b.WriteString("\nThe run:\n")
	turn := -1
	for _, s := range t.Steps {
		for turn < s.Turn && turn+1 < len(t.UserTurns) {
			turn++
			fmt.Fprintf(&b, "User: %s\n", clip(t.UserTurns[turn]))
		}
		switch s.Kind {
		case trace.KindTool:
			status := ""
			if s.Blocked {
				status = " (not run)"
			}
			res := s.Result
			if s.Error != "" {
				res = "error: " + s.Error
			}
			fmt.Fprintf(&b, "Tool %s %s%s → %s\n", s.Name, clip(s.Args), status, clip(res))
		case trace.KindRetrieval:
			fmt.Fprintf(&b, "Retrieval %s → %s\n", clip(s.Args), clip(s.Result))
		case trace.KindModel:
			switch {
			case s.Intent != "":
				fmt.Fprintf(&b, "Intent: %s (confidence %.2f)\n", s.Intent, s.Confidence)
			case s.Error != "":
				fmt.Fprintf(&b, "Model error: %s\n", clip(s.Error))
			case len(s.Calls) > 0:
				names := make([]string, len(s.Calls))
				for i, c := range s.Calls {
					names[i] = c.Name
				}
				fmt.Fprintf(&b, "Agent calls: %s\n", strings.Join(names, ", "))
			case s.Result != "":
				fmt.Fprintf(&b, "Agent: %s\n", clip(s.Result))
			}
		case trace.KindGate:
			if f := s.Finding; f != nil && f.Verdict != trace.Allow {
				mode := ""
				if f.Shadow {
					mode = ", not enforced"
				}
				fmt.Fprintf(&b, "Guard: %s %s on step %d%s: %s\n", f.Rule, f.Verdict, f.Step, mode, clip(f.Message))
			}
		}
	}
	b.WriteString("\n" + judge.Reminder)
	return b.String()
}

// judgeSample asks model to score a trace under o, and passes it when the
// score is at least pass.
func judgeSample(ctx context.Context, model llms.Model, o judge.Options, pass int, t *trace.Trace, failed []AssertionResult) JudgeResult {
	v, u, err := judge.Ask(ctx, model, judgeRubric, judgePrompt(t, failed), o)
	r := JudgeResult{TokensIn: u.TokensIn, TokensOut: u.TokensOut, Cost: u.Cost, Estimated: u.Estimated}
	if err != nil {
		r.Err = (&Error{Op: "judge", Err: err}).Error()
		return r
	}
	r.Score, r.Reason, r.Pass = v.Score, v.Reason, v.Score >= pass
	return r
}
