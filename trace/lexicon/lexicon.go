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
	// CreateVerbs are the write verbs whose tools make something new
	// (create_file, add_event, book_flight): a lookup that found nothing
	// is what such a call is expected to follow.
	CreateVerbs []string

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
	// Claims is the vocabulary of the false-claim rule: how answers name
	// an effect and say that it happened.
	Claims Claims

	// Tool results.

	// EmptyResults are whole tool results, in lower case and without final
	// punctuation, that mean nothing was found: "no results", "无结果".
	EmptyResults []string
	// InstructionMarkers are patterns of text that addresses the agent with
	// orders — "ignore previous instructions", "before you can solve the
	// task" — the mark of a prompt injection in content the agent read.
	InstructionMarkers []string
	// Results is how a tool's JSON result says the call did not happen.
	Results Results

	// Tool arguments and result fields.

	// Keys are patterns of the names of arguments and result fields, by
	// what a value under such a name is.
	Keys Keys

	// The user's turns.

	// Affirmation are patterns of a user's explicit go-ahead: "yes",
	// "go ahead", "确认".
	Affirmation []string

	// GoAhead are patterns of a request to carry out what the agent just
	// listed, naming no action of its own: "please submit it", "put it
	// through", "麻烦帮我提交一下". The confirmation rule reads them only
	// after the agent's words named the call's object, and not when
	// only a yes confirms.
	GoAhead []string

	// Authority is the vocabulary of who asked for what: objects of
	// writes, destructive actions, yes and no, content a user points at.
	Authority Authority
	// Actions is the vocabulary of what users ask the agent to do: the
	// verbs of requests by family of action, the words that make a clause
	// a request, the kinds of thing an action acts on.
	Actions Actions

	// Recommendations is how an answer recommends a place, a product or a
	// company by its name.
	Recommendations Recommendations

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

// Keys are patterns of the names of tool arguments and result fields,
// matched against the name alone ("to", not "message.to"), by what a value
// under such a name is.
type Keys struct {
	// Identifying names a value that picks out a person, an account or a
	// record: a recipient, an IBAN, an e-mail address, an id, a password.
	// The provenance rules hold such a value of a write to where it came
	// from.
	Identifying []string
	// Content names free text: a body, a message, a note.
	Content []string
	// Date names a date or a time: "date", "*_at", "deadline".
	Date []string
	// Amount names an amount of money or a quantity: "amount", "price".
	Amount []string
	// Destination names where a call takes effect: a recipient, an
	// address. Target names what a call acts on: an id, a number, a
	// recipient. The false-claim rule reads both.
	Destination, Target []string
}

// Words is a named concept and the words that say it: a contact channel
// ("sms": "text message", "短信").
type Words struct {
	Name  string
	Words []string
}

// Memory is the vocabulary of the memory card's rule-based extractor
// (memory.RuleBased). It holds plain words, no patterns: the extractor
// finds typed values (addresses, phone numbers, e-mail addresses, ids,
// dates) by their structure, then reads the words around each value.
//
// Words are matched in lower case. A word whose first or last character
// is an ASCII letter or digit must start or end at a word boundary there;
// a final "*" matches the rest of the word ("deliver*": "delivery",
// "delivered"); words in other scripts match anywhere. Where two words of
// the lists a clause is read with overlap, the longer wins, so that "don't
// mind" (Allow) is no negation and "不可以" (Negation) no permission.
type Memory struct {
	// Channels are the contact channels; their names ("sms", "call",
	// "email", "push", "contact") are the keys of the card's prohibitions.
	// "contact" covers every channel and counts only in a clause that
	// names no other. Merge joins the words of channels of the same name.
	Channels []Words

	// Negation are words that, in a clause naming a channel, prohibit it:
	// "don't", "no more", "isn't", "不要", "免了".
	Negation []string
	// Allow are words that, in such a clause, permit it: "fine", "can",
	// "don't mind", "可以", "没关系". Negation wins over Allow.
	Allow []string
	// ScopeEnd are words that stand between a cue and a channel it does
	// not apply to: "but", "so", "但是".
	ScopeEnd []string
	// Reminder are words of a clause that names a channel without ruling
	// on it: "forget", "miss", "忘".
	Reminder []string
	// Report are words of a clause that tells what happened rather than
	// what may: "didn't get", "没收到".
	Report []string
	// Unruled are words of a clause that names a channel and a negation
	// without ruling on the channel: what the user has, can reach or uses
	// ("I don't have my email handy", "没有邮箱"), or an addition ("not
	// just email", "不只是短信").
	Unruled []string
	// Dismiss are words that take back what a sentence says: "not
	// relevant", "无关".
	Dismiss []string

	// QuestionStart are words that, starting a clause of a sentence that
	// ends in a question mark, make it a question: "can", "do", "what".
	// QuestionMark are words that make a sentence a question wherever they
	// are, with a question mark: "吗", "是不是", "哪". A question states no
	// address and rules on no channel, unless it holds a Change word.
	QuestionStart, QuestionMark []string

	// Change are words of a turn that gives a new value in place of the
	// old: "new", "instead", "moved", "换", "改". Additional are words of a
	// turn that adds a value beside the current one: "also", "second",
	// "再加"; Change wins over them. Old are words right before a value
	// that make it the one being replaced: "from", "not", "不是".
	Change, Additional, Old []string

	// AddressWords name an address: "address", "地址". A statement holding
	// one of them with a Change word, from which no address could be read,
	// is pinned to the card as it was said.
	AddressWords []string
	// AddressKinds maps a word before an address to the card's key for it:
	// "billing" and "invoice" to "billing", "return" to "return". Other
	// addresses are "delivery".
	AddressKinds map[string]string
	// StreetTypes are the last word of a street in an English-style
	// address: "street", "st", "road"; Units come before a house number
	// ("flat", "apt"); Directions follow the street ("nw"); AddressStop
	// are words that end an address ("please", "instead", "and").
	StreetTypes, Units, Directions, AddressStop []string
	// PlaceMarks end the parts of a Chinese-style address above the
	// building (省, 市, 区, 路, 街, 大道); BuildingMarks end the parts below
	// (号, 栋, 楼, 室). An address holds a place mark and a number.
	PlaceMarks, BuildingMarks []string
	// AddressLead are words right before a Chinese-style address ("是",
	// "寄到", "住"); AddressTail are words after one that end it ("吧",
	// "谢谢", "就").
	AddressLead, AddressTail []string

	// PhoneCues are words of a sentence that make a run of digits a phone
	// number: "phone", "mobile", "reach me", "手机".
	PhoneCues []string
	// IDKinds maps the word before an id to the card's id kind: "order",
	// "account" or "tracking". IDFiller are words that may stand between
	// them: "number", "#", "is", "是".
	IDKinds  map[string]string
	IDFiller []string

	// TimeContext are words of a sentence about an appointment or a
	// delivery, the only ones searched for time windows; Away are words of
	// the user being away, which make a window a prohibition; PastDue are
	// words of what should have happened, which state no window.
	TimeContext, Away, PastDue []string
	// TimeKeys name what a window is for ("delivery", "pickup", "visit",
	// "call"), tried in order; a window that matches none is for delivery.
	TimeKeys []Words

	// Prefer are words of a preference: "prefer", "rather", "更喜欢".
	// ReplyVerbs make a language a preference: "reply", "回复". Languages
	// and TimesOfDay are what a preference may name.
	Prefer, ReplyVerbs, Languages, TimesOfDay []string

	// NameLeads and RecipientLeads come right before the user's and the
	// recipient's name: "my name is", "收件人是". NameStop are words at
	// which a name ends; NameNotFirst the characters it cannot start with.
	NameLeads, RecipientLeads, NameStop []string
	NameNotFirst                        string

	// FactLeads come before a fact the user asks to keep: "remember that",
	// "记住".
	FactLeads []string

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
	// AddressChanged asks which address a call should use when it is not
	// the one on the memory card: %s the address in the call, %s the
	// card's current one.
	AddressChanged string

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
		out.CreateVerbs = union(out.CreateVerbs, l.CreateVerbs)
		out.Absence = union(out.Absence, l.Absence)
		out.Denial = union(out.Denial, l.Denial)
		out.ClauseRefs = union(out.ClauseRefs, l.ClauseRefs)
		out.Claims = mergeClaims(out.Claims, l.Claims)
		out.EmptyResults = union(out.EmptyResults, l.EmptyResults)
		out.InstructionMarkers = union(out.InstructionMarkers, l.InstructionMarkers)
		out.Results = mergeResults(out.Results, l.Results)
		out.Keys = Keys{
			Identifying: union(out.Keys.Identifying, l.Keys.Identifying),
			Content:     union(out.Keys.Content, l.Keys.Content),
			Date:        union(out.Keys.Date, l.Keys.Date),
			Amount:      union(out.Keys.Amount, l.Keys.Amount),
			Destination: union(out.Keys.Destination, l.Keys.Destination),
			Target:      union(out.Keys.Target, l.Keys.Target),
		}
		out.Affirmation = union(out.Affirmation, l.Affirmation)
		out.GoAhead = union(out.GoAhead, l.GoAhead)
		out.Authority = mergeAuthority(out.Authority, l.Authority)
		out.Recommendations = mergeRecommendations(out.Recommendations, l.Recommendations)
		out.Actions = mergeActions(out.Actions, l.Actions)
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
		Channels:       mergeWords(a.Channels, b.Channels),
		Negation:       union(a.Negation, b.Negation),
		Allow:          union(a.Allow, b.Allow),
		ScopeEnd:       union(a.ScopeEnd, b.ScopeEnd),
		Reminder:       union(a.Reminder, b.Reminder),
		Report:         union(a.Report, b.Report),
		Unruled:        union(a.Unruled, b.Unruled),
		Dismiss:        union(a.Dismiss, b.Dismiss),
		QuestionStart:  union(a.QuestionStart, b.QuestionStart),
		QuestionMark:   union(a.QuestionMark, b.QuestionMark),
		Change:         union(a.Change, b.Change),
		Additional:     union(a.Additional, b.Additional),
		Old:            union(a.Old, b.Old),
		AddressWords:   union(a.AddressWords, b.AddressWords),
		AddressKinds:   mergeMaps(a.AddressKinds, b.AddressKinds),
		StreetTypes:    union(a.StreetTypes, b.StreetTypes),
		Units:          union(a.Units, b.Units),
		Directions:     union(a.Directions, b.Directions),
		AddressStop:    union(a.AddressStop, b.AddressStop),
		PlaceMarks:     union(a.PlaceMarks, b.PlaceMarks),
		BuildingMarks:  union(a.BuildingMarks, b.BuildingMarks),
		AddressLead:    union(a.AddressLead, b.AddressLead),
		AddressTail:    union(a.AddressTail, b.AddressTail),
		PhoneCues:      union(a.PhoneCues, b.PhoneCues),
		IDKinds:        mergeMaps(a.IDKinds, b.IDKinds),
		IDFiller:       union(a.IDFiller, b.IDFiller),
		TimeContext:    union(a.TimeContext, b.TimeContext),
		Away:           union(a.Away, b.Away),
		PastDue:        union(a.PastDue, b.PastDue),
		TimeKeys:       mergeWords(a.TimeKeys, b.TimeKeys),
		Prefer:         union(a.Prefer, b.Prefer),
		ReplyVerbs:     union(a.ReplyVerbs, b.ReplyVerbs),
		Languages:      union(a.Languages, b.Languages),
		TimesOfDay:     union(a.TimesOfDay, b.TimesOfDay),
		NameLeads:      union(a.NameLeads, b.NameLeads),
		RecipientLeads: union(a.RecipientLeads, b.RecipientLeads),
		NameStop:       union(a.NameStop, b.NameStop),
		NameNotFirst:   a.NameNotFirst + b.NameNotFirst,
		FactLeads:      union(a.FactLeads, b.FactLeads),
		Abbreviations:  union(a.Abbreviations, b.Abbreviations),
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
		AddressChanged:     pick(a.AddressChanged, b.AddressChanged),
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

func mergeWords(a, b []Words) []Words {
	var out []Words
	for _, t := range a {
		out = append(out, Words{t.Name, slices.Clone(t.Words)})
	}
	for _, t := range b {
		if i := slices.IndexFunc(out, func(o Words) bool { return o.Name == t.Name }); i >= 0 {
			out[i].Words = union(out[i].Words, t.Words)
			continue
		}
		out = append(out, Words{t.Name, slices.Clone(t.Words)})
	}
	return out
}
