package memory

import (
	"context"
	"fmt"
	"hash/fnv"
	"maps"
	"regexp"
	"slices"
	"strings"
	"sync"
	"unicode"
	"unicode/utf8"

	"github.com/agentguard/agentguard/trace/lexicon"
)

// RuleBased returns the extractor that needs no model. It reads a user turn
// entities first: it finds the typed values of each sentence by their
// structure — postal addresses in Chinese and English, e-mail addresses,
// order, account and tracking ids, phone numbers, dates, times of day and
// windows — and the contact channels it names, then decides what the
// sentence does with each from the small word lists of lx (package
// trace/lexicon; nil means lexicon.Default(), English and Chinese):
// states, changes, adds, prohibits, allows, or only asks.
//
//   - A later value for the same slot supersedes the earlier one (the card
//     keeps the history), unless the turn marks it as additional ("also
//     send one to ...": key "delivery 2") or asks a question about it
//     ("do you deliver to ...?" states nothing). A value right after an
//     Old word ("from 12 Oak Street to ...") is the one being replaced.
//   - A channel named in a clause with a Negation word is prohibited ("SMS
//     isn't an option", "消息推送那些就不必了"), with an Allow word
//     permitted: an active prohibition is lifted, and a window in the
//     clause ("calls are fine after 6pm") becomes the channel's time
//     range. A ScopeEnd word between cue and channel breaks the link;
//     reminders ("don't forget to text me") and reports ("I didn't get
//     the text") rule on nothing.
//   - A statement that names an address and a change but holds no
//     address that can be read is pinned as a fact, word for word, so
//     that compression never drops it.
//
// It is deterministic and safe for concurrent use; CardFromTrace runs it,
// with the default lexicon, over traces that carry no card steps. It
// compiles lx if lx has not been compiled yet, and panics if lx does not
// compile (see lexicon.Lexicon.Check).
func RuleBased(lx *lexicon.Lexicon) Extractor {
	if lx == nil {
		return defaultRules()
	}
	return newRules(lx.Compiled())
}

// defaultWords is lexicon.Default compiled, shared by every extractor,
// card and enforcer given no lexicon of their own.
var defaultWords = sync.OnceValue(func() *lexicon.Compiled { return lexicon.Default().Compiled() })

// defaultRules is the extractor over defaultWords. It is a pointer, so
// that passing it as an Extractor on every tool call allocates nothing.
var defaultRules = sync.OnceValue(func() *ruleBased { r := newRules(defaultWords()); return &r })

type ruleBased struct {
	w       *lexicon.Compiled
	idWords []string   // the keys of IDKinds, longest first
	ix      *wordIndex // the word lists below, found in one pass
	turnIx  *wordIndex // what is read of a whole turn: Change, Additional
	l       ruleLists
}

// ruleLists are the places of the lexicon's word lists in ruleBased.ix.
type ruleLists struct {
	change, additional, dismiss, addressWords, phoneCues int
	reminder, report, unruled, negation, allow, scopeEnd int
	timeContext, pastDue, away, prefer, replyVerbs       int
	languages, timesOfDay, ids                           int
	channels, timeKeys                                   []int // one per channel, per time key
	named                                                []int // the channels but "contact"
}

func newRules(w *lexicon.Compiled) ruleBased {
	r := ruleBased{w: w, idWords: slices.Collect(maps.Keys(w.Memory.IDKinds))}
	slices.SortFunc(r.idWords, func(a, b string) int { return len(b) - len(a) })
	m := &w.Memory
	var lists [][]string
	add := func(words []string) int { lists = append(lists, words); return len(lists) - 1 }
	r.l = ruleLists{
		change: add(m.Change), additional: add(m.Additional), dismiss: add(m.Dismiss),
		addressWords: add(m.AddressWords), phoneCues: add(m.PhoneCues),
		reminder: add(m.Reminder), report: add(m.Report), unruled: add(m.Unruled), negation: add(m.Negation),
		allow: add(m.Allow), scopeEnd: add(m.ScopeEnd),
		timeContext: add(m.TimeContext), pastDue: add(m.PastDue), away: add(m.Away),
		prefer: add(m.Prefer), replyVerbs: add(m.ReplyVerbs),
		languages: add(m.Languages), timesOfDay: add(m.TimesOfDay), ids: add(r.idWords),
	}
	for _, ch := range m.Channels {
		r.l.channels = append(r.l.channels, add(ch.Words))
		if ch.Name != "contact" {
			r.l.named = append(r.l.named, r.l.channels[len(r.l.channels)-1])
		}
	}
	for _, k := range m.TimeKeys {
		r.l.timeKeys = append(r.l.timeKeys, add(k.Words))
	}
	r.ix = newWordIndex(lists...)
	r.turnIx = newWordIndex(m.Change, m.Additional)
	return r
}

func (r ruleBased) Extract(_ context.Context, turn int, text string, current []Constraint) ([]Constraint, error) {
	given := make(map[slot]string, len(current))
	for _, c := range current {
		if c.Status == Active {
			given[slot{c.Kind, c.Key}] = c.Value
		}
	}
	return r.extract(turn, text, func(s slot) (string, bool) { v, ok := given[s]; return v, ok }), nil
}

// extract reads one turn; card gives the values active before it, by
// kind and key, so that a long card costs a turn nothing.
func (r ruleBased) extract(turn int, text string, card func(slot) (string, bool)) []Constraint {
	x := extraction{r: r, w: &r.w.Memory, tw: &r.w.Time, turn: turn, card: card}
	text = apostrophes.Replace(text)
	whole := r.turnIx.find(lowerASCII(text))
	x.change = whole.has(0)
	x.additional = !x.change && whole.has(1)
	ss := sentences(x.w, text)
	for i := range ss {
		ss[i].words = r.ix.find(ss[i].lower)
		x.sentence(ss[i])
	}
	x.unresolved(ss)
	return x.out
}

type slot struct {
	kind Kind
	key  string
}

// extraction is the state of one RuleBased.Extract call.
type extraction struct {
	r     ruleBased
	w     *lexicon.Memory
	tw    *lexicon.TimePatterns
	turn  int
	card  func(slot) (string, bool) // values of the card's active constraints
	found map[slot]*string          // what this turn found so far: a value, or nil when revoked
	out   []Constraint

	change, additional bool // the turn's marks
	addresses          int  // addresses found in the turn
}

func (x *extraction) add(kind Kind, key, value string, status State) {
	c := normalize(Constraint{Kind: kind, Key: key, Value: value, Status: status, Source: SourceRule}, x.turn)
	if c.Validate() != nil {
		return
	}
	if v, ok := x.value(c.Kind, c.Key); ok && c.Status == Active && fold(v) == fold(c.Value) {
		return // said again
	}
	x.out = append(x.out, c)
	if x.found == nil {
		x.found = map[slot]*string{}
	}
	var v *string
	if c.Status == Active {
		v = &c.Value
	}
	x.found[slot{c.Kind, c.Key}] = v
}

// value returns the active value of kind and key: what this turn said,
// else the card's.
func (x *extraction) value(kind Kind, key string) (string, bool) {
	if v, ok := x.found[slot{kind, key}]; ok {
		if v == nil {
			return "", false
		}
		return *v, true
	}
	return x.card(slot{kind, key})
}

func (x *extraction) isActive(kind Kind, key string) bool {
	_, ok := x.value(kind, key)
	return ok
}

// sentence extracts what one sentence states: typed values first, then
// rulings on channels, then windows and preferences where no channel was
// ruled on.
func (x *extraction) sentence(s sentence) {
	if s.words.has(x.r.l.dismiss) {
		return
	}
	var taken []span
	for _, v := range emails(s.text) {
		taken = append(taken, v)
		if !s.question {
			x.add(KindEmail, "email", s.text[v.start:v.end], Active)
		}
	}
	// Addresses and bare ids start with ASCII digits: a sentence without
	// one is not tokenized for them.
	var toks []token
	if strings.ContainsAny(s.text, "0123456789") {
		toks = tokenize(s.text)
	}
	for _, v := range x.addressesIn(s, toks, taken) {
		taken = append(taken, v)
		x.address(s, v)
	}
	taken = append(taken, x.ids(s, toks, taken)...)
	ds, cs := dates(x.tw, s.text), clocks(x.tw, s.text)
	for _, m := range ds {
		taken = append(taken, span{m.start, m.end})
	}
	for _, m := range cs {
		taken = append(taken, span{m.start, m.end})
	}
	if !s.question {
		x.phones(s, taken)
	}
	ruled := false
	if !s.question {
		ruled = x.channels(s)
	}
	if !ruled && !s.question {
		x.timeRange(s, ds, cs)
		x.preference(s)
	}
	x.name(s)
	x.fact(s)
}

// Addresses.

// maxAddress is the longest address, in runes, the extractor takes.
const maxAddress = 160

func (x *extraction) addressesIn(s sentence, toks []token, taken []span) []span {
	out := englishAddresses(x.w, s.lower, toks)
	out = append(out, chineseAddresses(x.w, s.text, append(slices.Clip(taken), out...))...)
	out = slices.DeleteFunc(out, func(v span) bool { return overlapsAny(taken, v) })
	slices.SortFunc(out, func(a, b span) int { return a.start - b.start })
	return out
}

// address decides what the sentence does with the address at v.
func (x *extraction) address(s sentence, v span) {
	before := s.lower[:v.start]
	if s.question && !x.change {
		return // "do you deliver to ...?"
	}
	if endsWithWord(before, x.w.Old) {
		return // "from 12 Oak Street to ..."
	}
	value := strings.TrimRight(strings.TrimSpace(s.text[v.start:v.end]), " ,.;:")
	if utf8.RuneCountInString(value) > maxAddress {
		return
	}
	key := "delivery"
	best := -1
	for word, k := range x.w.AddressKinds {
		if i := strings.LastIndex(before, word); i > best {
			best, key = i, k
		}
	}
	if x.additional {
		if cur, ok := x.value(KindAddress, key); ok && fold(cur) != fold(value) {
			base := key
			for n := 2; x.isActive(KindAddress, key); n++ {
				key = fmt.Sprintf("%s %d", base, n)
			}
		}
	}
	x.addresses++
	x.add(KindAddress, key, value, Active)
}

// unresolved pins, word for word, a statement that names an address and a
// change ("收货地址要变一下") when the turn gave no address that could be
// read.
func (x *extraction) unresolved(ss []sentence) {
	if x.addresses > 0 || !x.change {
		return
	}
	for _, s := range ss {
		if !s.question && s.words.has(x.r.l.addressWords) && s.words.has(x.r.l.change) {
			x.add(KindFact, factKey(s.text), s.text, Active)
			return
		}
	}
}

// Ids and phones.

// ids adds the ids of the sentence: after an id kind word, or bare, and
// returns their spans. toks are the sentence's tokens.
func (x *extraction) ids(s sentence, toks []token, taken []span) []span {
	var found []span
	seen := map[string]bool{}
	add := func(kind string, v span) {
		id := s.text[v.start:v.end]
		if overlapsAny(taken, v) {
			return
		}
		lower := strings.ToLower(id)
		if seen[lower] {
			return
		}
		seen[lower] = true
		found = append(found, v)
		x.add(KindID, kind+":"+lower, id, Active)
	}
	for _, c := range s.words.cues(x.r.l.ids) {
		if v, ok := idAfter(x.w, s.text, s.lower, c.end); ok {
			add(x.w.IDKinds[s.lower[c.start:c.end]], v)
		}
	}
	for _, t := range toks {
		v := span{t.start, t.end}
		if t.ascii && bareID(strings.TrimPrefix(s.text[t.start:t.end], "#")) && !overlapsAny(found, v) {
			if s.text[t.start] == '#' {
				v.start++
			}
			add("order", v)
		}
	}
	return found
}

// phones adds the phone numbers of the sentence: digits in a sentence
// with a PhoneCues word, after a "+", or a mainland mobile number.
func (x *extraction) phones(s sentence, taken []span) {
	cue := s.words.has(x.r.l.phoneCues)
	for _, v := range phones(s.text, taken) {
		n := phoneValue(s.text[v.start:v.end])
		if cue || strings.HasPrefix(n, "+") || chineseMobile(n) {
			x.add(KindPhone, "mobile", n, Active)
		}
	}
}

// Channels.

// channelOf returns the channel that s names as a whole ("Text messages"
// -> "sms"), or "".
func channelOf(w *lexicon.Memory, s string) string {
	s = strings.Join(strings.Fields(lowerASCII(s)), " ")
	for _, ch := range w.Channels {
		if s == ch.Name {
			return ch.Name
		}
		for _, word := range ch.Words {
			stem, prefix := strings.CutSuffix(word, "*")
			if rest, ok := strings.CutPrefix(s, stem); ok && (rest == "" || prefix && !strings.Contains(rest, " ")) {
				return ch.Name
			}
		}
	}
	return ""
}

// channelsIn returns the channels of the text of h, without "contact":
// the function channelsIn.
func (r ruleBased) channelsIn(h wordHits) []string {
	var out []string
	for i, ch := range r.w.Memory.Channels {
		if ch.Name != "contact" && h.has(r.l.channels[i]) {
			out = append(out, ch.Name)
		}
	}
	return out
}

// channelsIn returns the channels that s names, without "contact".
func channelsIn(w *lexicon.Memory, lower string) []string {
	var out []string
	for _, ch := range w.Channels {
		if ch.Name != "contact" && hasWord(lower, ch.Words) {
			out = append(out, ch.Name)
		}
	}
	return out
}

// The lists a clause is read with, in cues' order: then the channels.
const (
	cueNegation = iota
	cueAllow
	cueScopeEnd
	cueChannel
)

// channels rules on the channels each clause of s names, and reports
// whether it ruled on any.
func (x *extraction) channels(s sentence) bool {
	ruled := false
	cls := clauses(s.text)
	for ci, cl := range cls {
		lower := lowerASCII(cl)
		words := x.r.ix.find(lower)
		if words.has(x.r.l.reminder, x.r.l.report, x.r.l.unruled) {
			continue
		}
		lists := append([]int{x.r.l.negation, x.r.l.allow, x.r.l.scopeEnd}, x.r.l.channels...)
		cs := words.cues(lists...)
		named := map[int]bool{}
		for _, c := range cs {
			if c.list >= cueChannel {
				named[c.list-cueChannel] = true
			}
		}
		specific := false
		for i := range named {
			specific = specific || x.w.Channels[i].Name != "contact"
		}
		done := map[int]bool{}
		for _, c := range cs {
			if c.list != cueNegation {
				continue
			}
			for i, ch := range x.w.Channels { // "免打扰" holds its channel
				if !done[i] && hasWord(lower[c.start:c.end], ch.Words) {
					done[i] = true
					x.prohibit(ch.Name, strings.TrimSpace(cl), x.windowNear(cls, ci))
					ruled = true
				}
			}
		}
		for k, c := range cs {
			ch := c.list - cueChannel
			if ch < 0 || done[ch] || (specific && x.w.Channels[ch].Name == "contact") {
				continue
			}
			done[ch] = true
			neg, allow := linked(cs, k, cueNegation), linked(cs, k, cueAllow)
			name := x.w.Channels[ch].Name
			switch {
			case neg:
				x.prohibit(name, strings.TrimSpace(cl), x.windowNear(cls, ci))
				ruled = true
			case allow:
				x.allow(name, strings.TrimSpace(cl), x.windowNear(cls, ci))
				ruled = true
			}
		}
	}
	return ruled
}

// linked reports whether a cue of list l stands in the clause of cs with
// the channel at cs[k], no ScopeEnd word between them.
func linked(cs []cue, k, l int) bool {
	for i, c := range cs {
		if c.list != l {
			continue
		}
		a, b := min(i, k), max(i, k)
		if !slices.ContainsFunc(cs[a+1:b], func(c cue) bool { return c.list == cueScopeEnd }) {
			return true
		}
	}
	return false
}

// windowNear finds a window in clause i of cls or, failing that, in a
// clause after it that names no channel and nothing a window is for.
func (x *extraction) windowNear(cls []string, i int) *window {
	if w, ok := findWindow(x.tw, cls[i]); ok {
		return &w
	}
	for _, cl := range cls[i+1:] {
		words := x.r.ix.find(lowerASCII(cl))
		if words.has(x.r.l.named...) || words.has(x.r.l.timeKeys...) {
			return nil
		}
		if w, ok := findWindow(x.tw, cl); ok {
			return &w
		}
	}
	return nil
}

func (x *extraction) prohibit(ch, clause string, w *window) {
	value := clause
	if w != nil {
		value = w.String()
	}
	x.add(KindProhibition, ch, value, Active)
	if v, ok := x.value(KindPreference, "channel"); ok && v == ch {
		x.add(KindPreference, "channel", v, Revoked) // a channel the user prefers no more
	}
}

// allow lifts a prohibition of ch; with a window, the channel is open in
// that window only: a time range.
func (x *extraction) allow(ch, clause string, w *window) {
	if x.isActive(KindProhibition, ch) {
		x.add(KindProhibition, ch, clause, Revoked)
	}
	if w != nil {
		key := ch
		if w.clock() {
			key += " hours"
		}
		x.add(KindTimeRange, key, w.String(), Active)
	}
}

// Time ranges.

// timeRange reads a window in s, whose dates and clocks are ds and cs.
func (x *extraction) timeRange(s sentence, ds, cs []mention) {
	if !s.words.has(x.r.l.timeContext) || s.words.has(x.r.l.pastDue) {
		return
	}
	w, ok := findWindowIn(x.tw, s.text,
		func(*lexicon.TimePatterns, string) []mention { return ds },
		func(*lexicon.TimePatterns, string) []mention { return cs })
	if !ok {
		return
	}
	key := "delivery"
	for i, k := range x.w.TimeKeys {
		if s.words.has(x.r.l.timeKeys[i]) {
			key = k.Name
			break
		}
	}
	if s.words.has(x.r.l.away) {
		// "I'm away 1-5 June": deliveries are prohibited inside the window.
		x.add(KindProhibition, key, w.String(), Active)
		return
	}
	if w.clock() {
		key += " hours"
	}
	x.add(KindTimeRange, key, w.String(), Active)
}

// Preferences.

// preference adds what a sentence with a Prefer word (or a language with
// a ReplyVerbs word) prefers: one channel, a language or a time of day.
func (x *extraction) preference(s sentence) {
	prefer := s.words.has(x.r.l.prefer)
	if !prefer && !s.words.has(x.r.l.replyVerbs) {
		return
	}
	if ch := x.r.channelsIn(s.words); prefer && len(ch) == 1 {
		x.add(KindPreference, "channel", ch[0], Active)
		if x.isActive(KindProhibition, ch[0]) {
			x.add(KindProhibition, ch[0], s.text, Revoked)
		}
		return
	}
	if cs := s.words.cues(x.r.l.languages); len(cs) > 0 {
		x.add(KindPreference, "language", s.text[cs[0].start:cs[0].end], Active)
		return
	}
	if cs := s.words.cues(x.r.l.timesOfDay); prefer && len(cs) > 0 {
		x.add(KindPreference, "time", s.text[cs[0].start:cs[0].end], Active)
	}
}

// Names and facts.

func (x *extraction) name(s sentence) {
	for li, leads := range [][]string{x.w.NameLeads, x.w.RecipientLeads} {
		for _, lead := range leads {
			i := strings.Index(s.lower, lead)
			if i < 0 || (i > 0 && isAlnum(lead[0]) && isWordByte(s.lower[i-1])) {
				continue
			}
			v := x.nameAt(strings.TrimLeft(s.text[i+len(lead):], " :："))
			if v != "" {
				key := "name"
				if li == 1 {
					key = "recipient"
				}
				x.add(KindName, key, v, Active)
			}
			return
		}
	}
}

// nameAt reads a name at the start of s: two to six Chinese characters,
// or up to four words before a NameStop word.
func (x *extraction) nameAt(s string) string {
	r, _ := utf8.DecodeRuneInString(s)
	if strings.ContainsRune(x.w.NameNotFirst, r) || !unicode.IsLetter(r) {
		return ""
	}
	if isHan(r) {
		n, end := 0, 0
		for i, r := range s {
			if !isHan(r) && r != '·' || n == 6 || (n >= 2 && startsWithWord(s[i:], x.w.AddressTail) != "") {
				break
			}
			n, end = n+1, i+utf8.RuneLen(r)
		}
		if n < 2 {
			return ""
		}
		return s[:end]
	}
	var words []string
	for _, f := range strings.Fields(s) {
		t := strings.TrimRight(f, ".,;:!?")
		if len(words) == 4 || t == "" || slices.Contains(x.w.NameStop, lowerASCII(t)) || !unicode.IsLetter([]rune(t)[0]) {
			break
		}
		words = append(words, t)
		if t != f {
			break
		}
	}
	if v := strings.Join(words, " "); utf8.RuneCountInString(v) >= 2 {
		return v
	}
	return ""
}

func (x *extraction) fact(s sentence) {
	for _, lead := range x.w.FactLeads {
		i := strings.Index(s.lower, lead)
		if i < 0 {
			continue
		}
		v := strings.TrimSpace(strings.TrimLeft(s.text[i+len(lead):], " :：，,"))
		v = strings.TrimPrefix(v, "that ")
		if utf8.RuneCountInString(v) >= 3 {
			x.add(KindFact, factKey(v), v, Active)
		}
		return
	}
}

// factKey names a fact by a digest of its folded text, so that restating it
// does not add a version.
func factKey(v string) string {
	h := fnv.New32a()
	h.Write([]byte(fold(v)))
	return fmt.Sprintf("fact-%08x", h.Sum32())
}

// group is the text of the first group named name that took part in m.
func group(re *regexp.Regexp, m []string, name string) string { return lexicon.Group(re, m, name) }

// Splitting text.

type sentence struct {
	text, lower string
	question    bool
	words       wordHits // the words of ruleBased's lists in lower
}

// sentences splits text at 。！？!?；; and line breaks, and at a period
// followed by a space or the end unless it closes one of w's
// Abbreviations. A sentence is a question when it ends in a question mark
// and holds a QuestionMark word or has a clause that starts with a
// QuestionStart word, or when it ends in "吗".
func sentences(w *lexicon.Memory, text string) []sentence {
	var out []sentence
	start := 0
	emit := func(end int, q bool) {
		t := strings.TrimSpace(text[start:end])
		if t == "" {
			return
		}
		lower := lowerASCII(t)
		question := strings.HasSuffix(t, "吗")
		if q && !question {
			question = hasWord(lower, w.QuestionMark) || slices.ContainsFunc(clauses(lower), func(c string) bool {
				return startsWithWord(strings.TrimSpace(c), w.QuestionStart) != ""
			})
		}
		out = append(out, sentence{text: t, lower: lower, question: question})
	}
	for i, r := range text {
		switch r {
		case '\n', '。', '！', '!', '；', ';', '？', '?':
			emit(i, r == '？' || r == '?')
			start = i + utf8.RuneLen(r)
		case '.':
			if i+1 < len(text) && text[i+1] != ' ' && text[i+1] != '\n' {
				continue
			}
			word := text[start:i]
			if j := strings.LastIndexAny(word, " \t(,"); j >= 0 {
				word = word[j+1:]
			}
			if slices.Contains(w.Abbreviations, strings.ToLower(word)) {
				continue
			}
			emit(i, false)
			start = i + 1
		}
	}
	emit(len(text), false)
	return out
}

// clauses splits a sentence at commas and dashes.
func clauses(s string) []string {
	s = strings.ReplaceAll(s, "—", ",")
	return strings.FieldsFunc(s, func(r rune) bool { return r == ',' || r == '，' || r == '、' })
}

// fold lower-cases s and drops everything but letters and digits, to
// compare values that differ in spacing and punctuation.
func fold(s string) string {
	var b strings.Builder
	b.Grow(len(s))
	for _, r := range s {
		if unicode.IsLetter(r) || unicode.IsDigit(r) {
			b.WriteRune(unicode.ToLower(r))
		}
	}
	return b.String()
}
