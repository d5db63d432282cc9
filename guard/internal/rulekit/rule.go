package rulekit

import "github.com/agentguard/agentguard/trace"

// Func is a rule made of a name and a function: guard.NewRule's, and most
// built-in rules'.
type Func struct {
	N string
	C func(t *trace.Trace, s *trace.Step) []trace.Finding
}

// Name returns the rule's name.
func (r Func) Name() string { return r.N }

// Check calls the rule's function.
func (r Func) Check(t *trace.Trace, s *trace.Step) []trace.Finding { return r.C(t, s) }

// Scoped is implemented by a built-in rule that can say nothing about some
// steps: the guard leaves it out of the plan of a tool it cannot judge
// (see guard's toolPlan), and out of model steps when it judges tool
// calls only. A rule that does not implement it may judge any step.
type Scoped interface {
	// ToolOnly reports whether the rule judges tool calls only.
	ToolOnly() bool
	// JudgesTool reports whether the rule may say something about a call
	// of the tool named name, judged by the tool alone.
	JudgesTool(name string, t Tool) bool
}

// HotRule is a rule that reads the trace's hot state: the guard looks the
// state up once per step and calls CheckHot on every rule that reads it,
// instead of Check, which looks it up itself. Both give the same findings.
type HotRule interface {
	CheckHot(t *trace.Trace, s *trace.Step, h *Hot) []trace.Finding
}

// Indexer is a rule that reads an index of the trace it builds on first
// use: before steps are released from memory the guard calls Index, so
// that the index takes in the released steps even when the rule has not
// run yet in that session.
type Indexer interface {
	Index(t *trace.Trace)
}

// Namer is a rule that files findings under more names than its own: the
// guard's Disable names findings, and a rule all of whose names are
// disabled does not run.
type Namer interface {
	Names() []string
}

// NamesOf returns the names r files findings under.
func NamesOf(r interface{ Name() string }) []string {
	if n, ok := r.(Namer); ok {
		return n.Names()
	}
	return []string{r.Name()}
}

// ScopedFunc is a Func rule with a scope (Scoped).
type ScopedFunc struct {
	Func
	// Tools reports whether the rule may judge a call of a tool; nil
	// means every tool.
	Tools func(name string, t Tool) bool
	// Only says the rule judges tool calls only.
	Only bool
}

// ToolOnly reports whether the rule judges tool calls only.
func (r ScopedFunc) ToolOnly() bool { return r.Only }

// JudgesTool reports whether the rule may judge a call of the tool.
func (r ScopedFunc) JudgesTool(name string, t Tool) bool { return r.Tools == nil || r.Tools(name, t) }

// NoTool is the scope of a rule that judges no tool call.
func NoTool(string, Tool) bool { return false }

// Answers returns a rule that judges model steps only.
func Answers(name string, check func(t *trace.Trace, s *trace.Step) []trace.Finding) ScopedFunc {
	return ScopedFunc{Func: Func{name, check}, Tools: NoTool}
}
