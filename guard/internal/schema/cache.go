package schema

import (
	"encoding/json"
	"maps"
	"sync"
	"sync/atomic"
)

// CacheSize is how many schemas a Cache holds.
const CacheSize = 256

// A Cache holds compiled schemas by their text, for the one owner of the
// cache (a Guard, a rule), so that a schema met on every call is compiled
// once. It keeps what Compile returned, a schema or an error. It holds at
// most CacheSize schemas; it compiles any schema beyond those every time
// it is asked, without keeping it.
//
// The zero Cache is empty and ready for use. A Cache is safe for
// concurrent use: a lookup takes no lock, while a schema that is new to it
// copies its map.
type Cache struct {
	mu sync.Mutex                          // serialises writers of m
	m  atomic.Pointer[map[string]compiled] // by schema text; copied on write
}

type compiled struct {
	s   *Schema
	err error
}

// Compile returns the compiled schema of raw, compiling it if c does not
// hold it yet.
func (c *Cache) Compile(raw json.RawMessage) (*Schema, error) {
	if m := c.m.Load(); m != nil {
		if e, ok := (*m)[string(raw)]; ok {
			return e.s, e.err
		}
	}
	s, err := Compile(raw)
	c.mu.Lock()
	defer c.mu.Unlock()
	old := c.m.Load()
	if old != nil {
		if e, ok := (*old)[string(raw)]; ok {
			return e.s, e.err // another call compiled it first: share that one
		}
		if len(*old) >= CacheSize {
			return s, err
		}
	}
	m := make(map[string]compiled, 1+len(mapOrNil(old)))
	maps.Copy(m, mapOrNil(old))
	m[string(raw)] = compiled{s, err}
	c.m.Store(&m)
	return s, err
}

// Len reports how many schemas c holds.
func (c *Cache) Len() int { return len(mapOrNil(c.m.Load())) }

func mapOrNil(m *map[string]compiled) map[string]compiled {
	if m == nil {
		return nil
	}
	return *m
}
