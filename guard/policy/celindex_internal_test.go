package policy

import (
	"bytes"
	"encoding/json"
	"strings"
	"testing"

	"cel.dev/cel-go/common/types"
	"cel.dev/cel-go/common/types/ref"
)

// jsonOracle decodes s as encoding/json does, integers as ints, into CEL
// values: what decodeJSONValue must agree with.
func jsonOracle(s string) (ref.Val, bool) {
	t := strings.TrimSpace(s)
	if t == "" || t[0] != '{' && t[0] != '[' {
		return nil, false
	}
	dec := json.NewDecoder(strings.NewReader(s))
	dec.UseNumber()
	var v any
	if dec.Decode(&v) != nil || dec.More() {
		return nil, false
	}
	var conv func(v any) ref.Val
	conv = func(v any) ref.Val {
		switch x := v.(type) {
		case map[string]any:
			m := make(map[ref.Val]ref.Val, len(x))
			for k, e := range x {
				m[types.String(k)] = conv(e)
			}
			return types.NewRefValMap(types.DefaultTypeAdapter, m)
		case []any:
			l := make([]ref.Val, len(x))
			for i, e := range x {
				l[i] = conv(e)
			}
			return types.NewRefValList(types.DefaultTypeAdapter, l)
		case json.Number:
			if !bytes.ContainsAny([]byte(x), ".eE") {
				if i, err := x.Int64(); err == nil {
					return types.Int(i)
				}
			}
			f, _ := x.Float64()
			return types.Double(f)
		case string:
			return types.String(x)
		case bool:
			return types.Bool(x)
		}
		return types.NullValue
	}
	return conv(v), true
}

// FuzzDecodeJSON holds the jsontext reading of arguments and results to
// encoding/json's: what one reads, the other reads alike.
func FuzzDecodeJSON(f *testing.F) {
	for _, s := range []string{`{}`, `[]`, `{"a":1,"b":[1,2.5,-3e2,"x",true,false,null],"c":{"d":"é"}}`, `{"a":"\u00e9\n"}`,
		`{"a":1,"a":2}`, `{"n":99999999999999999999}`, `[1,]`, `{"a" 1}`, " {\"a\":\"x\"} ", "{\"a\":\"\xff\"}", `[[[[[]]]]]`} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		got, ok := decodeJSONValue(s)
		want, wantOK := jsonOracle(s)
		if ok != wantOK {
			if !ok && strings.Count(s, "[")+strings.Count(s, "{") > maxDepth {
				return // nested deeper than the reader goes
			}
			t.Fatalf("%q: read %v, encoding/json read %v", s, ok, wantOK)
		}
		if ok && got.Equal(want) != types.True {
			t.Fatalf("%q: read %v, encoding/json %v", s, got, want)
		}
	})
}

func BenchmarkArgsValue(b *testing.B) {
	b.ReportAllocs()
	for b.Loop() {
		argsValue(`{"order_id":"#W7","reason":"no longer needed"}`)
	}
}
