package origins

import (
	"encoding/json"
	"regexp"
	"slices"
	"strings"
	"unicode"
	"unicode/utf8"

	"github.com/agentguard/agentguard/guard/internal/rulekit"
	"github.com/agentguard/agentguard/memory"
	"github.com/agentguard/agentguard/trace"
	"github.com/agentguard/agentguard/trace/lexicon"
	"github.com/agentguard/agentguard/trace/textnorm"
)

// This file keeps, per trace, where every value that entered it came from:
// the origins index. A value's origin is a user turn, the memory card, a
// structured field of a tool result (a record) or third-party text in a
// tool result (content). Rules ask which origins a call's argument has;
// they never ask how the text around it is worded.
//
// The index is built once per step, incrementally, and kept in the trace's
// memo, so a rule that checks a call costs O(the call's arguments), not a
// rescan of every earlier result.

// originKind says where a value came from.
type originKind uint8

const (
	fromUser    originKind = iota // a user turn
	fromCard                      // the memory card
	fromRecord                    // a structured field of a tool result: trusted
	fromContent                   // third-party text in a tool result: untrusted
	// fromEcho is a result field that repeats an argument of its own call
	// (a contact lookup answering {"email": <the e-mail it was asked
	// about>}): it links the record together but authorizes nothing, so an
	// injected address passed through a lookup is not laundered.
	fromEcho
)

// origin is one place values came from: a user turn, a card step, or one
// field (or prose block) of one tool result.
type origin struct {
	kind originKind
	step int    // the tool or memory step; the user turn's index for fromUser
	rec  int    // the record (JSON object, listing item) of the result that holds it
	tool string // the tool whose result it is
	// delegated marks content the user pointed the agent at: the call that
	// read it was addressed by a value from a user turn (a file name, a
	// page, a person's inbox). indirect marks content reached through
	// delegated content (a channel a to-do page names): the agent may read
	// on from it, but its values drive no write.
	delegated, indirect bool
}

// originIndex maps value tokens to the origins that hold them.
type originIndex struct {
	words        *lexicon.Authority
	steps, turns int  // how many steps and user turns are indexed
	records      int  // records numbered so far
	compacted    int  // origins after the last compaction (originsrelease.go)
	truncated    bool // a result was cut by the recorder: a value may hide in what is gone
	// lookupKeys maps the tokens of the identifying arguments of successful
	// tool calls to those calls: the entity each lookup was about.
	lookupKeys map[string][]int
	// recValues holds the short field values of each record, by record
	// number: what else a record says about the entity it describes.
	recValues map[int][]string
	// userShapes holds, per shape of identifying value (url, email,
	// iban, phone), the first two distinct values the user's turns gave
	// of it: enough to tell whether the user gave one other than a value.
	userShapes map[string][]string
	toolKinds  map[string][][]string // kindsOf, by tool name
	origins    []origin
	tokens     map[string][]int32 // token -> origins holding it, ascending, once each
	block      []int32            // where short posting lists are cut from
}

type originsKey struct{}

// indexOf returns the index of t, brought up to date with t's steps and
// user turns, read with the guard's tools. It lives in t's memo; a trace
// shorter than what the memo indexed (a prefix taken out of order) gets a
// fresh index of its own.
func indexOf(t *trace.Trace, tools *rulekit.Tools) *originIndex {
	fresh := func() *originIndex {
		return &originIndex{words: &tools.Words().Authority, tokens: map[string][]int32{}}
	}
	ix := t.Memo(originsKey{}, func() any { return fresh() }).(*originIndex)
	if ix.steps > t.Len() || ix.turns > len(t.UserTurns) {
		ix = fresh()
	}
	ix.steps = max(ix.steps, t.Released) // an index begun after a release reads what is kept
	// User turns and steps are indexed in the order they arrived: a turn's
	// values are known before the steps that follow it.
	for ix.steps < t.Len() || ix.turns < len(t.UserTurns) {
		if ix.turns < len(t.UserTurns) && (ix.steps == t.Len() || t.Step(ix.steps).Turn >= ix.turns) {
			ix.add(origin{kind: fromUser, step: ix.turns}, t.UserTurns[ix.turns])
			ix.noteShapes(t.UserTurns[ix.turns])
			ix.turns++
			continue
		}
		ix.addStep(t, t.Step(ix.steps), tools)
		ix.steps++
	}
	return ix
}

func (ix *originIndex) addStep(t *trace.Trace, p *trace.Step, tools *rulekit.Tools) {
	switch {
	case p == nil:
	case p.Kind == trace.KindMemory && p.Name == memory.StepCard:
		// What the user gave are the constraints' values; the names, kinds,
		// keys, states and turn numbers around them are the card's own
		// words ("active", "delivery", "3"), which an argument holding them
		// would otherwise be traced to. A step that does not decode (a
		// truncated one) gives what it still holds.
		cs, err := memory.StepConstraints(t, p)
		if err != nil {
			ix.add(origin{kind: fromCard, step: p.Index}, p.Result)
			break
		}
		for _, c := range cs {
			if c.Value != "" {
				ix.add(origin{kind: fromCard, step: p.Index}, c.Value)
			}
		}
	case p.Kind == trace.KindMemory && p.Name != memory.StepCompress:
		// A compress step's result is a report of message indexes and
		// token counts, no value the user gave (and as long as the
		// messages dropped). Another memory step is its text.
		ix.add(origin{kind: fromCard, step: p.Index}, p.Result)
	case (p.Kind == trace.KindTool || p.Kind == trace.KindRetrieval) && !p.Blocked && p.Error == "" && p.Result != "":
		ix.truncated = ix.truncated || p.Truncated
		if ix.lookupKeys == nil {
			ix.lookupKeys = map[string][]int{}
		}
		var echoes []string // the call's argument values, normalised
		if args, ok := rulekit.DecodedArgs(t, p); ok {
			rulekit.Walk("", args, func(path string, leaf any) {
				v, ok := rulekit.LeafString(leaf)
				if !ok || v == "" {
					return
				}
				echoes = append(echoes, normToken(v))
				// The entity a lookup is about: its identifying arguments.
				if identifying(tools.Words(), path, v) {
					eachToken(v, func(tok string) { ix.lookupKeys[tok] = append(ix.lookupKeys[tok], p.Index) })
				}
			})
		}
		policy := tools.Of(p.Name)
		delegated, indirect := ix.pointedByUser(t, p)
		base := ix.records
		eachField(p.Result, func(rec int, key, value string, prose bool) {
			ix.records = max(ix.records, base+rec+1)
			kind := fromRecord
			if prose || policy.Untrusted || slices.Contains(policy.UntrustedFields, key) {
				kind = fromContent
			}
			if slices.Contains(policy.TrustedFields, key) {
				kind = fromRecord
			}
			if kind == fromRecord && slices.Contains(echoes, normToken(value)) {
				kind = fromEcho
			}
			ix.add(origin{kind: kind, step: p.Index, rec: base + rec, tool: p.Name, delegated: delegated || indirect, indirect: indirect && !delegated}, value)
			if kind != fromContent && len(value) <= 80 {
				if ix.recValues == nil {
					ix.recValues = map[int][]string{}
				}
				ix.recValues[base+rec] = append(ix.recValues[base+rec], value)
			}
		})
	}
}

// pointedByUser reports whether a tool call was addressed by a value the
// user gave — a file name, a URL, a person or channel, an id — directly or
// through content the user pointed at before (a to-do page the user named
// names a channel to read). Counts, limits and dates do not point anywhere.
func (ix *originIndex) pointedByUser(t *trace.Trace, p *trace.Step) (direct, indirect bool) {
	if refersTo(ix.words, t, p, ix.kindsOf(p.Name)) {
		return true, false
	}
	args, ok := rulekit.DecodedArgs(t, p)
	if !ok {
		return false, false
	}
	rulekit.Walk("", args, func(path string, leaf any) {
		v, ok := leaf.(string)
		if direct || !ok || strings.TrimSpace(v) == "" || rulekit.IsDate(v) || slices.Contains(ix.words.QueryKeys, strings.ToLower(rulekit.LastKey(path))) {
			return
		}
		for _, o := range ix.lookup(v) {
			switch org := ix.origins[o]; {
			case org.kind == fromUser || org.kind == fromCard:
				direct = true
				return
			case org.kind == fromContent && org.delegated:
				indirect = true
			}
		}
	})
	return direct, indirect
}

// refersTo reports whether the user, in the turn the call serves, refers
// to the kind of content the tool reads with a determiner ("the voicemail I
// just got", "回复这封邮件"): the user points at it without naming it.
// kinds are the kinds of content the tool reads (contentKinds).
func refersTo(a *lexicon.Authority, t *trace.Trace, p *trace.Step, kinds [][]string) bool {
	if p.Turn < 0 || p.Turn >= len(t.UserTurns) {
		return false
	}
	if len(kinds) == 0 {
		return false
	}
	turn := strings.ToLower(t.UserTurns[p.Turn])
	for _, k := range kinds {
		for _, w := range k {
			for i := strings.Index(turn, w); i >= 0; i = nextIndex(turn, w, i) {
				before := strings.TrimRight(turn[:i], " ")
				if w[0] >= 0x80 {
					// 那封邮件; or a noun a 的-phrase defines: "Anna 发给我的邮件",
					// "我最新的邮件" (the email Anna sent me, my latest email).
					if strings.HasSuffix(before, "的") || slices.ContainsFunc(a.Determiners, func(d string) bool { return d[0] >= 0x80 && determinesCJK(before, d) }) {
						return true
					}
					continue
				}
				if rulekit.WordByte(turn, i-1) || rulekit.WordByte(turn, i+len(w)) && !strings.HasPrefix(turn[i+len(w):], "s") {
					continue
				}
				// the noun, or up to three modifiers before it in one noun
				// phrase: "their contact page", "the team meeting minutes
				// file"; punctuation ends the phrase.
				fields := strings.Fields(before)
				for j := len(fields) - 1; j >= 0 && j >= len(fields)-4; j-- {
					f := fields[j]
					if d := strings.Trim(f, ",.;:\"“”"); slices.Contains(a.Determiners, d) || strings.HasSuffix(d, "'s") {
						return true // "the", "this", "their", "acme's"
					}
					if strings.ContainsAny(f, ",.;:!?\"“”()") {
						break
					}
				}
			}
		}
	}
	return false
}

// kindsOf is contentKinds kept per tool name for the trace: its calls
// name the same few tools at every step.
func (ix *originIndex) kindsOf(name string) [][]string {
	kinds, ok := ix.toolKinds[name]
	if !ok {
		kinds = contentKinds(ix.words, name)
		if ix.toolKinds == nil {
			ix.toolKinds = map[string][][]string{}
		}
		ix.toolKinds[name] = kinds
	}
	return kinds
}

// contentKinds returns the kinds of content the tool name reads: its
// words in the lexicon's ContentKinds.
func contentKinds(a *lexicon.Authority, name string) [][]string {
	var kinds [][]string
	for _, w := range rulekit.NameWords(name) {
		for _, k := range a.ContentKinds {
			if slices.Contains(k, w) || slices.Contains(k, strings.TrimSuffix(w, "s")) {
				kinds = append(kinds, k)
			}
		}
	}
	return kinds
}

// determinesCJK reports whether before — the text before a noun, in a
// script written without spaces — ends with the determiner d and at most
// four characters of modifiers of one phrase: "那封感谢邮件" (that thank-you
// e-mail).
func determinesCJK(before, d string) bool {
	i := strings.LastIndex(before, d)
	if i < 0 {
		return false
	}
	gap := before[i+len(d):]
	return utf8.RuneCountInString(gap) <= 4 && !strings.ContainsFunc(gap, func(r rune) bool {
		return unicode.IsSpace(r) || unicode.IsPunct(r)
	})
}

func nextIndex(s, w string, i int) int {
	j := strings.Index(s[i+1:], w)
	if j < 0 {
		return -1
	}
	return i + 1 + j
}

// noteShapes records the identifying values of a user turn by shape.
func (ix *originIndex) noteShapes(turn string) {
	for f, shape := range shapedValues(turn) {
		if ix.userShapes == nil {
			ix.userShapes = map[string][]string{}
		}
		if vs := ix.userShapes[shape]; len(vs) < 2 && !slices.ContainsFunc(vs, func(x string) bool { return strings.EqualFold(x, f) }) {
			ix.userShapes[shape] = append(vs, f)
		}
	}
}

// add indexes the tokens of text under a new origin.
func (ix *originIndex) add(o origin, text string) {
	id := int32(len(ix.origins))
	ix.origins = append(ix.origins, o)
	eachToken(text, func(tok string) {
		list := ix.tokens[tok]
		if n := len(list); n > 0 && list[n-1] == id {
			return
		}
		if list == nil {
			// Most tokens are held by one or two origins: their lists
			// are cut from a shared block rather than allocated each.
			if len(ix.block)+2 > cap(ix.block) {
				ix.block = make([]int32, 0, 1024)
			}
			n := len(ix.block)
			ix.block = ix.block[:n+2]
			list = ix.block[n : n : n+2]
		}
		ix.tokens[tok] = append(list, id)
	})
}

// atAhead reports whether the identifier-like run that s starts with holds
// an '@': it is an e-mail address.
func atAhead(s string) bool {
	for _, r := range s {
		if r == '@' {
			return true
		}
		if !identRune(r) {
			return false
		}
	}
	return false
}

// lookup returns the origins that hold every token of v, ascending: a phone
// number by its phoneKey alone, anything else by all its tokens. A value
// with no token (punctuation only) has none. The slice may be the index's
// own posting list: read it only.
func (ix *originIndex) lookup(v string) []int32 {
	if rulekit.IsPhone(strings.TrimSpace(v)) {
		if k := phoneKey(v); k != "" {
			return ix.tokens[k]
		}
	}
	var out []int32
	first, owned := true, false
	eachToken(v, func(tok string) {
		if !first && len(out) == 0 {
			return
		}
		list := ix.tokens[tok]
		if first {
			out, first = list, false // a value of one token, the common case, is its list
			return
		}
		if !owned {
			out, owned = slices.Clone(out), true
		}
		out = slices.DeleteFunc(out, func(o int32) bool { _, found := slices.BinarySearch(list, o); return !found })
	})
	return out
}

// of returns the origins of v as values.
func (ix *originIndex) of(v string) []origin {
	ids := ix.lookup(v)
	out := make([]origin, len(ids))
	for i, id := range ids {
		out[i] = ix.origins[id]
	}
	return out
}

// eachField calls fn for every field of a tool result: the leaves of a
// JSON result; the "key: value" lines of a YAML-like or Python-repr text;
// the whole text otherwise. rec numbers the record that holds the field
// within the result (a JSON object, an item of a listing), from 0. prose
// says whether a value reads as free text (sentences) rather than a
// record's field.
func eachField(result string, fn func(rec int, key, value string, prose bool)) {
	w := fieldWalkers.Get().(*fieldWalker)
	read := w.walk(result)
	if read {
		for _, f := range w.fields {
			fn(f.rec, f.key, f.value, !f.name && (isProse(f.value) || embedsRecord(f.value)))
		}
	}
	w.release()
	if read {
		return
	}
	// JSON the walk turns away (a name twice in one object, invalid UTF-8)
	// is decoded as encoding/json decodes it; text that is not JSON fails
	// here too.
	var v any
	if json.Unmarshal([]byte(result), &v) == nil {
		recs := 0
		var visit func(x any, key string, rec int)
		visit = func(x any, key string, rec int) {
			switch o := x.(type) {
			case map[string]any:
				own := recs
				recs++
				for k, e := range o {
					if _, nested := e.(map[string]any); nested {
						fn(own, key, k, false) // a key that names a record: {"credit_card_7334": {...}}
					}
					visit(e, k, own)
				}
			case []any:
				for _, e := range o {
					visit(e, key, rec)
				}
			default:
				if s, ok := rulekit.LeafString(o); ok && s != "" {
					fn(rec, key, s, isProse(s) || embedsRecord(s))
				}
			}
		}
		visit(v, "", 0)
		return
	}
	if fields := keyValueLines(result); len(fields) > 0 {
		rec := 0
		for i, f := range fields {
			if i > 0 && f[2] == "-" {
				rec++
			}
			fn(rec, f[0], f[1], isProse(f[1]) || embedsRecord(f[1]))
		}
		return
	}
	// Plain text that is neither JSON nor a listing is a document (a page,
	// a file, a message) unless it is one bare value ("DE89…").
	fn(0, "", result, isProse(result) || strings.ContainsAny(strings.TrimSpace(result), " \t\n"))
}

// kvLine is a "key: value" line of YAML or a "'key': 'value'" pair of a
// Python dict, as tools that return text print their records.
var (
	kvLine = regexp.MustCompile(`^\s*(?:-\s+)?([A-Za-z_][\w ]{0,40}):(?:\s+(.*))?$`)
	pyPair = regexp.MustCompile(`'([^'\\]{1,80})':\s*(?:'((?:[^'\\]|\\.)*)'|"((?:[^"\\]|\\.)*)"|([^,}\]]+))`)
)

// keyValueLine matches kvLine, which needs a colon, on lines that have one.
func keyValueLine(line string) []string {
	if strings.IndexByte(line, ':') < 0 {
		return nil
	}
	return kvLine.FindStringSubmatch(line)
}

// keyValueLines reads a YAML-like or Python-repr record listing, or a list
// of short lines: its fields in order, a value continued on an indented
// line joined to it, an unkeyed line a field of its own. It returns nil for
// text that is not such a listing (any line of prose makes it free text).
func keyValueLines(text string) [][3]string {
	if strings.HasPrefix(strings.TrimSpace(text), "{") || strings.HasPrefix(strings.TrimSpace(text), "[{") {
		var out [][3]string
		for _, m := range pyPair.FindAllStringSubmatch(text, -1) {
			out = append(out, [3]string{m[1], m[2] + m[3] + strings.TrimSpace(m[4])})
		}
		return out
	}
	var out [][3]string
	lines := strings.Split(text, "\n")
	keyed := 0
	// A scalar that goes on past its line — a quoted one not yet closed,
	// or a block scalar ("key: |") — holds the lines that follow as its
	// text: a "key: value" line inside it is words of one field, never a
	// field of the record.
	var quote byte
	block := -1 // the indentation of a block scalar's key
	for _, line := range lines {
		t := strings.TrimSpace(line)
		switch {
		case quote != 0 && len(out) > 0:
			out[len(out)-1][1] += "\n" + t
			if closesQuote(t, quote) {
				quote = 0
			}
			continue
		case block >= 0 && len(out) > 0 && (t == "" || indentOf(line) > block):
			out[len(out)-1][1] += "\n" + t
			continue
		}
		block = -1
		if m := keyValueLine(line); m != nil {
			item := ""
			if strings.HasPrefix(t, "- ") {
				item = "-" // a new item of a YAML list
			}
			raw := strings.TrimSpace(m[2])
			switch {
			case raw != "" && (raw[0] == '\'' || raw[0] == '"') && !closesQuote(raw[1:], raw[0]):
				quote = raw[0]
			case raw == "|" || raw == ">" || raw == "|-" || raw == ">-" || raw == "|+" || raw == ">+":
				block, raw = indentOf(line), ""
			}
			out = append(out, [3]string{strings.TrimSpace(m[1]), raw, item})
			keyed++
			continue
		}
		switch {
		case t == "":
		case len(out) > 0 && line[0] == ' ' && !strings.HasPrefix(t, "- "):
			out[len(out)-1][1] += " " + t // a value continued on an indented line
		default:
			out = append(out, [3]string{"", strings.TrimPrefix(t, "- "), "-"})
		}
	}
	for i := range out {
		out[i][1] = strings.TrimSpace(strings.Trim(out[i][1], `'"`))
	}
	short := 0
	for _, f := range out {
		if f[0] == "" && !isProse(f[1]) {
			short++
		}
	}
	if keyed+short < len(out) || keyed+short < 2 {
		return nil // free text, not a listing of records
	}
	return out
}

// closesQuote reports whether s, the rest of a YAML scalar opened with
// quote, holds its closing quote: a ' not doubled, or a " not escaped.
func closesQuote(s string, quote byte) bool {
	for i := 0; i < len(s); i++ {
		switch {
		case quote == '"' && s[i] == '\\':
			i++
		case s[i] != quote:
		case quote == '\'' && i+1 < len(s) && s[i+1] == '\'':
			i++
		default:
			return true
		}
	}
	return false
}

func indentOf(line string) int { return len(line) - len(strings.TrimLeft(line, " ")) }

// embedsRecord reports whether a field's value holds "key: value" lines of
// its own: text written to look like a record inside a free-text field (a
// subject, a note, a file's content). Such a field is free text, whatever
// its length: the record the tool returned is its real structure, not
// what a field's words look like.
func embedsRecord(v string) bool {
	for line := range strings.Lines(v) {
		if m := keyValueLine(strings.TrimRight(line, "\r\n")); m != nil && strings.TrimSpace(m[2]) != "" {
			return true
		}
	}
	return false
}

// isProse reports whether a value reads as free text — sentences, a
// message, a page — rather than a field of a record: several words (runs
// between spaces: a URL or an e-mail address is one) with punctuation, or
// long running text. It judges the shape, not the words.
func isProse(s string) bool {
	words, cjk, marks := 0, 0, 0
	inWord, wordHasLetter := false, false
	for _, r := range s {
		switch {
		case r >= utf8.RuneSelf && unicode.Is(unicode.Han, r):
			cjk++
			inWord = false
		case unicode.IsSpace(r):
			if inWord && wordHasLetter {
				words++
			}
			inWord, wordHasLetter = false, false
		default:
			inWord = true
			if unicode.IsLetter(r) || unicode.IsDigit(r) {
				wordHasLetter = true
			}
			switch r {
			case '.', '!', '?', ',', ';', '。', '！', '？', '，', '；', '、':
				marks++
			}
		}
	}
	if inWord && wordHasLetter {
		words++
	}
	switch {
	case cjk >= 12 || (cjk >= 6 && marks > 0):
		return true
	case words >= 8, words >= 5 && marks > 0:
		return true
	}
	return false
}

// eachToken calls fn with the normalised tokens of text that values are
// looked up by: identifier-like runs (e-mails, URLs, IBANs, ids, words)
// folded to lower case without separators, phone numbers as their digits
// (and their last ten and eleven digits, so "+86 138…" finds "138…"), and
// runs of Chinese characters as overlapping pairs.
func eachToken(text string, fn func(tok string)) {
	text = textnorm.Fold(text) // full-width digits, odd spaces, look-alike letters
	if rulekit.MayHoldSpacedIBAN(text) {
		for _, m := range spacedIBAN.FindAllString(text, -1) {
			fn(normToken(strings.ReplaceAll(m, " ", "")))
		}
	}
	rulekit.EachPhoneRun(text, func(m string) {
		if k := phoneKey(m); k != "" {
			fn(k)
		}
	})
	i := 0
	for i < len(text) {
		r, size := utf8.DecodeRuneInString(text[i:])
		switch {
		case r >= utf8.RuneSelf && unicode.Is(unicode.Han, r):
			j := i
			var prev rune = -1
			for j < len(text) {
				c, n := utf8.DecodeRuneInString(text[j:])
				if !unicode.Is(unicode.Han, c) {
					break
				}
				if prev >= 0 {
					fn(string(prev) + string(c))
				} else if j+n >= len(text) || !startsHan(text[j+n:]) {
					fn(string(c)) // a lone character
				}
				prev = c
				j += n
			}
			i = j
		case identRune(r):
			j := i
			for j < len(text) {
				c, n := utf8.DecodeRuneInString(text[j:])
				if !identRune(c) {
					break
				}
				// "example.com.They": a sentence that ends without a space
				// (but "Maria.K@example.com" is one address).
				if c == '.' && j > i && j+n < len(text) && text[j-1] >= 'a' && text[j-1] <= 'z' && text[j+n] >= 'A' && text[j+n] <= 'Z' && !atAhead(text[j+n:]) {
					break
				}
				j += n
			}
			if tok := normToken(text[i:j]); tok != "" {
				fn(tok)
			}
			i = j
		default:
			i += size
		}
	}
}

// spacedIBAN is an IBAN printed in groups of four: "DE89 3704 0044 0532 0130 00".
var spacedIBAN = regexp.MustCompile(`\b[A-Z]{2}\d{2}(?: [A-Z0-9]{4}){2,7}(?: [A-Z0-9]{1,4})?\b`)

var phoneRun = regexp.MustCompile(`\+?\d[\d\s().\-–]{6,}\d`)

// phoneKey is how a phone number is looked up: its last ten digits (so
// "+86 138 0013 8000", "13800138000" and "+8613800138000" agree, and
// "07700 900123" finds "+447700900123"), or all its digits when it has
// seven to nine. It is "" for fewer than seven digits.
func phoneKey(s string) string {
	digits := strings.Map(func(r rune) rune {
		if r >= '0' && r <= '9' {
			return r
		}
		return -1
	}, s)
	switch {
	case len(digits) < 7:
		return ""
	case len(digits) > 10:
		return "tel:" + digits[len(digits)-10:]
	}
	return "tel:" + digits
}

func startsHan(s string) bool {
	r, _ := utf8.DecodeRuneInString(s)
	return unicode.Is(unicode.Han, r)
}

// identRune reports whether r belongs in an identifier-like token.
func identRune(r rune) bool {
	if r < utf8.RuneSelf {
		return identASCII[r]
	}
	return (unicode.IsLetter(r) || unicode.IsDigit(r)) && !unicode.Is(unicode.Han, r)
}

// identASCII is identRune for ASCII: letters, digits and "@._/:+#-".
var identASCII = func() (set [utf8.RuneSelf]bool) {
	for c := range utf8.RuneSelf {
		set[c] = c >= '0' && c <= '9' || c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || strings.ContainsRune("@._/:+#-", rune(c))
	}
	return set
}()

// normToken folds a token: a URL loses its scheme and trailing slash,
// trailing punctuation goes, case folds, and separators people vary in ids
// (- _ . # / :) are dropped. Tokens of one character carry nothing.
func normToken(tok string) string {
	if plainToken(tok) {
		return unpad(tok) // the common case: nothing to fold, nothing allocated
	}
	for len(tok) > 0 && strings.IndexByte(".:,/-", tok[len(tok)-1]) >= 0 {
		tok = tok[:len(tok)-1]
	}
	for len(tok) > 0 && strings.IndexByte(".:/", tok[0]) >= 0 { // "见：www.example" folds to ":www.example"
		tok = tok[1:]
	}
	tok = strings.TrimPrefix(strings.TrimPrefix(tok, "https://"), "http://")
	tok = strings.TrimPrefix(tok, "www.")
	out, ok := foldASCII(tok)
	if !ok {
		out = strings.Map(func(r rune) rune {
			switch r {
			case '-', '_', '.', '#', '/', ':', '+':
				return -1
			}
			return unicode.ToLower(r)
		}, tok)
		out = unpad(out) // order 003 is order 3, A09 is A9
	}
	if utf8.RuneCountInString(out) < 2 {
		if out >= "0" && out <= "9" && len(out) == 1 {
			return out // a one-digit id is still an id
		}
		return ""
	}
	return out
}

// foldASCII is the folding of normToken, separators dropped, case
// lowered, runs of digits unpadded, for a short ASCII token, with one
// allocation at most; ok is false for other tokens.
func foldASCII(tok string) (out string, ok bool) {
	var buf [64]byte
	if len(tok) > len(buf) {
		return "", false
	}
	b := buf[:0]
	for i := 0; i < len(tok); i++ {
		switch c := tok[i]; {
		case c >= utf8.RuneSelf:
			return "", false
		case c == '-' || c == '_' || c == '.' || c == '#' || c == '/' || c == ':' || c == '+':
		case c >= 'A' && c <= 'Z':
			b = append(b, c+'a'-'A')
		default:
			b = append(b, c)
		}
	}
	if len(b) == len(tok) && string(b) == tok {
		return unpad(tok), true
	}
	var un [64]byte
	return string(appendUnpadded(un[:0], b)), true
}

// unpad drops the leading zeros of every run of digits, keeping one zero
// for a run of zeros, so that zero-padded ids ("003", "A09") equal their
// unpadded forms. Runs of more than six digits (phones, accounts) keep
// theirs.
func unpad(tok string) string {
	if !padded(tok) {
		return tok // nothing to drop, nothing allocated
	}
	return string(appendUnpadded(make([]byte, 0, len(tok)), tok))
}

// appendUnpadded appends s to dst with the leading zeros of its runs of
// at most six digits dropped, as unpad does.
func appendUnpadded[T string | []byte](dst []byte, s T) []byte {
	for i := 0; i < len(s); {
		if s[i] < '0' || s[i] > '9' {
			dst = append(dst, s[i])
			i++
			continue
		}
		j := i
		for j < len(s) && s[j] >= '0' && s[j] <= '9' {
			j++
		}
		run := s[i:j]
		if len(run) <= 6 {
			for len(run) > 1 && run[0] == '0' {
				run = run[1:]
			}
		}
		dst = append(dst, run...)
		i = j
	}
	return dst
}

// padded reports whether a run of at most six digits in tok starts with a
// zero and has more digits after it: whether unpad changes tok.
func padded(tok string) bool {
	for i := strings.IndexByte(tok, '0'); i >= 0 && i < len(tok); {
		j := i
		for j < len(tok) && tok[j] >= '0' && tok[j] <= '9' {
			j++
		}
		start := i
		for start > 0 && tok[start-1] >= '0' && tok[start-1] <= '9' {
			start--
		}
		if start == i && j-start <= 6 && j-i > 1 {
			return true
		}
		k := strings.IndexByte(tok[j:], '0')
		if k < 0 {
			return false
		}
		i = j + k
	}
	return false
}

// plainToken reports whether tok is already in normal form: two or more
// lower-case ASCII letters and digits.
func plainToken(tok string) bool {
	if len(tok) < 2 {
		return false
	}
	for i := 0; i < len(tok); i++ {
		if c := tok[i]; !(c >= 'a' && c <= 'z' || c >= '0' && c <= '9') {
			return false
		}
	}
	return !strings.HasPrefix(tok, "www") && !strings.HasPrefix(tok, "http")
}
