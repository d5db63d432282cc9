package textnorm

import (
	"math/bits"
	"slices"
	"strings"
	"unicode"
	"unicode/utf8"

	"golang.org/x/text/unicode/norm"
)

//go:generate go run gen_confusables.go

// Fold returns s in the normal form that rules match against. In order, it
//
//   - replaces each invalid UTF-8 byte with U+FFFD;
//   - removes invisible characters: zero-width spaces and joiners, the word
//     joiner, the byte order mark, the soft hyphen, bidirectional controls
//     and every other format character (category Cf), variation selectors
//     and the other default-ignorable code points, and control characters
//     other than tab and line breaks; tag characters (U+E0020 to U+E007E,
//     the "ASCII smuggling" block) become the ASCII characters they shadow,
//     since models read them (the flag of England reads "🏴gbeng");
//   - applies Unicode NFKC, which turns full-width letters, digits and
//     punctuation (Ａ, ７, ＠, ［, （) and mathematical, circled and
//     superscript forms into their plain counterparts, ligatures into
//     letters, and most odd spaces (no-break, ideographic, en, em, thin)
//     into U+0020;
//   - turns every remaining space (category Zs, the tab, the Braille blank
//     U+2800) into one ASCII space and collapses runs of spaces into one,
//     and turns "\r\n", "\r", "\v", "\f", U+0085, U+2028 and U+2029 into
//     "\n" (line breaks are kept, not collapsed);
//   - turns dashes and minus signs (‐ ‑ ‒ – — ― − ⸺ ⸻) into "-", the
//     brackets 【】〔〕〖〗〘〙〚〛 into "[" and "]", the angle brackets
//     〈〉《》⟨⟩ into "<" and ">", the quotation marks “ ” „ ‟ « » 「 」 『 』
//     〝 〞 〟 into '"' and ‘ ’ ‚ ‛ ‹ › into "'";
//   - folds letters that look like an ASCII letter (the table of
//     confusables_table.go, taken from Unicode's confusables.txt) to that
//     letter, in words where that changes no genuine word: a Latin-script
//     look-alike (ı ɑ ɡ ᴄ) always folds, since its word stays Latin; a
//     Cyrillic, Greek, Armenian, Cherokee or other look-alike folds only
//     when every letter of its word is Latin or a look-alike and the word
//     has a Latin letter, or mixes look-alikes of two scripts. "сlause" with
//     a Cyrillic с becomes "clause"; "Москва", "сор" and "Αθήνα" stay as
//     they are. A word is a run of letters, marks and digits; Chinese,
//     Japanese and Korean characters end a word, so a Latin word inside a
//     Chinese sentence is judged on its own.
//
// Fold keeps case, leaves ASCII letters, digits and punctuation as they are
// (an ASCII word spelled with look-alike ASCII letters, such as "cIause"
// with a capital I, is no business of Fold's), and reads no numerals:
// "第七条" and "Section VII" stay as they are ([Clauses] does both). The
// result is valid UTF-8 in NFKC, has no two spaces in a row, and is stable:
// Fold(Fold(s)) == Fold(s).
//
// A string of printable ASCII and line feeds with no two spaces in a row,
// and any other string that is already in this form, is returned as it is
// without allocating. Fold is safe for concurrent use and never panics.
func Fold(s string) string {
	if plainASCII(s) {
		return s
	}
	return fold(s)
}

// fold is Fold without its shortcut for plain ASCII.
func fold(s string) string {
	t := norm.NFKC.String(prefilter(s))
	// Mapping ASCII in place of a letter or bracket may leave a base and a
	// combining mark that NFKC composes ("с\u0301" → "c\u0301" → "ć"), so
	// normalize again until nothing moves; composition creates nothing that
	// postmap changes, so the second round is the last in practice.
	for range 3 {
		u, changed, renorm := postmap(t)
		if !changed {
			return t
		}
		if !renorm {
			return u
		}
		t = norm.NFKC.String(u)
	}
	return t
}

// plainASCII reports whether s is printable ASCII and line feeds with no
// two spaces in a row: the strings that Fold returns unchanged without
// looking further (a line feed is kept, and ends a run of spaces).
func plainASCII(s string) bool {
	space := false
	for i := 0; i < len(s); i++ {
		c := s[i]
		if c < 0x20 && c != '\n' || c > 0x7e || c == ' ' && space {
			return false
		}
		space = c == ' '
	}
	return true
}

// editor rewrites a string lazily: until the first edit nothing is copied,
// and a string with no edits comes back as it is.
type editor struct {
	s       string
	b       strings.Builder
	done    int // s[:done] has been written to b
	changed bool
}

func (e *editor) start(i int) {
	if !e.changed {
		e.changed = true
		e.b.Grow(len(e.s) + 16)
	}
	e.b.WriteString(e.s[e.done:i])
}

// replace writes with in place of s[i:j].
func (e *editor) replace(i, j int, with string) {
	e.start(i)
	e.b.WriteString(with)
	e.done = j
}

// replaceBytes writes with in place of s[i:j].
func (e *editor) replaceBytes(i, j int, with []byte) {
	e.start(i)
	e.b.Write(with)
	e.done = j
}

// replaceByte writes c in place of s[i:j].
func (e *editor) replaceByte(i, j int, c byte) {
	e.start(i)
	e.b.WriteByte(c)
	e.done = j
}

// result returns the edited string and whether it differs from s.
func (e *editor) result() (string, bool) {
	if !e.changed {
		return e.s, false
	}
	e.b.WriteString(e.s[e.done:])
	return e.b.String(), true
}

// prefilter repairs invalid UTF-8, removes invisible characters and decodes
// tag characters, before NFKC sees the text (so that "e\u200b\u0301"
// composes).
func prefilter(s string) string {
	e := editor{s: s}
	for i := 0; i < len(s); {
		c := s[i]
		if c < 0x80 {
			if c < 0x20 && !isSpaceOrBreak(c) || c == 0x7f {
				e.replace(i, i+1, "")
			}
			i++
			continue
		}
		r, size := utf8.DecodeRuneInString(s[i:])
		switch {
		case r == utf8.RuneError && size == 1:
			e.replace(i, i+1, "\uFFFD")
		case 0xE0020 <= r && r <= 0xE007E:
			e.replaceByte(i, i+size, byte(r-0xE0000))
		case isInvisible(r):
			e.replace(i, i+size, "")
		}
		i += size
	}
	out, _ := e.result()
	return out
}

func isSpaceOrBreak(c byte) bool {
	return c == '\t' || c == '\n' || c == '\v' || c == '\f' || c == '\r'
}

// isInvisible reports whether r is removed by Fold: a format character
// (Cf), a default-ignorable code point or a variation selector, or a C1
// control other than U+0085 (a line break).
func isInvisible(r rune) bool {
	if r < 0x10000 {
		return invisibleBMP[r>>6]&(1<<(r&63)) != 0
	}
	return unicode.Is(unicode.Cf, r) || unicode.Is(unicode.Other_Default_Ignorable_Code_Point, r) ||
		unicode.Is(unicode.Variation_Selector, r)
}

// invisibleBMP is the set of isInvisible below U+10000, one bit a code
// point, built from the standard library's Unicode tables.
var invisibleBMP = func() *[1024]uint64 {
	var set [1024]uint64
	add := func(r rune) { set[r>>6] |= 1 << (r & 63) }
	for _, t := range []*unicode.RangeTable{unicode.Cf, unicode.Other_Default_Ignorable_Code_Point, unicode.Variation_Selector} {
		for _, rg := range t.R16 {
			for r := rune(rg.Lo); r <= rune(rg.Hi); r += rune(rg.Stride) {
				add(r)
			}
		}
	}
	for r := rune(0x80); r < 0xA0; r++ {
		if r != 0x85 {
			add(r)
		}
	}
	return &set
}()

// punct returns the ASCII character that Fold writes, after NFKC, in place
// of the punctuation r: dashes, brackets, quotation marks, line separators
// and the Braille blank.
func punct(r rune) (byte, bool) {
	switch r {
	case '\u2010', '\u2011', '\u2012', '\u2013', '\u2014', '\u2015', '\u2212', '\u2E3A', '\u2E3B':
		return '-', true // dashes and minus signs
	case '【', '〔', '〖', '〘', '〚':
		return '[', true
	case '】', '〕', '〗', '〙', '〛':
		return ']', true
	case '〈', '《', '⟨':
		return '<', true // angle brackets and book-title marks
	case '〉', '》', '⟩':
		return '>', true
	case '“', '”', '„', '‟', '«', '»', '「', '」', '『', '』', '〝', '〞', '〟':
		return '"', true
	case '‘', '’', '‚', '‛', '‹', '›':
		return '\'', true
	case '\u0085', '\u2028', '\u2029':
		return '\n', true // next line, line and paragraph separators
	case '\u2800':
		return ' ', true // the Braille blank, drawn as a space
	}
	return 0, false
}

// isZs reports whether r is a space separator (category Zs, stable since
// Unicode 4.0).
func isZs(r rune) bool {
	return r == ' ' || r == 0xA0 || r == 0x1680 || 0x2000 <= r && r <= 0x200A || r == 0x202F || r == 0x205F || r == 0x3000
}

// postmap applies the per-character rewrites of Fold to NFKC text: spaces,
// line breaks, punctuation and look-alike letters. It reports whether it
// changed anything and whether a change sits before a combining mark, so
// that NFKC may compose differently now.
func postmap(s string) (out string, changed, renorm bool) {
	e := editor{s: s}
	space := false // the last character written was a space
	edited := -1   // the end of the last edit
	for i := 0; i < len(s); {
		if i == edited && i < len(s) && s[i] >= 0x80 {
			r, _ := utf8.DecodeRuneInString(s[i:])
			renorm = renorm || unicode.IsMark(r)
		}
		c := s[i]
		if c < 0x80 && !isAlnum(c) {
			switch {
			case c == ' ' || c == '\t':
				if space {
					e.replace(i, i+1, "")
					edited = i + 1
				} else if c == '\t' {
					e.replaceByte(i, i+1, ' ')
					edited = i + 1
				}
				space = true
				i++
				continue
			case c == '\r':
				if i+1 < len(s) && s[i+1] == '\n' {
					e.replace(i, i+1, "")
				} else {
					e.replaceByte(i, i+1, '\n')
				}
				edited = i + 1
			case c == '\v' || c == '\f':
				e.replaceByte(i, i+1, '\n')
				edited = i + 1
			case c < 0x20 && c != '\n' || c == 0x7f:
				e.replace(i, i+1, "")
				i++
				edited = i
				continue // removed: the space state stays
			}
			space = false
			i++
			continue
		}
		r, size := utf8.DecodeRuneInString(s[i:])
		if isWordRune(r) {
			var marked bool
			i, marked = foldWord(&e, s, i)
			renorm = renorm || marked
			space = false
			continue
		}
		if isCJK(r) && (r < 0x3000 || r > 0x303F) {
			space = false
			i += size
			continue
		}
		p, ok := punct(r)
		switch {
		case ok && p == ' ', isZs(r):
			if space {
				e.replace(i, i+size, "")
			} else {
				e.replaceByte(i, i+size, ' ')
			}
			space = true
			i += size
			edited = i
			continue
		case ok:
			e.replaceByte(i, i+size, p)
			edited = i + size
		case isInvisible(r):
			e.replace(i, i+size, "")
			i += size
			edited = i
			continue
		}
		space = false
		i += size
	}
	out, changed = e.result()
	return out, changed, renorm
}

func isAlnum(c byte) bool {
	return 'a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' || '0' <= c && c <= '9'
}

// isCJK reports whether r is in the blocks of Chinese, Japanese and Korean
// characters and punctuation (U+2E80 to U+9FFF, Hangul syllables,
// compatibility ideographs, the supplementary ideographic planes).
func isCJK(r rune) bool {
	return 0x2E80 <= r && r <= 0x9FFF || 0xAC00 <= r && r <= 0xD7AF || 0xF900 <= r && r <= 0xFAFF || r >= 0x20000 && r <= 0x3FFFF
}

// isWordRune reports whether r belongs to a word for the look-alike rule:
// letters, marks and digits, except Chinese, Japanese and Korean characters.
func isWordRune(r rune) bool {
	if r < 0x80 {
		return r < utf8.RuneSelf && isAlnum(byte(r))
	}
	return !isCJK(r) && (unicode.IsLetter(r) || unicode.IsMark(r) || unicode.IsDigit(r))
}

// confusable is one entry of the generated table.
type confusable struct {
	r      rune
	to     byte  // the ASCII letter r looks like
	script uint8 // index into confScripts; 0 is Latin
}

// lookAlike returns the table entry of r.
func lookAlike(r rune) (confusable, bool) {
	if r < confusables[0].r || r > confusables[len(confusables)-1].r {
		return confusable{}, false
	}
	if r < denseEnd {
		if k := dense[r-denseStart]; k > 0 {
			return confusables[k-1], true
		}
		return confusable{}, false
	}
	i, ok := slices.BinarySearchFunc(confusables[:], r, func(c confusable, r rune) int { return int(c.r - r) })
	if !ok {
		return confusable{}, false
	}
	return confusables[i], true
}

// dense indexes the table for the blocks where most look-alikes are (Latin
// Extended, IPA, Greek, Cyrillic, Armenian): one plus the index of the entry
// of a rune, or 0.
const denseStart, denseEnd = 0x100, 0x590

var dense = func() *[denseEnd - denseStart]int16 {
	var d [denseEnd - denseStart]int16
	for i, c := range confusables {
		if denseStart <= c.r && c.r < denseEnd {
			d[c.r-denseStart] = int16(i + 1)
		}
	}
	return &d
}()

// foldWord folds the look-alike letters of the word starting at s[i] (see
// Fold) and returns the index after the word, and whether a folded letter
// is followed by a combining mark.
func foldWord(e *editor, s string, i int) (int, bool) {
	var (
		ascii   = true // every rune so far is ASCII
		latin   bool   // a Latin letter, ASCII or not
		latinLA bool   // a Latin look-alike
		other   bool   // a letter that is neither Latin nor a look-alike
		scripts uint64 // the scripts of the non-Latin look-alikes
		j       = i
	)
	for j < len(s) {
		c := s[j]
		if c < 0x80 {
			if !isAlnum(c) {
				break
			}
			latin = latin || c > '9'
			j++
			continue
		}
		r, size := utf8.DecodeRuneInString(s[j:])
		if la, ok := lookAlike(r); ok {
			ascii = false
			j += size
			if la.script == 0 {
				latin, latinLA = true, true
			} else {
				scripts |= 1 << la.script
			}
			continue
		}
		if !isWordRune(r) {
			break
		}
		ascii = false
		j += size
		switch {
		case !unicode.IsLetter(r):
		case 0x370 <= r && r < 0x1D00: // Greek to Georgian: no Latin letters
			other = true
		case unicode.Is(unicode.Latin, r):
			latin = true
		default:
			other = true
		}
	}
	if ascii {
		return j, false
	}
	foreign := !other && scripts != 0 && (latin || bits.OnesCount64(scripts) >= 2)
	if !foreign && !latinLA {
		return j, false
	}
	marked := false
	for k := i; k < j; {
		r, size := utf8.DecodeRuneInString(s[k:])
		if la, ok := lookAlike(r); ok && (la.script == 0 || foreign) {
			e.replaceByte(k, k+size, la.to)
			next, _ := utf8.DecodeRuneInString(s[k+size:])
			marked = marked || unicode.IsMark(next)
		}
		k += size
	}
	return j, marked
}
