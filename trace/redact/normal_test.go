package redact

import (
	"strings"
	"testing"
)

// Each form in which the red team wrote personal data past the redactor
// (issue 20), and the Chinese forms of phones and ids, in English and
// Chinese text. The masks replace what was written; the rest is kept as
// it was, full-width punctuation included.
func TestRedactNormalisedForms(t *testing.T) {
	tests := []struct {
		name, in, want string
	}{
		// e-mail
		{"full-width at sign", "mail ann＠example.com today", "mail [email] today"},
		{"small at sign", "mail ann﹫example.com", "mail [email]"},
		{"full-width address", "邮箱：ａｎｎ＠ｅｘａｍｐｌｅ．ｃｏｍ。", "邮箱：[email]。"},
		{"JSON escape for @", `{"email":"ann\u0040example.com"}`, `{"email":"[email]"}`},
		{"JSON escape upper-case hex", `{"email":"ann\u0040Example.COM"}`, `{"email":"[email]"}`},
		{"JSON escape for ＠", `{"email":"ann\uff20example.com"}`, `{"email":"[email]"}`},
		{"JSON-escaped letters", `{"email":"\u0061nn@ex\u0061mple.com"}`, `{"email":"[email]"}`},
		{"zero-width in address", "ann\u200b@example.com", "[email]"},

		// cards
		{"card with dots", "card 4111.1111.1111.1111 ok", "card [card] ok"},
		{"card with double spaces", "card 4111  1111  1111  1111 ok", "card [card] ok"},
		{"card full-width digits", "卡号４１１１ １１１１ １１１１ １１１１", "卡号[card]"},
		{"card no-break spaces", "card 4111\u00a01111\u00a01111\u00a01111", "card [card]"},
		{"card ideographic spaces", "卡号4111\u30001111\u30001111\u30001111", "卡号[card]"},
		{"card en dashes", "4111–1111–1111–1111", "[card]"},
		{"card zero-width joiners", "4111\u200b1111\u200b1111\u200b1111", "[card]"},
		{"card JSON-escaped digits", `{"pan":"\u0034111111111111111"}`, `{"pan":"[card]"}`},

		// phones
		{"nanp en dashes", "call 415–555–0100 now", "call [phone] now"},
		{"nanp em dash and parens", "(415) 555—0100", "[phone]"},
		{"nanp full-width parens", "（415）555-0100", "[phone]"},
		{"intl full-width plus", "＋44 20 7946 0958", "[phone]"},
		{"cn mobile full-width", "手机：１３８００１３８０００，谢谢", "手机：[phone]，谢谢"},
		{"cn mobile full-width grouped", "手机 １３８ ００１３ ８０００", "手机 [phone]"},
		{"cn mobile full-width hyphens", "电话138－0013－8000。", "电话[phone]。"},
		{"cn mobile en dashes", "138–0013–8000", "[phone]"},
		{"cn mobile ideographic spaces", "138\u30000013\u30008000", "[phone]"},
		{"cn mobile zero-width", "138\u200b0013\u200b8000", "[phone]"},
		{"cn mobile +86 full-width", "＋８６ １３８ ００１３ ８０００", "[phone]"},
		{"cn mobile JSON-escaped", `{"phone":"\u0031\u0033800138000"}`, `{"phone":"[phone]"}`},
		{"cn landline labelled full-width", "电话：０１０－６５５２ ９９８８", "电话：[phone]"},
		{"mathematical digits", "手机𝟏𝟑𝟖𝟎𝟎𝟏𝟑𝟖𝟎𝟎𝟎", "手机[phone]"},

		// Chinese resident identity numbers
		{"id full-width", "身份证号：１１０１０５１９４９１２３１００２Ｘ。", "身份证号：[id]。"},
		{"id full-width lower x", "身份证１１０１０５１９４９１２３１００２ｘ", "身份证[id]"},
		{"id grouped full-width spaces", "110105\u300019491231\u3000002X", "[id]"},
		{"id en dashes", "110105–19491231–002X", "[id]"},
		{"id JSON-escaped", `{"id":"\u0031\u00310105194912310\u0030\u0032X"}`, `{"id":"[id]"}`},

		// left alone
		{"full-width order number", "订单号：ＯＲＤ－２０２５０６０１", "订单号：ＯＲＤ－２０２５０６０１"},
		{"full-width date", "２０２５年６月１日发货", "２０２５年６月１日发货"},
		{"escaped quote kept", `{"note":"say \u0022hi\u0022 to 1042"}`, `{"note":"say \u0022hi\u0022 to 1042"}`},
		{"Chinese text, no data", "您的订单已发货，预计周五送达。", "您的订单已发货，预计周五送达。"},
		{"card fails Luhn, dotted", "4111.1111.1111.1112", "4111.1111.1111.1112"},
		{"version with dots", "v1.36.11.2024", "v1.36.11.2024"},
		{"ip", "from 192.168.100.200", "from 192.168.100.200"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := String(tt.in)
			if got != tt.want {
				t.Errorf("String(%q) = %q, want %q", tt.in, got, tt.want)
			}
			if again := String(got); again != got {
				t.Errorf("not idempotent: %q, then %q", got, again)
			}
		})
	}
}

// Options apply to the normal form as to plain text.
func TestRedactNormalisedOptions(t *testing.T) {
	const in = "ann＠example.com １３８００１３８０００ ４１１１ １１１１ １１１１ １１１１"
	tests := []struct {
		r    Redactor
		want string
	}{
		{Redactor{}, "[email] [phone] [card]"},
		{Redactor{CardLast4: true}, "[email] [phone] [card-1111]"},
		{Redactor{Skip: Email}, "ann＠example.com [phone] [card]"},
		{Redactor{Skip: Phone | Card}, "[email] １３８００１３８０００ ４１１１ １１１１ １１１１ １１１１"},
	}
	for _, tt := range tests {
		if got := tt.r.Redact(in); got != tt.want {
			t.Errorf("%+v.Redact = %q, want %q", tt.r, got, tt.want)
		}
	}
}

// Chinese text with no form to fold takes the plain path: unchanged,
// without allocating.
func TestRedactChineseUnchangedDoesNotAllocate(t *testing.T) {
	s := "您的订单1042已发货，预计周五送达，运单号待更新。"
	if n := testing.AllocsPerRun(100, func() { _ = String(s) }); n != 0 {
		t.Errorf("String allocates %v times, want 0", n)
	}
}

func FuzzRedactNormalised(f *testing.F) {
	for _, s := range []string{
		"ann＠example.com", `ann\u0040example.com`, "１３８００１３８０００", "４１１１ １１１１ １１１１ １１１１",
		"4111.1111.1111.1111", "4111  1111  1111  1111", "415–555–0100", "１１０１０５１９４９１２３１００２Ｘ",
		`\ud83d\ude00 \u0031\u0033800138000`, `\ud800\u0031`, "138\u200b0013\u200b8000", `\u`, `\u12`, "（415）555-0100",
	} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		got := String(s)
		n, _, _ := normalize(got)
		if emailRE.MatchString(n) {
			t.Fatalf("String(%q) = %q: its normal form still holds an e-mail address", s, got)
		}
		if again := String(got); again != got {
			t.Fatalf("String is not idempotent on %q: %q, then %q", s, got, again)
		}
		if ns, _, ok := normalize(s); !ok && got != (Redactor{}).Redact(ns) {
			t.Fatalf("plain text %q redacted differently", s)
		}
		if !strings.ContainsAny(s, "@\\") && strings.IndexFunc(s, func(r rune) bool { return r >= '0' && r <= '9' || r >= 0x80 }) < 0 && got != s {
			t.Fatalf("String(%q) = %q: changed text with nothing to mask", s, got)
		}
	})
}

func BenchmarkRedactNormalised(b *testing.B) {
	inputs := []struct{ name, s string }{
		{"chinese-clean", "您的订单1042已发货，预计周五送达，运单号待更新。如有问题请联系客服。"},
		{"full-width-evidence", `{"customer":"ann＠example.com","phone":"＋８６ １３８ ００１３ ８０００","card":"４１１１ １１１１ １１１１ １１１１","note":"退款 ORD-20250601-000123"}`},
		{"escaped-evidence", `{"customer":"ann\u0040example.com","phone":"+86 138 0013 8000","card":"4111.1111.1111.1111","note":"refund order ORD-20250601-000123"}`},
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
