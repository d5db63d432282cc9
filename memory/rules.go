package memory

import (
	"context"
	"fmt"
	"hash/fnv"
	"regexp"
	"strings"
	"sync"
	"unicode"
	"unicode/utf8"

	"github.com/agentguard/agentguard/trace/lexicon"
)

// RuleBased returns the extractor that needs no model: the patterns of lx
// (package trace/lexicon; nil means lexicon.Default(), English and Chinese)
// that find prohibitions on contact channels and their revocation,
// addresses, phone numbers, names, order, account and tracking ids, time
// ranges, preferences and pinned facts. It is deterministic and safe for
// concurrent use; CardFromTrace runs it, with the default lexicon, over
// traces that carry no card steps. It compiles lx if lx has not been
// compiled yet, and panics if lx does not compile (see lexicon.Lexicon.Check).
//
// Channels are normalised: SMS, text, 短信 are "sms"; call, phone call, 电话
// are "call"; email, 邮件 are "email"; contact me, 联系我, 打扰 are
// "contact". A revocation is returned only for a prohibition that is
// active, in current or earlier in the same text. Questions state nothing
// about prohibitions ("can you text me?").
func RuleBased(lx *lexicon.Lexicon) Extractor {
	if lx == nil {
		return ruleBased{defaultWords()}
	}
	return ruleBased{lx.Compiled()}
}

// defaultWords is lexicon.Default compiled, shared by every extractor,
// card and enforcer given no lexicon of their own.
var defaultWords = sync.OnceValue(func() *lexicon.Compiled { return lexicon.Default().Compiled() })

type ruleBased struct{ w *lexicon.Compiled }

func (r ruleBased) Extract(_ context.Context, turn int, text string, current []Constraint) ([]Constraint, error) {
	x := extraction{w: &r.w.Memory, tw: &r.w.Time, turn: turn, active: map[slot]string{}}
	for _, c := range current {
		if c.Status == Active {
			x.active[slot{c.Kind, c.Key}] = c.Value
		}
	}
	for _, s := range sentences(x.w, text) {
		x.sentence(s)
	}
	return x.out, nil
}

type slot struct {
	kind Kind
	key  string
}

// extraction is the state of one RuleBased.Extract call.
type extraction struct {
	w      *lexicon.MemoryPatterns
	tw     *lexicon.TimePatterns
	turn   int
	active map[slot]string // values of the active constraints: the card's and those found so far
	out    []Constraint
}

func (x *extraction) add(kind Kind, key, value string, status State) {
	c := normalize(Constraint{Kind: kind, Key: key, Value: value, Status: status, Source: SourceRule}, x.turn)
	if c.Validate() != nil {
		return
	}
	x.out = append(x.out, c)
	if c.Status == Active {
		x.active[slot{c.Kind, c.Key}] = c.Value
	} else {
		delete(x.active, slot{c.Kind, c.Key})
	}
}

func (x *extraction) isActive(kind Kind, key string) bool {
	_, ok := x.active[slot{kind, key}]
	return ok
}

// sentence extracts what one sentence states. Cheap word checks come
// before the patterns, which cost far more.
func (x *extraction) sentence(s sentence) {
	prohibited := false
	if !s.question {
		for _, cl := range clauses(s.text) {
			if x.channelClause(cl) {
				prohibited = true
			}
		}
	}
	lower := strings.ToLower(s.text)
	digits := strings.ContainsAny(s.text, "0123456789")
	if has(lower, x.w.AddressCues) {
		x.address(s)
	}
	if digits {
		x.phone(s.text)
	}
	if has(lower, x.w.NameCues) {
		x.name(s.text)
	}
	if digits {
		x.ids(s.text)
	}
	if prohibited || s.question {
		return
	}
	x.timeRange(s.text)
	if has(lower, x.w.PreferenceCues) {
		x.preference(s.text)
	}
	if has(lower, x.w.FactCues) {
		x.fact(s.text)
	}
}

// has reports whether s contains any of words.
func has(s string, words []string) bool {
	for _, w := range words {
		if strings.Contains(s, w) {
			return true
		}
	}
	return false
}

// group is the text of the first group named name that took part in m.
func group(re *regexp.Regexp, m []string, name string) string { return lexicon.Group(re, m, name) }

// Channels.

// channelOf returns the channel that s names as a whole ("Text messages"
// -> "sms"), or "".
func channelOf(w *lexicon.MemoryPatterns, s string) string {
	for _, c := range w.Channels {
		if c.Word.MatchString(s) {
			return c.Name
		}
	}
	return ""
}

// channelsIn returns the channels mentioned in s.
func channelsIn(w *lexicon.MemoryPatterns, s string) []string {
	var out []string
	for _, c := range w.Channels {
		if c.Any.MatchString(s) {
			out = append(out, c.Name)
		}
	}
	return out
}

// channelClause looks for a prohibition or a revocation about a contact
// channel in one clause, and reports whether it found a prohibition.
func (x *extraction) channelClause(cl string) bool {
	if x.w.Reminder.MatchString(cl) {
		return false // "don't forget to text me": no prohibition
	}
	found := false
	for i := range x.w.Channels {
		c := &x.w.Channels[i]
		if !c.Any.MatchString(cl) || (found && c.Name == "contact") {
			continue // "don't call to contact me" prohibits calls, not contact
		}
		if prohibits(x.w, c, cl) {
			value := strings.TrimSpace(cl)
			if w, ok := findWindow(x.tw, cl); ok {
				value = w.String()
			}
			x.add(KindProhibition, c.Name, value, Active)
			if v, ok := x.active[slot{KindPreference, "channel"}]; ok && v == c.Name {
				x.add(KindPreference, "channel", v, Revoked) // a channel the user prefers no more
			}
			found = true
			continue
		}
		if revokes(x.w, c, cl) && x.isActive(KindProhibition, c.Name) {
			x.add(KindProhibition, c.Name, strings.TrimSpace(cl), Revoked)
		}
	}
	return found
}

// prohibits reports whether clause cl prohibits channel c: a Prohibit
// pattern matches, or a negation before the channel whose scope no
// ScopeEnd word closes.
func prohibits(w *lexicon.MemoryPatterns, c *lexicon.ChannelPatterns, cl string) bool {
	for _, re := range c.Prohibit {
		if re.MatchString(cl) {
			return true
		}
	}
	for _, re := range c.NegationBefore {
		for _, m := range re.FindAllStringSubmatch(cl, -1) {
			ok := true
			for _, word := range strings.Fields(strings.ToLower(group(re, m, "between"))) {
				if w.ScopeEnd[word] {
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

// revokes reports whether clause cl lifts a prohibition of channel c: a
// Revoke pattern matches, not right after a RevokeNegators character
// ("不可以发短信").
func revokes(w *lexicon.MemoryPatterns, c *lexicon.ChannelPatterns, cl string) bool {
	for _, re := range c.Revoke {
		for _, loc := range re.FindAllStringIndex(cl, -1) {
			r, _ := utf8.DecodeLastRuneInString(cl[:loc[0]])
			if r != utf8.RuneError && strings.ContainsRune(w.RevokeNegators, r) {
				continue
			}
			return true
		}
	}
	return false
}

// Addresses.

var hasDigit = regexp.MustCompile(`\d`)

// maxAddress is the longest address, in runes, the extractor takes.
const maxAddress = 160

func addressKey(w *lexicon.MemoryPatterns, kind string) string {
	if k, ok := w.AddressKinds[strings.ToLower(kind)]; ok {
		return k
	}
	return "delivery"
}

// address finds a new address: by an Address pattern over the whole
// sentence, or else by AddressInClause patterns in each clause.
func (x *extraction) address(s sentence) {
	for _, re := range x.w.Address {
		m := re.FindStringSubmatch(s.text)
		if m == nil {
			continue
		}
		if s.question && group(re, m, "verb") != "" {
			return // "can you ship it to ...?" asks, "my address is ...?" still states
		}
		x.addAddress(group(re, m, "kind"), group(re, m, "value"))
		return
	}
	for _, cl := range clauses(s.text) {
		for _, re := range x.w.AddressInClause {
			loc := re.FindStringSubmatchIndex(cl)
			if loc == nil {
				continue
			}
			m := submatches(cl, loc)
			if group(re, m, "verb") != "" && (s.question || x.w.AddressDone.MatchString(cl[:loc[0]])) {
				continue // "什么时候能送到…？", "已经送到…了"
			}
			x.addAddress(group(re, m, "kind"), group(re, m, "value"))
			break
		}
	}
}

// addAddress trims a found address — leading words, what follows a full
// stop, closing words — and adds it if it reads as a place.
func (x *extraction) addAddress(kind, v string) {
	v = strings.TrimSpace(x.w.AddressLead.ReplaceAllString(strings.TrimSpace(v), ""))
	if i := strings.IndexAny(v, "，。！？"); i >= 0 {
		v = v[:i]
	}
	v = x.trimTail(v)
	if x.w.Place.MatchString(v) && utf8.RuneCountInString(v) <= maxAddress {
		x.add(KindAddress, addressKey(x.w, kind), v, Active)
	}
}

// trimTail removes closing words (Tail) and punctuation from the end of v
// until none is left.
func (x *extraction) trimTail(v string) string {
	for {
		t := strings.TrimSpace(x.w.Tail.ReplaceAllString(v, ""))
		t = strings.TrimRight(t, " ,;:.!?")
		if t == v {
			return v
		}
		v = t
	}
}

// Phone numbers.

func (x *extraction) phone(s string) {
	m := x.w.Phone.FindStringSubmatch(s)
	if m == nil {
		return
	}
	var b strings.Builder
	for i, r := range group(x.w.Phone, m, "value") {
		if unicode.IsDigit(r) || (r == '+' && i == 0) {
			b.WriteRune(r)
		}
	}
	if n := b.Len(); n >= 7 && n <= 16 {
		x.add(KindPhone, "mobile", b.String(), Active)
	}
}

// Names.

func (x *extraction) name(s string) {
	for _, re := range x.w.Names {
		m := re.FindStringSubmatch(s)
		if m == nil {
			continue
		}
		words := strings.Fields(group(re, m, "value"))
		n := 0
		for n < len(words) && !x.w.NameStop[strings.ToLower(words[n])] {
			n++
		}
		v := x.trimTail(strings.Join(words[:n], " "))
		if r, _ := utf8.DecodeRuneInString(v); utf8.RuneCountInString(v) >= 2 && !strings.ContainsRune(x.w.NameNotFirst, r) {
			x.add(KindName, nameKey(group(re, m, "recipient")), v, Active)
		}
		return
	}
}

func nameKey(recipient string) string {
	if recipient != "" {
		return "recipient"
	}
	return "name"
}

// Ids.

var bareID = regexp.MustCompile(`\b([A-Z]{1,3}\d{3,12})\b`)

func (x *extraction) ids(s string) {
	seen := map[string]bool{}
	add := func(kind, id string) {
		if !hasDigit.MatchString(id) || seen[strings.ToLower(id)] {
			return
		}
		seen[strings.ToLower(id)] = true
		x.add(KindID, kind+":"+strings.ToLower(id), id, Active)
	}
	for _, re := range x.w.IDs {
		for _, m := range re.FindAllStringSubmatch(s, -1) {
			add(x.w.IDKinds[strings.ToLower(group(re, m, "kind"))], group(re, m, "value"))
		}
	}
	for _, m := range bareID.FindAllStringSubmatch(s, -1) {
		add("order", m[1])
	}
}

// Time ranges.

func (x *extraction) timeRange(s string) {
	if !x.w.TimeContext.MatchString(s) || x.w.PastDue.MatchString(s) {
		return
	}
	w, ok := findWindow(x.tw, s)
	if !ok {
		return
	}
	key := "delivery"
	for _, k := range x.w.TimeKeys {
		if k.Re.MatchString(s) {
			key = k.Name
			break
		}
	}
	if x.w.Away.MatchString(s) {
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

func (x *extraction) preference(s string) {
	var v string
	for _, re := range x.w.Prefer {
		if m := re.FindStringSubmatch(s); m != nil {
			v = group(re, m, "value")
			break
		}
	}
	v = x.trimTail(strings.TrimSpace(v))
	if v == "" {
		return
	}
	switch ch := channelsIn(x.w, v); {
	case len(ch) == 1:
		x.add(KindPreference, "channel", ch[0], Active)
		if x.isActive(KindProhibition, ch[0]) {
			x.add(KindProhibition, ch[0], strings.TrimSpace(s), Revoked)
		}
	case x.w.PreferLanguage.MatchString(v):
		x.add(KindPreference, "language", v, Active)
	case x.w.PreferTime.MatchString(v):
		x.add(KindPreference, "time", v, Active)
	default:
		x.add(KindPreference, "other", v, Active)
	}
}

// Facts.

func (x *extraction) fact(s string) {
	for _, re := range x.w.Facts {
		if m := re.FindStringSubmatch(s); m != nil {
			v := strings.TrimSpace(group(re, m, "value"))
			x.add(KindFact, factKey(v), v, Active)
			return
		}
	}
}

// factKey names a fact by a digest of its folded text, so that restating it
// does not add a version.
func factKey(v string) string {
	h := fnv.New32a()
	h.Write([]byte(fold(v)))
	return fmt.Sprintf("fact-%08x", h.Sum32())
}

// Splitting text.

type sentence struct {
	text     string
	question bool
}

// sentences splits text at 。！？!?；; and line breaks, and at a period
// followed by a space or the end unless it closes one of w's
// Abbreviations.
func sentences(w *lexicon.MemoryPatterns, text string) []sentence {
	var out []sentence
	start := 0
	emit := func(end int, q bool) {
		if t := strings.TrimSpace(text[start:end]); t != "" {
			out = append(out, sentence{t, q})
		}
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
			if w.Abbreviations[strings.ToLower(word)] {
				continue
			}
			emit(i, false)
			start = i + 1
		}
	}
	emit(len(text), false)
	return out
}

// clauses splits a sentence at commas.
func clauses(s string) []string {
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
