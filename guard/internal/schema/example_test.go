package schema_test

import (
	"encoding/json"
	"errors"
	"fmt"

	"github.com/agentguard/agentguard/guard/internal/schema"
)

const refund = `{
  "type": "object",
  "properties": {
    "order_id": {"type": "string"},
    "reason":   {"type": "string", "enum": ["damaged", "wrong_item"]},
    "quantity": {"type": "integer", "minimum": 1}
  },
  "required": ["order_id", "reason"]
}`

func Example() {
	s, err := schema.Compile(json.RawMessage(refund))
	if err != nil {
		panic(err)
	}
	for _, args := range []string{
		`{"order_id":"A1","reason":"damaged","quantity":2}`,
		`{"order_id":"A1","reason":"damaged","quantity":1.5}`,
		`{"order_id":"A1","reason":"bored"}`,
		`{"order_id":"A1"}`,
		`{"order_id":"A1","reason":"damaged","order_id":"A2"}`,
		`{"order_id":"A1",`,
		``,
	} {
		fmt.Println(s.Validate(args))
	}
	// Output:
	// <nil>
	// quantity: want integer, got number
	// reason: bored is not one of [damaged wrong_item]
	// arguments: missing required "reason"
	// arguments: duplicate property "order_id"
	// not valid JSON: unexpected EOF after offset 17
	// arguments: missing required "order_id"
}

func ExampleError() {
	s, _ := schema.Compile(json.RawMessage(`{"properties":{"items":{"items":{"type":"string"}}}}`))
	err := s.Validate(`{"items":["a",2]}`)
	var e *schema.Error
	if errors.As(err, &e) {
		fmt.Printf("%s | %v | syntax: %v\n", e.Path, e.Err, errors.Is(err, schema.ErrSyntax))
	}
	err = s.Validate(`{"items":["a",2]`)
	fmt.Println(errors.Is(err, schema.ErrSyntax))
	// Output:
	// items[1] | want string, got number | syntax: false
	// true
}

func ExampleCache() {
	var c schema.Cache // one per Guard, or per rule: not one per process
	for range 3 {
		s, err := c.Compile(json.RawMessage(refund))
		if err != nil {
			panic(err)
		}
		fmt.Println(s.Validate(`{"order_id":"A1","reason":"wrong_item"}`))
	}
	_, err := c.Compile(json.RawMessage(`{"pattern":"("}`))
	fmt.Println(err)
	fmt.Println(c.Len())
	// Output:
	// <nil>
	// <nil>
	// <nil>
	// tool schema: pattern "(": error parsing regexp: missing closing ): `(`
	// 2
}
