package memory

import (
	"encoding/json"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"time"
	"unicode"

	"github.com/agentguard/agentguard/trace"
	"github.com/agentguard/agentguard/trace/lexicon"
)

// Names of the enforcer's rules, as they appear in findings and in the ledger.
const (
	RuleProhibition  = "memory-prohibition"
	RuleStaleAddress = "memory-stale-address"
	RuleTimeRange    = "memory-time-range"
)

// Enforcer is a guard rule that stops tool calls contradicting the memory
// card. Its Check method has the signature of guard.Rule, so an Enforcer
// goes into guard.Config.Rules as it is; package memory does not import
// guard.
//
// For a proposed tool step it finds, each with dimension trace.Memory and
// severity Error:
//
//   - RuleProhibition, verdict Block: the tool contacts the user through a
//     prohibited channel ("sms", "call", "email", "push"; "contact" covers
//     them all), judged from Channels, from a channel word of its name
//     (send_sms, pushNotify, call_customer), from its description among the
//     tools offered (trace.Trace.Tools), or from a channel argument
//     ({"channel":"sms"}); or the prohibition's key names the tool (a
//     "delivery" prohibition and schedule_delivery). A prohibition with a
//     window ("before 09:00", "06-01..06-05") is broken only by a date or
//     time argument inside it.
//   - RuleTimeRange, verdict Block: a date or time argument (date,
//     delivery_date, time, scheduled_at ...) outside a time window the
//     user gave, a channel's included ("calls are fine after 6pm").
//   - RuleStaleAddress, verdict Clarify: an address argument (address,
//     shipping_address, 地址 ...) that is none of the card's addresses of
//     that kind. Question asks the user which to use, naming the call's
//     address and the card's latest, in the language of the user's latest
//     turn (lexicon.Replies.AddressChanged); the message says when the
//     address was replaced, if it was.
//
// The card is the trace's own (CardOf, or a card built for an earlier turn
// when the trace has gone back), so the same trace gives the same findings
// online and in offline evaluation, and a check costs what is new in the
// trace. Check judges only tool steps; for others it returns nil without
// allocating.
//
// The zero value is ready to use. An Enforcer is safe for concurrent use as
// long as Channels is not modified.
type Enforcer struct {
	// Channels maps tool names to the channel through which they contact
	// the user ("sms", "call" or "email"), for tools whose names do not
	// tell. Nil means guessing from names and arguments only.
	Channels map[string]string
	// Lexicon reads channel names, dates and times in arguments, and the
	// user's turns of a trace that carries no card steps (see
	// CardFromTrace). Nil means lexicon.Default(). It is compiled on first
	// use and must not change afterwards.
	Lexicon *lexicon.Lexicon
}

// words returns e's lexicon, compiled.
func (e Enforcer) words() *lexicon.Compiled {
	if e.Lexicon == nil {
		return defaultWords()
	}
	return e.Lexicon.Compiled()
}

// Check judges the proposed step s against the card of t, the trace so far.
// Name is "memory": the card's enforcement, which files its findings
// under RuleProhibition, RuleStaleAddress and RuleTimeRange.
func (Enforcer) Name() string { return "memory" }

func (e Enforcer) Check(t *trace.Trace, s *trace.Step) []trace.Finding {
	if s.Kind != trace.KindTool {
		return nil
	}
	// Online the proposed step's Turn may not be set yet; the last step
	// recorded tells the turn then.
	upTo := s.Turn
	if n := len(t.Steps); n > 0 && t.Steps[n-1] != nil {
		upTo = max(upTo, t.Steps[n-1].Turn)
	}
	w := e.words()
	card := e.CardAt(t, upTo)
	if !card.hasActive() {
		return nil
	}
	card.mu.RLock()
	defer card.mu.RUnlock()
	checked := mergeSorted(nil, card.activeOf(KindProhibition), card.activeOf(KindTimeRange))
	if len(checked) == 0 && len(card.activeOf(KindAddress)) == 0 {
		return nil // nothing on the card a call can break: its arguments need no reading
	}
	args := parseArgs(t, s)
	call := toolCall{w: w, name: s.Name, tokens: tokens(s.Name), args: args}
	call.channel = e.channel(call, t.Tools)
	var out []trace.Finding
	for _, i := range checked {
		c := card.all[i]
		var f *trace.Finding
		switch c.Kind {
		case KindProhibition:
			f = call.prohibited(c)
		case KindTimeRange:
			f = call.outside(c)
		}
		if f != nil {
			f.Verdict = trace.Block
			out = append(out, *f)
		}
	}
	lang := w.LangOf(lastTurn(t))
	out = append(out, call.staleAddresses(card, w.Replies(lang))...)
	for i := range out {
		out[i].Step = s.Index
		out[i].Dimension, out[i].Severity = trace.Memory, trace.SeverityError
		out[i].Evidence, _ = trace.Truncate(s.Args, 256)
		for j := range out[i].Facts {
			if f := &out[i].Facts[j]; f.Kind != trace.FactCard {
				f.Step = s.Index // the call's
			}
		}
	}
	return out
}

// CardAt returns the card of t as it stood after user turn upTo, as Check
// reads it: built with e's lexicon, kept in t's memo like CardOf. The card
// is shared; read it only.
func (e Enforcer) CardAt(t *trace.Trace, upTo int) *Card {
	rules := defaultRules()
	if w := e.words(); w != rules.w {
		r := newRules(w)
		rules = &r
	}
	return cardOf(t, upTo, rules)
}

func lastTurn(t *trace.Trace) string {
	if n := len(t.UserTurns); n > 0 {
		return t.UserTurns[n-1]
	}
	return ""
}

// toolCall is a proposed tool call, taken apart.
type toolCall struct {
	w       *lexicon.Compiled
	name    string
	tokens  []string // words of the name, lower case
	args    []arg
	channel string // the contact channel it uses, or ""
}

// arg is one leaf of the arguments: its key, lower case, and its value.
type arg struct {
	key, value string
}

// parseArgs flattens step s's JSON arguments into their string and number
// leaves, keyed by the innermost object key: an object as t decoded it for
// every rule (Trace.Args), any other JSON value decoded here. Arguments
// that are not JSON yield one arg with an empty key.
func parseArgs(t *trace.Trace, s *trace.Step) []arg {
	var v any
	if m, ok := t.Args(s); ok {
		v = m
	} else if json.Unmarshal([]byte(s.Args), &v) != nil {
		if strings.TrimSpace(s.Args) == "" {
			return nil
		}
		return []arg{{value: s.Args}}
	}
	var out []arg
	var walk func(key string, v any, depth int)
	walk = func(key string, v any, depth int) {
		if depth > 8 || len(out) > 256 {
			return
		}
		switch v := v.(type) {
		case map[string]any:
			keys := make([]string, 0, len(v))
			for k := range v {
				keys = append(keys, k)
			}
			slices.Sort(keys) // deterministic findings
			for _, k := range keys {
				walk(strings.ToLower(k), v[k], depth+1)
			}
		case []any:
			for _, x := range v {
				walk(key, x, depth+1)
			}
		case string:
			out = append(out, arg{key, v})
		case float64:
			out = append(out, arg{key, strconv.FormatFloat(v, 'f', -1, 64)})
		}
	}
	walk("", v, 0)
	return out
}

// tokens splits a name into lower-case words at non-letters and at
// lower-to-upper case changes: "sendSMS_now" -> send, sms, now.
func tokens(name string) []string {
	var out []string
	var cur []rune
	flush := func() {
		if len(cur) > 0 {
			out = append(out, strings.ToLower(string(cur)))
			cur = cur[:0]
		}
	}
	var prev rune
	for _, r := range name {
		switch {
		case !unicode.IsLetter(r) && !unicode.IsDigit(r):
			flush()
		case unicode.IsUpper(r) && unicode.IsLower(prev):
			flush()
			cur = append(cur, r)
		default:
			cur = append(cur, r)
		}
		prev = r
	}
	flush()
	return out
}

func hasToken(ts []string, words ...string) bool {
	for _, w := range words {
		if slices.Contains(ts, w) {
			return true
		}
	}
	return false
}

// channel finds the contact channel of a tool call: declared in
// Channels, named by a word of the tool's name ("send_sms", "pushNotify"),
// by its description among the tools offered, or by a channel argument.
func (e Enforcer) channel(c toolCall, offered []trace.ToolSpec) string {
	if ch, ok := e.Channels[c.name]; ok {
		return ch
	}
	mw := &c.w.Memory
	for _, ch := range mw.Channels {
		for _, word := range ch.Words {
			stem, prefix := strings.CutSuffix(word, "*")
			if strings.Contains(stem, " ") || !isAlnum(stem[0]) {
				continue
			}
			if slices.ContainsFunc(c.tokens, func(t string) bool { return t == stem || prefix && strings.HasPrefix(t, stem) }) {
				return ch.Name
			}
		}
	}
	ts := c.tokens
	switch {
	case hasToken(ts, "txt", "短信") || hasToken(ts, "text") && hasToken(ts, "send", "message", "notify", "notification"):
		return "sms"
	case hasToken(ts, "mail", "邮件"):
		return "email"
	case hasToken(ts, "dial", "callback", "ring", "电话") || hasToken(ts, "phone") && hasToken(ts, "make", "place", "start"):
		return "call"
	}
	for _, spec := range offered {
		if spec.Name == c.name {
			if chs := channelsIn(mw, lowerASCII(spec.Description)); len(chs) == 1 {
				return chs[0]
			}
			break
		}
	}
	for _, a := range c.args {
		switch a.key {
		case "channel", "method", "via", "medium", "notify_by", "notification_channel", "contact_method", "渠道":
			if ch := channelOf(mw, a.value); ch != "" && ch != "contact" {
				return ch
			}
			switch strings.ToLower(strings.TrimSpace(a.value)) {
			case "message", "短信":
				return "sms"
			case "phone", "voice", "电话":
				return "call"
			case "mail", "邮件":
				return "email"
			}
		}
	}
	return ""
}

// prohibited judges the call against one active prohibition.
func (c toolCall) prohibited(p Constraint) *trace.Finding {
	how := ""
	switch {
	case c.channel != "" && (p.Key == c.channel || p.Key == "contact"):
		how = fmt.Sprintf("%s would contact the user by %s", c.name, c.channel)
	case keyNamesTool(p.Key, c.tokens):
		how = fmt.Sprintf("%s is a %s", c.name, p.Key)
	default:
		return nil
	}
	if w, ok := parseWindow(p.Value); ok {
		at, inside := c.pointIn(w, nil)
		if !inside {
			return nil
		}
		return &trace.Finding{
			Rule:    RuleProhibition,
			Message: fmt.Sprintf("%s at %s, and the user prohibited %s %s in turn %d", how, at, p.Key, w, p.Turn),
			Tags:    []string{"memory", "prohibition", p.Key},
			Facts:   []trace.Fact{{Kind: trace.FactCall, Where: c.name, Says: how + " at " + at}, cardFact(p, "prohibition "+p.Key)},
		}
	}
	return &trace.Finding{
		Rule:    RuleProhibition,
		Message: fmt.Sprintf("%s, which the user prohibited in turn %d: %q", how, p.Turn, p.Value),
		Tags:    []string{"memory", "prohibition", p.Key},
		Facts:   []trace.Fact{{Kind: trace.FactCall, Where: c.name, Says: how}, cardFact(p, "prohibition "+p.Key)},
	}
}

// cardFact is the fact of a constraint on the card: the user turn that set
// it, what it is and its value.
func cardFact(c Constraint, what string) trace.Fact {
	text, _ := trace.Truncate(c.Value, trace.MaxFactText)
	return trace.Fact{Kind: trace.FactCard, Step: -1, Turn: c.Turn, Where: what, Text: text}
}

// keyNamesTool reports whether every word of a prohibition's key is a word
// of the tool's name, as "delivery" in schedule_delivery.
func keyNamesTool(key string, ts []string) bool {
	ks := tokens(key)
	if len(ks) == 0 {
		return false
	}
	for _, k := range ks {
		if !slices.Contains(ts, k) {
			return false
		}
	}
	return true
}

// pointIn returns the first date or time argument that falls inside w,
// when applies is nil, or else the first one that w applies to and that
// falls outside it.
func (c toolCall) pointIn(w window, applies func(argKey string) bool) (string, bool) {
	for _, a := range c.args {
		if !timeArg(a.key) || (applies != nil && !applies(a.key)) {
			continue
		}
		for _, p := range argPoints(c.w, a.value) {
			if p.clock != w.clock() {
				continue
			}
			if w.contains(p) == (applies == nil) {
				return strings.TrimSpace(a.value), true
			}
		}
	}
	return "", false
}

// timeArg reports whether an argument key names a date or time.
func timeArg(key string) bool {
	for _, w := range tokens(key) {
		switch w {
		case "date", "day", "time", "when", "at", "datetime", "schedule", "scheduled", "slot", "deadline", "start", "end", "日期", "时间":
			return true
		}
	}
	return strings.Contains(key, "日期") || strings.Contains(key, "时间")
}

// timestamps are the layouts of machine-written date-times in arguments.
var timestamps = []string{time.RFC3339, "2006-01-02T15:04:05", "2006-01-02 15:04:05", "2006-01-02T15:04", "2006-01-02 15:04"}

// argPoints reads the dates and times of day in an argument value: its
// date and time when it is a timestamp, as written (not converted to UTC),
// else what dates and clocks find.
func argPoints(w *lexicon.Compiled, v string) []point {
	v = strings.TrimSpace(v)
	for _, layout := range timestamps {
		if ts, err := time.Parse(layout, v); err == nil {
			d, _ := datePoint(ts.Year(), int(ts.Month()), ts.Day())
			c, _ := clockPoint(ts.Hour(), ts.Minute())
			return []point{d, c}
		}
	}
	var out []point
	for _, m := range dates(&w.Time, v) {
		out = append(out, m.p)
	}
	for _, m := range clocks(&w.Time, v) {
		out = append(out, m.p)
	}
	return out
}

// scopes are the words that tie a time window's key to a tool or argument.
var scopes = map[string][]string{
	"delivery": {"delivery", "deliver", "ship", "shipping", "shipment", "dispatch"},
	"pickup":   {"pickup", "pick", "collect", "collection", "return"},
	"visit":    {"visit", "install", "installation", "appointment", "repair"},
	"call":     {"call", "phone", "callback", "dial"},
	"sms":      {"sms", "text"},
	"email":    {"email", "mail"},
}

// outside judges the call against one active time range.
func (c toolCall) outside(r Constraint) *trace.Finding {
	w, ok := parseWindow(r.Value)
	if !ok {
		return nil
	}
	base := strings.TrimSuffix(r.Key, " hours")
	applies := func(argKey string) bool {
		if channelName(base) {
			return c.channel != "" && (c.channel == base || base == "contact")
		}
		words := append(tokens(argKey), c.tokens...)
		if hasToken(words, scopes[base]...) || hasToken(words, base) {
			return true
		}
		if c.channel != "" {
			return false
		}
		for k, ws := range scopes { // a call scoped to something else
			if k != base && hasToken(words, ws...) {
				return false
			}
		}
		return true // a generic date argument
	}
	at, found := c.pointIn(w, applies)
	if !found {
		return nil
	}
	return &trace.Finding{
		Rule:    RuleTimeRange,
		Message: fmt.Sprintf("%s for %s is outside the %s window %s the user gave in turn %d", c.name, at, r.Key, w, r.Turn),
		Tags:    []string{"memory", "time-range"},
		Facts:   []trace.Fact{{Kind: trace.FactArgument, Where: c.name, Text: at, Says: "outside the window"}, cardFact(r, "time range "+r.Key)},
	}
}

func channelName(s string) bool { return s == "sms" || s == "call" || s == "email" || s == "contact" }

// staleAddresses judges the call's address arguments against the card's
// current addresses. An address that is none of the card's addresses of
// its kind ("delivery", "delivery 2" ...) asks the user, naming both the
// call's address and the card's latest one, in r's words: Clarify. card.mu
// is held.
func (c toolCall) staleAddresses(card *Card, r lexicon.Replies) []trace.Finding {
	var out []trace.Finding
	for _, a := range c.args {
		key, ok := addressArg(a.key)
		if !ok || strings.TrimSpace(a.value) == "" {
			continue
		}
		cur, match := -1, false
		for _, i := range card.activeOf(KindAddress) {
			e := card.all[i]
			if e.Kind != KindAddress || (e.Key != key && !strings.HasPrefix(e.Key, key+" ")) {
				continue
			}
			if e.Key == key {
				cur = i
			}
			match = match || sameAddress(a.value, e.Value)
		}
		if cur < 0 || match {
			continue
		}
		now := card.all[cur]
		msg := fmt.Sprintf("%s uses address %q, which is not the user's current %s address %q (stated in turn %d)", c.name, a.value, key, now.Value, now.Turn)
		tag := "unknown-address"
		value, _ := trace.Truncate(a.value, trace.MaxFactText)
		facts := []trace.Fact{{Kind: trace.FactArgument, Where: c.name + " " + a.key, Text: value}, cardFact(now, "current "+key+" address")}
		for _, e := range card.all {
			if e.Kind == KindAddress && e.Key == key && e.Status == Superseded && sameAddress(a.value, e.Value) {
				msg = fmt.Sprintf("%s uses address %q, which the user replaced in turn %d by %q", c.name, a.value, e.Ended, now.Value)
				tag = "stale-address"
				old := cardFact(e, "replaced "+key+" address")
				old.Says = fmt.Sprintf("replaced in turn %d", e.Ended)
				facts = append(facts, old)
			}
		}
		f := trace.Finding{Rule: RuleStaleAddress, Verdict: trace.Clarify, Message: msg, Tags: []string{"memory", tag}, Facts: facts}
		if r.AddressChanged != "" {
			f.Question = fmt.Sprintf(r.AddressChanged, a.value, now.Value)
		}
		out = append(out, f)
	}
	return out
}

// addressArg reports whether an argument key holds a postal address, and
// which kind of address on the card it is compared with.
func addressArg(key string) (string, bool) {
	if !strings.Contains(key, "address") && !strings.Contains(key, "addr") && !strings.Contains(key, "地址") {
		return "", false
	}
	ts := tokens(key)
	if hasToken(ts, "email", "ip", "mac", "wallet", "web", "url") || strings.Contains(key, "email") || strings.Contains(key, "邮箱") {
		return "", false
	}
	if strings.HasSuffix(key, "2") || hasToken(ts, "line2") {
		return "", false // the second line (a suite, a unit): no address of its own
	}
	if hasToken(ts, "billing", "invoice") || strings.Contains(key, "账单") {
		return "billing", true
	}
	return "delivery", true
}

// streetWords folds the usual English abbreviations, so that "12 Oak Road"
// and "12 Oak Rd." are the same place.
var streetWords = map[string]string{
	"street": "st", "road": "rd", "avenue": "ave", "lane": "ln", "drive": "dr", "boulevard": "blvd",
	"apartment": "apt", "suite": "ste", "court": "ct", "place": "pl", "square": "sq", "highway": "hwy",
	"north": "n", "south": "s", "east": "e", "west": "w", "floor": "fl", "building": "bldg",
}

func foldAddress(s string) string {
	ws := strings.FieldsFunc(strings.ToLower(s), func(r rune) bool { return !unicode.IsLetter(r) && !unicode.IsDigit(r) })
	for i, w := range ws {
		if a, ok := streetWords[w]; ok {
			ws[i] = a
		}
	}
	return fold(strings.Join(ws, ""))
}

// SameAddress reports whether a and b name the same place: equal once
// folded (case, punctuation, "Street" and "St."), or one holding the other
// — a street without its city, or a sentence that names the address.
func SameAddress(a, b string) bool { return sameAddress(a, b) }

func sameAddress(a, b string) bool {
	fa, fb := foldAddress(a), foldAddress(b)
	if fa == fb {
		return true
	}
	const minLen = 6
	return len(fa) >= minLen && len(fb) >= minLen && (strings.Contains(fa, fb) || strings.Contains(fb, fa))
}
