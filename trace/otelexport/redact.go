package otelexport

import (
	"regexp"
	"strings"
)

// Masks that Redact puts in place of what it finds.
const (
	MaskEmail = "[email]"
	MaskCard  = "[card]"
	MaskPhone = "[phone]"
)

var (
	emailRE = regexp.MustCompile(`[\p{L}\p{N}._%+-]+@[\p{L}\p{N}-]+(?:\.[\p{L}\p{N}-]+)*\.\p{L}{2,}`)
	// 13 to 19 digits, each optionally followed by one space or dash.
	cardRE = regexp.MustCompile(`\b(?:\d[ -]?){12,18}\d\b`)
	// A candidate phone number: digits with the separators people write
	// between them; phoneMask decides by counting the digits.
	phoneRE   = regexp.MustCompile(`\+?\(?\d[\d ().-]{5,}\d`)
	dateRE    = regexp.MustCompile(`^\d{4}[-./]\d{2}[-./]\d{2}$`)
	decimalRE = regexp.MustCompile(`^\d+\.\d+$`)
)

// Redact is the default redactor: it masks e-mail addresses as MaskEmail,
// card-like runs of 13 to 19 digits (optionally grouped by single spaces or
// dashes) as MaskCard, and phone-like runs of 7 to 15 digits (optionally with
// a leading "+", parentheses, spaces, dots or dashes) as MaskPhone. Dates
// such as 2025-06-01 and decimal numbers such as 3.14159265 are left alone.
//
// It errs on the side of masking: other long numbers, such as 10-digit
// order ids or Unix timestamps, are masked as phone numbers too. It does not
// know names, addresses or secrets; pass your own Options.Redact (which may
// call Redact) when your data holds those.
//
// Redact is safe for concurrent use. Text with no "@" and fewer than 7
// digits is returned as it is, without running any pattern.
func Redact(s string) string {
	if !strings.Contains(s, "@") && digits(s) < 7 {
		return s
	}
	s = emailRE.ReplaceAllLiteralString(s, MaskEmail)
	s = cardRE.ReplaceAllLiteralString(s, MaskCard)
	return phoneRE.ReplaceAllStringFunc(s, phoneMask)
}

func phoneMask(m string) string {
	if n := digits(m); n < 7 || n > 15 || dateRE.MatchString(m) || decimalRE.MatchString(m) {
		return m
	}
	return MaskPhone
}

func digits(s string) int {
	n := 0
	for i := 0; i < len(s); i++ {
		if s[i] >= '0' && s[i] <= '9' {
			n++
		}
	}
	return n
}
