package calls

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
