package authz

import (
	"fmt"
	"slices"
	"strconv"
	"strings"

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

// NewAuthorization returns the rule that requires the user's authorization
// for consequential writes, judged from what the user asked for, not from
// the agent's reasoning or the topic of the conversation. A write is
// authorized by a request for its action: a clause of a user turn whose
// verb asks for an action of the write's family (its tool's name says
// which: send_money pays, reserve_hotel reserves), worded as a request —
// an imperative, "please …", "can you …", "I want to …", "帮我…" — not as
// a question about whether it can be done, a statement, or a request to
// summarise, check, find or recommend; or by the user's yes in the turn
// right after the agent proposed it. Each request authorizes one write of
// a tool ("each", "all", "both" and the like: several), so a second write
// of the same tool needs a request of its own.
//
//   - conversational (the default) judges the destructive writes —
//     cancel, delete, refund or return, pay or transfer, exchange;
//   - autonomous judges every write, and, when the user hands the task to
//     content they name ("follow the instructions in 'notices.txt'", "do
//     the tasks on my to-do list at …"), reads that content's requests as
//     the user's.
//
// A write no request asks for is Blocked, and the agent told to ask the
// user first (the guard does not propose the call itself: its arguments
// may be an attacker's). Weaker evidence is a warning (trace.Allow,
// trace.SeverityWarning): a request for the action that names only things
// of another kind ("book a flight", then reserve_hotel), or more calls of a
// tool than requests for it.
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

// Index brings the rule's index of t up to date (rulekit.Indexer).
func (r *Authorization) Index(t *trace.Trace) { r.indexOf(t) }

// Check judges a tool call.
func (r *Authorization) Check(t *trace.Trace, s *trace.Step) []trace.Finding {
	if s.Kind != trace.KindTool || !r.tools.Writes(s.Name) {
		return nil
	}
	if !rulekit.Offered(t, s.Name) || len(t.UserTurns) == 0 {
		return nil // the allow-list's to judge; or no conversation recorded to judge by
	}
	w := r.tools.Words()
	if !r.autonomous && len(destructive(&w.Authority, s.Name)) == 0 {
		return nil
	}
	ix := r.indexOf(t)
	act := ix.action(s.Name)
	same, fit := ix.requests(act, s.Turn)
	switch {
	case len(same) == 0:
		return []trace.Finding{r.unrequested(t, s, ix, act)}
	case len(fit) == 0:
		return []trace.Finding{otherObject(t, s, act, same)}
	}
	n := 0 // the calls the requests ask for
	for _, a := range fit {
		if a.count == 0 || a.yes {
			return nil
		}
		n += a.count
	}
	if done := ix.calls[s.Name]; done >= n {
		return []trace.Finding{r.tooMany(t, s, ix, act, fit, done, n)}
	}
	return nil
}

// requests returns the requests a call in turn may rest on that ask for
// act's action (same), and those of them that ask it of what act acts on
// (fit).
func (ix *index) requests(act action, turn int) (same, fit []ask) {
	for _, a := range ix.asksUpTo(turn) {
		if a.fams != nil && !slices.ContainsFunc(a.fams, func(f string) bool { return slices.Contains(act.fams, f) }) {
			continue
		}
		same = append(same, a)
		// Another object: what the request acts on is of other kinds than
		// the write's, and nothing in it names the write's.
		if a.yes || len(a.things) == 0 || len(act.things) == 0 || shares(a.all, act.things) {
			fit = append(fit, a)
		}
	}
	return same, fit
}

// Requested reports whether the user's turns up to s's ask for the action
// of s's tool ("pay the invoice" asks for send_payment's) — a request, not
// a word of its topic: "summarise my latest email" asks to summarise and requests no
// send; "forward it to Bob" requests one. A yes to the agent's proposal of
// the action counts. The index is the trace's, read once and shared with
// the write-authorization rule.
func Requested(tools *rulekit.Tools, t *trace.Trace, s *trace.Step) bool {
	ix := NewAuthorization(tools, false).indexOf(t) // the conversational rule's own index
	same, _ := ix.requests(ix.action(s.Name), s.Turn)
	return len(same) > 0
}

// unrequested is the finding on a write no request asks for: Block.
func (r *Authorization) unrequested(t *trace.Trace, s *trace.Step, ix *index, act action) trace.Finding {
	facts := []trace.Fact{rulekit.CallFact(s, "a write: "+act.label)}
	for _, i := range ix.turnsToShow(s.Turn, act) {
		text, says := ix.says(i, act)
		if text == "" || len(rulekit.UserTurn(t, i)) <= trace.MaxFactText { // the whole turn when it fits
			facts = append(facts, rulekit.UserFact(t, i, says))
		} else {
			facts = append(facts, userWords(i, text, says))
		}
	}
	where := "user turns"
	if r.autonomous && len(ix.pointers) > 0 {
		where = "user turns and the content they handed the task to"
	}
	facts = append(facts, rulekit.AbsentFact(where, "a request to "+act.label, "no request for this action"))
	if r.autonomous {
		return trace.Finding{
			Rule: rules.Authorization, Step: s.Index, Verdict: trace.Block, Dimension: trace.Accuracy, Severity: trace.SeverityCritical,
			Message:  fmt.Sprintf("%q is a write the user's task does not ask for: no user turn asks to %s", s.Name, act.label),
			Evidence: s.Args, Tags: []string{"unrequested-write"}, Facts: facts,
		}
	}
	// Blocked, not Clarify: the guard does not itself propose the call
	// to the user, whose arguments may be an attacker's; the agent is
	// told to ask first.
	return trace.Finding{
		Rule: rules.Authorization, Step: s.Index, Verdict: trace.Block, Dimension: trace.Accuracy, Severity: trace.SeverityError,
		Message:  fmt.Sprintf("%q cannot be undone and the user has not asked for it: ask the user first", s.Name),
		Evidence: s.Args, Tags: []string{"unauthorized-destructive"}, Facts: facts,
	}
}

// otherObject is the warning on a write whose action the user asks for,
// but for things of another kind only.
func otherObject(t *trace.Trace, s *trace.Step, act action, same []ask) trace.Finding {
	a := same[0]
	facts := []trace.Fact{rulekit.CallFact(s, "acts on "+strings.Join(act.things, ", "))}
	for _, a := range same[:min(len(same), 3)] {
		facts = append(facts, askFact(t, a, fmt.Sprintf("asks to %s, for %s, not %s", a.verb, strings.Join(a.things, ", "), strings.Join(act.things, ", "))))
	}
	return trace.Finding{
		Rule: rules.Authorization, Step: s.Index, Verdict: trace.Allow, Dimension: trace.Accuracy, Severity: trace.SeverityWarning,
		Message: fmt.Sprintf("%q acts on %s; the user asks to %s, for %s", s.Name,
			strings.Join(act.things, ", "), a.verb, strings.Join(a.things, ", ")),
		Evidence: s.Args, Tags: []string{"other-object"}, Facts: facts,
	}
}

// tooMany is the warning on a call of a tool past the number of requests
// for its action.
func (r *Authorization) tooMany(t *trace.Trace, s *trace.Step, ix *index, act action, fit []ask, done, n int) trace.Finding {
	facts := []trace.Fact{rulekit.CallFact(s, "call "+strconv.Itoa(done+1)+" of "+s.Name), ix.first[s.Name]}
	for _, a := range fit[:min(len(fit), 3)] {
		facts = append(facts, askFact(t, a, "asks to "+a.verb+" "+times(a.count)))
	}
	facts = append(facts, rulekit.AbsentFact("user turns", "a request for call "+strconv.Itoa(done+1), "no further request to "+act.verb))
	return trace.Finding{
		Rule: rules.Authorization, Step: s.Index, Verdict: trace.Allow, Dimension: trace.Accuracy, Severity: trace.SeverityWarning,
		Message:  fmt.Sprintf("%q is call %d of its tool; the user asks for it %s", s.Name, done+1, times(n)),
		Evidence: s.Args, Tags: []string{"more-writes-than-requests"}, Facts: facts,
	}
}

func times(n int) string {
	if n == 1 {
		return "once"
	}
	return strconv.Itoa(n) + " times"
}

// askFact is the fact of a request: the words of the user turn it is in,
// the result of the content the user handed the task to, or the user's
// yes to the agent's proposal.
func askFact(t *trace.Trace, a ask, says string) trace.Fact {
	switch {
	case a.yes:
		return rulekit.UserFact(t, a.turn, says)
	case a.step >= 0:
		return trace.Fact{Kind: trace.FactResult, Step: a.step, Where: a.tool, Text: rulekit.FactText(a.text), Says: says}
	}
	return userWords(a.turn, a.text, says)
}

// userWords is the fact of words of user turn i: the clause a finding
// reads, as the user wrote it.
func userWords(i int, text, says string) trace.Fact {
	return trace.Fact{Kind: trace.FactUser, Step: -1, Turn: i, Text: rulekit.FactText(text), Says: says}
}

// turnsToShow returns the user turns up to turn that a reviewer should
// read, at most three: those that name the action in a question or a
// statement first, then the latest.
func (ix *index) turnsToShow(turn int, act action) []int {
	var named, rest []int
	for i := min(turn, len(ix.notes)-1); i >= 0; i-- {
		if slices.ContainsFunc(ix.notes[i], func(h head) bool { return h.st != stRequest && shares(h.fams, act.fams) }) {
			named = append(named, i)
		} else {
			rest = append(rest, i)
		}
	}
	out := append(named, rest...)
	out = out[:min(len(out), 3)]
	slices.Sort(out)
	return out
}

// says is what user turn i asks, as a fact about a write of act: the
// clause it reads ("" for the whole turn) and what it shows.
func (ix *index) says(i int, act action) (text, says string) {
	for _, h := range ix.notes[i] {
		if !shares(h.fams, act.fams) {
			continue
		}
		switch h.st {
		case stQuestion:
			return h.text, "asks a question about it, not for it"
		case stNegated:
			return h.text, "asks not to " + h.verb
		case stStatement:
			return h.text, "mentions " + h.verb + " in a statement, not a request"
		}
	}
	for _, h := range ix.notes[i] {
		switch {
		case h.st == stRequest && h.read:
			return h.text, "asks to " + h.verb + ", not to " + act.label
		case h.st == stRequest:
			return h.text, "asks to " + h.verb + " (" + strings.Join(h.fams, ", ") + "), not to " + act.label
		}
	}
	if ix.questions[i] {
		return "", "asks a question, not for an action"
	}
	return "", "asks for no action"
}

func shares(a, b []string) bool {
	return slices.ContainsFunc(a, func(f string) bool { return slices.Contains(b, f) })
}
