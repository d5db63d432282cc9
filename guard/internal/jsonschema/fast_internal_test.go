package jsonschema

import (
	"testing"
)

func TestFastValidDoesNotAllocate(t *testing.T) {
	s, err := Compile([]byte(`{"type":"object","properties":{"order_id":{"type":"string"},"qty":{"type":"integer","minimum":1},"tags":{"type":"array","items":{"type":"string","enum":["a","b"]}}},"required":["order_id"]}`))
	if err != nil {
		t.Fatal(err)
	}
	args := `{"order_id": "A1001", "qty": 2, "tags": ["a", "b"]}`
	if !s.fastValid(args) {
		t.Fatal("fastValid rejected valid arguments")
	}
	if n := testing.AllocsPerRun(100, func() { s.fastValid(args) }); n != 0 {
		t.Errorf("fastValid allocates %v times", n)
	}
}
