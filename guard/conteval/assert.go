package conteval

import (
	"fmt"
	"maps"
	"slices"
	"strings"

	"github.com/agentguard/agentguard/guard"
	"github.com/agentguard/agentguard/guard/internal/calls"
	"github.com/agentguard/agentguard/guard/internal/detect"
	"github.com/agentguard/agentguard/guard/internal/gates"
	"github.com/agentguard/agentguard/guard/internal/rulekit"
	"github.com/agentguard/agentguard/trace"
)

// Assertion is a property every sampled trace should have: not a literal
// answer, but something that holds of any good run ("the answer parses as
// JSON", "every citation was retrieved"). Check must be a pure function of
// the trace, must not modify it, and must be safe for concurrent use.
type Assertion interface {
	// Name names the assertion in reports; the ledger files its failures
	// under the rule "ce_" + Name.
	Name() string
	// Check judges one trace.
	Check(t *trace.Trace) Outcome
}

// Assert returns an assertion named name that calls check.
func Assert(name string, check func(t *trace.Trace) Outcome) Assertion {
	return funcAssertion{name, check}
}

type funcAssertion struct {
	name  string
	check func(t *trace.Trace) Outcome
}

func (f funcAssertion) Name() string                 { return f.name }
func (f funcAssertion) Check(t *trace.Trace) Outcome { return f.check(t) }

// AssertionStatus is what an assertion made of a trace.
type AssertionStatus string

// Statuses. The zero Status is a pass.
const (
	Pass AssertionStatus = "pass" // the property holds
	Fail AssertionStatus = "fail" // it does not
	Skip AssertionStatus = "skip" // it does not apply to this trace (no JSON route, no citation, ...)
)

// Outcome is an assertion's judgement of one trace. The zero Outcome is a
// pass.
type Outcome struct {
	Status AssertionStatus `json:"status,omitempty"`
	// Finding describes a failure: the step it is about, a message, the
	// evidence, and the verdict, dimension, severity and root-cause tags
	// the ledger files it under. Its Rule is set to "ce_" + the assertion's
	// name by the evaluator.
	Finding trace.Finding `json:"finding,omitzero"`
}

// Passed returns a passing outcome.
func Passed() Outcome { return Outcome{Status: Pass} }

// Skipped returns the outcome of an assertion that does not apply.
func Skipped() Outcome { return Outcome{Status: Skip} }

// Failed returns a failing outcome about step (-1 for the trace as a
// whole), with a message formatted as by fmt.Sprintf. Its finding has
// verdict Block (the step should not have taken effect), dimension
// Accuracy and severity Error; set the fields of Finding to say otherwise.
func Failed(step int, format string, args ...any) Outcome {
	return Outcome{Status: Fail, Finding: trace.Finding{
		Step: step, Verdict: trace.Block, Dimension: trace.Accuracy, Severity: trace.SeverityError,
		Message: fmt.Sprintf(format, args...),
	}}
}

// failedWith turns a guard finding into a failing outcome.
func failedWith(f trace.Finding) Outcome {
	f.Shadow = false
	return Outcome{Status: Fail, Finding: f}
}

// status returns o's status, the zero one being Pass.
func (o Outcome) status() AssertionStatus {
	if o.Status == "" {
		return Pass
	}
	return o.Status
}

// Names of the built-in assertions.
const (
	NameJSONAnswer             = "json-answer"
	NameNonNegativeAmounts     = "non-negative-amounts"
	NameCitationsRetrieved     = "citations-retrieved"
	NameAllowedTools           = "allow-list"
	NameRefusalWithoutEvidence = "refusal-without-evidence"
)

// DefaultNames returns the names of the built-in assertions, in the order
// Defaults returns them.
func DefaultNames() []string {
	return []string{NameJSONAnswer, NameNonNegativeAmounts, NameCitationsRetrieved, NameAllowedTools, NameRefusalWithoutEvidence}
}

// Defaults returns the built-in assertions configured by c, less those
// c.Disable names, then the guard rules c.GuardRules names, each through
// FromRule:
//
//	json-answer               JSONAnswer(c.JSONRoutes...)
//	non-negative-amounts      NonNegativeAmounts(c.JSONRoutes...)
//	citations-retrieved       CitationsRetrieved(c.Tools())
//	allow-list                AllowedTools(c.AllowedTools...)
//	refusal-without-evidence  RefusalWithoutEvidence(c.Tools(), c.MinSimilarity, c.RouteSimilarity, c.RefusalTexts...)
func Defaults(c AssertionConfig) []Assertion {
	all := []Assertion{
		JSONAnswer(c.JSONRoutes...),
		NonNegativeAmounts(c.JSONRoutes...),
		CitationsRetrieved(c.Tools()),
		AllowedTools(c.AllowedTools...),
		RefusalWithoutEvidence(c.Tools(), c.MinSimilarity, c.RouteSimilarity, c.RefusalTexts...),
	}
	all = slices.DeleteFunc(all, func(a Assertion) bool { return slices.Contains(c.Disable, a.Name()) })
	for _, name := range c.GuardRules {
		if r := c.guardRule(name); r != nil {
			all = append(all, FromRule(name, r))
		}
	}
	return all
}

// effects says, for each step of a trace, what became of it: the built-in
// assertions judge outcomes, not attempts (see the package documentation).
type effects struct {
	stopped []bool // a non-shadow gate finding other than Allow judged the step
}

func effectsOf(t *trace.Trace) effects {
	e := effects{stopped: make([]bool, len(t.Steps))}
	for _, s := range t.Steps {
		if f := s.Finding; s.Kind == trace.KindGate && f != nil && !f.Shadow && f.Verdict != trace.Allow && f.Verdict != "" &&
			f.Step >= 0 && f.Step < len(e.stopped) {
			e.stopped[f.Step] = true
		}
	}
	return e
}

// isAnswer reports whether s is a model step that answered the user in
// text: no tool calls, not an intent classification, no error.
func isAnswer(s *trace.Step) bool {
	return s.Kind == trace.KindModel && s.Intent == "" && len(s.Calls) == 0 && strings.TrimSpace(s.Result) != "" && s.Error == ""
}

// delivered reports whether s is an answer of the agent's that reached the
// user: not the guard's replacement (a blocked model step) and not stopped.
func (e effects) delivered(s *trace.Step) bool {
	return isAnswer(s) && !s.Blocked && !e.stopped[s.Index]
}

// executed reports whether s is a tool call that ran.
func (e effects) executed(s *trace.Step) bool {
	return s.Kind == trace.KindTool && !s.Blocked
}

// tookEffect reports whether a model or tool step took effect.
func (e effects) tookEffect(s *trace.Step) bool {
	switch s.Kind {
	case trace.KindTool:
		return !s.Blocked
	case trace.KindModel:
		return !s.Blocked && !e.stopped[s.Index]
	}
	return false
}

// firstFinding returns the first finding of r on step i of t (judged
// against the steps before it) that keep accepts.
func firstFinding(r guard.Rule, t *trace.Trace, i int, keep func(trace.Finding) bool) (trace.Finding, bool) {
	for _, f := range r.Check(t.Prefix(i), t.Steps[i]) {
		if f.Verdict != trace.Allow && keep(f) {
			f.Step = i
			return f, true
		}
	}
	return trace.Finding{}, false
}

func hasTag(tag string) func(trace.Finding) bool {
	return func(f trace.Finding) bool { return slices.Contains(f.Tags, tag) }
}

func anyFinding(trace.Finding) bool { return true }

// JSONAnswer asserts that every answer the user got on one of routes
// parses as JSON (a Markdown code fence around it is allowed). It is
// the value-invariant rule's JSON check, applied to delivered answers only: the
// guard's own replacement texts and intent steps are not answers. It is
// skipped on other routes and on traces without a delivered answer.
func JSONAnswer(routes ...string) Assertion {
	routes = slices.Clone(routes)
	rule := gates.NewInvariants(detect.Default(), routes, nil, false)
	return Assert(NameJSONAnswer, func(t *trace.Trace) Outcome {
		if !slices.Contains(routes, t.Route) {
			return Skipped()
		}
		t = t.Prefix(t.Len()) // a view whose memo the prefixes judged below share
		e := effectsOf(t)
		out := Skipped()
		for i, s := range t.Steps {
			if !e.delivered(s) {
				continue
			}
			if f, bad := firstFinding(rule, t, i, hasTag("bad-json-answer")); bad {
				return failedWith(f)
			}
			out = Passed()
		}
		return out
	})
}

// NonNegativeAmounts asserts that no amount is negative: no number in a
// field named like an amount, price, fee, total, quantity or balance
// (the value-invariant rule's default) in the arguments of a tool call that ran, or
// in a delivered JSON answer on one of jsonRoutes. It is skipped on traces
// without such a field.
func NonNegativeAmounts(jsonRoutes ...string) Assertion {
	nonNegative := gates.NonNegativeAmounts(detect.Default())
	jsonRoutes = slices.Clone(jsonRoutes)
	return Assert(NameNonNegativeAmounts, func(t *trace.Trace) Outcome {
		seen := false
		// gates.NonNegativeAmounts rejects a negative number exactly when
		// the field is an amount: probing with -1 tells whether it is one.
		rule := gates.NewInvariants(detect.Default(), jsonRoutes, []gates.Invariant{func(tool, path string, v any) error {
			if _, num := v.(float64); num && nonNegative(tool, path, -1.0) != nil {
				seen = true
			}
			return nonNegative(tool, path, v)
		}}, false)
		t = t.Prefix(t.Len()) // a view whose memo the prefixes judged below share
		e := effectsOf(t)
		for i, s := range t.Steps {
			if !e.executed(s) && !e.delivered(s) {
				continue
			}
			if f, bad := firstFinding(rule, t, i, hasTag("invalid-value")); bad {
				return failedWith(f)
			}
		}
		if !seen {
			return Skipped()
		}
		return Passed()
	})
}

// CitationsRetrieved asserts that every source a delivered answer cites
// (Step.Citations, or bracketed ids in the text) is the id of a document
// some retrieval earlier in the trace returned — the citation half of the
// grounding rule. tools marks the tools whose results are
// documents (ToolPolicy.Retrieval); retrieval steps, and tool steps the
// recorder gave document ids (Step.DocIDs), always count. It is skipped on
// traces whose answers cite nothing.
func CitationsRetrieved(tools map[string]guard.ToolPolicy) Assertion {
	rule := gates.NewGrounding(retrievalTools(tools))
	return Assert(NameCitationsRetrieved, func(t *trace.Trace) Outcome {
		rule := rule
		if more, ok := withDocTools(tools, t); ok {
			rule = gates.NewGrounding(retrievalTools(more))
		}
		t = t.Prefix(t.Len()) // a view whose memo the prefixes judged below share
		e := effectsOf(t)
		out := Skipped()
		for i, s := range t.Steps {
			if !e.delivered(s) || len(gates.Citations(s)) == 0 {
				continue
			}
			if f, bad := firstFinding(rule, t, i, hasTag("bad-citation")); bad {
				return failedWith(f)
			}
			out = Passed()
		}
		return out
	})
}

// AllowedTools asserts that every tool call that ran was to a tool in
// allowed (the tool-allow-list rule); with no names, to a tool the agent was offered
// (Trace.Tools). It is skipped on traces where no tool ran.
func AllowedTools(allowed ...string) Assertion {
	rule := calls.NewAllowList(slices.Clone(allowed)...)
	return Assert(NameAllowedTools, func(t *trace.Trace) Outcome {
		t = t.Prefix(t.Len()) // a view whose memo the prefixes judged below share
		e := effectsOf(t)
		out := Skipped()
		for i, s := range t.Steps {
			if !e.executed(s) {
				continue
			}
			if f, bad := firstFinding(rule, t, i, anyFinding); bad {
				return failedWith(f)
			}
			out = Passed()
		}
		return out
	})
}

// RefusalWithoutEvidence asserts that when the evidence was too weak to
// answer from — the last retrieval of the turn returned no document, or its
// best score is below the route's threshold, as the retrieval-similarity
// rule decides with min and byRoute — the user got a refusal, not an answer: every
// delivered answer in that situation is marked Step.Refusal or is one of
// refusals (default the guard's refusal and handoff message in every
// language of the default lexicon, English first). An
// answer the guard stopped or replaced counts as refused. tools marks the
// tools whose results are documents: a retrieval that returned nothing
// carries no document ids, so only the policy can tell that it was one.
// It is skipped on traces where the evidence was never too weak.
func RefusalWithoutEvidence(tools map[string]guard.ToolPolicy, min float64, byRoute map[string]float64, refusals ...string) Assertion {
	rule := gates.NewSimilarity(retrievalTools(tools), min, byRoute)
	if len(refusals) == 0 {
		refusals = defaultRefusals()
	}
	refusals = slices.Clone(refusals)
	return Assert(NameRefusalWithoutEvidence, func(t *trace.Trace) Outcome {
		rule := rule
		if more, ok := withDocTools(tools, t); ok {
			rule = gates.NewSimilarity(retrievalTools(more), min, byRoute)
		}
		t = t.Prefix(t.Len()) // a view whose memo the prefixes judged below share
		e := effectsOf(t)
		out := Skipped()
		for i, s := range t.Steps {
			if !isAnswer(s) {
				continue
			}
			f, weak := firstFinding(rule, t, i, anyFinding)
			if !weak {
				continue
			}
			out = Passed()
			if !e.delivered(s) || s.Refusal || slices.Contains(refusals, strings.TrimSpace(s.Result)) {
				continue
			}
			f.Message = "answered although " + f.Message
			f.Verdict, f.Severity = trace.Refuse, trace.SeverityError
			f.Tags = append(slices.Clip(f.Tags), "answered-without-evidence")
			return failedWith(f)
		}
		return out
	})
}

// retrievalTools returns the tools of tools that are retrievals, as the
// rules read them.
func retrievalTools(tools map[string]guard.ToolPolicy) *rulekit.Tools {
	listed := map[string]rulekit.Tool{}
	for name, p := range tools {
		if p.Retrieval {
			listed[name] = rulekit.Tool{Retrieval: true}
		}
	}
	return rulekit.NewTools(detect.Default(), listed)
}

// withDocTools returns tools plus every tool of t that has a step with
// document ids, marked Retrieval, and whether it added any.
func withDocTools(tools map[string]guard.ToolPolicy, t *trace.Trace) (map[string]guard.ToolPolicy, bool) {
	var out map[string]guard.ToolPolicy
	for _, s := range t.Steps {
		if s.Kind != trace.KindTool || len(s.DocIDs) == 0 || tools[s.Name].Retrieval || out[s.Name].Retrieval {
			continue
		}
		if out == nil {
			out = maps.Clone(tools)
			if out == nil {
				out = map[string]guard.ToolPolicy{}
			}
		}
		p := out[s.Name]
		p.Retrieval = true
		out[s.Name] = p
	}
	return out, out != nil
}

// FromRule turns a guard rule into an assertion named name: r judges every
// model and tool step that took effect against the steps before it, as
// Guard.Evaluate does, and the first finding whose verdict is not Allow
// fails the trace. It never skips.
func FromRule(name string, r guard.Rule) Assertion {
	return Assert(name, func(t *trace.Trace) Outcome {
		t = t.Prefix(t.Len()) // a view whose memo the prefixes judged below share
		e := effectsOf(t)
		for i, s := range t.Steps {
			if !e.tookEffect(s) {
				continue
			}
			if f, bad := firstFinding(r, t, i, anyFinding); bad {
				return failedWith(f)
			}
		}
		return Passed()
	})
}

// FromEvaluate turns an offline evaluation — Guard.Evaluate, or a
// configured guard's Evaluate method — into an assertion named name: the
// first finding of the report whose verdict is not Allow fails the trace.
// Unlike the other assertions it judges attempts: every step the agent
// proposed, including those a guard blocked at the time, so it measures
// the agent rather than what reached the user. It never skips.
func FromEvaluate(name string, evaluate func(t *trace.Trace) guard.Report) Assertion {
	return Assert(name, func(t *trace.Trace) Outcome {
		for _, f := range evaluate(t).Findings {
			if f.Verdict != trace.Allow {
				return failedWith(f)
			}
		}
		return Passed()
	})
}
