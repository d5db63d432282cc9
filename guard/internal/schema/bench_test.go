package schema

import (
	"encoding/json"
	"fmt"
	"strings"
	"testing"
)

// largeArgs is a valid call of returnSchema's tool of about size bytes:
// its size is in items and in a note.
func largeArgs(size int) string {
	var b strings.Builder
	b.WriteString(`{"order_id":"A1002","reason":"damaged","quantity":3,"address":{"city":"Springfield"},"items":[`)
	for i := 0; b.Len() < size*3/4; i++ {
		if i > 0 {
			b.WriteByte(',')
		}
		fmt.Fprintf(&b, `"item-%d"`, i)
	}
	b.WriteString(`],"note":"`)
	for b.Len() < size-2 {
		b.WriteString("the box was crushed ")
	}
	b.WriteString(`"}`)
	return b.String()
}

// invalidArgs makes valid arguments fail at their last item.
func invalidArgs(valid string) string {
	i := strings.LastIndex(valid, `"],"note"`)
	if i < 0 {
		return strings.Replace(valid, `"damaged"`, `"bored"`, 1)
	}
	return valid[:i] + `",7],"note"` + valid[i+len(`"],"note"`):]
}

// BenchmarkValidate measures Validate ("new") against its baselines, its
// reader alone ("reader": Validate without the fast path for flat
// arguments) and package guard's validator ("old": the zero-allocation
// scanner, then the decoder for what the scanner cannot vouch for), on the
// same arguments.
func BenchmarkValidate(b *testing.B) {
	small := `{"order_id":"A1","reason":"damaged","quantity":2}`
	cases := []struct{ name, args string }{
		{"small/valid", small},
		{"small/invalid", `{"order_id":"A1","reason":"bored","quantity":2}`},
		{"1KiB/valid", largeArgs(1 << 10)},
		{"1KiB/invalid", invalidArgs(largeArgs(1 << 10))},
		{"64KiB/valid", largeArgs(64 << 10)},
		{"64KiB/invalid", invalidArgs(largeArgs(64 << 10))},
	}
	s := mustCompile(b, returnSchema)
	old, err := oldCompileSchema(json.RawMessage(returnSchema))
	if err != nil {
		b.Fatal(err)
	}
	for _, c := range cases {
		wantErr := strings.HasSuffix(c.name, "invalid")
		if (s.Validate(c.args) != nil) != wantErr || (old.validateArgs(c.args) != nil) != wantErr {
			b.Fatalf("%s: new says %v, old says %v", c.name, s.Validate(c.args), old.validateArgs(c.args))
		}
		b.Run(c.name+"/new", func(b *testing.B) {
			b.SetBytes(int64(len(c.args)))
			b.ReportAllocs()
			for b.Loop() {
				s.Validate(c.args)
			}
		})
		b.Run(c.name+"/reader", func(b *testing.B) { // without the fast path for flat arguments
			b.SetBytes(int64(len(c.args)))
			b.ReportAllocs()
			for b.Loop() {
				s.read(c.args)
			}
		})
		b.Run(c.name+"/old", func(b *testing.B) {
			b.SetBytes(int64(len(c.args)))
			b.ReportAllocs()
			for b.Loop() {
				old.validateArgs(c.args)
			}
		})
	}
}
