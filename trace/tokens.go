package trace

import "unicode"

// EstimateTokens approximates how many tokens a text costs a typical BPE
// tokenizer, without loading one: about four bytes per token for Latin text,
// one token per Han, Kana or Hangul character. It is meant for budgets and
// cost estimates, where a few percent of error does not matter; it never
// touches the network, unlike llms.CountTokens.
func EstimateTokens(s string) int {
	var latin, cjk int
	for _, r := range s {
		switch {
		case r < 0x80:
			latin++
		case r >= 0x4E00 && r <= 0x9FFF: // CJK Unified Ideographs: most Chinese text
			cjk++
		case unicode.In(r, unicode.Han, unicode.Hiragana, unicode.Katakana, unicode.Hangul):
			cjk++
		default:
			latin += 2
		}
	}
	return (latin+3)/4 + cjk
}
