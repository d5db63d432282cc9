package schema

import (
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"regexp"
	"slices"
	"strings"
	"sync"

	"github.com/go-json-experiment/json/jsontext"
)

// A Schema is a compiled tool schema. Compile makes one; Validate checks
// a tool call's arguments against it.
//
// A Schema is immutable once compiled and safe for concurrent use; it
// must not be copied. The zero Schema accepts any JSON object.
type Schema struct {
	root     *node
	catchAll bool      // the schema's only property is "__arg1": anything goes
	empty    *Error    // what Validate says of "{}", which is what empty arguments mean
	readers  sync.Pool // of *reader: a decoder and its buffer, reused across calls
}

// schemaNode is a schema as written, read with encoding/json as package
// guard has always read it: keywords match without regard to case, and a
// keyword of the wrong JSON type is a compile error in encoding/json's
// words, which name this type.
type schemaNode struct {
	Type                 any                    `json:"type"`
	Properties           map[string]*schemaNode `json:"properties"`
	Required             []string               `json:"required"`
	Enum                 []any                  `json:"enum"`
	Items                *schemaNode            `json:"items"`
	AdditionalProperties any                    `json:"additionalProperties"`
	Minimum              *float64               `json:"minimum"`
	Maximum              *float64               `json:"maximum"`
	MinItems             *int                   `json:"minItems"`
	MaxItems             *int                   `json:"maxItems"`
	Pattern              string                 `json:"pattern"`
}

// maxDepth is how deeply a schema's properties and items may nest.
const maxDepth = 64

// Compile compiles a tool's parameter schema. It understands the subset of
// JSON Schema that model providers accept for tool parameters (see the
// package documentation) and ignores other keywords, so a schema fails to
// compile only when it is not JSON, a keyword it understands has the wrong
// JSON type, a pattern is not a Go regular expression, minItems or
// maxItems is negative, or it nests more than 64 levels deep.
func Compile(raw json.RawMessage) (*Schema, error) {
	var w schemaNode
	if err := json.Unmarshal(raw, &w); err != nil {
		return nil, fmt.Errorf("tool schema is not valid JSON: %v", err)
	}
	root, err := compile(&w, 0)
	if err != nil {
		return nil, err
	}
	_, arg1 := w.Properties["__arg1"]
	s := &Schema{root: root, catchAll: arg1 && len(w.Properties) == 1}
	if err := s.read("{}"); err != nil {
		s.empty = err
	}
	return s, nil
}

// node is one compiled level of a schema. A nil *node allows anything.
type node struct {
	free bool // no keyword constrains the value: it is only read

	typed    bool    // the schema names types: a value must have one of kinds
	kinds    typeSet // the types named, as a set; unknown names add nothing
	typeList string  // the types named, for messages: "string or null"

	enum     []enumValue // nil: no enum
	enumText string      // the enum as package guard has always printed it
	unenum   *node       // this node less its enum: a composite value that is one of it is checked against the rest

	number         bool // the value of a number is needed: integer type, enum, minimum or maximum
	hasMin, hasMax bool
	min, max       float64

	pattern *regexp.Regexp

	minItems, maxItems int // -1: no bound

	props    map[string]field // properties and required names
	required []string         // without repeats, in the schema's order
	closed   bool             // additionalProperties: false
	items    *node
}

// field is what a node knows of one name of an object.
type field struct {
	node  *node // the property's schema; nil allows anything
	known bool  // a property of the schema, not only a required name
	req   int   // 1 + the name's index in required; 0 when not required
}

func compile(w *schemaNode, depth int) (*node, error) {
	if depth > maxDepth {
		return nil, errors.New("tool schema nests too deeply")
	}
	n := &node{minItems: -1, maxItems: -1}
	if w.Pattern != "" {
		re, err := regexp.Compile(w.Pattern)
		if err != nil {
			return nil, fmt.Errorf("tool schema: pattern %q: %v", w.Pattern, err)
		}
		n.pattern = re
	}
	if (w.MinItems != nil && *w.MinItems < 0) || (w.MaxItems != nil && *w.MaxItems < 0) {
		return nil, errors.New("tool schema: minItems and maxItems are at least 0")
	}
	var types []string
	switch t := w.Type.(type) {
	case string:
		types = []string{t}
	case []any:
		for _, x := range t {
			if s, ok := x.(string); ok {
				types = append(types, s)
			}
		}
	}
	for _, t := range types {
		n.kinds |= typeBit(t)
	}
	n.typed, n.typeList = len(types) > 0, strings.Join(types, " or ")
	if len(w.Enum) > 0 {
		n.enumText = fmt.Sprint(w.Enum)
		for _, e := range w.Enum {
			v, err := newEnumValue(e)
			if err != nil {
				return nil, fmt.Errorf("tool schema: enum value %v: %v", e, err)
			}
			n.enum = append(n.enum, v)
		}
	}
	if w.Minimum != nil {
		n.hasMin, n.min = true, *w.Minimum
	}
	if w.Maximum != nil {
		n.hasMax, n.max = true, *w.Maximum
	}
	n.number = n.kinds&typeInteger != 0 || n.enum != nil || n.hasMin || n.hasMax
	if w.MinItems != nil {
		n.minItems = *w.MinItems
	}
	if w.MaxItems != nil {
		n.maxItems = *w.MaxItems
	}
	if b, ok := w.AdditionalProperties.(bool); ok && !b {
		n.closed = true
	}
	if len(w.Properties) > 0 || len(w.Required) > 0 {
		n.props = make(map[string]field, len(w.Properties)+len(w.Required))
	}
	// Sorted, so that of two bad properties the same one is always reported.
	for _, name := range slices.Sorted(maps.Keys(w.Properties)) {
		f := field{known: true}
		if p := w.Properties[name]; p != nil {
			c, err := compile(p, depth+1)
			if err != nil {
				return nil, err
			}
			f.node = c
		}
		n.props[name] = f
	}
	for _, name := range w.Required {
		f := n.props[name]
		if f.req == 0 {
			n.required = append(n.required, name)
			f.req = len(n.required)
			n.props[name] = f
		}
	}
	if w.Items != nil {
		c, err := compile(w.Items, depth+1)
		if err != nil {
			return nil, err
		}
		n.items = c
	}
	n.free = !n.typed && n.enum == nil && !n.number && n.pattern == nil && n.minItems < 0 && n.maxItems < 0 &&
		n.props == nil && !n.closed && n.items == nil
	if n.enum != nil {
		rest := *n
		rest.enum, rest.unenum = nil, nil
		rest.number = rest.kinds&typeInteger != 0 || rest.hasMin || rest.hasMax
		n.unenum = &rest
	}
	return n, nil
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

// enumValue is one value of an enum, as Validate compares it: a string
// exactly, a number by its float64 value, an object or array by its
// canonical JSON (RFC 8785).
type enumValue struct {
	kind jsontext.Kind // '"', '0', 't', 'f', 'n', or '{' for any composite value
	str  string        // the string, or the canonical JSON of a composite value
	num  float64
}

func newEnumValue(e any) (enumValue, error) {
	switch e := e.(type) {
	case nil:
		return enumValue{kind: 'n'}, nil
	case bool:
		if e {
			return enumValue{kind: 't'}, nil
		}
		return enumValue{kind: 'f'}, nil
	case string:
		return enumValue{kind: '"', str: e}, nil
	case float64:
		return enumValue{kind: '0', num: e}, nil
	}
	b, err := json.Marshal(e)
	if err != nil {
		return enumValue{}, err
	}
	v := jsontext.Value(b)
	if err := v.Canonicalize(); err != nil {
		return enumValue{}, err
	}
	return enumValue{kind: '{', str: string(v)}, nil
}
