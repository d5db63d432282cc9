package authz

import (
	"fmt"
	"slices"
	"strings"

	"github.com/agentguard/agentguard/guard/internal/rulekit"
	"github.com/agentguard/agentguard/guard/rules"
	"github.com/agentguard/agentguard/trace"
)

// NewConfirmation returns the rule that requires the user's explicit
// go-ahead before a state-changing call of a tool whose policy sets
// Confirm (or of every state-changing tool, when all is true). The user's
// latest turn confirms the call when the agent spoke after the user's
// previous turn and the latest turn
//
//   - is an affirmation ("yes", "go ahead", "确认", "好的"; the lexicon's
//     Affirmation patterns), or,
//   - unless yesOnly, asks for the call's action ("Please submit the
//     exchange", "请提交换货"; a request, not a question, as the
//     write-authorization rule reads requests) after the agent's words
//     named a value the call identifies its object by (the order, the item,
//     the reservation): the agent listed what it would do and the user
//     asked for it.
//
// Otherwise the verdict is Clarify, asking the user, in the language of
// their turn, to confirm that exact call.
func NewConfirmation(tools *rulekit.Tools, all, yesOnly bool) *Confirmation {
	return &Confirmation{tools: tools, all: all, yesOnly: yesOnly}
}

// Confirmation is the confirmation rule.
type Confirmation struct {
	tools   *rulekit.Tools
	all     bool
	yesOnly bool
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
		if Confirms(r.tools, t, s, r.yesOnly) {
			return nil
		}
		lang := w.LangOf(turn)
		rp := w.Replies(lang)
		tool, _ := rulekit.DisplayName(w, rp, lang, s.Name)
		q := fmt.Sprintf(rp.Confirm, tool, rulekit.CompactArgs(w, rp, lang, s.Args))
		return []trace.Finding{{
			Rule: rules.Confirmation, Step: s.Index, Verdict: trace.Clarify, Dimension: trace.Accuracy, Severity: trace.SeverityWarning,
			Message: fmt.Sprintf("%q changes state and the user has not confirmed it", s.Name), Question: q,
			Evidence: s.Args, Tags: []string{"unconfirmed-write"},
			Facts: confirmFacts(t, s, all, r.yesOnly),
		}}
	}
}

// confirmFacts are what a confirmation finding rests on: the call, the
// setting that asks for a yes (every write's, when all), and the user's
// latest turn, which gives none.
func confirmFacts(t *trace.Trace, s *trace.Step, all, yesOnly bool) []trace.Fact {
	setting := rulekit.PolicyFact("tools."+s.Name+".confirm", "true")
	if all {
		setting = rulekit.PolicyFact("gates.confirm_writes", "true")
	}
	says := "no yes to something the agent said, nor a request for it after the agent listed it"
	if yesOnly {
		says = "no yes to something the agent said"
	}
	if s.Turn < 1 || !rulekit.AgentSpokeIn(t, s.Turn-1) {
		says = "the agent proposed nothing the user could say yes to"
	}
	return []trace.Fact{rulekit.CallFact(s, "changes state"), setting, rulekit.UserFact(t, s.Turn, says)}
}

// Confirms reports whether the user's latest turn before the call s
// confirms it, as the confirmation rule reads a confirmation: after the
// agent spoke, a yes, or, unless yesOnly, a request for the call's action
// after the agent named what it acts on.
func Confirms(tools *rulekit.Tools, t *trace.Trace, s *trace.Step, yesOnly bool) bool {
	if s.Turn < 1 || !rulekit.AgentSpokeIn(t, s.Turn-1) {
		return false
	}
	if tools.Words().Affirmation.MatchString(rulekit.UserTurn(t, s.Turn)) {
		return true
	}
	return !yesOnly && requestedAfterListing(tools, t, s)
}

// requestedAfterListing reports whether the user's turn of s asks for the
// action of s's tool and the agent's last words before it named one of the
// values s identifies its object by.
func requestedAfterListing(tools *rulekit.Tools, t *trace.Trace, s *trace.Step) bool {
	said := rulekit.LastSaid(t, s.Turn-1)
	if said == "" {
		return false
	}
	w := tools.Words()
	listed := false
	text := rulekit.Alnum(said)
	for _, v := range rulekit.IdentifyingValues(w, s.Args) {
		if strings.Contains(text, v) {
			listed = true
			break
		}
	}
	if !listed {
		return false
	}
	ix := NewAuthorization(tools, false).indexOf(t) // the conversational rule's own index
	same, _ := ix.requests(ix.action(s.Name), s.Turn)
	return slices.ContainsFunc(same, func(a ask) bool { return a.turn == s.Turn && a.step < 0 && !a.yes })
}
