package claims

import (
	"encoding/json"
	"errors"
	"io"
	"strings"
	"unicode/utf8"

	"github.com/agentguard/agentguard/guard/internal/rulekit"
)

// This file reads who a claim is told of: the actor of its verb (the
// agent, the user, someone else, or no one named), the parts of an answer
// that are not the agent's own voice (quotations, what a document says,
// instructions), and what the user asked for. The words are the lexicon's
// (lexicon.Claims: Agent, Aux, Passive, ThirdParty, Possessive, Source,
// Reported, Instruction, Future, Request, Copula).

// actor is who a clause says did what its Did or Done word says.
type actor uint8

const (
	actorNone  actor = iota // no one named: "refunded", "your refund has been processed"
	actorAgent              // "I've sent", "we have refunded", "已为您申请"
	actorUser               // "what you paid", "您已支付"
	actorOther              // "the employees who sent them", "sent from security@…"
)

// actorOf returns the actor of the word at cl[i:j] of a normalised
// clause; tail is the rest of its sentence after the clause. In English
// the actor is the subject right before the word, Aux words aside, unless
// a Passive auxiliary stands there ("has been sent"): then it is the one a
// Source word after it names, if any. In scripts without spaces it is the
// agent when the clause holds an Agent word and no Future word.
func (v *vocab) actorOf(cl string, i, j int, tail string) actor {
	if i < len(cl) && cl[i] >= utf8.RuneSelf {
		switch {
		case v.byUser(cl[:i]):
			return actorUser
		case containsTerm(cl, v.futureWide):
			return actorNone // 会, 稍后: what will happen, whoever does it
		case containsTerm(cl, v.agentWide):
			return actorAgent
		}
		return actorNone
	}
	before := strings.TrimRight(cl[:i], " ")
	passive := false
	for {
		if rest, ok := cutAnySuffix(before, v.aux); ok {
			before = rest
			continue
		}
		if rest, ok := cutAnySuffix(before, v.passive); ok {
			before, passive = rest, true
			continue
		}
		break
	}
	after := cl[j:] + " " + tail
	switch {
	case passive:
		if v.namesOther(after) {
			return actorOther
		}
		return actorNone
	case endsWithAny(before, v.agent):
		return actorAgent
	case v.byUser(before):
		return actorUser
	case endsWithAny(before, v.third):
		return actorOther
	}
	// "your colleague transferred": a Possessive and one word.
	if w := lastWord(before); w != "" {
		if rest := strings.TrimRight(before[:len(before)-len(w)], " "); endsWithAny(rest, v.possessive) && !v.namesChannel(w) {
			return actorOther
		}
	}
	if v.namesOther(after) {
		return actorOther
	}
	return actorNone
}

// namesOther reports whether the first Source word of s introduces
// someone else: an e-mail address or a ThirdParty word follows it.
func (v *vocab) namesOther(s string) bool {
	at, end := -1, -1
	for _, t := range v.source {
		if i, j := t.find(s, 0); i >= 0 && (at < 0 || i < at) {
			at, end = i, j
		}
	}
	if at < 0 {
		return false
	}
	next := firstField(s[end:])
	if strings.Contains(next, "@") && rulekit.IsEmail(strings.Trim(next, ".,;:!?()<>")) {
		return true
	}
	for _, t := range v.third {
		if i, _ := t.find(s[end:], 0); i >= 0 && strings.TrimSpace(s[end:end+i]) == "" {
			return true
		}
	}
	return false
}

// namesChannel reports whether word is one of a channel's nouns: "your
// refund processed" names the thing acted on, not an actor.
func (v *vocab) namesChannel(word string) bool {
	found := false
	v.index.each(word, func(k, i, j int) bool {
		found = v.terms[k].kind == kindNoun && i == 0 && j == len(word)
		return !found
	})
	return found
}

// cutAnySuffix cuts the first of terms s ends with, as a whole word.
func cutAnySuffix(s string, terms []lexTerm) (string, bool) {
	for _, t := range terms {
		if rest, ok := cutWordSuffix(s, t); ok {
			return strings.TrimRight(rest, " "), true
		}
	}
	return s, false
}

// lastWord returns the last run of word bytes s ends with.
func lastWord(s string) string {
	n := len(s)
	for n > 0 && isWordByte(s[n-1]) {
		n--
	}
	return s[n:]
}

// firstField returns the first space-separated field of s.
func firstField(s string) string {
	f, _, _ := strings.Cut(strings.TrimLeft(s, " "), " ")
	return f
}

// containsTerm reports whether s holds one of terms.
func containsTerm(s string, terms []lexTerm) bool {
	for _, t := range terms {
		if i, _ := t.find(s, 0); i >= 0 {
			return true
		}
	}
	return false
}

// answerText returns the text of an answer to read claims in: the string
// values of an answer written as a JSON object or array, one a line, in
// their order, for an agent that answers in JSON; else the answer.
func answerText(answer string) string {
	s := strings.TrimSpace(answer)
	if s == "" || s[0] != '{' && s[0] != '[' {
		return answer
	}
	dec := json.NewDecoder(strings.NewReader(s))
	type frame struct{ object, key bool } // key: the next string is a key
	var stack []frame
	var b strings.Builder
	for {
		tok, err := dec.Token()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			return answer
		}
		switch tok := tok.(type) {
		case json.Delim:
			if tok == '{' || tok == '[' {
				stack = append(stack, frame{object: tok == '{', key: tok == '{'})
				continue
			}
			stack = stack[:len(stack)-1]
		case string:
			if n := len(stack); n > 0 && stack[n-1].object && stack[n-1].key {
				stack[n-1].key = false
				continue
			}
			b.WriteString(tok)
			b.WriteByte('\n')
		}
		if n := len(stack); n > 0 && stack[n-1].object {
			stack[n-1].key = true // a value was read: a key comes next
		}
	}
	if b.Len() == 0 {
		return answer
	}
	return b.String()
}

// quotes pairs the quotation marks of a text: each byte offset of an
// opening mark that has its closing mark later in the text, with the
// offset just past it. Straight double quotes pair in order; curly and
// corner quotes by their direction. A mark with no partner opens nothing.
func quotes(text string) [][2]int {
	var out [][2]int
	open := map[rune]int{} // the offset of an opening mark not yet closed, by its closing mark
	for i, r := range text {
		var closer rune
		switch r {
		case '"':
			if at, ok := open['"']; ok {
				out = append(out, [2]int{at, i + 1})
				delete(open, '"')
				continue
			}
			closer = '"'
		case '“':
			closer = '”'
		case '「':
			closer = '」'
		case '『':
			closer = '』'
		case '”', '」', '』':
			if at, ok := open[r]; ok {
				out = append(out, [2]int{at, i + utf8.RuneLen(r)})
				delete(open, r)
			}
			continue
		default:
			continue
		}
		if _, ok := open[closer]; !ok {
			open[closer] = i
		}
	}
	return out
}

// unquoted returns text[from:to] with every quoted span of spans
// (quotes) blanked out, byte for byte.
func unquoted(text string, from, to int, spans [][2]int) string {
	s := text[from:to]
	var b []byte
	for _, q := range spans {
		i, j := max(q[0], from), min(q[1], to)
		if i >= j {
			continue
		}
		if b == nil {
			b = []byte(s)
		}
		for k := i; k < j; k++ {
			b[k-from] = ' '
		}
	}
	if b == nil {
		return s
	}
	return string(b)
}

// isListItem reports whether a sentence starts as an item of a list: a
// dash, a bullet or a number and a dot.
func isListItem(sent string) bool {
	s := strings.TrimSpace(sent)
	if s == "" {
		return false
	}
	if strings.HasPrefix(s, "-") || strings.HasPrefix(s, "*") || strings.HasPrefix(s, "•") {
		return true
	}
	n := 0
	for n < len(s) && s[n] >= '0' && s[n] <= '9' {
		n++
	}
	return n > 0 && n < len(s) && (s[n] == '.' || s[n] == ')')
}

// isListMarker reports whether a sentence is only a list item's number:
// "1." or "2)".
func isListMarker(sent string) bool {
	s := strings.TrimSpace(sent)
	return len(s) > 1 && isListItem(s) && strings.TrimRight(s, "0123456789.)") == ""
}

// askedIn returns the channels a user turn asks for: in a sentence with a
// Request word, or that starts with the channel's word ("Text me the
// link"), a word of the channel (noun, Did or verb) in a clause that is
// not negated ("I don't remember the email on my account") and not
// followed by a Copula word ("my email is …").
func (v *vocab) askedIn(turn string) channelSet {
	var out channelSet
	for _, sent := range rulekit.Sentences(turn) {
		norm := normaliseAnswer(sent)
		request := containsTerm(norm, v.request)
		var chans channelSet
		for n, cl := range v.splitClauses(norm) {
			if v.sets.in(v.dropCourtesy(cl))&(1<<setNeg) != 0 {
				continue
			}
			for _, m := range v.claimTerms(cl) {
				t := v.terms[m.k]
				if t.chans == 0 || v.copulaAt(cl[m.j:]) {
					continue
				}
				request = request || n == 0 && m.i == 0
				chans |= t.chans
			}
		}
		if request {
			out |= chans
		}
	}
	return out
}

// copulaAt reports whether s starts with a Copula word.
func (v *vocab) copulaAt(s string) bool {
	s = strings.TrimLeft(s, " ")
	for _, t := range v.copula {
		if j, ok := t.at(s, 0); ok && j > 0 || !t.latin && strings.HasPrefix(s, t.text) {
			return true
		}
	}
	return false
}
