package lexicon

import (
	"bytes"
	"encoding/json"
	"fmt"
	"strings"
)

// formatData writes a JSON value the way the data files are written: two
// spaces per level, objects one key a line, and arrays of plain values on
// as few lines as fit in 100 columns, so that a word list reads as a list.
// Keys whose value says nothing (null, false, "", [], {}) are left out.
func formatData(raw []byte) ([]byte, error) {
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.UseNumber()
	var v any
	if err := decodeOrdered(dec, &v); err != nil {
		return nil, err
	}
	var b bytes.Buffer
	writeValue(&b, v, 0)
	b.WriteByte('\n')
	return b.Bytes(), nil
}

// ordered is a JSON object with its keys in file order.
type ordered struct {
	keys []string
	vals []any
}

func decodeOrdered(dec *json.Decoder, out *any) error {
	tok, err := dec.Token()
	if err != nil {
		return err
	}
	switch t := tok.(type) {
	case json.Delim:
		switch t {
		case '{':
			o := &ordered{}
			for dec.More() {
				k, err := dec.Token()
				if err != nil {
					return err
				}
				var v any
				if err := decodeOrdered(dec, &v); err != nil {
					return err
				}
				o.keys, o.vals = append(o.keys, k.(string)), append(o.vals, v)
			}
			_, err := dec.Token()
			*out = o
			return err
		case '[':
			list := []any{}
			for dec.More() {
				var v any
				if err := decodeOrdered(dec, &v); err != nil {
					return err
				}
				list = append(list, v)
			}
			_, err := dec.Token()
			*out = list
			return err
		}
	}
	*out = tok
	return nil
}

// withoutEmpty returns o without the keys whose value says nothing.
func (o *ordered) withoutEmpty() *ordered {
	out := &ordered{}
	for i, k := range o.keys {
		switch v := o.vals[i].(type) {
		case nil:
			continue
		case bool:
			if !v {
				continue
			}
		case string:
			if v == "" {
				continue
			}
		case []any:
			if len(v) == 0 {
				continue
			}
		case *ordered:
			if len(v.withoutEmpty().keys) == 0 {
				continue
			}
		}
		out.keys, out.vals = append(out.keys, k), append(out.vals, o.vals[i])
	}
	return out
}

func scalar(v any) ([]byte, bool) {
	switch v.(type) {
	case *ordered, []any:
		return nil, false
	}
	b, err := json.Marshal(v)
	if err != nil {
		panic(err)
	}
	return unescapeHTML(b), true
}

// unescapeHTML undoes encoding/json's escaping of <, > and &, which the
// data files do not need.
func unescapeHTML(b []byte) []byte {
	b = bytes.ReplaceAll(b, []byte(`\u003c`), []byte("<"))
	b = bytes.ReplaceAll(b, []byte(`\u003e`), []byte(">"))
	return bytes.ReplaceAll(b, []byte(`\u0026`), []byte("&"))
}

func writeValue(b *bytes.Buffer, v any, depth int) {
	indent := strings.Repeat("  ", depth)
	switch x := v.(type) {
	case *ordered:
		x = x.withoutEmpty()
		if len(x.keys) == 0 {
			b.WriteString("{}")
			return
		}
		b.WriteString("{\n")
		for i, k := range x.keys {
			key, _ := scalar(k)
			fmt.Fprintf(b, "%s  %s: ", indent, key)
			writeValue(b, x.vals[i], depth+1)
			if i < len(x.keys)-1 {
				b.WriteByte(',')
			}
			b.WriteByte('\n')
		}
		b.WriteString(indent + "}")
	case []any:
		if len(x) == 0 {
			b.WriteString("[]")
			return
		}
		var items [][]byte
		for _, e := range x {
			s, ok := scalar(e)
			if !ok {
				items = nil
				break
			}
			items = append(items, s)
		}
		if items == nil {
			b.WriteString("[\n")
			for i, e := range x {
				b.WriteString(indent + "  ")
				writeValue(b, e, depth+1)
				if i < len(x)-1 {
					b.WriteByte(',')
				}
				b.WriteByte('\n')
			}
			b.WriteString(indent + "]")
			return
		}
		line := 0
		b.WriteByte('[')
		for i, s := range items {
			if i > 0 {
				b.WriteByte(',')
				if line+len(s)+2 > 100-len(indent) {
					b.WriteString("\n" + indent + "  ")
					line = 0
				} else {
					b.WriteByte(' ')
				}
			}
			b.Write(s)
			line += len(s) + 2
		}
		b.WriteByte(']')
	default:
		s, _ := scalar(v)
		b.Write(s)
	}
}
