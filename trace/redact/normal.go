package redact

import (
	"strings"
	"unicode/utf8"

	"github.com/agentguard/agentguard/trace/textnorm"
)

// The patterns read ASCII digits, the ASCII at sign and ASCII separators.
// Personal data is also written with full-width digits (１３８…), the
// full-width at sign (＠), no-break and ideographic spaces, en dashes,
// zero-width characters between digits, and, in JSON, with \u escapes
// (ann\u0040example.com). normalize maps such text to the form the
// patterns read, keeping for every byte where it came from, so that the
// masks replace what was written and the rest is left as it was.

// folds maps each rune of the ranges that matter to the patterns to its
// normal form under textnorm.Fold, when that differs: Latin-1 spaces and
// the soft hyphen, general punctuation (spaces, dashes, invisible
// characters), the ideographic space, small and full-width forms (digits,
// letters, ＠, ．, －, （）, ＋), the byte order mark and mathematical
// digits. Only folds into what the patterns read are kept (patternChars,
// or nothing for an invisible character): a full-width comma stays, so
// Chinese prose takes the plain path. It is built once, from textnorm
// itself, so the two never disagree.
var folds = func() map[rune]string {
	m := map[rune]string{}
	for _, rg := range foldRanges {
		for r := rg[0]; r <= rg[1]; r++ {
			if f := textnorm.Fold(string(r)); f != string(r) && strings.Trim(f, patternChars) == "" {
				m[r] = f
			}
		}
	}
	return m
}()

// patternChars are the characters the patterns read.
const patternChars = "0123456789abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ@.-+()_% "

var foldRanges = [][2]rune{
	{0x00A0, 0x00AD},
	{0x2000, 0x206F},
	{0x2212, 0x2212},
	{0x3000, 0x3000},
	{0xFE50, 0xFE6F},
	{0xFEFF, 0xFEFF},
	{0xFF00, 0xFFEF},
	{0x1D7CE, 0x1D7FF},
}

// mayFold marks the bytes that may start something normalize changes: a
// backslash, and the lead bytes of the UTF-8 encodings of foldRanges.
// Other bytes, CJK ideographs' lead bytes among them, are skipped unread.
var mayFold = func() (t [256]bool) {
	t['\\'] = true
	for _, rg := range foldRanges {
		for r := rg[0]; r <= rg[1]; r++ {
			var b [4]byte
			utf8.EncodeRune(b[:], r)
			t[b[0]] = true
		}
	}
	return t
}()

// fold returns the normal form of r, and whether it differs from r.
func fold(r rune) (string, bool) {
	if r < 0xA0 || 0x3000 < r && r < 0xFE50 { // ASCII, and the CJK blocks
		return "", false
	}
	for _, rg := range foldRanges {
		if rg[0] <= r && r <= rg[1] {
			f, ok := folds[r]
			return f, ok
		}
	}
	return "", false
}

// normalize returns the form of s the patterns are matched on, and for
// each of its bytes the offset in s of the character it came from, plus
// len(s) at the end. ok is false, and nothing is built, when s is already
// in that form.
func normalize(s string) (n string, off []int32, ok bool) {
	first := -1
	for i := 0; i < len(s); i++ {
		if !mayFold[s[i]] {
			continue
		}
		if s[i] == '\\' {
			if _, w := unescape(s[i:]); w > 0 {
				first = i
				break
			}
			continue
		}
		if r, _ := utf8.DecodeRuneInString(s[i:]); r != utf8.RuneError {
			if _, ok := fold(r); ok {
				first = i
				break
			}
		}
	}
	if first < 0 {
		return s, nil, false
	}
	var b strings.Builder
	b.Grow(len(s))
	off = make([]int32, 0, len(s)+1)
	emit := func(text string, at int) {
		b.WriteString(text)
		for range len(text) {
			off = append(off, int32(at))
		}
	}
	for k := range first {
		off = append(off, int32(k))
	}
	b.WriteString(s[:first])
	for i := first; i < len(s); {
		c := s[i]
		if c == '\\' {
			if r, w := unescape(s[i:]); w > 0 {
				if f, ok := fold(r); ok {
					emit(f, i)
				} else {
					emit(string(r), i)
				}
				i += w
				continue
			}
		}
		if c < utf8.RuneSelf {
			b.WriteByte(c)
			off = append(off, int32(i))
			i++
			continue
		}
		r, w := utf8.DecodeRuneInString(s[i:])
		if f, ok := fold(r); ok {
			emit(f, i)
		} else {
			emit(s[i:i+w], i)
		}
		i += w
	}
	off = append(off, int32(len(s)))
	return b.String(), off, true
}

// unescape decodes the JSON escape \uXXXX (or a surrogate pair of them) at
// the start of s, returning the rune and the escape's length, or 0 when
// there is none to decode. A quotation mark, a backslash or a control
// character stays escaped: decoding it could change what a JSON document
// says.
func unescape(s string) (rune, int) {
	r, ok := hex4(s)
	if !ok {
		return 0, 0
	}
	w := 6
	switch {
	case 0xD800 <= r && r < 0xDC00:
		lo, ok := hex4(s[6:])
		if !ok || lo < 0xDC00 || lo > 0xDFFF {
			return 0, 0
		}
		r, w = 0x10000+(r-0xD800)<<10+(lo-0xDC00), 12
	case 0xDC00 <= r && r <= 0xDFFF, r < 0x20, r == '"', r == '\\', r == 0x7F:
		return 0, 0
	}
	return r, w
}

// hex4 reads `\uXXXX` at the start of s.
func hex4(s string) (rune, bool) {
	if len(s) < 6 || s[0] != '\\' || s[1] != 'u' {
		return 0, false
	}
	var r rune
	for _, c := range []byte(s[2:6]) {
		switch {
		case '0' <= c && c <= '9':
			r = r<<4 | rune(c-'0')
		case 'a' <= c|0x20 && c|0x20 <= 'f':
			r = r<<4 | rune(c|0x20-'a'+10)
		default:
			return 0, false
		}
	}
	return r, true
}
