package reword

import (
	"fmt"
	"strconv"
	"strings"
	"unicode/utf8"
)

// The corpus was written by Python's json.dumps(ensure_ascii=False): keys
// in their original order, ", " and ": " separators, non-ASCII text raw.
// encoding/json would reorder keys and reformat numbers, so the generator
// keeps its own tree: objects keep their key order, numbers, booleans and
// null keep their text, and strings are written back the way Python wrote
// them. Every input line is checked to round-trip byte for byte before
// anything is changed, so "all other fields unchanged" holds to the byte.

type node struct {
	kind byte // '{', '[', '"', or 0 for a literal (number, true, false, null)
	keys []string
	vals []*node
	str  string // the decoded string, or a literal's text
}

func (n *node) get(key string) *node {
	if n == nil || n.kind != '{' {
		return nil
	}
	for i, k := range n.keys {
		if k == key {
			return n.vals[i]
		}
	}
	return nil
}

type jsonParser struct {
	s   string
	pos int
}

func parseJSON(s string) (*node, error) {
	p := &jsonParser{s: s}
	n, err := p.value()
	if err != nil {
		return nil, err
	}
	p.space()
	if p.pos != len(p.s) {
		return nil, fmt.Errorf("trailing data at offset %d", p.pos)
	}
	return n, nil
}

func (p *jsonParser) space() {
	for p.pos < len(p.s) && strings.IndexByte(" \t\r\n", p.s[p.pos]) >= 0 {
		p.pos++
	}
}

func (p *jsonParser) fail(what string) error {
	return fmt.Errorf("offset %d: %s", p.pos, what)
}

func (p *jsonParser) value() (*node, error) {
	p.space()
	if p.pos >= len(p.s) {
		return nil, p.fail("unexpected end")
	}
	switch c := p.s[p.pos]; c {
	case '{':
		p.pos++
		n := &node{kind: '{'}
		p.space()
		if p.pos < len(p.s) && p.s[p.pos] == '}' {
			p.pos++
			return n, nil
		}
		for {
			p.space()
			if p.pos >= len(p.s) || p.s[p.pos] != '"' {
				return nil, p.fail("want a key")
			}
			k, err := p.str()
			if err != nil {
				return nil, err
			}
			p.space()
			if p.pos >= len(p.s) || p.s[p.pos] != ':' {
				return nil, p.fail("want ':'")
			}
			p.pos++
			v, err := p.value()
			if err != nil {
				return nil, err
			}
			n.keys, n.vals = append(n.keys, k), append(n.vals, v)
			p.space()
			if p.pos < len(p.s) && p.s[p.pos] == ',' {
				p.pos++
				continue
			}
			if p.pos < len(p.s) && p.s[p.pos] == '}' {
				p.pos++
				return n, nil
			}
			return nil, p.fail("want ',' or '}'")
		}
	case '[':
		p.pos++
		n := &node{kind: '['}
		p.space()
		if p.pos < len(p.s) && p.s[p.pos] == ']' {
			p.pos++
			return n, nil
		}
		for {
			v, err := p.value()
			if err != nil {
				return nil, err
			}
			n.vals = append(n.vals, v)
			p.space()
			if p.pos < len(p.s) && p.s[p.pos] == ',' {
				p.pos++
				continue
			}
			if p.pos < len(p.s) && p.s[p.pos] == ']' {
				p.pos++
				return n, nil
			}
			return nil, p.fail("want ',' or ']'")
		}
	case '"':
		s, err := p.str()
		return &node{kind: '"', str: s}, err
	default:
		start := p.pos
		for p.pos < len(p.s) && strings.IndexByte(",]} \t\r\n", p.s[p.pos]) < 0 {
			p.pos++
		}
		lit := p.s[start:p.pos]
		switch {
		case lit == "true", lit == "false", lit == "null":
		default:
			if _, err := strconv.ParseFloat(lit, 64); err != nil {
				return nil, fmt.Errorf("offset %d: bad literal %q", start, lit)
			}
		}
		return &node{str: lit}, nil
	}
}

func (p *jsonParser) str() (string, error) {
	p.pos++ // the opening quote
	var b strings.Builder
	for {
		if p.pos >= len(p.s) {
			return "", p.fail("unterminated string")
		}
		c := p.s[p.pos]
		switch {
		case c == '"':
			p.pos++
			return b.String(), nil
		case c == '\\':
			if p.pos+1 >= len(p.s) {
				return "", p.fail("bad escape")
			}
			e := p.s[p.pos+1]
			p.pos += 2
			switch e {
			case '"', '\\', '/':
				b.WriteByte(e)
			case 'n':
				b.WriteByte('\n')
			case 't':
				b.WriteByte('\t')
			case 'r':
				b.WriteByte('\r')
			case 'b':
				b.WriteByte('\b')
			case 'f':
				b.WriteByte('\f')
			case 'u':
				r, err := p.hex4()
				if err != nil {
					return "", err
				}
				if r >= 0xD800 && r < 0xDC00 && strings.HasPrefix(p.s[p.pos:], `\u`) {
					p.pos += 2
					lo, err := p.hex4()
					if err != nil {
						return "", err
					}
					r = 0x10000 + (r-0xD800)<<10 + (lo - 0xDC00)
				}
				if r >= 0xD800 && r < 0xE000 {
					return "", p.fail("lone surrogate")
				}
				b.WriteRune(r)
			default:
				return "", p.fail("bad escape")
			}
		default:
			r, size := utf8.DecodeRuneInString(p.s[p.pos:])
			if r == utf8.RuneError && size == 1 {
				return "", p.fail("invalid UTF-8")
			}
			b.WriteString(p.s[p.pos : p.pos+size])
			p.pos += size
		}
	}
}

func (p *jsonParser) hex4() (rune, error) {
	if p.pos+4 > len(p.s) {
		return 0, p.fail("short \\u escape")
	}
	v, err := strconv.ParseUint(p.s[p.pos:p.pos+4], 16, 32)
	if err != nil {
		return 0, p.fail("bad \\u escape")
	}
	p.pos += 4
	return rune(v), nil
}

// write appends n the way Python's json.dumps(ensure_ascii=False) writes it.
func (n *node) write(b *strings.Builder) {
	switch n.kind {
	case '{':
		b.WriteByte('{')
		for i, k := range n.keys {
			if i > 0 {
				b.WriteString(", ")
			}
			writeString(b, k)
			b.WriteString(": ")
			n.vals[i].write(b)
		}
		b.WriteByte('}')
	case '[':
		b.WriteByte('[')
		for i, v := range n.vals {
			if i > 0 {
				b.WriteString(", ")
			}
			v.write(b)
		}
		b.WriteByte(']')
	case '"':
		writeString(b, n.str)
	default:
		b.WriteString(n.str)
	}
}

func (n *node) String() string {
	var b strings.Builder
	n.write(&b)
	return b.String()
}

// writeString escapes as Python does with ensure_ascii=False: the quote, the
// backslash and control characters only.
func writeString(b *strings.Builder, s string) {
	b.WriteByte('"')
	for _, r := range s {
		switch r {
		case '"':
			b.WriteString(`\"`)
		case '\\':
			b.WriteString(`\\`)
		case '\n':
			b.WriteString(`\n`)
		case '\r':
			b.WriteString(`\r`)
		case '\t':
			b.WriteString(`\t`)
		case '\b':
			b.WriteString(`\b`)
		case '\f':
			b.WriteString(`\f`)
		default:
			if r < 0x20 {
				fmt.Fprintf(b, `\u%04x`, r)
			} else {
				b.WriteRune(r)
			}
		}
	}
	b.WriteByte('"')
}
