package guard

import (
	"strings"
	"sync"
	"sync/atomic"
)

// The value shapes below are asked of every argument leaf and every field
// of every result, so each checks what its pattern cannot do without
// (an @, a scheme, a leading digit) before it runs the regexp engine.

// isEmail reports whether v is an e-mail address (emailValue).
func isEmail(v string) bool {
	return strings.IndexByte(v, '@') > 0 && emailValue.MatchString(v)
}

// isURL reports whether v is a link (urlValue).
func isURL(v string) bool {
	return (strings.HasPrefix(v, "http") || strings.HasPrefix(v, "www.")) && urlValue.MatchString(v)
}

// isIBAN reports whether v is an IBAN without spaces (ibanValue).
func isIBAN(v string) bool {
	return len(v) >= 14 && len(v) <= 34 && upper(v[0]) && upper(v[1]) && digit(v[2]) && digit(v[3]) && ibanValue.MatchString(v)
}

// isPhone reports whether v is a phone number (phoneValue).
func isPhone(v string) bool {
	return len(v) >= 8 && (v[0] == '+' || digit(v[0])) && digit(v[len(v)-1]) && phoneValue.MatchString(v)
}

func upper(c byte) bool { return c >= 'A' && c <= 'Z' }
func digit(c byte) bool { return c >= '0' && c <= '9' }

// eachPhoneRun calls fn with every match of phoneRun in text, in order, as
// phoneRun.FindAllString finds them, without the regexp engine: it runs on
// every field of every result. A match starts at a digit, or a '+' before
// one, and ends at the last digit of the run of phone characters that
// follows, at least six runes after the first digit.
func eachPhoneRun(text string, fn func(m string)) {
	for p := 0; p < len(text); {
		q := p + 1 // after the first digit
		switch {
		case text[p] == '+' && p+1 < len(text) && digit(text[p+1]):
			q = p + 2
		case !digit(text[p]):
			p++ // a byte of a multi-byte rune starts no match either
			continue
		}
		end := -1 // the end of the last digit at least six runes on
	run:
		for i, runes := q, 0; i < len(text); runes++ {
			switch c := text[i]; {
			case digit(c):
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

// mayHoldSpecific reports whether text has what isURL, isEmail or isIBAN
// needs of one of its words: "http", "www.", an '@', or two capitals and
// two digits in a row.
func mayHoldSpecific(text string) bool {
	if strings.IndexByte(text, '@') >= 0 || strings.Contains(text, "http") || strings.Contains(text, "www.") {
		return true
	}
	for i := 0; i+3 < len(text); i++ {
		if upper(text[i]) && upper(text[i+1]) && digit(text[i+2]) && digit(text[i+3]) {
			return true
		}
	}
	return false
}

// mayHoldSpacedIBAN reports whether text has what spacedIBAN starts with:
// two capitals, two digits and a space.
func mayHoldSpacedIBAN(text string) bool {
	for i := 0; i+4 < len(text); i++ {
		if upper(text[i]) && upper(text[i+1]) && digit(text[i+2]) && digit(text[i+3]) && text[i+4] == ' ' {
			return true
		}
	}
	return false
}

// keyKind is what the key patterns say of one argument or field name.
type keyKind uint8

const (
	keyDate keyKind = 1 << iota
	keyIdent
	keyContent
)

// keyKinds memoises kindOfKey: tools have few argument names, asked about
// on every call. It stops growing at maxKeyKinds names, so a model that
// invents keys cannot grow it without bound.
var (
	keyKinds    sync.Map // string → keyKind
	keyKindsLen atomic.Int32
)

const maxKeyKinds = 4096

// kindOfKey returns which of dateKey, identKey and contentKey match key.
func kindOfKey(key string) keyKind {
	if k, ok := keyKinds.Load(key); ok {
		return k.(keyKind)
	}
	var k keyKind
	if dateKey.MatchString(key) {
		k |= keyDate
	}
	if identKey.MatchString(key) {
		k |= keyIdent
	}
	if contentKey.MatchString(key) {
		k |= keyContent
	}
	if keyKindsLen.Load() < maxKeyKinds {
		if _, loaded := keyKinds.LoadOrStore(key, k); !loaded {
			keyKindsLen.Add(1)
		}
	}
	return k
}
