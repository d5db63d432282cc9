package jsonschema_test

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/agentguard/agentguard/guard/internal/jsonschema"
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

func TestValidateArguments(t *testing.T) {
	tests := []struct {
		name, args, wantErr string
	}{
		{"minimal", `{"order_id":"A1","reason":"damaged"}`, ""},
		{"all fields", `{"order_id":"A1","reason":"wrong_item","quantity":2,"items":["x"],"address":{"city":"上海"},"note":null}`, ""},
		{"unknown top-level property is fine", `{"order_id":"A1","reason":"damaged","extra":1}`, ""},
		{"missing required", `{"order_id":"A1"}`, `missing required "reason"`},
		{"enum", `{"order_id":"A1","reason":"bored"}`, "reason: bored is not one of"},
		{"integer", `{"order_id":"A1","reason":"damaged","quantity":1.5}`, "quantity: want integer, got number"},
		{"minimum", `{"order_id":"A1","reason":"damaged","quantity":0}`, "quantity: 0 is below the minimum 1"},
		{"array items", `{"order_id":"A1","reason":"damaged","items":[1]}`, "items[0]: want string"},
		{"nested required", `{"order_id":"A1","reason":"damaged","address":{}}`, `address: missing required "city"`},
		{"additionalProperties false", `{"order_id":"A1","reason":"damaged","address":{"city":"x","zip":"1"}}`, `address: unknown property "zip"`},
		{"type list", `{"order_id":"A1","reason":"damaged","note":3}`, "note: want string or null, got number"},
		{"not JSON", `{"order_id":`, "not valid JSON"},
		{"trailing data", `{"order_id":"A1","reason":"damaged"} {}`, "trailing data"},
		{"not an object", `["A1"]`, "want a JSON object, got array"},
		{"empty means no arguments", ``, `missing required "order_id"`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			err := jsonschema.ValidateArguments(json.RawMessage(returnSchema), tt.args)
			switch {
			case tt.wantErr == "" && err != nil:
				t.Errorf("unexpected error %v", err)
			case tt.wantErr != "" && (err == nil || !strings.Contains(err.Error(), tt.wantErr)):
				t.Errorf("error = %v, want it to contain %q", err, tt.wantErr)
			}
		})
	}
}

func TestValidateArgumentsCatchAllAndBadSchema(t *testing.T) {
	catchAll := `{"type":"object","properties":{"__arg1":{"type":"string"}},"required":["__arg1"]}`
	if err := jsonschema.ValidateArguments(json.RawMessage(catchAll), "Oslo"); err != nil {
		t.Errorf("catch-all schema rejected a bare input: %v", err)
	}
	if err := jsonschema.ValidateArguments(json.RawMessage(`{"type":`), `{}`); err == nil || !strings.Contains(err.Error(), "tool schema is not valid JSON") {
		t.Errorf("bad schema: %v", err)
	}
}

func FuzzValidateArguments(f *testing.F) {
	for _, s := range []string{`{"order_id":"A1","reason":"damaged"}`, `{"items":[1,2,{"a":null}]}`, `[]`, `null`, `{"a":1e400}`, "{\"order_id\":\"\xff\"}", strings.Repeat("[", 5000)} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, args string) {
		err := jsonschema.ValidateArguments(json.RawMessage(returnSchema), args)
		if err == nil {
			var m map[string]any
			if json.Unmarshal([]byte(args), &m) != nil && strings.TrimSpace(args) != "" {
				t.Errorf("accepted arguments that are not a JSON object: %q", args)
			}
		}
	})
}

// FuzzFastValidate keeps the zero-allocation scanner honest: whatever it
// accepts, the decoding validator must accept too.
func FuzzFastValidate(f *testing.F) {
	for _, s := range []string{`{"order_id":"A1","reason":"damaged"}`, `{"order_id":"A1","reason":"damaged","quantity":2,"items":["x"],"address":{"city":"上海"},"note":null}`,
		`{"order_id":"A1","order_id":1,"reason":"damaged"}`, `{"order_id":"A1","reason":"damaged","quantity":1.0}`, `{"order_id":"\u0041","reason":"damaged"}`,
		`{"order_id":"A1","reason":"damaged","address":{"city":"x","zip":1}}`, ` {"order_id":"A1","reason":"damaged"} `, `{}`, ``, `{"order_id":"A1","reason":"damaged"}x`} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, args string) {
		for _, schema := range []string{returnSchema, `{"type":"object"}`, `{"type":"object","properties":{"a":{"type":["integer","null"],"minimum":0}},"additionalProperties":false}`} {
			if jsonschema.FastValid(json.RawMessage(schema), args) {
				if err := jsonschema.DecodeValidate(json.RawMessage(schema), args); err != nil {
					t.Errorf("schema %s: the scanner accepted %q, the decoder says %v", schema, args, err)
				}
			}
		}
	})
}

func TestScannerVouchesForValidArguments(t *testing.T) {
	args := `{"order_id":"A1","reason":"damaged","quantity":2,"items":["x","y"],"address":{"city":"Shanghai"}}`
	if err := jsonschema.ValidateArguments(json.RawMessage(returnSchema), args); err != nil {
		t.Fatal(err)
	}
	if !jsonschema.FastValid(json.RawMessage(returnSchema), args) {
		t.Fatal("the scanner should vouch for these arguments")
	}
}
