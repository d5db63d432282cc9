package guard

import (
	"encoding/json"
	"errors"
	"fmt"

	"github.com/agentguard/agentguard/guard/internal/jsonschema"
	"github.com/agentguard/agentguard/guard/internal/rulekit"
	"github.com/agentguard/agentguard/guard/rules"
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

// shared: a full slice, so an append copies

// ValidArguments checks a tool call's arguments against the tool's JSON
// schema: the arguments must be a JSON object, carry every required
// property, and match the declared types and enums (see Validate for the
// subset of JSON Schema understood). The schema is looked up in specs, then
// in Trace.Tools; a tool with no known schema is not checked. The verdict is
// Retry: the agent is told what to fix.
func ValidArguments(specs ...trace.ToolSpec) Rule {
	return validArguments{specs: specs}
}

type validArguments struct {
	specs  []trace.ToolSpec
	lookup func(name string) (compiledSchema, bool) // schemas a guard holds; may be nil
}

func (r validArguments) Name() string { return rules.Arguments }

func (r validArguments) Check(t *trace.Trace, s *trace.Step) []trace.Finding {
	if s.Kind != trace.KindTool {
		return nil
	}
	var c compiledSchema
	known := false
	if r.lookup != nil {
		c, known = r.lookup(s.Name)
	}
	return r.check(t, s, c, known)
}

// check is Check with the guard's schema of the tool, c, when known.
func (r validArguments) check(t *trace.Trace, s *trace.Step, c compiledSchema, known bool) []trace.Finding {
	node, err := c.node, c.err
	if !known {
		raw := findSpec(r.specs, s.Name)
		if raw == nil {
			raw = findSpec(t.Tools, s.Name)
		}
		if raw == nil {
			return nil
		}
		node, err = jsonschema.Compile(raw)
	}
	switch {
	case err != nil:
	case s.InvalidUTF8:
		err = errors.New("not valid JSON: the arguments are not valid UTF-8")
	case rulekit.ArgsCut(s):
		return nil // Evaluate keeps the decision recorded online on the whole arguments
	default:
		err = node.Validate(s.Args)
	}
	if err != nil {
		return []trace.Finding{{
			Rule: rules.Arguments, Step: s.Index, Verdict: trace.Retry, Dimension: trace.Accuracy, Severity: trace.SeverityError,
			Message:  fmt.Sprintf("arguments of %q: %v", s.Name, err),
			Evidence: s.Args, Tags: []string{"bad-arguments"},
		}}
	}
	return nil
}

// boundArguments is the argument rule of a guard bound to one tool's plan:
// the tool's schema is looked up once, not on every call, and used while
// the guard's schemas are those it was looked up in (at).
type boundArguments struct {
	validArguments
	g     *Guard
	name  string
	at    *map[string]compiledSchema
	c     compiledSchema
	known bool
}

// bindArguments binds r, the guard's own argument rule, to the plan of
// the tool named name.
func (g *Guard) bindArguments(r validArguments, name string) *boundArguments {
	b := &boundArguments{validArguments: r, g: g, name: name, at: g.schemas.Load()}
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
		return b.validArguments.Check(t, s)
	}
	return b.check(t, s, b.c, b.known)
}

func findSpec(specs []trace.ToolSpec, name string) json.RawMessage {
	for i := range specs {
		if specs[i].Name == name && len(specs[i].Parameters) > 0 {
			return specs[i].Parameters
		}
	}
	return nil
}
