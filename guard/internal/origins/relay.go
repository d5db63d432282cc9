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
)

// NewRelay returns the rule that flags an answer that passes on to the
// user what only third-party content the user did not point at holds: a
// link, an e-mail address or an account that no record and no user turn
// holds ("the full terms are at www.example-login.com", when only a
// message said so).
//
// It judges where the answer's specifics came from, not how they are
// worded. A value the agent wrote itself before any content held it (an
// account number it made up for a call) is its own, not a relay. Findings
// are warnings, verdict Allow: the answer stands, and the trace and the
// ledger show what it relayed, with the facts it rests on.
func NewRelay(tools *rulekit.Tools) *Relay { return &Relay{tools} }

// Relay is the untrusted-relay rule.
type Relay struct{ tools *rulekit.Tools }

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

// Check judges an answer: at most one finding for what it passes on.
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
	return strings.Map(func(r rune) rune {
		if r >= 'A' && r <= 'Z' {
			return r + 'a' - 'A'
		}
		return r
	}, s)
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
