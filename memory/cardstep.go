package memory

import (
	"io"
	"strconv"
	"strings"
	"sync"
	"unicode/utf8"

	"github.com/go-json-experiment/json/jsontext"
)

// A card step's Result is written by CardStep, always in one shape
// (appendCardStep, byte for byte what encoding/json writes of it):
// objects whose names are Constraint's JSON names, each once, with a
// string or an integer. readCardStep reads that shape with a pooled
// jsontext decoder, which costs a fraction of encoding/json's reflection;
// anything else — a name in another case, a null, a float, a duplicate, a
// step written by hand — it turns away, and decodeStep decodes it with
// encoding/json as before. Where it reads a result, it reads what
// encoding/json does (FuzzReadCardStep).

type stepReader struct {
	r strings.Reader
	d jsontext.Decoder
}

var stepReaders = sync.Pool{New: func() any { return new(stepReader) }}

// readCardStep returns the constraints of a card step's result in
// CardStep's shape; ok is false for anything else.
func readCardStep(result string) (cs []Constraint, ok bool) {
	p := stepReaders.Get().(*stepReader)
	defer stepReaders.Put(p)
	p.r.Reset(result)
	p.d.Reset(&p.r)
	defer p.r.Reset("")
	d := &p.d
	if tok, err := d.ReadToken(); err != nil || tok.Kind() != '[' {
		return nil, false
	}
	cs = []Constraint{}
	for d.PeekKind() == '{' {
		if _, err := d.ReadToken(); err != nil {
			return nil, false
		}
		var c Constraint
		for d.PeekKind() == '"' {
			name, err := d.ReadValue()
			if err != nil {
				return nil, false
			}
			var s *string
			var n *int
			switch string(name) {
			case `"kind"`:
				s = (*string)(&c.Kind)
			case `"key"`:
				s = &c.Key
			case `"value"`:
				s = &c.Value
			case `"status"`:
				s = (*string)(&c.Status)
			case `"source"`:
				s = &c.Source
			case `"turn"`:
				n = &c.Turn
			case `"ended"`:
				n = &c.Ended
			default:
				return nil, false // another name, or one escaped
			}
			if s != nil {
				if d.PeekKind() != '"' {
					return nil, false
				}
				tok, err := d.ReadToken()
				if err != nil {
					return nil, false
				}
				*s = tok.String()
				continue
			}
			if d.PeekKind() != '0' {
				return nil, false
			}
			raw, err := d.ReadValue()
			if err != nil {
				return nil, false
			}
			v, ok := smallInt(raw)
			if !ok {
				return nil, false
			}
			*n = v
		}
		if tok, err := d.ReadToken(); err != nil || tok.Kind() != '}' {
			return nil, false
		}
		cs = append(cs, c)
	}
	if tok, err := d.ReadToken(); err != nil || tok.Kind() != ']' {
		return nil, false
	}
	if _, err := d.ReadToken(); err != io.EOF {
		return nil, false // one value, as json.Unmarshal takes
	}
	return cs, true
}

// smallInt reads a JSON number that is an integer of at most 18 digits,
// which any int holds; ok is false for anything else.
func smallInt(raw []byte) (int, bool) {
	neg := len(raw) > 0 && raw[0] == '-'
	digits := raw
	if neg {
		digits = raw[1:]
	}
	if len(digits) == 0 || len(digits) > 18 {
		return 0, false
	}
	v := 0
	for _, c := range digits {
		if c < '0' || c > '9' {
			return 0, false // a fraction or an exponent
		}
		v = v*10 + int(c-'0')
	}
	if neg {
		v = -v
	}
	return v, true
}

// appendCardStep appends cs as CardStep records them: what encoding/json,
// without HTML escaping, writes of them (FuzzAppendCardStep), without its
// reflection.
func appendCardStep(b []byte, cs []Constraint) []byte {
	b = append(b, '[')
	for i, c := range cs {
		if i > 0 {
			b = append(b, ',')
		}
		b = append(b, `{"kind":`...)
		b = appendJSONString(b, string(c.Kind))
		b = append(b, `,"key":`...)
		b = appendJSONString(b, c.Key)
		b = append(b, `,"value":`...)
		b = appendJSONString(b, c.Value)
		b = append(b, `,"turn":`...)
		b = strconv.AppendInt(b, int64(c.Turn), 10)
		b = append(b, `,"status":`...)
		b = appendJSONString(b, string(c.Status))
		if c.Source != "" {
			b = append(b, `,"source":`...)
			b = appendJSONString(b, c.Source)
		}
		if c.Ended != 0 {
			b = append(b, `,"ended":`...)
			b = strconv.AppendInt(b, int64(c.Ended), 10)
		}
		b = append(b, '}')
	}
	return append(b, ']')
}

// appendJSONString appends s quoted as encoding/json quotes a string with
// HTML escaping off: quote, backslash and control bytes escaped (\b \f \n
// \r \t by name), invalid UTF-8 as \ufffd, and U+2028 and U+2029 escaped
// for JavaScript.
func appendJSONString(b []byte, s string) []byte {
	const hex = "0123456789abcdef"
	b = append(b, '"')
	start := 0
	for i := 0; i < len(s); {
		if c := s[i]; c < utf8.RuneSelf {
			if c >= 0x20 && c != '"' && c != '\\' {
				i++
				continue
			}
			b = append(b, s[start:i]...)
			switch c {
			case '"', '\\':
				b = append(b, '\\', c)
			case '\b':
				b = append(b, '\\', 'b')
			case '\f':
				b = append(b, '\\', 'f')
			case '\n':
				b = append(b, '\\', 'n')
			case '\r':
				b = append(b, '\\', 'r')
			case '\t':
				b = append(b, '\\', 't')
			default:
				b = append(b, '\\', 'u', '0', '0', hex[c>>4], hex[c&0xF])
			}
			i++
			start = i
			continue
		}
		r, size := utf8.DecodeRuneInString(s[i:])
		switch {
		case r == utf8.RuneError && size == 1:
			b = append(b, s[start:i]...)
			b = append(b, `\ufffd`...)
		case r == '\u2028' || r == '\u2029':
			b = append(b, s[start:i]...)
			b = append(b, '\\', 'u', '2', '0', '2', hex[r&0xF])
		default:
			i += size
			continue
		}
		i += size
		start = i
	}
	b = append(b, s[start:]...)
	return append(b, '"')
}
