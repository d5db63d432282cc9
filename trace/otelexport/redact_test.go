package otelexport

import (
	"strings"
	"testing"
	"unicode/utf8"
)

func TestRedact(t *testing.T) {
	tests := []struct {
		name, in, want string
	}{
		{"email", "mail ann.lee+x@example.co.uk now", "mail [email] now"},
		{"email in JSON", `{"email":"ann@example.com"}`, `{"email":"[email]"}`},
		{"card spaced", "card 4111 1111 1111 1111 ok", "card [card] ok"},
		{"card dashed", "4111-1111-1111-1111", "[card]"},
		{"card plain", "4111111111111111", "[card]"},
		{"card 19 digits", "6011000990139424123", "[card]"},
		{"phone international", "call +1 (415) 555-0100 today", "call [phone] today"},
		{"phone dotted", "415.555.0100", "[phone]"},
		{"phone UK", "+44 20 7946 0958", "[phone]"},
		{"phone seven digits", "ext 5550100", "ext [phone]"},
		{"phone in JSON", `{"to":"+1 415 555 0100"}`, `{"to":"[phone]"}`},
		{"both", "ann@example.com or +44 20 7946 0958", "[email] or [phone]"},
		{"short id", "order 1042", "order 1042"},
		{"six digits", "code 123456", "code 123456"},
		{"date", "on 2025-06-01 at 09:30", "on 2025-06-01 at 09:30"},
		{"date then phone", "2025-06-01 call 555 0100", "2025-06-01 call [phone]"},
		{"timestamp", "2025-06-01T09:30:00.123456789Z", "2025-06-01T09:30:00.123456789Z"},
		{"decimal", "pi is 3.14159265", "pi is 3.14159265"},
		{"price", "total 1234.56 EUR", "total 1234.56 EUR"},
		{"version", "v1.36.11", "v1.36.11"},
		{"at sign alone", "meet @ noon, @handle", "meet @ noon, @handle"},
		{"empty", "", ""},
		{"unicode", "Grüße an jörg@bücher.de, Tel. 030 1234567", "Grüße an [email], Tel. [phone]"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := Redact(tt.in); got != tt.want {
				t.Errorf("Redact(%q) = %q, want %q", tt.in, got, tt.want)
			}
		})
	}
}

func TestRedactFastPathAllocs(t *testing.T) {
	s := "The order 1042 has shipped and arrives on Friday."
	if n := testing.AllocsPerRun(100, func() { _ = Redact(s) }); n != 0 {
		t.Errorf("Redact of clean text allocates %v times, want 0", n)
	}
}

func FuzzRedact(f *testing.F) {
	for _, s := range []string{
		"ann@example.com", "+1 (415) 555-0100", "4111 1111 1111 1111", "2025-06-01", "3.14159265",
		`{"to":"+1 415 555 0100","email":"a@b.io"}`, "a@b.c@d.ef 12-34-56-78",
	} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		got := Redact(s)
		if utf8.ValidString(s) && !utf8.ValidString(got) {
			t.Fatalf("Redact(%q) = %q: not valid UTF-8", s, got)
		}
		if emailRE.MatchString(got) {
			t.Fatalf("Redact(%q) = %q: still holds an e-mail address", s, got)
		}
		if cardRE.MatchString(got) {
			t.Fatalf("Redact(%q) = %q: still holds a card number", s, got)
		}
		if again := Redact(got); again != got {
			t.Fatalf("Redact is not idempotent on %q: %q, then %q", s, got, again)
		}
		if !strings.ContainsAny(s, "@0123456789") && got != s {
			t.Fatalf("Redact(%q) = %q: changed text with nothing to mask", s, got)
		}
	})
}
