package guard

import (
	"github.com/agentguard/agentguard/guard/internal/calls"
	"github.com/agentguard/agentguard/guard/internal/rulekit"
	"github.com/agentguard/agentguard/trace"
)

// Rule judges one proposed step against the trace so far. It is a pure
// function: the same trace and step always give the same findings, so a rule
// runs online (in the wrappers and Run, before the step takes effect) and
// offline (Evaluate, over a recorded trace) alike.
//
// Online, a tool step is judged before the tool runs (Result is empty) and a
// model step after the model answered (Result holds the answer text, Calls
// the proposed tool calls). t holds every step recorded before s, gate steps
// included. Check returns nil when it has nothing to say, or a new slice
// that the caller then owns (the guard sets each finding's Step and Shadow
// in place); it must not modify t or s, and must be safe for concurrent use.
//
// Name is the rule's name: what Config.Disable, policy files and the
// offline evaluators call it by. It is usually also the Rule of its
// findings, but a rule may file findings under other names (the memory
// card's rule files memory.RuleProhibition and others).
type Rule interface {
	Name() string
	Check(t *trace.Trace, s *trace.Step) []trace.Finding
}

// NewRule returns a Rule with the given name that calls check.
func NewRule(name string, check func(t *trace.Trace, s *trace.Step) []trace.Finding) Rule {
	return funcRule{name, check}
}

type funcRule struct {
	name  string
	check func(t *trace.Trace, s *trace.Step) []trace.Finding
}

func (r funcRule) Name() string                                        { return r.name }
func (r funcRule) Check(t *trace.Trace, s *trace.Step) []trace.Finding { return r.check(t, s) }

// boundArguments is the argument rule of a guard bound to one tool's plan:
// the tool's schema is looked up once, not on every call, and used while
// the guard's schemas are those it was looked up in (at).
type boundArguments struct {
	*calls.Arguments
	g     *Guard
	name  string
	at    *map[string]calls.Compiled
	c     calls.Compiled
	known bool
}

// bindArguments binds r, the guard's own argument rule, to the plan of
// the tool named name.
func (g *Guard) bindArguments(r *calls.Arguments, name string) *boundArguments {
	b := &boundArguments{Arguments: r, g: g, name: name, at: g.schemas.Load()}
	if b.at != nil {
		b.c, b.known = (*b.at)[name]
	}
	return b
}

func (b *boundArguments) CheckHot(t *trace.Trace, s *trace.Step, _ *rulekit.Hot) []trace.Finding {
	if s.Kind != trace.KindTool {
		return nil
	}
	if s.Name != b.name || b.at != b.g.schemas.Load() {
		return b.Arguments.Check(t, s)
	}
	return b.CheckWith(t, s, b.c, b.known)
}
