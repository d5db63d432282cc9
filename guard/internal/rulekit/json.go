package rulekit

import (
	"bytes"
	"strings"
	"sync"

	"github.com/go-json-experiment/json/jsontext"
)

// keyReader reads the object names of a JSON text with a jsontext
// decoder, reused across calls.
type keyReader struct {
	buf bytes.Buffer
	dec jsontext.Decoder
}

var keyReaders = sync.Pool{New: func() any { return new(keyReader) }}

// AnyKey reports whether some object name in the JSON text s, at any
// depth, satisfies match, reading s's tokens without decoding it. Text
// that is not JSON has no names; a JSON text cut short is read as far as
// it goes.
func AnyKey(s string, match func(key string) bool) bool {
	if len(s) == 0 || s[0] != '{' && s[0] != '[' && s[0] != ' ' && s[0] != '\n' && s[0] != '\t' && s[0] != '\r' {
		return false // not a JSON object or array: no names
	}
	r := keyReaders.Get().(*keyReader)
	defer keyReaders.Put(r)
	r.buf.Reset()
	r.buf.WriteString(s)
	r.dec.Reset(&r.buf, jsontext.AllowDuplicateNames(true), jsontext.AllowInvalidUTF8(true))
	found := false
	for !found {
		kind := r.dec.PeekKind()
		if kind == 0 {
			break // the end, or text that is not JSON
		}
		if kind != '"' {
			if _, err := r.dec.ReadToken(); err != nil {
				break
			}
			continue
		}
		// A string read at an even position of the object that holds it
		// is a name.
		in, n := r.dec.StackIndex(r.dec.StackDepth())
		v, err := r.dec.ReadValue()
		if err != nil {
			break
		}
		if in != '{' || n%2 != 0 {
			continue
		}
		end := int(r.dec.InputOffset())
		key := s[end-len(v)+1 : end-1] // a substring: no allocation
		if strings.IndexByte(key, '\\') >= 0 {
			u, err := jsontext.AppendUnquote(nil, v)
			if err != nil {
				break
			}
			key = string(u)
		}
		found = match(key)
	}
	r.buf.Reset()
	return found
}
