package guard

import (
	"context"
	"fmt"
	"slices"
	"time"

	"github.com/agentguard/agentguard/guard/internal/rulekit"
	"github.com/agentguard/agentguard/guard/rules"
	"github.com/agentguard/agentguard/trace"
	"github.com/agentguard/agentguard/trace/lexicon"
)

// judge runs every rule on the proposed step s against rec's trace so far
// and returns the findings and the verdict to enforce (Allow in shadow mode).
// Rules that judge tool calls only are left out for other steps.
func (g *Guard) judge(rec *trace.Recorder, s *trace.Step) ([]trace.Finding, trace.Verdict) {
	if s.Kind != trace.KindTool {
		return g.judgeWith(rec, s, g.stepRules, g.stepHot)
	}
	return g.judgeWith(rec, s, g.rules, g.hot)
}

// judgeWith is judge with the rules to run: the guard's, less those that
// cannot say anything about s (see toolPlan), in the guard's order; hot[i]
// is rules[i] when it reads the trace's hot state (hotRule), which is then
// looked up once for them all.
func (g *Guard) judgeWith(rec *trace.Recorder, s *trace.Step, rules []Rule, hot []hotRule) ([]trace.Finding, trace.Verdict) {
	if g.cfg.Bypass {
		return nil, trace.Allow
	}
	var out []trace.Finding
	var v trace.Verdict
	// The index Propose sets is provisional; commit sets the final one. A
	// tool call that may run stays pending in the trace until commit, so
	// that concurrent calls count against each other's limits.
	obs := g.cfg.Observe.Metrics
	var start time.Time
	rec.Propose(s, func(t *trace.Trace) bool {
		if obs != nil {
			start = g.now()
		}
		var h *rulekit.Hot
		for i, r := range rules {
			var ff []trace.Finding
			if hr := hot[i]; hr != nil {
				if h == nil {
					h = rulekit.HotOf(t)
				}
				ff = hr.CheckHot(t, s, h)
			} else {
				ff = r.Check(t, s)
			}
			if g.dropped {
				ff = g.keep(ff)
			}
			factsOfCustom(ff, s)
			if out == nil {
				out = ff // most steps have at most one rule to say something
			} else {
				out = append(out, ff...)
			}
		}
		v = g.enforced(out)
		return s.Kind == trace.KindTool && v == trace.Allow
	})
	if obs != nil {
		obs.Judged(s.Kind, v, g.now().Sub(start))
	}
	return out, v
}

// factsOfCustom gives a finding of a rule of the guard's user that names
// no facts the one fact every finding has: the step it judged. The
// built-in rules name their own (TestEveryFindingHasFacts).
func factsOfCustom(ff []trace.Finding, s *trace.Step) {
	for i := range ff {
		if f := &ff[i]; len(f.Facts) == 0 && !builtinNames[f.Rule] {
			if s.Kind == trace.KindTool {
				f.Facts = []trace.Fact{rulekit.CallFact(s, "")}
			} else {
				f.Facts = []trace.Fact{rulekit.AnswerFact(s, s.Result, "")}
			}
		}
	}
}

// builtinNames are the names the built-in rules file findings under.
var builtinNames = func() map[string]bool {
	m := map[string]bool{rules.ToolFailure: true}
	for _, n := range append(rules.Builtin(), rules.Runtime()...) {
		m[n] = true
	}
	return m
}()

// keep returns ff without the findings Config.Disable names, in place.
func (g *Guard) keep(ff []trace.Finding) []trace.Finding {
	return slices.DeleteFunc(ff, func(f trace.Finding) bool { return slices.Contains(g.cfg.Disable, f.Rule) })
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
// finding to the ledger. It returns the time the findings were reported at
// (zero without findings), for the StepObserver.
func (g *Guard) commit(ctx context.Context, rec *trace.Recorder, s *trace.Step, findings []trace.Finding) time.Time {
	if g.cfg.Bypass {
		return time.Time{}
	}
	provisional := s.Index
	idx := rec.Add(s)
	if idx != provisional {
		renumberFacts(findings, s, provisional, idx)
	}
	var at time.Time
	if len(findings) > 0 {
		at = g.now().UTC()
	}
	for i := range findings {
		f := &findings[i]
		f.Step = idx
		gate := &gateStep{Step: trace.Step{Kind: trace.KindGate, Name: f.Rule, Start: s.Start}, finding: *f}
		gate.Finding = &gate.finding
		rec.Add(&gate.Step)
		g.report(ctx, rec, gate.finding, at)
	}
	g.autosave(ctx, rec)
	return at
}

// renumberFacts points the facts of findings about s at its index idx
// where they name it by the index it had before it was recorded (a failed
// attempt's step is judged before it has one).
func renumberFacts(findings []trace.Finding, s *trace.Step, provisional, idx int) {
	for i := range findings {
		for j := range findings[i].Facts {
			if f := &findings[i].Facts[j]; f.Step == provisional && f.Where == s.Name {
				f.Step = idx
			}
		}
	}
}

// stepStarted tells the StepObserver, if any, that the call of s begins,
// and returns the context the call runs with.
func (g *Guard) stepStarted(ctx context.Context, s *trace.Step) context.Context {
	if obs := g.cfg.Observe.Steps; obs != nil {
		return obs.StepStarted(ctx, s)
	}
	return ctx
}

// commitObserved is commit, then StepEnded with sctx, the context
// stepStarted returned for s.
func (g *Guard) commitObserved(ctx, sctx context.Context, rec *trace.Recorder, s *trace.Step, findings []trace.Finding) {
	at := g.commit(ctx, rec, s, findings)
	if g.cfg.Observe.Steps != nil {
		g.stepEnded(sctx, rec, s, findings, at)
	}
}

// observed tells the StepObserver, if any, of a step that ran no call of
// its own (a blocked call, an answer a gate gave): it starts and ends at
// once. at is when commit reported its findings.
func (g *Guard) observed(ctx context.Context, rec *trace.Recorder, s *trace.Step, findings []trace.Finding, at time.Time) {
	if obs := g.cfg.Observe.Steps; obs != nil {
		g.stepEnded(obs.StepStarted(ctx, s), rec, s, findings, at)
	}
}

// stepEnded tells the StepObserver, which must be set, that s is recorded
// with findings, reported at at: the violations it gets are the ledger's.
func (g *Guard) stepEnded(ctx context.Context, rec *trace.Recorder, s *trace.Step, findings []trace.Finding, at time.Time) {
	var vs []trace.Violation
	if len(findings) > 0 {
		vs = make([]trace.Violation, len(findings))
		for i, f := range findings {
			vs[i] = trace.Violation{Time: at, TraceID: rec.ID(), SessionID: rec.SessionID(), Finding: f}
		}
	}
	g.cfg.Observe.Steps.StepEnded(ctx, s, vs)
}

// recordGate records f, a finding about a step already recorded (or, with
// Step -1 until recorded, about the run), as a gate step of its own, and
// reports it to the ledger and the StepObserver, marked shadow in shadow
// mode; it returns f as recorded.
func (g *Guard) recordGate(ctx context.Context, rec *trace.Recorder, f trace.Finding) trace.Finding {
	f.Shadow = f.Shadow || g.cfg.Shadow
	gs := &trace.Step{Kind: trace.KindGate, Name: f.Rule, Start: g.now(), Finding: &f}
	at := g.now().UTC()
	if f.Step < 0 {
		f.Step = rec.Add(gs) // a finding about the run names its own gate step
	} else {
		rec.Add(gs)
	}
	g.report(ctx, rec, f, at)
	g.observed(ctx, rec, gs, []trace.Finding{f}, at)
	return f
}

// gateStep is a gate step and its finding in one allocation.
type gateStep struct {
	trace.Step
	finding trace.Finding
}

// report hands f to the reporter, which logs it and appends it to the
// ledger off the step.
func (g *Guard) report(ctx context.Context, rec *trace.Recorder, f trace.Finding, at time.Time) {
	if obs := g.cfg.Observe.Metrics; obs != nil {
		obs.Finding(f.Rule, f.Verdict, f.Shadow)
	}
	if g.cfg.Observe.Ledger == nil && g.cfg.Observe.Logger == nil {
		return
	}
	g.reports.send(ctx, report{v: trace.Violation{Time: at, TraceID: rec.ID(), SessionID: rec.SessionID(), Finding: f}})
}

// feedback marks what the guard tells the model, so that the memory card
// and the guard itself tell it from the user's words.
const feedback = "[agentguard] "

// replies returns the guard's replies in the language of the latest user
// turn of rec's trace.
func (g *Guard) replies(rec *trace.Recorder) lexicon.Replies {
	var lang lexicon.Lang
	rec.View(func(t *trace.Trace) {
		if n := len(t.UserTurns); n > 0 {
			lang = g.words.LangOf(t.UserTurns[n-1])
		} else {
			lang = g.words.LangOf("")
		}
	})
	return g.words.Replies(lang)
}

// observation is the tool result the agent sees for a call that did not
// run, in the replies' language.
func (g *Guard) observation(r lexicon.Replies, f trace.Finding) string {
	switch f.Verdict {
	case trace.Retry:
		return feedback + fmt.Sprintf(r.NotExecutedRetry, f.Message)
	case trace.Clarify:
		return feedback + r.NotExecutedClarify
	case trace.Refuse:
		return feedback + r.NotExecutedRefuse
	case trace.Handoff:
		return feedback + r.NotExecutedHandoff
	default:
		return feedback + fmt.Sprintf(r.Blocked, f.Rule, f.Message)
	}
}

// answer is what the user is told when a verdict ends a run, in the
// replies' language unless Config.Answers sets the text.
func (g *Guard) answer(r lexicon.Replies, f trace.Finding) string {
	switch f.Verdict {
	case trace.Clarify:
		if f.Question != "" {
			return f.Question
		}
		return r.Clarify
	case trace.Handoff:
		return g.handoff(r)
	default:
		if t := g.cfg.Answers.RefusalTemplate; t != "" {
			return t
		}
		return r.Refusal
	}
}

// handoff is the handoff message: Config.Answers' or the replies'.
func (g *Guard) handoff(r lexicon.Replies) string {
	if m := g.cfg.Answers.HandoffMessage; m != "" {
		return m
	}
	return r.Handoff
}

// terminal reports whether v ends the run for now.
func terminal(v trace.Verdict) bool {
	return v == trace.Clarify || v == trace.Refuse || v == trace.Handoff
}

// toolScope reports whether a rule may say something about a call of the
// tool named name, whose policy is p, judged by these alone: a rule that
// never can is left out of the tool's plan (see toolPlan).
type toolScope func(name string, t rulekit.Tool) bool

// scopedRule is a built-in rule and the steps it may judge: the tool calls
// of tools (nil: any), and other steps unless toolOnly.
type scopedRule struct {
	Rule
	tools    toolScope
	toolOnly bool
}

// noTool is the scope of a rule that judges no tool call.
func noTool(string, rulekit.Tool) bool { return false }

// when is the scope of a rule that judges every tool call when on, none
// otherwise.
func when(on bool) toolScope {
	if on {
		return nil
	}
	return noTool
}

// hotRule is a rule that reads the trace's hot state (rulekit.HotRule).
type hotRule = rulekit.HotRule

// hotRules returns, for each of rules, the rule as a hotRule, or nil.
func hotRules(rules []Rule) []hotRule {
	out := make([]hotRule, len(rules))
	for i, r := range rules {
		out[i], _ = r.(hotRule)
	}
	return out
}
