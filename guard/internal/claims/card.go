package claims

import (
	"fmt"
	"math/bits"
	"slices"
	"strings"

	"github.com/agentguard/agentguard/guard/internal/rulekit"
	"github.com/agentguard/agentguard/guard/rules"
	"github.com/agentguard/agentguard/memory"
	"github.com/agentguard/agentguard/trace"
	"github.com/agentguard/agentguard/trace/lexicon"
)

// NewCardAnswers returns the memory-answer rule: a final answer that
// forgets the memory card. Tool calls against the card are the
// enforcer's (memory.Enforcer); this rule reads what the agent tells the
// user, since a reply can break a constraint no call does ("I'll text you
// the tracking number" to a user who said "don't text me"). It judges by
// two facts, each in the finding:
//
//   - the card: an active prohibition of a channel (sms, email, call,
//     push; "contact" is all four) with no time window, or an address the
//     user replaced by another, and the turn that said so;
//   - the answer's sentence, read as the false-claim rule reads answers:
//     the agent's own clause (not quoted, not what a document says, not an
//     instruction, not negated — "I won't text you" keeps the ban) that
//     uses the channel to reach the user. A use is a Did word of exactly
//     that channel ("I've texted you", "已致电") whose actor is not the
//     user, or a noun of exactly that channel ("text", "短信"; not one
//     several channels share, such as "手机") with a completion or future
//     marker ("you'll get a text", "稍后会发短信") and not followed by
//     what names a contact detail ("your text number", "短信号码").
//     For an address, a sentence that names the replaced address and not
//     the current one, not negated.
//
// A use is told (a claim, a promise, "you'll get a text when it ships",
// conditions included): Retry, an error, the agent is asked to answer
// again within the card. An offer or a question ("shall I text you the
// receipt?") is a warning (Allow): the agent asks before it breaks the
// ban. A stale address told as where things go is Clarify, an error.
//
// The card is the enforcer's for the answer's turn, so the rule finds the
// same online and offline; an answer is read only when the card holds a
// constraint it could break.
func NewCardAnswers(tools *rulekit.Tools, card memory.Enforcer) *CardRule {
	w := tools.Words()
	return &CardRule{card: card, v: vocabOf(w), ids: cardWordsOf(w)}
}

// CardRule is the memory-answer rule.
type CardRule struct {
	card memory.Enforcer
	v    *vocab
	ids  *cardWords
}

// Name returns rules.MemoryAnswer.
func (r *CardRule) Name() string { return rules.MemoryAnswer }

// ToolOnly is false: the rule judges answers.
func (r *CardRule) ToolOnly() bool { return false }

// JudgesTool is false: the rule judges no tool call.
func (r *CardRule) JudgesTool(string, rulekit.Tool) bool { return false }

// Check judges an answer against the card of its turn.
func (r *CardRule) Check(t *trace.Trace, s *trace.Step) []trace.Finding {
	if !isAnswer(s) {
		return nil
	}
	// The card of the answer's turn, not of turns after it (an offline
	// trace holds them all). Online the answer's Turn may not be set yet:
	// the last step recorded tells it, as for the enforcer.
	upTo := s.Turn
	if n := len(t.Steps); n > 0 && t.Steps[n-1] != nil {
		upTo = max(upTo, t.Steps[n-1].Turn)
	}
	card := r.card.CardAt(t, upTo)
	history := append(card.ActiveOf(memory.KindProhibition), card.ActiveOf(memory.KindAddress)...)
	if len(history) == 0 {
		return nil
	}
	var banned channelSet
	bans := map[int]memory.Constraint{} // channel index -> the prohibition
	var replaced []memory.Constraint
	current := map[string]memory.Constraint{}
	for _, c := range history {
		switch {
		case c.Kind == memory.KindProhibition && c.Status == memory.Active && !windowed(c.Value):
			for i, ch := range r.v.channels {
				if c.Key == ch.Name && r.ids.memoryChannel(ch.Name) || c.Key == "contact" && r.ids.memoryChannel(ch.Name) {
					banned |= channelSet(1) << i
					bans[i] = c
				}
			}
		case c.Kind == memory.KindAddress && c.Status == memory.Superseded:
			replaced = append(replaced, c)
		case c.Kind == memory.KindAddress && c.Status == memory.Active:
			current[c.Key] = c
		}
	}
	if banned == 0 && len(replaced) == 0 {
		return nil
	}
	var out []trace.Finding
	seen := channelSet(0)
	for _, u := range r.v.readUses(s.Result, banned, r.ids) {
		ch := u.chans &^ seen
		if ch == 0 {
			continue
		}
		i := bits.TrailingZeros32(uint32(ch))
		seen |= channelSet(1) << i
		ban := bans[i]
		name := r.v.channels[i].Name
		f := trace.Finding{
			Rule: rules.MemoryAnswer, Step: s.Index, Verdict: trace.Retry, Dimension: trace.Memory, Severity: trace.SeverityError,
			Message:  fmt.Sprintf("the answer reaches the user by %s, which the user prohibited in turn %d: %q", name, ban.Turn, ban.Value),
			Evidence: rulekit.Clip(u.sentence, rulekit.MaxEvidence), Tags: []string{"memory", "prohibition", ban.Key},
		}
		says := "tells the user they are reached by " + name
		if u.offer {
			f.Verdict, f.Severity = trace.Allow, trace.SeverityWarning
			f.Message = fmt.Sprintf("the answer offers %s, which the user prohibited in turn %d: %q", name, ban.Turn, ban.Value)
			says = "offers " + name
		}
		f.Facts = []trace.Fact{rulekit.AnswerFact(s, u.sentence, says), cardFact(ban, "prohibition "+ban.Key)}
		out = append(out, f)
	}
	for _, old := range replaced {
		now, ok := current[old.Key]
		if !ok || memory.SameAddress(old.Value, now.Value) {
			continue
		}
		sent, ok := r.v.namesAddress(s.Result, old.Value, now.Value)
		if !ok {
			continue
		}
		was := cardFact(old, "replaced "+old.Key+" address")
		was.Says = fmt.Sprintf("replaced in turn %d", old.Ended)
		out = append(out, trace.Finding{
			Rule: rules.MemoryAnswer, Step: s.Index, Verdict: trace.Clarify, Dimension: trace.Memory, Severity: trace.SeverityError,
			Message:  fmt.Sprintf("the answer names the %s address %q, which the user replaced in turn %d by %q", old.Key, old.Value, old.Ended, now.Value),
			Evidence: rulekit.Clip(sent, rulekit.MaxEvidence), Tags: []string{"memory", "stale-address"},
			Facts: []trace.Fact{
				rulekit.AnswerFact(s, sent, "names the replaced address"), was, cardFact(now, "current "+now.Key+" address"),
			},
		})
		break // one stale address is enough to ask again
	}
	return out
}

// windowed reports whether a prohibition's value is a time window ("before
// 09:00"): an answer's time is not read, so the ban is not judged.
func windowed(v string) bool {
	return strings.Contains(v, "..") || strings.HasPrefix(v, "before ") || strings.HasPrefix(v, "after ")
}

// cardFact is the fact of a constraint on the card.
func cardFact(c memory.Constraint, what string) trace.Fact {
	return trace.Fact{Kind: trace.FactCard, Step: -1, Turn: c.Turn, Where: what, Text: rulekit.FactText(c.Value)}
}

// use is a sentence of an answer that reaches the user by a channel.
type use struct {
	sentence string
	chans    channelSet
	offer    bool // asked or offered, not told
}

// cardWords are the words the rule reads beside the claims vocabulary:
// the memory channels' names, what names a contact detail after a
// channel's noun (the lexicon's Memory.PhoneCues and AddressWords), and
// how a user tells a ban (Memory.Negation).
type cardWords struct {
	channels map[string]bool
	detail   []lexTerm // after a noun: "number", "地址"
	address  []lexTerm // in a noun: "email address"
	bans     []lexTerm // how a ban is told: Memory.Negation
	you      []lexTerm // the user as an object: Claims.Person and UserDid both
}

type cardWordsKey struct{}

func cardWordsOf(w *lexicon.Compiled) *cardWords {
	return w.Derived(cardWordsKey{}, func() any {
		cw := &cardWords{channels: map[string]bool{}}
		for _, ch := range w.Memory.Channels {
			cw.channels[ch.Name] = ch.Name != "contact"
		}
		cw.address = compileTerms(w.Memory.AddressWords)
		cw.detail = compileTerms(append(append([]string{}, w.Memory.PhoneCues...), w.Memory.AddressWords...))
		cw.bans = compileTerms(w.Memory.Negation)
		var you []string
		for _, p := range w.Claims.Person {
			if slices.Contains(w.Claims.UserDid, p) {
				you = append(you, p)
			}
		}
		cw.you = compileTerms(you)
		return cw
	}).(*cardWords)
}

// memoryChannel reports whether name is a channel the card prohibits by
// its own key.
func (cw *cardWords) memoryChannel(name string) bool { return cw.channels[name] }

// toYou reports whether s opens with the user as an object: a word both
// of the lexicon's Person and UserDid lists ("you", "您").
func (cw *cardWords) toYou(s string) bool {
	s = strings.TrimLeft(s, " ")
	for _, t := range cw.you {
		if i, j := t.find(s, 0); i == 0 && (j == len(s) || !isWordByte(s[j])) {
			return true
		}
	}
	return false
}

// namesDetail reports whether s opens with a contact detail's word.
func (cw *cardWords) namesDetail(s string) bool {
	s = strings.TrimLeft(s, " ")
	for _, t := range cw.detail {
		if i, _ := t.find(s, 0); i == 0 {
			return true
		}
	}
	return false
}

// readUses returns the sentences of answer whose clauses, in the agent's
// own voice and not negated, reach the user by one of channels.
func (v *vocab) readUses(answer string, channels channelSet, cw *cardWords) []use {
	if channels == 0 || !v.mayClaim(answer, channels) {
		return nil
	}
	var out []use
	v.eachClause(answer, func(sent, cl string, sets uint64, spans []listSpan, tail string) {
		offer := sets&(1<<setHedge) != 0 || endsQuestion(cl)
		if sets&(1<<setNeg) != 0 || !offer && containsTerm(cl, cw.bans) {
			// "I won't text you", "您说过不要发短信": the ban, kept or told
			// back ("要不要" asks, it tells no ban).
			return
		}
		var ch, nouns, verbs channelSet
		marked := sets&(1<<setDone|1<<setFuture) != 0 || containsTerm(cl, v.futureWide)
		for _, m := range v.claimTerms(cl) {
			t := v.terms[m.k]
			switch {
			case t.kind == kindVerb:
				verbs |= t.chans // 发, 打: what a noun of its channel is sent by
			case t.chans&channels == 0 || bits.OnesCount32(uint32(t.chans)) != 1:
			case t.kind == kindDid:
				// The agent's or no one's; someone else's only when it
				// reached the user: "the courier called you", not "he
				// called the number your neighbour gave him".
				switch v.actorOf(cl, m.i, m.j, tail) {
				case actorUser:
				case actorOther:
					if cw.toYou(cl[m.j:]) {
						ch |= t.chans
					}
				default:
					ch |= t.chans
				}
			case t.kind == kindNoun:
				if containsTerm(t.text, cw.address) || cw.namesDetail(cl[m.j:]) {
					break // "email address", "短信号码": a contact detail
				}
				if cw.toYou(cl[m.j:]) {
					ch |= t.chans // the noun as a verb: "text you", "email you"
				}
				nouns |= t.chans // "text", "短信"
			}
		}
		// A noun reaches the user with a completion or future marker, a
		// verb of its channel, or, in scripts without spaces, an Agent
		// word that addresses the user: "给您来电确认".
		if marked || containsTerm(cl, v.agentWide) {
			ch |= nouns
		} else {
			ch |= nouns & verbs // "用短信发给您"
		}
		if ch == 0 {
			return
		}
		if n := len(out); n > 0 && out[n-1].sentence == sent {
			out[n-1].chans |= ch
			out[n-1].offer = out[n-1].offer && offer
			return
		}
		out = append(out, use{sentence: sent, chans: ch, offer: offer})
	})
	return out
}

// namesAddress returns the first sentence of answer that names old and
// not now, in clauses of the agent's none of which is negated.
func (v *vocab) namesAddress(answer, old, now string) (string, bool) {
	if !memory.SameAddress(answer, old) {
		return "", false // the common case: the answer does not name it
	}
	// An address spans clauses ("12 Oak Street, Springfield"): the
	// sentence names it; a negated clause anywhere in it takes it back.
	var names []string
	negated := map[string]bool{}
	v.eachClause(answer, func(sent, _ string, sets uint64, _ []listSpan, _ string) {
		switch {
		case sets&(1<<setNeg) != 0:
			negated[sent] = true
		case len(names) > 0 && names[len(names)-1] == sent:
		case memory.SameAddress(sent, old) && !memory.SameAddress(sent, now):
			names = append(names, sent)
		}
	})
	for _, sent := range names {
		if !negated[sent] {
			return sent, true
		}
	}
	return "", false
}

// eachClause calls fn with each clause of answer that is the agent's own:
// not in a quotation or a markdown quote, not what a document or someone
// says (Reported) and not an instruction or the list it opens. sent is the
// clause's sentence as written, cl the clause normalised, sets and spans
// as termSets.scan gives them, tail the rest of the sentence.
func (v *vocab) eachClause(answer string, fn func(sent, cl string, sets uint64, spans []listSpan, tail string)) {
	text := answerText(answer)
	quoted := quotes(text)
	cursor := 0
	list, marker := false, false
	for _, sent := range rulekit.Sentences(text) {
		at := cursor + max(strings.Index(text[cursor:], sent), 0)
		cursor = at + len(sent)
		item := isListItem(sent) || marker
		marker = isListMarker(sent)
		if list && item || strings.HasPrefix(sent, ">") {
			continue
		}
		list = false
		norm := normaliseAnswer(unquoted(text, at, at+len(sent), quoted))
		from := 0
		for _, cl := range v.splitClauses(norm) {
			off := from + max(strings.Index(norm[from:], cl), 0)
			from = off + len(cl)
			tail := norm[from:]
			cl = v.dropCourtesy(cl)
			sets, spans := v.sets.scan(cl, v.spanned)
			if sets&(1<<setInstruction) != 0 {
				end := strings.TrimSpace(sent)
				list = strings.HasSuffix(end, ":") || strings.HasSuffix(end, "：")
				break
			}
			if sets&(1<<setReported) != 0 {
				break
			}
			fn(strings.TrimSpace(sent), cl, sets, spans, tail)
		}
	}
}
