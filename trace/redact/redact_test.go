package redact

import (
	"strings"
	"testing"
	"time"
	"unicode/utf8"
)

func TestRedact(t *testing.T) {
	tests := []struct {
		name, in, want string
	}{
		// e-mail
		{"email", "mail ann.lee+x@example.co.uk now", "mail [email] now"},
		{"email in JSON", `{"email":"ann@example.com"}`, `{"email":"[email]"}`},
		{"email unicode", "an jörg@bücher.de schreiben", "an [email] schreiben"},
		{"email digits", "13800138000@163.com", "[email]"},
		{"at sign alone", "meet @ noon, @handle", "meet @ noon, @handle"},

		// cards
		{"card plain", "card 4111111111111111 ok", "card [card] ok"},
		{"card spaced", "card 4111 1111 1111 1111 ok", "card [card] ok"},
		{"card dashed", "5555-5555-5555-4444", "[card]"},
		{"card amex 4-6-5", "amex 3782 822463 10005.", "amex [card]."},
		{"card 19 digits", "6212345678901234569", "[card]"},
		{"card 13 digits", "4222222222222", "[card]"},
		{"card in JSON", `{"pan":"4012888888881881","cvv":"123"}`, `{"pan":"[card]","cvv":"123"}`},
		{"card glued to letters", "pan4111111111111111x", "pan[card]x"},
		{"card then quantity", "4111 1111 1111 1111 2 items", "[card] 2 items"},
		{"two cards", "4111111111111111,5555555555554444", "[card],[card]"},
		{"card fails Luhn", "4111111111111112", "4111111111111112"},
		{"card fails Luhn spaced", "4111 1111 1111 1112", "4111 1111 1111 1112"},
		{"20 digits", "41111111111111111111", "41111111111111111111"},
		{"small groups are not a card", "1 2 3 4 5 6 7 8 9 1 0 1 2 3", "1 2 3 4 5 6 7 8 9 1 0 1 2 3"},

		// Chinese resident identity numbers
		{"id", "身份证11010519491231002X。", "身份证[id]。"},
		{"id lower x", "id 11010519491231002x", "id [id]"},
		{"id digits", "id:110101199003074514", "id:[id]"},
		{"id spaced", "110101 19900307 4514", "[id]"},
		{"id bad check", "110101199003074515", "110101199003074515"},
		{"id bad date", "110101199013074514", "110101199013074514"},
		{"18-digit Luhn number", "401288888888188100", "[card]"},

		// phones
		{"cn mobile", "手机13800138000，谢谢", "手机[phone]，谢谢"},
		{"cn mobile +86", "call +86 138 0013 8000 now", "call [phone] now"},
		{"cn mobile +86 together", "+8613800138000", "[phone]"},
		{"cn mobile 0086", "0086 13800138000", "[phone]"},
		{"cn mobile dashed", "138-0013-8000", "[phone]"},
		{"two cn mobiles", "13800138000 13900139000", "[phone] [phone]"},
		{"cn landline labelled", "电话：010-6552 9988", "电话：[phone]"},
		{"intl plus", "call +1 (415) 555-0100 today", "call [phone] today"},
		{"intl UK", "+44 20 7946 0958", "[phone]"},
		{"intl FR", "+33 1 23 45 67 89.", "[phone]."},
		{"intl 00", "0044 20 7946 0958", "[phone]"},
		{"intl 00 one group", "order 0012345678", "order 0012345678"},
		{"nanp parens", "(415) 555-0100", "[phone]"},
		{"nanp dotted", "415.555.0100", "[phone]"},
		{"nanp with 1", "1-800-555-0100", "[phone]"},
		{"nanp area starting 1", "123-456-7890", "123-456-7890"},
		{"labelled JSON", `{"phone":"4155550100"}`, `{"phone":"[phone]"}`},
		{"labelled spaced JSON", `{"phone_number": "030 1234567"}`, `{"phone_number": "[phone]"}`},
		{"labelled camel", `contactPhone=0301234567`, `contactPhone=[phone]`},
		{"labelled tel", "Tel. 030 1234567", "Tel. [phone]"},
		{"not a label", "hotel 1234567", "hotel 1234567"},
		{"label with a digit", "phone2: 0301234567", "phone2: [phone]"},
		{"label glued to a number", "phone0000000A0000 000000000000", "phone[phone]A[phone]"},
		{"national de", "030 1234567", "[phone]"},
		{"national gb", "call me on 020 7946 0958 tonight", "call me on [phone] tonight"},
		{"national gb json", `{"note":"my number is 01234 567890"}`, `{"note":"my number is [phone]"}`},
		{"national au mobile", "0412 345 678", "[phone]"},
		{"national jp", "電話 03-1234-5678 まで", "電話 [phone] まで"},
		{"national cn fixed", "门店电话 0755 8888 6666", "门店电话 [phone]"},
		{"national cn fixed dash", "010-12345678", "[phone]"},
		{"national without its trunk prefix", "20 7946 0958", "20 7946 0958"},
		{"national written together", "02079460958", "02079460958"},
		{"plus too short", "+12 345", "+12 345"},

		// left alone
		{"short id", "order 1042", "order 1042"},
		{"order id", "ORD-20250601-000123", "ORD-20250601-000123"},
		{"date", "on 2025-06-01 at 09:30", "on 2025-06-01 at 09:30"},
		{"timestamp", "2025-06-01T09:30:00.123456789Z", "2025-06-01T09:30:00.123456789Z"},
		{"unix time", "ts=1735689600", "ts=1735689600"},
		{"ip", "from 192.168.100.200", "from 192.168.100.200"},
		{"price", "total 1,234,567.89 EUR", "total 1,234,567.89 EUR"},
		{"version", "v1.36.11", "v1.36.11"},
		{"uuid", "123e4567-e89b-12d3-a456-426614174000", "123e4567-e89b-12d3-a456-426614174000"},
		{"empty", "", ""},
		{"date with zeros", "delivered 01 06 2025", "delivered 01 06 2025"},
		{"date and time", "geliefert am 01.06.2025 09:30 Uhr", "geliefert am 01.06.2025 09:30 Uhr"},
		{"date and time, spaces", "送达 01-06-2025 09 30", "送达 01-06-2025 09 30"},
		{"short zero-led code", "batch 0123 4567", "batch 0123 4567"},
		{"amount with zeros", "0,45 EUR x 0 012", "0,45 EUR x 0 012"},

		// mixed
		{"all kinds", "ann@example.com, 13800138000, 4111-1111-1111-1111, 11010519491231002X",
			"[email], [phone], [card], [id]"},
		{"card then phone in one token", "4111111111111111 13800138000", "[card] [phone]"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := String(tt.in); got != tt.want {
				t.Errorf("String(%q) = %q, want %q", tt.in, got, tt.want)
			}
		})
	}
}

func TestRedactorOptions(t *testing.T) {
	const in = "ann@example.com 13800138000 4111 1111 1111 1111 11010519491231002X"
	tests := []struct {
		name string
		r    Redactor
		want string
	}{
		{"zero", Redactor{}, "[email] [phone] [card] [id]"},
		{"card last 4", Redactor{CardLast4: true}, "[email] [phone] [card-1111] [id]"},
		{"skip email", Redactor{Skip: Email}, "ann@example.com [phone] [card] [id]"},
		{"skip phone", Redactor{Skip: Phone}, "[email] 13800138000 [card] [id]"},
		{"skip card", Redactor{Skip: Card}, "[email] [phone] 4111 1111 1111 1111 [id]"},
		{"skip id", Redactor{Skip: NationalID}, "[email] [phone] [card] 11010519491231002X"},
		{"skip numbers", Redactor{Skip: Phone | Card | NationalID}, "[email] 13800138000 4111 1111 1111 1111 11010519491231002X"},
		{"skip all", Redactor{Skip: All}, in},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := tt.r.Redact(in); got != tt.want {
				t.Errorf("Redact = %q, want %q", got, tt.want)
			}
		})
	}
	if got := None(in); got != in {
		t.Errorf("None changed its input to %q", got)
	}
}

func TestRedactUnchangedDoesNotAllocate(t *testing.T) {
	for _, s := range []string{
		"The order 1042 has shipped and arrives on Friday.",
		"order ORD-20250601-000123 at 2025-06-01T09:30:00Z, total 1234.56",
	} {
		if n := testing.AllocsPerRun(100, func() { _ = String(s) }); n != 0 {
			t.Errorf("String(%q) allocates %v times, want 0", s, n)
		}
	}
}

func TestRedactLongToken(t *testing.T) {
	// More groups than the scanner's stack buffer holds.
	var b strings.Builder
	for i := 0; i < 100; i++ {
		b.WriteString("12 ")
	}
	b.WriteString("4111 1111 1111 1111")
	got := String(b.String())
	if !strings.HasSuffix(got, "12 [card]") {
		t.Errorf("got …%q", got[len(got)-30:])
	}
}

// cardRuns returns the maximal runs of exactly 16 ASCII digits in s that
// pass the Luhn check.
func cardRuns(s string) []string {
	var out []string
	for i := 0; i < len(s); {
		if !isDigit(s[i]) {
			i++
			continue
		}
		j := i
		for j < len(s) && isDigit(s[j]) {
			j++
		}
		if j-i == 16 && luhn([]byte(s[i:j])) {
			out = append(out, s[i:j])
		}
		i = j
	}
	return out
}

func FuzzRedact(f *testing.F) {
	for _, s := range []string{
		"ann@example.com", "+1 (415) 555-0100", "4111 1111 1111 1111", "4111111111111111",
		"2025-06-01", "3.14159265", "11010519491231002X", "+86 138 0013 8000", "13800138000",
		`{"to":"+1 415 555 0100","email":"a@b.io"}`, "a@b.c@d.ef 12-34-56-78", `{"phone":"0301234567"}`,
		"4111111111111111 0044 20 7946 0958", "电话：010-6552 9988", "[phone] 1234567",
		"x@4111111111111111.com4111111111111111", "(((4111)))1111-1111 1111",
	} {
		f.Add(s, false)
	}
	f.Fuzz(func(t *testing.T, s string, last4 bool) {
		r := Redactor{CardLast4: last4}
		got := r.Redact(s)
		for _, c := range cardRuns(s) {
			for _, left := range cardRuns(got) {
				if left == c {
					t.Fatalf("Redact(%q) = %q: card number %s left in", s, got, c)
				}
			}
		}
		if utf8.ValidString(s) && !utf8.ValidString(got) {
			t.Fatalf("Redact(%q) = %q: not valid UTF-8", s, got)
		}
		if emailRE.MatchString(got) {
			t.Fatalf("Redact(%q) = %q: still holds an e-mail address", s, got)
		}
		if again := r.Redact(got); again != got {
			t.Fatalf("Redact is not idempotent on %q: %q, then %q", s, got, again)
		}
		if !strings.ContainsAny(s, "@0123456789") && got != s {
			t.Fatalf("Redact(%q) = %q: changed text with nothing to mask", s, got)
		}
	})
}

// hostile are inputs made of one unit repeated: long number tokens with
// many groups, and many almost-addresses.
var hostile = []string{"1 ", "1-", "12 ", "4111 ", "00 ", "86 ", "+1 ", "tel:1 ", "a@", "a@b.", "(1) "}

// TestRedactHostileIsLinear guards against quadratic work on long tokens:
// a 400 KB token once took 14 s. Linear code takes well under a second,
// even under the race detector.
func TestRedactHostileIsLinear(t *testing.T) {
	for _, unit := range hostile {
		s := strings.Repeat(unit, 200_000)
		start := time.Now()
		got := String(s)
		if d := time.Since(start); d > 20*time.Second {
			t.Errorf("String(%q x 200,000) took %v", unit, d)
		}
		if !utf8.ValidString(got) {
			t.Errorf("String(%q x 200,000) is not valid UTF-8", unit)
		}
	}
}

func BenchmarkRedact(b *testing.B) {
	inputs := []struct{ name, s string }{
		{"clean", "The order 1042 has shipped and arrives on Friday."},
		{"evidence", `{"customer":"ann@example.com","phone":"+86 138 0013 8000","card":"4111 1111 1111 1111","note":"refund order ORD-20250601-000123"}`},
		{"hostile", strings.Repeat("4111 ", 2000)},
	}
	for _, in := range inputs {
		b.Run(in.name, func(b *testing.B) {
			b.ReportAllocs()
			b.SetBytes(int64(len(in.s)))
			for b.Loop() {
				String(in.s)
			}
		})
	}
}

// TestRedactRegions: national numbers are masked for the regions a
// Redactor lists, DefaultRegions when it lists none; an empty list masks
// none (mobiles of China and North America are masked whatever it says).
func TestRedactRegions(t *testing.T) {
	const in = "London 020 7946 0958, Berlin 030 1234567, Shenzhen 13800138000"
	tests := []struct {
		name string
		r    Redactor
		want string
	}{
		{"default", Redactor{}, "London [phone], Berlin [phone], Shenzhen [phone]"},
		{"gb only", Redactor{Regions: []string{"GB"}}, "London [phone], Berlin 030 1234567, Shenzhen [phone]"},
		{"none", Redactor{Regions: []string{}}, "London 020 7946 0958, Berlin 030 1234567, Shenzhen [phone]"},
	}
	for _, tt := range tests {
		if got := tt.r.Redact(in); got != tt.want {
			t.Errorf("%s: Redact = %q, want %q", tt.name, got, tt.want)
		}
	}
}

// TestRedactNationalBudget: text that is little but zero-led groups of
// digits has the first nationalChecks of them validated, and the rest
// masked unchecked (redaction fails closed), so its cost stays bounded.
func TestRedactNationalBudget(t *testing.T) {
	const candidate = "0123 4567 89" // not a British number
	gb := Redactor{Regions: []string{"GB"}}
	if got := gb.Redact(candidate); got != candidate {
		t.Fatalf("Redact(%q) = %q: the test needs a candidate that is not a number", candidate, got)
	}
	in := strings.Repeat(candidate+", ", nationalChecks+44)
	if got, want := strings.Count(gb.Redact(in), MaskPhone), 44; got != want {
		t.Errorf("%d candidates: %d masked, want the %d past the budget", nationalChecks+44, got, want)
	}
}
