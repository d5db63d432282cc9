package trace

import (
	"unicode"
	"unicode/utf8"
)

// EstimateTokens approximates how many tokens a text costs a typical BPE
// tokenizer, without loading one: about four bytes per token for Latin text,
// one token per Han, Kana or Hangul character. It is meant for budgets and
// cost estimates, where a few percent of error does not matter; it never
// touches the network, unlike llms.CountTokens.
func EstimateTokens(s string) int {
	var latin, cjk int
	for i := 0; i < len(s); {
		if s[i] < utf8.RuneSelf {
			// A run of ASCII, most of what agents send: past its eighth
			// byte, eight bytes at a time while they last.
			j := i + 1
			for j < len(s) && s[j] < utf8.RuneSelf {
				j++
				if j-i == 8 {
					for j+8 <= len(s) && s[j]|s[j+1]|s[j+2]|s[j+3]|s[j+4]|s[j+5]|s[j+6]|s[j+7] < utf8.RuneSelf {
						j += 8
					}
				}
			}
			latin += j - i
			i = j
			continue
		}
		// Other runes, up to the next ASCII byte.
		from := i
		i = len(s)
		for k, r := range s[from:] {
			if r < utf8.RuneSelf {
				i = from + k
				break
			}
			switch {
			case r >= 0x4E00 && r <= 0x9FFF: // CJK Unified Ideographs: most Chinese text
				cjk++
			case unicode.In(r, unicode.Han, unicode.Hiragana, unicode.Katakana, unicode.Hangul):
				cjk++
			default:
				latin += 2
			}
		}
	}
	return (latin+3)/4 + cjk
}
