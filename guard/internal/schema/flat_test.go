package schema

import (
	"strings"
	"testing"
	"unicode/utf8"
)

// flatSchemas are schemas of flat tools, every keyword the fast path
// judges by among them.
var flatSchemas = []string{
	returnSchema,
	`{"type":"object","properties":{"phone":{"type":"string","pattern":"^\\+?[0-9 ]{7,}$"},"channel":{"enum":["sms","email",null,true,2]},"n":{"type":"integer","minimum":0,"maximum":10}},"required":["phone"],"additionalProperties":false}`,
	`{"type":"object","properties":{"any":{},"x":{"type":"number"}}}`,
	`{}`,
}

// The fast path accepts what most calls carry and leaves everything else
// to the reader; what it accepts, the reader accepts too.
func TestAcceptsFlat(t *testing.T) {
	for _, tt := range []struct {
		schema, args string
		fast         bool // acceptsFlat says yes; else the reader decides
	}{
		{returnSchema, `{"order_id":"A1","reason":"damaged","quantity":2}`, true},
		{returnSchema, ` { "order_id" : "订单A1002" , "reason":"wrong_item" , "note" : null }` + "\n", true},
		{returnSchema, `{"order_id":"A1","reason":"damaged","quantity":2.0}`, true},   // an integer written as a float
		{returnSchema, `{"order_id":"A1","reason":"damaged","extra":{"a":1}}`, false}, // nested: the reader reads it
		{returnSchema, `{"order_id":"A1","reason":"damaged","items":["x"]}`, false},
		{returnSchema, `{"order_id":"A\u0031","reason":"damaged"}`, false}, // an escape
		{returnSchema, `{"order_id":"A1","reason":"bored"}`, false},        // not in the enum
		{returnSchema, `{"order_id":"A1"}`, false},                         // reason missing
		{returnSchema, `{"order_id":"A1","reason":"damaged","quantity":0}`, false},
		{returnSchema, `{"order_id":"A1","reason":"damaged","quantity":1.5}`, false},
		{returnSchema, `{"order_id":1,"reason":"damaged"}`, false},
		{returnSchema, `{"order_id":"A1","order_id":"A2","reason":"damaged"}`, false}, // a duplicate name
		{returnSchema, `{"order_id":"A1","reason":"damaged"}x`, false},
		{returnSchema, `{"order_id":"A1","reason":"damaged",}`, false},
		{returnSchema, `{"order_id":"A1","reason":"damaged","quantity":01}`, false},
		{returnSchema, `{"order_id":"A1","reason":"damaged","quantity":1e}`, false},
		{returnSchema, `{"order_id":"A1","reason":"damaged","note":nul}`, false},
		{returnSchema, "{\"order_id\":\"A\t1\",\"reason\":\"damaged\"}", false}, // a raw tab in a string
		{flatSchemas[1], `{"phone":"+86 138 0013 8000","channel":"sms","n":10}`, true},
		{flatSchemas[1], `{"phone":"13800138000","channel":null}`, true},
		{flatSchemas[1], `{"phone":"13800138000","channel":true}`, true},
		{flatSchemas[1], `{"phone":"13800138000","channel":false}`, false},
		{flatSchemas[1], `{"phone":"电话","channel":"sms"}`, false}, // no match of the pattern
		{flatSchemas[1], `{"phone":"13800138000","n":11}`, false},
		{flatSchemas[1], `{"phone":"13800138000","n":-1}`, false},
		{flatSchemas[1], `{"phone":"13800138000","other":1}`, false}, // closed
		{flatSchemas[2], `{"any":[1,{"b":2}]}`, false},
		{flatSchemas[2], `{"any":"随便","x":-0.5e-3,"y":"z"}`, true},
		{flatSchemas[2], `{"x":"1"}`, false},
		{flatSchemas[3], `{}`, true},
		{flatSchemas[3], `{"a":1,"b":"二","c":true}`, true},
		{flatSchemas[3], `[1]`, false},
		{flatSchemas[3], `{"a":1`, false},
	} {
		s := mustCompile(t, tt.schema)
		got := acceptsFlat(s.root, tt.args)
		if got != tt.fast {
			t.Errorf("acceptsFlat(%s) = %v, want %v", tt.args, got, tt.fast)
		}
		if err := s.read(tt.args); got && err != nil {
			t.Errorf("acceptsFlat(%s) accepted what the reader rejects: %v", tt.args, err)
		}
	}
}

func TestAcceptsFlatAllocatesNothing(t *testing.T) {
	s := mustCompile(t, flatSchemas[1])
	args := `{"phone":"+86 138 0013 8000","channel":"sms","n":3}`
	if n := testing.AllocsPerRun(100, func() { _ = s.Validate(args) }); n != 0 {
		t.Errorf("Validate of flat arguments: %v allocations, want 0", n)
	}
}

// FuzzAcceptsFlat holds the fast path to the reader: whatever it accepts,
// the reader accepts.
func FuzzAcceptsFlat(f *testing.F) {
	for _, s := range []string{
		`{"order_id":"A1","reason":"damaged","quantity":2}`, `{"phone":"13800138000","channel":"sms","n":10}`,
		`{"any":"随便","x":-0.5e-3}`, `{}`, ` {"a" : 1 , "b":null} `, `{"a":1,"a":2}`, `{"n":1E+2}`, `{"x":-}`,
	} {
		f.Add(s)
	}
	var schemas []*Schema
	for _, raw := range append(flatSchemas, oracleSchemas...) {
		schemas = append(schemas, mustCompile(f, raw))
	}
	f.Fuzz(func(t *testing.T, args string) {
		if !utf8.ValidString(args) || strings.TrimSpace(args) == "" {
			return // Validate answers these before either reads
		}
		for _, s := range schemas {
			if acceptsFlat(s.root, args) {
				if err := s.read(args); err != nil {
					t.Fatalf("acceptsFlat(%q) accepted what the reader rejects: %v", args, err)
				}
			}
		}
	})
}
