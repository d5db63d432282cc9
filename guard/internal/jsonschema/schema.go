package jsonschema

import (
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"regexp"
	"slices"
	"sort"
	"strings"
	"sync"
	"unicode/utf8"
)

// ValidateArguments checks tool arguments against a JSON schema. It
// understands the subset of JSON Schema that model providers accept for tool
// parameters: type (one or a list), properties, required, enum, items,
// additionalProperties: false, minimum and maximum, minItems and maxItems,
// and pattern (Go's regexp syntax, unanchored). Other keywords are
// ignored, so a schema never fails to load because of them.
//
// The arguments must be a JSON object. A schema whose only property is
// langchaingo's "__arg1" (the catch-all string input that agents.Executor
// offers for plain tools) accepts any input.
func ValidateArguments(schema json.RawMessage, args string) error {
	s, err := Compile(schema)
	if err != nil {
		return err
	}
	return s.Validate(args)
}

// Validate checks args against a compiled schema: the zero-allocation
// scanner first, the decoder for whatever it cannot vouch for.
func (s *Node) Validate(args string) error {
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
func (s *Node) decodeValidate(args string) error {
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
		return fmt.Errorf("want a JSON object, got %s", jsonType(v))
	}
	return s.validate("", v)
}

type Node struct {
	Type                 any              `json:"type"`
	Properties           map[string]*Node `json:"properties"`
	Required             []string         `json:"required"`
	Enum                 []any            `json:"enum"`
	Items                *Node            `json:"items"`
	AdditionalProperties any              `json:"additionalProperties"`
	Minimum              *float64         `json:"minimum"`
	Maximum              *float64         `json:"maximum"`
	MinItems             *int             `json:"minItems"`
	MaxItems             *int             `json:"maxItems"`
	Pattern              string           `json:"pattern"`

	types    []string
	kinds    typeSet // types, as a set, for the fast path
	pattern  *regexp.Regexp
	catchAll bool
}

var schemaCache sync.Map // string(schema) -> *Node or error

// Compile compiles a schema.
func Compile(raw json.RawMessage) (*Node, error) {
	if c, ok := schemaCache.Load(string(raw)); ok {
		if err, ok := c.(error); ok {
			return nil, err
		}
		return c.(*Node), nil
	}
	s := new(Node)
	var err error
	if uerr := json.Unmarshal(raw, s); uerr != nil {
		err = fmt.Errorf("tool schema is not valid JSON: %v", uerr)
	} else if err = s.prepare(0); err == nil {
		_, s.catchAll = s.Properties["__arg1"]
		s.catchAll = s.catchAll && len(s.Properties) == 1
	}
	if err != nil {
		schemaCache.Store(string(raw), err)
		return nil, err
	}
	schemaCache.Store(string(raw), s)
	return s, nil
}

func (s *Node) prepare(depth int) error {
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
		s.kinds |= typeBit(t)
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

func (s *Node) validate(path string, v any) error {
	if len(s.types) > 0 && !slices.ContainsFunc(s.types, func(t string) bool { return hasType(v, t) }) {
		return fmt.Errorf("%s: want %s, got %s", where(path), strings.Join(s.types, " or "), jsonType(v))
	}
	if len(s.Enum) > 0 && !slices.ContainsFunc(s.Enum, func(e any) bool { return sameJSON(e, v) }) {
		return fmt.Errorf("%s: %v is not one of %v", where(path), v, s.Enum)
	}
	if n, ok := v.(json.Number); ok {
		f, _ := n.Float64()
		if s.Minimum != nil && f < *s.Minimum {
			return fmt.Errorf("%s: %v is below the minimum %v", where(path), n, *s.Minimum)
		}
		if s.Maximum != nil && f > *s.Maximum {
			return fmt.Errorf("%s: %v is above the maximum %v", where(path), n, *s.Maximum)
		}
	}
	if str, ok := v.(string); ok && s.pattern != nil && !s.pattern.MatchString(str) {
		return fmt.Errorf("%s: %q does not match the pattern %s", where(path), str, s.Pattern)
	}
	if l, ok := v.([]any); ok {
		if s.MinItems != nil && len(l) < *s.MinItems {
			return fmt.Errorf("%s: %d items, fewer than the minimum %d", where(path), len(l), *s.MinItems)
		}
		if s.MaxItems != nil && len(l) > *s.MaxItems {
			return fmt.Errorf("%s: %d items, more than the maximum %d", where(path), len(l), *s.MaxItems)
		}
	}
	switch x := v.(type) {
	case map[string]any:
		for _, r := range s.Required {
			if _, ok := x[r]; !ok {
				return fmt.Errorf("%s: missing required %q", where(path), r)
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
					return fmt.Errorf("%s: unknown property %q", where(path), k)
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

func where(path string) string {
	if path == "" {
		return "arguments"
	}
	return strings.TrimPrefix(path, ".")
}

func hasType(v any, t string) bool {
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
		return jsonType(v) == t
	}
}

func jsonType(v any) string {
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

func sameJSON(a, b any) bool {
	ja, err1 := json.Marshal(a)
	jb, err2 := json.Marshal(b)
	return err1 == nil && err2 == nil && string(ja) == string(jb)
}
