package trace

import (
	"bytes"
	"encoding/json"
	"errors"
	"os"
	"testing"
)

func TestUniqueKeys(t *testing.T) {
	tests := []struct {
		name, in, want string // want is the error, "" for none
	}{
		{"flat", `{"a":1,"b":2}`, ""},
		{"same key in sibling objects", `[{"a":1},{"a":2}]`, ""},
		{"same key at two levels", `{"a":{"a":1}}`, ""},
		{"key equal to a value", `{"a":"a","b":"a"}`, ""},
		{"scalars", `"x"`, ""},
		{"top level", `{"a":1,"a":2}`, `duplicate key "a"`},
		{"nested", `{"x":[{"y":{"k":1,"k":2}}]}`, `duplicate key "k" in x[0].y`},
		{"escaped", `{"role":"user","\u0072ole":"assistant"}`, `duplicate key "role"`},
		{"escaped quote in key", `{"a\"b":1,"a\"b":2}`, `duplicate key "a\"b"`},
		{"backslash before the closing quote", `{"a\\":1,"b":{"a\\":2,"a\\":3}}`, `duplicate key "a\\" in b`},
		{"Chinese keys", `{"角色":"用户","角色":"助手"}`, `duplicate key "角色"`},
		{"many keys", `{"k0":0,"k1":1,"k2":2,"k3":3,"k4":4,"k5":5,"k6":6,"k7":7,"k8":8,"k9":9,"k10":0,"k11":1,"k12":2,"k13":3,"k14":4,"k15":5,"k16":6,"k17":7,"k3":3}`, `duplicate key "k3"`},
		{"white space", " { \"a\" : 1 , \"a\" : [ ] } ", `duplicate key "a"`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if !json.Valid([]byte(tt.in)) {
				t.Fatalf("test input %s is not valid JSON", tt.in)
			}
			err := UniqueKeys([]byte(tt.in))
			got := ""
			if err != nil {
				got = err.Error()
				if !errors.Is(err, ErrDuplicateKey) {
					t.Errorf("%v does not match ErrDuplicateKey", err)
				}
			}
			if got != tt.want {
				t.Errorf("UniqueKeys(%s) = %q, want %q", tt.in, got, tt.want)
			}
		})
	}
}

// FuzzUniqueKeys checks UniqueKeys against a decoder that keeps every key:
// valid JSON has a duplicate key exactly when UniqueKeys says so.
func FuzzUniqueKeys(f *testing.F) {
	for _, s := range []string{`{"a":1,"a":2}`, `{"a":{"b":[1,{"c":1,"c":2}]}}`, `{"\u0061":1,"a":2}`, `[{"a":1},{"a":1}]`, `{"a\\":1}`, `"x"`, `{}`} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, in []byte) {
		if !json.Valid(in) {
			_ = UniqueKeys(in) // must not panic
			return
		}
		got := UniqueKeys(in) != nil
		if want := hasDuplicate(t, in); got != want {
			t.Fatalf("UniqueKeys(%q) found a duplicate: %v, want %v", in, got, want)
		}
	})
}

// hasDuplicate decodes in token by token and reports a key seen twice in
// one object.
func hasDuplicate(t *testing.T, in []byte) bool {
	dec := json.NewDecoder(bytes.NewReader(in))
	type frame struct {
		obj    bool
		keys   map[string]bool
		expect bool // the next string token in this object is a key
	}
	var stack []*frame
	for {
		tok, err := dec.Token()
		if err != nil {
			return false
		}
		var top *frame
		if len(stack) > 0 {
			top = stack[len(stack)-1]
		}
		switch v := tok.(type) {
		case json.Delim:
			switch v {
			case '{':
				if top != nil && top.obj {
					top.expect = true
				}
				stack = append(stack, &frame{obj: true, keys: map[string]bool{}, expect: true})
				continue
			case '[':
				if top != nil && top.obj {
					top.expect = true
				}
				stack = append(stack, &frame{})
				continue
			default:
				stack = stack[:len(stack)-1]
				continue
			}
		case string:
			if top != nil && top.obj && top.expect {
				if top.keys[v] {
					return true
				}
				top.keys[v] = true
				top.expect = false
				continue
			}
		}
		if top != nil && top.obj {
			top.expect = true
		}
	}
}

// BenchmarkUniqueKeys measures the duplicate-key check on a golden trace
// line against the decoding the reader does anyway (BenchmarkDecodeLine).
func BenchmarkUniqueKeys(b *testing.B) {
	line := benchLine(b)
	b.SetBytes(int64(len(line)))
	b.ReportAllocs()
	for b.Loop() {
		if err := UniqueKeys(line); err != nil {
			b.Fatal(err)
		}
	}
}

func BenchmarkDecodeLine(b *testing.B) {
	line := benchLine(b)
	b.SetBytes(int64(len(line)))
	b.ReportAllocs()
	for b.Loop() {
		var l jsonlLine
		if err := json.Unmarshal(line, &l); err != nil {
			b.Fatal(err)
		}
	}
}

func benchLine(b *testing.B) []byte {
	data, err := os.ReadFile("testdata/golden.jsonl")
	if err != nil {
		b.Skip(err)
	}
	var longest []byte
	for line := range bytes.Lines(data) {
		if len(line) > len(longest) {
			longest = bytes.TrimSpace(line)
		}
	}
	return longest
}
