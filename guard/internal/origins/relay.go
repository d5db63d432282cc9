package origins

import (
	"fmt"
	"slices"
	"strings"
	"unicode"
	"unicode/utf8"

	"github.com/agentguard/agentguard/guard/internal/rulekit"
	"github.com/agentguard/agentguard/guard/rules"
	"github.com/agentguard/agentguard/trace"
	"github.com/agentguard/agentguard/trace/lexicon"
)

// NewRelay returns the rule that flags an answer that passes on to the
// user what only third-party content the user did not point at holds:
//
//   - a link, an e-mail address or an account that no record and no user
//     turn holds ("the full terms are at www.example-login.com", when only
//     a message said so);
//   - a place, a product or a company the answer recommends by a name that
//     only third-party text holds: no listing the agent read names it, or
//     the listing does but the words the answer uses come from text about
//     another entity (a review of one hotel that recommends another).
//
// It judges where the answer's specifics and names came from, not how they
// are worded; the lexicon's Recommendations only find which names an answer
// recommends. A value the agent wrote itself before any content held it (an
// account number it made up for a call) is its own, not a relay. Findings
// are warnings, verdict Allow: the answer stands, and the trace and the
// ledger show what it relayed, with the facts it rests on.
func NewRelay(tools *rulekit.Tools) *Relay {
	lx := &tools.Words().Recommendations
	return &Relay{tools: tools, cues: lexicon.NewWordSet(slices.Concat(lx.Before, lx.After), true)}
}

// Relay is the untrusted-relay rule.
type Relay struct {
	tools *rulekit.Tools
	cues  *lexicon.WordSet // the Before and After words of the tools' lexicon
}

// Name returns rules.Relay.
func (r *Relay) Name() string { return rules.Relay }

// ToolOnly is false: the rule judges answers.
func (r *Relay) ToolOnly() bool { return false }

// JudgesTool is false: the rule judges no tool call.
func (r *Relay) JudgesTool(string, rulekit.Tool) bool { return false }

// Index brings t's origins index, and the index of what the agent wrote,
// up to date (rulekit.Indexer).
func (r *Relay) Index(t *trace.Trace) {
	indexOf(t, r.tools)
	writtenOf(t)
}

// Check judges an answer: at most one finding for what it passes on and
// one for what it recommends.
func (r *Relay) Check(t *trace.Trace, s *trace.Step) []trace.Finding {
	if s.Kind != trace.KindModel || len(s.Calls) > 0 || s.Result == "" {
		return nil
	}
	var out []trace.Finding
	for _, v := range specifics(s.Result) {
		if f, ok := r.passedOn(t, s, v); ok {
			out = append(out, f)
			break
		}
	}
	for _, n := range recommendations(&r.tools.Words().Recommendations, r.cues, s.Result) {
		if f, ok := r.recommended(t, s, n); ok {
			out = append(out, f)
			break
		}
	}
	return out
}

// passedOn judges a link, address or account v of the answer s.
func (r *Relay) passedOn(t *trace.Trace, s *trace.Step, v string) (trace.Finding, bool) {
	ix := indexOf(t, r.tools) // the index only for an answer that names something
	os := ix.of(v)
	if !thirdPartyOnly(os) || r.pointedAt(t, os) || r.ownWords(t, s, v, os) {
		return trace.Finding{}, false
	}
	src, field, text := r.field(t, os[0], v)
	return trace.Finding{
		Rule: rules.Relay, Step: s.Index, Verdict: trace.Allow, Dimension: trace.Accuracy, Severity: trace.SeverityWarning,
		Message:  fmt.Sprintf("the answer passes on %q, which only third-party content (%s) holds", v, os[0].tool),
		Evidence: v, Tags: []string{"relay"},
		Facts: []trace.Fact{
			rulekit.AnswerFact(s, around(s.Result, v), "the answer passes it on"),
			rulekit.OriginFact(src, field, text, "third-party text"),
			rulekit.AbsentFact("user turns and records", v, "no user turn or record holds it"),
		},
	}, true
}

// recommended judges a name n the answer s recommends.
func (r *Relay) recommended(t *trace.Trace, s *trace.Step, n recommendation) (trace.Finding, bool) {
	ix := indexOf(t, r.tools)
	name, os := "", []origin(nil)
	for _, v := range n.variants {
		if os = ix.of(v); len(os) > 0 {
			name = v
			break
		}
	}
	if !thirdPartyOnly(os) || r.ownWords(t, s, name, os) {
		return trace.Finding{}, false
	}
	f := trace.Finding{
		Rule: rules.Relay, Step: s.Index, Verdict: trace.Allow, Dimension: trace.Accuracy, Severity: trace.SeverityWarning,
		Evidence: name, Tags: []string{"relay", "recommendation"},
	}
	answer := rulekit.AnswerFact(s, around(s.Result, n.text), "the answer recommends it")
	rec, listed := ix.listed(name)
	switch {
	case listed && rec.origin.kind != fromRecord:
		return trace.Finding{}, false // the user named it ("is the Harbour any good?")
	case !listed:
		if r.pointedAt(t, os) {
			return trace.Finding{}, false // what the user asked about names it
		}
		src, field, text := r.field(t, os[0], name)
		f.Message = fmt.Sprintf("the answer recommends %q, which only third-party text (%s) names", name, os[0].tool)
		f.Facts = []trace.Fact{answer, rulekit.OriginFact(src, field, text, "third-party text"),
			rulekit.AbsentFact("user turns and records", name, "no user turn or record holds it")}
		return f, true
	}
	// A listing names the entity (as "Harbour", the answer "Harbour Inn"):
	// the answer's words for it must not come only from text about
	// another entity, even one the user pointed at (the reviews of the
	// hotel the user named do not recommend another).
	o, about, ok := r.aboutOther(t, name, os)
	if !ok {
		return trace.Finding{}, false
	}
	src, field, text := r.field(t, o, name)
	lsrc, lfield, ltext := r.field(t, rec.origin, rec.value)
	f.Message = fmt.Sprintf("the answer recommends %q in the words of third-party text about %q (%s), not of the listing", name, about, o.tool)
	f.Facts = []trace.Fact{answer, rulekit.OriginFact(src, field, text, "third-party text about "+rulekit.Clip(about, 60)),
		rulekit.OriginFact(lsrc, lfield, ltext, "record field: the listing's name for it"),
		rulekit.AbsentFact("user turns and records", name, "no user turn or record holds these words")}
	return f, true
}

// thirdPartyOnly reports whether origins os, of a value of an answer, are
// all third-party content.
func thirdPartyOnly(os []origin) bool {
	return len(os) > 0 && !slices.ContainsFunc(os, func(o origin) bool { return o.kind != fromContent })
}

// pointedAt reports whether one of origins os is content the user pointed
// the agent at, or found by a search in the user's words: passing it on
// answers the user.
func (r *Relay) pointedAt(t *trace.Trace, os []origin) bool {
	return slices.ContainsFunc(os, func(o origin) bool { return o.delegated || r.searchedByUser(t, o.step) })
}

// ownWords reports whether the agent wrote v itself, into the arguments
// of one call, no later than the first third-party content that holds it
// (origins os), before the answer s: an account number it made up for a
// payment, an activity it wrote into a file, which the tool's result
// echoes.
func (r *Relay) ownWords(t *trace.Trace, s *trace.Step, v string, os []origin) bool {
	k, ok := writtenOf(t).by(v)
	if !ok || k > os[0].step || k >= s.Index {
		return false
	}
	p, want := stepAt(t, k), tokenSet(v)
	if p.Kind == trace.KindModel {
		return slices.ContainsFunc(p.Calls, func(c trace.Call) bool { return subset(want, tokenSet(c.Args)) })
	}
	return subset(want, tokenSet(p.Args))
}

// searchedByUser reports whether the call at step i searched for content
// the user named: a query in the user's words right next to a word for
// the kind of content the tool reads ("the team meeting minutes file", a
// search of files for "team meeting minutes"; "会议纪要文件"). What it
// found is content the user pointed at, for the answer, though a query
// points at no write; a search for a topic ("will my points expire?", a
// search for "points") finds third-party text.
func (r *Relay) searchedByUser(t *trace.Trace, i int) bool {
	p := stepAt(t, i)
	if p.Turn < 0 || p.Turn >= len(t.UserTurns) {
		return false
	}
	a := &r.tools.Words().Authority
	var kinds []string // the words for what the tool reads
	for _, w := range rulekit.NameWords(p.Name) {
		for _, k := range a.ContentKinds {
			if slices.Contains(k, w) || slices.Contains(k, strings.TrimSuffix(w, "s")) {
				kinds = append(kinds, k...)
			}
		}
	}
	args, ok := rulekit.DecodedArgs(t, p)
	if len(kinds) == 0 || !ok {
		return false
	}
	turn, named := asciiLower(t.UserTurns[p.Turn]), false
	rulekit.Walk("", args, func(path string, leaf any) {
		v, ok := leaf.(string)
		if !ok || named || !slices.Contains(a.QueryKeys, strings.ToLower(rulekit.LastKey(path))) {
			return
		}
		q := asciiLower(strings.TrimSpace(v))
		for j := strings.Index(turn, q); q != "" && j >= 0; j = nextIndex(turn, q, j) {
			before := strings.TrimRight(turn[:j], " \"'“「")
			after := strings.TrimLeft(turn[j+len(q):], " \"'”」")
			if rulekit.WordByte(turn, j-1) && q[0] < utf8.RuneSelf || rulekit.WordByte(turn, j+len(q)) && q[len(q)-1] < utf8.RuneSelf {
				continue // inside a word
			}
			if slices.ContainsFunc(kinds, func(k string) bool {
				return strings.HasPrefix(after, k) && !(k[len(k)-1] < utf8.RuneSelf && rulekit.WordByte(after, len(k)) && !strings.HasPrefix(after[len(k):], "s")) ||
					strings.HasSuffix(before, k) && !(k[0] < utf8.RuneSelf && rulekit.WordByte(before, len(before)-len(k)-1))
			}) {
				named = true
				return
			}
		}
	})
	return named
}

// listedValue is a record field, or a user turn, that names an entity:
// the origin and the words.
type listedValue struct {
	origin origin
	value  string
}

// listed reports whether a record or a user turn names the entity name
// names, in words of its own: name without its last or first word (the
// answer's "Harbour Inn", the listing's "Harbour"), when at least two
// words stay; for a name in a script without spaces, without its last
// characters or its first.
func (ix *originIndex) listed(name string) (listedValue, bool) {
	for _, v := range shorter(name) {
		for _, o := range ix.of(v) {
			if o.kind == fromRecord || o.kind == fromUser || o.kind == fromCard {
				return listedValue{o, v}, true
			}
		}
	}
	return listedValue{}, false
}

// shorter returns the forms of name a listing may give it: without its
// first or last word when two stay, or, in a script without spaces,
// without up to two of its last characters or its first, when three stay.
func shorter(name string) []string {
	if words := strings.Fields(name); len(words) > 1 {
		if len(words) < 3 {
			return nil
		}
		return []string{strings.Join(words[:len(words)-1], " "), strings.Join(words[1:], " ")}
	}
	rs := []rune(name)
	var out []string
	for k := 1; k <= 2 && len(rs)-k >= 3; k++ {
		out = append(out, string(rs[:len(rs)-k]))
	}
	if len(rs) >= 4 {
		out = append(out, string(rs[1:]))
	}
	return out
}

// readField is a field of a result as eachField reads it.
type readField struct {
	rec        int
	key, value string
	prose      bool
}

// aboutOther returns a content origin among os whose text names name but
// is about another entity — a field whose key and whose record's other
// short values (what the text describes: the hotel a review is of) share
// nothing with name — and what it is about.
func (r *Relay) aboutOther(t *trace.Trace, name string, os []origin) (origin, string, bool) {
	want := tokenSet(name)
	for _, o := range os {
		p := stepAt(t, o.step)
		if p.Result == "" {
			continue
		}
		var fields []readField
		eachField(p.Result, func(rec int, key, value string, prose bool) {
			fields = append(fields, readField{rec, key, value, prose})
		})
		for _, f := range fields {
			if !subset(want, tokenSet(f.value)) {
				continue
			}
			subjects := []string{f.key}
			for _, g := range fields {
				if g.rec == f.rec && g.value != f.value && !g.prose && len(g.value) <= 80 {
					subjects = append(subjects, g.value)
				}
			}
			about, same := "", false
			for _, sub := range subjects {
				ts := tokenSet(sub)
				if len(ts) == 0 {
					continue
				}
				if subset(ts, want) || subset(want, ts) {
					same = true
					break
				}
				if about == "" {
					about = sub
				}
			}
			if !same && about != "" {
				return o, about, true
			}
		}
	}
	return origin{}, "", false
}

// field returns the step of origin o, and the key and an excerpt of the
// field of its result that holds v: the place a reviewer reads v at. A
// released step's result may be gone; then the key is empty and the
// excerpt is v.
func (r *Relay) field(t *trace.Trace, o origin, v string) (*trace.Step, string, string) {
	p := stepAt(t, o.step)
	if p.Index != o.step {
		p = &trace.Step{Index: o.step, Name: o.tool}
	}
	want := tokenSet(v)
	key, text := "", v
	found := false
	if p.Result != "" {
		eachField(p.Result, func(_ int, k, value string, _ bool) {
			if !found && subset(want, tokenSet(value)) {
				key, text, found = k, around(value, v), true
			}
		})
	}
	return p, key, text
}

// tokenSet returns the tokens values are looked up by (eachToken) of text.
func tokenSet(text string) map[string]bool {
	out := map[string]bool{}
	eachToken(text, func(tok string) { out[tok] = true })
	return out
}

// subset reports whether every token of a is in b.
func subset(a, b map[string]bool) bool {
	for tok := range a {
		if !b[tok] {
			return false
		}
	}
	return true
}

// around returns the words of text around v, the first place text holds
// it (in any case), at most about a fact's length; text's start when it
// does not hold v.
func around(text, v string) string {
	const side = 90
	i := strings.Index(asciiLower(text), asciiLower(v))
	if i < 0 {
		return rulekit.Clip(text, trace.MaxFactText)
	}
	from, to := max(0, i-side), min(len(text), i+len(v)+side)
	for from > 0 && !utf8.RuneStart(text[from]) {
		from--
	}
	for to < len(text) && !utf8.RuneStart(text[to]) {
		to++
	}
	out := strings.Join(strings.Fields(text[from:to]), " ")
	if from > 0 {
		out = "…" + out
	}
	if to < len(text) {
		out += "…"
	}
	return out
}

// asciiLower folds the ASCII letters of s to lower case, keeping every
// byte where it is: offsets into it are offsets into s.
func asciiLower(s string) string {
	i := strings.IndexFunc(s, func(r rune) bool { return r >= 'A' && r <= 'Z' })
	if i < 0 {
		return s
	}
	b := []byte(s)
	for ; i < len(b); i++ {
		if c := b[i]; c >= 'A' && c <= 'Z' {
			b[i] = c + 'a' - 'A'
		}
	}
	return string(b)
}

// written is the index of what the agent wrote itself into its calls'
// arguments, by token: the first step that wrote each. (Its messages are
// left out: a message may repeat what it read, and a recorder may not
// place a message among the calls it came with.) It is built once per
// step, incrementally, in the trace's memo, and holds one entry per
// distinct token.
type written struct {
	first map[string]int
	steps int
}

type writtenKey struct{}

// writtenOf returns the index of what the agent wrote in t, brought up to
// date with t's steps; a trace shorter than what the memo indexed gets a
// fresh index of its own.
func writtenOf(t *trace.Trace) *written {
	w := t.Memo(writtenKey{}, func() any { return &written{first: map[string]int{}} }).(*written)
	if w.steps > t.Len() {
		w = &written{first: map[string]int{}}
	}
	for w.steps = max(w.steps, t.Released); w.steps < t.Len(); w.steps++ {
		p := t.Step(w.steps)
		switch {
		case p == nil:
			continue
		case p.Kind == trace.KindTool || p.Kind == trace.KindRetrieval:
			w.add(p.Args, p.Index)
		case p.Kind == trace.KindModel:
			for _, c := range p.Calls {
				w.add(c.Args, p.Index)
			}
		}
	}
	return w
}

func (w *written) add(text string, step int) {
	eachToken(text, func(tok string) {
		if _, ok := w.first[tok]; !ok {
			w.first[tok] = step
		}
	})
}

// by returns the step by which the agent had written every token of v: the
// latest of the first steps that wrote each; ok is false when it never
// wrote one of them.
func (w *written) by(v string) (step int, ok bool) {
	step, ok = -1, true
	n := 0
	eachToken(v, func(tok string) {
		i, found := w.first[tok]
		ok, step, n = ok && found, max(step, i), n+1
	})
	return step, ok && n > 0
}

// specifics returns what an answer names that could be relayed: links,
// e-mail addresses and account numbers.
func specifics(text string) []string {
	if !rulekit.MayHoldSpecific(text) {
		return nil // most answers name no link, address or account
	}
	var out []string
	for _, f := range strings.FieldsFunc(text, func(r rune) bool {
		// Chinese text needs no space around a link or an account: "转到DE89…。".
		return unicode.IsSpace(r) || strings.ContainsRune(",;()[]<>\"'!?*", r) || r >= utf8.RuneSelf && (unicode.IsPunct(r) || unicode.Is(unicode.Han, r))
	}) {
		f = strings.TrimRight(f, ".:")
		if rulekit.IsURL(f) || rulekit.IsEmail(f) || rulekit.IsIBAN(f) {
			out = append(out, f)
		}
	}
	return out
}

// recommendation is a name an answer recommends: the words of the answer
// (text), and the forms it is looked up by, longest first.
type recommendation struct {
	text     string
	variants []string
}

// recommendations returns the names an answer recommends: a name, words
// the lexicon's Recommendations put right before it (a few words or
// characters may stand between) or right after it, in one clause. A name
// is a run of capitalised words ("Harbour View Inn", "Hotel de la Paix"), a
// quoted or bold phrase, or a run of a script without capitals that ends
// in one of the lexicon's Kinds ("海景酒店"). Words at the start of a
// sentence or a list item are not names on their own.
func recommendations(lx *lexicon.Recommendations, cues *lexicon.WordSet, text string) []recommendation {
	if !cues.In(text) {
		return nil // most answers recommend nothing
	}
	lower := asciiLower(text)
	var out []recommendation
	for _, c := range nameSpans(lx, text) {
		var variants []string
		for _, st := range c.starts {
			if cueBefore(lx.Before, lower[:st]) || cueAfter(lx.After, lower[c.end:]) {
				variants = append(variants, text[st:c.end])
			}
		}
		if len(variants) > 0 {
			out = append(out, recommendation{text: text[c.starts[0]:c.end], variants: variants})
		}
	}
	return out
}

// nameSpan is a name of an answer: where it ends, and where it may start,
// longest first (an article or the words before a name in a script without
// spaces may or may not be part of it).
type nameSpan struct {
	starts []int
	end    int
}

// nameSpans returns the names of text (see recommendations).
func nameSpans(lx *lexicon.Recommendations, text string) []nameSpan {
	var out []nameSpan
	out = append(out, capitalised(lx, text)...)
	out = append(out, quoted(text)...)
	out = append(out, kindEnded(lx, text)...)
	return out
}

// capitalised returns the runs of capitalised words of text, joined by
// single spaces and the lexicon's Joiners; a run of one word only where a
// sentence does not start.
func capitalised(lx *lexicon.Recommendations, text string) []nameSpan {
	type word struct{ from, to int }
	var out []nameSpan
	var run []word
	flush := func() {
		for len(run) > 0 && slices.Contains(lx.Joiners, strings.ToLower(text[run[len(run)-1].from:run[len(run)-1].to])) {
			run = run[:len(run)-1]
		}
		if len(run) == 1 && (sentenceStart(text[:run[0].from]) || run[0].to-run[0].from < 3) || len(run) == 0 {
			run = run[:0]
			return
		}
		span := nameSpan{starts: []int{run[0].from}, end: run[len(run)-1].to}
		if len(run) > 1 && slices.Contains(lx.Articles, strings.ToLower(text[run[0].from:run[0].to])) {
			span.starts = append(span.starts, run[1].from)
		}
		out = append(out, span)
		run = run[:0]
	}
	for i := 0; i < len(text); {
		r, size := utf8.DecodeRuneInString(text[i:])
		if !wordRune(r) {
			if !(r == ' ' && len(run) > 0 && i+1 < len(text) && text[i+1] != ' ') {
				flush()
			}
			i += size
			continue
		}
		j := i
		for j < len(text) {
			c, n := utf8.DecodeRuneInString(text[j:])
			if !wordRune(c) && !(strings.ContainsRune("'’-.&", c) && j+n < len(text) && wordRuneAt(text, j+n)) {
				break
			}
			j += n
		}
		w := text[i:j]
		switch {
		case unicode.IsUpper(r):
			run = append(run, word{i, j})
		case len(run) > 0 && slices.Contains(lx.Joiners, strings.ToLower(w)):
			run = append(run, word{i, j})
		default:
			flush()
		}
		i = j
	}
	flush()
	return out
}

func wordRune(r rune) bool {
	return (unicode.IsLetter(r) || unicode.IsDigit(r)) && !unicode.Is(unicode.Han, r) || r == '&'
}

func wordRuneAt(text string, i int) bool {
	r, _ := utf8.DecodeRuneInString(text[i:])
	return wordRune(r)
}

// sentenceStart reports whether a word after before starts a sentence, a
// line or a list item: nothing but spaces and marks stand between it and
// the end of one, or the start of the text.
func sentenceStart(before string) bool {
	b := strings.TrimRight(before, " \t*#_>-•·\"“'‘(0123456789")
	if b == "" {
		return true
	}
	r, _ := utf8.DecodeLastRuneInString(b)
	return strings.ContainsRune(".!?:;\n。！？：；", r) || strings.HasSuffix(before, "\n")
}

// quoted returns the phrases of text in quotation marks or bold: at most
// 60 bytes, on one line.
func quoted(text string) []nameSpan {
	var out []nameSpan
	for _, q := range [][2]string{{"**", "**"}, {"“", "”"}, {"「", "」"}, {"『", "』"}, {"《", "》"}, {"\"", "\""}} {
		for i := 0; i < len(text); {
			a := strings.Index(text[i:], q[0])
			if a < 0 {
				break
			}
			a += i + len(q[0])
			b := strings.Index(text[a:], q[1])
			if b < 0 {
				break
			}
			b += a
			if s := text[a:b]; b > a && b-a <= 60 && !strings.ContainsRune(s, '\n') && strings.TrimSpace(s) == s {
				out = append(out, nameSpan{starts: []int{a}, end: b})
			}
			i = b + len(q[1])
		}
	}
	return out
}

// kindEnded returns the runs of Han characters of text that end in one of
// the lexicon's Kinds (at most maxNameRunes before the kind), each with
// every start that leaves at least four characters, longest first: which
// of them is the name depends on where the words before it end.
func kindEnded(lx *lexicon.Recommendations, text string) []nameSpan {
	var out []nameSpan
	for _, k := range lx.Kinds {
		if k == "" || k[0] < utf8.RuneSelf {
			continue
		}
		for i := 0; ; {
			j := strings.Index(text[i:], k)
			if j < 0 {
				break
			}
			end := i + j + len(k)
			i = end
			if slices.ContainsFunc(out, func(s nameSpan) bool { return s.end == end }) {
				continue
			}
			from := end - len(k)
			for runes := 0; from > 0 && runes < maxNameRunes; runes++ {
				r, size := utf8.DecodeLastRuneInString(text[:from])
				if !unicode.Is(unicode.Han, r) {
					break
				}
				from -= size
			}
			var span nameSpan
			for st := from; utf8.RuneCountInString(text[st:end]) >= 4; {
				span.starts = append(span.starts, st)
				_, n := utf8.DecodeRuneInString(text[st:])
				st += n
			}
			if len(span.starts) > 0 {
				span.end = end
				out = append(out, span)
			}
		}
	}
	return out
}

// maxNameRunes bounds the characters of a name read in a script without
// spaces; cueWindow the bytes before or after a name searched for a cue.
const (
	maxNameRunes = 24
	cueWindow    = 128
)

// clauseMarks end the clause a cue and the name it recommends must share:
// "I recommend Royal Panda (Authentic Chinese cuisine)" recommends Royal
// Panda, not "Authentic Chinese".
const clauseMarks = ".!?;,:()[]-–—\n。！？；，、：（）【】"

// cueBefore reports whether before, the lower-case text before a name,
// ends with one of the words cues, up to three words or characters before
// the name, in the same clause ("I recommend the", "推荐您入住"), or with a
// cue and a colon ("推荐：").
func cueBefore(cues []string, before string) bool {
	if n := len(before) - cueWindow; n > 0 {
		before = before[n:] // a cue, three words and the marks between them fit
	}
	ends := func(b string) bool {
		return slices.ContainsFunc(cues, func(c string) bool {
			return strings.HasSuffix(b, c) && !(c[0] < utf8.RuneSelf && rulekit.WordByte(b, len(b)-len(c)-1))
		})
	}
	b := strings.TrimRight(before, " \t*#_\"“「『《'‘")
	if colon := strings.TrimSuffix(strings.TrimSuffix(b, ":"), "："); colon != b && ends(strings.TrimRight(colon, " \t*")) {
		return true
	}
	for gap := 0; gap <= 3; gap++ {
		if ends(b) {
			return true
		}
		// Drop one unit: a Han character, or a word and the spaces before it.
		r, n := utf8.DecodeLastRuneInString(b)
		switch {
		case n == 0, strings.ContainsRune(clauseMarks, r):
			return false
		case unicode.Is(unicode.Han, r):
			b = b[:len(b)-n]
		default:
			k := strings.LastIndexAny(b, " \t\n")
			if strings.ContainsAny(b[k+1:], clauseMarks) {
				return false
			}
			b = strings.TrimRight(b[:k+1], " \t")
		}
	}
	return false
}

// cueAfter reports whether after, the lower-case text after a name, starts
// with one of the words cues, up to two words or characters after it.
func cueAfter(cues []string, after string) bool {
	if len(after) > cueWindow {
		after = after[:cueWindow]
	}
	a := strings.TrimLeft(after, " \t*_\"”」』》'’)")
	for gap := 0; gap <= 2; gap++ {
		for _, c := range cues {
			if strings.HasPrefix(a, c) && !(c[len(c)-1] < utf8.RuneSelf && rulekit.WordByte(a, len(c))) {
				return true
			}
		}
		r, n := utf8.DecodeRuneInString(a)
		switch {
		case n == 0, strings.ContainsRune(clauseMarks, r):
			return false
		case unicode.Is(unicode.Han, r):
			a = a[n:]
		default:
			k := strings.IndexAny(a, " \t")
			if k < 0 || strings.ContainsAny(a[:k], clauseMarks) {
				return false
			}
			a = strings.TrimLeft(a[k:], " \t")
		}
	}
	return false
}
