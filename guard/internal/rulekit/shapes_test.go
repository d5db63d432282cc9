package rulekit

import (
	"strings"
	"testing"
	"time"
)

// isDateSlow is isDate without the shortcuts: every layout is tried.
func isDateSlow(v string) bool {
	for _, l := range DateLayouts {
		if _, err := time.Parse(l, v); err == nil {
			return true
		}
	}
	return false
}

var shapeValues = []string{
	"", "a", "2025-01-11", "2025/1/2", "2025年1月2日", "01/02/2006", "Jan 2, 2006", "jan 2, 2006", "2 Jan 2006",
	"January 2, 2006", "15:04", "3pm", "3:04pm", "15:04:05", "2025-01-11T10:00:00Z", "INV-00001, total 100.50",
	"A1001", "20240611", "alice@example.com", "a@b", "@example.com", "https://example.com/x", "www.example.com",
	"http//x", "DE89370400440532013000", "de89370400440532013000", "+86 138 0013 8000", "138-0013-8000", "12345",
	"(555) 123-4567", "+1 (555) 123–4567.", "++12345678", "call 555 123 4567 or +44 20 7946 0958", "12 34 56", "1\t2\n3\f4\r5(6)7.8-9",
	"May 5, 2025", "Mayor 5, 2025", "Sept 5, 2025", " 2025-01-11", "Invoice for 2025-01-11",
}

func TestShapesAgreeWithTheirPatterns(t *testing.T) {
	for _, v := range shapeValues {
		checkShapes(t, v)
	}
}

func FuzzShapes(f *testing.F) {
	for _, v := range shapeValues {
		f.Add(v)
	}
	f.Fuzz(checkShapes)
}

func checkShapes(t *testing.T, v string) {
	for _, c := range []struct {
		name      string
		got, want bool
	}{
		{"isEmail", IsEmail(v), emailValue.MatchString(v)},
		{"isURL", IsURL(v), urlValue.MatchString(v)},
		{"isIBAN", IsIBAN(v), ibanValue.MatchString(v)},
		{"isPhone", IsPhone(v), phoneValue.MatchString(v)},
		{"mayHoldSpecific", MayHoldSpecific(v) || !IsURL(v) && !IsEmail(v) && !IsIBAN(v), true},
	} {
		if c.got != c.want {
			t.Errorf("%s(%q) = %v, want %v", c.name, v, c.got, c.want)
		}
	}
	if len(v) >= 5 && len(v) <= 25 && strings.ContainsAny(v, "-/:年, ") {
		if got, want := IsDate(v), isDateSlow(v); got != want {
			t.Errorf("isDate(%q) = %v, want %v", v, got, want)
		}
	}
}
