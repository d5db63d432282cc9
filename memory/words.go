package memory

import (
	"slices"
	"strings"
	"unicode"
	"unicode/utf8"
)

// This file finds the words of a lexicon (lexicon.Memory) in text: in
// lower case, whole words where a word starts or ends with an ASCII letter
// or digit, a final "*" matching the rest of a word.

// lowerASCII lowers the ASCII letters of s only, so that byte offsets into
// the result are offsets into s.
func lowerASCII(s string) string {
	for i := 0; i < len(s); i++ {
		if c := s[i]; 'A' <= c && c <= 'Z' {
			b := []byte(s)
			for j := i; j < len(b); j++ {
				if c := b[j]; 'A' <= c && c <= 'Z' {
					b[j] = c + 'a' - 'A'
				}
			}
			return string(b)
		}
	}
	return s
}

// apostrophes are the quotes that stand for "'" in "don’t".
var apostrophes = strings.NewReplacer("’", "'", "‘", "'", "＇", "'")

func isAlnum(c byte) bool {
	return '0' <= c && c <= '9' || 'a' <= c && c <= 'z' || 'A' <= c && c <= 'Z'
}

// isWordByte reports whether c continues an ASCII word: a letter, a digit
// or an apostrophe ("can" is not a word of "can't").
func isWordByte(c byte) bool { return isAlnum(c) || c == '\'' }

// eachWord calls f with the byte span of every occurrence of word w in s,
// which must be in lower case, until f returns false.
func eachWord(s, w string, f func(start, end int) bool) {
	prefix := strings.HasSuffix(w, "*")
	w = strings.TrimSuffix(w, "*")
	if w == "" {
		return
	}
	left, right := isAlnum(w[0]), !prefix && isAlnum(w[len(w)-1])
	for i := 0; i <= len(s)-len(w); {
		j := strings.Index(s[i:], w)
		if j < 0 {
			return
		}
		start, end := i+j, i+j+len(w)
		i = start + 1
		if left && start > 0 && isWordByte(s[start-1]) {
			continue
		}
		if prefix {
			for end < len(s) && isWordByte(s[end]) {
				end++
			}
		} else if right && end < len(s) && isWordByte(s[end]) {
			continue
		}
		if !f(start, end) {
			return
		}
	}
}

// hasWord reports whether s holds any of words.
func hasWord(s string, words []string) bool {
	for _, w := range words {
		found := false
		eachWord(s, w, func(int, int) bool { found = true; return false })
		if found {
			return true
		}
	}
	return false
}

// cue is a word found in a text: its span and the list it came from.
type cue struct {
	start, end int
	list       int
}

// pickCues sorts the cues of one text, leftmost first, and keeps the
// longest of those that overlap.
func pickCues(all []cue) []cue {
	slices.SortFunc(all, func(a, b cue) int {
		if a.start != b.start {
			return a.start - b.start
		}
		return (b.end - b.start) - (a.end - a.start)
	})
	out := all[:0]
	last := 0
	for _, c := range all {
		if c.start < last {
			if n := len(out); n > 0 && c.end-c.start > out[n-1].end-out[n-1].start && c.start == out[n-1].start {
				out[n-1] = c
				last = c.end
			}
			continue
		}
		out = append(out, c)
		last = c.end
	}
	return out
}

// endsWithWord reports whether s, trimmed of spaces on the right, ends
// with one of words.
func endsWithWord(s string, words []string) bool {
	s = strings.TrimRight(s, " \t")
	for _, w := range words {
		if strings.HasSuffix(s, w) {
			if i := len(s) - len(w); i > 0 && isAlnum(w[0]) && isWordByte(s[i-1]) {
				continue
			}
			return true
		}
	}
	return false
}

// startsWithWord returns the word of words that s starts with, or "".
func startsWithWord(s string, words []string) string {
	for _, w := range words {
		if strings.HasPrefix(s, w) && (len(s) == len(w) || !isAlnum(w[len(w)-1]) || !isWordByte(s[len(w)])) {
			return w
		}
	}
	return ""
}

func isHan(r rune) bool { return unicode.Is(unicode.Han, r) }

// runesBefore returns the rune before byte offset i of s and its size.
func runeBefore(s string, i int) (rune, int) { return utf8.DecodeLastRuneInString(s[:i]) }

// wordIndex finds the words of many lists in a text in one pass, with
// eachWord's rules: where eachWord runs one search per word, the index
// looks up each word of the text once. It narrows the positions a word is
// tried at and nothing else: a word is still matched by eachWord's test
// (wordAt), so both find the same spans.
type wordIndex struct {
	words   []indexedWord
	byToken map[string][]int32 // words that match only where the text's word at the start is this one
	shapes  [256]uint64        // per first byte, the lengths of byToken's keys (bit min(n, 63)): most words of a text need no lookup
	byAlnum [256][]int32       // other words that start with an ASCII letter or digit, by first byte: tried at every word start
	byByte  [256][]int32       // words that start with anything else, by first byte: tried at every byte
	byLead3 [16][64][]int32    // of those, words that start with a three-byte rune (most Han), by its first two bytes
	lists   int
}

type indexedWord struct {
	stem                string
	list, pos           int // the list it is in and its place there
	prefix, left, right bool
}

// newWordIndex indexes lists; a match's list is its index in lists.
func newWordIndex(lists ...[]string) *wordIndex {
	x := &wordIndex{byToken: map[string][]int32{}, lists: len(lists)}
	for l, words := range lists {
		for pos, w := range words {
			prefix := strings.HasSuffix(w, "*")
			stem := strings.TrimSuffix(w, "*")
			if stem == "" {
				continue
			}
			iw := indexedWord{stem: stem, list: l, pos: pos, prefix: prefix,
				left: isAlnum(stem[0]), right: !prefix && isAlnum(stem[len(stem)-1])}
			k := int32(len(x.words))
			x.words = append(x.words, iw)
			if !iw.left {
				if c0, c1, ok := lead3(stem, 0); ok {
					x.byLead3[c0][c1] = append(x.byLead3[c0][c1], k)
				} else {
					x.byByte[stem[0]] = append(x.byByte[stem[0]], k)
				}
				continue
			}
			t := 1
			for t < len(stem) && isWordByte(stem[t]) {
				t++
			}
			// The text's word at a match is the stem's first word when
			// something that ends a word follows it in the stem, or when
			// the stem is one whole word that must end there.
			if t < len(stem) || iw.right {
				x.byToken[stem[:t]] = append(x.byToken[stem[:t]], k)
				x.shapes[stem[0]] |= 1 << min(t, 63)
			} else {
				x.byAlnum[stem[0]] = append(x.byAlnum[stem[0]], k)
			}
		}
	}
	return x
}

// lead3 reports whether s holds, at byte p, the first two bytes of a
// three-byte UTF-8 sequence, and returns their payload bits: a byLead3
// bucket. A Chinese text's every character starts one, and one lead byte
// starts thousands of characters, so a bucket holds a few words where the
// lead byte's list holds dozens.
func lead3(s string, p int) (c0, c1 byte, ok bool) {
	if p+1 >= len(s) || s[p]&0xF0 != 0xE0 || s[p+1]&0xC0 != 0x80 {
		return 0, 0, false
	}
	return s[p] & 0x0F, s[p+1] & 0x3F, true
}

// wordAt reports whether w occurs in s at byte p, by eachWord's rules, and
// where the match ends.
func (w *indexedWord) wordAt(s string, p int) (int, bool) {
	if !strings.HasPrefix(s[p:], w.stem) || w.left && p > 0 && isWordByte(s[p-1]) {
		return 0, false
	}
	end := p + len(w.stem)
	if w.prefix {
		for end < len(s) && isWordByte(s[end]) {
			end++
		}
	} else if w.right && end < len(s) && isWordByte(s[end]) {
		return 0, false
	}
	return end, true
}

// wordMatch is one match of an indexed word.
type wordMatch struct {
	word       int32
	start, end int
}

// wordHits are the matches of an index's words in one text.
type wordHits struct {
	x       *wordIndex
	matches []wordMatch
	lists   []bool // lists[l]: a word of list l matched
}

// find returns every match of x's words in s.
func (x *wordIndex) find(s string) wordHits {
	h := wordHits{x: x}
	try := func(ks []int32, p int) {
		for _, k := range ks {
			if end, ok := x.words[k].wordAt(s, p); ok {
				if h.lists == nil {
					h.lists = make([]bool, x.lists)
				}
				h.matches = append(h.matches, wordMatch{k, p, end})
				h.lists[x.words[k].list] = true
			}
		}
	}
	for p := 0; p < len(s); p++ {
		c := s[p]
		if ks := x.byByte[c]; len(ks) > 0 {
			try(ks, p)
		}
		if c0, c1, ok := lead3(s, p); ok {
			if ks := x.byLead3[c0][c1]; len(ks) > 0 {
				try(ks, p)
			}
			continue
		}
		if !isAlnum(c) || p > 0 && isWordByte(s[p-1]) {
			continue
		}
		q := p + 1
		for q < len(s) && isWordByte(s[q]) {
			q++
		}
		if x.shapes[c]&(1<<min(q-p, 63)) != 0 {
			if ks := x.byToken[s[p:q]]; len(ks) > 0 {
				try(ks, p)
			}
		}
		if ks := x.byAlnum[c]; len(ks) > 0 {
			try(ks, p)
		}
	}
	return h
}

// has reports whether a word of any of lists matched: hasWord.
func (h wordHits) has(lists ...int) bool {
	for _, l := range lists {
		if h.lists != nil && h.lists[l] {
			return true
		}
	}
	return false
}

// cues returns the words of lists found in the text, leftmost first;
// where matches overlap, the longest wins, whatever list it is in. A cue's
// list is its index in lists.
func (h wordHits) cues(lists ...int) []cue {
	if !h.has(lists...) {
		return nil
	}
	type keyed struct {
		c         cue
		list, pos int
	}
	var all []keyed
	for _, m := range h.matches {
		w := &h.x.words[m.word]
		if i := slices.Index(lists, w.list); i >= 0 {
			all = append(all, keyed{cue{m.start, m.end, i}, i, w.pos})
		}
	}
	// pickCues' sort is not stable: give it the matches in the order one
	// search per word, list after list, finds them (cuesByWord in the
	// tests), so that ties fall the same way.
	slices.SortFunc(all, func(a, b keyed) int {
		if a.list != b.list {
			return a.list - b.list
		}
		if a.pos != b.pos {
			return a.pos - b.pos
		}
		return a.c.start - b.c.start
	})
	cs := make([]cue, len(all))
	for i, k := range all {
		cs[i] = k.c
	}
	return pickCues(cs)
}
