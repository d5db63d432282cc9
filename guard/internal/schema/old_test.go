package schema

// This file is package guard's schema.go and fastschema.go as of commit
// ca031d1, with their package-level names prefixed "old" and nothing
// else changed: the reference that Validate is held to (oracle_test.go,
// FuzzValidate) and measured against (BenchmarkValidate). Test only.

import (
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"regexp"
	"slices"
	"sort"
	"strconv"
	"strings"
	"sync"
	"unicode/utf8"
)

// oldValidateArguments checks tool arguments against a JSON schema. It
// understands the subset of JSON Schema that model providers accept for tool
// parameters: type (one or a list), properties, required, enum, items,
// additionalProperties: false, minimum and maximum, minItems and maxItems,
// and pattern (Go's regexp syntax, unanchored). Other keywords are
// ignored, so a schema never fails to load because of them.
//
// The arguments must be a JSON object. A schema whose only property is
// langchaingo's "__arg1" (the catch-all string input that agents.Executor
// offers for plain tools) accepts any input.
func oldValidateArguments(schema json.RawMessage, args string) error {
	s, err := oldCompileSchema(schema)
	if err != nil {
		return err
	}
	return s.validateArgs(args)
}

// validateArgs checks args against a compiled schema: the zero-allocation
// scanner first, the decoder for whatever it cannot vouch for.
func (s *oldSchemaNode) validateArgs(args string) error {
	if s.catchAll {
		return nil
	}
	if !utf8.ValidString(args) {
		return errors.New("not valid JSON: the arguments are not valid UTF-8")
	}
	if s.fastValid(args) {
		return nil
	}
	return s.decodeValidate(args)
}

// decodeValidate is the slow, exact path: it decodes args and says what is wrong.
func (s *oldSchemaNode) decodeValidate(args string) error {
	if strings.TrimSpace(args) == "" {
		args = "{}" // providers send "" for a call without arguments
	}
	var v any
	dec := json.NewDecoder(strings.NewReader(args))
	dec.UseNumber()
	if err := dec.Decode(&v); err != nil {
		return fmt.Errorf("not valid JSON: %v", err)
	}
	if dec.More() {
		return errors.New("not valid JSON: trailing data after the object")
	}
	if _, ok := v.(map[string]any); !ok {
		return fmt.Errorf("want a JSON object, got %s", oldJSONType(v))
	}
	return s.validate("", v)
}

type oldSchemaNode struct {
	Type                 any                       `json:"type"`
	Properties           map[string]*oldSchemaNode `json:"properties"`
	Required             []string                  `json:"required"`
	Enum                 []any                     `json:"enum"`
	Items                *oldSchemaNode            `json:"items"`
	AdditionalProperties any                       `json:"additionalProperties"`
	Minimum              *float64                  `json:"minimum"`
	Maximum              *float64                  `json:"maximum"`
	MinItems             *int                      `json:"minItems"`
	MaxItems             *int                      `json:"maxItems"`
	Pattern              string                    `json:"pattern"`

	types    []string
	kinds    oldTypeSet // types, as a set, for the fast path
	pattern  *regexp.Regexp
	catchAll bool
}

var oldSchemaCache sync.Map // string(schema) -> *oldSchemaNode or error

func oldCompileSchema(raw json.RawMessage) (*oldSchemaNode, error) {
	if c, ok := oldSchemaCache.Load(string(raw)); ok {
		if err, ok := c.(error); ok {
			return nil, err
		}
		return c.(*oldSchemaNode), nil
	}
	s := new(oldSchemaNode)
	var err error
	if uerr := json.Unmarshal(raw, s); uerr != nil {
		err = fmt.Errorf("tool schema is not valid JSON: %v", uerr)
	} else if err = s.prepare(0); err == nil {
		_, s.catchAll = s.Properties["__arg1"]
		s.catchAll = s.catchAll && len(s.Properties) == 1
	}
	if err != nil {
		oldSchemaCache.Store(string(raw), err)
		return nil, err
	}
	oldSchemaCache.Store(string(raw), s)
	return s, nil
}

func (s *oldSchemaNode) prepare(depth int) error {
	if depth > 64 {
		return errors.New("tool schema nests too deeply")
	}
	if s.Pattern != "" {
		re, err := regexp.Compile(s.Pattern)
		if err != nil {
			return fmt.Errorf("tool schema: pattern %q: %v", s.Pattern, err)
		}
		s.pattern = re
	}
	if (s.MinItems != nil && *s.MinItems < 0) || (s.MaxItems != nil && *s.MaxItems < 0) {
		return errors.New("tool schema: minItems and maxItems are at least 0")
	}
	switch t := s.Type.(type) {
	case string:
		s.types = []string{t}
	case []any:
		for _, x := range t {
			if str, ok := x.(string); ok {
				s.types = append(s.types, str)
			}
		}
	}
	for _, t := range s.types {
		s.kinds |= oldTypeBit(t)
	}
	for _, p := range s.Properties {
		if p == nil {
			continue
		}
		if err := p.prepare(depth + 1); err != nil {
			return err
		}
	}
	if s.Items != nil {
		return s.Items.prepare(depth + 1)
	}
	return nil
}

func (s *oldSchemaNode) validate(path string, v any) error {
	if len(s.types) > 0 && !slices.ContainsFunc(s.types, func(t string) bool { return oldHasType(v, t) }) {
		return fmt.Errorf("%s: want %s, got %s", oldWhere(path), strings.Join(s.types, " or "), oldJSONType(v))
	}
	if len(s.Enum) > 0 && !slices.ContainsFunc(s.Enum, func(e any) bool { return oldSameJSON(e, v) }) {
		return fmt.Errorf("%s: %v is not one of %v", oldWhere(path), v, s.Enum)
	}
	if n, ok := v.(json.Number); ok {
		f, _ := n.Float64()
		if s.Minimum != nil && f < *s.Minimum {
			return fmt.Errorf("%s: %v is below the minimum %v", oldWhere(path), n, *s.Minimum)
		}
		if s.Maximum != nil && f > *s.Maximum {
			return fmt.Errorf("%s: %v is above the maximum %v", oldWhere(path), n, *s.Maximum)
		}
	}
	if str, ok := v.(string); ok && s.pattern != nil && !s.pattern.MatchString(str) {
		return fmt.Errorf("%s: %q does not match the pattern %s", oldWhere(path), str, s.Pattern)
	}
	if l, ok := v.([]any); ok {
		if s.MinItems != nil && len(l) < *s.MinItems {
			return fmt.Errorf("%s: %d items, fewer than the minimum %d", oldWhere(path), len(l), *s.MinItems)
		}
		if s.MaxItems != nil && len(l) > *s.MaxItems {
			return fmt.Errorf("%s: %d items, more than the maximum %d", oldWhere(path), len(l), *s.MaxItems)
		}
	}
	switch x := v.(type) {
	case map[string]any:
		for _, r := range s.Required {
			if _, ok := x[r]; !ok {
				return fmt.Errorf("%s: missing required %q", oldWhere(path), r)
			}
		}
		keys := make([]string, 0, len(x))
		for k := range x {
			keys = append(keys, k)
		}
		sort.Strings(keys) // deterministic first error
		for _, k := range keys {
			p, known := s.Properties[k]
			if !known {
				if b, ok := s.AdditionalProperties.(bool); ok && !b {
					return fmt.Errorf("%s: unknown property %q", oldWhere(path), k)
				}
				continue
			}
			if p == nil {
				continue
			}
			if err := p.validate(path+"."+k, x[k]); err != nil {
				return err
			}
		}
	case []any:
		if s.Items != nil {
			for i, e := range x {
				if err := s.Items.validate(fmt.Sprintf("%s[%d]", path, i), e); err != nil {
					return err
				}
			}
		}
	}
	return nil
}

func oldWhere(path string) string {
	if path == "" {
		return "arguments"
	}
	return strings.TrimPrefix(path, ".")
}

func oldHasType(v any, t string) bool {
	switch t {
	case "integer":
		n, ok := v.(json.Number)
		if !ok {
			return false
		}
		f, err := n.Float64()
		return err == nil && f == math.Trunc(f)
	case "number":
		_, ok := v.(json.Number)
		return ok
	default:
		return oldJSONType(v) == t
	}
}

func oldJSONType(v any) string {
	switch v.(type) {
	case nil:
		return "null"
	case bool:
		return "boolean"
	case json.Number, float64:
		return "number"
	case string:
		return "string"
	case []any:
		return "array"
	case map[string]any:
		return "object"
	}
	return fmt.Sprintf("%T", v)
}

func oldSameJSON(a, b any) bool {
	ja, err1 := json.Marshal(a)
	jb, err2 := json.Marshal(b)
	return err1 == nil && err2 == nil && string(ja) == string(jb)
}

// The fast path of argument validation: a scanner that checks arguments
// against a compiled schema without allocating. It answers only "valid";
// anything it cannot decide cheaply (escaped keys, duplicate keys, deep
// nesting, enums of numbers) and every invalid input goes to the decoding
// validator, which also words the error. FuzzFastValidate keeps the two in
// agreement.

const oldFastMaxDepth = 64

// fastValid reports whether args certainly satisfy s.
func (s *oldSchemaNode) fastValid(args string) bool {
	i := oldSkipWS(args, 0) // JSON white space only: other spaces are the decoder's to reject
	if i == len(args) {
		args, i = "{}", 0
	}
	if args[i] != '{' {
		return false
	}
	end, ok := s.fastValue(args, i, 0)
	return ok && oldSkipWS(args, end) == len(args)
}

func oldSkipWS(s string, i int) int {
	for i < len(s) && (s[i] == ' ' || s[i] == '\t' || s[i] == '\n' || s[i] == '\r') {
		i++
	}
	return i
}

// fastValue checks the value starting at s[i] (after white space) and
// returns oldWhere it ends.
func (n *oldSchemaNode) fastValue(s string, i, depth int) (int, bool) {
	if depth > oldFastMaxDepth {
		return 0, false
	}
	i = oldSkipWS(s, i)
	if i >= len(s) {
		return 0, false
	}
	var kind string
	var bit oldTypeSet
	switch c := s[i]; {
	case c == '{':
		kind, bit = "object", oldTypeObject
	case c == '[':
		kind, bit = "array", oldTypeArray
	case c == '"':
		kind, bit = "string", oldTypeString
	case c == 't' || c == 'f':
		kind, bit = "boolean", oldTypeBoolean
	case c == 'n':
		kind, bit = "null", oldTypeNull
	case c == '-' || (c >= '0' && c <= '9'):
		kind, bit = "number", oldTypeNumber
	default:
		return 0, false
	}
	if n == nil {
		n = &oldAnySchema
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
		end, esc, ok = oldScanString(s, i)
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
		end = oldScanNumber(s, i)
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

var oldAnySchema oldSchemaNode

func (n *oldSchemaNode) fastType(kind oldTypeSet, raw string) bool {
	switch {
	case len(n.types) == 0 || n.kinds&kind != 0:
		return true
	case kind == oldTypeNumber && n.kinds&oldTypeInteger != 0:
		f, err := strconv.ParseFloat(raw, 64)
		return err == nil && f == math.Trunc(f)
	}
	return false
}

// oldTypeSet is a set of JSON Schema type names, a bit each.
type oldTypeSet uint8

const (
	oldTypeObject oldTypeSet = 1 << iota
	oldTypeArray
	oldTypeString
	oldTypeBoolean
	oldTypeNull
	oldTypeNumber
	oldTypeInteger
)

// oldTypeBit is the bit of the type named t; none for a name it does not
// know, which no value has.
func oldTypeBit(t string) oldTypeSet {
	switch t {
	case "object":
		return oldTypeObject
	case "array":
		return oldTypeArray
	case "string":
		return oldTypeString
	case "boolean":
		return oldTypeBoolean
	case "null":
		return oldTypeNull
	case "number":
		return oldTypeNumber
	case "integer":
		return oldTypeInteger
	}
	return 0
}

// fastEnum accepts only string enums matched exactly; anything else is
// left to the decoding validator.
func (n *oldSchemaNode) fastEnum(kind, raw string) bool {
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

func (n *oldSchemaNode) fastObject(s string, i, depth int) (int, bool) {
	if len(n.types) > 0 && n.kinds&oldTypeObject == 0 || len(n.Enum) > 0 || len(n.Required) > 64 {
		return 0, false
	}
	start, keys := i, 0
	seen := uint64(0) // a bit per required key found
	i = oldSkipWS(s, i+1)
	if i < len(s) && s[i] == '}' {
		i++
	} else {
		for {
			if i >= len(s) || s[i] != '"' {
				return 0, false
			}
			kend, esc, ok := oldScanString(s, i)
			if !ok || esc {
				return 0, false
			}
			key := s[i+1 : kend-1]
			if keys++; keys > 64 || oldDuplicateKey(s, start, i, key) {
				return 0, false // large objects go to the decoder: the duplicate check is quadratic
			}
			i = oldSkipWS(s, kend)
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
			i = oldSkipWS(s, end)
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
			i = oldSkipWS(s, i+1)
		}
	}
	if seen != 1<<len(n.Required)-1 {
		return 0, false
	}
	return i, true
}

func (n *oldSchemaNode) fastArray(s string, i, depth int) (int, bool) {
	if len(n.types) > 0 && n.kinds&oldTypeArray == 0 {
		return 0, false
	}
	if len(n.Enum) > 0 || n.MinItems != nil || n.MaxItems != nil {
		return 0, false // the decoding validator counts
	}
	i = oldSkipWS(s, i+1)
	if i < len(s) && s[i] == ']' {
		return i + 1, true
	}
	for {
		end, ok := n.Items.fastValue(s, i, depth+1)
		if !ok {
			return 0, false
		}
		i = oldSkipWS(s, end)
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

// oldDuplicateKey reports whether key already appeared as a key of the object
// that starts at s[start], before position i. Nested objects are skipped.
func oldDuplicateKey(s string, start, i int, key string) bool {
	depth := 0
	for j := start + 1; j < i; j++ {
		switch s[j] {
		case '{', '[':
			depth++
		case '}', ']':
			depth--
		case '"':
			end, _, ok := oldScanString(s, j)
			if !ok {
				return true
			}
			if k := oldSkipWS(s, end); depth == 0 && k < len(s) && s[k] == ':' && s[j+1:end-1] == key {
				return true
			}
			j = end - 1
		}
	}
	return false
}

// oldScanString returns the end of the JSON string at s[i] (just past the
// closing quote), whether it holds escapes, and whether it is well formed:
// valid UTF-8, no control characters, known escapes.
func oldScanString(s string, i int) (end int, escaped, ok bool) {
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
					if !oldIsHex(s[k]) {
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

func oldIsHex(c byte) bool {
	return c >= '0' && c <= '9' || c >= 'a' && c <= 'f' || c >= 'A' && c <= 'F'
}

// oldScanNumber returns the end of the JSON number at s[i], or i when there is none.
func oldScanNumber(s string, i int) int {
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
