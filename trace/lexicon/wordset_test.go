package lexicon

import (
	"fmt"
	"slices"
	"strings"
	"testing"
)

// inEach is WordSet.In by a search for each word: what a WordSet stands
// in for.
func inEach(words []string, text string, foldASCII bool) bool {
	if foldASCII {
		text = lowerASCIIString(text)
	}
	for _, w := range words {
		if foldASCII {
			w = lowerASCIIString(w)
		}
		if strings.Contains(text, w) {
			return true
		}
	}
	return false
}

func TestWordSet(t *testing.T) {
	words := []string{"recommend", "Check out", "推荐", "值得一去", "go to", "?"}
	tests := []struct {
		text       string
		fold, want bool
	}{
		{"I recommend the Harbour View Inn.", false, true},
		{"I RECOMMEND the Harbour View Inn.", false, false},
		{"I RECOMMEND the Harbour View Inn.", true, true},
		{"You should check out Le Petit Bistro", true, true},
		{"You should check out Le Petit Bistro", false, false},
		{"我推荐海景酒店", false, true},
		{"这家店值得一去。", true, true},
		{"这家店值得一看。", true, false},
		{"The order shipped on Monday.", true, false},
		{"Where to go", true, false},
		{"go t", true, false},
		{"Shall we go to", true, true},
		{"Is it open?", false, true},
		{"", true, false},
	}
	for _, tt := range tests {
		s := NewWordSet(words, tt.fold)
		if got := s.In(tt.text); got != tt.want {
			t.Errorf("In(%q), fold %v = %v, want %v", tt.text, tt.fold, got, tt.want)
		}
		if got := inEach(words, tt.text, tt.fold); got != tt.want {
			t.Errorf("inEach(%q), fold %v = %v, want %v: the table is wrong", tt.text, tt.fold, got, tt.want)
		}
	}
	if !NewWordSet([]string{"x", ""}, false).In("abc") {
		t.Error("the empty word is in every text")
	}
	if NewWordSet(nil, true).In("abc") {
		t.Error("an empty set holds no word")
	}
}

// FuzzWordSet holds WordSet.In to a search for each word.
func FuzzWordSet(f *testing.F) {
	f.Add("recommend\nCheck out\n推荐\ngo to", "You should CHECK OUT the 推荐 list", true)
	f.Add("a\nab\nabc", "xxab", false)
	f.Add("值得\n值得一去", "值得一看", false)
	f.Add("\xe6\x8e", "推", false)
	f.Fuzz(func(t *testing.T, list, text string, fold bool) {
		words := strings.Split(list, "\n")
		if got, want := NewWordSet(words, fold).In(text), inEach(words, text, fold); got != want {
			t.Fatalf("In(%q) of %q, fold %v = %v, want %v", text, words, fold, got, want)
		}
	})
}

func ExampleWordSet() {
	cues := NewWordSet([]string{"recommend", "check out", "推荐"}, true)
	fmt.Println(cues.In("I'd RECOMMEND the Harbour View Inn."))
	fmt.Println(cues.In("我推荐海景酒店。"))
	fmt.Println(cues.In("Your order shipped on Monday."))
	// Output:
	// true
	// true
	// false
}

// BenchmarkWordSet looks for the forty words of the default lexicon's
// Recommendations in answers that hold none of them (most answers), of
// about 100 bytes, 1 KB and 10 KB, in English and in Chinese: a WordSet
// against a search for each word.
func BenchmarkWordSet(b *testing.B) {
	rc := Default().Compiled().Recommendations
	words := append(slices.Clone(rc.Before), rc.After...)
	sentences := map[string]string{
		"en": "The order A1023 was shipped on Monday to the billing address on file, and the invoice total is 120.50. ",
		"zh": "订单 A1023 已于周一发往账单地址，发票金额为 120.50 元，客户确认收到了。",
	}
	set := NewWordSet(words, true)
	for _, lang := range []string{"en", "zh"} {
		for _, size := range []int{100, 1000, 10000} {
			text := strings.Repeat(sentences[lang], max(1, size/len(sentences[lang])))
			if set.In(text) || inEach(words, text, true) {
				b.Fatalf("%s text holds a word", lang)
			}
			b.Run(fmt.Sprintf("%s/bytes=%d/each", lang, size), func(b *testing.B) {
				for b.Loop() {
					inEach(words, text, true)
				}
			})
			b.Run(fmt.Sprintf("%s/bytes=%d/set", lang, size), func(b *testing.B) {
				for b.Loop() {
					set.In(text)
				}
			})
		}
	}
}
