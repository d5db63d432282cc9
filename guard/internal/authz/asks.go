package authz

import (
	"maps"
	"slices"
	"strings"
	"unicode"
	"unicode/utf8"

	"github.com/agentguard/agentguard/guard/internal/rulekit"
	"github.com/agentguard/agentguard/trace/lexicon"
)

// This file reads what a text asks the agent to do: the requests of a
// user's turn (or of content the user handed the task to), each a verb of
// a family of action with what it acts on, as the lexicon's Actions group
// words them. A clause asks for the action of its first verb when nothing
// before that verb makes it a statement or a question: "check how much
// they sent me and send them back the difference" asks to check, then to
// send (pay) back; "summarise my latest email" asks to summarise, and for
// no write; "can I still cancel it?" asks a question.

// role is what a phrase of the vocabulary does in a clause.
type role uint16

const (
	roleVerb       role = 1 << iota // a verb of a family of action
	roleRead                        // a verb that only reads
	roleMarker                      // makes what follows a request
	roleFiller                      // says nothing
	roleFronting                    // starts a phrase before the verb
	roleTowards                     // starts a phrase of where the action goes
	roleSubject                     // makes the clause a statement or a question
	roleAux                         // the same; after a verb, makes it a noun
	roleNegation                    // makes the clause no request
	roleJoin                        // starts a new clause
	roleSeveral                     // asks for more than one action
	roleDeterminer                  // "the", "my": may follow a marker
	roleMark                        // picks a family of a verb of several
	roleParticiple                  // a verb's form that asks only after a marker
	roleThing                       // names a kind of thing an action acts on
)

// phrase is a word or phrase of the vocabulary, split into tokens.
type phrase struct {
	toks  []string
	role  role
	fams  []string // roleVerb: the families of the verb; roleMark: the families it marks
	kinds []string // roleThing: the kinds of thing it names
}

// vocab is the Actions vocabulary indexed for reading, derived once per
// lexicon.
type vocab struct {
	byFirst map[string][]*phrase // by first token, longest first
	// stems are the single-word verbs by stem, for reading the agent's
	// own proposals loosely ("cancellation", "refunding").
	stems map[string][]string
	// tasks are the words of a user handing the task to content
	// (Authority.TaskWords), split into tokens.
	tasks [][]string
}

type vocabKey struct{}

// vocabOf returns w's vocab, deriving it on first use.
func vocabOf(w *lexicon.Compiled) *vocab {
	return w.Derived(vocabKey{}, func() any { return newVocab(&w.Actions, &w.Authority) }).(*vocab)
}

func newVocab(a *lexicon.Actions, au *lexicon.Authority) *vocab {
	v := &vocab{byFirst: map[string][]*phrase{}, stems: map[string][]string{}}
	index := map[string]*phrase{}
	add := func(text string, r role, fam, kind string) {
		toks := tokenize(text)
		if len(toks) == 0 {
			return
		}
		key := strings.Join(toks, " ")
		p := index[key]
		if p == nil {
			p = &phrase{toks: toks}
			index[key] = p
			v.byFirst[toks[0]] = append(v.byFirst[toks[0]], p)
		}
		p.role |= r
		if fam != "" && !slices.Contains(p.fams, fam) {
			p.fams = append(p.fams, fam)
		}
		if kind != "" && !slices.Contains(p.kinds, kind) {
			p.kinds = append(p.kinds, kind)
		}
	}
	// The destructive actions' words (Authority.Destructive) are verbs of
	// their families too: a guard taught "nuke" for cancel reads "nuke
	// order 5" as a request to cancel.
	verbs := map[string][]string{}
	maps.Copy(verbs, a.Verbs)
	for fam, words := range au.Destructive {
		verbs[fam] = slices.Concat(verbs[fam], words)
	}
	for _, fam := range rulekit.SortedKeys(verbs) {
		for _, w := range verbs[fam] {
			add(w, roleVerb, fam, "")
			if toks := tokenize(w); len(toks) == 1 && !slices.Contains(v.stems[stem(toks[0])], fam) {
				v.stems[stem(toks[0])] = append(v.stems[stem(toks[0])], fam)
			}
		}
	}
	for _, fam := range rulekit.SortedKeys(a.Participles) {
		for _, w := range a.Participles[fam] {
			add(w, roleVerb|roleParticiple, fam, "")
		}
	}
	// A word that is both a verb and a mark keeps its families apart:
	// marks are read only beside a verb, so they go in phrases of their own.
	marks := map[string]*phrase{}
	for _, fam := range rulekit.SortedKeys(a.Marks) {
		for _, w := range a.Marks[fam] {
			toks := tokenize(w)
			if len(toks) == 0 {
				continue
			}
			key := strings.Join(toks, " ")
			if marks[key] == nil {
				marks[key] = &phrase{toks: toks, role: roleMark}
				v.byFirst[toks[0]] = append(v.byFirst[toks[0]], marks[key])
			}
			marks[key].fams = union(marks[key].fams, []string{fam})
		}
	}
	for _, kind := range rulekit.SortedKeys(a.Things) {
		for _, w := range a.Things[kind] {
			add(w, roleThing, "", kind)
		}
	}
	for _, list := range []struct {
		words []string
		r     role
	}{
		{a.Reads, roleRead}, {a.Markers, roleMarker}, {a.Fillers, roleFiller}, {a.Fronting, roleFronting}, {a.Towards, roleTowards},
		{a.Subjects, roleSubject}, {a.Auxiliaries, roleAux}, {a.Negations, roleNegation}, {a.Joins, roleJoin}, {a.Several, roleSeveral},
		{au.Determiners, roleDeterminer},
	} {
		for _, w := range list.words {
			add(w, list.r, "", "")
		}
	}
	for _, ps := range v.byFirst {
		slices.SortStableFunc(ps, func(x, y *phrase) int { return len(y.toks) - len(x.toks) })
	}
	for _, w := range au.TaskWords {
		if toks := tokenize(w); len(toks) > 0 {
			v.tasks = append(v.tasks, toks)
		}
	}
	return v
}

// handsOver reports whether a sentence holds the words of a user handing
// the task to content, whole words ("the tasks on my to-do list", "follow
// the instructions"; not "a follow-up meeting").
func (v *vocab) handsOver(sentence string) bool {
	toks := tokenize(sentence)
	for i := range toks {
		for _, w := range v.tasks {
			if i+len(w) > len(toks) {
				continue
			}
			ok := true
			for j, t := range w {
				if got := toks[i+j]; got != t && !(j == len(w)-1 && got == t+"s") {
					ok = false
					break
				}
			}
			if ok {
				return true
			}
		}
	}
	return false
}

// stem is a verb without a final e or y when it is long enough to keep
// its sense: "cancel", "delet", "modif".
func stem(verb string) string {
	if len(verb) >= 5 {
		return strings.TrimRight(verb, "ey")
	}
	return verb
}

// match returns the longest phrase of the vocabulary that starts at
// toks[i], has one of the roles want and is not quoted, or nil.
func (v *vocab) match(toks []token, i int, want role) *phrase {
	return v.find(toks, i, want, false)
}

// matchAny is match, quoted words included.
func (v *vocab) matchAny(toks []token, i int, want role) *phrase {
	return v.find(toks, i, want, true)
}

func (v *vocab) find(toks []token, i int, want role, quoted bool) *phrase {
	for _, p := range v.byFirst[toks[i].text] {
		if p.role&want == 0 || i+len(p.toks) > len(toks) {
			continue
		}
		ok := true
		for j, t := range p.toks {
			if toks[i+j].text != t || toks[i+j].quoted && !quoted {
				ok = false
				break
			}
		}
		if ok {
			return p
		}
	}
	return nil
}

// token is a word of a text, in lower case: a run of letters and digits
// in a script written with spaces, or one character of a script written
// without them.
type token struct {
	text   string
	quoted bool // inside quotation marks: what the user quotes, not asks
	brk    bool // a clause ends before it (punctuation)
	at     int  // where it is in the text, in bytes
	end    int
}

// tokenize splits text into its words, in lower case.
func tokenize(text string) []string {
	var out []string
	for _, t := range tokens(text) {
		out = append(out, t.text)
	}
	return out
}

// tokens splits text into tokens, marking the clause breaks (, ; : a
// dash, and their full-width forms) and the quoted spans ('…', "…", “…”, ‘…’).
func tokens(text string) []token {
	var out []token
	var cur []rune
	brk, quoted := false, false
	var quote rune
	at, end := 0, 0 // where cur is in text
	asIs := true    // cur is text[at:end]: no rune of it was folded
	flush := func() {
		if len(cur) > 0 {
			tok := text[at:end] // the common case: nothing allocated
			if !asIs {
				tok = string(cur)
			}
			out = append(out, token{text: tok, quoted: quoted, brk: brk, at: at, end: end})
			brk, asIs = false, true
			cur = cur[:0]
		}
	}
	prev := ' '
	for i, r := range text {
		_, width := utf8.DecodeRuneInString(text[i:])
		next, _ := utf8.DecodeRuneInString(text[i+width:])
		orig := r
		r, next = fold(r), fold(next)
		// A rune folded, or a byte that is not UTF-8 (read as U+FFFD),
		// makes the token differ from its text.
		same := r == orig && (r != utf8.RuneError || width > 1)
		switch {
		case quoteMark(r) && !quoted && !wordRune(prev):
			flush()
			quoted, quote = true, closing(r)
		case quoted && r == quote && !wordRune(next):
			flush()
			quoted = false
		case spaceless(r):
			flush()
			cur, at, end, asIs = append(cur, r), i, i+width, same
			flush()
		case wordRune(r) || (r == '\'' || r == '-') && wordRune(prev) && wordRune(next):
			if len(cur) == 0 {
				at = i
			}
			cur, end, asIs = append(cur, r), i+width, asIs && same
		default:
			flush()
			if !quoted && strings.ContainsRune(",;:，；：、—–", r) {
				brk = true
			}
		}
		prev = r
	}
	flush()
	return out
}

// fold is r in lower case, with a typographic apostrophe plain.
func fold(r rune) rune {
	if r == '’' {
		return '\''
	}
	return unicode.ToLower(r)
}

func quoteMark(r rune) bool { return r == '\'' || r == '"' || r == '“' || r == '‘' }

func closing(r rune) rune {
	switch r {
	case '“':
		return '”'
	case '‘':
		return '\''
	}
	return r
}

func wordRune(r rune) bool { return (unicode.IsLetter(r) || unicode.IsDigit(r)) && !spaceless(r) }

// spaceless reports whether r is of a script written without spaces
// between words.
func spaceless(r rune) bool {
	// Thai, from U+0E00, is the first of the four: nothing before it,
	// ASCII above all, need be looked up.
	return r >= 0x0E00 && unicode.In(r, unicode.Han, unicode.Hiragana, unicode.Katakana, unicode.Thai)
}

// status is what a clause does with its verb.
type status uint8

const (
	stNone      status = iota
	stRequest          // asks the agent for it
	stQuestion         // asks whether it can be done
	stStatement        // says something of it
	stNegated          // asks that it not be done
)

// head is the verb a clause starts its request with, and what it asks.
type head struct {
	verb   string   // as written
	read   bool     // a verb that only reads
	fams   []string // the families of the action; nil for a read
	st     status
	things []string // the kinds of thing its object names
	all    []string // the kinds of thing the clause names anywhere
	count  int      // how many actions it asks for; 0: several
	text   string   // the clause from its verb on, as written
	at     int      // where text starts in its sentence
}

// heads returns the verbs of the clauses of text, in order, each with
// what its clause asks. question is the mark of a question besides "?"
// (the lexicon's Authority.Questions).
func (v *vocab) heads(text string, questions []string) []head {
	var out []head
	for _, sentence := range sentences(text) {
		lower := strings.ToLower(sentence)
		q := strings.HasSuffix(lower, "?") || strings.HasSuffix(lower, "？") || rulekit.ContainsAny(lower, questions)
		out = v.sentenceHeads(out, sentence, q)
	}
	return out
}

// sentences splits text into sentences (rulekit.Sentences), and a
// sentence whose next one starts with no space after its full stop
// ("…their websites.Note that…") in two.
func sentences(text string) []string {
	var out []string
	for _, s := range rulekit.Sentences(text) {
		start := 0
		for i := 1; i+1 < len(s); i++ {
			if s[i] == '.' && 'a' <= s[i-1] && s[i-1] <= 'z' && 'A' <= s[i+1] && s[i+1] <= 'Z' {
				out = append(out, s[start:i+1])
				start = i + 1
			}
		}
		out = append(out, s[start:])
	}
	return out
}

// sentenceHeads appends the heads of one sentence to out.
func (v *vocab) sentenceHeads(out []head, sentence string, question bool) []head {
	toks := tokens(sentence)
	prev := stNone // the status of the sentence's last clause with a verb
	open := -1     // out's index of the request the clause continues
	for start := 0; start < len(toks); {
		end := start + 1
		for end < len(toks) && !toks[end].brk && v.match(toks, end, roleJoin) == nil {
			end++
		}
		joined := start > 0
		clause := toks[start:end]
		if p := v.match(toks, start, roleJoin); p != nil && start+len(p.toks) <= end {
			clause = toks[start+len(p.toks) : end]
		}
		start = end
		if len(clause) == 0 {
			continue
		}
		at, p := v.firstVerb(clause)
		if p == nil {
			if open >= 0 { // a clause with no verb goes on with the request: "…a hotel in Paris and one in London"
				h := &out[open]
				obj := v.object(clause)
				kinds := v.thingsOf(nil, obj)
				// Another of the same: a name, or a thing of the kind the
				// request names; not a phrase about the first ("at 16:00",
				// "titled 'Lunch'").
				if h.count > 0 && v.match(clause, 0, roleFronting) == nil && !digits(clause[0].text) && (len(h.things) == 0 || shares(kinds, h.things)) {
					h.count++
				}
				if v.several(obj) {
					h.count = 0
				}
				if len(h.things) == 0 {
					h.things = kinds
				}
				h.all = v.thingsOf(h.all, clause)
				h.text = sentence[h.at:clause[len(clause)-1].end]
			}
			continue
		}
		st := v.status(clause[:at], question, joined, prev)
		if p.role&roleParticiple != 0 && st == stRequest && !v.marked(clause[:at]) {
			st = stStatement // "sent the email yesterday": what was done
		}
		prev = st
		h := head{verb: text(clause[at : at+len(p.toks)]), read: p.role&roleRead != 0 && p.role&roleVerb == 0, st: st, count: 1,
			at: clause[at].at, text: sentence[clause[at].at:clause[len(clause)-1].end]}
		rest := slices.Concat(clause[:at], clause[at+len(p.toks):])
		obj := v.object(clause[at+len(p.toks):])
		h.things = v.thingsOf(nil, obj)
		h.all = v.thingsOf(nil, clause)
		if v.several(clause[:at]) || v.several(obj) {
			h.count = 0
		}
		if !h.read {
			h.fams = v.refine(p.fams, rest)
		}
		out = append(out, h)
		open = -1
		if st == stRequest && !h.read {
			open = len(out) - 1
		}
	}
	return out
}

// firstVerb returns the first verb of a clause, a verb of an action or
// one that reads, and where it is; markers and fillers are passed over
// whole ("make sure to update": update).
func (v *vocab) firstVerb(clause []token) (int, *phrase) {
	var noun *phrase // a verb after a determiner: "the order", "a refund"
	at := -1
	for i := 0; i < len(clause); {
		p := v.match(clause, i, ^roleMark) // the longest phrase here, whatever it is: 交易 is no 交
		switch {
		case p == nil:
			i++
		case p.role&(roleVerb|roleRead) == 0 || p.role&(roleMarker|roleFiller) != 0:
			i += len(p.toks)
		case i+len(p.toks) < len(clause) && v.match(clause, i+len(p.toks), roleAux) != nil:
			i += len(p.toks) // a noun: "rent is 2200"
		case i > 0 && v.match(clause, i-1, roleDeterminer) != nil:
			if noun == nil {
				noun, at = p, i // the verb, unless one follows: "I'd like the order cancelled"
			}
			i += len(p.toks)
		default:
			return i, p
		}
	}
	return at, noun
}

// status reads the words before a clause's verb: nothing but markers and
// fillers, or a phrase fronted before it, make a request; a subject, an
// auxiliary or a question word a statement or a question; a negation no
// request. A clause joined to the one before with nothing before its verb
// ("…and send them back the difference") does what that one did.
func (v *vocab) status(prefix []token, question, joined bool, prev status) status {
	marker := false
	i := 0
	for i < len(prefix) {
		p := v.match(prefix, i, roleMarker|roleFiller|roleDeterminer)
		switch {
		case p != nil && p.role&roleMarker != 0:
			marker = true
		case p != nil && p.role&roleFiller != 0, p != nil && marker && p.role&roleDeterminer != 0:
		case digits(prefix[i].text):
			p = &phrase{toks: []string{prefix[i].text}}
		default:
			p = nil
		}
		if p == nil {
			break
		}
		i += len(p.toks)
	}
	rest := prefix[i:]
	// Markers further on: the last, and the words around it ("订单 JD-1
	// 帮我取消", "the shop told me to get a refund").
	last, after := -1, 0
	var covered []bool
	for j := 0; j < len(rest); j++ {
		if p := v.match(rest, j, roleMarker); p != nil {
			if covered == nil {
				covered = make([]bool, len(rest))
			}
			for k := range p.toks {
				covered[j+k] = true
			}
			last, after = j, j+len(p.toks)
			j += len(p.toks) - 1
		}
	}
	for j := range rest {
		if (covered == nil || !covered[j]) && v.match(rest, j, roleNegation) != nil {
			return stNegated
		}
	}
	switch {
	case len(rest) == 0 && marker:
		return stRequest
	case len(rest) == 0 && joined && prev != stNone:
		return prev
	case len(rest) == 0:
		return stRequest // an imperative, even with a question mark: "set up a transfer for me?"
	case v.match(rest, len(rest)-1, roleFronting) != nil && after < len(rest):
		return stStatement // an infinitive: "just to remind me"
	case v.match(rest, 0, roleFronting) != nil && !v.subjectIn(rest[1:], true):
		return stRequest // "to each user write the message", "把地址改成…"
	case last >= 0 && !v.subjectIn(rest[:last], false) && !v.subjectIn(rest[after:], false):
		return stRequest // after its topic, or relayed
	case question && !marker:
		return stQuestion
	case marker && !v.subjectIn(rest, false):
		return stRequest
	case question:
		return stQuestion
	case topic(rest) && !v.subjectIn(rest, false):
		// A language that puts the object first, as a topic, and asks
		// with no subject: "差价退我一下", "剩下的课时退费吧".
		return stRequest
	}
	return stStatement
}

// topic reports whether words before a verb are a topic of a script
// written without spaces (ids and numbers among them), which asks with no
// subject and no marker.
func topic(toks []token) bool {
	han := false
	for _, t := range toks {
		r, _ := utf8.DecodeRuneInString(t.text)
		switch {
		case spaceless(r):
			han = true
		case !unicode.IsDigit(r) && !strings.ContainsAny(t.text, "0123456789"):
			return false // a word of a script with spaces
		}
	}
	return han
}

// marked reports whether words before a verb hold a marker.
func (v *vocab) marked(toks []token) bool {
	for j := range toks {
		if v.match(toks, j, roleMarker) != nil {
			return true
		}
	}
	return false
}

// subjectIn reports whether toks hold a subject, an auxiliary or a
// question word; with afterFronting, one right after a fronting word is
// that word's object ("给他", "for them").
func (v *vocab) subjectIn(toks []token, afterFronting bool) bool {
	for j := range toks {
		p := v.match(toks, j, roleSubject|roleAux)
		if p == nil {
			continue
		}
		if d := v.match(toks, j, roleDeterminer); d != nil && len(d.toks) > len(p.toks) {
			continue // "那笔钱": a determiner, not 那 the subject
		}
		if afterFronting && (j == 0 || v.match(toks, j-1, roleFronting) != nil) {
			continue
		}
		return true
	}
	return false
}

// refine narrows the families of a verb of several ("send": a message or
// money) to those the clause's words mark, when some are marked.
func (v *vocab) refine(fams []string, rest []token) []string {
	if len(fams) < 2 {
		return fams
	}
	var marked []string
	for i := range rest {
		if p := v.match(rest, i, roleMark); p != nil {
			for _, f := range p.fams {
				if slices.Contains(fams, f) && !slices.Contains(marked, f) {
					marked = append(marked, f)
				}
			}
		}
	}
	if len(marked) == 0 {
		return fams
	}
	return marked
}

// thingsOf adds to kinds the kinds of thing the tokens name, quoted or
// not: "the event 'Follow-up meeting'".
func (v *vocab) thingsOf(kinds []string, toks []token) []string {
	for i := 0; i < len(toks); i++ {
		if p := v.matchAny(toks, i, roleThing); p != nil {
			kinds = union(kinds, p.kinds)
			i += len(p.toks) - 1
		}
	}
	return kinds
}

// object returns the words of a clause, after its verb, that name what
// the verb acts on and where it goes: its object, and a phrase of where
// after it, up to the next preposition, subject, auxiliary or marker
// ("book a flight from Paris": a flight; "post the summary to the
// channel": the summary to the channel; "invite Dora to Slack in order
// to message her": Dora to Slack).
func (v *vocab) object(toks []token) []token {
	towards := false
	for i := range toks {
		p := v.match(toks, i, roleFronting|roleTowards|roleSubject|roleAux|roleMarker)
		if p == nil {
			continue
		}
		if p.role&roleTowards == 0 || towards {
			return toks[:i]
		}
		towards = true
	}
	return toks
}

// several reports whether the words before a verb, or its object, ask
// for more than one action: "to each user", "all of them", "两个", or a
// thing named in the plural ("add her to the necessary channels").
func (v *vocab) several(toks []token) bool {
	for j, t := range toks {
		if t.quoted {
			continue
		}
		if v.match(toks, j, roleSeveral) != nil {
			return true
		}
		if p := v.match(toks, j, roleThing); p != nil && len(p.toks) == 1 && strings.HasSuffix(t.text, "s") {
			if q := v.match([]token{{text: strings.TrimSuffix(t.text, "s")}}, 0, roleThing); q != nil && shares(p.kinds, q.kinds) {
				return true
			}
		}
	}
	return false
}

// named returns the families a text names anywhere, its words read
// loosely ("the cancellation", "refunding"): what an agent proposes.
func (v *vocab) named(text string) []string {
	var out []string
	toks := tokens(text)
	for i, t := range toks {
		if p := v.match(toks, i, roleVerb); p != nil {
			out = union(out, p.fams)
			continue
		}
		for n := len(t.text); n >= 5; n-- {
			if fams, ok := v.stems[t.text[:n]]; ok {
				out = union(out, fams)
				break
			}
		}
	}
	return out
}

func union(a, b []string) []string {
	for _, x := range b {
		if !slices.Contains(a, x) {
			a = append(a, x)
		}
	}
	return a
}

func digits(s string) bool {
	return s != "" && strings.IndexFunc(s, func(r rune) bool { return !unicode.IsDigit(r) }) < 0
}

// text joins tokens back into words, for a fact.
func text(toks []token) string {
	var b strings.Builder
	for i, t := range toks {
		if i > 0 && !(spaceless([]rune(t.text)[0]) && spaceless([]rune(toks[i-1].text)[0])) {
			b.WriteByte(' ')
		}
		b.WriteString(t.text)
	}
	return b.String()
}

// action is what a tool's name says it does: its verb, the families of
// that action and the kinds of thing it acts on ("send_money": send, pay,
// money).
type action struct {
	verb   string
	fams   []string
	things []string
	label  string // its words, for a message: "send money"
}

// actionOf reads a tool's name: the families of its first word that is a
// verb, narrowed by the words after it (send_money: pay, not message);
// with no verb the lexicon knows, the families its words mark, or the
// first word itself as a family of its own.
func (v *vocab) actionOf(tool string) action {
	words := rulekit.NameWords(tool)
	var toks []token
	for _, w := range words {
		toks = append(toks, token{text: w})
	}
	a := action{label: strings.Join(words, " ")}
	for i := range toks {
		if p := v.match(toks, i, roleVerb); p != nil {
			rest := slices.Concat(toks[:i], toks[i+len(p.toks):])
			a.verb, a.fams, a.things = text(toks[i:i+len(p.toks)]), v.refine(p.fams, rest), v.thingsOf(nil, rest)
			return a
		}
	}
	a.things = v.thingsOf(nil, toks)
	for i := range toks {
		if p := v.match(toks, i, roleMark); p != nil {
			a.fams = union(a.fams, p.fams)
		}
	}
	if len(words) > 0 {
		a.verb = words[0]
		if len(a.fams) == 0 {
			a.fams = []string{"=" + words[0]} // a family of its own: only its verb asks for it
		}
	}
	return a
}
