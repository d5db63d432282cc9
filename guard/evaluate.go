package guard

import (
	"cmp"
	"context"
	"fmt"
	"slices"

	"github.com/agentguard/agentguard/guard/internal/rulekit"
	"github.com/agentguard/agentguard/guard/rules"
	"github.com/agentguard/agentguard/trace"
)

// Report is the offline judgement of one recorded trace.
type Report struct {
	TraceID string
	// Judged counts the model and tool steps the rules looked at.
	Judged int
	// Findings lists every finding, in step order.
	Findings []trace.Finding
	// Stopped and Escaped split the violations among Findings (the findings
	// whose verdict is not Allow) by what happened online. Stopped holds
	// those the guard that recorded the trace enforced: a gate step of the
	// trace records the same rule's verdict, not Allow and not shadow, on
	// the same step, and the answer was not already streamed — the call
	// did not run, the answer was replaced or asked again. They never
	// reached the user or the world. Escaped holds the rest: what got
	// through. A trace recorded without a guard (an import) has nothing
	// stopped.
	Stopped, Escaped []trace.Finding
	// Score is 100 minus Config.Evaluation.Penalty (20) per escaped
	// violation, floored at 0: what the guard stopped costs nothing, so a
	// well-guarded run does not read as a failed one. Passed is Score >=
	// Config.Evaluation.PassScore (80) with no critical escaped violation:
	// one leaked record or injected payment fails a trace on its own.
	Score  int
	Passed bool
}

// Violations counts the findings whose verdict is not Allow, stopped or
// escaped.
func (r Report) Violations() int {
	n := 0
	for _, f := range r.Findings {
		if f.Verdict != trace.Allow {
			n++
		}
	}
	return n
}

// Evaluate runs the guard's rules over a recorded trace, offline: each model
// and tool step is judged against the steps before it, exactly as it was
// judged online, so a trace recorded by this guard yields the same findings
// again. Gate steps already in the trace are context, not judged. Findings
// are not sent to the ledger.
func (g *Guard) Evaluate(t *trace.Trace) Report {
	r := Report{TraceID: t.ID}
	t = t.Prefix(t.Len()) // a view whose memo the prefixes below share
	for _, s := range t.Steps {
		if s.Kind != trace.KindTool && s.Kind != trace.KindModel {
			continue
		}
		r.Judged++
		prefix := t.Prefix(s.Index)
		for _, rule := range g.rules {
			ff := rule.Check(prefix, s)
			if g.dropped {
				ff = g.keep(ff)
			}
			for _, f := range ff {
				f.Step = s.Index
				f.Source = cmp.Or(f.Source, s.Source)
				r.Findings = append(r.Findings, f)
			}
		}
		r.Findings = append(r.Findings, outcomeFindings(s)...)
		r.Findings = append(r.Findings, recordedRepairs(t, s.Index)...)
		if rulekit.ArgsCut(s) {
			for _, rule := range []string{rules.Arguments, rules.Provenance, rules.Injection} {
				r.Findings = append(r.Findings, recordedFindings(t, s.Index, rule)...)
			}
		}
	}
	if f, ok := unanswered(t); ok && !(g.dropped && slices.Contains(g.cfg.Disable, f.Rule)) {
		r.Findings = append(r.Findings, f)
	}
	enforced := enforcedOnline(t)
	for _, f := range r.Findings {
		switch {
		case f.Verdict == trace.Allow:
		case enforced[stepRule{f.Step, f.Rule}]:
			r.Stopped = append(r.Stopped, f)
		default:
			r.Escaped = append(r.Escaped, f)
		}
	}
	r.Score = max(0, 100-g.cfg.Evaluation.Penalty*len(r.Escaped))
	critical := slices.ContainsFunc(r.Escaped, func(f trace.Finding) bool {
		return f.Severity == trace.SeverityCritical
	})
	r.Passed = r.Score >= g.cfg.Evaluation.PassScore && !critical
	return r
}

// unanswered returns the finding about a run that ended on a failed model
// call: its last model or tool step is a model step with an error (a call
// that timed out, a provider's 5xx after the retries) and so nothing
// answered the user after it. The guard records the same online, when the
// call fails for good (see unansweredGate). A trace that stops at a failed
// tool call may be a run still going, so it is not judged.
func unanswered(t *trace.Trace) (trace.Finding, bool) {
	for i := len(t.Steps) - 1; i >= 0; i-- {
		switch s := t.Steps[i]; {
		case s.Kind == trace.KindTool:
			return trace.Finding{}, false
		case s.Kind == trace.KindModel:
			if s.Error == "" || s.Blocked {
				return trace.Finding{}, false
			}
			return unansweredFinding(s), true
		}
	}
	return trace.Finding{}, false
}

// unansweredFinding is the finding about the failed model step s after
// which the run had no answer.
func unansweredFinding(s *trace.Step) trace.Finding {
	return trace.Finding{
		Rule: rules.Unanswered, Step: s.Index, Source: s.Source, Verdict: trace.Handoff, Dimension: trace.Stability, Severity: trace.SeverityError,
		Message: fmt.Sprintf("the run ended on a failed model call (%s): the user got no answer", rulekit.FirstLine(s.Error)),
		Tags:    []string{"no-answer"},
		Facts:   []trace.Fact{rulekit.CallFact(s, rulekit.FirstLine(s.Error))},
	}
}

// unansweredGate records, online, the unanswered finding about fs, the
// failed attempt the model call ended on, as the gate step Evaluate finds
// again, and reports it; it returns the finding.
func (g *Guard) unansweredGate(ctx context.Context, rec *trace.Recorder, fs *trace.Step) trace.Finding {
	f := unansweredFinding(fs)
	if g.dropped && slices.Contains(g.cfg.Disable, f.Rule) {
		return f
	}
	return g.recordGate(ctx, rec, f)
}

// recordedFindings returns the findings of rule that the trace's gate steps
// after step i recorded for it: the online decision, for what cannot be
// judged again. The gate steps are indexed once per trace, so that asking
// for every step does not rescan the trace each time.
func recordedFindings(t *trace.Trace, i int, rule string) []trace.Finding {
	var out []trace.Finding
	for _, g := range recordedGates(t)[stepRule{i, rule}] {
		if g.at > i {
			f := *g.Finding
			f.Shadow = false
			out = append(out, f)
		}
	}
	return out
}

// recordedGate is a gate step with a finding and its index in the trace.
type recordedGate struct {
	*trace.Step
	at int
}

type recordedGatesKey struct{ n int }

// recordedGates returns t's gate steps with a finding, by the step and rule of
// the finding, in trace order; kept in t's memo per length.
func recordedGates(t *trace.Trace) map[stepRule][]recordedGate {
	return t.Memo(recordedGatesKey{t.Len()}, func() any {
		m := map[stepRule][]recordedGate{}
		for k, g := range t.Steps {
			if at := t.Released + k; g.Kind == trace.KindGate && g.Finding != nil {
				k := stepRule{g.Finding.Step, g.Finding.Rule}
				m[k] = append(m[k], recordedGate{g, at})
			}
		}
		return m
	}).(map[stepRule][]recordedGate)
}

type stepRule struct {
	step int
	rule string
}

// enforcedOnline returns the steps and rules whose verdict the recording
// guard enforced: its gate steps with a verdict that is not Allow, not
// shadow, and not about an answer the user had already seen.
func enforcedOnline(t *trace.Trace) map[stepRule]bool {
	m := make(map[stepRule]bool)
	for _, s := range t.Steps {
		f := s.Finding
		if s.Kind != trace.KindGate || f == nil || f.Shadow || f.Verdict == trace.Allow || slices.Contains(f.Tags, "already-streamed") {
			continue
		}
		m[stepRule{f.Step, f.Rule}] = true
	}
	return m
}
