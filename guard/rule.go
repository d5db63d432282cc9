package guard

import (
	"encoding/json"
	"errors"
	"fmt"
	"slices"

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

// AllowList blocks tool calls to tools not named in allowed. With no names,
// the allow-list is the tools the agent was offered (Trace.Tools); when that
// is empty too, the rule stays silent.
func AllowList(allowed ...string) Rule {
	return NewRule(rules.AllowList, func(t *trace.Trace, s *trace.Step) []trace.Finding {
		if s.Kind != trace.KindTool {
			return nil
		}
		if len(allowed) > 0 {
			if slices.Contains(allowed, s.Name) {
				return nil
			}
		} else {
			if rulekit.Offered(t, s.Name) {
				return nil
			}
		}
		return []trace.Finding{{
			Rule: rules.AllowList, Step: s.Index, Verdict: trace.Block, Dimension: trace.Accuracy, Severity: trace.SeverityError,
			Message:  fmt.Sprintf("tool %q is not on the allow-list", s.Name),
			Evidence: s.Name, Tags: []string{"unknown-tool"},
		}}
	})
}

// LoopLimit blocks the n-th consecutive call of the same tool with the same
// arguments (compared ignoring white space outside strings). Other tools' calls in between break the run; gate steps do not.
// n below 2 disables the rule.
func LoopLimit(n int) Rule {
	return NewRule(rules.Loop, func(t *trace.Trace, s *trace.Step) []trace.Finding {
		if s.Kind != trace.KindTool || n < 2 {
			return nil
		}
		// Calls still running come last: they were proposed after every
		// recorded step.
		same := 1
		for i := len(t.Steps) + len(t.Pending) - 1; i >= 0 && same < n; i-- {
			var p *trace.Step
			if i >= len(t.Steps) {
				p = t.Pending[i-len(t.Steps)]
			} else {
				p = t.Steps[i]
			}
			if p.Kind != trace.KindTool {
				continue
			}
			if p.Name != s.Name || !sameArgs(p.Args, s.Args) {
				break
			}
			same++
		}
		if same < n {
			return nil
		}
		return []trace.Finding{{
			Rule: rules.Loop, Step: s.Index, Verdict: trace.Block, Dimension: trace.Efficiency, Severity: trace.SeverityWarning,
			Message:  fmt.Sprintf("tool %q called %d times in a row with the same arguments", s.Name, same),
			Evidence: s.Args, Tags: tagsLoop,
		}}
	})
}

var tagsLoop = []string{"loop"}[:1:1] // shared: a full slice, so an append copies

// MaxSteps hands the run to a human when the agent proposes more than n tool
// calls in one trace. n below 1 disables the rule.
func MaxSteps(n int) Rule { return &maxSteps{n} }

type maxSteps struct{ n int }

func (*maxSteps) Name() string { return rules.MaxSteps }

func (r *maxSteps) Check(t *trace.Trace, s *trace.Step) []trace.Finding {
	if s.Kind != trace.KindTool || r.n < 1 {
		return nil
	}
	return r.checkHot(t, s, hotOf(t))
}

func (r *maxSteps) checkHot(t *trace.Trace, s *trace.Step, h *hotState) []trace.Finding {
	if s.Kind != trace.KindTool || r.n < 1 {
		return nil
	}
	calls := 1 + len(t.Pending) + h.tools.of(t)
	if calls <= r.n {
		return nil
	}
	return []trace.Finding{{
		Rule: rules.MaxSteps, Step: s.Index, Verdict: trace.Handoff, Dimension: trace.Efficiency, Severity: trace.SeverityError,
		Message: fmt.Sprintf("tool call %d exceeds the limit of %d per run", calls, r.n),
		Tags:    []string{"step-budget"},
	}}
}

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
		node, err = compileSchema(raw)
	}
	switch {
	case err != nil:
	case s.InvalidUTF8:
		err = errors.New("not valid JSON: the arguments are not valid UTF-8")
	case rulekit.ArgsCut(s):
		return nil // Evaluate keeps the decision recorded online on the whole arguments
	default:
		err = node.validateArgs(s.Args)
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

func (b *boundArguments) checkHot(t *trace.Trace, s *trace.Step, _ *hotState) []trace.Finding {
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

// sameArgs compares two argument strings, ignoring white space outside
// JSON strings, without allocating: `{"a": 1}` and `{"a":1}` are the same
// call; key order counts.
func sameArgs(a, b string) bool {
	if a == b {
		return true
	}
	// Up to their first difference the two scan alike; when neither byte
	// there is white space, the scan below would stop there too.
	k := 0
	for k < len(a) && k < len(b) && a[k] == b[k] {
		k++
	}
	if k < len(a) && k < len(b) && !isSpace(a[k]) && !isSpace(b[k]) {
		return false
	}
	i, j := 0, 0
	inA, inB := false, false // inside a JSON string
	escA, escB := false, false
	for {
		for i < len(a) && !inA && isSpace(a[i]) {
			i++
		}
		for j < len(b) && !inB && isSpace(b[j]) {
			j++
		}
		if i == len(a) || j == len(b) {
			return i == len(a) && j == len(b)
		}
		if a[i] != b[j] {
			return false
		}
		inA, escA = stringState(a[i], inA, escA)
		inB, escB = stringState(b[j], inB, escB)
		i++
		j++
	}
}

func isSpace(c byte) bool { return c == ' ' || c == '\t' || c == '\n' || c == '\r' }

// stringState tracks whether a scan is inside a JSON string after byte c.
func stringState(c byte, in, esc bool) (bool, bool) {
	switch {
	case esc:
		return in, false
	case in && c == '\\':
		return in, true
	case c == '"':
		return !in, false
	}
	return in, false
}

// toolCount is the number of tool steps among a trace's first steps, kept
// in the trace's hot state so that counting them costs O(new steps) per
// call. It counts the steps released from memory too (trace.Releaser).
type toolCount struct{ steps, tools int }

// of returns how many of t's steps are tool steps, c being the count kept
// in t's hot state.
func (c *toolCount) of(t *trace.Trace) int {
	if c.steps > t.Len() { // a shorter prefix than the memo counted
		c = &toolCount{}
	}
	c.count(t)
	return c.tools
}

func (c *toolCount) count(t *trace.Trace) {
	c.steps = max(c.steps, t.Released) // a count begun after a release counts what is kept
	for ; c.steps < t.Len(); c.steps++ {
		if t.Step(c.steps).Kind == trace.KindTool {
			c.tools++
		}
	}
}

// RuleMemory names the memory card's enforcement in Config.Disable; its
// findings are memory.RuleProhibition, memory.RuleStaleAddress and
// memory.RuleTimeRange.
const RuleMemory = "memory"
