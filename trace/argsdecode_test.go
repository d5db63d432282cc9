package trace

import (
	"encoding/json"
	"reflect"
	"testing"
)

// argsSamples are arguments as models write them, and what the fast path
// leaves to encoding/json.
var argsSamples = []string{
	`{"order_id":"A1001"}`,
	`{"recipient":"陈静","amount":1200.5,"date":"2026-12-24","urgent":true,"note":null}`,
	`{"subject":"Re: \"refund\"\n\u8ba2\u5355 A1001","to":["a@example.com","b@example.com"]}`,
	`{"passengers":[{"first_name":"Li","last_name":"Wei","dob":"1990-01-02"}],"nested":{"a":{"b":[1,2,3]}}}`,
	`{"big":12345678901234567890,"exp":1e10,"neg":-0.25,"zero":-0}`,
	`  {"spaced" : "yes" }  `,
	`{}`,
	`{"a":1,"a":2}`,      // a name twice: encoding/json keeps the last
	"{\"bad\":\"\xff\"}", // invalid UTF-8: U+FFFD
	`{"lone":"\ud800"}`,  // a lone surrogate: U+FFFD
	`{"huge":1e999}`,     // beyond float64: not arguments
	`null`,               // encoding/json leaves the map nil
	`[1,2]`, `"text"`, `42`, ``, `{`, `{"a":1} trailing`, `{"a":1}{"b":2}`,
	`A1001`,
}

func TestDecodeObjectAsEncodingJSON(t *testing.T) {
	for _, s := range argsSamples {
		checkAsEncodingJSON(t, s)
	}
}

// checkAsEncodingJSON fails t unless decodeObject reads s as
// encoding/json's Unmarshal into a map does.
func checkAsEncodingJSON(t *testing.T, s string) {
	t.Helper()
	var want map[string]any
	wantOK := json.Unmarshal([]byte(s), &want) == nil
	got, ok := decodeObject(s)
	if ok != wantOK || ok && !reflect.DeepEqual(got, want) {
		t.Errorf("decodeObject(%q) = %#v, %v; encoding/json: %#v, %v", s, got, ok, want, wantOK)
	}
}

// FuzzDecodeObject holds decodeObject to encoding/json on any text.
func FuzzDecodeObject(f *testing.F) {
	for _, s := range argsSamples {
		f.Add(s)
	}
	f.Fuzz(checkAsEncodingJSON)
}

// BenchmarkDecodeArgs compares decodeObject with its baseline,
// encoding/json's Unmarshal into a map, on the samples above that both
// read.
func BenchmarkDecodeArgs(b *testing.B) {
	samples := argsSamples[:6]
	b.Run("encoding-json", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			for _, s := range samples {
				var m map[string]any
				_ = json.Unmarshal([]byte(s), &m)
			}
		}
	})
	b.Run("decodeObject", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			for _, s := range samples {
				decodeObject(s)
			}
		}
	})
}
