package trace

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
)

// ErrDuplicateKey is wrapped by the error a reader returns for a JSON object
// that has a key twice: encoding/json keeps the last value silently, so a
// second "role" could hide a user turn.
var ErrDuplicateKey = errors.New("duplicate key")

// UniqueKeys returns an error wrapping ErrDuplicateKey, naming the key and
// where it is ("messages[2]"), when an object in the JSON value data has a
// key twice; nil otherwise. Keys are compared after unescaping, so "role"
// and "\u0072ole" are the same key. It expects data to be valid JSON
// (check that first, with json.Valid or by decoding it): on malformed input
// it returns nil. Nesting beyond 10,000 levels, which encoding/json refuses
// anyway, is not looked into.
func UniqueKeys(data []byte) error {
	_, err := uniqueKeys(data)
	return err
}

// uniqueKeys is UniqueKeys that also says where in data the duplicate key
// ends, so that a reader of a multi-line document can name its line.
func uniqueKeys(data []byte) (offset int, err error) {
	s := keyScanner{data: data}
	s.value(0)
	return s.i, s.err
}

type keyScanner struct {
	data []byte
	i    int
	path []pathElem // where the scanner is, built into a message only on error
	err  error
}

// pathElem is an object key, or an array index when key is nil.
type pathElem struct {
	key []byte
	idx int
}

func (s *keyScanner) where() string {
	var b strings.Builder
	for _, e := range s.path {
		if e.key == nil {
			fmt.Fprintf(&b, "[%d]", e.idx)
		} else {
			if b.Len() > 0 {
				b.WriteByte('.')
			}
			b.Write(e.key)
		}
	}
	return b.String()
}

func (s *keyScanner) skipWS() {
	for s.i < len(s.data) {
		switch s.data[s.i] {
		case ' ', '\t', '\r', '\n':
			s.i++
		default:
			return
		}
	}
}

// value scans one value; it returns false to stop (an error, or input it
// does not understand).
func (s *keyScanner) value(depth int) bool {
	s.skipWS()
	if s.i >= len(s.data) || depth > 10_000 {
		return false
	}
	switch s.data[s.i] {
	case '{':
		return s.object(depth)
	case '[':
		s.i++
		for n := 0; ; n++ {
			s.skipWS()
			if s.i < len(s.data) && s.data[s.i] == ']' {
				s.i++
				return true
			}
			s.path = append(s.path, pathElem{idx: n})
			ok := s.value(depth + 1)
			s.path = s.path[:len(s.path)-1]
			if !ok {
				return false
			}
			s.skipWS()
			if !s.next(']') {
				return false
			}
		}
	case '"':
		_, ok := s.str()
		return ok
	default: // a number, true, false or null
		start := s.i
		for s.i < len(s.data) && strings.IndexByte(",]}:{[\" \t\r\n", s.data[s.i]) < 0 {
			s.i++
		}
		return s.i > start
	}
}

func (s *keyScanner) object(depth int) bool {
	s.i++ // {
	var small [16][]byte
	keys := small[:0]
	var many map[string]bool
	for {
		s.skipWS()
		if s.i >= len(s.data) {
			return false
		}
		if s.data[s.i] == '}' {
			s.i++
			return true
		}
		raw, ok := s.str()
		if !ok {
			return false
		}
		key := raw
		if bytes.IndexByte(raw, '\\') >= 0 {
			var u string
			if json.Unmarshal(append(append([]byte{'"'}, raw...), '"'), &u) != nil {
				return false
			}
			key = []byte(u)
		}
		dup := false
		if many != nil {
			dup = many[string(key)]
			many[string(key)] = true
		} else {
			for _, k := range keys {
				if bytes.Equal(k, key) {
					dup = true
					break
				}
			}
			keys = append(keys, key)
			if len(keys) > len(small) {
				many = make(map[string]bool, 2*len(keys))
				for _, k := range keys {
					many[string(k)] = true
				}
			}
		}
		if dup {
			if where := s.where(); where == "" {
				s.err = fmt.Errorf("%w %q", ErrDuplicateKey, key)
			} else {
				s.err = fmt.Errorf("%w %q in %s", ErrDuplicateKey, key, where)
			}
			return false
		}
		s.skipWS()
		if s.i >= len(s.data) || s.data[s.i] != ':' {
			return false
		}
		s.i++
		s.path = append(s.path, pathElem{key: key})
		ok = s.value(depth + 1)
		s.path = s.path[:len(s.path)-1]
		if !ok {
			return false
		}
		s.skipWS()
		if !s.next('}') {
			return false
		}
	}
}

// next steps over a comma, or stays before closer; anything else is input
// the scanner does not understand.
func (s *keyScanner) next(closer byte) bool {
	switch {
	case s.i >= len(s.data):
		return false
	case s.data[s.i] == ',':
		s.i++
		return true
	}
	return s.data[s.i] == closer
}

// str scans a string and returns its raw contents, escapes included.
func (s *keyScanner) str() ([]byte, bool) {
	start := s.i + 1
	for j := start; j < len(s.data); {
		k := bytes.IndexByte(s.data[j:], '"')
		if k < 0 {
			return nil, false
		}
		end := j + k
		bs := 0
		for b := end - 1; b >= start && s.data[b] == '\\'; b-- {
			bs++
		}
		if bs%2 == 0 {
			s.i = end + 1
			return s.data[start:end], true
		}
		j = end + 1
	}
	return nil, false
}
