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

// cues finds the words of lists in s, leftmost first; where matches
// overlap, the longest wins, whatever list it is in.
func cues(s string, lists ...[]string) []cue {
	var all []cue
	for l, words := range lists {
		for _, w := range words {
			eachWord(s, w, func(start, end int) bool {
				all = append(all, cue{start, end, l})
				return true
			})
		}
	}
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
