package authz

import (
	"slices"
	"strings"
	"unicode"

	"github.com/agentguard/agentguard/guard/internal/rulekit"
	"github.com/agentguard/agentguard/trace"
)

// maxContent bounds the text of one result the index reads requests in:
// a task handed to a document is in its first pages.
const maxContent = 16 << 10

// index is what write-authorization keeps of one trace, read once, step by
// step, in the order the trace grew: the requests of the user's turns and
// of the content the user handed the task to, whether each turn says yes
// and what the agent said last in each, and how many calls of each tool
// ran. It lives in the trace's memo (one per tools and profile), so judging a write
// reads only the steps recorded since the last one.
type index struct {
	r            *Authorization
	turns, steps int
	asks         []ask
	notes        [][]head // per user turn: the verbs of its clauses
	questions    []bool   // per user turn: it asks a question
	yes          []bool   // per user turn: it says yes and no no
	said         map[int]said
	calls        map[string]int        // successful calls, by tool
	first        map[string]trace.Fact // the first of them, by tool
	pointers     []string              // what the turns that hand the task over point at
	actions      map[string]action     // by tool
}

// ask is a requested action and where it was read.
type ask struct {
	head
	turn int    // the user turn it was read in, or the turn of its step
	step int    // the step whose result held it; -1 for a user turn
	tool string // that step's tool
	yes  bool   // the user's yes to the agent's proposal
}

// said is the agent's last words in a turn: a message or the question the
// guard asked for it, and the families of action they name.
type said struct {
	fams []string
	step int
	text string
}

// indexKey keys an index in a trace's memo: rules that read the same tools
// the same way (the rule, and Requested for the origins rule) share one.
type indexKey struct {
	tools      *rulekit.Tools
	autonomous bool
}

func (r *Authorization) indexOf(t *trace.Trace) *index {
	fresh := func() *index {
		return &index{r: r, said: map[int]said{}, calls: map[string]int{}, first: map[string]trace.Fact{}, actions: map[string]action{}}
	}
	ix := t.Memo(indexKey{r.tools, r.autonomous}, func() any { return fresh() }).(*index)
	if ix.steps > t.Len() || ix.turns > len(t.UserTurns) {
		ix = fresh() // a shorter prefix than the memo read
	}
	ix.read(t)
	return ix
}

// Release reads the steps about to leave memory (trace.Releaser).
func (ix *index) Release(t *trace.Trace, n int) { ix.read(t) }

// read brings the index up to date with t: user turns and steps in the
// order they arrived, a turn before the steps that follow it.
func (ix *index) read(t *trace.Trace) {
	ix.steps = max(ix.steps, t.Released) // an index begun after a release reads what is kept
	for ix.steps < t.Len() || ix.turns < len(t.UserTurns) {
		if ix.turns < len(t.UserTurns) && (ix.steps == t.Len() || t.Step(ix.steps).Turn >= ix.turns) {
			ix.addTurn(t.UserTurns[ix.turns])
			ix.turns++
			continue
		}
		if p := t.Step(ix.steps); p != nil {
			ix.addStep(p)
		}
		ix.steps++
	}
}

func (ix *index) addTurn(text string) {
	w := ix.r.tools.Words()
	v := vocabOf(w)
	a := &w.Authority
	hs := v.heads(text, a.Questions)
	turn := len(ix.notes)
	ix.notes = append(ix.notes, hs)
	lower := strings.ToLower(text)
	ix.questions = append(ix.questions, strings.ContainsAny(text, "?？") || rulekit.ContainsAny(lower, a.Questions))
	ix.yes = append(ix.yes, saysYes(a.Yes, a.No, lower))
	for _, h := range hs {
		if h.st == stRequest && !h.read {
			ix.asks = append(ix.asks, ask{head: h, turn: turn, step: -1})
		}
	}
	if !ix.r.autonomous {
		return
	}
	for _, s := range sentences(text) {
		if v.handsOver(s) {
			ix.pointers = append(ix.pointers, pointers(s)...)
		}
	}
}

func (ix *index) addStep(p *trace.Step) {
	v := vocabOf(ix.r.tools.Words())
	switch {
	case p.Kind == trace.KindModel && p.Result != "" && p.Intent == "":
		ix.said[p.Turn] = said{fams: v.named(p.Result), step: p.Index, text: rulekit.FactText(p.Result)}
	case p.Kind == trace.KindGate && p.Finding != nil && p.Finding.Verdict == trace.Clarify:
		ix.said[p.Turn] = said{fams: v.named(p.Finding.Question), step: p.Index, text: rulekit.FactText(p.Finding.Question)}
	case p.Kind != trace.KindTool && p.Kind != trace.KindRetrieval || p.Blocked || p.Error != "":
	case ix.r.tools.Writes(p.Name):
		if ix.calls[p.Name] == 0 {
			ix.first[p.Name] = rulekit.CallFact(p, "an earlier call of the same tool")
		}
		ix.calls[p.Name]++
	case len(ix.pointers) > 0 && p.Result != "" && pointsAt(p.Args, ix.pointers):
		// Content the user handed the task to ("follow the instructions
		// in 'notices.txt'"): its requests are the user's.
		for _, h := range v.heads(rulekit.Clip(p.Result, maxContent), ix.r.tools.Words().Authority.Questions) {
			if h.st == stRequest && !h.read {
				ix.asks = append(ix.asks, ask{head: h, turn: p.Turn, step: p.Index, tool: p.Name})
			}
		}
	}
}

// action returns what the tool's name says it does, read once per trace.
func (ix *index) action(tool string) action {
	a, ok := ix.actions[tool]
	if !ok {
		a = vocabOf(ix.r.tools.Words()).actionOf(tool)
		ix.actions[tool] = a
	}
	return a
}

// asksUpTo returns the requests a call in turn may rest on: those of the
// user's turns up to it and of the content read before it, and the
// agent's proposals the user said yes to.
func (ix *index) asksUpTo(turn int) []ask {
	var out []ask
	for _, a := range ix.asks {
		if a.step >= 0 || a.turn <= turn {
			out = append(out, a)
		}
	}
	for k := 1; k <= turn && k < len(ix.yes); k++ {
		if s, ok := ix.said[k-1]; ok && ix.yes[k] {
			h := head{verb: "yes", fams: s.fams, st: stRequest, text: s.text}
			if len(h.fams) == 0 {
				h.fams = nil // a proposal that names no action: the yes goes to whatever comes
			}
			out = append(out, ask{head: h, turn: k, step: s.step, yes: true})
		}
	}
	return out
}

// saysYes reports whether a turn, in lower case, holds a yes word and no
// no word.
func saysYes(yes, no []string, lower string) bool {
	return rulekit.ContainsAny(lower, yes) && !rulekit.ContainsAny(lower, no)
}

// pointers returns what a sentence points at by name: its quoted words,
// and its words that are addresses, links or file names
// ("'landlord-notices.txt'", "www.example.com/todo", "bob@example.com").
func pointers(sentence string) []string {
	var out []string
	for _, f := range strings.Fields(sentence) {
		f = strings.TrimFunc(f, func(r rune) bool { return !unicode.IsLetter(r) && !unicode.IsDigit(r) })
		if strings.ContainsAny(f, "@/.") && len(f) >= 4 {
			out = append(out, strings.ToLower(f))
		}
	}
	toks := tokens(sentence)
	for i := 0; i < len(toks); i++ {
		if !toks[i].quoted {
			continue
		}
		j := i
		for j+1 < len(toks) && toks[j+1].quoted {
			j++
		}
		if q := sentence[toks[i].at:toks[j].end]; len(q) >= 4 {
			out = append(out, strings.ToLower(q))
		}
		i = j
	}
	return out
}

// pointsAt reports whether a call's arguments hold one of the pointers.
func pointsAt(args string, pointers []string) bool {
	l := strings.ToLower(args)
	return slices.ContainsFunc(pointers, func(p string) bool { return strings.Contains(l, p) })
}
