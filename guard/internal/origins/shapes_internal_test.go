package origins

import (
	"slices"
	"testing"

	"github.com/agentguard/agentguard/guard/internal/rulekit"
)

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
		{"mayHoldSpacedIBAN", rulekit.MayHoldSpacedIBAN(v) || !spacedIBAN.MatchString(v), true},
	} {
		if c.got != c.want {
			t.Errorf("%s(%q) = %v, want %v", c.name, v, c.got, c.want)
		}
	}
	var runs []string
	rulekit.EachPhoneRun(v, func(m string) { runs = append(runs, m) })
	if want := phoneRun.FindAllString(v, -1); !slices.Equal(runs, want) {
		t.Errorf("eachPhoneRun(%q) = %q, want %q", v, runs, want)
	}
}
