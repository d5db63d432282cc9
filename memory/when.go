package memory

import (
	"fmt"
	"regexp"
	"slices"
	"strconv"
	"strings"

	"github.com/agentguard/agentguard/trace/lexicon"
)

// This file reads dates and times of day in English and Chinese text, and
// the time windows of KindTimeRange constraints and conditional
// prohibitions.

// point is a date or a time of day.
type point struct {
	clock bool // a time of day: v is minutes since midnight
	year  int  // dates only; 0 when not given
	v     int  // month*100+day for dates, minutes for times of day
}

func (p point) String() string {
	switch {
	case p.clock:
		return fmt.Sprintf("%02d:%02d", p.v/60, p.v%60)
	case p.year > 0:
		return fmt.Sprintf("%04d-%02d-%02d", p.year, p.v/100, p.v%100)
	default:
		return fmt.Sprintf("%02d-%02d", p.v/100, p.v%100)
	}
}

// cmp compares two points of the same sort; years count only when both
// have one.
func (p point) cmp(q point) int {
	if p.year > 0 && q.year > 0 && p.year != q.year {
		return p.year - q.year
	}
	return p.v - q.v
}

// bound is one end of a window.
type bound struct {
	set  bool
	excl bool // "before X" and "after X" exclude X
	p    point
}

// window is a span of dates or of times of day; either end may be open.
type window struct {
	from, to bound
}

func (w window) clock() bool {
	if w.from.set {
		return w.from.p.clock
	}
	return w.to.p.clock
}

// String writes w in the canonical form that parseWindow reads.
func (w window) String() string {
	switch {
	case w.from.set && w.from.excl && !w.to.set:
		return "after " + w.from.p.String()
	case w.to.set && w.to.excl && !w.from.set:
		return "before " + w.to.p.String()
	}
	var s string
	if w.from.set {
		s = w.from.p.String()
	}
	s += ".."
	if w.to.set {
		s += w.to.p.String()
	}
	return s
}

// contains reports whether p falls in w. A window whose start lies after
// its end wraps around (a night, or the turn of a year).
func (w window) contains(p point) bool {
	if p.clock != w.clock() {
		return true // a date says nothing about hours, nor a time about days
	}
	after := func(b bound) bool {
		c := p.cmp(b.p)
		return !b.set || c > 0 || (c == 0 && !b.excl)
	}
	before := func(b bound) bool {
		c := p.cmp(b.p)
		return !b.set || c < 0 || (c == 0 && !b.excl)
	}
	if w.from.set && w.to.set && w.from.p.cmp(w.to.p) > 0 {
		return after(w.from) || before(w.to)
	}
	return after(w.from) && before(w.to)
}

var canonPoint = regexp.MustCompile(`^(?:(\d{4})-)?(\d{1,2})-(\d{1,2})$|^(\d{1,2}):(\d{2})$`)

// parsePoint reads a canonical point: "2025-06-01", "06-01" or "09:00".
func parsePoint(s string) (point, bool) {
	m := canonPoint.FindStringSubmatch(strings.TrimSpace(s))
	if m == nil {
		return point{}, false
	}
	if m[4] != "" {
		return clockPoint(atoi(m[4]), atoi(m[5]))
	}
	return datePoint(atoi(m[1]), atoi(m[2]), atoi(m[3]))
}

func datePoint(y, m, d int) (point, bool) {
	if m < 1 || m > 12 || d < 1 || d > 31 || (y != 0 && (y < 1000 || y > 9999)) {
		return point{}, false
	}
	return point{year: y, v: m*100 + d}, true
}

func clockPoint(h, min int) (point, bool) {
	if h < 0 || h > 24 || min < 0 || min > 59 || (h == 24 && min > 0) {
		return point{}, false
	}
	return point{clock: true, v: h*60 + min}, true
}

func atoi(s string) int {
	n, _ := strconv.Atoi(s)
	return n
}

// parseWindow reads a window: "FROM..TO" with either side optional,
// "before X" or "after X"; both sides must be of the same sort.
func parseWindow(s string) (window, bool) {
	s = strings.TrimSpace(s)
	var w window
	if rest, ok := strings.CutPrefix(s, "before "); ok {
		p, ok := parsePoint(rest)
		w.to = bound{set: true, excl: true, p: p}
		return w, ok
	}
	if rest, ok := strings.CutPrefix(s, "after "); ok {
		p, ok := parsePoint(rest)
		w.from = bound{set: true, excl: true, p: p}
		return w, ok
	}
	a, b, ok := strings.Cut(s, "..")
	if !ok || (a == "" && b == "") {
		return w, false
	}
	if a != "" {
		p, ok := parsePoint(a)
		if !ok {
			return w, false
		}
		w.from = bound{set: true, p: p}
	}
	if b != "" {
		p, ok := parsePoint(b)
		if !ok {
			return w, false
		}
		w.to = bound{set: true, p: p}
	}
	if w.from.set && w.to.set && w.from.p.clock != w.to.p.clock {
		return w, false
	}
	return w, true
}

// Free-text dates and times, in the words of a lexicon's Time.

// isoDate is a four-digit-year date, read in any language.
var isoDate = regexp.MustCompile(`\b(\d{4})[-/.](\d{1,2})[-/.](\d{1,2})`)

// mayISODate reports whether s could hold an isoDate: a separator
// between two digits, which every match has and an id ("A1010", "订单
// 20250601") has not. An amount ("120.50") has one; the pattern then
// finds nothing.
func mayISODate(s string) bool {
	for i := 1; i+1 < len(s); i++ {
		if c := s[i]; (c == '-' || c == '/' || c == '.') && isDigit(s[i-1]) && isDigit(s[i+1]) {
			return true
		}
	}
	return false
}

// monthNum reads a month group: a number or one of w's month names; 0 if
// it is neither.
func monthNum(w *lexicon.TimePatterns, s string) int {
	if n, err := strconv.Atoi(s); err == nil {
		return n
	}
	return w.Months[strings.ToLower(s)]
}

// mention is a point found in text, with its byte span.
type mention struct {
	p          point
	start, end int
}

// dates finds the dates in s, in order, without overlaps: ISO dates first,
// then w's Dates patterns in order.
func dates(w *lexicon.TimePatterns, s string) []mention {
	var out []mention
	add := func(re *regexp.Regexp, conv func(m []string) (point, bool)) {
		if re == isoDate && !mayISODate(s) || !w.MayMatch(re, s) {
			return // no word, or digits, every match needs: most sentences
		}
		for _, loc := range re.FindAllStringSubmatchIndex(s, -1) {
			if overlaps(out, loc[0], loc[1]) {
				continue
			}
			if p, ok := conv(submatches(s, loc)); ok {
				out = append(out, mention{p, loc[0], loc[1]})
			}
		}
	}
	add(isoDate, func(m []string) (point, bool) { return datePoint(atoi(m[1]), atoi(m[2]), atoi(m[3])) })
	for _, re := range w.Dates {
		add(re, func(m []string) (point, bool) {
			return datePoint(atoi(group(re, m, "year")), monthNum(w, group(re, m, "month")), atoi(group(re, m, "day")))
		})
	}
	sortMentions(out)
	return out
}

// clocks finds the times of day in s, in order, without overlaps. A match
// right after a digit or a colon, or one that ends in ASCII right before
// one, is part of some other number and skipped.
func clocks(w *lexicon.TimePatterns, s string) []mention {
	var out []mention
	for _, re := range w.Clocks {
		if !w.MayMatch(re, s) {
			continue
		}
		for _, loc := range re.FindAllStringSubmatchIndex(s, -1) {
			if overlaps(out, loc[0], loc[1]) ||
				loc[0] > 0 && (isDigit(s[loc[0]-1]) || s[loc[0]-1] == ':') ||
				loc[1] < len(s) && s[loc[1]-1] < 0x80 && (isDigit(s[loc[1]]) || s[loc[1]] == ':') {
				continue
			}
			if p, ok := clockOf(w, re, submatches(s, loc)); ok {
				out = append(out, mention{p, loc[0], loc[1]})
			}
		}
	}
	sortMentions(out)
	return out
}

// clockOf reads a Clocks match: a named time (group word), an hour on a
// 12-hour clock (group am or pm), or an hour in digits or numerals with
// minutes, half past, and a period of the day that may move it to the
// afternoon.
func clockOf(w *lexicon.TimePatterns, re *regexp.Regexp, m []string) (point, bool) {
	if word := group(re, m, "word"); word != "" {
		h, ok := w.ClockWords[strings.ToLower(word)]
		if !ok {
			return point{}, false
		}
		return clockPoint(h, 0)
	}
	am, pm := group(re, m, "am") != "", group(re, m, "pm") != ""
	if am || pm {
		h := atoi(group(re, m, "hour"))
		if h < 1 || h > 12 {
			return point{}, false
		}
		switch {
		case pm && h < 12:
			h += 12
		case am && h == 12:
			h = 0
		}
		return clockPoint(h, atoi(group(re, m, "min")))
	}
	h := number(w, group(re, m, "hour"))
	if h < 0 {
		return point{}, false
	}
	min := atoi(group(re, m, "min"))
	if group(re, m, "half") != "" {
		min = 30
	}
	if below, ok := w.DayPeriods[group(re, m, "period")]; ok && h < below {
		h += 12
	}
	return clockPoint(h, min)
}

// number reads 0 to 99 in digits or in w's Numerals ("9", "九", "十二",
// "二十三"): digits, or tens and ones joined by the numeral worth 10; -1 if
// it cannot.
func number(w *lexicon.TimePatterns, s string) int {
	if s == "" {
		return -1
	}
	if isDigit(s[0]) {
		return atoi(s)
	}
	total, ones, tens := 0, -1, false
	for _, r := range s {
		v, ok := w.Numerals[string(r)]
		switch {
		case !ok || v > 10 || (v < 10 && ones >= 0) || (v == 10 && tens):
			return -1
		case v == 10:
			total, ones, tens = max(ones, 1)*10, -1, true
		default:
			ones = v
		}
	}
	if ones >= 0 {
		total += ones
	} else if !tens {
		return -1
	}
	return total
}

func submatches(s string, loc []int) []string {
	m := make([]string, len(loc)/2)
	for i := range m {
		if loc[2*i] >= 0 {
			m[i] = s[loc[2*i]:loc[2*i+1]]
		}
	}
	return m
}

func isDigit(c byte) bool { return '0' <= c && c <= '9' }

func overlaps(ms []mention, start, end int) bool {
	for _, m := range ms {
		if start < m.end && m.start < end {
			return true
		}
	}
	return false
}

func sortMentions(ms []mention) {
	slices.SortFunc(ms, func(a, b mention) int { return a.start - b.start })
}

// findWindow finds a window in one sentence: a range of dates, else one
// date with a bound word ("after June 3", "6月10日之前"), else the same with
// times of day. It reports false when the sentence has none.
func findWindow(tw *lexicon.TimePatterns, s string) (window, bool) {
	return findWindowIn(tw, s, dates, clocks)
}

// findWindowIn is findWindow with the dates and clocks of s found by the
// functions given: those of a sentence already read.
func findWindowIn(tw *lexicon.TimePatterns, s string, dates, clocks func(*lexicon.TimePatterns, string) []mention) (window, bool) {
	if w, ok := dateRange(tw, s); ok {
		return w, true
	}
	if w, ok := spanOf(tw, s, dates(tw, s)); ok {
		return w, true
	}
	return spanOf(tw, s, clocks(tw, s))
}

// dateRange reads the compact range forms that share a month or a year
// (w's DateRanges).
func dateRange(w *lexicon.TimePatterns, s string) (window, bool) {
	for _, re := range w.DateRanges {
		if !w.MayMatch(re, s) {
			continue // no word, or digit, every match needs
		}
		m := re.FindStringSubmatch(s)
		if m == nil {
			continue
		}
		y, m1 := atoi(group(re, m, "year")), monthNum(w, group(re, m, "month"))
		m2 := m1
		if g := group(re, m, "month2"); g != "" {
			m2 = monthNum(w, g)
		}
		a, ok1 := datePoint(y, m1, atoi(group(re, m, "day")))
		b, ok2 := datePoint(y, m2, atoi(group(re, m, "day2")))
		if !ok1 || !ok2 {
			return window{}, false
		}
		return window{from: bound{set: true, p: a}, to: bound{set: true, p: b}}, true
	}
	return window{}, false
}

// spanOf makes a window of the mentions found in s: two joined by w's
// RangeJoin ("and", "to", "到"...), or one with a bound word before or
// after it (w's Bounds, in order).
func spanOf(w *lexicon.TimePatterns, s string, ms []mention) (window, bool) {
	for i := 0; i+1 < len(ms); i++ {
		a, b := ms[i], ms[i+1]
		if w.RangeJoin.MatchString(s[a.end:b.start]) {
			if a.p.clock && b.p.clock && a.p.v >= 12*60 && b.p.v < 12*60 && b.p.v+12*60 > a.p.v {
				b.p.v += 12 * 60 // "晚上7点到9点": the period of the first time holds for the second
			}
			return window{from: bound{set: true, p: a.p}, to: bound{set: true, p: b.p}}, true
		}
	}
	for _, m := range ms {
		pre, post := s[:m.start], s[m.end:]
		for _, b := range w.Bounds {
			if !(b.Before != nil && b.Before.MatchString(pre) || b.After != nil && b.After.MatchString(post)) {
				continue
			}
			at := bound{set: true, excl: b.Exclusive, p: m.p}
			switch b.Kind {
			case lexicon.From:
				return window{from: at}, true
			case lexicon.Until:
				return window{to: at}, true
			case lexicon.On:
				if !m.p.clock {
					return window{from: at, to: at}, true // that day
				}
			}
		}
	}
	return window{}, false
}
