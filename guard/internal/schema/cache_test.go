package schema

import (
	"encoding/json"
	"fmt"
	"strings"
	"sync"
	"testing"
)

func TestCache(t *testing.T) {
	var c Cache
	a1, err := c.Compile(json.RawMessage(returnSchema))
	if err != nil {
		t.Fatal(err)
	}
	a2, _ := c.Compile(json.RawMessage(returnSchema))
	if a1 != a2 {
		t.Error("the same schema text compiled twice")
	}
	_, e1 := c.Compile(json.RawMessage(`{"minItems":-1}`))
	_, e2 := c.Compile(json.RawMessage(`{"minItems":-1}`))
	if e1 == nil || e1 != e2 {
		t.Errorf("a schema that does not compile: %v then %v, want the one error kept", e1, e2)
	}
	if got := c.Len(); got != 2 {
		t.Errorf("Len = %d, want 2", got)
	}
}

func TestCacheBound(t *testing.T) {
	var c Cache
	raw := func(i int) json.RawMessage {
		return json.RawMessage(fmt.Sprintf(`{"properties":{"p%d":{"type":"integer"}}}`, i))
	}
	for i := range CacheSize + 10 {
		if _, err := c.Compile(raw(i)); err != nil {
			t.Fatal(err)
		}
	}
	if got := c.Len(); got != CacheSize {
		t.Errorf("Len = %d, want %d", got, CacheSize)
	}
	kept, _ := c.Compile(raw(0))
	if again, _ := c.Compile(raw(0)); kept != again {
		t.Error("a schema held before the cache filled is compiled again")
	}
	over, _ := c.Compile(raw(CacheSize + 1))
	if again, _ := c.Compile(raw(CacheSize + 1)); over == again {
		t.Error("a schema beyond the bound is kept")
	}
	if err := over.Validate(fmt.Sprintf(`{"p%d":"x"}`, CacheSize+1)); err == nil {
		t.Error("a schema beyond the bound does not validate")
	}
}

// TestConcurrent is for the race detector: one cache and its schemas used
// from many goroutines.
func TestConcurrent(t *testing.T) {
	var c Cache
	var wg sync.WaitGroup
	for g := range 8 {
		wg.Go(func() {
			for i := range 200 {
				s, err := c.Compile(json.RawMessage(oracleSchemas[(g+i)%len(oracleSchemas)]))
				if err != nil {
					t.Error(err)
					return
				}
				for _, args := range oracleArgs[:20] {
					s.Validate(args)
				}
				s.Validate(largeArgs(4 << 10))
			}
		})
	}
	wg.Wait()
	if c.Len() != len(oracleSchemas) {
		t.Errorf("Len = %d, want %d", c.Len(), len(oracleSchemas))
	}
}

func TestReaderDropsLargeBuffer(t *testing.T) {
	s := mustCompile(t, `{}`)
	if err := s.Validate(`{"a":"` + strings.Repeat("x", 2*maxKept) + `"}`); err != nil {
		t.Fatal(err)
	}
	r, _ := s.readers.Get().(*reader)
	if r == nil {
		t.Skip("the pool dropped the reader")
	}
	if r.buf.Cap() > maxKept || r.src != "" {
		t.Errorf("a reader kept %d bytes of buffer, %d of arguments", r.buf.Cap(), len(r.src))
	}
	if err := s.Validate(`{"b":1}`); err != nil {
		t.Errorf("after a large call: %v", err)
	}
}
