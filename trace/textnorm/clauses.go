package textnorm

import (
	"strconv"
	"strings"
	"unicode/utf8"
)

// Clauses returns Fold(s) with its references to parts of a document spelled
// one way, so that a rule looking for "section 7" or "第7条" finds every
// spelling of them:
//
//   - A Chinese numeral between 第 and a unit of a document (条 款 项 目 章
//     节 编 部 篇 卷 段 页 点) is written in digits: 第七条 → 第7条,
//     第十二条 → 第12条, 第二十一款 → 第21款, 第一百零五条 → 第105条,
//     第一〇五条 → 第105条, 第两百条 → 第200条, 第柒条 → 第7条. So is an
//     upper-case Roman numeral there (第IV条 → 第4条). Full-width digits
//     (第７条) are already plain digits after Fold.
//   - An abbreviation of a section-like word followed by a numeral is spelled
//     out, in the case it was written in: "Sec. 7.3" → "Section 7.3",
//     "ART. 5" → "ARTICLE 5", "cl 7" → "clause 7", "§7" and "§ 7" →
//     "section 7", "§§ 7-9" → "sections 7-9", "¶ 4" → "paragraph 4",
//     "No. 7" → "number 7". Those that are also words or names need their
//     full stop ("no 5 items" and "the SEC 10-K filing" stay). The table
//     is abbreviations in terms.go.
//   - A Roman numeral after a section-like word is written in digits, and
//     so are the ones listed after it: "Section VII" → "Section 7", "Art.
//     IV" → "Article 4", "Parts II and III" → "Parts 2 and 3", "Articles
//     IV-VI" → "Articles 4-6", "section xiv" → "section 14". Upper-case
//     numerals count, and lower-case ones of two letters or more made of i,
//     v and x. A numeral of one letter counts only after an abbreviation or
//     a capitalized word ("Section V" → "Section 5") and never as L, C, D or
//     M: "the section I read", "rule X applies" and "Appendix C" stay.
//   - A section-like word of five letters or more spelled with look-alike
//     ASCII is spelled right: "cIause" (capital I) → "clause", "SECTI0N"
//     (zero) → "SECTION", "artic1e" → "article".
//
// Nothing else changes: "V" or "I" alone, "Section 7", a Roman numeral after
// any other word, and Chinese text without 第<numeral><unit> stay as they
// are. The vocabulary (English abbreviations and section words, Chinese
// units) is data in terms.go; Fold, which knows no vocabulary, does none of
// this.
//
// Clauses is safe for concurrent use, never panics, and is stable:
// Clauses(Clauses(s)) == Clauses(s), and Fold(Clauses(s)) == Clauses(s).
func Clauses(s string) string {
	t := Fold(s)
	e := editor{s: t}
	prevWord := false // the rune before i is a letter, mark or digit
	for i := 0; i < len(t); {
		c := t[i]
		switch {
		case c == 0xE7 && strings.HasPrefix(t[i:], "第"):
			i = hanReference(&e, t, i)
			prevWord = false
			continue
		case c == 0xC2 && i+1 < len(t) && (t[i+1] == 0xA7 || t[i+1] == 0xB6): // § or ¶
			i = symbolReference(&e, t, i, prevWord)
			prevWord = false
			continue
		case isAlnum(c) && !prevWord:
			i = wordReference(&e, t, i)
			prevWord = true
			continue
		case c < 0x80:
			prevWord = isAlnum(c)
			i++
			continue
		}
		r, size := utf8.DecodeRuneInString(t[i:])
		prevWord = isWordRune(r)
		i += size
	}
	out, _ := e.result()
	return out
}

// hanReference rewrites the numeral of 第<numeral><unit> at t[i:] and
// returns where to go on.
func hanReference(e *editor, t string, i int) int {
	j := i + len("第")
	k := skipSpace(t, j)
	end := k
	for end < len(t) {
		r, size := utf8.DecodeRuneInString(t[end:])
		if _, ok := hanDigits[r]; !ok && hanMultipliers[r] == 0 && !strings.ContainsRune("IVXLCDM", r) {
			break
		}
		end += size
	}
	if end == k {
		return j
	}
	u := skipSpace(t, end)
	if r, _ := utf8.DecodeRuneInString(t[u:]); !hanUnits[r] {
		return j
	}
	var buf [24]byte
	digits := buf[:0]
	if isRomanUpper(t[k:end]) {
		n, ok := parseRoman(t[k:end])
		if !ok || len(t[k:end]) == 1 && strings.Contains("LCDM", t[k:end]) {
			return j
		}
		digits = strconv.AppendInt(digits, int64(n), 10)
	} else {
		var ok bool
		if digits, ok = parseHan(digits, t[k:end]); !ok {
			return j
		}
	}
	e.replaceBytes(k, end, digits)
	return end
}

func skipSpace(t string, i int) int {
	if i < len(t) && t[i] == ' ' {
		return i + 1
	}
	return i
}

func isRomanUpper(s string) bool {
	for i := 0; i < len(s); i++ {
		if !strings.ContainsRune("IVXLCDM", rune(s[i])) {
			return false
		}
	}
	return s != ""
}

// parseHan reads a Chinese numeral and appends it to dst in decimal digits.
// A numeral without units is read digit by digit (一〇五 is 105); one with
// units is read by them (一百零五 is 105, 十二 is 12, 一百五 is 150).
func parseHan(dst []byte, s string) ([]byte, bool) {
	if utf8.RuneCountInString(s) > 20 {
		return dst, false
	}
	units := false
	for _, r := range s {
		if hanMultipliers[r] != 0 {
			units = true
		} else if _, ok := hanDigits[r]; !ok {
			return dst, false
		}
	}
	if !units {
		n := len(dst)
		for _, r := range s {
			if d := hanDigits[r]; d != 0 || len(dst) > n {
				dst = append(dst, byte('0'+d))
			}
		}
		if len(dst) == n {
			dst = append(dst, '0')
		}
		return dst, true
	}
	var (
		total, section uint64
		num            = -1   // the digit waiting for its unit; -1 for none
		zero           bool   // a 零 since the last unit
		lastUnit       uint64 // the last unit below 万 in this section; 0 for none
		lastBig        uint64 // the last of 万 and 亿; 0 for none
	)
	for _, r := range s {
		if d, ok := hanDigits[r]; ok {
			switch {
			case d == 0 && num == -1 && (section > 0 || total > 0):
				zero = true
			case d == 0 || num != -1:
				return dst, false // 零 leading, or two digits in a row
			default:
				num = int(d)
			}
			continue
		}
		u := hanMultipliers[r]
		if u >= 1e4 {
			if num != -1 {
				section += uint64(num)
				num = -1
			}
			if section == 0 || lastBig != 0 && u >= lastBig {
				return dst, false
			}
			total += section * u
			section, lastUnit, lastBig, zero = 0, 0, u, false
			continue
		}
		if num == -1 {
			if u != 10 || zero && section == 0 && total == 0 {
				return dst, false
			}
			num = 1 // 十二 is 12
		}
		if lastUnit != 0 && u >= lastUnit {
			return dst, false
		}
		section += uint64(num) * u
		num, lastUnit, zero = -1, u, false
	}
	if num != -1 {
		switch {
		case !zero && lastUnit >= 100:
			section += uint64(num) * lastUnit / 10 // 一百五 is 150
		case !zero && lastUnit == 0 && section == 0 && lastBig != 0:
			section += uint64(num) * lastBig / 10 // 一万五 is 15000
		default:
			section += uint64(num)
		}
	}
	return strconv.AppendUint(dst, total+section, 10), true
}

// romanValues are the values of the Roman digits.
var romanValues = [256]int{'I': 1, 'V': 5, 'X': 10, 'L': 50, 'C': 100, 'D': 500, 'M': 1000}

// parseRoman reads a Roman numeral in upper case from 1 to 3999 written the
// standard way (IV, not IIII; XC, not LXL).
func parseRoman(s string) (int, bool) {
	if s == "" || len(s) > 15 {
		return 0, false
	}
	n := 0
	for i := 0; i < len(s); i++ {
		v := romanValues[s[i]]
		if v == 0 {
			return 0, false
		}
		if i+1 < len(s) && v < romanValues[s[i+1]] {
			n -= v
		} else {
			n += v
		}
	}
	if n < 1 || n > 3999 || toRoman(n) != s {
		return 0, false
	}
	return n, true
}

func toRoman(n int) string {
	var b [16]byte
	out := b[:0]
	for _, p := range [...]struct {
		v int
		s string
	}{{1000, "M"}, {900, "CM"}, {500, "D"}, {400, "CD"}, {100, "C"}, {90, "XC"}, {50, "L"},
		{40, "XL"}, {10, "X"}, {9, "IX"}, {5, "V"}, {4, "IV"}, {1, "I"}} {
		for n >= p.v {
			out = append(out, p.s...)
			n -= p.v
		}
	}
	return string(out)
}

// roman reports whether t[k:] starts with a Roman numeral that Clauses
// writes in digits after a section-like word, and returns its end and value.
// strong is true after an abbreviation or a capitalized word: only there
// does a lone I, V or X count. later is true for the numerals of a list
// after the first, where a lone I before a lower-case word is the pronoun
// ("Section 7 and I agree").
func roman(t string, k int, strong, later bool) (end, n int, ok bool) {
	end = k
	for end < len(t) && ('a' <= t[end] && t[end] <= 'z' || 'A' <= t[end] && t[end] <= 'Z') {
		end++
	}
	if end == k || end-k > 15 || !boundaryAt(t, end) {
		return 0, 0, false
	}
	tok := t[k:end]
	var upper [15]byte
	switch {
	case isRomanUpper(tok):
		switch {
		case len(tok) > 1:
		case strings.Contains("LCDM", tok), !strong: // "Appendix C", "the section I read", "rule X"
			return 0, 0, false
		case tok == "I" && later && end+1 < len(t) && t[end] == ' ' && 'a' <= t[end+1] && t[end+1] <= 'z':
			return 0, 0, false
		}
	case len(tok) >= 2 && strings.Trim(tok, "ivx") == "":
		for i := 0; i < len(tok); i++ {
			upper[i] = tok[i] - ('a' - 'A')
		}
		tok = string(upper[:len(tok)])
	default:
		return 0, 0, false
	}
	n, ok = parseRoman(tok)
	return end, n, ok
}

// boundaryAt reports whether no letter, digit or mark starts at t[i:].
func boundaryAt(t string, i int) bool {
	if i >= len(t) {
		return true
	}
	if t[i] < 0x80 {
		return !isAlnum(t[i])
	}
	r, _ := utf8.DecodeRuneInString(t[i:])
	return !isWordRune(r)
}

// numerals rewrites the numerals after a section-like word: the one at t[k:]
// and the ones joined to it by "-", ",", "and", "or", "to" and "through"
// ("Sections VII to IX"). It returns where to go on, or k if no numeral
// starts at k.
func numerals(e *editor, t string, k int, strong bool) int {
	first := true
	for {
		if k < len(t) && '0' <= t[k] && t[k] <= '9' {
			for k < len(t) && ('0' <= t[k] && t[k] <= '9' || t[k] == '.' && k+1 < len(t) && '0' <= t[k+1] && t[k+1] <= '9') {
				k++
			}
		} else if end, n, ok := roman(t, k, strong, !first); ok {
			var buf [8]byte
			e.replaceBytes(k, end, strconv.AppendInt(buf[:0], int64(n), 10))
			k = end
		} else {
			return k
		}
		first = false
		sep := 0
		for _, s := range [...]string{"-", ", ", ",", " and ", " or ", " to ", " through "} {
			if strings.HasPrefix(t[k:], s) {
				sep = len(s)
				break
			}
		}
		if sep == 0 {
			return k
		}
		next := k + sep
		if next < len(t) && '0' <= t[next] && t[next] <= '9' {
			k = next
			continue
		}
		if _, _, ok := roman(t, next, strong, true); !ok {
			return k
		}
		k = next
	}
}

// startsNumeral reports whether a numeral that Clauses reads after an
// abbreviation starts at t[k:].
func startsNumeral(t string, k int) bool {
	if k < len(t) && '0' <= t[k] && t[k] <= '9' {
		return true
	}
	_, _, ok := roman(t, k, true, false)
	return ok
}

// symbolReference spells out § and ¶ (doubled or not) before a numeral.
func symbolReference(e *editor, t string, i int, prevWord bool) int {
	j := i + 2
	if strings.HasPrefix(t[j:], t[i:i+2]) {
		j += 2
	}
	k := skipSpace(t, j)
	if !startsNumeral(t, k) {
		return j
	}
	word := abbreviations[t[i:j]].word
	if prevWord {
		word = " " + word
	}
	e.replace(i, k, word+" ")
	return numerals(e, t, k, true)
}

// wordReference handles the ASCII word at t[i:]: an abbreviation before a
// numeral, a section-like word (respelled if written with look-alikes), and
// the Roman numerals after them.
func wordReference(e *editor, t string, i int) int {
	j := i
	letters := true
	for j < len(t) && (isAlnum(t[j]) || t[j] == '|' && j > i && j+1 < len(t) && isAlnum(t[j+1])) {
		letters = letters && t[j] >= 'A' && t[j] != '|'
		j++
	}
	if !boundaryAt(t, j) || j-i > 16 {
		return j
	}
	tok := t[i:j]
	if vocabShape[lower(tok[0])]&(1<<len(tok)) == 0 {
		return j
	}
	var lowBuf [16]byte
	low := lowBuf[:len(tok)]
	for n := 0; n < len(tok); n++ {
		low[n] = lower(tok[n])
	}
	if ab, ok := abbreviations[string(low)]; ok && letters {
		k := j
		if k < len(t) && t[k] == '.' {
			k++
		} else if ab.needDot {
			return j
		}
		k = skipSpace(t, k)
		if !startsNumeral(t, k) {
			return j
		}
		var buf [24]byte
		e.replaceBytes(i, k, append(appendCase(buf[:0], tok, ab.word), ' '))
		return numerals(e, t, k, true)
	}
	if !sectionWords[string(low)] {
		if len(low) < 5 {
			return j
		}
		looseKey(low)
		w, ok := looseWords[string(low)]
		if !ok {
			return j
		}
		var buf [24]byte
		e.replaceBytes(i, j, appendCase(buf[:0], tok, w))
	}
	if j+1 < len(t) && t[j] == ' ' {
		strong := 'A' <= tok[0] && tok[0] <= 'Z'
		if end := numerals(e, t, j+1, strong); end > j+1 {
			return end
		}
	}
	return j
}

func lower(c byte) byte {
	if 'A' <= c && c <= 'Z' {
		return c + 'a' - 'A'
	}
	return c
}

// appendCase appends word (lower case) in the case of tok: upper case if
// every letter of tok is, capitalized if its first character is, lower
// case otherwise.
func appendCase(dst []byte, tok, word string) []byte {
	upper, letters := true, 0
	for i := 0; i < len(tok); i++ {
		if 'a' <= tok[i] && tok[i] <= 'z' {
			upper = false
		}
		if 'A' <= tok[i] && tok[i] <= 'Z' || 'a' <= tok[i] && tok[i] <= 'z' {
			letters++
		}
	}
	for i := 0; i < len(word); i++ {
		c := word[i]
		if upper && letters > 1 || i == 0 && 'A' <= tok[0] && tok[0] <= 'Z' {
			c -= 'a' - 'A'
		}
		dst = append(dst, c)
	}
	return dst
}

// looseKey respells, in place, a lower-case ASCII word with one letter for
// each class of look-alikes: i, l, 1 and | as l, 0 as o. A capital I is i
// once lower-cased.
func looseKey(low []byte) {
	for n, c := range low {
		switch c {
		case 'i', '1', '|':
			low[n] = 'l'
		case '0':
			low[n] = 'o'
		}
	}
}

// vocabShape holds, for each first letter in lower case, the lengths (one
// bit each) of the abbreviations and section-like words that start with it,
// and of the tokens whose looseKey may be one: a word of any other shape is
// none of them, and costs no map look-up.
var vocabShape = func() (shape [256]uint32) {
	for w := range abbreviations {
		shape[w[0]] |= 1 << len(w)
	}
	for w := range sectionWords {
		shape[w[0]] |= 1 << len(w)
	}
	for key := range looseWords {
		firsts := key[:1]
		switch key[0] {
		case 'l':
			firsts = "il1"
		case 'o':
			firsts = "o0"
		}
		for i := 0; i < len(firsts); i++ {
			shape[firsts[i]] |= 1 << len(key)
		}
	}
	return shape
}()

// looseWords maps the looseKey of each section-like word of five letters or
// more to the word.
var looseWords = func() map[string]string {
	m := map[string]string{}
	for w := range sectionWords {
		if len(w) >= 5 {
			key := []byte(w)
			looseKey(key)
			m[string(key)] = w
		}
	}
	return m
}()
