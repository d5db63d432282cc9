package jsonschema

import (
	"math"
	"strconv"
	"strings"
)

// The fast path of argument validation: a scanner that checks arguments
// against a compiled schema without allocating. It answers only "valid";
// anything it cannot decide cheaply (escaped keys, duplicate keys, deep
// nesting, enums of numbers) and every invalid input goes to the decoding
// validator, which also words the error. FuzzFastValidate keeps the two in
// agreement.

const fastMaxDepth = 64

// fastValid reports whether args certainly satisfy s.
func (s *Node) fastValid(args string) bool {
	i := skipWS(args, 0) // JSON white space only: other spaces are the decoder's to reject
	if i == len(args) {
		args, i = "{}", 0
	}
	if args[i] != '{' {
		return false
	}
	end, ok := s.fastValue(args, i, 0)
	return ok && skipWS(args, end) == len(args)
}

func skipWS(s string, i int) int {
	for i < len(s) && (s[i] == ' ' || s[i] == '\t' || s[i] == '\n' || s[i] == '\r') {
		i++
	}
	return i
}

// fastValue checks the value starting at s[i] (after white space) and
// returns where it ends.
func (n *Node) fastValue(s string, i, depth int) (int, bool) {
	if depth > fastMaxDepth {
		return 0, false
	}
	i = skipWS(s, i)
	if i >= len(s) {
		return 0, false
	}
	var kind string
	var bit typeSet
	switch c := s[i]; {
	case c == '{':
		kind, bit = "object", typeObject
	case c == '[':
		kind, bit = "array", typeArray
	case c == '"':
		kind, bit = "string", typeString
	case c == 't' || c == 'f':
		kind, bit = "boolean", typeBoolean
	case c == 'n':
		kind, bit = "null", typeNull
	case c == '-' || (c >= '0' && c <= '9'):
		kind, bit = "number", typeNumber
	default:
		return 0, false
	}
	if n == nil {
		n = &anySchema
	}
	switch kind {
	case "object":
		return n.fastObject(s, i, depth)
	case "array":
		return n.fastArray(s, i, depth)
	}
	var end int
	var ok bool
	switch kind {
	case "string":
		var esc bool
		end, esc, ok = scanString(s, i)
		if !ok || (esc && len(n.Enum) > 0) || n.pattern != nil {
			return 0, false
		}
	case "boolean", "null":
		lit := "null"
		if s[i] == 't' {
			lit = "true"
		} else if s[i] == 'f' {
			lit = "false"
		}
		if !strings.HasPrefix(s[i:], lit) {
			return 0, false
		}
		end = i + len(lit)
	case "number":
		end = scanNumber(s, i)
		if end == i {
			return 0, false
		}
	}
	raw := s[i:end]
	if !n.fastType(bit, raw) {
		return 0, false
	}
	if len(n.Enum) > 0 && !n.fastEnum(kind, raw) {
		return 0, false
	}
	if kind == "number" && (n.Minimum != nil || n.Maximum != nil) {
		f, err := strconv.ParseFloat(raw, 64)
		if err != nil || (n.Minimum != nil && f < *n.Minimum) || (n.Maximum != nil && f > *n.Maximum) {
			return 0, false
		}
	}
	return end, true
}

var anySchema Node

func (n *Node) fastType(kind typeSet, raw string) bool {
	switch {
	case len(n.types) == 0 || n.kinds&kind != 0:
		return true
	case kind == typeNumber && n.kinds&typeInteger != 0:
		f, err := strconv.ParseFloat(raw, 64)
		return err == nil && f == math.Trunc(f)
	}
	return false
}

// typeSet is a set of JSON Schema type names, a bit each.
type typeSet uint8

const (
	typeObject typeSet = 1 << iota
	typeArray
	typeString
	typeBoolean
	typeNull
	typeNumber
	typeInteger
)

// typeBit is the bit of the type named t; none for a name it does not
// know, which no value has.
func typeBit(t string) typeSet {
	switch t {
	case "object":
		return typeObject
	case "array":
		return typeArray
	case "string":
		return typeString
	case "boolean":
		return typeBoolean
	case "null":
		return typeNull
	case "number":
		return typeNumber
	case "integer":
		return typeInteger
	}
	return 0
}

// fastEnum accepts only string enums matched exactly; anything else is
// left to the decoding validator.
func (n *Node) fastEnum(kind, raw string) bool {
	if kind != "string" {
		return false
	}
	v := raw[1 : len(raw)-1]
	for _, e := range n.Enum {
		if es, ok := e.(string); ok && es == v {
			return true
		}
	}
	return false
}

func (n *Node) fastObject(s string, i, depth int) (int, bool) {
	if len(n.types) > 0 && n.kinds&typeObject == 0 || len(n.Enum) > 0 || len(n.Required) > 64 {
		return 0, false
	}
	start, keys := i, 0
	seen := uint64(0) // a bit per required key found
	i = skipWS(s, i+1)
	if i < len(s) && s[i] == '}' {
		i++
	} else {
		for {
			if i >= len(s) || s[i] != '"' {
				return 0, false
			}
			kend, esc, ok := scanString(s, i)
			if !ok || esc {
				return 0, false
			}
			key := s[i+1 : kend-1]
			if keys++; keys > 64 || duplicateKey(s, start, i, key) {
				return 0, false // large objects go to the decoder: the duplicate check is quadratic
			}
			i = skipWS(s, kend)
			if i >= len(s) || s[i] != ':' {
				return 0, false
			}
			prop, known := n.Properties[key]
			if !known {
				if b, ok := n.AdditionalProperties.(bool); ok && !b {
					return 0, false
				}
			}
			for r, req := range n.Required {
				if req == key {
					seen |= 1 << r
				}
			}
			end, ok := prop.fastValue(s, i+1, depth+1)
			if !ok {
				return 0, false
			}
			i = skipWS(s, end)
			if i >= len(s) {
				return 0, false
			}
			if s[i] == '}' {
				i++
				break
			}
			if s[i] != ',' {
				return 0, false
			}
			i = skipWS(s, i+1)
		}
	}
	if seen != 1<<len(n.Required)-1 {
		return 0, false
	}
	return i, true
}

func (n *Node) fastArray(s string, i, depth int) (int, bool) {
	if len(n.types) > 0 && n.kinds&typeArray == 0 {
		return 0, false
	}
	if len(n.Enum) > 0 || n.MinItems != nil || n.MaxItems != nil {
		return 0, false // the decoding validator counts
	}
	i = skipWS(s, i+1)
	if i < len(s) && s[i] == ']' {
		return i + 1, true
	}
	for {
		end, ok := n.Items.fastValue(s, i, depth+1)
		if !ok {
			return 0, false
		}
		i = skipWS(s, end)
		if i >= len(s) {
			return 0, false
		}
		switch s[i] {
		case ']':
			return i + 1, true
		case ',':
			i++
		default:
			return 0, false
		}
	}
}

// duplicateKey reports whether key already appeared as a key of the object
// that starts at s[start], before position i. Nested objects are skipped.
func duplicateKey(s string, start, i int, key string) bool {
	depth := 0
	for j := start + 1; j < i; j++ {
		switch s[j] {
		case '{', '[':
			depth++
		case '}', ']':
			depth--
		case '"':
			end, _, ok := scanString(s, j)
			if !ok {
				return true
			}
			if k := skipWS(s, end); depth == 0 && k < len(s) && s[k] == ':' && s[j+1:end-1] == key {
				return true
			}
			j = end - 1
		}
	}
	return false
}

// scanString returns the end of the JSON string at s[i] (just past the
// closing quote), whether it holds escapes, and whether it is well formed:
// valid UTF-8, no control characters, known escapes.
func scanString(s string, i int) (end int, escaped, ok bool) {
	for j := i + 1; j < len(s); j++ {
		c := s[j]
		switch {
		case c == '"':
			return j + 1, escaped, true
		case c == '\\':
			escaped = true
			j++
			if j >= len(s) {
				return 0, false, false
			}
			switch s[j] {
			case '"', '\\', '/', 'b', 'f', 'n', 'r', 't':
			case 'u':
				if j+4 >= len(s) {
					return 0, false, false
				}
				for k := j + 1; k <= j+4; k++ {
					if !isHex(s[k]) {
						return 0, false, false
					}
				}
				j += 4
			default:
				return 0, false, false
			}
		case c < 0x20:
			return 0, false, false
		case c >= 0x80:
			escaped = true // non-ASCII: let the decoder judge its UTF-8
		}
	}
	return 0, false, false
}

func isHex(c byte) bool { return c >= '0' && c <= '9' || c >= 'a' && c <= 'f' || c >= 'A' && c <= 'F' }

// scanNumber returns the end of the JSON number at s[i], or i when there is none.
func scanNumber(s string, i int) int {
	j := i
	if j < len(s) && s[j] == '-' {
		j++
	}
	switch {
	case j < len(s) && s[j] == '0':
		j++
	case j < len(s) && s[j] >= '1' && s[j] <= '9':
		for j < len(s) && s[j] >= '0' && s[j] <= '9' {
			j++
		}
	default:
		return i
	}
	if j < len(s) && s[j] == '.' {
		j++
		k := j
		for j < len(s) && s[j] >= '0' && s[j] <= '9' {
			j++
		}
		if j == k {
			return i
		}
	}
	if j < len(s) && (s[j] == 'e' || s[j] == 'E') {
		j++
		if j < len(s) && (s[j] == '+' || s[j] == '-') {
			j++
		}
		k := j
		for j < len(s) && s[j] >= '0' && s[j] <= '9' {
			j++
		}
		if j == k {
			return i
		}
	}
	return j
}
