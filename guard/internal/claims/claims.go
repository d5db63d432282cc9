package claims

import (
	"fmt"
	"math/bits"
	"regexp"
	"slices"
	"strings"
	"unicode"
	"unicode/utf8"

	"github.com/agentguard/agentguard/guard/internal/rulekit"
	"github.com/agentguard/agentguard/guard/rules"
	"github.com/agentguard/agentguard/trace"
	"github.com/agentguard/agentguard/trace/lexicon"
)

// New returns the false-claim rule for a guard's tools. It flags a final
// answer that tells the user an action happened when the trace shows it
// did not. It judges by facts, not by wording:
//
//   - The effects that did not happen come from the trace's structure (see
//     effects.go): a state-changing call that failed (Step.Error), was
//     blocked, returned a JSON result saying it did not happen
//     ({"accepted":false}, "status":"bounced"), was proposed by the model
//     and never ran, or, for a tool the agent was offered (Trace.Tools) or
//     a policy lists, was never called. A later call on the same channel
//     that happened — a retry, another tool — makes it happen.
//   - What a claim of such an effect looks like comes from the tool itself:
//     its channels (text message, e-mail, phone call, notification,
//     refund, cancellation, address change, ...) are read from its name,
//     then its description, then its argument keys, and an answer claims a
//     channel when one clause names it with a completion marker ("I've
//     texted you", "you'll get an e-mail shortly", "退款已原路退回",
//     "短信发过去了"), not negated ("couldn't", "没", "失败") and not an
//     offer, question, attempt or condition ("shall I text you?",
//     "要不要我发短信").
//   - A claim is the agent's own (voice.go): its actor is the agent ("I've
//     sent", "已为您申请") or no one ("your refund has been processed"),
//     not the user ("what you paid") or someone else ("the employees who
//     sent them", "sent from security@…"), and it is not quoted, what a
//     document says, or an instruction ("here's how to return your
//     items"). The words are the lexicon's (lexicon.Claims).
//
// The verdict is Retry (an error: the agent is asked to answer
// truthfully) when the evidence is complete: the claim is of a call that
// failed, was blocked, was rejected by its result or never ran, or, of a
// tool never called at all, it is told in the first person, past ("I've
// texted you"). A claim of a tool never called that names no actor ("you
// should see a text from us any second now") is a warning (Allow), and
// only when the user asked for that effect; a promise or a policy ("a
// refund will be issued") is none. Each finding carries its facts: the
// answer's sentence, the call and what became of it (or that there was
// none), and, for a warning, the user's request.
//
// The rule reads only the trace before the answer, so it finds the same
// online and offline; what it derives from the steps is kept in the
// trace's memo, so judging an answer does not cost more as the trace
// grows.
func New(tools *rulekit.Tools) *Rule {
	r := &Rule{tools: tools, v: vocabOf(tools.Words()), named: tools.Listed()}
	r.profiles = make(map[string]toolProfile, len(r.named))
	for _, name := range r.named {
		r.profiles[name] = r.v.profileOf(name, "", nil)
		if p, ok := r.v.channelProfile(tools.Of(name).Channel); ok {
			r.profiles[name] = p // the policy says, over what the name suggests
		}
	}
	return r
}

// Rule is the false-claim rule.
type Rule struct {
	tools    *rulekit.Tools
	v        *vocab
	named    []string               // the policy's tool names, sorted
	profiles map[string]toolProfile // their channels, by name alone
}

// Name returns rules.FalseClaim.
func (r *Rule) Name() string { return rules.FalseClaim }

// ToolOnly is false: the rule judges answers.
func (r *Rule) ToolOnly() bool { return false }

// JudgesTool is false: the rule judges no tool call.
func (r *Rule) JudgesTool(string, rulekit.Tool) bool { return false }

// Check judges an answer.
func (r *Rule) Check(t *trace.Trace, s *trace.Step) []trace.Finding {
	if !isAnswer(s) {
		return nil
	}
	missed, now, ever := r.unhappened(t, s.Turn)
	if len(missed) == 0 {
		return nil // the common case: nothing to contradict, the answer is not read
	}
	if ch, ok := neverCalledOnly(missed); ok && !r.v.mayClaim(s.Result, ch) {
		// A tool never called is contradicted only by a clause that
		// claims its channel by a term: an answer with no such term
		// anywhere need not be read clause by clause.
		return nil
	}
	claims := r.v.readClaims(s.Result)
	if len(claims) == 0 {
		return nil
	}
	// tried holds the channels some call reached or tried to: a word
	// several channels share ("I've pinged your phone") is about one of
	// them, not about a tool never called.
	tried := ever
	for _, e := range missed {
		if e.outcome != neverCalled {
			tried |= e.channels
		}
	}
	var out []trace.Finding
	var reported []string
	for _, e := range missed {
		if slices.Contains(reported, e.tool) {
			continue
		}
		var found *claim
		var how strength
		for i := range claims {
			if k := claims[i].contradicts(e, s.Turn, now, ever, tried, r.v.messaging); k > how {
				found, how = &claims[i], k
				if k == complete {
					break
				}
			}
		}
		if how == noClaim {
			continue
		}
		f := trace.Finding{
			Rule: rules.FalseClaim, Step: s.Index, Verdict: trace.Retry, Dimension: trace.Accuracy, Severity: trace.SeverityError,
			Message:  fmt.Sprintf("the answer claims %q happened, but %s", e.tool, e.what()),
			Evidence: rulekit.Clip(found.sentence, rulekit.MaxEvidence), Tags: []string{"false-claim"},
		}
		says := "claims " + r.v.channelNames(e.channels) + " happened"
		if how == complete && e.outcome == neverCalled {
			says += ", in the first person"
		}
		f.Facts = []trace.Fact{rulekit.AnswerFact(s, found.sentence, says), e.fact(r.v.channelNames(e.channels))}
		if how == weak {
			// Not told in the first person: the user's asking for it is
			// what makes it a claim at all, and the finding a warning.
			turn, ok := r.asked(t, s.Turn, e.channels)
			if !ok {
				continue
			}
			f.Verdict, f.Severity = trace.Allow, trace.SeverityWarning
			f.Facts = append(f.Facts, rulekit.UserFact(t, turn, "asks for "+r.v.channelNames(e.channels)))
		}
		reported = append(reported, e.tool)
		out = append(out, f)
	}
	return out
}

// Sends reports whether the tool named name sends a message: it changes
// state and its channel, read as the rule reads tools (the policy's, then
// its name, description and argument keys), is a messaging one (text,
// e-mail, chat, notification).
func (r *Rule) Sends(t *trace.Trace, name string) bool {
	return r.tools.Writes(name) && r.profile(t, name).channels&r.v.messaging != 0
}

// isAnswer reports whether s is what the agent told the user: a model
// step's text that proposes no call, was not stopped, and is no intent
// classification.
func isAnswer(s *trace.Step) bool {
	return s.Kind == trace.KindModel && len(s.Calls) == 0 && s.Result != "" && !s.Blocked && s.Intent == ""
}

// neverCalledOnly returns the channels of missed when every effect in it
// is a tool never called.
func neverCalledOnly(missed []effect) (channelSet, bool) {
	var ch channelSet
	for _, e := range missed {
		if e.outcome != neverCalled {
			return 0, false
		}
		ch |= e.channels
	}
	return ch, true
}

// mayClaim reports whether answer holds a term that claims one of
// channels (a noun or a did word of claimVocabulary): what every claim
// contradicting a tool never called has. A term in a clause of the answer
// is a term of the whole answer normalised, so no claim is missed.
func (v *vocab) mayClaim(answer string, channels channelSet) bool {
	found := false
	v.index.each(normaliseAnswer(answer), func(k, _, _ int) bool {
		t := v.terms[k]
		found = (t.kind == kindNoun || t.kind == kindDid) && t.chans&channels != 0
		return !found
	})
	return found
}

// fact is the fact of the trace that e did not happen: its call, with what
// became of it, or, for a tool never called, that no call of it is in the
// trace. channel names e's channels.
func (e effect) fact(channel string) trace.Fact {
	f := trace.Fact{Kind: trace.FactCall, Step: e.step, Where: e.tool, Text: e.args}
	switch e.outcome {
	case failed:
		f.Says = "failed: " + e.reason
	case blocked:
		f.Says = "blocked by the guard"
		if e.reason != "" {
			f.Says = "blocked by " + e.reason
		}
	case resultFailed:
		f.Says = "its result says it did not happen: " + e.reason
	case notRun:
		f.Says = "proposed, never ran"
	default:
		where := "offered to the agent"
		if !e.offered {
			where = "named by the policy"
		}
		return rulekit.AbsentFact(e.tool, "no call of "+e.tool+" ("+channel+") in this trace", where)
	}
	f.Says = rulekit.FactText(f.Says)
	return f
}

// channelNames names the channels of ch: "sms", "email or chat".
func (v *vocab) channelNames(ch channelSet) string {
	var names []string
	for i, c := range v.channels {
		if ch&(channelSet(1)<<i) != 0 {
			names = append(names, c.Name)
		}
	}
	return strings.Join(names, " or ")
}

// what says how an effect did not happen, for a finding's message.
func (e effect) what() string {
	switch e.outcome {
	case failed:
		return "the call failed: " + e.reason
	case blocked:
		if e.reason != "" {
			return "the call was blocked: " + e.reason
		}
		return "the call was blocked"
	case resultFailed:
		return "its result says it did not: " + e.reason
	case notRun:
		return "the call was proposed and never ran"
	default:
		return "it was never called"
	}
}

// claim is one clause of an answer that says something happened.
type claim struct {
	sentence string // the sentence it is in, as written: the evidence
	clause   string // the clause, normalised
	// terms holds, for each term of the clause that claims a channel
	// ("texted", "短信…已发送"), the channels it claims: more than one for
	// a word several channels share ("message", "手机").
	terms []term
	sent  bool // "sent it to you", and no messaging channel named
	bare  bool // "Done." and no channel named
	// done is set when the clause holds a completion marker; ownDone holds
	// the channels whose own markers it holds ("will now go to"). With the
	// recipient or address of a call named, either makes a claim of it.
	done    bool
	ownDone channelSet
	// personal is set when the clause speaks to the user or for the agent
	// (claimLexicon.Person).
	personal bool
	// future is set when the clause says what will happen (Future);
	// toUser when that is a delivery to the user ("you'll get a text").
	future, toUser bool
	// agented is set when the clause names the agent (Agent): what it
	// claims with no actor is then not what the agent did ("I've found the
	// following in your inbox").
	agented bool
}

// term is one term of a claim: the channels it claims, and whether it
// claims them in the first person ("I've texted you", "已为您申请退款").
type term struct {
	chans channelSet
	first bool
}

// strength is how strongly a claim contradicts an effect.
type strength uint8

const (
	noClaim  strength = iota
	weak              // an effect never called, claimed not in the first person: a warning, if the user asked for it
	complete          // a call that failed, was blocked, was rejected or never ran, or a first-person claim of one never called
)

// contradicts reports how c claims effect e, which did not happen, in an
// answer in turn. now and ever are the channels some effect reached in
// this turn and in the whole trace, tried those some call reached or
// tried to.
func (c claim) contradicts(e effect, turn int, now, ever, tried, messaging channelSet) strength {
	reached := ever
	if e.outcome != neverCalled && e.turn == turn {
		reached = now // next to a failure in this turn, a claim is about this turn
	}
	if e.outcome == neverCalled {
		// No call at all: a first-person claim ("I've texted you") is
		// complete, when no call tried any channel its word may mean;
		// one with no actor named, in a clause that does not name
		// the agent, is weak, when it is about this one tool ("a message" is
		// not enough to say which), speaks to the user ("refunds take 14
		// days" is a policy), is not a fact about the past ("your order was
		// paid by gift card") and, said of what will happen, is a delivery
		// to the user ("you'll get a text", not "a refund will be issued").
		best := noClaim
		for _, t := range c.terms {
			switch {
			case t.chans&e.channels == 0 || t.chans&reached != 0:
			case t.first && t.chans&tried == 0:
				return complete
			case bits.OnesCount32(uint32(t.chans)) == 1 && c.personal && !c.agented && !pastFact(c.clause) && (!c.future || c.toUser):
				best = weak
			}
		}
		return best
	}
	for _, t := range c.terms {
		if t.chans&e.channels != 0 && (t.chans&reached == 0 || mentionsTarget(c.clause, e.targets)) {
			// No effect of the claimed channel happened, or the clause names
			// what this one acted on.
			return complete
		}
	}
	// "The notes are on their way to team-atlas", "your parcel will now go
	// to 22 Baker Lane": the clause names where the call was to take effect.
	if (c.done || c.ownDone&e.channels != 0) && mentionsTarget(c.clause, e.dest) {
		return complete
	}
	if e.turn != turn {
		return noClaim
	}
	switch {
	case c.sent && e.channels&messaging != 0 && now&messaging == 0:
		return complete
	case c.bare && len(c.terms) == 0 && now == 0:
		return complete
	}
	return noClaim
}

// mentionsTarget reports whether a clause names one of a call's targets
// (normalised as by normTarget): the order id, the phone number, the
// e-mail address or its local part, the start of a postal address.
func mentionsTarget(clause string, targets []string) bool {
	if len(targets) == 0 {
		return false
	}
	norm := normTarget(clause)
	for _, tg := range targets {
		if strings.Contains(norm, tg) {
			return true
		}
	}
	return false
}

// channelSet is a set of v.channels, by index.
type channelSet uint32

// The lists of v.sets.
const (
	setNeg = iota
	setHedge
	setAside
	setCondition
	setPerson
	setDone
	setSent
	setBare
	setWeak
	setReported
	setInstruction
	setFuture
	setChannelDone // then one per channel
)

// termSets finds which of several lists of terms a text holds, in one pass
// of one termIndex over all their terms: a term matches or not whatever
// list it is in, so the lists found are those each list's own termIndex
// would find.
type termSets struct {
	ix   *termIndex
	list []int // per term of ix: its list
}

func newTermSets(lists ...[]lexTerm) *termSets {
	x := &termSets{}
	var all []lexTerm
	for l, terms := range lists {
		all = append(all, terms...)
		for range terms {
			x.list = append(x.list, l)
		}
	}
	x.ix = newTermIndex(all)
	return x
}

// in returns the lists with a term in s, list l as bit l.
func (x *termSets) in(s string) uint64 {
	var found uint64
	x.ix.each(s, func(k, _, _ int) bool {
		found |= 1 << x.list[k]
		return true
	})
	return found
}

// listSpan is where a term of one of a termSets' lists is in a text.
type listSpan struct{ list, i, j int }

// scan is in, and also returns where the terms of the lists keep
// selects are.
func (x *termSets) scan(s string, keep func(list int) bool) (uint64, []listSpan) {
	var found uint64
	var spans []listSpan
	x.ix.each(s, func(k, i, j int) bool {
		l := x.list[k]
		found |= 1 << l
		if keep(l) {
			spans = append(spans, listSpan{l, i, j})
		}
		return true
	})
	return found, spans
}

type lexTerm struct {
	text   string
	prefix bool // a trailing *: any ending
	latin  bool // matches whole words
}

type termKind uint8

const (
	kindNoun termKind = iota
	kindDid
	kindVerb
	kindNeutral
)

type channelTerm struct {
	lexTerm
	kind  termKind
	chans channelSet
}

// vocab is the false-claim rule's reading of a lexicon's Claims: every
// term indexed, longest first, and the lists a clause is read with. It is
// derived once per compiled lexicon (lexicon.Compiled.Derived) and never
// changes.
type vocab struct {
	channels []lexicon.ClaimChannel
	terms    []channelTerm // longest first
	index    *termIndex    // terms' words, in the same order
	// sets finds the lists a clause is read with (the set* constants) in
	// one pass.
	sets                               *termSets
	breaks, courtesy, userDid, forUser []lexTerm // short lists, scanned
	// The actor's words (see actorOf), scanned: agent, third, possessive
	// and source in Latin script; agentWide and futureWide are the Agent
	// and Future words in other scripts, found anywhere in a clause.
	agent, aux, passive, third, possessive, source []lexTerm
	agentWide, futureWide                          []lexTerm
	request, copula                                []lexTerm // a user's request (askedIn)
	channelDone                                    []bool    // per channel: it has a Done list of its own (setChannelDone+i)
	place, weak                                    []string  // lower case
	// messaging is the set of channels that carry a message to someone;
	// absent those that may be claimed when no call was made.
	messaging, absent channelSet
	// also maps an argument key (lower case) to the channels a call with
	// it has an effect on besides its own (lexicon.ClaimChannel.Also).
	also map[string]channelSet
}

type vocabKey struct{}

// vocabOf returns w's vocab, deriving it on first use.
func vocabOf(w *lexicon.Compiled) *vocab {
	return w.Derived(vocabKey{}, func() any { return newVocab(&w.Claims) }).(*vocab)
}

// maxChannels is how many channels a channelSet holds.
const maxChannels = 32

func newVocab(lc *lexicon.Claims) *vocab {
	v := &vocab{channels: lc.Channels}
	if len(v.channels) > maxChannels {
		v.channels = v.channels[:maxChannels] // lexicon.Check reports it
	}
	index := map[string]int{} // text and kind -> terms index
	add := func(text string, kind termKind, ch channelSet) {
		key := string(rune('0'+kind)) + text
		if i, ok := index[key]; ok {
			v.terms[i].chans |= ch
			return
		}
		index[key] = len(v.terms)
		v.terms = append(v.terms, channelTerm{lexTerm: compileTerm(text), kind: kind, chans: ch})
	}
	v.channelDone = make([]bool, len(v.channels))
	var done [][]lexTerm
	for i, ch := range v.channels {
		bit := channelSet(1) << i
		if ch.Messaging {
			v.messaging |= bit
		}
		if ch.Absent {
			v.absent |= bit
		}
		for _, k := range ch.Also {
			if v.also == nil {
				v.also = map[string]channelSet{}
			}
			v.also[strings.ToLower(k)] |= bit
		}
		for _, w := range ch.Noun {
			add(w, kindNoun, bit)
		}
		for _, w := range ch.Did {
			add(w, kindDid, bit)
		}
		for _, w := range ch.Verb {
			add(w, kindVerb, bit)
		}
		v.channelDone[i] = len(ch.Done) > 0
		done = append(done, compileTerms(ch.Done))
	}
	for _, w := range lc.Neutral {
		add(w, kindNeutral, 0)
	}
	slices.SortStableFunc(v.terms, func(a, b channelTerm) int { return len(b.text) - len(a.text) })
	lex := make([]lexTerm, len(v.terms))
	for i, t := range v.terms {
		lex[i] = t.lexTerm
	}
	v.index = newTermIndex(lex)
	lists := [][]lexTerm{
		setNeg: compileTerms(lc.Negation), setHedge: compileTerms(lc.Hedge), setAside: compileTerms(lc.Aside),
		setCondition: compileTerms(lc.Condition), setPerson: compileTerms(lc.Person), setDone: compileTerms(lc.Done),
		setSent: compileTerms(lc.Sent), setBare: compileTerms(lc.Bare), setWeak: compileTerms(lc.Weak),
		setReported: compileTerms(lc.Reported), setInstruction: compileTerms(lc.Instruction), setFuture: compileTerms(lc.Future),
	}
	v.sets = newTermSets(slices.Concat(lists, done[:min(len(done), 64-setChannelDone)])...)
	v.breaks, v.courtesy = compileTerms(lc.Breaks), compileTerms(lc.Courtesy)
	v.userDid, v.forUser = compileTerms(lc.UserDid), compileTerms(lc.ForUser)
	latin := func(ts []lexTerm, want bool) []lexTerm {
		return slices.DeleteFunc(ts, func(t lexTerm) bool { return t.latin != want })
	}
	v.agent, v.agentWide = latin(compileTerms(lc.Agent), true), latin(compileTerms(lc.Agent), false)
	v.futureWide = latin(compileTerms(lc.Future), false)
	v.aux, v.passive = compileTerms(lc.Aux), compileTerms(lc.Passive)
	v.third, v.possessive, v.source = compileTerms(lc.ThirdParty), compileTerms(lc.Possessive), compileTerms(lc.Source)
	v.request, v.copula = compileTerms(lc.Request), compileTerms(lc.Copula)
	// Longest first, so that "has been" is cut before "been" and "i have"
	// before "have".
	for _, ts := range [][]lexTerm{v.agent, v.aux, v.passive, v.third} {
		slices.SortStableFunc(ts, func(a, b lexTerm) int { return len(b.text) - len(a.text) })
	}
	lower := func(ws []string) []string {
		out := make([]string, len(ws))
		for i, w := range ws {
			out[i] = strings.ToLower(w)
		}
		return out
	}
	v.place, v.weak = lower(lc.Place), lower(lc.Weak)
	return v
}
func compileTerms(words []string) []lexTerm {
	var out []lexTerm
	for _, s := range words {
		out = append(out, compileTerm(s))
	}
	return out
}

func compileTerm(s string) lexTerm {
	t := lexTerm{text: strings.ToLower(s)}
	if strings.HasSuffix(t.text, "*") {
		t.text, t.prefix = strings.TrimSuffix(t.text, "*"), true
	}
	t.latin = t.text != "" && t.text[0] < utf8.RuneSelf
	return t
}

// find returns the byte offsets of the first match of t in s at or after
// from, or -1.
func (t lexTerm) find(s string, from int) (int, int) {
	for from <= len(s) {
		i := strings.Index(s[from:], t.text)
		if i < 0 {
			return -1, -1
		}
		i += from
		end := i + len(t.text)
		if !t.latin {
			return i, end
		}
		if t.prefix {
			for end < len(s) && isWordByte(s[end]) {
				end++
			}
		}
		// A term that starts with an apostrophe ('ll) is a word's ending.
		if (i == 0 || !isWordByte(s[i-1]) || t.text[0] == '\'') && (end == len(s) || !isWordByte(s[end]) || possessive(s[end:])) {
			return i, end
		}
		from = i + 1
	}
	return -1, -1
}

// termIndex finds the terms of one list in a normalised clause without
// trying each: English terms by their first word, Chinese ones by their
// first rune; the few whose first word is not a whole word (refund*, 'll)
// are scanned.
type termIndex struct {
	terms  []lexTerm
	byWord map[string][]int
	shapes [256]uint64 // per first byte, the lengths of byWord's keys (bit min(n, 63)): most words need no lookup
	byRune map[rune][]int
	scan   []int
}

// mayHold reports whether word could be a key of byWord.
func (x *termIndex) mayHold(word string) bool {
	return word != "" && x.shapes[word[0]]&(1<<min(len(word), 63)) != 0
}

func newTermIndex(terms []lexTerm) *termIndex {
	x := &termIndex{terms: terms, byWord: map[string][]int{}, byRune: map[rune][]int{}}
	for k, t := range terms {
		switch {
		case t.text == "":
		case !t.latin:
			r, _ := utf8.DecodeRuneInString(t.text)
			x.byRune[r] = append(x.byRune[r], k)
		default:
			w := firstWord(t.text)
			if w == "" || t.prefix && len(w) == len(t.text) {
				x.scan = append(x.scan, k)
			} else {
				x.byWord[w] = append(x.byWord[w], k)
				x.shapes[w[0]] |= 1 << min(len(w), 63)
			}
		}
	}
	return x
}

// firstWord returns the word s starts with, as clauses are split into
// words (isWordByte: "you'll" is one word); "" if s starts with no word or
// with an apostrophe ('ll).
func firstWord(s string) string {
	if s == "" || s[0] == '\'' || !isWordByte(s[0]) {
		return ""
	}
	n := 1
	for n < len(s) && isWordByte(s[n]) {
		n++
	}
	return s[:n]
}

// each calls fn with every match of a term of x in s: the term's index and
// the match's byte offsets. It stops when fn returns false.
func (x *termIndex) each(s string, fn func(k, i, j int) bool) {
	for p := 0; p < len(s); {
		c := s[p]
		if c >= utf8.RuneSelf {
			r, n := utf8.DecodeRuneInString(s[p:])
			for _, k := range x.byRune[r] {
				if t := x.terms[k].text; strings.HasPrefix(s[p:], t) && !fn(k, p, p+len(t)) {
					return
				}
			}
			p += n
			continue
		}
		if !isWordByte(c) || p > 0 && isWordByte(s[p-1]) {
			p++
			continue
		}
		q := p
		for q < len(s) && isWordByte(s[q]) {
			q++
		}
		word := s[p:q]
		try := func(ks []int) bool {
			for _, k := range ks {
				if j, ok := x.terms[k].at(s, p); ok && !fn(k, p, j) {
					return false
				}
			}
			return true
		}
		if x.mayHold(word) && !try(x.byWord[word]) {
			return
		}
		if base, ok := strings.CutSuffix(word, "'s"); ok && x.mayHold(base) && !try(x.byWord[base]) {
			return
		}
		p = q
	}
	for _, k := range x.scan {
		for from := 0; ; {
			i, j := x.terms[k].find(s, from)
			if i < 0 {
				break
			}
			if !fn(k, i, j) {
				return
			}
			from = j
		}
	}
}

// at reports whether the English term t matches s at word start i, and
// where the match ends.
func (t lexTerm) at(s string, i int) (int, bool) {
	if !strings.HasPrefix(s[i:], t.text) {
		return 0, false
	}
	end := i + len(t.text)
	if t.prefix {
		for end < len(s) && isWordByte(s[end]) {
			end++
		}
	}
	return end, end == len(s) || !isWordByte(s[end]) || possessive(s[end:])
}

// possessive reports whether s starts with the 's that may follow a
// noun: "your money's on its way".
func possessive(s string) bool {
	return strings.HasPrefix(s, "'s") && (len(s) == 2 || !isWordByte(s[2]))
}

// isWordByte reports whether b continues an English word. Bytes of
// non-ASCII runes do not: Chinese next to an English word is a boundary.
func isWordByte(b byte) bool {
	return b >= 'a' && b <= 'z' || b >= 'A' && b <= 'Z' || b >= '0' && b <= '9' || b == '\''
}

// readClaims returns the clauses of answer that claim something happened,
// in the agent's own voice: an answer written as JSON is read by its
// string values; quotations, markdown quotes ("> …"), what a document or
// someone says (Reported) and instructions (Instruction, and the list a
// sentence of them opens with a colon) claim nothing.
func (v *vocab) readClaims(answer string) []claim {
	var out []claim
	text := answerText(answer)
	quoted := quotes(text)
	cursor := 0
	list := false   // in the list an instruction opened
	marker := false // the sentence before is a list item's number alone
	for _, sent := range rulekit.Sentences(text) {
		at := cursor + max(strings.Index(text[cursor:], sent), 0)
		cursor = at + len(sent)
		// "1. Pack them" is two sentences: the number, then the item.
		item := isListItem(sent) || marker
		marker = isListMarker(sent)
		if list && item || strings.HasPrefix(sent, ">") {
			continue
		}
		list = false
		norm := normaliseAnswer(unquoted(text, at, at+len(sent), quoted))
		clauses := v.splitClauses(norm)
		// A negated clause takes back what the clauses before it in the
		// sentence claimed, unless it speaks to the user (an aside, a
		// hedge): "I've sent the text, but it bounced". What comes after
		// it stands: "The text bounced, so I've e-mailed you".
		start := len(out)
		// quoting is set from a clause on that says what someone else says
		// (Reported) or tells the user how to do something (Instruction):
		// the rest of the sentence is not the agent's claim.
		conditional, quoting := false, false
		from := 0
		for _, cl := range clauses {
			off := from + max(strings.Index(norm[from:], cl), 0)
			from = off + len(cl)
			tail := norm[from:]
			cl = v.dropCourtesy(cl)
			sets, spans := v.sets.scan(cl, v.spanned)
			conditional = conditional || sets&(1<<setCondition) != 0
			if sets&(1<<setInstruction) != 0 {
				end := strings.TrimSpace(sent)
				quoting, list = true, strings.HasSuffix(end, ":") || strings.HasSuffix(end, "：")
			}
			quoting = quoting || sets&(1<<setReported) != 0
			neg := sets&(1<<setNeg) != 0
			aside := quoting || conditional || sets&(1<<setHedge|1<<setAside) != 0 || endsQuestion(cl)
			if neg && !aside {
				out = out[:start]
			}
			if neg || aside {
				continue
			}
			if c, ok := v.readClause(cl, sets, spans, tail); ok {
				c.sentence = strings.TrimSpace(sent)
				out = append(out, c)
			}
		}
	}
	return out
}

// spanned selects the lists whose terms readClause needs the places of:
// the completion markers, general and per channel, and Future.
func (v *vocab) spanned(list int) bool {
	return list == setDone || list == setFuture || list >= setChannelDone
}

// byUser reports whether the text before a Did word makes the user its
// actor.
func (v *vocab) byUser(before string) bool {
	for _, t := range v.userDid {
		if rest, ok := cutWordSuffix(before, t); ok {
			return !endsWithAny(rest, v.forUser)
		}
	}
	return false
}

// cutWordSuffix returns s, less trailing spaces, without t at its end, if
// it ends with t as a whole word.
func cutWordSuffix(s string, t lexTerm) (string, bool) {
	s = strings.TrimRight(s, " ")
	if !strings.HasSuffix(s, t.text) {
		return s, false
	}
	rest := s[:len(s)-len(t.text)]
	if t.latin && rest != "" && isWordByte(rest[len(rest)-1]) {
		return s, false
	}
	return rest, true
}

// endsWithAny reports whether s, less trailing spaces, ends with one of
// terms, as a whole word.
func endsWithAny(s string, terms []lexTerm) bool {
	for _, t := range terms {
		if _, ok := cutWordSuffix(s, t); ok {
			return true
		}
	}
	return false
}

// dropCourtesy blanks out the courtesy phrases of a clause.
func (v *vocab) dropCourtesy(cl string) string {
	for _, t := range v.courtesy {
		for {
			i, j := t.find(cl, 0)
			if i < 0 {
				break
			}
			cl = cl[:i] + strings.Repeat(" ", j-i) + cl[j:]
		}
	}
	return cl
}

// termMatch is a term of v.terms (k) at cl[i:j].
type termMatch struct{ k, i, j int }

// claimTerms returns the channel terms of a normalised text, longest
// first, each where no longer term took its words: "email address" takes
// its words before "address" can; the same word may serve several
// channels.
func (v *vocab) claimTerms(cl string) []termMatch {
	var matches []termMatch
	v.index.each(cl, func(k, i, j int) bool {
		matches = append(matches, termMatch{k, i, j})
		return true
	})
	slices.SortFunc(matches, func(a, b termMatch) int {
		if a.k != b.k {
			return a.k - b.k
		}
		return a.i - b.i
	})
	kept := matches[:0]
	for _, m := range matches {
		if !slices.ContainsFunc(kept, func(o termMatch) bool {
			return m.i < o.j && o.i < m.j && (m.i != o.i || m.j != o.j)
		}) {
			kept = append(kept, m)
		}
	}
	return kept
}

// readClause reads one normalised clause that is neither negated nor
// hedged: sets are the lists of clauseWords it holds, spans where the
// terms of the lists v.spanned selects are, and tail the rest of its
// sentence.
func (v *vocab) readClause(cl string, sets uint64, spans []listSpan, tail string) (claim, bool) {
	var mention, verb, nounThenWeak channelSet
	type found struct {
		chans channelSet
		did   bool
		first bool      // a Did word whose actor is the agent
		at    termMatch // a noun's place
	}
	var terms []found
	nounRank, nounTop := -1, channelSet(0) // the channels of the highest rank the clause names by a noun
	for _, m := range v.claimTerms(cl) {
		t, i, j := v.terms[m.k], m.i, m.j
		switch t.kind {
		case kindNoun:
			mention |= t.chans
			terms = append(terms, found{chans: t.chans, at: m})
			// 退款了, 邮箱里了, 手机上了
			rest := cl[j:]
			if w := startsWith(rest, v.place); w != "" {
				rest = rest[len(w):]
			}
			if startsWith(rest, v.weak) != "" {
				nounThenWeak |= t.chans
			}
			if r := v.rank(t.chans); r > nounRank {
				nounRank, nounTop = r, t.chans
			} else if r == nounRank {
				nounTop |= t.chans
			}
		case kindDid:
			mention |= t.chans
			switch v.actorOf(cl, i, j, tail) {
			case actorAgent:
				terms = append(terms, found{chans: t.chans, did: true, first: true})
			case actorNone:
				terms = append(terms, found{chans: t.chans, did: true})
			}
		case kindVerb:
			verb |= t.chans
		}
	}
	has := func(set int) bool { return sets&(1<<set) != 0 }
	c := claim{clause: cl, personal: has(setPerson), agented: containsTerm(cl, v.agent) || containsTerm(cl, v.agentWide)}
	strong := has(setDone)
	c.sent = mention&v.messaging == 0 && has(setSent)
	c.bare = mention == 0 && has(setBare) && shortClause(cl)
	c.done = strong || c.sent
	for i, done := range v.channelDone {
		if done && has(setChannelDone+i) {
			c.ownDone |= channelSet(1) << i
		}
	}
	for _, sp := range spans {
		// In English, what will happen: a claim only as a delivery to the
		// user ("you'll get", "you will receive"). In Chinese the Future
		// words only keep a claim from being the agent's (actorOf):
		// "稍后您的邮箱里会有一封确认邮件" is a delivery all the same.
		if sp.list == setFuture && cl[sp.i] < utf8.RuneSelf {
			c.future = true
			c.toUser = c.toUser || v.actorOf(cl, sp.i, sp.j, tail) == actorUser
		}
	}
	// The channels whose mention this clause completes.
	weak := has(setWeak)
	var complete channelSet
	for i := range v.channels {
		bit := channelSet(1) << i
		switch {
		case mention&bit == 0:
		case v.channelDone[i]:
			complete |= c.ownDone & bit
		case strong:
			complete |= bit
		case weak && (verb|nounThenWeak)&bit != 0:
			complete |= bit
		}
	}
	for _, f := range terms {
		if f.did {
			// A Did word claims, as a tool's name does, the channel of the
			// highest rank its clause names, when that is a channel no
			// claim of which stands on a call's absence alone (a hand-off,
			// an address): "I've transferred your case to a human agent"
			// is a hand-off, not a payment.
			if nounRank > v.rank(f.chans) && nounTop&v.absent == 0 {
				f.chans = nounTop
			}
			c.terms = append(c.terms, term{f.chans, f.first})
			continue
		}
		ch := f.chans & complete
		if ch == 0 {
			continue
		}
		switch v.completedBy(cl, f.at, ch, spans, tail) {
		case actorAgent:
			c.terms = append(c.terms, term{ch, true})
		case actorNone:
			c.terms = append(c.terms, term{ch, false})
		}
	}
	return c, len(c.terms) > 0 || c.sent || c.bare || c.done || c.ownDone != 0
}

// completedBy returns the actor of the completion of the noun at m in cl,
// of channels ch: the agent when one of its markers has the agent as its
// subject ("I've sent the e-mail"), someone else when every one has
// ("he has sent the e-mail"), else no one. In scripts without spaces, and
// for a noun a Weak particle completes (退款了), the actor of the noun.
func (v *vocab) completedBy(cl string, m termMatch, ch channelSet, spans []listSpan, tail string) actor {
	if cl[m.i] >= utf8.RuneSelf {
		return v.actorOf(cl, m.i, m.j, tail)
	}
	n, others := 0, 0
	for _, sp := range spans {
		if !v.completes(sp.list, ch) {
			continue
		}
		n++
		switch a := v.actorOf(cl, sp.i, sp.j, tail); {
		case a == actorAgent && !endsWithAny(cl[sp.i:sp.j], v.aux):
			return actorAgent // "I've already": an Aux word is not the verb
		case a == actorOther || a == actorUser:
			others++
		}
	}
	if n > 0 && others == n {
		return actorOther
	}
	if n == 0 {
		return v.actorOf(cl, m.i, m.j, tail)
	}
	return actorNone
}

// completes reports whether a term of list completes a noun of one of
// channels ch: the general Done list, or a channel's own.
func (v *vocab) completes(list int, ch channelSet) bool {
	for i := range v.channels {
		if ch&(channelSet(1)<<i) == 0 {
			continue
		}
		if v.channelDone[i] && list == setChannelDone+i || !v.channelDone[i] && list == setDone {
			return true
		}
	}
	return false
}

// rank returns the highest rank of channels ch.
func (v *vocab) rank(ch channelSet) int {
	r := -1
	for i, c := range v.channels {
		if ch&(channelSet(1)<<i) != 0 && c.Rank > r {
			r = c.Rank
		}
	}
	return r
}

// startsWith returns the word of words that s starts with, or "".
func startsWith(s string, words []string) string {
	for _, w := range words {
		if strings.HasPrefix(s, w) {
			return w
		}
	}
	return ""
}

// shortClause reports whether a clause is short enough for a bare "done"
// to be about the turn's action: six English words, or twelve runes.
func shortClause(cl string) bool {
	if utf8.RuneCountInString(cl) <= 12 {
		return true
	}
	return len(strings.Fields(cl)) <= 6 && !strings.ContainsFunc(cl, func(r rune) bool { return r >= 0x2E80 })
}

func endsQuestion(cl string) bool {
	cl = strings.TrimRightFunc(cl, func(r rune) bool { return unicode.IsSpace(r) || r == '"' || r == '”' || r == ')' })
	return strings.HasSuffix(cl, "?") || strings.HasSuffix(cl, "？")
}

// normaliseAnswer lower-cases s, writes every apostrophe as ' and folds
// runs of white space into one space.
func normaliseAnswer(s string) string {
	var b strings.Builder
	b.Grow(len(s))
	space := false
	for _, r := range s {
		// strings.ToLower(s) lowers rune by rune with unicode.ToLower,
		// as here, without a copy of s.
		if r < utf8.RuneSelf {
			if 'A' <= r && r <= 'Z' {
				r += 'a' - 'A'
			}
		} else {
			r = unicode.ToLower(r)
		}
		switch {
		case r == '’' || r == '‘' || r == '`' || r == '´' || r == '＇':
			r = '\''
		case unicode.IsSpace(r):
			space = true
			continue
		}
		if space && b.Len() > 0 {
			b.WriteByte(' ')
		}
		space = false
		b.WriteRune(r)
	}
	return b.String()
}

// splitClauses splits a normalised sentence into clauses: at commas and
// semicolons (not in 1,280), colons before a space, dashes between spaces,
// and before the words of claimVocabulary.Breaks.
func (v *vocab) splitClauses(s string) []string {
	var parts []string
	start := 0
	cut := func(i, next int) {
		if p := strings.TrimSpace(s[start:i]); p != "" {
			parts = append(parts, p)
		}
		start = next
	}
	for i, r := range s {
		n := i + utf8.RuneLen(r)
		next, _ := utf8.DecodeRuneInString(s[n:])
		switch r {
		case '，', '；', '：', ';', '—', '–':
			cut(i, n)
		case ',', ':':
			if n == len(s) || next == ' ' {
				cut(i, n)
			}
		case '-':
			if i > 0 && s[i-1] == ' ' && next == ' ' {
				cut(i, n)
			}
		}
	}
	cut(len(s), len(s))
	var out []string
	for _, p := range parts {
		out = append(out, v.splitBreaks(p)...)
	}
	return out
}

// splitBreaks splits a clause before each break word.
func (v *vocab) splitBreaks(p string) []string {
	var cuts []int
	for _, b := range v.breaks {
		for from := 0; ; {
			i, j := b.find(p, from)
			if i < 0 {
				break
			}
			if i > 0 {
				cuts = append(cuts, i)
			}
			from = j
		}
	}
	if len(cuts) == 0 {
		return []string{p}
	}
	slices.Sort(cuts)
	var out []string
	start := 0
	for _, c := range cuts {
		if s := strings.TrimSpace(p[start:c]); s != "" {
			out = append(out, s)
		}
		start = c
	}
	if s := strings.TrimSpace(p[start:]); s != "" {
		out = append(out, s)
	}
	return out
}

// pastFact matches a clause in the simple past passive with no perfect
// aspect ("the flight was canceled", "your order was paid via gift card"):
// it states what the records say happened before, where "has been
// refunded" or "I've cancelled" claim an action of this conversation. A
// call never made can only be claimed in the second form.
var (
	simplePastPassive = regexp.MustCompile(`\b(?:was|were)\s+(?:\w+\s+)?\w+(?:ed|en|id|ue)\b`)
	perfectAspect     = regexp.MustCompile(`\b(?:has|have|had|i|we)\b|'ve\b|'s been\b`)
)

func pastFact(clause string) bool {
	return simplePastPassive.MatchString(clause) && !perfectAspect.MatchString(clause)
}
