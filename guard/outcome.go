package guard

import (
	"context"
	"errors"

	"github.com/agentguard/agentguard/trace"
)

// Outcome is how a turn of an agent ended, read the same way whatever drove
// the loop: Run (Result.Outcome) or a loop over WrapModel and WrapTool such
// as langchaingo's agents.Executor (OutcomeOf).
type Outcome struct {
	// Status is one of the RunStatus constants, never empty.
	Status RunStatus
	// Answer is what to show the user: the model's final answer, the
	// clarifying question, the refusal or the handoff message. Empty when
	// Paused or Failed.
	Answer string
	// Finding is the finding whose verdict ended the turn, when a rule
	// did (Clarify, Refused, Handoff); nil otherwise.
	Finding *trace.Finding
	// Err is why the turn failed, when Status is StatusFailed.
	Err error
}

// OutcomeOf reads the outcome of a loop that ran over WrapModel and
// WrapTool, such as langchaingo's agents.Executor, from what the loop
// returned — output and err, as chains.Run returns them — and ctx, the
// context it ran with, which carries the trace (StartTrace):
//
//   - err is an *Interrupt: a rule stopped a tool call and ended the turn;
//     the status follows its verdict, the answer is its message.
//   - err is another error: StatusFailed, with err (a provider failure
//     after the retries, a cancelled context, agents.ErrNotFinished).
//   - err is nil: if a rule stopped the model's last answer, the wrapped
//     model replaced it (the refusal, the question, the handoff message),
//     and ctx's trace records which verdict did: its status, with output
//     as the answer. Otherwise StatusDone with output.
//
// Without a trace in ctx, a model-side verdict cannot be told from a final
// answer and reads as StatusDone: start one per request with StartTrace.
func OutcomeOf(ctx context.Context, output string, err error) Outcome {
	var intr *Interrupt
	switch {
	case errors.As(err, &intr):
		f := intr.Finding
		return Outcome{Status: statusOf(intr.Verdict), Answer: intr.Message, Finding: &f}
	case err != nil:
		return Outcome{Status: StatusFailed, Err: err}
	}
	o := Outcome{Status: StatusDone, Answer: output}
	if rec := RecorderFrom(ctx); rec != nil {
		rec.View(func(t *trace.Trace) {
			if f := stoppedAnswer(t); f != nil {
				o.Status, o.Finding = modelStatus(f.Verdict), f
			}
		})
	}
	return o
}

// Outcome returns r's outcome: its status, answer, error, and the finding
// that ended the run, if one did.
func (r *Result) Outcome() Outcome {
	o := Outcome{Status: r.Status, Answer: r.Answer, Err: r.Err}
	if o.Status == StatusFailed || o.Status == StatusPaused {
		o.Answer = ""
	}
	if o.Status == StatusClarify || o.Status == StatusRefused || o.Status == StatusHandoff {
		// The verdict that ended the run is the last terminal one; a
		// refused answer may have been stopped by a Retry or a Block.
		for _, stops := range []func(trace.Verdict) bool{terminal, func(v trace.Verdict) bool { return v == trace.Retry || v == trace.Block }} {
			for i := len(r.Findings) - 1; i >= 0 && o.Finding == nil; i-- {
				if f := r.Findings[i]; !f.Shadow && stops(f.Verdict) {
					o.Finding = &f
				}
			}
		}
	}
	return o
}

// stoppedAnswer returns the strongest enforced finding about the trace's
// last model step, when one stopped it: the guard then replaced the
// answer. A copy; nil when the answer stood.
func stoppedAnswer(t *trace.Trace) *trace.Finding {
	last := -1
	for i := len(t.Steps) - 1; i >= 0; i-- {
		if t.Steps[i].Kind == trace.KindModel {
			last = i
			break
		}
	}
	if last < 0 {
		return nil
	}
	var best *trace.Finding
	for _, s := range t.Steps[last+1:] {
		f := s.Finding
		if s.Kind != trace.KindGate || f == nil || f.Step != t.Steps[last].Index || f.Shadow || f.Verdict == trace.Allow {
			continue
		}
		if best == nil || f.Verdict.Strength() > best.Verdict.Strength() {
			best = f
		}
	}
	if best == nil {
		return nil
	}
	f := *best
	return &f
}

// modelStatus is the status of a turn whose model answer was stopped with
// v: a Retry that is the last word was out of retries, and a blocked answer
// is replaced by the refusal, so both read as refused.
func modelStatus(v trace.Verdict) RunStatus {
	switch v {
	case trace.Retry, trace.Block:
		return StatusRefused
	}
	return statusOf(v)
}
