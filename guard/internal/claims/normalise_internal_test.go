package claims

import (
	"strings"
	"testing"
	"unicode"
)

// normaliseAnswerRef is normaliseAnswer as first written: strings.ToLower,
// then the apostrophes and the spaces.
func normaliseAnswerRef(s string) string {
	var b strings.Builder
	space := false
	for _, r := range strings.ToLower(s) {
		switch {
		case r == '’' || r == '‘' || r == '`' || r == '´' || r == '＇':
			r = '\''
		case unicode.IsSpace(r):
			space = true
			continue
		}
		if space && b.Len() > 0 {
			b.WriteByte(' ')
		}
		space = false
		b.WriteRune(r)
	}
	return b.String()
}

func FuzzNormaliseAnswer(f *testing.F) {
	for _, s := range []string{
		"I’ve SENT the text.\n\nYou'll get an E-mail shortly",
		"退款已原路退回，短信发过去了",
		"ΣΊΣΥΦΟΣ İstanbul \u00a0 \u2028 K\xff\xfe",
	} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		if got, want := normaliseAnswer(s), normaliseAnswerRef(s); got != want {
			t.Errorf("normaliseAnswer(%q) = %q, want %q", s, got, want)
		}
	})
}
