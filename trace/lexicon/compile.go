package lexicon

import (
	"cmp"
	"errors"
	"fmt"
	"maps"
	"regexp"
	"slices"
	"strings"
	"sync"
	"unicode"
)

// Compiled is a Lexicon in the form the rules read: patterns compiled, word
// lists made sets, replies completed. Lists of patterns that are matched as
// one are joined into one regexp, which matches nothing when the list is
// empty; lists read one by one keep their order. It is read-only and safe
// for concurrent use.
type Compiled struct {
	WriteVerbs         map[string]bool
	CreateVerbs        map[string]bool
	Absence            *regexp.Regexp
	Denial             *regexp.Regexp
	ClauseRefs         *regexp.Regexp // group num
	EmptyResults       map[string]bool
	InstructionMarkers *regexp.Regexp
	Affirmation        *regexp.Regexp
	GoAhead            *regexp.Regexp
	Authority          Authority // plain words: nothing to compile
	Actions            Actions   // plain words: the write-authorization rule indexes them (see Derived)
	Memory             Memory    // plain words: lower case, each list longest first
	Claims             Claims    // plain words, as given: the false-claim rule indexes them (see Derived)
	Results            Results   // plain words, lower case
	Keys               KeyPatterns
	Time               TimePatterns

	Recommendations Recommendations // plain words: lower case, each list longest first

	replies  map[Lang]Replies
	scripts  []script
	ascii    bool // some script holds ASCII letters
	fallback Lang

	prefilters map[*regexp.Regexp]*prefilter // of every pattern above: see MayMatch

	derivedMu sync.Mutex
	derived   map[any]any // see Derived
}

// Derived returns the value kept in c under key, calling build to make it
// the first time: what a reader of the lexicon derives from it once (an
// index of its words) lives as long as c, not as long as the process. key
// is usually an unexported type of the reader's. It is safe for
// concurrent use; build runs under a lock and must not call Derived.
func (c *Compiled) Derived(key any, build func() any) any {
	c.derivedMu.Lock()
	defer c.derivedMu.Unlock()
	if v, ok := c.derived[key]; ok {
		return v
	}
	if c.derived == nil {
		c.derived = map[any]any{}
	}
	v := build()
	c.derived[key] = v
	return v
}

// KeyPatterns is Keys compiled, each list as one pattern.
type KeyPatterns struct {
	Identifying, Content, Date, Amount, Destination, Target *regexp.Regexp
}

// TimePatterns is Time compiled; MONTH is filled in.
type TimePatterns struct {
	Months                           map[string]int
	Dates, DateRanges, Clocks        []*regexp.Regexp
	ClockWords, DayPeriods, Numerals map[string]int
	RangeJoin                        *regexp.Regexp
	Bounds                           []BoundPattern

	prefilters map[*regexp.Regexp]*prefilter // the lexicon's: see MayMatch
}

// BoundPattern is a Bound compiled; Before or After is nil when unset.
type BoundPattern struct {
	Kind          BoundKind
	Before, After *regexp.Regexp
	Exclusive     bool
}

type script struct {
	lang   Lang
	tables []*unicode.RangeTable
}

// Error reports a Lexicon that does not compile. It matches ErrBadPattern.
type Error struct {
	Field string // "Memory.Address[0]", "Replies"
	Err   error
}

func (e *Error) Error() string { return "lexicon: " + e.Field + ": " + e.Err.Error() }

func (e *Error) Unwrap() error { return e.Err }

// ErrBadPattern is wrapped by the errors of patterns that do not compile,
// scripts that do not exist and missing replies.
var ErrBadPattern = errors.New("bad lexicon entry")

// Compiled returns lx compiled, compiling it on the first call; later calls
// return the same value. It panics if lx does not compile: a Lexicon is
// configuration, like a regexp.MustCompile pattern. Check reports the same
// problems as an error.
func (lx *Lexicon) Compiled() *Compiled {
	c, err := lx.compile()
	if err != nil {
		panic(err)
	}
	return c
}

// Check compiles lx, if it has not been compiled yet, and reports the
// patterns that do not compile, unknown scripts and missing replies, as
// errors of type *Error joined.
func (lx *Lexicon) Check() error {
	_, err := lx.compile()
	return err
}

func (lx *Lexicon) compile() (*Compiled, error) {
	lx.once.Do(func() { lx.c, lx.err = build(lx) })
	return lx.c, lx.err
}

// never matches nothing: what an empty list of patterns compiles to.
var never = regexp.MustCompile(`[^\x00-\x{10FFFF}]`)

type compiler struct{ errs []error }

func (k *compiler) fail(field string, err error) {
	k.errs = append(k.errs, &Error{Field: field, Err: fmt.Errorf("%w: %w", ErrBadPattern, err)})
}

func (k *compiler) one(field, src string) *regexp.Regexp {
	re, err := regexp.Compile(src)
	if err != nil {
		k.fail(field, err)
		return never
	}
	return re
}

// join compiles srcs as one pattern: any of them.
func (k *compiler) join(field string, srcs []string) *regexp.Regexp {
	if len(srcs) == 0 {
		return never
	}
	for i, s := range srcs {
		if _, err := regexp.Compile(s); err != nil {
			k.fail(fmt.Sprintf("%s[%d]", field, i), err)
			return never
		}
	}
	return k.one(field, alternation(srcs))
}

// each compiles srcs one by one.
func (k *compiler) each(field string, srcs []string) []*regexp.Regexp {
	out := make([]*regexp.Regexp, 0, len(srcs))
	for i, s := range srcs {
		out = append(out, k.one(fmt.Sprintf("%s[%d]", field, i), s))
	}
	return out
}

func alternation(srcs []string) string {
	if len(srcs) == 1 {
		return srcs[0]
	}
	var b strings.Builder
	for i, s := range srcs {
		if i > 0 {
			b.WriteByte('|')
		}
		b.WriteString("(?:" + s + ")")
	}
	return b.String()
}

func set(words []string) map[string]bool {
	m := make(map[string]bool, len(words))
	for _, w := range words {
		m[w] = true
	}
	return m
}

func build(lx *Lexicon) (*Compiled, error) {
	k := &compiler{}
	c := &Compiled{
		WriteVerbs:         set(lx.WriteVerbs),
		CreateVerbs:        set(lx.CreateVerbs),
		Absence:            k.join("Absence", lx.Absence),
		Denial:             k.join("Denial", lx.Denial),
		ClauseRefs:         k.join("ClauseRefs", lx.ClauseRefs),
		EmptyResults:       set(lx.EmptyResults),
		InstructionMarkers: k.join("InstructionMarkers", lx.InstructionMarkers),
		Affirmation:        k.join("Affirmation", lx.Affirmation),
		GoAhead:            k.join("GoAhead", lx.GoAhead),
		Authority:          lx.Authority,
		Actions:            lx.Actions,
	}
	c.Memory = buildMemory(&lx.Memory)
	c.Recommendations = buildRecommendations(&lx.Recommendations)
	c.Claims = mergeClaims(Claims{}, lx.Claims) // a copy
	c.Results = lowerResults(lx.Results)
	c.Keys = KeyPatterns{
		Identifying: k.join("Keys.Identifying", lx.Keys.Identifying),
		Content:     k.join("Keys.Content", lx.Keys.Content),
		Date:        k.join("Keys.Date", lx.Keys.Date),
		Amount:      k.join("Keys.Amount", lx.Keys.Amount),
		Destination: k.join("Keys.Destination", lx.Keys.Destination),
		Target:      k.join("Keys.Target", lx.Keys.Target),
	}
	c.Time = buildTime(k, &lx.Time)
	buildReplies(k, c, lx.Replies)
	c.indexPrefilters()
	return c, errors.Join(k.errs...)
}

// lowerResults returns a copy of r with every key and word in lower case.
func lowerResults(r Results) Results {
	lower := func(ws []string) []string {
		out := make([]string, 0, len(ws))
		for _, w := range ws {
			if w = strings.ToLower(strings.TrimSpace(w)); w != "" && !slices.Contains(out, w) {
				out = append(out, w)
			}
		}
		return out
	}
	return Results{Flags: lower(r.Flags), Status: lower(r.Status), Failures: lower(r.Failures), Errors: lower(r.Errors), Codes: lower(r.Codes)}
}

// buildMemory returns a copy of m with every word in lower case and each
// list sorted longest first, so that a reader trying the words in order
// finds the longest that matches at a place.
func buildMemory(m *Memory) Memory {
	words := func(ws []string) []string {
		out := make([]string, 0, len(ws))
		for _, w := range ws {
			if w = strings.ToLower(strings.TrimSpace(w)); w != "" && !slices.Contains(out, w) {
				out = append(out, w)
			}
		}
		slices.SortStableFunc(out, func(a, b string) int { return len(b) - len(a) })
		return out
	}
	named := func(ns []Words) []Words {
		out := make([]Words, len(ns))
		for i, n := range ns {
			out[i] = Words{Name: n.Name, Words: words(n.Words)}
		}
		return out
	}
	lower := func(m map[string]string) map[string]string {
		out := make(map[string]string, len(m))
		for k, v := range m {
			out[strings.ToLower(k)] = v
		}
		return out
	}
	return Memory{
		Channels:       named(m.Channels),
		Negation:       words(m.Negation),
		Allow:          words(m.Allow),
		ScopeEnd:       words(m.ScopeEnd),
		Reminder:       words(m.Reminder),
		Report:         words(m.Report),
		Unruled:        words(m.Unruled),
		Dismiss:        words(m.Dismiss),
		QuestionStart:  words(m.QuestionStart),
		QuestionMark:   words(m.QuestionMark),
		Change:         words(m.Change),
		Additional:     words(m.Additional),
		Old:            words(m.Old),
		AddressWords:   words(m.AddressWords),
		AddressKinds:   lower(m.AddressKinds),
		StreetTypes:    words(m.StreetTypes),
		Units:          words(m.Units),
		Directions:     words(m.Directions),
		AddressStop:    words(m.AddressStop),
		PlaceMarks:     words(m.PlaceMarks),
		BuildingMarks:  words(m.BuildingMarks),
		AddressLead:    words(m.AddressLead),
		AddressTail:    words(m.AddressTail),
		PhoneCues:      words(m.PhoneCues),
		IDKinds:        lower(m.IDKinds),
		IDFiller:       words(m.IDFiller),
		TimeContext:    words(m.TimeContext),
		Away:           words(m.Away),
		PastDue:        words(m.PastDue),
		TimeKeys:       named(m.TimeKeys),
		Prefer:         words(m.Prefer),
		ReplyVerbs:     words(m.ReplyVerbs),
		Languages:      words(m.Languages),
		TimesOfDay:     words(m.TimesOfDay),
		NameLeads:      words(m.NameLeads),
		RecipientLeads: words(m.RecipientLeads),
		NameStop:       words(m.NameStop),
		NameNotFirst:   m.NameNotFirst,
		FactLeads:      words(m.FactLeads),
		Abbreviations:  words(m.Abbreviations),
	}
}

func buildTime(k *compiler, t *Time) TimePatterns {
	names := slices.Collect(maps.Keys(t.Months))
	slices.SortFunc(names, func(a, b string) int { // longest first: "june" before "jun"
		return cmp.Or(len(b)-len(a), strings.Compare(a, b))
	})
	for i, n := range names {
		names[i] = regexp.QuoteMeta(n)
	}
	month := `(?:` + strings.Join(names, "|") + `)`
	if len(names) == 0 {
		month = never.String()
	}
	fill := func(srcs []string) []string {
		out := make([]string, len(srcs))
		for i, s := range srcs {
			out[i] = strings.ReplaceAll(s, "MONTH", month)
		}
		return out
	}
	out := TimePatterns{
		Months:     maps.Clone(t.Months),
		Dates:      k.each("Time.Dates", fill(t.Dates)),
		DateRanges: k.each("Time.DateRanges", fill(t.DateRanges)),
		Clocks:     k.each("Time.Clocks", t.Clocks),
		ClockWords: maps.Clone(t.ClockWords),
		DayPeriods: maps.Clone(t.DayPeriods),
		Numerals:   maps.Clone(t.Numerals),
		RangeJoin:  k.join("Time.RangeJoin", t.RangeJoin),
	}
	for i, b := range t.Bounds {
		p := BoundPattern{Kind: b.Kind, Exclusive: b.Exclusive}
		field := fmt.Sprintf("Time.Bounds[%d]", i)
		if b.Before != "" {
			p.Before = k.one(field+".Before", b.Before)
		}
		if b.After != "" {
			p.After = k.one(field+".After", b.After)
		}
		switch {
		case b.Kind != From && b.Kind != Until && b.Kind != On:
			k.fail(field, fmt.Errorf("kind %q is none of from, until, on", b.Kind))
		case p.Before == nil && p.After == nil:
			k.fail(field, errors.New("neither Before nor After is set"))
		default:
			out.Bounds = append(out.Bounds, p)
		}
	}
	return out
}

// buildReplies completes each language's replies from the fallback
// language's and indexes the scripts.
func buildReplies(k *compiler, c *Compiled, replies map[Lang]Replies) {
	langs := slices.Sorted(maps.Keys(replies))
	if len(langs) == 0 {
		k.fail("Replies", errors.New("no language"))
		c.replies = map[Lang]Replies{}
		return
	}
	c.fallback = langs[0]
	if _, ok := replies[EN]; ok {
		c.fallback = EN
	} else if i := slices.IndexFunc(langs, func(l Lang) bool { return len(replies[l].Scripts) == 0 }); i >= 0 {
		c.fallback = langs[i]
	}
	fb := replies[c.fallback]
	c.replies = make(map[Lang]Replies, len(langs))
	for _, l := range langs {
		r := replies[l]
		full := mergeReplies(fb, r)
		full.Scripts, full.Humanize, full.Names = slices.Clone(r.Scripts), r.Humanize, maps.Clone(r.Names)
		c.replies[l] = full
		var tables []*unicode.RangeTable
		for _, name := range r.Scripts {
			t, ok := unicode.Scripts[name]
			if !ok {
				k.fail(fmt.Sprintf("Replies[%s].Scripts", l), fmt.Errorf("no Unicode script %q", name))
				continue
			}
			tables = append(tables, t)
			if unicode.Is(t, 'a') || unicode.Is(t, 'A') {
				c.ascii = true
			}
		}
		if len(tables) > 0 {
			c.scripts = append(c.scripts, script{l, tables})
		}
	}
}

// LangOf returns the language to answer text in: of the languages with
// Scripts, the one with the most letters in text (the first in code order
// on a tie), or else the fallback language (EN when the lexicon has
// English replies). Any Chinese character makes a turn Chinese in Default.
// It does not allocate.
func (c *Compiled) LangOf(text string) Lang {
	best, most := c.fallback, 0
	for _, s := range c.scripts {
		n := 0
		for _, r := range text {
			if r < 0x80 && !c.ascii {
				continue
			}
			for _, t := range s.tables {
				if unicode.Is(t, r) {
					n++
					break
				}
			}
		}
		if n > most {
			best, most = s.lang, n
		}
	}
	return best
}

// Replies returns the replies in lang, each empty field filled from the
// fallback language; a language the lexicon lacks gets the fallback's.
func (c *Compiled) Replies(lang Lang) Replies {
	if r, ok := c.replies[lang]; ok {
		return r
	}
	return c.replies[c.fallback]
}

// Group returns the text of the first group named name that took part in
// m, a match of re (from FindStringSubmatch or FindAllStringSubmatch), or
// "" when none did. Patterns of a Lexicon name their groups, and a name
// may appear in several alternatives.
func Group(re *regexp.Regexp, m []string, name string) string {
	for i, n := range re.SubexpNames() {
		if n == name && i < len(m) && m[i] != "" {
			return m[i]
		}
	}
	return ""
}
