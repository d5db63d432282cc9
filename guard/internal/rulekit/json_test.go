package rulekit

import (
	"encoding/json"
	"slices"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/go-json-experiment/json/jsontext"
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
		{`{"q\"x" : {"y\\":2}}`, []string{`q"x`, `y\`}},
		{`[{"x": 1}, "y"]`, []string{"x"}},
		{` {"a": 1, "a": 2}`, []string{"a", "a"}},
		{`{"时间": "明天", "金额": -5}`, []string{"时间", "金额"}},
		{`{"a": "b:c", "d": ":"}`, []string{"a", "d"}},
		{`not json`, nil},
		{``, nil},
		{`"amount"`, nil},
		{`"amount": 1`, nil},
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
		t.Skip("allocations are not counted under the race detector")
	}
	args := `{"order_id":"A1","reason":"damaged","quantity":2,"address":{"city":"Oslo"}}`
	if n := testing.AllocsPerRun(100, func() { AnyKey(args, func(string) bool { return false }) }); n != 0 {
		t.Errorf("%v allocations per call, want 0", n)
	}
}

// names are the object names of valid JSON text s in order, read with a
// jsontext decoder: AnyKey's reference.
func names(t *testing.T, s string) []string {
	dec := jsontext.NewDecoder(strings.NewReader(s), jsontext.AllowDuplicateNames(true), jsontext.AllowInvalidUTF8(true))
	var out []string
	for {
		kind := dec.PeekKind()
		if kind == 0 {
			return out
		}
		in, n := dec.StackIndex(dec.StackDepth())
		tok, err := dec.ReadToken()
		if err != nil {
			t.Fatalf("reading valid JSON %q: %v", s, err)
		}
		if kind == '"' && in == '{' && n%2 == 0 {
			out = append(out, tok.String())
		}
	}
}

// FuzzAnyKey holds AnyKey to the names a JSON decoder reads, on every
// valid JSON text in UTF-8; on any other text it must only not panic.
func FuzzAnyKey(f *testing.F) {
	for _, s := range []string{`{"amount": 1}`, `{"a": {"b": [1, {"c": "d"}]}}`, `{"am\u006funt": 1}`, `[`, `{"a":`, `{"x":"\"y\":"}`, `{"日期":"2026-13-01"}`} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		var got []string
		AnyKey(s, func(k string) bool { got = append(got, k); return false })
		if !json.Valid([]byte(s)) || !utf8.ValidString(s) {
			return // a decoder reads invalid UTF-8 as U+FFFD; AnyKey hands on the bytes
		}
		if want := names(t, s); !slices.Equal(got, want) {
			t.Errorf("AnyKey(%q) saw %q, a decoder reads %q", s, got, want)
		}
	})
}
