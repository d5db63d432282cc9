package guard

import (
	"testing"

	"cel.dev/cel-go/common/types"
)

// FuzzScanJSON keeps the argument scanner in agreement with the decoder it
// stands in for: whatever it reads, encoding/json reads alike.
func FuzzScanJSON(f *testing.F) {
	for _, s := range []string{`{}`, `[]`, `{"a":1,"b":[1,2.5,-3e2,"x",true,false,null],"c":{"d":"é"}}`, `{"a":"\u00e9\n"}`,
		`{"a":1,"a":2}`, `{"n":99999999999999999999}`, `{"n":1e999}`, `[1,]`, `{"a" 1}`, " {\"a\":\"x\"} ", "{\"a\":\"\xff\"}", `[[[[[]]]]]`} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		fast, ok := scanJSONValue(s)
		if !ok {
			return
		}
		v, ok := decodeJSON(s)
		if !ok {
			t.Fatalf("the scanner read %q, encoding/json did not", s)
		}
		if slow := celValue(v); fast.Equal(slow) != types.True {
			t.Fatalf("%q: scanner %v, decoder %v", s, fast, slow)
		}
	})
}

func BenchmarkArgsValue(b *testing.B) {
	b.ReportAllocs()
	for b.Loop() {
		argsValue(`{"order_id":"#W7","reason":"no longer needed"}`)
	}
}
