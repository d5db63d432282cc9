package guard

import (
	"context"

	"github.com/agentguard/agentguard/trace"
)

// judge runs every rule on the proposed step s against rec's trace so far
// and returns the findings and the verdict to enforce (Allow in shadow mode).
func (g *Guard) judge(rec *trace.Recorder, s *trace.Step) ([]trace.Finding, trace.Verdict) {
	if g.cfg.Bypass {
		return nil, trace.Allow
	}
	var out []trace.Finding
	var v trace.Verdict
	// The index Propose sets is provisional; commit sets the final one. A
	// tool call that may run stays pending in the trace until commit, so
	// that concurrent calls count against each other's limits.
	rec.Propose(s, func(t *trace.Trace) bool {
		for _, r := range g.rules {
			if ff := r.Check(t, s); out == nil {
				out = ff // most steps have at most one rule to say something
			} else {
				out = append(out, ff...)
			}
		}
		v = g.enforced(out)
		return s.Kind == trace.KindTool && v == trace.Allow
	})
	return out, v
}

// enforced returns the strongest verdict among findings, or Allow in shadow mode.
func (g *Guard) enforced(findings []trace.Finding) trace.Verdict {
	v := trace.Allow
	for i := range findings {
		if g.cfg.Shadow {
			findings[i].Shadow = true
			continue
		}
		if findings[i].Verdict.Strength() > v.Strength() {
			v = findings[i].Verdict
		}
	}
	return v
}

// strongest returns the first finding with verdict v.
func strongest(findings []trace.Finding, v trace.Verdict) trace.Finding {
	for _, f := range findings {
		if f.Verdict == v {
			return f
		}
	}
	return trace.Finding{Verdict: v}
}

// commit records s, then a gate step for each finding, and sends each
// finding to the ledger.
func (g *Guard) commit(ctx context.Context, rec *trace.Recorder, s *trace.Step, findings []trace.Finding) {
	if g.cfg.Bypass {
		return
	}
	idx := rec.Add(s)
	for i := range findings {
		f := &findings[i]
		f.Step = idx
		gate := &gateStep{Step: trace.Step{Kind: trace.KindGate, Name: f.Rule, Start: s.Start}, finding: *f}
		gate.Finding = &gate.finding
		rec.Add(&gate.Step)
		g.report(ctx, rec, gate.finding)
	}
}

// gateStep is a gate step and its finding in one allocation.
type gateStep struct {
	trace.Step
	finding trace.Finding
}

// report hands f to the reporter, which logs it and appends it to the
// ledger off the step.
func (g *Guard) report(ctx context.Context, rec *trace.Recorder, f trace.Finding) {
	if g.cfg.Observe.Ledger == nil && g.cfg.Observe.Logger == nil {
		return
	}
	g.reports.send(ctx, trace.Violation{Time: g.now().UTC(), TraceID: rec.ID(), SessionID: rec.SessionID(), Finding: f})
}

// observation is the tool result the agent sees for a call that did not run.
func (g *Guard) observation(f trace.Finding) string {
	switch f.Verdict {
	case trace.Retry:
		return "[agentguard] call not executed: " + f.Message + ". Correct the call and try again."
	case trace.Clarify:
		return "[agentguard] call not executed: the user was asked to clarify first."
	case trace.Refuse:
		return "[agentguard] call not executed: the request was refused."
	case trace.Handoff:
		return "[agentguard] call not executed: the conversation was handed to a human."
	default:
		return "[agentguard] call blocked by rule " + f.Rule + ": " + f.Message + ". Do not repeat it."
	}
}

// answer is what the user is told when verdict v ends a run.
func (g *Guard) answer(f trace.Finding) string {
	switch f.Verdict {
	case trace.Clarify:
		if f.Question != "" {
			return f.Question
		}
		return "Could you tell me a little more about what you need?"
	case trace.Handoff:
		return g.cfg.Answers.HandoffMessage
	default:
		return g.cfg.Answers.RefusalTemplate
	}
}

// terminal reports whether v ends the run for now.
func terminal(v trace.Verdict) bool {
	return v == trace.Clarify || v == trace.Refuse || v == trace.Handoff
}
