package rulekit

import (
	"slices"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/agentguard/agentguard/trace"
)

func TestWords(t *testing.T) {
	tests := []struct {
		text string
		want []string
	}{
		{"Let's use the gift card.", []string{"gift", "card"}}, // "let", "use", "the" are short
		{"gift_card_5634230", []string{"gift", "card", "5634230"}},
		{"HAT266 on 2024-05-19", []string{"hat266", "2024"}},
		{"用礼品卡付吧", []string{"用礼", "礼品", "品卡", "卡付", "付吧"}},
		{"礼品卡 gift card", []string{"礼品", "品卡", "gift", "card"}},
		{"我", nil},
		{"", nil},
	}
	for _, tt := range tests {
		if got := Words(tt.text); !slices.Equal(got, tt.want) {
			t.Errorf("Words(%q) = %q, want %q", tt.text, got, tt.want)
		}
	}
}

func TestNumbers(t *testing.T) {
	tests := []struct {
		text string
		want []string
	}{
		{"make it the 20th instead of the 19th", []string{"20", "19"}},
		{"2024-05-19, $146", []string{"2024", "05", "19", "146"}},
		{"gift_card_5634230", []string{"5634230"}},
		{"size 9 or 10.5", []string{"10"}},
		{"43码的", []string{"43"}},
		{"no digits", nil},
	}
	for _, tt := range tests {
		if got := Numbers(tt.text); !slices.Equal(got, tt.want) {
			t.Errorf("Numbers(%q) = %q, want %q", tt.text, got, tt.want)
		}
	}
}

func TestHasWord(t *testing.T) {
	tests := []struct {
		text, word string
		want       bool
	}{
		{"gift_card_5634230", "card", true},
		{"Gift Cards", "card", true},
		{"cardholder", "card", false},
		{"请问用礼品卡还是信用卡？", "礼品", true},
		{"请问付款方式？", "礼品", false},
		{"anything", "", false},
	}
	for _, tt := range tests {
		if got := HasWord(tt.text, tt.word); got != tt.want {
			t.Errorf("HasWord(%q, %q) = %v, want %v", tt.text, tt.word, got, tt.want)
		}
	}
}

func TestArgValues(t *testing.T) {
	tr := &trace.Trace{}
	got := ArgValues(tr, &trace.Step{Args: `{"reservation_id":"1N99U6","flights":[{"flight_number":"HAT266","date":"2024-05-19"}],"total":2}`})
	want := []string{"HAT266", "2024-05-19", "1N99U6", "2"}
	slices.Sort(got)
	slices.Sort(want)
	if !slices.Equal(got, want) {
		t.Errorf("ArgValues = %q, want %q", got, want)
	}
	if got := ArgValues(tr, &trace.Step{Args: `not json`}); got != nil {
		t.Errorf("ArgValues(not json) = %q, want nil", got)
	}
}

// FuzzWords: every word Words returns is in its text (Latin ones in lower
// case, four characters or more), and every number Numbers returns is a
// run of digits of text.
func FuzzWords(f *testing.F) {
	for _, s := range []string{"Let's use the gift card.", "用礼品卡付吧", "HAT266 on 2024-05-19", "İstanbul ÅNGSTRÖM", "\xff\xfe"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, text string) {
		lower := strings.ToLower(text)
		for _, w := range Words(text) {
			if !utf8.ValidString(w) || !strings.Contains(text, w) && !strings.Contains(lower, w) {
				t.Fatalf("Words(%q) gave %q, not in the text", text, w)
			}
		}
		for _, n := range Numbers(text) {
			if len(n) < 2 || !strings.Contains(text, n) || strings.Trim(n, "0123456789") != "" {
				t.Fatalf("Numbers(%q) gave %q", text, n)
			}
		}
	})
}
