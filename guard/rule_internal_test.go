package guard

import (
	"testing"
	"unicode"
	"unicode/utf8"

	"github.com/agentguard/agentguard/guard/internal/rulekit"
)

func TestSameArgs(t *testing.T) {
	tests := []struct {
		a, b string
		want bool
	}{
		{`{"a":1}`, `{"a":1}`, true},
		{`{"a": 1}`, "{\n  \"a\" : 1\n}", true},
		{`{"a":"x y"}`, `{"a":"xy"}`, false},             // space inside a string counts
		{`{"a":"\" b"}`, `{"a":"\"b"}`, false},           // an escaped quote does not end the string
		{`{"a":"\\"  ,"b":1}`, `{"a":"\\","b":1}`, true}, // an escaped backslash does
		{`{"a":1}`, `{"a":1,"b":2}`, false},
		{`{"a":1,"b":2}`, `{"b":2,"a":1}`, false}, // key order counts
		{``, `  `, true},
	}
	for _, tt := range tests {
		if got := sameArgs(tt.a, tt.b); got != tt.want {
			t.Errorf("sameArgs(%q, %q) = %v, want %v", tt.a, tt.b, got, tt.want)
		}
		if got := sameArgs(tt.b, tt.a); got != tt.want {
			t.Errorf("sameArgs(%q, %q) = %v, want %v (swapped)", tt.b, tt.a, got, tt.want)
		}
	}
	if n := testing.AllocsPerRun(100, func() { sameArgs(`{"a": 1}`, `{"a":1}`) }); n != 0 {
		t.Errorf("sameArgs allocates %v times", n)
	}
}

func TestFastValidDoesNotAllocate(t *testing.T) {
	s, err := compileSchema([]byte(`{"type":"object","properties":{"order_id":{"type":"string"},"qty":{"type":"integer","minimum":1},"tags":{"type":"array","items":{"type":"string","enum":["a","b"]}}},"required":["order_id"]}`))
	if err != nil {
		t.Fatal(err)
	}
	args := `{"order_id": "A1001", "qty": 2, "tags": ["a", "b"]}`
	if !s.fastValid(args) {
		t.Fatal("fastValid rejected valid arguments")
	}
	if n := testing.AllocsPerRun(100, func() { s.fastValid(args) }); n != 0 {
		t.Errorf("fastValid allocates %v times", n)
	}
}

func TestAnyKey(t *testing.T) {
	tests := []struct {
		args string
		want bool
	}{
		{`{"order_id":"A1001"}`, false},
		{`{"order_id":"A1001","amount":-5}`, true},
		{`{"note":"amount: 5"}`, false}, // a value, not a key
		{`{"items":[{"sku":"x","Unit_Price":3}]}`, true},
		{`{"created_at":"yesterday"}`, true},
		{`{"pickupTime":"3pm"}`, true},
		{`{"timezone":"UTC"}`, false},
		{`{"退款金额":-1}`, true},
		{`{"订单号":"A1"}`, false},
		{`{"am\u006funt":-1}`, true}, // escaped keys go to the decoder
		{`{"a":"\"amount\":"}`, false},
		{`{"amount"`, false}, // cut before the colon: not JSON either
		{`not json`, false},
		{``, false},
	}
	for _, tt := range tests {
		if got := anyKey(tt.args, defaultInvariantKey); got != tt.want {
			t.Errorf("anyKey(%s) = %v, want %v", tt.args, got, tt.want)
		}
	}
	if n := testing.AllocsPerRun(100, func() { anyKey(`{"order_id":"A1001","note":"x"}`, defaultInvariantKey) }); n != 0 {
		t.Errorf("anyKey allocates %v times", n)
	}
}

// FuzzInvariantKey keeps defaultInvariantKey in agreement with the
// regexps the default invariants apply to a key.
func FuzzInvariantKey(f *testing.F) {
	for _, k := range []string{"order_id", "Total_Amount", "qty", "created_at", "startTime", "timezone", "退款金额", "日期", "DEADLINE", "sumo", "_AT"} {
		f.Add(k)
	}
	f.Fuzz(func(t *testing.T, key string) {
		for _, r := range key {
			if r >= utf8.RuneSelf && !unicode.Is(unicode.Han, r) {
				return // regexp's (?i) folds some non-ASCII letters to ASCII ones (ſ, K)
			}
		}
		want := amountKey.MatchString(key) || rulekit.DateKey.MatchString(key)
		if got := defaultInvariantKey(key); got != want {
			t.Errorf("defaultInvariantKey(%q) = %v, regexps say %v", key, got, want)
		}
	})
}
