package memory

import (
	"slices"
	"strings"
	"unicode"
	"unicode/utf8"

	"github.com/agentguard/agentguard/trace/lexicon"
)

// This file finds typed values in a sentence by their structure, before
// anything decides what the sentence does with them: postal addresses,
// e-mail addresses, order, account and tracking ids, phone numbers.

// span is a typed value found in a sentence: its byte offsets.
type span struct{ start, end int }

func (s span) overlaps(t span) bool { return s.start < t.end && t.start < s.end }

func overlapsAny(ss []span, t span) bool {
	return slices.ContainsFunc(ss, t.overlaps)
}

// token is a run of ASCII letters, digits, "-", "#" and "'", or a run of
// other letters (a Chinese phrase), with its byte offsets.
type token struct {
	start, end int
	ascii      bool
}

func tokenize(s string) []token {
	out := make([]token, 0, len(s)/4+1) // most words are longer than three bytes
	for i := 0; i < len(s); {
		c := s[i]
		switch {
		case isWordByte(c) || c == '-' || c == '#':
			j := i
			for j < len(s) && (isWordByte(s[j]) || s[j] == '-' || s[j] == '#') {
				j++
			}
			out = append(out, token{i, j, true})
			i = j
		case c >= 0x80:
			r, size := utf8.DecodeRuneInString(s[i:])
			if !unicode.IsLetter(r) && !unicode.IsDigit(r) {
				i += size
				continue
			}
			j := i
			for j < len(s) && s[j] >= 0x80 {
				r, size := utf8.DecodeRuneInString(s[j:])
				if !unicode.IsLetter(r) && !unicode.IsDigit(r) {
					break
				}
				j += size
			}
			out = append(out, token{i, j, false})
			i = j
		default:
			i++
		}
	}
	return out
}

// houseNumber reports whether t is a house number: 1 to 5 digits, with
// one letter after them or a second number after a hyphen.
func houseNumber(t string) bool {
	n := 0
	for n < len(t) && '0' <= t[n] && t[n] <= '9' {
		n++
	}
	if n == 0 || n > 5 {
		return false
	}
	rest := t[n:]
	switch {
	case rest == "":
		return true
	case len(rest) == 1 && 'a' <= rest[0] && rest[0] <= 'z':
		return true
	case rest[0] == '-' && len(rest) > 1 && strings.Trim(rest[1:], "0123456789") == "":
		return true
	}
	return false
}

func letters(t string) bool {
	for i := 0; i < len(t); i++ {
		if c := t[i]; !('a' <= c && c <= 'z') && c != '\'' && c != '-' {
			return false
		}
	}
	return t != ""
}

// englishAddresses finds addresses written number first: a house number,
// up to four words ending in a street type ("221 Baker Street"), a
// direction, then up to six words of city, region and postcode in at most
// three comma-separated parts, stopping at a word of AddressStop; a unit
// before the number ("Flat 3, ") belongs to it. lower is the text in lower
// case (ASCII only), toks its tokens: those of the text, since lowering
// ASCII moves no token boundary.
func englishAddresses(w *lexicon.Memory, lower string, toks []token) []span {
	word := func(i int) string { return lower[toks[i].start:toks[i].end] }
	sep := func(i int) string { return lower[toks[i-1].end:toks[i].start] } // before token i
	in := func(ws []string, t string) bool { return slices.Contains(ws, t) }
	var out []span
	for i := 0; i < len(toks); i++ {
		if !toks[i].ascii || !houseNumber(word(i)) || (i > 0 && strings.HasSuffix(sep(i), "#")) {
			continue
		}
		street := -1
		for j := i + 1; j < len(toks) && j <= i+5; j++ {
			t := word(j)
			if !toks[j].ascii || !letters(t) || strings.TrimSpace(sep(j)) != "" || (in(w.AddressStop, t) && !in(w.StreetTypes, t)) {
				break
			}
			if in(w.StreetTypes, t) && j > i+1 {
				street = j
			}
		}
		if street < 0 {
			continue
		}
		start, end := toks[i].start, toks[street].end
		if i >= 2 && in(w.Units, word(i-2)) && strings.Trim(sep(i), " ,") == "" && strings.TrimSpace(sep(i-1)) == "" {
			start = toks[i-2].start
		}
		k := street + 1
		if k < len(toks) && toks[k].ascii && in(w.Directions, word(k)) && strings.Trim(sep(k), " .") == "" {
			end, k = toks[k].end, k+1
		}
		for parts, n := 0, 0; k < len(toks) && n < 6; k++ {
			between := sep(k)
			if strings.Contains(between, ",") {
				parts++
			}
			if k == street+1 && strings.TrimSpace(between) == "." && in(w.Abbreviations, word(street)) {
				between = " " // "12 Oak St. Springfield"
			}
			if parts > 2 || strings.Trim(between, " ,") != "" || strings.Count(between, ",") > 1 {
				break
			}
			t := word(k)
			if !toks[k].ascii || in(w.AddressStop, t) || strings.Trim(t, "-#'") == "" {
				break
			}
			end, n = toks[k].end, n+1
		}
		out = append(out, span{start, end})
		for i < len(toks) && toks[i].start < end {
			i++
		}
		i--
	}
	return out
}

// chineseNumerals are the digits of Chinese numbers, for house numbers
// written in words ("十二号").
const chineseNumerals = "零一二两三四五六七八九十百"

// chineseAddresses finds addresses written from the largest place down:
// from a place mark (市, 区, 路) preceded by a place name, back to an
// AddressLead word or at most six characters, and on through place and
// building marks, numbers and names to the last mark or number; an
// address holds a number before a building mark, or digits.
func chineseAddresses(w *lexicon.Memory, s string, taken []span) []span {
	var out []span
	from := 0
	for from < len(s) {
		p, mark := -1, ""
		for _, m := range w.PlaceMarks {
			if i := strings.Index(s[from:], m); i >= 0 && (p < 0 || from+i < p) {
				p, mark = from+i, m
			}
		}
		if p < 0 {
			break
		}
		from = p + len(mark)
		if overlapsAny(taken, span{p, p + len(mark)}) || overlapsAny(out, span{p, p + len(mark)}) {
			continue
		}
		start, n := p, 0
		for n < 6 && start > 0 && !endsWithWord(s[:start], w.AddressLead) {
			r, size := runeBefore(s, start)
			if !isHan(r) {
				break
			}
			start -= size
			n++
		}
		if n == 0 {
			continue
		}
		end, numbered, digits := -1, false, false
		afterNumber, run := false, 0
	scan:
		for i := start; i < len(s); {
			if m := startsWithWord(s[i:], w.PlaceMarks); m != "" && i >= p {
				i += len(m)
				end, afterNumber, run = i, false, 0
				continue
			}
			if m := startsWithWord(s[i:], w.BuildingMarks); m != "" && i > p {
				i += len(m)
				numbered = numbered || afterNumber
				end, afterNumber, run = i, false, 0
				continue
			}
			if i > p && startsWithWord(s[i:], w.AddressTail) != "" {
				break
			}
			r, size := utf8.DecodeRuneInString(s[i:])
			switch {
			case '0' <= r && r <= '9':
				digits, afterNumber = true, true
				if numbered {
					end = i + size
				}
			case strings.ContainsRune(chineseNumerals, r):
				afterNumber = true
			case r == ' ' || r == '-' || r == '#':
			case isHan(r) || ('a' <= r && r <= 'z') || ('A' <= r && r <= 'Z'):
				afterNumber = false
				if run++; run > 8 {
					break scan
				}
			default:
				break scan
			}
			i += size
		}
		if end > p && (numbered || digits) {
			v := span{start, end}
			out = append(out, v)
			from = max(from, end)
		}
	}
	return out
}

// emails finds e-mail addresses: a local part, "@", and a domain with a dot.
func emails(s string) []span {
	var out []span
	local := func(c byte) bool { return isAlnum(c) || strings.IndexByte("._%+-", c) >= 0 }
	domain := func(c byte) bool { return isAlnum(c) || c == '.' || c == '-' }
	for i := 0; i < len(s); i++ {
		if s[i] != '@' {
			continue
		}
		a := i
		for a > 0 && local(s[a-1]) {
			a--
		}
		b := i + 1
		for b < len(s) && domain(s[b]) {
			b++
		}
		for b > i+1 && (s[b-1] == '.' || s[b-1] == '-') {
			b--
		}
		if a < i && strings.Contains(s[i+1:b], ".") {
			out = append(out, span{a, b})
			i = b
		}
	}
	return out
}

// idAfter reads the id that follows an id kind word ending at offset at:
// past up to four IDFiller words, a run of 4 to 20 letters, digits and
// hyphens holding a digit.
func idAfter(w *lexicon.Memory, s, lower string, at int) (span, bool) {
	i := at
	for range 5 {
		for i < len(s) && (s[i] == ' ' || s[i] == ':' || s[i] == '#') {
			i++
		}
		if strings.HasPrefix(s[i:], "：") {
			i += len("：")
			continue
		}
		f := startsWithWord(lower[i:], w.IDFiller)
		if f == "" {
			break
		}
		i += len(f)
	}
	j := i
	digit := false
	for j < len(s) && (isAlnum(s[j]) || s[j] == '-' || s[j] == '_') {
		digit = digit || ('0' <= s[j] && s[j] <= '9')
		j++
	}
	if n := j - i; n < 4 || n > 32 || !digit || (j < len(s) && s[j] >= 0x80 && !isHanAt(s, j)) {
		return span{}, false
	}
	return span{i, j}, true
}

func isHanAt(s string, i int) bool {
	r, _ := utf8.DecodeRuneInString(s[i:])
	return isHan(r) || !unicode.IsLetter(r)
}

// bareID reports whether t, in its original case, reads as an order id
// without a word before it: one to three capital letters and 3 to 12
// digits ("A1001", "W2378156").
func bareID(t string) bool {
	n := 0
	for n < len(t) && 'A' <= t[n] && t[n] <= 'Z' {
		n++
	}
	d := len(t) - n
	return n >= 1 && n <= 3 && d >= 3 && d <= 12 && strings.Trim(t[n:], "0123456789") == ""
}

// phones finds runs of 7 to 15 digits, with spaces, hyphens, dots and
// brackets between them and an optional "+" before, outside taken.
func phones(s string, taken []span) []span {
	var out []span
	for i := 0; i < len(s); i++ {
		c := s[i]
		if !(isDigit(c) || c == '+' || c == '(') || (i > 0 && isWordByte(s[i-1])) {
			continue
		}
		j, digits := i, 0
		for j < len(s) && (isDigit(s[j]) || strings.IndexByte(" -.()", s[j]) >= 0 || (j == i && s[j] == '+')) {
			if isDigit(s[j]) {
				digits++
			}
			if s[j] == ' ' && j+1 < len(s) && !isDigit(s[j+1]) && s[j+1] != '(' {
				break
			}
			j++
		}
		for j > i && !isDigit(s[j-1]) {
			j--
		}
		if j < len(s) && isWordByte(s[j]) {
			i = j
			continue
		}
		if digits >= 7 && digits <= 15 && !overlapsAny(taken, span{i, j}) {
			out = append(out, span{i, j})
		}
		i = max(i, j)
	}
	return out
}

// phoneValue keeps a leading "+" and the digits of a phone number.
func phoneValue(v string) string {
	var b strings.Builder
	for i, r := range v {
		if unicode.IsDigit(r) || (r == '+' && i == 0) {
			b.WriteRune(r)
		}
	}
	return b.String()
}

// chineseMobile reports whether digits is a mainland mobile number.
func chineseMobile(digits string) bool {
	return len(digits) == 11 && digits[0] == '1' && digits[1] >= '3' && digits[1] <= '9'
}
