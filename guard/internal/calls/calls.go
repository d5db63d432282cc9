package calls

import (
	"fmt"
	"slices"
	"strconv"
	"strings"

	"github.com/agentguard/agentguard/guard/internal/rulekit"
	"github.com/agentguard/agentguard/guard/rules"
	"github.com/agentguard/agentguard/trace"
)

// NewAllowList returns the rule that blocks calls of tools not named in
// allowed. With no names, the allow-list is the tools the agent was
// offered (Trace.Tools); when that is empty too, the rule stays silent.
func NewAllowList(allowed ...string) rulekit.ScopedFunc {
	return rulekit.ScopedFunc{Only: true, Func: rulekit.Func{N: rules.AllowList, C: func(t *trace.Trace, s *trace.Step) []trace.Finding {
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
		list := rulekit.PolicyFact("gates.allowed_tools", strings.Join(allowed, ", "))
		if len(allowed) == 0 {
			names := make([]string, len(t.Tools))
			for i, ts := range t.Tools {
				names[i] = ts.Name
			}
			list = rulekit.PolicyFact("the tools the agent was given", strings.Join(names, ", "))
		}
		return []trace.Finding{{
			Rule: rules.AllowList, Step: s.Index, Verdict: trace.Block, Dimension: trace.Accuracy, Severity: trace.SeverityError,
			Message:  fmt.Sprintf("tool %q is not on the allow-list", s.Name),
			Evidence: s.Name, Tags: []string{"unknown-tool"},
			Facts: []trace.Fact{rulekit.CallFact(s, "not on the list"), list},
		}}
	}}}
}

// NewLoopLimit returns the rule that blocks the n-th consecutive call of
// the same tool with the same arguments (compared ignoring white space
// outside strings). Other tools' calls in between break the run; gate
// steps do not. n below 2 disables the rule.
func NewLoopLimit(n int) rulekit.ScopedFunc {
	r := rulekit.ScopedFunc{Only: true, Func: rulekit.Func{N: rules.Loop}}
	if n < 2 {
		r.Tools = rulekit.NoTool
	}
	r.C = func(t *trace.Trace, s *trace.Step) []trace.Finding {
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
			Facts: []trace.Fact{rulekit.CallFact(s, fmt.Sprintf("call %d of the same in a row", same)), rulekit.PolicyFact("gates.loop_limit", strconv.Itoa(n))},
		}}
	}
	return r
}

var tagsLoop = []string{"loop"}[:1:1]

// NewMaxSteps returns the rule that hands the run to a human when the agent proposes more than n tool
// calls in one trace. n below 1 disables the rule.
func NewMaxSteps(n int) *MaxSteps { return &MaxSteps{n} }

// MaxSteps is the max-steps rule.
type MaxSteps struct{ n int }

// Name returns rules.MaxSteps.
func (*MaxSteps) Name() string { return rules.MaxSteps }

// ToolOnly is true: the rule counts tool calls.
func (r *MaxSteps) ToolOnly() bool { return true }

// JudgesTool reports whether the rule is on.
func (r *MaxSteps) JudgesTool(string, rulekit.Tool) bool { return r.n >= 1 }

// Index brings t's hot state, which counts the tool steps, up to date
// (rulekit.Indexer).
func (r *MaxSteps) Index(t *trace.Trace) { rulekit.HotOf(t) }

// Check judges a tool call.
func (r *MaxSteps) Check(t *trace.Trace, s *trace.Step) []trace.Finding {
	if s.Kind != trace.KindTool || r.n < 1 {
		return nil
	}
	return r.CheckHot(t, s, rulekit.HotOf(t))
}

// CheckHot is Check with t's hot state (rulekit.HotRule).
func (r *MaxSteps) CheckHot(t *trace.Trace, s *trace.Step, h *rulekit.Hot) []trace.Finding {
	if s.Kind != trace.KindTool || r.n < 1 {
		return nil
	}
	calls := 1 + len(t.Pending) + h.Tools.Of(t)
	if calls <= r.n {
		return nil
	}
	return []trace.Finding{{
		Rule: rules.MaxSteps, Step: s.Index, Verdict: trace.Handoff, Dimension: trace.Efficiency, Severity: trace.SeverityError,
		Message: fmt.Sprintf("tool call %d exceeds the limit of %d per run", calls, r.n),
		Tags:    []string{"step-budget"},
		Facts:   []trace.Fact{rulekit.CallFact(s, fmt.Sprintf("tool call %d of the run", calls)), rulekit.PolicyFact("gates.max_steps", strconv.Itoa(r.n))},
	}}
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
