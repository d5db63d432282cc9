package trace

import (
	"strings"
	"testing"
	"unicode"
)

// estimateTokensByRune is what EstimateTokens must return: every rune
// classified, one at a time.
func estimateTokensByRune(s string) int {
	var latin, cjk int
	for _, r := range s {
		switch {
		case r < 0x80:
			latin++
		case r >= 0x4E00 && r <= 0x9FFF:
			cjk++
		case unicode.In(r, unicode.Han, unicode.Hiragana, unicode.Katakana, unicode.Hangul):
			cjk++
		default:
			latin += 2
		}
	}
	return (latin+3)/4 + cjk
}

func FuzzEstimateTokens(f *testing.F) {
	for _, s := range []string{"", "Where is my order A1042?", "订单 A1042 已发货，预计明天到。", "\xff\xfeabcdefgh", strings.Repeat("x", 17) + "é" + "こんにちは", "привет мир, 12345678"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		if got, want := EstimateTokens(s), estimateTokensByRune(s); got != want {
			t.Errorf("EstimateTokens(%q) = %d; rune by rune, %d", s, got, want)
		}
	})
}

// BenchmarkEstimateTokens is the estimate of a 2 KB tool result, in
// English and in Chinese, and of Chinese prose, against classifying every rune ("byrune").
func BenchmarkEstimateTokens(b *testing.B) {
	for _, c := range []struct{ name, text string }{
		{"en", strings.Repeat(`{"order_id":"A1042","status":"shipped","note":"left at the door"},`, 32)},
		{"zh", strings.Repeat(`{"订单":"A1042","状态":"已发货","备注":"放在门口"},`, 32)},
		{"zhprose", strings.Repeat("您的订单已经发货，预计明天下午送到，请留意查收。", 48)},
	} {
		for _, f := range []struct {
			name string
			fn   func(string) int
		}{{"", EstimateTokens}, {"byrune", estimateTokensByRune}} {
			b.Run(c.name+f.name, func(b *testing.B) {
				b.SetBytes(int64(len(c.text)))
				for b.Loop() {
					f.fn(c.text)
				}
			})
		}
	}
}
