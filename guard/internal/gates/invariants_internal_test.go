package gates

import (
	"testing"
	"unicode"
	"unicode/utf8"

	"github.com/agentguard/agentguard/guard/internal/rulekit"
)

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
		{`{"am\u006funt":-1}`, true}, // read unescaped
		{`{"a":"\"amount\":"}`, false},
		{`{"amount"`, true}, // cut short: the name is read, and the decoder then refuses the text
		{`not json`, false},
		{``, false},
	}
	for _, tt := range tests {
		if got := rulekit.AnyKey(tt.args, defaultInvariantKey); got != tt.want {
			t.Errorf("AnyKey(%s) = %v, want %v", tt.args, got, tt.want)
		}
	}
	if n := testing.AllocsPerRun(100, func() { rulekit.AnyKey(`{"order_id":"A1001","note":"x"}`, defaultInvariantKey) }); n != 0 {
		t.Errorf("AnyKey allocates %v times", n)
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
