package trace

import (
	"bytes"
	"encoding/json"
	"io"
	"strconv"
	"sync"

	"github.com/go-json-experiment/json/jsontext"
)

// decodeObject decodes a step's arguments as encoding/json decodes them
// into a map[string]any: objects as maps, arrays as []any, numbers as
// float64. It reads the tokens with a pooled jsontext decoder and takes a
// string that holds no escape as a substring of s, so a call's arguments
// cost a map and little else; what the two decoders might read apart (a
// name twice in one object, invalid UTF-8, a number beyond float64, a
// top-level value other than an object) is left to encoding/json.
func decodeObject(s string) (map[string]any, bool) {
	r := argReaders.Get().(*argReader)
	m, ok := r.object(s)
	r.src = ""
	r.buf.Reset()
	r.dec.Reset(&r.buf)
	argReaders.Put(r)
	if ok {
		return m, true
	}
	m = nil
	if json.Unmarshal([]byte(s), &m) != nil {
		return nil, false
	}
	return m, true
}

type argReader struct {
	src    string
	buf    bytes.Buffer
	dec    jsontext.Decoder
	quoted []byte
}

var argReaders = sync.Pool{New: func() any { return new(argReader) }}

func (r *argReader) object(s string) (map[string]any, bool) {
	r.src = s
	r.buf.Reset()
	r.buf.WriteString(s)
	r.dec.Reset(&r.buf)
	if r.dec.PeekKind() != '{' {
		return nil, false
	}
	v, ok := r.value(0)
	if !ok {
		return nil, false
	}
	if _, err := r.dec.ReadToken(); err != io.EOF {
		return nil, false
	}
	return v.(map[string]any), true
}

// maxDepth bounds the nesting the fast path reads; deeper arguments are
// left to encoding/json, which has its own limit.
const maxDepth = 64

func (r *argReader) value(depth int) (any, bool) {
	if depth > maxDepth {
		return nil, false
	}
	switch r.dec.PeekKind() {
	case '{':
		if _, err := r.dec.ReadToken(); err != nil {
			return nil, false
		}
		m := make(map[string]any, 4)
		for r.dec.PeekKind() != '}' {
			name, ok := r.str()
			if !ok {
				return nil, false
			}
			v, ok := r.value(depth + 1)
			if !ok {
				return nil, false
			}
			m[name] = v
		}
		_, err := r.dec.ReadToken()
		return m, err == nil
	case '[':
		if _, err := r.dec.ReadToken(); err != nil {
			return nil, false
		}
		a := []any{}
		for r.dec.PeekKind() != ']' {
			v, ok := r.value(depth + 1)
			if !ok {
				return nil, false
			}
			a = append(a, v)
		}
		_, err := r.dec.ReadToken()
		return a, err == nil
	case '"':
		return r.str()
	case '0':
		v, err := r.dec.ReadValue()
		if err != nil {
			return nil, false
		}
		end := int(r.dec.InputOffset())
		f, err := strconv.ParseFloat(r.src[end-len(v):end], 64)
		return f, err == nil
	case 't', 'f':
		tok, err := r.dec.ReadToken()
		if err != nil {
			return nil, false
		}
		return tok.Bool(), true
	case 'n':
		_, err := r.dec.ReadToken()
		return nil, err == nil
	}
	return nil, false
}

// str reads a string (a value or a name) and unquotes it: a substring of
// the source when it holds no escape.
func (r *argReader) str() (string, bool) {
	v, err := r.dec.ReadValue()
	if err != nil || len(v) < 2 || v[0] != '"' {
		return "", false
	}
	if bytes.IndexByte(v, '\\') < 0 {
		end := int(r.dec.InputOffset())
		return r.src[end-len(v)+1 : end-1], true
	}
	b, err := jsontext.AppendUnquote(r.quoted[:0], v)
	r.quoted = b
	return string(b), err == nil
}
