package authz

import (
	"fmt"

	"github.com/agentguard/agentguard/guard/internal/rulekit"
	"github.com/agentguard/agentguard/guard/rules"
	"github.com/agentguard/agentguard/trace"
)

// NewConfirmation returns the rule that requires the user's explicit
// go-ahead before a state-changing call of a tool whose policy sets
// Confirm (or of every state-changing tool, when all is true): the user's
// latest turn must be an affirmation ("yes", "go ahead", "确认", "好的";
// the lexicon's Affirmation patterns) that answers something the agent
// said after the user's previous turn. Otherwise the verdict is Clarify,
// asking the user, in the language of their turn, to confirm that exact
// call.
func NewConfirmation(tools *rulekit.Tools, all bool) *Confirmation {
	return &Confirmation{tools: tools, all: all}
}

// Confirmation is the confirmation rule.
type Confirmation struct {
	tools *rulekit.Tools
	all   bool
}

// Name returns rules.Confirmation.
func (r *Confirmation) Name() string { return rules.Confirmation }

// ToolOnly is true: the rule judges tool calls.
func (r *Confirmation) ToolOnly() bool { return true }

// JudgesTool reports whether a call of the tool needs the user's yes.
func (r *Confirmation) JudgesTool(_ string, t rulekit.Tool) bool {
	return (t.Confirm || r.all) && t.Writes
}

// Check judges a tool call.
func (r *Confirmation) Check(t *trace.Trace, s *trace.Step) []trace.Finding {
	w, all := r.tools.Words(), r.all
	{
		if s.Kind != trace.KindTool {
			return nil
		}
		if !r.JudgesTool(s.Name, r.tools.Of(s.Name)) {
			return nil
		}
		turn := rulekit.UserTurn(t, s.Turn)
		if s.Turn >= 1 && w.Affirmation.MatchString(turn) && rulekit.AgentSpokeIn(t, s.Turn-1) {
			return nil
		}
		lang := w.LangOf(turn)
		r := w.Replies(lang)
		tool, _ := rulekit.DisplayName(w, r, lang, s.Name)
		q := fmt.Sprintf(r.Confirm, tool, rulekit.CompactArgs(w, r, lang, s.Args))
		return []trace.Finding{{
			Rule: rules.Confirmation, Step: s.Index, Verdict: trace.Clarify, Dimension: trace.Accuracy, Severity: trace.SeverityWarning,
			Message: fmt.Sprintf("%q changes state and the user has not confirmed it", s.Name), Question: q,
			Evidence: s.Args, Tags: []string{"unconfirmed-write"},
			Facts: confirmFacts(t, s, all),
		}}
	}
}

// confirmFacts are what a confirmation finding rests on: the call, the
// setting that asks for a yes (every write's, when all), and the user's
// latest turn, which gives none.
func confirmFacts(t *trace.Trace, s *trace.Step, all bool) []trace.Fact {
	setting := rulekit.PolicyFact("tools."+s.Name+".confirm", "true")
	if all {
		setting = rulekit.PolicyFact("gates.confirm_writes", "true")
	}
	says := "no yes to something the agent said"
	if s.Turn < 1 || !rulekit.AgentSpokeIn(t, s.Turn-1) {
		says = "the agent proposed nothing the user could say yes to"
	}
	return []trace.Fact{rulekit.CallFact(s, "changes state"), setting, rulekit.UserFact(t, s.Turn, says)}
}
