package gates

import (
	"fmt"

	"github.com/agentguard/agentguard/guard/internal/rulekit"
	"github.com/agentguard/agentguard/guard/rules"
	"github.com/agentguard/agentguard/trace"
)

// NewDeadEnd returns the rule that keeps a tool exception from ending the conversation in a
// dead end ("I could not submit the return…" and nothing after). A dead
// end is a turn in which a tool call failed — it ran and returned an
// error; a call the guard blocked did not run and does not count — no
// later call of the same tool in the turn succeeded, and either the failed
// call was state-changing (the action
// the user asked for did not happen) or no other call of the turn
// succeeded (the answer rests on nothing). Its final answer is judged
// verdict, unless it already asks the user a question:
//
//   - trace.Handoff (the default, for ""): a person takes the conversation
//     over (Result.Status is StatusHandoff, the answer the handoff message);
//   - trace.Clarify: re-ask the user, who can correct what the call needed
//     or choose to try again (StatusClarify);
//   - trace.Retry: re-ask the model, told which call failed and why, so
//     that it corrects the call, asks the user or offers a hand-off itself
//     (bounded by Gates.MaxRetries).
//
// Like every rule it runs offline too, and in shadow mode it records the
// dead end without changing the answer. The guard checks the verdict.
func NewDeadEnd(tools *rulekit.Tools, verdict trace.Verdict) rulekit.ScopedFunc {
	if verdict == "" {
		verdict = trace.Handoff
	}
	return rulekit.Answers(rules.ToolFailure, func(t *trace.Trace, s *trace.Step) []trace.Finding {
		if s.Kind != trace.KindModel || len(s.Calls) != 0 || s.Blocked || s.Intent != "" || s.Result == "" || rulekit.AsksUser(s.Result) {
			return nil
		}
		var failed *trace.Step
		succeeded := 0
		for _, p := range rulekit.SameTurn(t, s.Turn) {
			switch {
			case p.Kind != trace.KindTool || p.Blocked || p.Turn != s.Turn:
			case p.Error != "":
				failed = p
			case failed != nil && p.Name == failed.Name:
				failed = nil // tried again and it worked
				succeeded++
			default:
				succeeded++
			}
		}
		if failed == nil || (succeeded > 0 && !tools.Writes(failed.Name)) {
			return nil
		}
		reason := rulekit.FirstLine(failed.Error)
		return []trace.Finding{{
			Rule: rules.ToolFailure, Step: s.Index, Verdict: verdict, Dimension: trace.Coherence, Severity: trace.SeverityError,
			Message:  fmt.Sprintf("tool %q failed (%s) and the answer ends there: correct the call, ask the user, or hand the conversation to a person", failed.Name, reason),
			Evidence: failed.Name + " " + failed.Args, Tags: []string{"cascade", "tool-failure"},
			Facts: []trace.Fact{rulekit.CallFact(failed, "failed: "+reason), rulekit.AnswerFact(s, s.Result, "ends the turn without it")},
		}}
	})
}
