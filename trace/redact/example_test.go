package redact_test

import (
	"fmt"

	"github.com/agentguard/agentguard/trace/redact"
)

func ExampleString() {
	fmt.Println(redact.String(`{"email":"ann@example.com","tel":"+86 138 0013 8000","card":"4111-1111-1111-1111"}`))
	fmt.Println(redact.String("身份证 11010519491231002X，手机 13800138000"))
	fmt.Println(redact.String("order ORD-20250601-000123 of 2025-06-01, total 1234.56"))
	// Output:
	// {"email":"[email]","tel":"[phone]","card":"[card]"}
	// 身份证 [id]，手机 [phone]
	// order ORD-20250601-000123 of 2025-06-01, total 1234.56
}

func ExampleRedactor() {
	r := redact.Redactor{Skip: redact.Email, CardLast4: true}
	fmt.Println(r.Redact("ann@example.com paid with 4111 1111 1111 1111"))
	// Output:
	// ann@example.com paid with [card-1111]
}

func ExampleNone() {
	// Where a redactor is wanted, None turns redaction off.
	var redactor func(string) string = redact.None
	fmt.Println(redactor("ann@example.com"))
	// Output:
	// ann@example.com
}

// Personal data is found however it is written — full-width digits and at
// signs, JSON escapes, dotted cards, en dashes — and the masks replace what
// was written.
func ExampleString_normalForm() {
	fmt.Println(redact.String("手机：１３８００１３８０００，邮箱 ann＠example.com"))
	fmt.Println(redact.String(`{"email":"ann\u0040example.com","card":"4111.1111.1111.1111"}`))
	fmt.Println(redact.String("call 415–555–0100"))
	// Output:
	// 手机：[phone]，邮箱 [email]
	// {"email":"[email]","card":"[card]"}
	// call [phone]
}
