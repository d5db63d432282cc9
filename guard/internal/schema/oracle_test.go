package schema

import (
	"encoding/json"
	"errors"
	"io"
	"strings"
	"testing"
)

// The schemas the oracle tests and FuzzValidate hold Validate and package
// guard's validator (old_test.go) equal on.
var oracleSchemas = []string{
	returnSchema,
	`{"type":"object"}`,
	`{"type":"object","properties":{"a":{"type":["integer","null"],"minimum":0}},"additionalProperties":false}`,
	`{"properties":{"n":{"enum":[1,2.5,"x",null,true,[1,"a"],{"k":[0.5]}]},"l":{"type":"array","minItems":1,"maxItems":3,"items":{"type":"string","pattern":"^[a-z]+$"}}},"required":["n"]}`,
	`{"properties":{"o":{"type":"object","properties":{"p":{"type":"object","properties":{"q":{"type":"number","maximum":10}},"required":["q"]}},"additionalProperties":false},"a":{"items":{"items":{"type":["boolean","null"]}}}}}`,
	`{"type":"string"}`,
}

var oracleCache Cache // for the schemas of agree: the old compiler has its own

// agree checks that Validate and the old validator agree on args: both
// accept, or both reject with a message, but for the deliberate
// differences the package documentation lists, each checked here by
// other means than Validate's.
func agree(t *testing.T, raw, args string) {
	t.Helper()
	s, err := oracleCache.Compile(json.RawMessage(raw))
	if err != nil {
		t.Fatal(err)
	}
	o, err := oldCompileSchema(json.RawMessage(raw))
	if err != nil {
		t.Fatal(err)
	}
	got, want := s.Validate(args), o.validateArgs(args)
	switch {
	case got != nil && want != nil:
		if got.Error() == "" || want.Error() == "" {
			t.Errorf("schema %s, args %q: an empty message: new %q, old %q", raw, args, got, want)
		}
		if !sameMessage(got, want, args) {
			t.Errorf("schema %s, args %q: new says %q, old says %q", raw, args, got, want)
		}
	case got == nil && want == nil:
	case got != nil && errors.Is(got, ErrDuplicateName) && hasDuplicateName(args):
		// The old validator read the last of the two values.
	case got != nil && errors.Is(got, ErrSyntax) && strings.Contains(got.Error(), "trailing data") && closesAfterValue(args):
		// The old validator took a stray "]" or "}" for the end of input.
	case got == nil && strings.Contains(want.Error(), "is not one of") && o.validateArgs(numbersAsFloats(args)) == nil:
		// The old validator compared numbers by their text.
	default:
		t.Errorf("schema %s, args %q: new says %v, old says %v", raw, args, got, want)
	}
}

// sameMessage reports whether got, Validate's error, says what want, the
// old validator's, says: the same words where the arguments are JSON and
// the same faults of the text otherwise.
func sameMessage(got, want error, args string) bool {
	g, w := got.Error(), want.Error()
	switch {
	case errors.Is(got, ErrDuplicateName):
		// A name twice, or a text the old validator found a fault in
		// before it came to the name.
		return hasDuplicateName(args) || strings.HasPrefix(w, "not valid JSON: ")
	case errors.Is(got, ErrSyntax):
		// jsontext and encoding/json word a fault of the text differently.
		return strings.HasPrefix(w, "not valid JSON: ") || strings.Contains(g, "trailing data") && closesAfterValue(args)
	case strings.HasPrefix(w, "want a JSON object"):
		return g == "arguments: "+w
	case strings.Contains(g, " is not one of ") && (strings.Contains(g, ": [") || strings.Contains(g, ": {")):
		// A composite value is printed as JSON, not as Go prints a map.
		return strings.Contains(w, " is not one of ")
	}
	return g == w
}

// hasDuplicateName reports whether an object in args has a name twice, as
// encoding/json's tokenizer reads it.
func hasDuplicateName(args string) bool {
	dec := json.NewDecoder(strings.NewReader(args))
	type level struct {
		names  map[string]bool
		object bool
		name   bool // the next token of this object is a name
	}
	var stack []level
	for {
		tok, err := dec.Token()
		if err != nil {
			return false
		}
		if n := len(stack); n > 0 && stack[n-1].object {
			top := &stack[n-1]
			if d, ok := tok.(json.Delim); !ok || d != '}' {
				if top.name {
					name := tok.(string)
					if top.names[name] {
						return true
					}
					top.names[name] = true
				}
				top.name = !top.name
			}
		}
		switch tok {
		case json.Delim('{'):
			stack = append(stack, level{names: map[string]bool{}, object: true, name: true})
		case json.Delim('['):
			stack = append(stack, level{})
		case json.Delim('}'), json.Delim(']'):
			stack = stack[:len(stack)-1]
			if n := len(stack); n > 0 && stack[n-1].object {
				stack[n-1].name = true
			}
		}
	}
}

// closesAfterValue reports whether args are one JSON value, then white
// space, then a "]" or "}".
func closesAfterValue(args string) bool {
	dec := json.NewDecoder(strings.NewReader(args))
	var v any
	if dec.Decode(&v) != nil {
		return false
	}
	rest := strings.TrimLeft(args[dec.InputOffset():], " \t\r\n")
	return rest != "" && (rest[0] == ']' || rest[0] == '}')
}

// numbersAsFloats is args with every number written as encoding/json
// writes a float64, as the old validator wrote the numbers of an enum.
func numbersAsFloats(args string) string {
	dec := json.NewDecoder(strings.NewReader(args))
	var v any
	if err := dec.Decode(&v); err != nil {
		return args
	}
	if _, err := dec.Token(); err != io.EOF {
		return args
	}
	b, err := json.Marshal(v)
	if err != nil {
		return args
	}
	return string(b)
}

// oracleArgs are arguments for the oracle test, beside FuzzValidate's
// corpus.
var oracleArgs = []string{
	``, ` `, "\u00a0", `{}`, `[]`, `null`, `"x"`, `1`, `{`, `}`, `{}}`, `{}]`, `{} {}`, `{}x`, "{}\f", "\v{}", "\ufeff{}",
	`{"order_id":"A1","reason":"damaged"}`,
	`{"order_id":"A1","reason":"wrong_item","quantity":2,"items":["x"],"address":{"city":"上海"},"note":null}`,
	`{"order_id":"A1","reason":"damaged","quantity":1.0}`, `{"order_id":"A1","reason":"damaged","quantity":1e400}`,
	`{"order_id":"A1","reason":"damaged","quantity":1e-400}`, `{"order_id":"A1","reason":"damaged","quantity":-0}`,
	`{"order_id":"A1","order_id":1,"reason":"damaged"}`, `{"order_id":"\u0041","reason":"dam\u0061ged"}`,
	`{"order_id":"\ud800","reason":"damaged"}`, `{"order\u005fid":"A1","reason":"damaged"}`,
	`{"order_id":"A1","reason":"damaged","address":{"city":"x","zip":1}}`, `{"order_id":"A1","reason":"damaged","address":[]}`,
	`{"order_id":"A1","reason":"damaged","items":[1,"x",{}]}`, `{"order_id":"A1","reason":"damaged","note":{"a":[1,2,{"b":null}]}}`,
	`{"a":1}`, `{"a":-1}`, `{"a":null}`, `{"a":1.5}`, `{"a":0,"b":1}`, `{"a":1e2}`, `{"a":1E+2}`,
	`{"n":1}`, `{"n":1.0}`, `{"n":2.50}`, `{"n":"x"}`, `{"n":"y"}`, `{"n":null}`, `{"n":true}`, `{"n":false}`,
	`{"n":[1,"a"]}`, `{"n":[1.0,"a"]}`, `{"n":["a",1]}`, `{"n":{"k":[0.5]}}`, `{"n":{"k":[5e-1]}}`, `{"n":{"k":[0.5],"k":[0.5]}}`,
	`{"n":1,"l":[]}`, `{"n":1,"l":["ab"]}`, `{"n":1,"l":["ab","c","d","e"]}`, `{"n":1,"l":["A"]}`, `{"n":1,"l":["a",1]}`,
	`{"o":{"p":{"q":10}}}`, `{"o":{"p":{"q":11}}}`, `{"o":{"p":{}}}`, `{"o":{"r":1}}`, `{"o":{"p":{"q":"1"}},"a":[[true,null,1]]}`,
	`{"a":[[true],[null],[]]}`, `{"a":[[true],[0]]}`,
	`{"a":"` + strings.Repeat("x", 5000) + `"}`,
	`{"a":` + strings.Repeat("[", 9999) + strings.Repeat("]", 9999) + `}`,
	`{"a":` + strings.Repeat("[", 10000) + strings.Repeat("]", 10000) + `}`,
	strings.Repeat("[", 5000),
	largeArgs(1 << 10), invalidArgs(largeArgs(1 << 10)),
}

// TestDeliberateDifferences lists where Validate and the old validator
// part, on purpose (see the package documentation).
func TestDeliberateDifferences(t *testing.T) {
	tests := []struct{ schema, args, want string }{
		{returnSchema, `{"order_id":"A1","reason":"damaged","quantity":0,"quantity":2}`, `arguments: duplicate property "quantity"`},
		{returnSchema, `{"order_id":"A1","reason":"damaged"}]`, "not valid JSON: trailing data after the object"},
		{returnSchema, `{"order_id":"A1","reason":"damaged"} }`, "not valid JSON: trailing data after the object"},
		{`{"properties":{"n":{"enum":[1]}}}`, `{"n":1.0}`, ""},
		{`{"properties":{"n":{"enum":[[1]]}}}`, `{"n":[1e0]}`, ""},
	}
	for _, tt := range tests {
		s := mustCompile(t, tt.schema)
		check(t, s, tt.args, tt.want)
		o, _ := oldCompileSchema(json.RawMessage(tt.schema))
		if (o.validateArgs(tt.args) == nil) == (tt.want == "") {
			t.Errorf("the old validator agrees on %s now: %v", tt.args, o.validateArgs(tt.args))
		}
		agree(t, tt.schema, tt.args) // and agree knows why
	}
}

func TestOracle(t *testing.T) {
	for _, raw := range oracleSchemas {
		for _, args := range oracleArgs {
			agree(t, raw, args)
		}
	}
}

// TestOracleCompile holds Compile to the old compiler's errors, but for
// the name of the type encoding/json mentions.
func TestOracleCompile(t *testing.T) {
	for _, raw := range []string{
		``, `{`, `[]`, `null`, `{"type":5}`, `{"minimum":"1"}`, `{"minItems":1.5}`, `{"minItems":-1}`, `{"items":[]}`,
		`{"properties":[]}`, `{"properties":{"a":5}}`, `{"pattern":"("}`, `{"PATTERN":"("}`, `{"enum":"x"}`, `{"required":[1]}`,
		`{"properties":{"a":{"items":{"maxItems":-2}}}}`, strings.Repeat(`{"items":`, 65) + `{}` + strings.Repeat(`}`, 65),
	} {
		_, got := Compile(json.RawMessage(raw))
		_, want := oldCompileSchema(json.RawMessage(raw))
		if (got == nil) != (want == nil) || got != nil && got.Error() != strings.ReplaceAll(strings.ReplaceAll(want.Error(), "guard.oldSchemaNode", "schema.schemaNode"), "oldSchemaNode", "schemaNode") {
			t.Errorf("Compile(%s) = %v, the old compiler says %v", raw, got, want)
		}
	}
}

// FuzzValidate holds Validate and package guard's validator equal on
// accept or reject (see agree). Its corpus began as package guard's
// FuzzFastValidate and FuzzValidateArguments corpora.
func FuzzValidate(f *testing.F) {
	for _, s := range []string{
		`{"order_id":"A1","reason":"damaged"}`, `{"items":[1,2,{"a":null}]}`, `[]`, `null`, `{"a":1e400}`, "{\"order_id\":\"\xff\"}", strings.Repeat("[", 5000),
		`{"order_id":"A1","reason":"damaged","quantity":2,"items":["x"],"address":{"city":"上海"},"note":null}`,
		`{"order_id":"A1","order_id":1,"reason":"damaged"}`, `{"order_id":"A1","reason":"damaged","quantity":1.0}`, `{"order_id":"\u0041","reason":"damaged"}`,
		`{"order_id":"A1","reason":"damaged","address":{"city":"x","zip":1}}`, ` {"order_id":"A1","reason":"damaged"} `, `{}`, ``, `{"order_id":"A1","reason":"damaged"}x`,
		`{"n":[1.0,"a"],"l":["ab"]}`, `{"o":{"p":{"q":10}},"a":[[true,null]]}`,
	} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, args string) {
		for _, raw := range oracleSchemas {
			agree(t, raw, args)
		}
	})
}
