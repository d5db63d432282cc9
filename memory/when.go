package memory

import (
	"fmt"
	"regexp"
	"slices"
	"strconv"
	"strings"
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

// Free-text dates and times.

const monthRe = `(jan(?:uary)?|feb(?:ruary)?|mar(?:ch)?|apr(?:il)?|may|june?|july?|aug(?:ust)?|sep(?:t(?:ember)?)?|oct(?:ober)?|nov(?:ember)?|dec(?:ember)?)`

var (
	isoDate    = regexp.MustCompile(`\b(\d{4})[-/.](\d{1,2})[-/.](\d{1,2})`)
	zhDate     = regexp.MustCompile(`(?:(\d{4})\s*年\s*)?(\d{1,2})\s*月\s*(\d{1,2})\s*[日号號]?`)
	enMonthDay = regexp.MustCompile(`(?i)\b` + monthRe + `\.?\s+(\d{1,2})(?:st|nd|rd|th)?\b(?:,?\s+(\d{4})\b)?`)
	enDayMonth = regexp.MustCompile(`(?i)\b(\d{1,2})(?:st|nd|rd|th)?\s+(?:of\s+)?` + monthRe + `\b(?:,?\s+(\d{4})\b)?`)
	// "between 1 and 5 June", "1-5 June"
	enDaysMonth = regexp.MustCompile(`(?i)\b(\d{1,2})(?:st|nd|rd|th)?\s*(?:-|–|to|and|until|till|through)\s*(\d{1,2})(?:st|nd|rd|th)?\s+(?:of\s+)?` + monthRe + `\b(?:,?\s+(\d{4})\b)?`)
	// "June 1-5", "June 1 to 5"
	enMonthDays = regexp.MustCompile(`(?i)\b` + monthRe + `\.?\s+(\d{1,2})(?:st|nd|rd|th)?\s*(?:-|–|to|and|until|till|through)\s*(\d{1,2})(?:st|nd|rd|th)?\b(?:,?\s+(\d{4})\b)?`)
	// "6月1日到5日", "6月1日至6月5日", "6月1-5日"
	zhDays = regexp.MustCompile(`(?:(\d{4})\s*年\s*)?(\d{1,2})\s*月\s*(\d{1,2})\s*[日号號]?\s*(?:到|至|-|–|—|~|～)\s*(?:(\d{1,2})\s*月\s*)?(\d{1,2})\s*[日号號]`)

	enClock = regexp.MustCompile(`(?i)(\d{1,2})(?::(\d{2}))?\s*(a\.?m\b\.?|p\.?m\b\.?)|(\d{1,2}):(\d{2})(?::\d{2})?|\b(noon|midnight)\b`)
	zhClock = regexp.MustCompile(`(早上|早晨|上午|中午|下午|傍晚|晚上|夜里|凌晨)?\s*(\d{1,2}|[零一二两三四五六七八九十]{1,3})\s*[点點时時](?:\s*(\d{1,2})\s*分|(半))?`)
)

var months = map[string]int{"jan": 1, "feb": 2, "mar": 3, "apr": 4, "may": 5, "jun": 6, "jul": 7, "aug": 8, "sep": 9, "oct": 10, "nov": 11, "dec": 12}

func monthNum(s string) int { return months[strings.ToLower(s)[:3]] }

// mention is a point found in text, with its byte span.
type mention struct {
	p          point
	start, end int
}

// dates finds the dates in s, in order, without overlaps.
func dates(s string) []mention {
	var out []mention
	add := func(re *regexp.Regexp, conv func(m []string) (point, bool)) {
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
	add(zhDate, func(m []string) (point, bool) { return datePoint(atoi(m[1]), atoi(m[2]), atoi(m[3])) })
	add(enMonthDay, func(m []string) (point, bool) { return datePoint(atoi(m[3]), monthNum(m[1]), atoi(m[2])) })
	add(enDayMonth, func(m []string) (point, bool) { return datePoint(atoi(m[3]), monthNum(m[2]), atoi(m[1])) })
	sortMentions(out)
	return out
}

// clocks finds the times of day in s, in order.
func clocks(s string) []mention {
	var out []mention
	for _, loc := range enClock.FindAllStringSubmatchIndex(s, -1) {
		if loc[0] > 0 && (isDigit(s[loc[0]-1]) || s[loc[0]-1] == ':') || loc[1] < len(s) && (isDigit(s[loc[1]]) || s[loc[1]] == ':') {
			continue
		}
		m := submatches(s, loc)
		var p point
		var ok bool
		switch {
		case m[6] != "":
			h := 12
			if strings.EqualFold(m[6], "midnight") {
				h = 0
			}
			p, ok = clockPoint(h, 0)
		case m[4] != "":
			p, ok = clockPoint(atoi(m[4]), atoi(m[5]))
		default:
			h := atoi(m[1])
			if h < 1 || h > 12 {
				continue
			}
			pm := strings.HasPrefix(strings.ToLower(m[3]), "p")
			switch {
			case pm && h < 12:
				h += 12
			case !pm && h == 12:
				h = 0
			}
			p, ok = clockPoint(h, atoi(m[2]))
		}
		if ok {
			out = append(out, mention{p, loc[0], loc[1]})
		}
	}
	for _, loc := range zhClock.FindAllStringSubmatchIndex(s, -1) {
		if overlaps(out, loc[0], loc[1]) {
			continue
		}
		m := submatches(s, loc)
		h := zhNumber(m[2])
		min := atoi(m[3])
		if m[4] != "" {
			min = 30
		}
		switch m[1] {
		case "下午", "傍晚", "晚上", "夜里":
			if h < 12 {
				h += 12
			}
		case "中午":
			if h < 11 {
				h += 12
			}
		}
		if p, ok := clockPoint(h, min); ok && h >= 0 {
			out = append(out, mention{p, loc[0], loc[1]})
		}
	}
	sortMentions(out)
	return out
}

// zhNumber reads 0 to 99 in Arabic or Chinese numerals ("9", "九", "十二",
// "二十三"); -1 if it cannot.
func zhNumber(s string) int {
	if s == "" {
		return -1
	}
	if s[0] >= '0' && s[0] <= '9' {
		return atoi(s)
	}
	digit := func(s string, empty int) int {
		if s == "" {
			return empty
		}
		if i := strings.Index("零一二三四五六七八九", s); i >= 0 && len(s) == len("一") {
			return i / len("一")
		}
		if s == "两" {
			return 2
		}
		return -1
	}
	tens, ones, ok := strings.Cut(s, "十")
	if !ok {
		return digit(s, -1)
	}
	t, o := digit(tens, 1), digit(ones, 0)
	if t < 0 || o < 0 {
		return -1
	}
	return t*10 + o
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

var (
	rangeJoin   = regexp.MustCompile(`(?i)^\s*(?:,\s*)?(?:and|to|until|till|through|thru|-|–|—|~|～|到|至|和)\s*(?:the\s+)?$`)
	enUntil     = regexp.MustCompile(`(?i)\b(?:before|by|until|till|no\s+later\s+than|not\s+after)\s+(?:the\s+)?$`)
	enBefore    = regexp.MustCompile(`(?i)\bbefore\s+(?:the\s+)?$`)
	enFrom      = regexp.MustCompile(`(?i)\b(?:after|from|since|starting(?:\s+from)?)\s+(?:the\s+)?$`)
	enNotBefore = regexp.MustCompile(`(?i)\b(?:not\s+before|no\s+earlier\s+than)\s+(?:the\s+)?$`)
	enAfter     = regexp.MustCompile(`(?i)\bafter\s+(?:the\s+)?$`)
	zhUntil     = regexp.MustCompile(`^\s*(?:之前|以前|前|为止|截止)`)
	zhFrom      = regexp.MustCompile(`^\s*(?:之后|以后|后|起|开始)`)
	enOn        = regexp.MustCompile(`(?i)\b(?:on|for)\s+(?:the\s+)?$`)
	zhOn        = regexp.MustCompile(`^\s*(?:送|配送|送货|派送|上门|到货|送达)`)
	zhExclPost  = regexp.MustCompile(`^\s*(?:之前|以前|前|之后|以后|后)`)
)

// findWindow finds a window in one sentence: a range of dates, else one
// date with a bound word ("after June 3", "6月10日之前"), else the same with
// times of day. It reports false when the sentence has none.
func findWindow(s string) (window, bool) {
	if w, ok := dateRange(s); ok {
		return w, true
	}
	if w, ok := spanOf(s, dates(s)); ok {
		return w, true
	}
	return spanOf(s, clocks(s))
}

// dateRange reads the compact range forms that share a month.
func dateRange(s string) (window, bool) {
	mk := func(y, m1, d1, m2, d2 int) (window, bool) {
		a, ok1 := datePoint(y, m1, d1)
		b, ok2 := datePoint(y, m2, d2)
		if !ok1 || !ok2 {
			return window{}, false
		}
		return window{from: bound{set: true, p: a}, to: bound{set: true, p: b}}, true
	}
	if m := zhDays.FindStringSubmatch(s); m != nil {
		m2 := atoi(m[2])
		if m[4] != "" {
			m2 = atoi(m[4])
		}
		return mk(atoi(m[1]), atoi(m[2]), atoi(m[3]), m2, atoi(m[5]))
	}
	if m := enDaysMonth.FindStringSubmatch(s); m != nil {
		mo := monthNum(m[3])
		return mk(atoi(m[4]), mo, atoi(m[1]), mo, atoi(m[2]))
	}
	if m := enMonthDays.FindStringSubmatch(s); m != nil {
		mo := monthNum(m[1])
		return mk(atoi(m[4]), mo, atoi(m[2]), mo, atoi(m[3]))
	}
	return window{}, false
}

// spanOf makes a window of the mentions found in s: two joined by "and",
// "to", "到"..., or one with a bound word before (English) or after
// (Chinese) it.
func spanOf(s string, ms []mention) (window, bool) {
	for i := 0; i+1 < len(ms); i++ {
		a, b := ms[i], ms[i+1]
		if rangeJoin.MatchString(s[a.end:b.start]) {
			return window{from: bound{set: true, p: a.p}, to: bound{set: true, p: b.p}}, true
		}
	}
	for _, m := range ms {
		pre, post := s[:m.start], s[m.end:]
		switch {
		case enNotBefore.MatchString(pre):
			return window{from: bound{set: true, p: m.p}}, true
		case enUntil.MatchString(pre):
			return window{to: bound{set: true, excl: enBefore.MatchString(pre), p: m.p}}, true
		case enFrom.MatchString(pre):
			return window{from: bound{set: true, excl: enAfter.MatchString(pre), p: m.p}}, true
		case zhUntil.MatchString(post):
			return window{to: bound{set: true, excl: zhExclPost.MatchString(post), p: m.p}}, true
		case zhFrom.MatchString(post):
			return window{from: bound{set: true, excl: zhExclPost.MatchString(post), p: m.p}}, true
		case !m.p.clock && (enOn.MatchString(pre) || zhOn.MatchString(post)):
			return window{from: bound{set: true, p: m.p}, to: bound{set: true, p: m.p}}, true // that day
		}
	}
	return window{}, false
}
