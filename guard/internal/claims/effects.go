package claims

import (
	"encoding/json"
	"io"
	"maps"
	"slices"
	"strconv"
	"strings"
	"unicode"
	"unicode/utf8"

	"github.com/agentguard/agentguard/guard/internal/detect"
	"github.com/agentguard/agentguard/guard/internal/rulekit"
	"github.com/agentguard/agentguard/trace"
	"github.com/agentguard/agentguard/trace/lexicon"
	"github.com/go-json-experiment/json/jsontext"
)

// This file holds the facts the false-claim rule judges an answer against:
// which state-changing effects a trace shows happening, and which it shows
// not happening — a call that failed, was blocked, returned a result that
// says it did not happen, was proposed and never ran, or was never made.
// Facts come from the steps' structure (Error, Blocked, JSON fields, calls
// and their results), never from the wording of a result.

// outcome is what became of one state-changing call.
type outcome uint8

const (
	happened     outcome = iota // ran and its result does not say otherwise
	failed                      // Step.Error is set
	blocked                     // Step.Blocked: the guard did not run it
	resultFailed                // ran, and its result says it did not happen
	notRun                      // a model step proposed it; no tool step ran it
	neverCalled                 // no call at all; the tool is offered or named by the policy
)

// effect is one state-changing call and what became of it.
type effect struct {
	tool     string
	channels channelSet
	outcome  outcome
	step     int      // the tool step, or the model step that proposed it
	turn     int      // the step's turn
	reason   string   // the error, the result field that says it failed
	targets  []string // its identifying argument values, normalised (see argFacts)
	dest     []string // where it takes effect: recipients, addresses (see argFacts)
	callID   string   // for proposals: the call's id
	args     string   // its arguments, as a fact's text (rulekit.FactText)
	offered  bool     // for a tool never called: offered to the agent, not only named by the policy
}

// effectFacts are the effects a trace shows up to some step. A value is
// never changed once a derivation hands it out.
type effectFacts struct {
	// last holds the latest outcome of each distinct call (tool and
	// targets), oldest first, at most maxEffects of them.
	last []effect
	// proposed holds write calls a model step proposed that no tool step
	// has run yet, oldest first, at most maxEffects of them.
	proposed []effect
	// readBack holds the channels whose completion a result reports: a
	// look-up that says the order is cancelled or the refund issued, a
	// write that says it refunded the difference or was paid with a
	// payment method (vocab.alsoOf).
	readBack channelSet
}

// maxEffects bounds the effects and proposals kept, so that the facts, and
// the rule's cost, stay flat however long a trace grows.
const maxEffects = 64

var noFacts = &effectFacts{}

// factsKey keys a trace's factsCache in Trace.Memo; the rule is part of
// the key because its policy decides which tools are writes.
type factsKey struct{ r *Rule }

// factsCache holds the facts after the steps answers were judged after,
// in step order. Steps never change once recorded, so facts derived up to
// a step stay true of every longer prefix that holds that step.
type factsCache struct {
	r      *Rule
	points []checkpoint
	// profiles holds the channels of the tools offered, by their ToolSpec,
	// which is not changed once offered.
	profiles map[*trace.ToolSpec]toolProfile
	// offered holds, for each tool of Trace.Tools (whose first element is
	// offeredOf), its channels if it changes state, else none.
	offered   []channelSet
	offeredOf *trace.ToolSpec
	// asked holds, for each user turn read so far, the channels it asks
	// for (vocab.askedIn).
	asked []channelSet
}

// offered returns the channels of each tool t offers that changes state,
// aligned with t.Tools, from the cache while t.Tools stays the same.
func (r *Rule) offered(t *trace.Trace) []channelSet {
	if len(t.Tools) == 0 {
		return nil
	}
	c := r.cache(t)
	if c.offeredOf == &t.Tools[0] && len(c.offered) == len(t.Tools) {
		return c.offered
	}
	out := make([]channelSet, len(t.Tools))
	for i := range t.Tools {
		if name := t.Tools[i].Name; r.tools.Writes(name) {
			out[i] = r.profile(t, name).channels
		}
	}
	c.offered, c.offeredOf = out, &t.Tools[0]
	return out
}

// cache returns the rule's cache in t's memo.
func (r *Rule) cache(t *trace.Trace) *factsCache {
	c := t.Memo(factsKey{r}, newFactsCache).(*factsCache)
	c.r = r
	return c
}

func newFactsCache() any { return &factsCache{} }

type checkpoint struct {
	n     int         // the facts are those of the first n steps
	last  *trace.Step // the n-th step, to recognise the same trace
	facts *effectFacts
}

// maxCheckpoints bounds a cache; a prefix older than its checkpoints is
// derived again from the start.
const maxCheckpoints = 32

// facts returns the effects t shows: what its steps did up to its last
// step. The facts are kept in t's memo at each step an answer followed, and
// derived onward from the latest of those, so that a trace that grows by k
// steps between two answers costs O(k) to judge, however long it is.
//
// Steps released from memory (trace.Recorder.Release) are derived before
// they go (factsCache.Release); a cache begun after a release derives from
// the steps kept.
func (r *Rule) facts(t *trace.Trace) *effectFacts {
	n := t.Len()
	if len(t.Steps) == 0 {
		return noFacts
	}
	c := r.cache(t)
	from, f := t.Released, noFacts
	for i := len(c.points) - 1; i >= 0; i-- {
		p := c.points[i]
		if p.n <= n && p.n > 0 && t.Step(p.n-1) == p.last {
			from, f = p.n, p.facts
			break
		}
	}
	if from == n {
		return f
	}
	d := derivation{r: r, t: t, f: *f}
	for _, s := range t.Steps[from-t.Released:] {
		d.next(s)
	}
	f = &d.f
	if k := len(c.points); k == 0 || c.points[k-1].n < n {
		if k == maxCheckpoints {
			c.points = slices.Delete(c.points, 0, 1)
		}
		c.points = append(c.points, checkpoint{n: n, last: t.Step(n - 1), facts: f})
	}
	return f
}

// Release derives the facts of every step recorded, before those below n
// leave memory (trace.Releaser), and forgets the checkpoints among them:
// the facts go on from the last step, which stays.
func (c *factsCache) Release(t *trace.Trace, n int) {
	if c.r == nil || len(t.Steps) == 0 {
		return
	}
	c.r.facts(t)
	c.points = slices.DeleteFunc(c.points, func(p checkpoint) bool { return p.n <= n })
}

// derivation derives facts step by step, in place: it copies the facts it
// starts from once, before its first change, and hands out a snapshot only
// at the end, so that a write step costs no copy of every effect.
type derivation struct {
	r        *Rule
	t        *trace.Trace
	f        effectFacts
	owned    bool // f's slices are the derivation's own
	profiles map[string]channelSet
}

func (d *derivation) channels(name string) channelSet {
	if ch, ok := d.profiles[name]; ok {
		return ch
	}
	if d.profiles == nil {
		d.profiles = map[string]channelSet{}
	}
	ch := d.r.profile(d.t, name).channels
	d.profiles[name] = ch
	return ch
}

func (d *derivation) own() {
	if !d.owned {
		d.f.last, d.f.proposed = slices.Clone(d.f.last), slices.Clone(d.f.proposed)
		d.owned = true
	}
}

// capped drops the oldest entries beyond maxEffects.
func capped(es []effect) []effect {
	if len(es) > maxEffects {
		es = slices.Delete(es, 0, len(es)-maxEffects)
	}
	return es
}

// next adds what step s did to the facts.
func (d *derivation) next(s *trace.Step) {
	r := d.r
	switch s.Kind {
	case trace.KindModel:
		for _, c := range s.Calls {
			if !r.tools.Writes(c.Name) {
				continue
			}
			targets, dest := argFacts(r.tools.Words(), c.Args)
			d.own()
			d.f.proposed = capped(append(d.f.proposed, effect{
				tool: c.Name, channels: d.channels(c.Name), outcome: notRun,
				step: s.Index, turn: s.Turn, callID: c.ID, targets: targets, dest: dest, args: rulekit.FactText(c.Args),
			}))
		}
		return
	case trace.KindTool:
	default:
		return
	}
	if !r.tools.Writes(s.Name) {
		d.f.readBack |= r.v.readBackOf(s.Result)
		return
	}
	e := effect{tool: s.Name, channels: d.channels(s.Name), step: s.Index, turn: s.Turn, args: rulekit.FactText(s.Args)}
	k := proposalOf(d.f.proposed, s)
	if k >= 0 && s.CallID != "" && s.CallID == d.f.proposed[k].callID {
		e.targets, e.dest = d.f.proposed[k].targets, d.f.proposed[k].dest // the arguments the proposal had
	} else {
		e.targets, e.dest = argFacts(r.tools.Words(), s.Args)
	}
	switch {
	case s.Blocked:
		e.outcome, e.reason = blocked, rulekit.FirstLine(s.Error)
	case s.Error != "":
		e.outcome, e.reason = failed, rulekit.FirstLine(s.Error)
	default:
		if why := resultSaysFailed(&r.tools.Words().Results, s.Result); why != "" {
			e.outcome, e.reason = resultFailed, why
		} else {
			// What a write that happened reports done (an exchange whose
			// result says the difference was refunded), and what else its
			// arguments say it did (a flight change paid with a
			// payment_method_id).
			d.f.readBack |= r.v.readBackOf(s.Result) | r.v.alsoOf(s.Args)
		}
	}
	d.own()
	// The call this step ran is no longer only proposed.
	if k >= 0 {
		d.f.proposed = slices.Delete(d.f.proposed, k, k+1)
	}
	// A later outcome of the same call replaces the earlier one.
	d.f.last = slices.DeleteFunc(d.f.last, func(old effect) bool {
		return old.tool == e.tool && slices.Equal(old.targets, e.targets)
	})
	d.f.last = capped(append(d.f.last, e))
}

// proposalOf returns the index of the proposal that tool step s ran: the
// one with its call id, or, when s has none (a wrapped tool called by a
// framework's loop), the oldest proposal of the same tool.
func proposalOf(props []effect, s *trace.Step) int {
	for i, p := range props {
		if s.CallID != "" && p.callID == s.CallID {
			return i
		}
	}
	if s.CallID != "" && slices.ContainsFunc(props, func(p effect) bool { return p.callID != "" && p.tool == s.Name }) {
		return -1 // ids on both sides and none matches: a call of its own
	}
	for i, p := range props {
		if p.tool == s.Name {
			return i
		}
	}
	return -1
}

// unhappened returns, for an answer in turn judged after the steps of t,
// every effect that did not happen and did not happen later either, then,
// for each channel that may be claimed absent (claimChannel.Absent), has a
// tool — offered, or named by the policy — and no call at all, an effect
// that was never called. now and ever are the channels some effect reached
// in this turn and in the whole trace; ever includes what read results
// report done ("status": "cancelled"), which someone else may have done.
func (r *Rule) unhappened(t *trace.Trace, turn int) (missed []effect, now, ever channelSet) {
	f := r.facts(t)
	var attempted channelSet
	for _, e := range f.last {
		attempted |= e.channels
		if e.outcome == happened {
			ever |= e.channels
			if e.turn == turn {
				now |= e.channels
			}
		}
	}
	for _, e := range f.last {
		if e.outcome != happened && !supersededBy(e, f.last) {
			missed = append(missed, e)
		}
	}
	for _, p := range f.proposed {
		attempted |= p.channels
		if !slices.ContainsFunc(t.Pending, func(s *trace.Step) bool { return s.Name == p.tool }) && !supersededBy(p, f.last) {
			missed = append(missed, p)
		}
	}
	// Tools with no call at all: those the agent was offered, then those
	// the policy names.
	skip := attempted | f.readBack | ^r.v.absent
	add := func(name string, ch channelSet, offered bool) {
		ch &^= skip
		if ch == 0 {
			return
		}
		skip |= ch
		missed = append(missed, effect{tool: name, channels: ch, outcome: neverCalled, step: -1, turn: -1, offered: offered})
	}
	for i, ch := range r.offered(t) {
		add(t.Tools[i].Name, ch, true)
	}
	for _, name := range r.named {
		if r.tools.Writes(name) {
			add(name, r.profile(t, name).channels, false)
		}
	}
	return missed, now, ever | f.readBack
}

// asked returns the latest user turn, up to turn, that asks for one of
// channels ch (vocab.askedIn). Each user turn is read once, into the
// rule's cache in t's memo.
func (r *Rule) asked(t *trace.Trace, turn int, ch channelSet) (int, bool) {
	c := r.cache(t)
	for len(c.asked) <= turn && len(c.asked) < len(t.UserTurns) {
		c.asked = append(c.asked, r.v.askedIn(t.UserTurns[len(c.asked)]))
	}
	for i := min(turn, len(c.asked)-1); i >= 0; i-- {
		if c.asked[i]&ch != 0 {
			return i, true
		}
	}
	return 0, false
}

// readBackOf returns the channels whose completion a result reports,
// by the words an answer would claim them with ("cancelled_by_airline",
// "已退款"). Only the first 4 KiB of the result are read.
func (v *vocab) readBackOf(result string) channelSet {
	if len(result) > 4<<10 {
		result = result[:4<<10]
	}
	var set channelSet
	v.index.each(strings.ToLower(result), func(k, _, _ int) bool {
		if t := v.terms[k]; t.kind == kindDid {
			set |= t.chans
		}
		return true
	})
	return set
}

// alsoOf returns the channels a call with arguments args had an effect on
// besides its own, by their keys (vocab.also).
func (v *vocab) alsoOf(args string) channelSet {
	if len(v.also) == 0 || !strings.HasPrefix(strings.TrimSpace(args), "{") {
		return 0
	}
	// Decode only arguments that may hold such a key. ASCII arguments are
	// lowered once and searched for each ASCII key; anything else is
	// matched as containsFold matches it.
	ascii, lowered := isASCII(args), ""
	if ascii {
		lowered = strings.ToLower(args)
	}
	maybe := false
	for k := range v.also {
		if ascii && isASCII(k) && strings.Contains(lowered, k) || !(ascii && isASCII(k)) && containsFold(args, k) {
			maybe = true
			break
		}
	}
	if !maybe {
		return 0
	}
	var m map[string]json.RawMessage
	if json.Unmarshal([]byte(args), &m) != nil {
		return 0
	}
	var set channelSet
	for k := range m {
		set |= v.also[strings.ToLower(k)]
	}
	return set
}

func isASCII(s string) bool {
	for i := 0; i < len(s); i++ {
		if s[i] >= utf8.RuneSelf {
			return false
		}
	}
	return true
}

// containsFold reports whether s holds sub, ASCII letters matched in
// either case, without a copy of s.
func containsFold(s, sub string) bool {
	for i := 0; i+len(sub) <= len(s); i++ {
		if strings.EqualFold(s[i:i+len(sub)], sub) {
			return true
		}
	}
	return false
}

// supersededBy reports whether a later call on one of e's channels
// happened, for the same targets when both name any: a retry, or the same
// message sent by another tool of the channel.
func supersededBy(e effect, last []effect) bool {
	for _, o := range last {
		if o.outcome == happened && o.step > e.step && o.channels&e.channels != 0 && compatible(o.targets, e.targets) {
			return true
		}
	}
	return false
}

func compatible(a, b []string) bool {
	if len(a) == 0 || len(b) == 0 {
		return true
	}
	for _, x := range a {
		if slices.Contains(b, x) {
			return true
		}
	}
	return false
}

// toolProfile is what the rule knows of a tool's effect: the channels a
// claim of it names.
type toolProfile struct {
	channels channelSet
}

// profile returns the channels of tool name, derived from the tool itself:
// the tokens of its name, then its description (Trace.Tools), then the
// argument keys of its schema. The channels of a tool offered in
// Trace.Tools are kept in the rule's cache in t's memo.
func (r *Rule) profile(t *trace.Trace, name string) toolProfile {
	if r.tools.Of(name).Channel != "" {
		return r.profiles[name] // the policy's channel
	}
	for i := range t.Tools {
		if spec := &t.Tools[i]; spec.Name == name {
			c := r.cache(t)
			p, ok := c.profiles[spec]
			if !ok {
				if c.profiles == nil {
					c.profiles = map[*trace.ToolSpec]toolProfile{}
				}
				p = r.v.profileOf(spec.Name, spec.Description, spec.Parameters)
				c.profiles[spec] = p
			}
			return p
		}
	}
	if p, ok := r.profiles[name]; ok {
		return p
	}
	return r.v.profileOf(name, "", nil)
}

// Channels returns the names of w's claim channels: what a tool's policy
// may give as its channel.
func Channels(w *lexicon.Compiled) []string {
	v := vocabOf(w)
	names := make([]string, len(v.channels))
	for i, ch := range v.channels {
		names[i] = ch.Name
	}
	return names
}

// channelProfile is the profile of a channel named by a policy.
func (v *vocab) channelProfile(name string) (toolProfile, bool) {
	for i, ch := range v.channels {
		if ch.Name == name && name != "" {
			return toolProfile{channelSet(1) << i}, true
		}
	}
	return toolProfile{}, false
}

// profileOf derives a tool's channels. From its name, the channels of the
// highest rank win: cancel_reservation is a cancellation, not a booking;
// update_address is an address change. The description is read only when
// the name says nothing, and the schema's argument keys after that.
func (v *vocab) profileOf(name, desc string, params json.RawMessage) toolProfile {
	best := func(words []string, cjk string) channelSet {
		var set channelSet
		rank := -1
		for i, ch := range v.channels {
			hit := false
			for _, w := range words {
				for _, stem := range ch.Tool {
					if strings.HasPrefix(w, stem) {
						hit = true
					}
				}
			}
			if !hit && cjk != "" {
				for _, n := range ch.Noun {
					if n != "" && n[0] >= utf8.RuneSelf && strings.Contains(cjk, n) {
						hit = true
					}
				}
			}
			switch {
			case !hit:
			case ch.Rank > rank:
				set, rank = channelSet(1)<<i, ch.Rank
			case ch.Rank == rank:
				set |= channelSet(1) << i
			}
		}
		return set
	}
	if set := best(nameTokens(name), ""); set != 0 {
		return toolProfile{set}
	}
	if set := best(nameTokens(desc), desc); set != 0 {
		return toolProfile{set}
	}
	var keys []string
	var schema struct {
		Properties map[string]json.RawMessage `json:"properties"`
	}
	if json.Unmarshal(params, &schema) == nil {
		for k := range schema.Properties {
			keys = append(keys, nameTokens(k)...)
		}
	}
	var set channelSet
	for i, ch := range v.channels {
		for _, k := range keys {
			if slices.Contains(ch.Keys, k) {
				set |= channelSet(1) << i
			}
		}
	}
	if set == 0 {
		// No channel: the verb the name starts with, as a last resort.
		set = best([]string{detect.VerbOf(name)}, "")
	}
	return toolProfile{set}
}

// nameTokens splits a tool name, an argument key or a description into
// lower-case words: send_sms, sendSMS, send-sms and "Send an SMS." all give
// send and sms.
func nameTokens(s string) []string {
	var out []string
	var cur []rune
	flush := func() {
		if len(cur) > 0 {
			out = append(out, strings.ToLower(string(cur)))
			cur = cur[:0]
		}
	}
	rs := []rune(s)
	for i, c := range rs {
		switch {
		case c < 0x80 && (unicode.IsLetter(c) || unicode.IsDigit(c)):
			// A capital after a lower-case letter starts a word (sendSms),
			// and so does one before a lower-case letter in a run of
			// capitals (SMSMessage: SMS, Message).
			if unicode.IsUpper(c) && len(cur) > 0 &&
				(unicode.IsLower(rs[i-1]) || i+1 < len(rs) && unicode.IsLower(rs[i+1])) {
				flush()
			}
			cur = append(cur, c)
		default:
			flush()
		}
	}
	flush()
	return out
}

// argFacts reads a call's arguments once. targets are its identifying
// values — whom or what it acts on: ids, references, numbers, recipients —
// normalised to lower-case letters and digits; two calls with a common
// target act on the same thing. dest is where it takes effect: the
// recipients (a phone number, an e-mail address and its local part) and
// postal addresses (their first sixteen letters and digits, and those of
// their first line); an answer that names one of them with a completion
// marker claims the call, whatever it calls the channel. Both are sorted.
func argFacts(w *lexicon.Compiled, args string) (targets, dest []string) {
	if !strings.HasPrefix(strings.TrimSpace(args), "{") {
		return nil, nil
	}
	members, ok := keyedScalars(w, args)
	if !ok {
		return nil, nil
	}
	for _, m := range members {
		for _, v := range m.values {
			if n := normTarget(v); m.target && len(n) >= 4 {
				targets = append(targets, n)
			}
			if m.dest {
				dest = append(dest, destForms(v)...)
			}
		}
	}
	slices.Sort(targets)
	slices.Sort(dest)
	return slices.Compact(targets), slices.Compact(dest)
}

// keyedMember is a name of a call's arguments that identifies a target or
// a destination, with its string and number values.
type keyedMember struct {
	name         string
	target, dest bool
	values       []string
}

// keyedScalars reads the JSON object args once, with a jsontext decoder,
// and returns its names that identify a target or a destination with
// their values: a string, a number (as strconv.FormatFloat writes it) or
// the strings and numbers of an array; a name repeated counts once, with
// its last value, and a value that holds a number out of float64's range
// has none. ok is false when args is not one JSON object.
func keyedScalars(w *lexicon.Compiled, args string) (members []keyedMember, ok bool) {
	detect.ReadJSON(args, func(d *jsontext.Decoder) { members, ok = readKeyed(w, d) })
	return members, ok
}

func readKeyed(w *lexicon.Compiled, d *jsontext.Decoder) (members []keyedMember, ok bool) {
	if tok, err := d.ReadToken(); err != nil || tok.Kind() != '{' {
		return nil, false
	}
	for d.PeekKind() == '"' {
		tok, err := d.ReadToken()
		if err != nil {
			return nil, false
		}
		name := tok.String()
		kind := rulekit.KindOfKey(w, strings.ToLower(name))
		target, dest := kind&rulekit.KeyTarget != 0, kind&rulekit.KeyDestination != 0
		if !target && !dest {
			if d.SkipValue() != nil {
				return nil, false
			}
			continue
		}
		values, err := scalarValues(d)
		if err != nil {
			return nil, false
		}
		members = slices.DeleteFunc(members, func(m keyedMember) bool { return m.name == name })
		members = append(members, keyedMember{name: name, target: target, dest: dest, values: values})
	}
	if tok, err := d.ReadToken(); err != nil || tok.Kind() != '}' {
		return nil, false
	}
	if _, err := d.ReadToken(); err != io.EOF {
		return nil, false // trailing data
	}
	return members, true
}

// scalarValues reads the next value: a string, a number, or an array of
// values of which it keeps the strings and numbers. A number out of
// float64's range makes the whole value hold none.
func scalarValues(d *jsontext.Decoder) ([]string, error) {
	var out []string
	bad := false
	add := func(tok jsontext.Token) {
		switch tok.Kind() {
		case '"':
			out = append(out, tok.String())
		case '0':
			f, err := strconv.ParseFloat(tok.String(), 64)
			if err != nil {
				bad = true
				return
			}
			out = append(out, strconv.FormatFloat(f, 'f', -1, 64))
		}
	}
	one := func() error { // a string or a number kept, anything else skipped
		switch d.PeekKind() {
		case '"', '0':
			tok, err := d.ReadToken()
			if err == nil {
				add(tok)
			}
			return err
		}
		return d.SkipValue()
	}
	if d.PeekKind() == '[' {
		if _, err := d.ReadToken(); err != nil {
			return nil, err
		}
		for d.PeekKind() != ']' {
			if err := one(); err != nil {
				return nil, err
			}
		}
		if _, err := d.ReadToken(); err != nil {
			return nil, err
		}
	} else if err := one(); err != nil {
		return nil, err
	}
	if bad {
		return nil, nil
	}
	return out, nil
}

// destForms returns the forms of a recipient or address an answer may
// name it by.
func destForms(s string) []string {
	var out []string
	if local, _, ok := strings.Cut(s, "@"); ok {
		if n := normTarget(local); len(n) >= 4 {
			out = append(out, n)
		}
	}
	// An answer may name a postal address by its first line alone:
	// "22 Baker Lane" for "22 Baker Lane, Leeds LS6 2AB".
	first, _, _ := strings.Cut(s, ",")
	for _, part := range []string{s, first} {
		n := normTarget(part)
		if len(n) > 16 {
			n = n[:16]
		}
		if len(n) >= 6 {
			out = append(out, n)
		}
	}
	return out
}

// normTarget keeps the letters and digits of s, in lower case; a phone
// number keeps its last eight digits, so that +1 415 555 0134 and
// (415) 555-0134 are one target.
func normTarget(s string) string {
	var b strings.Builder
	digits := 0
	for _, c := range s {
		switch {
		case c >= '0' && c <= '9':
			digits++
			b.WriteRune(c)
		case unicode.IsLetter(c):
			b.WriteRune(unicode.ToLower(c))
		}
	}
	n := b.String()
	if digits == len(n) && len(n) > 8 {
		n = n[len(n)-8:]
	}
	return n
}

// resultSaysFailed returns, for a result whose JSON structure says the call
// did not happen by rf (the lexicon's Results), the field that says so
// (`"status": "bounced"`); "" for anything else, prose included. It reads
// the result once, keeping only the fields objectSaysFailed reads and the
// objects a result wraps its payload in, as a decode into a map of raw
// values would give them (resultSaysFailedDecoded in the tests).
func resultSaysFailed(rf *lexicon.Results, result string) string {
	s := strings.TrimSpace(result)
	if len(s) < 2 || s[0] != '{' {
		return ""
	}
	var (
		top     map[string]any
		wrapped [len(payloadKeys)]string
		ok      bool
	)
	detect.ReadJSON(s, func(d *jsontext.Decoder) {
		top, ok = failFields(rf, s, d, wrapped[:])
		if ok {
			_, err := d.ReadToken()
			ok = err == io.EOF // one value, as json.Unmarshal takes
		}
	})
	if !ok {
		return ""
	}
	if why := objectSaysFailed(rf, top); why != "" {
		return why
	}
	for _, raw := range wrapped {
		if len(raw) == 0 || raw[0] != '{' {
			continue
		}
		var inner map[string]any
		detect.ReadJSON(raw, func(d *jsontext.Decoder) { inner, ok = failFields(rf, raw, d, nil) })
		if !ok {
			continue
		}
		if why := objectSaysFailed(rf, inner); why != "" {
			return why
		}
	}
	return ""
}

// payloadKeys are the fields a result wraps its payload in, looked into
// one level down.
var payloadKeys = [...]string{"data", "result", "response"}

// failFields reads the object d, reading s, is at and returns the fields
// objectSaysFailed reads, decoded; with wrapped set, it also keeps the raw
// value of each payloadKeys field there. A name given twice keeps its
// last value. ok is false when d holds no well-formed object.
func failFields(rf *lexicon.Results, s string, d *jsontext.Decoder, wrapped []string) (fields map[string]any, ok bool) {
	if tok, err := d.ReadToken(); err != nil || tok.Kind() != '{' {
		return nil, false
	}
	var nameBuf, lowerBuf [64]byte
	for d.PeekKind() == '"' {
		quoted, err := d.ReadValue()
		if err != nil {
			return nil, false
		}
		// The decoder has checked the name; AppendUnquote's only error is
		// invalid UTF-8, which it reads as U+FFFD, as encoding/json does.
		name, _ := jsontext.AppendUnquote(nameBuf[:0], quoted)
		read := failKey(rf, lowerName(lowerBuf[:0], name))
		slot := -1
		if wrapped != nil {
			slot = slices.IndexFunc(payloadKeys[:], func(k string) bool { return k == string(name) })
		}
		if !read && slot < 0 {
			if d.SkipValue() != nil {
				return nil, false
			}
			continue
		}
		key := string(name)
		raw, err := d.ReadValue()
		if err != nil {
			return nil, false
		}
		if read {
			var v any
			if json.Unmarshal(raw, &v) == nil {
				if fields == nil {
					fields = make(map[string]any, 2)
				}
				fields[key] = v
			}
		}
		if slot >= 0 {
			end := int(d.InputOffset()) // raw is s's bytes up to here
			wrapped[slot] = s[end-len(raw) : end]
		}
	}
	tok, err := d.ReadToken()
	return fields, err == nil && tok.Kind() == '}'
}

// lowerName appends name to dst as strings.ToLower returns it, without
// allocating for an ASCII name.
func lowerName(dst, name []byte) []byte {
	for _, c := range name {
		if c >= utf8.RuneSelf {
			return append(dst, strings.ToLower(string(name))...)
		}
		if 'A' <= c && c <= 'Z' {
			c += 'a' - 'A'
		}
		dst = append(dst, c)
	}
	return dst
}

// failKey reports whether objectSaysFailed reads a field of this name,
// lower-cased.
func failKey[S string | []byte](rf *lexicon.Results, key S) bool {
	is := func(w string) bool { return w == string(key) }
	return slices.ContainsFunc(rf.Flags, is) || slices.ContainsFunc(rf.Status, is) || slices.ContainsFunc(rf.Errors, is) ||
		slices.ContainsFunc(rf.Codes, is) || string(key) == "rejected"
}

// objectSaysFailed checks the fields of one JSON object failKey picks,
// decoded; the field it names is the same on every call: flags first, then
// status, errors and codes, each in key order.
func objectSaysFailed(rf *lexicon.Results, m map[string]any) string {
	if len(m) == 0 {
		return ""
	}
	keys := slices.Sorted(maps.Keys(m))
	show := func(k string) string {
		b, _ := json.Marshal(m[k])
		return `"` + k + `": ` + string(b)
	}
	checks := []func(key string, v any) bool{
		func(key string, v any) bool { // a flag that is false or 0
			if !slices.Contains(rf.Flags, key) {
				return false
			}
			switch v := v.(type) {
			case bool:
				return !v
			case float64:
				return v == 0
			case string:
				l := strings.ToLower(v)
				return l == "false" || l == "no"
			}
			return false
		},
		func(key string, v any) bool { // a status that says it failed
			str, ok := v.(string)
			return ok && slices.Contains(rf.Status, key) && slices.Contains(rf.Failures, strings.ToLower(strings.TrimSpace(str)))
		},
		func(key string, v any) bool { // an error that is not empty
			if !slices.Contains(rf.Errors, key) {
				return false
			}
			switch v := v.(type) {
			case string:
				l := strings.ToLower(strings.TrimSpace(v))
				return l != "" && l != "ok" && l != "none" && l != "success"
			case map[string]any:
				return len(v) > 0
			case []any:
				return len(v) > 0
			case bool:
				return v
			}
			return false
		},
		func(key string, v any) bool { // a code that is neither 0 nor 2xx
			n, ok := v.(float64)
			return ok && slices.Contains(rf.Codes, key) && n != 0 && !(n >= 200 && n < 300)
		},
	}
	for _, check := range checks {
		for _, k := range keys {
			if check(strings.ToLower(k), m[k]) {
				return show(k)
			}
		}
	}
	// Nothing accepted and something rejected: {"accepted":[],"rejected":["x"]}.
	for _, k := range keys {
		if strings.ToLower(k) != "rejected" {
			continue
		}
		rejected, _ := m[k].([]any)
		for _, a := range keys {
			if accepted, ok := m[a].([]any); ok && strings.ToLower(a) == "accepted" && len(accepted) == 0 && len(rejected) > 0 {
				return show(k)
			}
		}
	}
	return ""
}
