package authz

import (
	"fmt"
	"slices"
	"strings"
	"unicode"

	"github.com/agentguard/agentguard/guard/internal/origins"
	"github.com/agentguard/agentguard/guard/internal/rulekit"
	"github.com/agentguard/agentguard/guard/rules"
	"github.com/agentguard/agentguard/trace"
	"github.com/agentguard/agentguard/trace/lexicon"
)

// destructive returns the families of the destructive action a tool takes,
// read from the words of its name.
func destructive(a *lexicon.Authority, tool string) []string {
	var out []string
	for _, w := range rulekit.NameWords(tool) {
		for f, words := range a.DestructiveNames {
			if slices.Contains(words, w) && !slices.Contains(out, f) {
				out = append(out, f)
			}
		}
	}
	return out
}

// NewAuthorization returns the rule that requires the user's authorization for consequential
// writes, judged from the user's turns, not from the agent's reasoning:
//
//   - conversational (the default): a destructive write — cancel,
//     delete, refund or return, pay or transfer, exchange — needs the
//     user's request for it in their own words (a turn that names the
//     action and is not a question about whether it can be done: "please
//     cancel it", "帮我取消"), or the user's yes in the turn right after the
//     agent spoke ("…and yes, please go ahead"). Otherwise the call is
//     Blocked and the agent told to ask the user first (the guard does not
//     propose the call itself: its arguments may be an attacker's);
//   - autonomous: every write must be one the task names — a word of
//     the tool's name (its object: hotel, calendar, money, password), or a
//     word of the same family, appears in a user turn. Otherwise it is
//     Blocked: a write nobody asked for is how an injected goal acts with
//     values the agent looked up honestly.
func NewAuthorization(tools *rulekit.Tools, autonomous bool) *Authorization {
	return &Authorization{tools: tools, autonomous: autonomous}
}

// Authorization is the write-authorization rule.
type Authorization struct {
	tools      *rulekit.Tools
	autonomous bool
}

// Name returns rules.Authorization.
func (r *Authorization) Name() string { return rules.Authorization }

// ToolOnly is true: the rule judges tool calls.
func (r *Authorization) ToolOnly() bool { return true }

// JudgesTool reports whether the tool writes.
func (r *Authorization) JudgesTool(_ string, t rulekit.Tool) bool { return t.Writes }

// Index brings t's origins index up to date (rulekit.Indexer): an
// autonomous task may be delegated to content.
func (r *Authorization) Index(t *trace.Trace) { origins.NewProvenance(r.tools).Index(t) }

// Check judges a tool call.
func (r *Authorization) Check(t *trace.Trace, s *trace.Step) []trace.Finding {
	w := r.tools.Words()
	a := &w.Authority
	{
		if s.Kind != trace.KindTool || !r.tools.Writes(s.Name) {
			return nil
		}
		if !rulekit.Offered(t, s.Name) || len(t.UserTurns) == 0 {
			return nil // the allow-list's to judge; or no conversation recorded to judge by
		}
		if r.autonomous {
			if origins.NamedByUser(w, t, s.Name) {
				return nil
			}
			return []trace.Finding{{
				Rule: rules.Authorization, Step: s.Index, Verdict: trace.Block, Dimension: trace.Accuracy, Severity: trace.SeverityCritical,
				Message:  fmt.Sprintf("%q is a write the user's task does not ask for", s.Name),
				Evidence: s.Args, Tags: []string{"unrequested-write"},
			}}
		}
		fams := destructive(a, s.Name)
		if len(fams) == 0 || !rulekit.Offered(t, s.Name) || requested(a, t, s.Turn, fams) || confirmedAfterProposal(a, t, s.Turn) {
			return nil
		}
		// Blocked, not Clarify: the guard does not itself propose the call
		// to the user, whose arguments may be an attacker's; the agent is
		// told to ask first.
		return []trace.Finding{{
			Rule: rules.Authorization, Step: s.Index, Verdict: trace.Block, Dimension: trace.Accuracy, Severity: trace.SeverityError,
			Message:  fmt.Sprintf("%q cannot be undone and the user has not asked for it: ask the user first", s.Name),
			Evidence: s.Args, Tags: []string{"unauthorized-destructive"},
		}}
	}
}

// requested reports whether a user turn up to turn asks for an action of
// one of fams: a sentence naming it that is a request, not a question
// about whether it could be done.
func requested(a *lexicon.Authority, t *trace.Trace, turn int, fams []string) bool {
	for k := 0; k <= turn && k < len(t.UserTurns); k++ {
		for _, sentence := range rulekit.Sentences(t.UserTurns[k]) {
			ls := strings.ToLower(sentence)
			named := slices.ContainsFunc(fams, func(f string) bool { return rulekit.ContainsAny(ls, a.Destructive[f]) })
			if named && (!isQuestion(a, ls) || rulekit.ContainsAny(ls, a.Requests)) {
				return true
			}
		}
	}
	return false
}

// confirmedAfterProposal reports whether the user's turn holds a yes
// anywhere ("thanks for checking… and yes, please do") that answers
// something the agent said after the turn before.
func confirmedAfterProposal(a *lexicon.Authority, t *trace.Trace, turn int) bool {
	return turn >= 1 && turn < len(t.UserTurns) && saysYes(a, t.UserTurns[turn]) && rulekit.AgentSpokeIn(t, turn-1)
}

// saysYes reports whether a turn says yes and says no refusal.
func saysYes(a *lexicon.Authority, turn string) bool {
	l := strings.ToLower(turn)
	return rulekit.ContainsAny(l, a.Yes) && !rulekit.ContainsAny(l, a.No)
}

// isQuestion reports whether a sentence asks something: it ends with a
// question mark or holds one of the lexicon's question marks (吗, 是否).
func isQuestion(a *lexicon.Authority, s string) bool {
	s = strings.TrimRightFunc(s, unicode.IsSpace)
	return strings.HasSuffix(s, "?") || strings.HasSuffix(s, "？") || rulekit.ContainsAny(s, a.Questions)
}
