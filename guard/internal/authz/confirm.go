package authz

import (
	"fmt"
	"regexp"
	"slices"
	"strings"

	"github.com/agentguard/agentguard/guard/internal/rulekit"
	"github.com/agentguard/agentguard/guard/rules"
	"github.com/agentguard/agentguard/trace"
	"github.com/agentguard/agentguard/trace/lexicon"
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
//     write-authorization rule reads requests), or to carry out what was
//     listed ("please submit it", "麻烦帮我提交一下"; the lexicon's
//     GoAhead), after the agent's words named a value the call identifies
//     its object by (the order, the item, the reservation): the agent
//     listed what it would do and the user asked for it.
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

// Confirms reports whether the user confirmed the call s, as the
// confirmation rule reads a confirmation: after the agent spoke, a yes,
// or, unless yesOnly, a request for the call's action after the agent
// named what it acts on. The user's latest turn before the call confirms
// it, or an earlier one whose yes is not used yet (see confirmedEarlier).
func Confirms(tools *rulekit.Tools, t *trace.Trace, s *trace.Step, yesOnly bool) bool {
	return confirmsIn(tools, t, s, s.Turn, yesOnly) || confirmedEarlier(tools, t, s, yesOnly)
}

// confirmsIn reports whether the user's turn confirms a call like s.
func confirmsIn(tools *rulekit.Tools, t *trace.Trace, s *trace.Step, turn int, yesOnly bool) bool {
	if turn < 1 || !rulekit.AgentSpokeIn(t, turn-1) {
		return false
	}
	w := tools.Words()
	if text := rulekit.UserTurn(t, turn); w.Affirmation.MatchString(text) {
		return !takenBack(w, w.Affirmation, text)
	}
	if yesOnly {
		return false
	}
	at := *s
	at.Turn = turn
	return requestedAfterListing(tools, t, &at)
}

// takenBack reports whether a turn that says yes takes it back after its
// last yes (a match of said): a "no" word that is more than a negation
// follows ("wait", "hold on", "不对"; the lexicon's Authority.No less its
// Actions.Negations) and no yes word does: "Yes — no, wait, let me check
// the fare first", "确认……哦不对"; not "Yes, proceed. No other items need
// changes".
func takenBack(w *lexicon.Compiled, said *regexp.Regexp, text string) bool {
	yes := said.FindAllStringIndex(text, -1)
	tail := strings.ToLower(text[yes[len(yes)-1][1]:])
	return rulekit.ContainsAny(tail, wordsOf(w).retract) && !rulekit.ContainsAny(tail, w.Authority.Yes)
}

// confirmWords is what the confirmation rule derives from a lexicon, once
// (lexicon.Compiled.Derived): the no words that take a yes back, and the
// words that carry no content.
type confirmWords struct {
	retract  []string // Authority.No less Actions.Negations
	function []string // fillers, subjects, joins, quantifiers, question marks, determiners
}

type confirmWordsKey struct{}

func wordsOf(w *lexicon.Compiled) *confirmWords {
	return w.Derived(confirmWordsKey{}, func() any {
		a := &w.Authority
		return &confirmWords{
			retract:  slices.DeleteFunc(slices.Clone(a.No), func(n string) bool { return slices.Contains(w.Actions.Negations, n) }),
			function: slices.Concat(w.Actions.Fillers, w.Actions.Subjects, w.Actions.Joins, w.Actions.Several, a.Questions, a.Determiners),
		}
	}).(*confirmWords)
}

// carryTurns is how far back a yes not yet used still confirms a call.
const carryTurns = 2

// confirmedEarlier reports whether one of the user's carryTurns turns
// before the latest confirmed a call like s after the agent listed its
// details (its words named one of the call's argument values), and that
// yes still holds: no
// call of the tool has succeeded since (a call that did used it; one that
// failed is retried), and every turn after it gives a detail of the call
// and nothing more (givesDetail) — it says no "no" word ("wait", "算了"),
// asks no question and does not ask for the tool's action anew ("then
// downgrade only the outbound flight"; "pay with the gift card" gives a
// detail of a change). That is the agent listing a change, the user
// saying yes, the agent asking for a detail (a payment method) and the
// user giving it.
func confirmedEarlier(tools *rulekit.Tools, t *trace.Trace, s *trace.Step, yesOnly bool) bool {
	a := &tools.Words().Authority
	var ix *index
	for turn := s.Turn; turn > max(s.Turn-carryTurns, 0); turn-- {
		text := rulekit.UserTurn(t, turn)
		lower := strings.ToLower(text)
		if strings.ContainsAny(text, "?？") || rulekit.ContainsAny(lower, a.No) || rulekit.ContainsAny(lower, a.Questions) ||
			!givesDetail(tools.Words(), t, s, turn) {
			return false
		}
		if ix == nil {
			ix = NewAuthorization(tools, false).indexOf(t)
		}
		if turn < len(ix.notes) && slices.ContainsFunc(ix.notes[turn], func(h head) bool {
			return h.st == stRequest && !h.read && shares(h.fams, ix.action(s.Name).fams)
		}) {
			return false // the user asks for the change anew, not for a detail of it
		}
		if confirmsIn(tools, t, s, turn-1, yesOnly) {
			return listedBefore(t, turn-1, detailValues(t, s)) && !succeededSince(t, s, turn-1)
		}
	}
	return false
}

// givesDetail reports whether the user's turn gives a detail of the call
// s: a word of it (four letters or more, or two Han characters) is a word
// of the call's argument values ("the gift card" for gift_card_5634230) or
// of what the agent said just before (an option it offered: "礼品卡还是
// 信用卡？" – "礼品卡"; the lexicon's Glossary reads "用礼品卡" as naming
// gift_card_5634230), and it names no number that neither the arguments
// nor the agent's words since the carried yes hold ("make it the 20th
// instead" is a new change, not a detail). A turn that shares no word
// with them ("let me hold off for now", "我再想想") does something else
// than answer, so the yes does not carry over it.
func givesDetail(w *lexicon.Compiled, t *trace.Trace, s *trace.Step, turn int) bool {
	args := strings.Join(rulekit.ArgValues(t, s), " ")
	said := rulekit.LastSaid(t, turn-1)
	var context strings.Builder
	context.WriteString(args)
	for k := max(turn-carryTurns-1, 0); k < turn; k++ {
		context.WriteString(" ")
		context.WriteString(rulekit.LastSaid(t, k))
	}
	known := rulekit.Numbers(context.String())
	text := rulekit.UserTurn(t, turn)
	numbers := rulekit.Numbers(text)
	for _, n := range numbers {
		if !slices.Contains(known, n) {
			return false
		}
	}
	if len(numbers) > 0 {
		return true // "the 10", "43码的": a number the call or the agent's offer holds
	}
	words := rulekit.Words(text)
	for en, native := range w.Authority.Glossary {
		if slices.ContainsFunc(native, func(n string) bool { return strings.Contains(text, n) }) {
			words = append(words, rulekit.Words(en)...)
		}
	}
	function := wordsOf(w).function
	shared := func(word string) bool {
		return rulekit.HasWord(args, word) || rulekit.HasWord(said, word) && !functionWord(word, function)
	}
	return slices.ContainsFunc(words, shared)
}

// functionWord reports whether a pair of Han characters holds one that
// is a function word by itself (fn: 还 in 还是, 我 in 我再): a word the
// user and the agent share for no reason of content.
func functionWord(w string, fn []string) bool {
	for _, r := range w {
		if r >= 0x80 && slices.Contains(fn, string(r)) {
			return true
		}
	}
	return false
}

// succeededSince reports whether a call of s's tool before s, in the
// user's turn or later, succeeded.
func succeededSince(t *trace.Trace, s *trace.Step, turn int) bool {
	for i := min(s.Index, t.Len()) - 1; i >= 0; i-- {
		p := t.Step(i)
		if p == nil {
			return true // released from memory: what it did is unknown, so the yes is not carried
		}
		if p.Turn < turn {
			return false
		}
		if p.Kind == trace.KindTool && p.Name == s.Name && p.Error == "" && !p.Blocked {
			return true
		}
	}
	return false
}

// requestedAfterListing reports whether the user's turn of s asks for the
// action of s's tool, or to carry out what was listed ("please submit it";
// the lexicon's GoAhead), and the agent's last words before it named one
// of the values s identifies its object by.
func requestedAfterListing(tools *rulekit.Tools, t *trace.Trace, s *trace.Step) bool {
	w := tools.Words()
	if !listedBefore(t, s.Turn, rulekit.IdentifyingValues(w, s.Args)) {
		return false
	}
	if text := rulekit.UserTurn(t, s.Turn); w.GoAhead.MatchString(text) {
		return !takenBack(w, w.GoAhead, text)
	}
	ix := NewAuthorization(tools, false).indexOf(t) // the conversational rule's own index
	same, _ := ix.requests(ix.action(s.Name), s.Turn)
	return slices.ContainsFunc(same, func(a ask) bool { return a.turn == s.Turn && a.step < 0 && !a.yes })
}

// listedBefore reports whether what the agent last said before the user's
// turn names one of values (as rulekit.Alnum spells them): the agent
// listed the call's details.
func listedBefore(t *trace.Trace, turn int, values []string) bool {
	said := rulekit.Alnum(rulekit.LastSaid(t, turn-1))
	return said != "" && slices.ContainsFunc(values, func(v string) bool { return strings.Contains(said, v) })
}

// detailValues are the argument values of s, as rulekit.Alnum spells them,
// of four characters or more: the flight, the item, the order.
func detailValues(t *trace.Trace, s *trace.Step) []string {
	var out []string
	for _, v := range rulekit.ArgValues(t, s) {
		if a := rulekit.Alnum(v); len(a) >= 4 {
			out = append(out, a)
		}
	}
	return out
}
