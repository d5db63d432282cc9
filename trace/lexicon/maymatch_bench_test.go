package lexicon

import (
	"fmt"
	"reflect"
	"strings"
	"testing"
)

// BenchmarkMayMatch asks every pattern of the default lexicon whether it
// may match a tool result or an answer of about 100 bytes, 1 KB and 10 KB
// that none of them matches much of, in English and in Chinese: what a
// step costs the prefilters that guard the lexicon's patterns.
func BenchmarkMayMatch(b *testing.B) {
	c := Default().Compiled()
	res := patternsOf(reflect.ValueOf(c), nil)
	sentences := map[string]string{
		"en": "The order A1023 was shipped on Monday to the billing address on file, and the invoice total is 120.50. ",
		"zh": "订单 A1023 已于周一发往账单地址，发票金额为 120.50 元，客户确认收到了。",
	}
	for _, lang := range []string{"en", "zh"} {
		for _, size := range []int{100, 1000, 10000} {
			text := strings.Repeat(sentences[lang], max(1, size/len(sentences[lang])))
			b.Run(fmt.Sprintf("%s/bytes=%d", lang, size), func(b *testing.B) {
				for b.Loop() {
					for _, re := range res {
						c.MayMatch(re, text)
					}
				}
			})
		}
	}
}
