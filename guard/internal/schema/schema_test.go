package schema

import (
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"testing"
)

const returnSchema = `{
  "type": "object",
  "properties": {
    "order_id": {"type": "string"},
    "reason":   {"type": "string", "enum": ["damaged", "wrong_item", "no_longer_needed"]},
    "quantity": {"type": "integer", "minimum": 1},
    "items":    {"type": "array", "items": {"type": "string"}},
    "address":  {"type": "object", "properties": {"city": {"type": "string"}}, "required": ["city"], "additionalProperties": false},
    "note":     {"type": ["string", "null"]}
  },
  "required": ["order_id", "reason"]
}`

func mustCompile(t testing.TB, raw string) *Schema {
	t.Helper()
	s, err := Compile(json.RawMessage(raw))
	if err != nil {
		t.Fatalf("Compile(%s): %v", raw, err)
	}
	return s
}

// check runs Validate and compares its error with want: "" for none, else
// the whole message.
func check(t *testing.T, s *Schema, args, want string) {
	t.Helper()
	err := s.Validate(args)
	switch {
	case want == "" && err != nil:
		t.Errorf("Validate(%q) = %v, want nil", args, err)
	case want != "" && err == nil:
		t.Errorf("Validate(%q) = nil, want %q", args, want)
	case want != "" && err.Error() != want:
		t.Errorf("Validate(%q) = %q, want %q", args, err, want)
	}
}

// TestValidateArguments is package guard's table test of the same name,
// with whole messages.
func TestValidateArguments(t *testing.T) {
	s := mustCompile(t, returnSchema)
	tests := []struct {
		name, args, want string
	}{
		{"minimal", `{"order_id":"A1","reason":"damaged"}`, ""},
		{"all fields", `{"order_id":"A1","reason":"wrong_item","quantity":2,"items":["x"],"address":{"city":"上海"},"note":null}`, ""},
		{"unknown top-level property is fine", `{"order_id":"A1","reason":"damaged","extra":1}`, ""},
		{"missing required", `{"order_id":"A1"}`, `arguments: missing required "reason"`},
		{"enum", `{"order_id":"A1","reason":"bored"}`, "reason: bored is not one of [damaged wrong_item no_longer_needed]"},
		{"integer", `{"order_id":"A1","reason":"damaged","quantity":1.5}`, "quantity: want integer, got number"},
		{"minimum", `{"order_id":"A1","reason":"damaged","quantity":0}`, "quantity: 0 is below the minimum 1"},
		{"array items", `{"order_id":"A1","reason":"damaged","items":[1]}`, "items[0]: want string, got number"},
		{"nested required", `{"order_id":"A1","reason":"damaged","address":{}}`, `address: missing required "city"`},
		{"additionalProperties false", `{"order_id":"A1","reason":"damaged","address":{"city":"x","zip":"1"}}`, `address: unknown property "zip"`},
		{"type list", `{"order_id":"A1","reason":"damaged","note":3}`, "note: want string or null, got number"},
		{"not JSON", `{"order_id":`, "not valid JSON: unexpected EOF after offset 12"},
		{"trailing data", `{"order_id":"A1","reason":"damaged"} {}`, "not valid JSON: trailing data after the object"},
		{"not an object", `["A1"]`, "arguments: want a JSON object, got array"},
		{"empty means no arguments", ``, `arguments: missing required "order_id"`},
		{"white space means no arguments", " \t\n", `arguments: missing required "order_id"`},
		{"invalid UTF-8", "{\"order_id\":\"\xff\",\"reason\":\"damaged\"}", "not valid JSON: the arguments are not valid UTF-8"},
		{"duplicate name", `{"order_id":"A1","reason":"damaged","quantity":2,"quantity":"2"}`, `arguments: duplicate property "quantity"`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) { check(t, s, tt.args, tt.want) })
	}
}

func TestCatchAllAndBadSchema(t *testing.T) {
	catchAll := mustCompile(t, `{"type":"object","properties":{"__arg1":{"type":"string"}},"required":["__arg1"]}`)
	for _, args := range []string{"Oslo", "", "\xff", `{"x":1}`} {
		if err := catchAll.Validate(args); err != nil {
			t.Errorf("catch-all schema rejected %q: %v", args, err)
		}
	}
	if _, err := Compile(json.RawMessage(`{"type":`)); err == nil || !strings.HasPrefix(err.Error(), "tool schema is not valid JSON: ") {
		t.Errorf("bad schema: %v", err)
	}
}

func TestCompileErrors(t *testing.T) {
	deep := strings.Repeat(`{"items":`, 66) + `{}` + strings.Repeat(`}`, 66)
	ok := strings.Repeat(`{"items":`, 64) + `{}` + strings.Repeat(`}`, 64)
	tests := []struct {
		name, schema, want string
	}{
		{"not JSON", `{"type":`, "tool schema is not valid JSON: unexpected end of JSON input"},
		{"empty", ``, "tool schema is not valid JSON: unexpected end of JSON input"},
		{"keyword of the wrong type", `{"minimum":"1"}`, "tool schema is not valid JSON: json: cannot unmarshal string into Go struct field schemaNode.minimum of type float64"},
		{"nested keyword of the wrong type", `{"properties":{"a":{"required":"a"}}}`, "tool schema is not valid JSON: json: cannot unmarshal string into Go struct field schemaNode.properties.required of type []string"},
		{"bad pattern", `{"properties":{"a":{"pattern":"("}}}`, "tool schema: pattern \"(\": error parsing regexp: missing closing ): `(`"},
		{"first bad pattern by name", `{"properties":{"b":{"pattern":"("},"a":{"pattern":"["}}}`, "tool schema: pattern \"[\": error parsing regexp: missing closing ]: `[`"},
		{"negative minItems", `{"minItems":-1}`, "tool schema: minItems and maxItems are at least 0"},
		{"negative maxItems", `{"items":{"maxItems":-1}}`, "tool schema: minItems and maxItems are at least 0"},
		{"too deep", deep, "tool schema nests too deeply"},
		{"deep enough", ok, ""},
		{"unknown keywords", `{"type":"object","$schema":"x","oneOf":[1],"format":"date","minLength":"x"}`, ""},
		{"null", `null`, ""},
		{"null property", `{"properties":{"a":null}}`, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := Compile(json.RawMessage(tt.schema))
			switch {
			case tt.want == "" && err != nil:
				t.Errorf("Compile = %v, want nil", err)
			case tt.want != "" && (err == nil || err.Error() != tt.want):
				t.Errorf("Compile = %v, want %q", err, tt.want)
			}
		})
	}
}

// TestKeywords holds a table per keyword.
func TestKeywords(t *testing.T) {
	type c struct{ args, want string }
	tests := []struct {
		keyword, schema string
		cases           []c
	}{
		{"type", `{"properties":{"x":{"type":"string"}}}`, []c{
			{`{"x":"a"}`, ""},
			{`{"x":1}`, "x: want string, got number"},
			{`{"x":true}`, "x: want string, got boolean"},
			{`{"x":null}`, "x: want string, got null"},
			{`{"x":[]}`, "x: want string, got array"},
			{`{"x":{}}`, "x: want string, got object"},
			{`{}`, ""},
		}},
		{"type integer", `{"properties":{"x":{"type":"integer"}}}`, []c{
			{`{"x":1}`, ""},
			{`{"x":-0}`, ""},
			{`{"x":1.0}`, ""},
			{`{"x":1e2}`, ""},
			{`{"x":1.5}`, "x: want integer, got number"},
			{`{"x":1e400}`, "x: want integer, got number"},
			{`{"x":"1"}`, "x: want integer, got string"},
		}},
		{"type number", `{"properties":{"x":{"type":"number"}}}`, []c{
			{`{"x":1.5}`, ""},
			{`{"x":1e400}`, ""},
			{`{"x":"1"}`, "x: want number, got string"},
		}},
		{"type list", `{"properties":{"x":{"type":["integer","null"]}}}`, []c{
			{`{"x":1}`, ""},
			{`{"x":null}`, ""},
			{`{"x":0.5}`, "x: want integer or null, got number"},
		}},
		{"type list with others", `{"properties":{"x":{"type":["boolean",7,"array"]}}}`, []c{
			{`{"x":false}`, ""},
			{`{"x":[1]}`, ""},
			{`{"x":{}}`, "x: want boolean or array, got object"},
		}},
		{"unknown type", `{"properties":{"x":{"type":"str"}}}`, []c{
			{`{"x":"a"}`, "x: want str, got string"},
		}},
		{"type of the arguments", `{"type":"array"}`, []c{
			{`{}`, "arguments: want array, got object"},
			{``, "arguments: want array, got object"},
			{`[]`, "arguments: want a JSON object, got array"},
		}},
		{"properties", `{"properties":{"a":{"properties":{"b":{"type":"integer"}}}}}`, []c{
			{`{"a":{"b":1}}`, ""},
			{`{"a":{"b":"x"}}`, "a.b: want integer, got string"},
			{`{"a":"not an object"}`, ""},
			{`{"a":{"c":"x"}}`, ""},
		}},
		{"escaped names", `{"properties":{"a_b":{"type":"integer"}},"required":["a_b"]}`, []c{
			{`{"a\u005fb":1}`, ""},
			{`{"a\u005fb":"x"}`, "a_b: want integer, got string"},
			{`{"a_b":1,"a\u005fb":1}`, `arguments: duplicate property "a_b"`},
		}},
		{"required", `{"required":["b","a","b"]}`, []c{
			{`{"a":1,"b":2}`, ""},
			{`{"a":1}`, `arguments: missing required "b"`},
			{`{}`, `arguments: missing required "b"`},
			{`{"b":null}`, `arguments: missing required "a"`},
		}},
		{"required before a property's fault", `{"properties":{"a":{"type":"string"}},"required":["z"]}`, []c{
			{`{"a":1}`, `arguments: missing required "z"`},
		}},
		{"enum of strings", `{"properties":{"x":{"enum":["a","b\"c","é"]}}}`, []c{
			{`{"x":"a"}`, ""},
			{`{"x":"b\"c"}`, ""},
			{`{"x":"\u00e9"}`, ""},
			{`{"x":"\u0061"}`, ""},
			{`{"x":"A"}`, `x: A is not one of [a b"c é]`},
			{`{"x":1}`, `x: 1 is not one of [a b"c é]`},
			{`{"x":null}`, `x: <nil> is not one of [a b"c é]`},
		}},
		{"enum of numbers, by value", `{"properties":{"x":{"enum":[1,2.5,-0]}}}`, []c{
			{`{"x":1}`, ""},
			{`{"x":1.0}`, ""},
			{`{"x":1e0}`, ""},
			{`{"x":25e-1}`, ""},
			{`{"x":0}`, ""},
			{`{"x":3}`, "x: 3 is not one of [1 2.5 -0]"},
			{`{"x":"1"}`, "x: 1 is not one of [1 2.5 -0]"},
		}},
		{"enum of literals", `{"properties":{"x":{"enum":[true,null]}}}`, []c{
			{`{"x":true}`, ""},
			{`{"x":null}`, ""},
			{`{"x":false}`, "x: false is not one of [true <nil>]"},
		}},
		{"enum of composites, by canonical JSON", `{"properties":{"x":{"enum":[{"a":1,"b":[1,"x"]},[1,2]],"items":{"type":"integer"}}}}`, []c{
			{`{"x":{"b":[1.0,"x"],"a":1}}`, ""},
			{`{"x":[1,2]}`, ""},
			{`{"x":[ 1, 2.0 ]}`, ""},
			{`{"x":[2,1]}`, `x: [2,1] is not one of [map[a:1 b:[1 x]] [1 2]]`},
			{`{"x":{"a":1}}`, `x: {"a":1} is not one of [map[a:1 b:[1 x]] [1 2]]`},
			{`{"x":{"a":1,"a":1}}`, `x: duplicate property "a"`},
		}},
		{"enum of composites, and the rest of the schema", `{"properties":{"x":{"enum":[[1,2.5]],"items":{"type":"integer"}}}}`, []c{
			{`{"x":[1,2.5]}`, "x[1]: want integer, got number"},
		}},
		{"empty enum", `{"properties":{"x":{"enum":[]}}}`, []c{
			{`{"x":"anything"}`, ""},
		}},
		{"items", `{"properties":{"x":{"items":{"type":"string","pattern":"^a"}}}}`, []c{
			{`{"x":[]}`, ""},
			{`{"x":["a","ab"]}`, ""},
			{`{"x":["a",1,"b"]}`, "x[1]: want string, got number"},
			{`{"x":["a","b",1]}`, `x[1]: "b" does not match the pattern ^a`},
			{`{"x":[[1]]}`, "x[0]: want string, got array"},
		}},
		{"nested items", `{"properties":{"x":{"items":{"items":{"type":"null"}}}}}`, []c{
			{`{"x":[[null],[null,0]]}`, "x[1][1]: want null, got number"},
		}},
		{"additionalProperties false", `{"properties":{"a":{}},"required":["r"],"additionalProperties":false}`, []c{
			{`{"a":1,"r":2}`, `arguments: unknown property "r"`},
			{`{"a":1}`, `arguments: missing required "r"`},
			{`{"z":1,"b":2}`, `arguments: missing required "r"`},
		}},
		{"additionalProperties not false", `{"properties":{"a":{}},"additionalProperties":{"type":"string"}}`, []c{
			{`{"b":1}`, ""},
		}},
		{"minimum and maximum", `{"properties":{"x":{"minimum":-1.5,"maximum":10}}}`, []c{
			{`{"x":-1.5}`, ""},
			{`{"x":10}`, ""},
			{`{"x":1e1}`, ""},
			{`{"x":-2}`, "x: -2 is below the minimum -1.5"},
			{`{"x":10.5}`, "x: 10.5 is above the maximum 10"},
			{`{"x":1e400}`, "x: 1e400 is above the maximum 10"},
			{`{"x":"100"}`, ""},
		}},
		{"minItems and maxItems", `{"properties":{"x":{"minItems":1,"maxItems":2,"items":{"type":"string"}}}}`, []c{
			{`{"x":["a"]}`, ""},
			{`{"x":[]}`, "x: 0 items, fewer than the minimum 1"},
			{`{"x":["a","b","c"]}`, "x: 3 items, more than the maximum 2"},
			{`{"x":[1,2,3]}`, "x: 3 items, more than the maximum 2"},
			{`{"x":"abc"}`, ""},
		}},
		{"pattern", `{"properties":{"x":{"pattern":"[0-9]+"}}}`, []c{
			{`{"x":"a1b"}`, ""},
			{`{"x":"ab"}`, `x: "ab" does not match the pattern [0-9]+`},
			{`{"x":"\u0031"}`, ""},
			{`{"x":12}`, ""},
		}},
		{"catch-all with other properties", `{"properties":{"__arg1":{"type":"string"},"b":{}}}`, []c{
			{`{"__arg1":1}`, "__arg1: want string, got number"},
		}},
	}
	for _, tt := range tests {
		t.Run(tt.keyword, func(t *testing.T) {
			s := mustCompile(t, tt.schema)
			for _, c := range tt.cases {
				check(t, s, c.args, c.want)
			}
		})
	}
}

// TestFirstFault pins the order in which Validate reports: the text before
// the schema, and in an object its first missing required name, then the
// fault of its smallest name, whatever the order of the names.
func TestFirstFault(t *testing.T) {
	s := mustCompile(t, returnSchema)
	tests := []struct{ name, args, want string }{
		{"syntax after a schema fault", `{"order_id":1,"reason":"x" x}`, "not valid JSON: invalid character 'x' after object value (expecting ',' or '}') after offset 27"},
		{"syntax deep after a schema fault", `{"order_id":1,"extra":[{"a":tru]}`, "not valid JSON: invalid character ']' in literal true (expecting 'e') after offset 31"},
		{"trailing data after a schema fault", `{"order_id":1}x`, "not valid JSON: trailing data after the object"},
		{"trailing bracket", `{"order_id":"A1","reason":"damaged"}]`, "not valid JSON: trailing data after the object"},
		{"trailing data after a non-object", `[1] 2`, "not valid JSON: trailing data after the object"},
		{"required before properties", `{"quantity":0,"order_id":"A1"}`, `arguments: missing required "reason"`},
		{"smallest name first", `{"reason":"bored","order_id":1}`, "order_id: want string, got number"},
		{"smallest name first, reversed", `{"order_id":1,"reason":"bored"}`, "order_id: want string, got number"},
		{"nested", `{"reason":"damaged","order_id":"A1","address":{"zip":1},"items":[2]}`, `address: missing required "city"`},
		{"duplicate inside an unchecked value", `{"order_id":"A1","reason":"damaged","extra":[{"a":{"0":[1,{"b":1,"b":2}]}}]}`, `extra[0].a.0[1]: duplicate property "b"`},
		{"duplicate inside a checked value", `{"order_id":"A1","reason":"damaged","address":{"city":"x","city":"y"}}`, `address: duplicate property "city"`},
		{"lone surrogate is U+FFFD", `{"order_id":"\ud800","reason":"damaged"}`, ""},
		{"lone surrogates collide", `{"order_id":"A1","reason":"damaged","\ud800":1,"\udbff":2}`, "arguments: duplicate property \"\ufffd\""},
		{"not a value", `{"order_id":"A1","reason":}`, "not valid JSON: invalid character '}' at start of value after offset 26"},
		{"control character", "{\"order_id\":\"A\x01\"}", `not valid JSON: invalid character '\x01' in string (expecting non-control character) after offset 14`},
		{"leading BOM", "\ufeff{}", "not valid JSON: invalid character '\\ufeff' at start of value after offset 0"},
		{"a name that is not a string", `{1:2}`, "not valid JSON: object member name must be a string after offset 1"},
		{"a literal cut short", `{"order_id":"A1","reason":"damaged","note":nul}`, "not valid JSON: invalid character '}' in literal null (expecting 'l') after offset 46"},
		{"a comma before the end", `{"order_id":"A1","reason":"damaged",}`, "not valid JSON: invalid character ',' at start of value after offset 35"},
		{"an array closed as an object", `{"order_id":"A1","reason":"damaged","items":["a"}`, "not valid JSON: invalid character '}' after array element (expecting ',' or ']') after offset 48"},
		{"non-JSON space", "\v{}", `not valid JSON: invalid character '\v' at start of value after offset 0`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) { check(t, s, tt.args, tt.want) })
	}
}

func TestManyRequired(t *testing.T) {
	var names []string
	for i := range 70 {
		names = append(names, fmt.Sprintf("%q", fmt.Sprintf("r%02d", i)))
	}
	s := mustCompile(t, `{"required":[`+strings.Join(names, ",")+`]}`)
	var all []string
	for _, n := range names {
		all = append(all, n+":1")
	}
	check(t, s, "{"+strings.Join(all, ",")+"}", "")
	check(t, s, "{"+strings.Join(append(all[:65:65], all[66:]...), ",")+"}", `arguments: missing required "r65"`)
	check(t, s, "{"+strings.Join(all[1:], ",")+"}", `arguments: missing required "r00"`)
}

func TestDepth(t *testing.T) {
	s := mustCompile(t, `{}`)
	nest := func(n int) string { return `{"a":` + strings.Repeat("[", n-1) + strings.Repeat("]", n-1) + "}" }
	if err := s.Validate(nest(10000)); err != nil {
		t.Errorf("10000 levels: %v", err)
	}
	err := s.Validate(nest(10001))
	if !errors.Is(err, ErrSyntax) || !strings.Contains(err.Error(), "exceeded max depth") {
		t.Errorf("10001 levels: %v", err)
	}
	if len(err.Error()) > 200 {
		t.Errorf("the message runs to %d bytes", len(err.Error()))
	}
}

func TestErrors(t *testing.T) {
	s := mustCompile(t, returnSchema)
	var e *Error
	if err := s.Validate(`{"order_id":1,"reason":"damaged"}`); !errors.As(err, &e) || e.Path != "order_id" || errors.Is(err, ErrSyntax) {
		t.Errorf("schema fault: %#v", err)
	}
	if err := s.Validate(`{`); !errors.As(err, &e) || e.Path != "" || !errors.Is(err, ErrSyntax) {
		t.Errorf("syntax fault: %#v", err)
	}
	if err := s.Validate(`{"a":1,"a":1}`); !errors.Is(err, ErrDuplicateName) || errors.Is(err, ErrSyntax) {
		t.Errorf("duplicate: %#v", err)
	}
	// The error of empty arguments is the caller's to keep.
	err := s.Validate("")
	errors.As(err, &e)
	e.Path = "changed"
	if got := s.Validate("").Error(); got != `arguments: missing required "order_id"` {
		t.Errorf("empty arguments after a change to an earlier error: %s", got)
	}
}

func TestZeroSchema(t *testing.T) {
	var s Schema
	check(t, &s, `{"a":[1,{"b":null}]}`, "")
	check(t, &s, ``, "")
	check(t, &s, `[]`, "arguments: want a JSON object, got array")
}

// TestValidAllocatesNothing pins the hot path: valid arguments without
// escapes cost no allocation.
func TestValidAllocatesNothing(t *testing.T) {
	if raceOn {
		t.Skip("the race detector's sync.Pool drops readers")
	}
	s := mustCompile(t, returnSchema)
	for _, args := range []string{
		`{"order_id":"A1","reason":"damaged","quantity":2}`,
		`{"order_id":"A1002","reason":"damaged","quantity":1,"items":["电热水壶"],"address":{"city":"北京"},"note":"外包装破损，内胆有凹痕"}`,
		`{"order_id":"A1","reason":"damaged","note":"a \"quoted\" note","extra":{"deep":[1,2,{"x":null}]}}`,
		largeArgs(1 << 10),
		largeArgs(64 << 10),
	} {
		if n := testing.AllocsPerRun(100, func() {
			if err := s.Validate(args); err != nil {
				t.Fatal(err)
			}
		}); n != 0 {
			t.Errorf("Validate(%.60q...) allocates %v times", args, n)
		}
	}
}
