package lexicon

import (
	"slices"
	"strings"
)

// fewWords is up to how many words, when case matters, a search for each
// costs less than a WordSet's one pass over the text: strings.Contains
// skips to a word's first byte with vector instructions (20 ns for "第" in
// 1 KB of English, where In costs 580), and lowering nothing, it needs no
// copy of the text.
const fewWords = 3

// A WordSet reports whether a text holds one of a set of words, in one
// pass over the text whatever the number of words. Searching for each
// word in turn costs a pass per word: the forty words an answer that
// recommends something holds cost forty passes over every answer, most
// of which hold none. A WordSet looks at each pair of bytes of the text
// once and compares words only where one of them begins with that pair.
// A WordSet never changes after NewWordSet and is safe for concurrent use.
type WordSet struct {
	fold bool
	// byWord is set when the words are few and case matters: they are
	// searched for one by one.
	byWord bool
	words  []string
	// slot is, per byte, 1 + the index in pairs and starts of the words
	// that begin with it, or 0 when none does; with fold, an upper-case
	// ASCII letter has its lower case's. pairs and single hold both cases
	// too, so that In lowers nothing.
	slot [256]uint8
	// pairs is, per first byte, the set of second bytes words go on with.
	pairs [][4]uint64
	// starts is, per first byte, the words that begin with it.
	starts  [][]string
	single  [256]bool // words of one byte
	singles bool      // there is one
	empty   bool      // the empty word, which every text holds
}

// NewWordSet returns the set of words. With foldASCII, a word is found
// whatever the case of its ASCII letters, in the text and in the word;
// other letters are compared as they are.
func NewWordSet(words []string, foldASCII bool) *WordSet {
	s := &WordSet{fold: foldASCII}
	if !foldASCII && len(words) <= fewWords {
		s.byWord, s.words = true, slices.Clone(words)
		return s
	}
	for _, w := range words {
		if foldASCII {
			w = lowerASCIIString(w)
		}
		switch len(w) {
		case 0:
			s.empty = true
			continue
		case 1:
			for _, c := range cases(w[0], foldASCII) {
				s.single[c] = true
			}
			s.singles = true
			continue
		}
		if s.slot[w[0]] == 0 {
			s.pairs = append(s.pairs, [4]uint64{})
			s.starts = append(s.starts, nil)
			s.slot[w[0]] = uint8(len(s.pairs))
			if foldASCII && w[0] >= 'a' && w[0] <= 'z' {
				s.slot[w[0]-'a'+'A'] = s.slot[w[0]]
			}
		}
		i := s.slot[w[0]] - 1
		for _, c := range cases(w[1], foldASCII) {
			s.pairs[i][c>>6] |= 1 << (c & 63)
		}
		s.starts[i] = append(s.starts[i], w)
	}
	return s
}

// In reports whether text holds one of the words.
func (s *WordSet) In(text string) bool {
	switch {
	case s.byWord:
		return slices.ContainsFunc(s.words, func(w string) bool { return strings.Contains(text, w) })
	case s.empty:
		return true
	case len(s.starts) == 0 && !s.singles:
		return false
	}
	for i := 0; i < len(text); i++ {
		c := text[i]
		if s.single[c] {
			return true
		}
		k := s.slot[c]
		if k == 0 || i+1 == len(text) {
			continue
		}
		if c = text[i+1]; s.pairs[k-1][c>>6]&(1<<(c&63)) == 0 {
			continue
		}
		for _, w := range s.starts[k-1] {
			if len(text)-i >= len(w) && hasPrefixASCII(text[i:], w, s.fold) {
				return true
			}
		}
	}
	return false
}

// cases is c, and its upper case when fold is set and c is a lower-case
// ASCII letter.
func cases(c byte, fold bool) []byte {
	if fold && c >= 'a' && c <= 'z' {
		return []byte{c, c - 'a' + 'A'}
	}
	return []byte{c}
}

// lowerASCIIString is s with its ASCII letters lowered.
func lowerASCIIString(s string) string {
	for i := 0; i < len(s); i++ {
		if c := s[i]; c >= 'A' && c <= 'Z' {
			return string(lowerASCII(make([]byte, 0, len(s)), s))
		}
	}
	return s
}
