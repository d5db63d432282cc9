package rulekit

import (
	"slices"
	"testing"
)

func TestAnyKey(t *testing.T) {
	for _, tc := range []struct {
		json string
		keys []string // every name, in order
	}{
		{`{"amount": 1}`, []string{"amount"}},
		{`{"a": {"b": [1, {"c": "d"}]}, "e": "f"}`, []string{"a", "b", "c", "e"}},
		{`{"text": "\"amount\": 1"}`, []string{"text"}}, // a value that looks like a name is none
		{`{"am\u006funt": 1}`, []string{"amount"}},
		{`[{"x": 1}, "y"]`, []string{"x"}},
		{`{"a": 1, "a": 2}`, []string{"a", "a"}},
		{`{"a": 1, "b"`, []string{"a", "b"}}, // cut short: read as far as it goes
		{`not json`, nil},
		{``, nil},
		{`"amount"`, nil},
	} {
		var got []string
		AnyKey(tc.json, func(k string) bool { got = append(got, k); return false })
		if !slices.Equal(got, tc.keys) {
			t.Errorf("AnyKey(%s) saw %q, want %q", tc.json, got, tc.keys)
		}
		if len(tc.keys) > 0 && !AnyKey(tc.json, func(k string) bool { return k == tc.keys[len(tc.keys)-1] }) {
			t.Errorf("AnyKey(%s) missed %q", tc.json, tc.keys[len(tc.keys)-1])
		}
	}
}

func TestAnyKeyAllocs(t *testing.T) {
	if raceOn {
		t.Skip("allocations are not counted under the race detector, whose sync.Pool drops what it is given")
	}
	args := `{"order_id":"A1","reason":"damaged","quantity":2,"address":{"city":"Oslo"}}`
	AnyKey(args, func(string) bool { return false })
	if n := testing.AllocsPerRun(100, func() { AnyKey(args, func(string) bool { return false }) }); n != 0 {
		t.Errorf("%v allocations per call, want 0", n)
	}
}

func FuzzAnyKey(f *testing.F) {
	for _, s := range []string{`{"amount": 1}`, `{"a": {"b": [1, {"c": "d"}]}}`, `{"am\u006funt": 1}`, `[`, `{"a":`} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		AnyKey(s, func(k string) bool { return len(k) > 3 }) // must not panic
	})
}
