package origins

import (
	"bytes"
	"io"
	"strconv"
	"sync"

	"github.com/go-json-experiment/json/jsontext"
)

// resultField is one leaf of a JSON tool result, or the name of a nested
// record, as eachField reports it.
type resultField struct {
	rec        int
	key, value string
	name       bool // value is the key of a nested object, not a leaf
}

// fieldWalker reads the fields of a JSON result from its tokens, in
// document order, without decoding it into maps: a leaf string that holds
// no escape is a substring of the result, so most fields cost no
// allocation. It reads a result exactly as encoding/json decodes it into
// an any — strings unquoted, numbers through float64 — and turns away
// what the two might read differently (invalid UTF-8, a name twice in one
// object, a number beyond float64): eachField then decodes the slow way.
type fieldWalker struct {
	src    string
	buf    bytes.Buffer
	dec    jsontext.Decoder
	recs   int
	fields []resultField
	quoted []byte // scratch for unquoting escaped strings
}

var fieldWalkers = sync.Pool{New: func() any { return new(fieldWalker) }}

// walk reads result; it reports false when result is not JSON the walk
// reads as encoding/json would.
func (w *fieldWalker) walk(result string) bool {
	w.src, w.recs, w.fields = result, 0, w.fields[:0]
	w.buf.Reset()
	w.buf.WriteString(result)
	w.dec.Reset(&w.buf)
	if !w.value("", 0) {
		return false
	}
	_, err := w.dec.ReadToken()
	return err == io.EOF
}

// release drops what the walker holds of the last result and returns it
// to the pool.
func (w *fieldWalker) release() {
	clear(w.fields)
	w.src, w.fields = "", w.fields[:0]
	w.buf.Reset()
	w.dec.Reset(&w.buf)
	fieldWalkers.Put(w)
}

func (w *fieldWalker) value(key string, rec int) bool {
	switch w.dec.PeekKind() {
	case '{':
		if _, err := w.dec.ReadToken(); err != nil {
			return false
		}
		own := w.recs
		w.recs++
		for w.dec.PeekKind() != '}' {
			name, ok := w.str()
			if !ok {
				return false
			}
			if w.dec.PeekKind() == '{' {
				// a key that names a record: {"credit_card_7334": {...}}
				w.fields = append(w.fields, resultField{rec: own, key: key, value: name, name: true})
			}
			if !w.value(name, own) {
				return false
			}
		}
		_, err := w.dec.ReadToken()
		return err == nil
	case '[':
		if _, err := w.dec.ReadToken(); err != nil {
			return false
		}
		for w.dec.PeekKind() != ']' {
			if !w.value(key, rec) {
				return false
			}
		}
		_, err := w.dec.ReadToken()
		return err == nil
	case '"':
		s, ok := w.str()
		if ok && s != "" {
			w.fields = append(w.fields, resultField{rec: rec, key: key, value: s})
		}
		return ok
	case '0':
		v, err := w.dec.ReadValue()
		if err != nil {
			return false
		}
		end := int(w.dec.InputOffset())
		s := w.src[end-len(v) : end]
		if !shortInt(s) {
			// encoding/json decodes a number into an any as a float64;
			// leafString prints it back.
			f, err := strconv.ParseFloat(s, 64)
			if err != nil {
				return false
			}
			s = strconv.FormatFloat(f, 'f', -1, 64)
		}
		w.fields = append(w.fields, resultField{rec: rec, key: key, value: s})
		return true
	case 'n', 't', 'f':
		_, err := w.dec.ReadValue()
		return err == nil
	}
	return false
}

// str reads a string (a value or an object's name) and unquotes it.
func (w *fieldWalker) str() (string, bool) {
	v, err := w.dec.ReadValue()
	if err != nil || len(v) < 2 || v[0] != '"' {
		return "", false
	}
	if bytes.IndexByte(v, '\\') < 0 {
		end := int(w.dec.InputOffset())
		return w.src[end-len(v)+1 : end-1], true
	}
	b, err := jsontext.AppendUnquote(w.quoted[:0], v)
	w.quoted = b
	return string(b), err == nil
}

// shortInt reports whether a JSON number is an integer of at most 15
// digits, which a float64 holds exactly and strconv prints back unchanged.
func shortInt(s string) bool {
	if len(s) > 0 && s[0] == '-' {
		s = s[1:]
	}
	if len(s) == 0 || len(s) > 15 {
		return false
	}
	for i := 0; i < len(s); i++ {
		if s[i] < '0' || s[i] > '9' {
			return false
		}
	}
	return true
}
