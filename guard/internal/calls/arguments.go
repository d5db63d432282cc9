package calls

import (
	"encoding/json"
	"errors"
	"fmt"
	"strings"

	"github.com/agentguard/agentguard/guard/internal/rulekit"
	"github.com/agentguard/agentguard/guard/internal/schema"
	"github.com/agentguard/agentguard/guard/rules"
	"github.com/agentguard/agentguard/trace"
	"github.com/agentguard/agentguard/trace/lexicon"
)

// Compiled is a tool's argument schema as a guard keeps it: compiled, or
// why it does not compile (reported on every call).
type Compiled struct {
	Schema *schema.Schema
	Err    error
}

// NewArguments returns the rule that checks a tool call's arguments
// against the tool's JSON schema: the arguments must be a JSON object,
// carry every required property, and match the declared types and enums
// (package schema says which keywords). The schema is the one lookup gives
// for the tool (the guard's, from its wrapped tools and policies), else the
// one the trace offered (Trace.Tools); a tool with no schema is not
// checked against a schema. The verdict is Retry: the agent is told what
// to fix.
//
// A send with no schema — a tool sends reports true for, such as
// send_email — still needs a recipient (seed 003: "recipient required on
// sends"): arguments that are all content, dates or amounts by the
// lexicon's Keys ({"subject": …, "body": …}) are a warning, since a
// notification to the user themselves needs none.
func NewArguments(lookup func(name string) (Compiled, bool), w *lexicon.Compiled, sends func(t *trace.Trace, name string) bool) *Arguments {
	return &Arguments{lookup: lookup, words: w, sends: sends}
}

// Arguments is the tool-arguments rule.
type Arguments struct {
	lookup  func(name string) (Compiled, bool)
	words   *lexicon.Compiled
	sends   func(t *trace.Trace, name string) bool
	offered schema.Cache // schemas a trace offered, compiled once per rule
}

// Name returns rules.Arguments.
func (r *Arguments) Name() string { return rules.Arguments }

// ToolOnly is true: the rule judges tool calls.
func (r *Arguments) ToolOnly() bool { return true }

// JudgesTool is true: any tool may have a schema.
func (r *Arguments) JudgesTool(string, rulekit.Tool) bool { return true }

// Check judges a tool call's arguments.
func (r *Arguments) Check(t *trace.Trace, s *trace.Step) []trace.Finding {
	if s.Kind != trace.KindTool {
		return nil
	}
	c, known := r.lookup(s.Name)
	return r.CheckWith(t, s, c, known)
}

// CheckWith is Check with the schema lookup gives the tool, c, when known:
// for a caller that looked it up once for many calls.
func (r *Arguments) CheckWith(t *trace.Trace, s *trace.Step, c Compiled, known bool) []trace.Finding {
	if s.Kind != trace.KindTool {
		return nil
	}
	sch, err := c.Schema, c.Err
	if !known {
		raw := offeredSchema(t.Tools, s.Name)
		if raw == nil {
			return r.recipient(t, s)
		}
		sch, err = r.offered.Compile(raw)
	}
	switch {
	case err != nil:
	case s.InvalidUTF8:
		err = errors.New("not valid JSON: the arguments are not valid UTF-8")
	case rulekit.ArgsCut(s):
		return nil // Evaluate keeps the decision recorded online on the whole arguments
	default:
		err = sch.Validate(s.Args)
	}
	if err != nil {
		return []trace.Finding{{
			Rule: rules.Arguments, Step: s.Index, Verdict: trace.Retry, Dimension: trace.Accuracy, Severity: trace.SeverityError,
			Message:  fmt.Sprintf("arguments of %q: %v", s.Name, err),
			Evidence: s.Args, Tags: []string{"bad-arguments"},
			Facts: []trace.Fact{rulekit.CallFact(s, "against the tool's schema: "+err.Error())},
		}}
	}
	return nil
}

// offeredSchema returns the parameters of the tool named name among specs,
// or nil.
func offeredSchema(specs []trace.ToolSpec, name string) json.RawMessage {
	for i := range specs {
		if specs[i].Name == name && len(specs[i].Parameters) > 0 {
			return specs[i].Parameters
		}
	}
	return nil
}

// recipient judges a send the guard has no schema for: a warning when
// none of its arguments can name whom it goes to.
func (r *Arguments) recipient(t *trace.Trace, s *trace.Step) []trace.Finding {
	if r.sends == nil || s.InvalidUTF8 || rulekit.ArgsCut(s) || !r.sends(t, s.Name) {
		return nil
	}
	var args map[string]json.RawMessage
	if json.Unmarshal([]byte(s.Args), &args) != nil {
		return nil // not an object: with no schema, nothing says what it should be
	}
	const notWhom = rulekit.KeyContent | rulekit.KeyDate | rulekit.KeyAmount
	for k, v := range args {
		if rulekit.KindOfKey(r.words, strings.ToLower(k))&notWhom == 0 && !emptyJSON(v) {
			return nil // "to", "channel", "user": it may name whom
		}
	}
	return []trace.Finding{{
		Rule: rules.Arguments, Step: s.Index, Verdict: trace.Allow, Dimension: trace.Accuracy, Severity: trace.SeverityWarning,
		Message:  fmt.Sprintf("%q sends a message and none of its arguments names a recipient", s.Name),
		Evidence: s.Args, Tags: []string{"bad-arguments", "no-recipient"},
		Facts: []trace.Fact{rulekit.CallFact(s, "a send whose arguments are all content, dates or amounts")},
	}}
}

// emptyJSON reports whether v is null, "", [] or {}.
func emptyJSON(v json.RawMessage) bool {
	switch strings.TrimSpace(string(v)) {
	case "null", `""`, "[]", "{}":
		return true
	}
	return false
}
