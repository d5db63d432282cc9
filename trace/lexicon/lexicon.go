package lexicon

import (
	"maps"
	"slices"
	"sync"
)

// Lang names the language of a set of replies: EN, ZH, or any code a
// custom Lexicon adds.
type Lang string

// Languages of the shipped lexicons.
const (
	EN Lang = "en"
	ZH Lang = "zh"
)

// Lexicon is the vocabulary of the guard and of the memory card: the words
// and phrases the rules look for in tool names, answers, user turns and
// content, and the replies the guard writes, per language.
//
// Patterns are regular expression sources (package regexp syntax), kept as
// strings so that a Lexicon is plain data. A field that holds a list of
// patterns matches where any of them matches; each pattern carries its own
// flags, such as (?i). Fields whose doc names capture groups read them by
// name ((?P<value>...)); a name may appear in several alternatives.
//
// Get one from English, Chinese or Default (both), change its fields, or
// combine several with Merge. A Lexicon is compiled on first use (see
// Compiled) and must not be changed after that: build a new one instead.
// After its first use it is safe for concurrent use. Do not copy a Lexicon
// by value; Merge makes a copy.
type Lexicon struct {
	// Tool names.

	// WriteVerbs are the verbs that start the names of tools that change
	// state, in lower case: a tool named send_email, sendEmail or
	// send-email changes state when "send" is one of them.
	WriteVerbs []string

	// The agent's answers.

	// Absence are patterns of an answer that asserts there is nothing:
	// "no records", "could not find any", "没有符合条件的记录".
	Absence []string
	// Denial are patterns of an answer that says a thing is not there or
	// cannot be done: "there is no such clause", "找不到".
	Denial []string
	// ClauseRefs are patterns of a clause, section or rule number quoted in
	// a text ("clause 7.3", "第5条"); group num holds the number.
	ClauseRefs []string
	// ClaimWords maps a write verb (see WriteVerbs) to patterns of an
	// answer saying that verb's action is done: "send" to "sent",
	// "已发送". Patterns that start with an ASCII letter are matched as whole
	// words; matching ignores case.
	ClaimWords map[string][]string
	// ClaimNegation are patterns that turn a claim into its denial: "not",
	// "failed", "未".
	ClaimNegation []string

	// Tool results.

	// EmptyResults are whole tool results, in lower case and without final
	// punctuation, that mean nothing was found: "no results", "无结果".
	EmptyResults []string
	// InstructionMarkers are patterns of text that addresses the agent with
	// orders — "ignore previous instructions", "before you can solve the
	// task" — the mark of a prompt injection in content the agent read.
	InstructionMarkers []string

	// The user's turns.

	// Affirmation are patterns of a user's explicit go-ahead: "yes",
	// "go ahead", "确认".
	Affirmation []string

	// Authority is the vocabulary of who asked for what: objects of
	// writes, destructive actions, yes and no, content a user points at.
	Authority Authority

	// Memory is the vocabulary of the memory card's rule-based extractor.
	Memory Memory
	// Time is how dates, times of day and windows are written.
	Time Time

	// Replies are the texts the guard writes to the user and to the model,
	// by language. A reply is written in the language of the user's latest
	// turn (see LangOf).
	Replies map[Lang]Replies

	once sync.Once
	c    *Compiled
	err  error
}

// Term is a named concept and the patterns that say it: a contact channel
// ("sms": "text message", "短信") or what a time window is for ("pickup").
type Term struct {
	Name     string
	Patterns []string
}

// Memory is the vocabulary of the memory card's rule-based extractor
// (memory.RuleBased). Cue words are checked, in lower case, before the
// patterns of their kind run.
type Memory struct {
	// AddressCues, NameCues, PreferenceCues and FactCues are words without
	// which a sentence is not searched for that kind of constraint.
	AddressCues, NameCues, PreferenceCues, FactCues []string

	// Channels are the contact channels, in the order they are tried; the
	// names "sms", "call", "email" and "contact" are the card's channel
	// keys. Merge joins the patterns of channels of the same name.
	Channels []Term
	// Prohibit are patterns of a prohibition of a channel; CH stands for the
	// channel's patterns: "CH is not ok", "不要CH".
	Prohibit []string
	// NegationBefore are patterns of a negation before a channel (CH), the
	// words between them in group between: "don't ever CH". The match is
	// no prohibition when one of those words is in ScopeEnd.
	NegationBefore []string
	// ScopeEnd are words, in lower case, that end a negation's scope: "but",
	// "so", "instead".
	ScopeEnd []string
	// Revoke are patterns that lift a prohibition of a channel (CH): "CH is
	// fine now", "可以CH".
	Revoke []string
	// RevokeNegators are the characters that, right before a Revoke match,
	// negate it: "不可以发短信".
	RevokeNegators string
	// Reminder are patterns of a sentence that mentions a channel without
	// prohibiting it: "don't forget to text me".
	Reminder []string

	// Address are patterns of a new address, matched against a whole
	// sentence, with the address in group value running to its end; group
	// kind names which address (see AddressKinds) and group verb a request
	// to ship there, which a question or AddressDone turns into no
	// statement.
	Address []string
	// AddressInClause are like Address, matched in each comma-separated
	// clause, for languages whose addresses hold no commas; they are tried
	// when no Address pattern matches.
	AddressInClause []string
	// AddressKinds maps a word of group kind, in lower case, to a card key:
	// "billing", "return"; other words mean "delivery".
	AddressKinds map[string]string
	// AddressLead are patterns of words to strip from the start of an
	// address: "me at", "my office in".
	AddressLead []string
	// AddressDone are patterns of what, right before a shipping verb,
	// makes it no request: "已经送到", "什么时候能送到".
	AddressDone []string
	// Place are patterns that an address must match: a street, a house
	// number, "路", "号".
	Place []string
	// Tail are patterns of words that close a value without being part of
	// it: "please", "thanks", "吧", "谢谢".
	Tail []string

	// PhoneLeads are patterns of words that introduce the user's phone
	// number: "call me at", "手机号是".
	PhoneLeads []string

	// Names are patterns of a name, in group value; group recipient marks
	// the recipient's name.
	Names []string
	// NameStop are words, in lower case, at which a name ends: "and",
	// "please".
	NameStop []string
	// NameNotFirst are the characters a name cannot start with.
	NameNotFirst string

	// IDs are patterns of an order, account or tracking id, in group value,
	// its kind word in group kind.
	IDs []string
	// IDKinds maps a kind word, in lower case, to the card's id kind:
	// "order", "account" or "tracking".
	IDKinds map[string]string

	// TimeContext are patterns of a sentence about an appointment or a
	// delivery, the only ones searched for time windows.
	TimeContext []string
	// Away are patterns of the user being away: a window in such a sentence
	// prohibits deliveries.
	Away []string
	// PastDue are patterns of a sentence about what should have happened,
	// which states no window.
	PastDue []string
	// TimeKeys name what a window is for ("delivery", "pickup", "visit",
	// "call"), tried in order; a window that matches none is for delivery.
	TimeKeys []Term

	// Prefer are patterns of a preference, in group value.
	Prefer []string
	// PreferLanguage and PreferTime are patterns of a preferred language
	// and a preferred time of day.
	PreferLanguage, PreferTime []string

	// Facts are patterns of a fact the user asks to keep, in group value.
	Facts []string

	// Abbreviations are words, in lower case and without their period, after
	// which a period does not end a sentence: "st", "apt".
	Abbreviations []string
}

// BoundKind says which end of a window a bound word sets.
type BoundKind string

// Kinds of bound.
const (
	From  BoundKind = "from"  // the window starts at the point
	Until BoundKind = "until" // the window ends at the point
	On    BoundKind = "on"    // the window is that day (dates only)
)

// Bound is a word that makes a date or a time one end of a window: "before
// June 3", "6月10日之前".
type Bound struct {
	Kind BoundKind
	// Before is a pattern matched against the text right before the point,
	// so it should end with $; After one matched against the text right
	// after it, starting with ^. One of them is set.
	Before, After string
	// Exclusive leaves the point itself out of the window: "before", "after".
	Exclusive bool
}

// Time is how dates, times of day and windows are written. A four-digit
// ISO date (2025-06-01) is read in any language.
type Time struct {
	// Months maps the names of months, in lower case, to their number; MONTH
	// in a pattern stands for any of them.
	Months map[string]int
	// Dates are patterns of one date, with groups year (optional), month (a
	// number or a name) and day.
	Dates []string
	// DateRanges are patterns of two dates that share a month or a year,
	// with groups year, month, day, month2 (optional) and day2.
	DateRanges []string
	// Clocks are patterns of a time of day, with groups hour (digits or
	// Numerals) and min, optional ones am or pm (a 12-hour clock), period
	// (see DayPeriods), half (half past) and word (see ClockWords).
	Clocks []string
	// ClockWords maps words that name a time of day, in lower case, to its
	// hour: "noon" to 12.
	ClockWords map[string]int
	// DayPeriods maps a period of the day to the hour below which 12 is
	// added to the hour it qualifies: "下午" (afternoon) to 12.
	DayPeriods map[string]int
	// Numerals maps the digits of a numeral system to their values; the
	// one whose value is 10 joins tens and ones ("二十三").
	Numerals map[string]int
	// RangeJoin are patterns of all the text between two points that make
	// them a window: "to", "and", "到".
	RangeJoin []string
	// Bounds are the words that make one point an end of a window, tried
	// in order.
	Bounds []Bound
}

// Replies are the texts the guard writes in one language. The comment of
// each field says what it is given, in fmt verbs, in order. Observations
// are what the model is told about a call that did not run; the guard puts
// "[agentguard] " before each, so that the memory card and the guard
// recognise their own feedback.
type Replies struct {
	// Scripts name the Unicode scripts (see unicode.Scripts) of text written
	// in this language: a user turn holding a letter of one of them is
	// answered in it. Empty for the fallback language, EN.
	Scripts []string
	// Humanize shows identifiers that Names does not name as words:
	// "send_email" as "send email". Otherwise they are shown as they are.
	Humanize bool
	// Names are how this language names intent labels, tool names and
	// argument keys: "return_item" as "退货".
	Names map[string]string

	// To the user.

	// Refusal is the answer when a verdict is Refuse or a blocked answer is
	// replaced.
	Refusal string
	// Handoff is the answer when a verdict is Handoff.
	Handoff string
	// Clarify is the answer when a Clarify verdict comes with no question.
	Clarify string
	// IntentUnclear asks what the user wants when the intent gate has no
	// candidate to offer.
	IntentUnclear string
	// IntentQuestion offers candidate intents: %s the candidates, joined by
	// ListSep and, before the last, ListLastSep.
	IntentQuestion, ListSep, ListLastSep string
	// EmptyResult asks the user to check a key that found nothing: %s the
	// arguments of the lookup.
	EmptyResult string
	// Confirm asks the user to confirm a call: %s the tool, %s its
	// arguments.
	Confirm string

	// To the model.

	// NotExecutedRetry: %s why the call was judged Retry.
	NotExecutedRetry string
	// NotExecutedClarify, NotExecutedRefuse and NotExecutedHandoff say a
	// call did not run because the user was asked, the request refused or
	// the conversation handed to a human.
	NotExecutedClarify, NotExecutedRefuse, NotExecutedHandoff string
	// Blocked: %s the rule, %s why.
	Blocked string
	// Declined: %s a human reviewer's reason, or NoReason.
	Declined, NoReason string
	// AnswerRejected asks the model to answer again: %s why.
	AnswerRejected string
	// UnknownTool: %q the name of a tool that does not exist.
	UnknownTool string
}

// English returns the English vocabulary, a new value the caller may change
// before its first use.
func English() *Lexicon { return english() }

// Chinese returns the Chinese vocabulary, a new value the caller may change
// before its first use. It has no write verbs, since tool names are English
// identifiers whatever the user's language, and its replies are Chinese
// only, for every turn: merge it with English, as Default does, for both.
func Chinese() *Lexicon { return chinese() }

// Default returns English and Chinese merged: the vocabulary every guard
// and memory card uses unless told otherwise. It is a new value the caller
// may change before its first use.
func Default() *Lexicon { return Merge(English(), Chinese()) }

// Merge returns a new Lexicon holding the vocabulary of all ls in order:
// lists are concatenated (leaving out repeats), maps merged with later
// entries winning, terms and claim words of the same name joined, and
// replies merged per language, a later non-empty field replacing an
// earlier one. Merge of one Lexicon is a copy. Nil entries are skipped.
func Merge(ls ...*Lexicon) *Lexicon {
	out := &Lexicon{}
	for _, l := range ls {
		if l == nil {
			continue
		}
		out.WriteVerbs = union(out.WriteVerbs, l.WriteVerbs)
		out.Absence = union(out.Absence, l.Absence)
		out.Denial = union(out.Denial, l.Denial)
		out.ClauseRefs = union(out.ClauseRefs, l.ClauseRefs)
		out.ClaimWords = mergeLists(out.ClaimWords, l.ClaimWords)
		out.ClaimNegation = union(out.ClaimNegation, l.ClaimNegation)
		out.EmptyResults = union(out.EmptyResults, l.EmptyResults)
		out.InstructionMarkers = union(out.InstructionMarkers, l.InstructionMarkers)
		out.Affirmation = union(out.Affirmation, l.Affirmation)
		out.Authority = mergeAuthority(out.Authority, l.Authority)
		out.Memory = mergeMemory(out.Memory, l.Memory)
		out.Time = mergeTime(out.Time, l.Time)
		for lang, r := range l.Replies {
			if out.Replies == nil {
				out.Replies = map[Lang]Replies{}
			}
			out.Replies[lang] = mergeReplies(out.Replies[lang], r)
		}
	}
	return out
}

func mergeMemory(a, b Memory) Memory {
	return Memory{
		AddressCues:     union(a.AddressCues, b.AddressCues),
		NameCues:        union(a.NameCues, b.NameCues),
		PreferenceCues:  union(a.PreferenceCues, b.PreferenceCues),
		FactCues:        union(a.FactCues, b.FactCues),
		Channels:        mergeTerms(a.Channels, b.Channels),
		Prohibit:        union(a.Prohibit, b.Prohibit),
		NegationBefore:  union(a.NegationBefore, b.NegationBefore),
		ScopeEnd:        union(a.ScopeEnd, b.ScopeEnd),
		Revoke:          union(a.Revoke, b.Revoke),
		RevokeNegators:  a.RevokeNegators + b.RevokeNegators,
		Reminder:        union(a.Reminder, b.Reminder),
		Address:         union(a.Address, b.Address),
		AddressInClause: union(a.AddressInClause, b.AddressInClause),
		AddressKinds:    mergeMaps(a.AddressKinds, b.AddressKinds),
		AddressLead:     union(a.AddressLead, b.AddressLead),
		AddressDone:     union(a.AddressDone, b.AddressDone),
		Place:           union(a.Place, b.Place),
		Tail:            union(a.Tail, b.Tail),
		PhoneLeads:      union(a.PhoneLeads, b.PhoneLeads),
		Names:           union(a.Names, b.Names),
		NameStop:        union(a.NameStop, b.NameStop),
		NameNotFirst:    a.NameNotFirst + b.NameNotFirst,
		IDs:             union(a.IDs, b.IDs),
		IDKinds:         mergeMaps(a.IDKinds, b.IDKinds),
		TimeContext:     union(a.TimeContext, b.TimeContext),
		Away:            union(a.Away, b.Away),
		PastDue:         union(a.PastDue, b.PastDue),
		TimeKeys:        mergeTerms(a.TimeKeys, b.TimeKeys),
		Prefer:          union(a.Prefer, b.Prefer),
		PreferLanguage:  union(a.PreferLanguage, b.PreferLanguage),
		PreferTime:      union(a.PreferTime, b.PreferTime),
		Facts:           union(a.Facts, b.Facts),
		Abbreviations:   union(a.Abbreviations, b.Abbreviations),
	}
}

func mergeTime(a, b Time) Time {
	bounds := slices.Clone(a.Bounds)
	for _, x := range b.Bounds {
		if !slices.Contains(bounds, x) {
			bounds = append(bounds, x)
		}
	}
	return Time{
		Months:     mergeMaps(a.Months, b.Months),
		Dates:      union(a.Dates, b.Dates),
		DateRanges: union(a.DateRanges, b.DateRanges),
		Clocks:     union(a.Clocks, b.Clocks),
		ClockWords: mergeMaps(a.ClockWords, b.ClockWords),
		DayPeriods: mergeMaps(a.DayPeriods, b.DayPeriods),
		Numerals:   mergeMaps(a.Numerals, b.Numerals),
		RangeJoin:  union(a.RangeJoin, b.RangeJoin),
		Bounds:     bounds,
	}
}

func mergeReplies(a, b Replies) Replies {
	pick := func(x, y string) string {
		if y != "" {
			return y
		}
		return x
	}
	return Replies{
		Scripts:            union(a.Scripts, b.Scripts),
		Humanize:           a.Humanize || b.Humanize,
		Names:              mergeMaps(a.Names, b.Names),
		Refusal:            pick(a.Refusal, b.Refusal),
		Handoff:            pick(a.Handoff, b.Handoff),
		Clarify:            pick(a.Clarify, b.Clarify),
		IntentUnclear:      pick(a.IntentUnclear, b.IntentUnclear),
		IntentQuestion:     pick(a.IntentQuestion, b.IntentQuestion),
		ListSep:            pick(a.ListSep, b.ListSep),
		ListLastSep:        pick(a.ListLastSep, b.ListLastSep),
		EmptyResult:        pick(a.EmptyResult, b.EmptyResult),
		Confirm:            pick(a.Confirm, b.Confirm),
		NotExecutedRetry:   pick(a.NotExecutedRetry, b.NotExecutedRetry),
		NotExecutedClarify: pick(a.NotExecutedClarify, b.NotExecutedClarify),
		NotExecutedRefuse:  pick(a.NotExecutedRefuse, b.NotExecutedRefuse),
		NotExecutedHandoff: pick(a.NotExecutedHandoff, b.NotExecutedHandoff),
		Blocked:            pick(a.Blocked, b.Blocked),
		Declined:           pick(a.Declined, b.Declined),
		NoReason:           pick(a.NoReason, b.NoReason),
		AnswerRejected:     pick(a.AnswerRejected, b.AnswerRejected),
		UnknownTool:        pick(a.UnknownTool, b.UnknownTool),
	}
}

// union returns a new slice: a, then the elements of b not already there.
func union[T comparable](a, b []T) []T {
	if len(a) == 0 && len(b) == 0 {
		return nil
	}
	out := slices.Clone(a)
	for _, x := range b {
		if !slices.Contains(out, x) {
			out = append(out, x)
		}
	}
	return out
}

func mergeMaps[V any](a, b map[string]V) map[string]V {
	if len(a) == 0 && len(b) == 0 {
		return nil
	}
	out := maps.Clone(a)
	if out == nil {
		out = make(map[string]V, len(b))
	}
	maps.Copy(out, b)
	return out
}

func mergeLists(a, b map[string][]string) map[string][]string {
	if len(a) == 0 && len(b) == 0 {
		return nil
	}
	out := make(map[string][]string, len(a)+len(b))
	for k, v := range a {
		out[k] = slices.Clone(v)
	}
	for k, v := range b {
		out[k] = union(out[k], v)
	}
	return out
}

func mergeTerms(a, b []Term) []Term {
	var out []Term
	for _, t := range a {
		out = append(out, Term{t.Name, slices.Clone(t.Patterns)})
	}
	for _, t := range b {
		if i := slices.IndexFunc(out, func(o Term) bool { return o.Name == t.Name }); i >= 0 {
			out[i].Patterns = union(out[i].Patterns, t.Patterns)
			continue
		}
		out = append(out, Term{t.Name, slices.Clone(t.Patterns)})
	}
	return out
}
