package guard

import "testing"

func TestSameArgs(t *testing.T) {
	tests := []struct {
		a, b string
		want bool
	}{
		{`{"a":1}`, `{"a":1}`, true},
		{`{"a": 1}`, "{\n  \"a\" : 1\n}", true},
		{`{"a":"x y"}`, `{"a":"xy"}`, false},             // space inside a string counts
		{`{"a":"\" b"}`, `{"a":"\"b"}`, false},           // an escaped quote does not end the string
		{`{"a":"\\"  ,"b":1}`, `{"a":"\\","b":1}`, true}, // an escaped backslash does
		{`{"a":1}`, `{"a":1,"b":2}`, false},
		{`{"a":1,"b":2}`, `{"b":2,"a":1}`, false}, // key order counts
		{``, `  `, true},
	}
	for _, tt := range tests {
		if got := sameArgs(tt.a, tt.b); got != tt.want {
			t.Errorf("sameArgs(%q, %q) = %v, want %v", tt.a, tt.b, got, tt.want)
		}
		if got := sameArgs(tt.b, tt.a); got != tt.want {
			t.Errorf("sameArgs(%q, %q) = %v, want %v (swapped)", tt.b, tt.a, got, tt.want)
		}
	}
	if n := testing.AllocsPerRun(100, func() { sameArgs(`{"a": 1}`, `{"a":1}`) }); n != 0 {
		t.Errorf("sameArgs allocates %v times", n)
	}
}

func TestFastValidDoesNotAllocate(t *testing.T) {
	s, err := compileSchema([]byte(`{"type":"object","properties":{"order_id":{"type":"string"},"qty":{"type":"integer","minimum":1},"tags":{"type":"array","items":{"type":"string","enum":["a","b"]}}},"required":["order_id"]}`))
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
