package rulekit

import (
	"regexp"
	"strings"
	"time"
)

// IsEmail reports whether v is an e-mail address (emailValue).
func IsEmail(v string) bool {
	return strings.IndexByte(v, '@') > 0 && emailValue.MatchString(v)
}

// IsURL reports whether v is a link (urlValue).
func IsURL(v string) bool {
	return (strings.HasPrefix(v, "http") || strings.HasPrefix(v, "www.")) && urlValue.MatchString(v)
}

// IsIBAN reports whether v is an IBAN without spaces (ibanValue).
func IsIBAN(v string) bool {
	return len(v) >= 14 && len(v) <= 34 && Upper(v[0]) && Upper(v[1]) && Digit(v[2]) && Digit(v[3]) && ibanValue.MatchString(v)
}

// IsPhone reports whether v is a phone number (phoneValue).
func IsPhone(v string) bool {
	return len(v) >= 8 && (v[0] == '+' || Digit(v[0])) && Digit(v[len(v)-1]) && phoneValue.MatchString(v)
}

func Upper(c byte) bool { return c >= 'A' && c <= 'Z' }

func Digit(c byte) bool { return c >= '0' && c <= '9' }

// EachPhoneRun calls fn with every match of phoneRun in text, in order, as
// phoneRun.FindAllString finds them, without the regexp engine: it runs on
// every field of every result. A match starts at a Digit, or a '+' before
// one, and ends at the last Digit of the run of phone characters that
// follows, at least six runes after the first Digit.
func EachPhoneRun(text string, fn func(m string)) {
	for p := 0; p < len(text); {
		q := p + 1 // after the first Digit
		switch {
		case text[p] == '+' && p+1 < len(text) && Digit(text[p+1]):
			q = p + 2
		case !Digit(text[p]):
			p++ // a byte of a multi-byte rune starts no match either
			continue
		}
		end := -1 // the end of the last Digit at least six runes on
	run:
		for i, runes := q, 0; i < len(text); runes++ {
			switch c := text[i]; {
			case Digit(c):
				if runes >= 6 {
					end = i + 1
				}
				i++
			case c == ' ' || c == '\t' || c == '\n' || c == '\f' || c == '\r' || c == '(' || c == ')' || c == '.' || c == '-':
				i++
			case strings.HasPrefix(text[i:], "–"):
				i += len("–")
			default:
				break run
			}
		}
		if end < 0 {
			p++
			continue
		}
		fn(text[p:end])
		p = end
	}
}

// MayHoldSpecific reports whether text has what IsURL, IsEmail or IsIBAN
// needs of one of its words: "http", "www.", an '@', or two capitals and
// two digits in a row.
func MayHoldSpecific(text string) bool {
	if strings.IndexByte(text, '@') >= 0 || strings.Contains(text, "http") || strings.Contains(text, "www.") {
		return true
	}
	for i := 0; i+3 < len(text); i++ {
		if Upper(text[i]) && Upper(text[i+1]) && Digit(text[i+2]) && Digit(text[i+3]) {
			return true
		}
	}
	return false
}

// MayHoldSpacedIBAN reports whether text has what spacedIBAN starts with:
// two capitals, two digits and a space.
func MayHoldSpacedIBAN(text string) bool {
	for i := 0; i+4 < len(text); i++ {
		if Upper(text[i]) && Upper(text[i+1]) && Digit(text[i+2]) && Digit(text[i+3]) && text[i+4] == ' ' {
			return true
		}
	}
	return false
}

var (
	emailValue = regexp.MustCompile(`^[^@\s]+@[^@\s]+\.[a-zA-Z]{2,}$`)
	ibanValue  = regexp.MustCompile(`^[A-Z]{2}\d{2}[A-Z0-9]{10,30}$`)
	phoneValue = regexp.MustCompile(`^\+?\d[\d\s().-]{6,}\d$`)
	urlValue   = regexp.MustCompile(`^(https?://|www\.)\S+$`)
)

func IsDate(v string) bool {
	// Every layout has a separator or a month name: most values (ids,
	// codes) are turned away before time.Parse allocates an error per
	// layout.
	if len(v) < 5 || len(v) > 25 {
		return false
	}
	if sep, digit, apm := dateMarks(v); !sep && !(digit && apm) {
		return false // "A1001", "20240611": no layout matches without a separator or "am"/"pm"
	}
	if !Digit(v[0]) && !monthFirst(v) {
		return false // every layout starts with a number or a month's name
	}
	for _, l := range DateLayouts {
		if _, err := time.Parse(l, v); err == nil {
			return true
		}
	}
	return false
}

// dateMarks reports whether v holds a separator that a date layout has
// ("-/:, " or 年), a digit, and a letter of "am"/"pm": one pass over the
// bytes, where strings.ContainsAny with a non-ASCII set decodes every rune.
func dateMarks(v string) (sep, digit, apm bool) {
	for i := 0; i < len(v); i++ {
		switch c := v[i]; {
		case c == '-' || c == '/' || c == ':' || c == ',' || c == ' ':
			sep = true
		case c >= '0' && c <= '9':
			digit = true
		case c == 'a' || c == 'p' || c == 'm':
			apm = true
		case c == 0xe5 && strings.HasPrefix(v[i:], "年"):
			sep = true
		}
	}
	return sep, digit, apm
}

// monthFirst reports whether v starts with a month's English name, as the
// layouts that do not start with a number do ("Jan 2, 2006").
func monthFirst(v string) bool {
	if len(v) < 3 {
		return false
	}
	for _, m := range [...]string{"jan", "feb", "mar", "apr", "may", "jun", "jul", "aug", "sep", "oct", "nov", "dec"} {
		if strings.EqualFold(v[:3], m) {
			return true
		}
	}
	return false
}

// DateLayouts are the layouts a value is tried in to tell whether it is a
// date (IsDate, and the value-invariant rule's dates).
var (
	DateLayouts = []string{time.RFC3339, "2006-01-02", "2006-01-02 15:04", "2006-01-02 15:04:05", "2006-01-02T15:04", "2006-01-02T15:04:05", "2006/01/02", "2006/1/2", "2006年1月2日", "01/02/2006", "Jan 2, 2006", "2 Jan 2006", "January 2, 2006", "15:04", "3pm", "3:04pm", "15:04:05"}
)
