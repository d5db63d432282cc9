package origins

import (
	"fmt"
	"iter"
	"maps"
	"slices"
	"strings"
	"unicode"
	"unicode/utf8"

	"github.com/agentguard/agentguard/guard/internal/authz"
	"github.com/agentguard/agentguard/guard/internal/rulekit"
	"github.com/agentguard/agentguard/guard/rules"
	"github.com/agentguard/agentguard/trace"
	"github.com/agentguard/agentguard/trace/lexicon"
	"github.com/agentguard/agentguard/trace/textnorm"
)

// carriesInstructions reports whether text addresses the agent with orders —
// "ignore previous instructions", "before you can solve the task", "you must
// now send" — by the default lexicon's InstructionMarkers, matched on the
// text's normal form (textnorm.Fold), so that odd spaces, zero-width
// characters and look-alike letters do not hide them. It is a secondary
// signal: rules judge values by their origins, and a marker only raises a
// finding's severity or withdraws the trust a user's pointer gave content.
func carriesInstructions(w *lexicon.Compiled, text string) bool {
	text = textnorm.Fold(text)
	return w.MayMatch(w.InstructionMarkers, text) && w.InstructionMarkers.MatchString(text)
}

// instructionsKey memoises carriesInstructions per recorded step in its
// trace.
type instructionsKey struct{}

func stepCarriesInstructions(w *lexicon.Compiled, t *trace.Trace, p *trace.Step) bool {
	return t.StepMemo(p, instructionsKey{}, func() any { return carriesInstructions(w, p.Result) }).(bool)
}

// identifying reports whether an argument is an identifying value: its key
// names a recipient, account, contact, phone, e-mail, IBAN, id or address, or
// its value looks like an e-mail, IBAN, phone number or URL.
func identifying(w *lexicon.Compiled, path string, v string) bool {
	kind := rulekit.KindOfKey(w, rulekit.LastKey(path))
	if kind&rulekit.KeyDate != 0 || rulekit.IsDate(v) {
		return false // dates are reformatted freely ("January 11th" → 2025-01-11)
	}
	if kind&rulekit.KeyIdentifying != 0 {
		return true
	}
	return rulekit.IsEmail(v) || rulekit.IsIBAN(v) || rulekit.IsPhone(v) || rulekit.IsURL(v)
}

// NewProvenance returns the rule that judges the arguments of tool calls by where their values came
// from (the origins index), never by how the text around them is worded:
//
//   - an identifying value (recipient, account, IBAN, phone, e-mail, URL,
//     id, address, password) of a state-changing call must have an
//     authorized origin: a user turn, the memory card, a record field of a
//     tool result, or content the user pointed the agent at, for a write
//     the user asked for (authz.Requested: a request for the write, not a
//     word of its topic) — or, two hops from the pointer, a role the user
//     left open (an invitee's e-mail), not one they filled with a value of
//     the same kind. A record's fields are its real structure: "key: value"
//     lines inside a free-text field are that field's words. A value whose
//     only origins are third-party text
//     (an e-mail body, a page, a file, a review) was injected
//     (RuleInjection), however that text is worded; the agent's own earlier
//     arguments are never an origin, so passing an injected address through
//     a lookup first does not launder it. Phrases that address the agent
//     with orders (carriesInstructions) raise the finding's severity only;
//   - a URL or id passed to a read is held to the same: reading a page that
//     only injected content named is how data leaves; a link two hops from
//     the user's pointer is followed only when the user handed the task to
//     the content;
//   - a link, e-mail address or IBAN written inside a write's free text
//     whose only origin is third-party text the user never pointed at is a
//     warning: the write goes where the user said and carries it along;
//   - an id used in any call that appears nowhere — no user turn, no
//     result, no card — was made up (RuleProvenance);
//   - content passed to a write (a body, a note) that quotes a result about
//     one entity must go to that entity, unless the user named the
//     recipient: sending customer 3's quotes to customer 7 is flagged
//     (RuleProvenance).
//
// Findings are judged Block, but for the warnings named above and a read
// of an id from nowhere.
func NewProvenance(tools *rulekit.Tools) *Provenance { return &Provenance{tools} }

// Provenance is the argument-provenance rule; it files injected-argument
// findings too.
type Provenance struct{ tools *rulekit.Tools }

// Name returns rules.Provenance.
func (r *Provenance) Name() string { return rules.Provenance }

// Names returns the names the rule files findings under.
func (r *Provenance) Names() []string { return []string{rules.Provenance, rules.Injection} }

// ToolOnly is true: the rule judges tool calls.
func (r *Provenance) ToolOnly() bool { return true }

// JudgesTool is true: a read is judged for links and ids too.
func (r *Provenance) JudgesTool(string, rulekit.Tool) bool { return true }

// Index brings t's origins index up to date (rulekit.Indexer).
func (r *Provenance) Index(t *trace.Trace) { indexOf(t, r.tools) }

// Check judges a tool call's arguments.
func (r *Provenance) Check(t *trace.Trace, s *trace.Step) []trace.Finding {
	if s.Kind != trace.KindTool || rulekit.ArgsCut(s) {
		return nil // Evaluate keeps the decision recorded online on the whole arguments
	}
	c := &provenanceCall{w: r.tools.Words(), tools: r.tools, t: t, s: s, write: r.tools.Writes(s.Name)}
	if !c.write && len(t.UserTurns) == 0 && !strings.Contains(s.Args, ".") {
		return nil // outside a recorded conversation a read is judged for URLs only
	}
	args, ok := rulekit.DecodedArgs(t, s)
	if !ok {
		return nil
	}
	rulekit.Walk("", args, c.value)
	if c.write {
		if f, ok := entityMismatch(c.w, t, c.index(), s, c.idents, c.contents); ok {
			c.out = append(c.out, f)
		}
	}
	return c.out
}

// provenanceCall is one call being judged: its findings, and the
// identifying and content values seen so far.
type provenanceCall struct {
	w     *lexicon.Compiled
	tools *rulekit.Tools
	t     *trace.Trace
	s     *trace.Step
	write bool

	ix               *originIndex // built on the first value that needs it
	idents, contents []string
	out              []trace.Finding
}

func (c *provenanceCall) index() *originIndex {
	if c.ix == nil {
		c.ix = indexOf(c.t, c.tools)
	}
	return c.ix
}

// value judges one argument value at path.
func (c *provenanceCall) value(path string, leaf any) {
	v, ok := rulekit.LeafString(leaf)
	if !ok || strings.TrimSpace(v) == "" {
		return
	}
	key := rulekit.LastKey(path)
	if !c.write && !strings.Contains(v, ".") && (!idKey(key) || len(c.t.UserTurns) == 0) {
		// A read goes where it is pointed, but not to a URL from
		// third-party text or to an id from nowhere — which only a
		// recorded conversation can tell.
		return
	}
	switch ident := identifying(c.w, path, v); {
	case !ident:
		if c.write && (rulekit.KindOfKey(c.w, key)&rulekit.KeyContent != 0 || len(v) >= 40) {
			c.contents = append(c.contents, v)
			c.embedded(path, v)
		}
		return
	case !c.write && !rulekit.IsURL(v) && !idKey(key):
		return // a read goes where it is pointed, but not to a URL or id from nowhere
	}
	c.idents = append(c.idents, v)
	os := c.index().of(v)
	if len(os) == 0 {
		c.madeUp(path, key, v)
		return
	}
	if slices.ContainsFunc(os, func(o origin) bool { return c.vouches(o, v) }) {
		return
	}
	c.injected(path, v, os)
}

// madeUp files the finding for a value with no origin — unless the record
// is incomplete: a result the recorder cut, or a trace that holds no user
// turn (a wrapped tool called outside any recorded conversation).
func (c *provenanceCall) madeUp(path, key, v string) {
	if c.index().truncated || len(c.t.UserTurns) == 0 || !c.write && !idKey(key) {
		return
	}
	// A write with a made-up value is stopped; a read with a made-up id
	// only fetches the wrong thing, which the empty-result and grounding
	// gates watch: it is a warning.
	verdict, sev := trace.Block, trace.SeverityError
	if !c.write {
		verdict, sev = trace.Allow, trace.SeverityWarning
	}
	c.out = append(c.out, trace.Finding{
		Rule: rules.Provenance, Step: c.s.Index, Verdict: verdict, Dimension: trace.Accuracy, Severity: sev,
		Message:  fmt.Sprintf("%s=%q comes from no user turn, memory or earlier tool result", path, v),
		Evidence: v, Tags: []string{"unsourced-value"},
		Facts: []trace.Fact{
			rulekit.ArgFact(c.s, path, v),
			rulekit.AbsentFact(path, v, fmt.Sprintf("in none of %d user turns, the memory card or the results of %d earlier steps", len(c.t.UserTurns), c.s.Index)),
		},
	})
}

// vouches reports whether origin o lets v into this call: a user turn, the
// card or a record field does; an echo of the agent's own argument never
// does; third-party content only when the user pointed at it for this kind
// of value and, for a write, named the write.
func (c *provenanceCall) vouches(o origin, v string) bool {
	switch {
	case o.kind == fromEcho:
		return false
	case o.kind != fromContent:
		return true
	case !o.delegated:
		return false
	case stepCarriesInstructions(c.w, c.t, stepAt(c.t, o.step)):
		// Content that gives the agent orders loses the trust the user's
		// pointer gave it: a marker alone finds nothing, but it withdraws
		// delegation.
		return false
	case !scoped(c.w, c.t, o, v):
		return false // the user asked the content for another kind of value
	case !c.write:
		// Reading on from what the user pointed at — one hop; a link
		// found two hops away is followed only when the user handed the
		// task itself to the content ("do the tasks on my to-do list").
		return !o.indirect || delegatesTask(&c.w.Authority, c.t)
	}
	if c.index().userGaveLike(v) && !c.usesUsers(v) {
		// Content the user pointed at may fill a role the user left open
		// ("her details are in Bob's message": the e-mail on the page it
		// links); when the user gave a value of the same kind themselves
		// (their address, their site) and the call uses none of them,
		// the content's value has displaced the user's.
		return false
	}
	if c.recordDisagrees(o, v) {
		return false
	}
	// A value from content the user pointed at drives only a write the
	// user named and asked for in their own words: "pay the bill in
	// bill.txt" lets the bill's IBAN be paid; "summarise my latest email"
	// lets none of its addresses be written to.
	return named(c.w, c.t, c.s.Name, false) && authz.Requested(c.tools, c.t, c.s)
}

// userGaveLike reports whether a user turn holds a value of v's shape — a
// URL, an e-mail address, an IBAN or a phone number — other than v.
func (ix *originIndex) userGaveLike(v string) bool {
	return slices.ContainsFunc(ix.userShapes[valueShape(v)], func(x string) bool { return !strings.EqualFold(x, v) })
}

// usesUsers reports whether the call passes, in any argument, a value of
// v's shape that a user turn gave.
func (c *provenanceCall) usesUsers(v string) bool {
	shape := valueShape(v)
	args, ok := rulekit.DecodedArgs(c.t, c.s)
	if !ok {
		return false
	}
	found := false
	rulekit.Walk("", args, func(_ string, leaf any) {
		if s, ok := rulekit.LeafString(leaf); ok && !found && valueShape(s) == shape {
			found = slices.ContainsFunc(c.index().of(s), func(o origin) bool { return o.kind == fromUser })
		}
	})
	return found
}

// recordDisagrees reports whether the record whose free text holds v (a
// note, a subject) has an account field of its own, of v's shape and
// another value: two candidates for one role, and the record's structure
// names the one the tool returned ("buyer_iban" over an "iban: …" line in
// the order's note).
func (c *provenanceCall) recordDisagrees(o origin, v string) bool {
	if valueShape(v) != "iban" {
		return false // an e-mail's From and an address in its body are both the sender's to give
	}
	return slices.ContainsFunc(c.index().recValues[o.rec], func(x string) bool {
		return rulekit.IsIBAN(x) && normToken(x) != normToken(v)
	})
}

// shapedValues yields the links, e-mail addresses, IBANs and phone numbers
// written in free text, each with its shape. They are ASCII: any other
// rune, a space or a bracket ends one ("完整教程：www.example/get").
func shapedValues(text string) iter.Seq2[string, string] {
	return func(yield func(string, string) bool) {
		words := strings.FieldsFunc(text, func(r rune) bool {
			return r >= utf8.RuneSelf || unicode.IsSpace(r) || strings.ContainsRune(",;!()[]{}<>'\"*`", r)
		})
		for _, f := range words {
			f = strings.Trim(f, ".:?_")
			if shape := valueShape(f); shape != "" && !yield(f, shape) {
				return
			}
		}
	}
}

// valueShape names the kind of identifying value v is, or "".
func valueShape(v string) string {
	switch {
	case rulekit.IsEmail(v):
		return "email"
	case rulekit.IsURL(v):
		return "url"
	case rulekit.IsIBAN(v):
		return "iban"
	case rulekit.IsPhone(v):
		return "phone"
	}
	return ""
}

// injected files the finding for a value whose origins all fail to vouch
// for it, when one of them is third-party content.
// embedded judges the links, e-mail addresses and IBANs written inside a
// write's free text (a message body, a note): one whose only origin is
// third-party text the user never pointed the agent at is a warning, since
// the write goes where the user said and only carries the value along.
// One from nowhere is the agent's own words.
func (c *provenanceCall) embedded(path, text string) {
	if !strings.ContainsAny(text, ".@") && !rulekit.MayHoldSpecific(text) {
		return
	}
	var seen []string
	for f, shape := range shapedValues(text) {
		if shape == "phone" || slices.Contains(seen, f) {
			continue
		}
		seen = append(seen, f)
		os := c.index().of(f)
		if len(os) == 0 || slices.ContainsFunc(os, func(o origin) bool { return o.delegated || c.vouches(o, f) }) {
			continue // relaying what the user pointed the agent at, even two hops on, is the task
		}
		n := len(c.out)
		c.injected(path, f, os)
		if len(c.out) > n {
			f := &c.out[n]
			f.Verdict, f.Severity = trace.Allow, trace.SeverityWarning
			f.Message = fmt.Sprintf("%s carries %q, which comes only from third-party content", path, f.Evidence)
			f.Tags = append(f.Tags, "in-text")
		}
	}
}

func (c *provenanceCall) injected(path, v string, os []origin) {
	src := os[0]
	for _, o := range os {
		if o.kind == fromContent {
			src = o
			break
		}
	}
	if src.kind != fromContent {
		return // only echoes of the agent's own arguments: judged as no origin above
	}
	msg := fmt.Sprintf("%s=%q reaches %q only from third-party content (%s)", path, v, c.s.Name, src.tool)
	switch {
	case src.delegated && stepCarriesInstructions(c.w, c.t, stepAt(c.t, src.step)):
		msg = fmt.Sprintf("%s=%q comes only from content the user pointed at (%s), which gives the agent orders", path, v, src.tool)
	case src.delegated:
		msg = fmt.Sprintf("%s=%q comes only from content the user pointed at (%s), for a call the user did not ask for", path, v, src.tool)
	}
	tags := []string{"injection"}
	if slices.ContainsFunc(os, func(o origin) bool { return stepCarriesInstructions(c.w, c.t, stepAt(c.t, o.step)) }) {
		tags = append(tags, "instructions")
	}
	c.out = append(c.out, trace.Finding{
		Rule: rules.Injection, Step: c.s.Index, Verdict: trace.Block, Dimension: trace.Accuracy, Severity: trace.SeverityCritical,
		Message: msg, Evidence: v, Tags: tags, Facts: c.injectedFacts(path, v, src),
	})
}

// injectedFacts are what an injected-argument finding rests on: the
// argument, the third-party text that holds it, and why that text does not
// vouch for it — it gives orders, or the user pointed at it but did not
// ask for this call, or the user never pointed at it.
func (c *provenanceCall) injectedFacts(path, v string, src origin) []trace.Fact {
	p := stepAt(c.t, src.step)
	facts := []trace.Fact{
		rulekit.ArgFact(c.s, path, v),
		rulekit.OriginFact(p, "", around(p.Result, v), "third-party text: the only place the value appears"),
	}
	if !src.delegated {
		return append(facts, rulekit.AbsentFact(path, v, "in no user turn, memory card or record field"))
	}
	facts = append(facts, rulekit.CallFact(p, "the user pointed the agent at this content"))
	if stepCarriesInstructions(c.w, c.t, p) {
		folded := textnorm.Fold(p.Result)
		if m := c.w.InstructionMarkers.FindString(folded); m != "" {
			facts = append(facts, rulekit.OriginFact(p, "", around(folded, m), "addresses the agent with orders"))
		}
		return facts
	}
	return append(facts, rulekit.AbsentFact(c.s.Name, strings.Join(rulekit.NameWords(c.s.Name), " "), "no user turn asks for this call"))
}

// idKey reports whether an argument key names an identifier: id, *_id,
// *Id, or a key identKey knows.
func idKey(key string) bool {
	k := strings.ToLower(key)
	return k == "id" || strings.HasSuffix(k, "_id") || strings.HasSuffix(key, "Id") || strings.HasSuffix(k, "号")
}

// stepAt returns the step recorded at index i of t, the stub the origins
// index kept of it once released, or an empty step.
func stepAt(t *trace.Trace, i int) *trace.Step {
	if p := t.Step(i); p != nil {
		return p
	}
	if p := releasedStep(t, i); p != nil {
		return p
	}
	return &trace.Step{}
}

// NamedByUser reports whether the user's task names what the tool acts on:
// the object words of its name (reserve_hotel: hotel; send_money: money),
// or the verb when the name has no object, each with its family. A tool
// whose words are all generic is taken as named.
func NamedByUser(w *lexicon.Compiled, t *trace.Trace, tool string) bool {
	return named(w, t, tool, true)
}

// named reports whether the user's turns — and, when viaContent is true and
// the user handed the task to content, that content — name the tool's
// object.
func named(w *lexicon.Compiled, t *trace.Trace, tool string, viaContent bool) bool {
	a := &w.Authority
	words := rulekit.NameWords(tool)
	objects := slices.DeleteFunc(slices.Clone(words[min(1, len(words)):]), func(word string) bool { return slices.Contains(a.Generic, word) })
	if len(objects) == 0 {
		objects = words[:min(1, len(words))]
	}
	if len(objects) == 0 {
		return true
	}
	var want []string
	for _, word := range objects {
		want = append(want, word)
		for _, fam := range a.Objects {
			if slices.Contains(fam, word) {
				want = append(want, fam...)
			}
		}
	}
	texts := t.UserTurns
	if viaContent && delegatesTask(a, t) {
		// "Do the tasks on my to-do list at …": what the user pointed at
		// is the task.
		texts = append(slices.Clone(texts), delegatedTexts(w, t)...)
	}
	for _, u := range texts {
		lu := strings.ToLower(u)
		if rulekit.ContainsAny(lu, want) {
			return true
		}
	}
	return false
}

// delegatesTask reports whether a user turn hands the task to content.
func delegatesTask(a *lexicon.Authority, t *trace.Trace) bool {
	return slices.ContainsFunc(t.UserTurns, func(u string) bool { return rulekit.ContainsAny(strings.ToLower(u), a.TaskWords) })
}

// delegatedTexts returns the results of the calls the user pointed at
// directly.
func delegatedTexts(w *lexicon.Compiled, t *trace.Trace) []string {
	var out []string
	ix := indexOf(t, rulekit.NewTools(w, nil))
	for _, o := range ix.origins {
		if o.kind == fromContent && o.delegated && !o.indirect {
			if p := stepAt(t, o.step); !slices.Contains(out, p.Result) {
				out = append(out, p.Result)
			}
		}
	}
	return out
}

// entityMismatch finds content that quotes an earlier result about one
// entity — or names that result's lookup key — while the call's recipients
// point at another, with nothing linking the two: the quoted record does
// not hold the recipient, no record holds both the lookup key and the
// recipient, and no user turn names both entities. A recipient the user
// gave is the user's decision.
func entityMismatch(w *lexicon.Compiled, t *trace.Trace, ix *originIndex, s *trace.Step, idents, contents []string) (trace.Finding, bool) {
	if len(contents) == 0 || len(idents) == 0 {
		return trace.Finding{}, false
	}
	var recipients []origin
	for _, v := range idents {
		os := ix.of(v)
		if slices.ContainsFunc(os, func(o origin) bool { return o.kind == fromUser || o.kind == fromCard }) {
			return trace.Finding{}, false // the user gave the recipient
		}
		recipients = append(recipients, os...)
	}
	// The records the content quotes, and the lookups whose key it names.
	quoted := map[[2]int]bool{} // {step, record}
	lookups := map[int]bool{}
	for _, c := range contents {
		eachToken(c, func(tok string) {
			// A token many records share ("total", a currency) says
			// nothing about which record the content quotes.
			if posts := ix.tokens[tok]; distinctive(tok) && len(posts) <= maxQuotedPostings {
				for _, o := range posts {
					if org := ix.origins[o]; org.kind == fromRecord || org.kind == fromContent {
						quoted[[2]int{org.step, org.rec}] = true
					}
				}
			}
			for _, st := range ix.lookupKeys[tok] {
				lookups[st] = true
			}
		})
	}
	for q := range quoted {
		if slices.ContainsFunc(recipients, func(o origin) bool { return o.step == q[0] && o.rec == q[1] }) {
			return trace.Finding{}, false // the quoted record is the recipient's own
		}
		lookups[q[0]] = true
	}
	for _, st := range slices.Sorted(maps.Keys(lookups)) {
		p := stepAt(t, st)
		keys := stepIdents(w, p)
		if len(keys) == 0 || p.Name == s.Name || linked(ix, keys, idents) {
			continue
		}
		// The user turns that name each side, by what tells the two apart:
		// a name both records hold ("Li Wei", two contacts of that name)
		// names neither.
		to := ix.entityTurns(idents, ix.recordValues(keys))
		if slices.ContainsFunc(slices.Collect(maps.Keys(ix.entityTurns(keys, ix.recordValues(idents)))), func(turn int) bool { return to[turn] }) {
			continue // one user turn names both: "send Bolt the price sheet we gave Acme"
		}
		return trace.Finding{
			Rule: rules.Provenance, Step: s.Index, Verdict: trace.Block, Dimension: trace.Accuracy, Severity: trace.SeverityCritical,
			Message: fmt.Sprintf("%q sends content from %s(%s) to %s, a different entity",
				s.Name, p.Name, strings.Join(keys, ", "), strings.Join(idents, ", ")),
			Evidence: s.Args, Tags: []string{"entity-mismatch"},
			Facts: []trace.Fact{
				rulekit.CallFact(s, "sends content to "+strings.Join(idents, ", ")),
				rulekit.ResultFact(p, "", p.Result, "the record the content quotes, about "+strings.Join(keys, ", ")),
				rulekit.AbsentFact(strings.Join(idents, ", "), strings.Join(keys, ", "), "no record holds both, and no user turn names both"),
			},
		}, true
	}
	return trace.Finding{}, false
}

// entityTurns returns the user turns that name the entities of values: a
// turn that holds a value, or names a record holding it by another of the
// record's values ("Bolt Ltd" for purchasing@bolt.example; "Acme" for
// "Acme Corp", since a company's legal suffix is left out) — not by one of
// shared, the values the other side's records hold too.
func (ix *originIndex) entityTurns(values, shared []string) map[int]bool {
	turns := map[int]bool{}
	for _, v := range values {
		for _, o := range ix.of(v) {
			switch o.kind {
			case fromUser:
				turns[o.step] = true
			case fromRecord, fromEcho:
				for _, w := range ix.recValues[o.rec] {
					if slices.ContainsFunc(shared, func(x string) bool { return normToken(x) == normToken(w) }) {
						continue
					}
					for turn := range ix.namedIn(w) {
						turns[turn] = true
					}
				}
			}
		}
	}
	return turns
}

// recordValues returns the short field values of the records that hold
// any of values.
func (ix *originIndex) recordValues(values []string) []string {
	var out []string
	for _, v := range values {
		for _, o := range ix.of(v) {
			if o.kind == fromRecord || o.kind == fromEcho {
				out = append(out, ix.recValues[o.rec]...)
			}
		}
	}
	return out
}

// namedIn returns the user turns that hold every significant token of w.
func (ix *originIndex) namedIn(w string) map[int]bool {
	var turns map[int]bool
	eachToken(w, func(tok string) {
		if slices.Contains(ix.words.NameSuffixes, tok) || turns != nil && len(turns) == 0 {
			return
		}
		here := map[int]bool{}
		for _, o := range ix.tokens[tok] {
			if org := ix.origins[o]; org.kind == fromUser && (turns == nil || turns[org.step]) {
				here[org.step] = true
			}
		}
		turns = here
	})
	return turns
}

// maxQuotedPostings is how many places may hold a token for content that
// repeats it to count as quoting them: beyond it the token is common, and
// following it would cost O(the session) per write.
const maxQuotedPostings = 8

// distinctive reports whether a token is specific enough that quoting it
// means quoting its source: four characters or more, or a number of three
// digits or more.
func distinctive(tok string) bool {
	return utf8.RuneCountInString(tok) >= 4 || len(tok) >= 3 && strings.Trim(tok, "0123456789") == ""
}

// linked reports whether one of keys and one of recipients are the same
// entity: equal, or held by the same record (one JSON object, one item of
// a listing) of a result.
func linked(ix *originIndex, keys, recipients []string) bool {
	for _, k := range keys {
		ko := ix.lookup(k)
		for _, r := range recipients {
			if normToken(k) == normToken(r) {
				return true
			}
			ro := ix.lookup(r)
			for _, a := range ko {
				for _, b := range ro {
					// The key comes back as an echo of the lookup's own
					// argument: the record it names is still the key's.
					if oa, ob := ix.origins[a], ix.origins[b]; (oa.kind == fromRecord || oa.kind == fromEcho) && (ob.kind == fromRecord || ob.kind == fromEcho) && oa.step == ob.step && oa.rec == ob.rec {
						return true
					}
				}
			}
		}
	}
	return false
}

// stepIdents returns the identifying argument values of a step.
func stepIdents(w *lexicon.Compiled, p *trace.Step) []string {
	args, ok := rulekit.ArgsMap(p.Args)
	if !ok {
		return nil
	}
	var out []string
	rulekit.Walk("", args, func(path string, leaf any) {
		if v, ok := rulekit.LeafString(leaf); ok && v != "" && identifying(w, path, v) {
			out = append(out, v)
		}
	})
	return out
}

// scoped reports whether content the user pointed at may supply v: when
// the turn that pointed at it names kinds of value ("find her e-mail on her
// website"), only values of those kinds, told by their shape; otherwise
// any. A value whose kind its shape does not tell is not held back.
func scoped(w *lexicon.Compiled, t *trace.Trace, o origin, v string) bool {
	p := stepAt(t, o.step)
	if p.Turn < 0 || p.Turn >= len(t.UserTurns) {
		return true
	}
	turn := strings.ToLower(t.UserTurns[p.Turn])
	var asked []string
	for kind, words := range w.Authority.ValueKinds {
		if rulekit.ContainsAny(turn, words) {
			asked = append(asked, kind)
		}
	}
	has := valueKinds(v)
	if len(asked) == 0 || len(has) == 0 {
		return true
	}
	return slices.ContainsFunc(has, func(k string) bool { return slices.Contains(asked, k) })
}

// valueKinds returns the kinds a value's shape tells: email, url, phone,
// account.
func valueKinds(v string) []string {
	v = strings.TrimSpace(v)
	var out []string
	switch {
	case rulekit.IsEmail(v):
		out = append(out, "email")
	case rulekit.IsURL(v):
		out = append(out, "url")
	}
	if rulekit.IsPhone(v) {
		out = append(out, "phone")
	}
	if rulekit.IsIBAN(strings.ReplaceAll(v, " ", "")) || rulekit.IsPhone(v) && len(v) >= 8 {
		out = append(out, "account")
	}
	return out
}
