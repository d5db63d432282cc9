package policy

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"reflect"
	"slices"
	"strconv"
	"strings"
	"time"

	"go.yaml.in/yaml/v3"
)

// A policy file is read in two passes: the text (YAML, or JSON, which is
// read by its own decoder so that its errors and positions are JSON's)
// becomes a tree of yaml.Nodes that keep their line and column, with
// repeated keys refused; then decodeNode fills the file's structs from the
// tree, refusing unknown keys and values of the wrong type, each error
// naming file:line:col and the key.

// Error is a policy file that cannot be read, and where: the file, the
// line and column of the value at fault (0 when it is the whole file), the
// key that holds it, and what is wrong.
type Error struct {
	File      string
	Line, Col int
	Key       string // "tools.send_email.effect"; "" for the file as a whole
	Msg       string
	Err       error // the cause, for an error of the file system; may be nil
}

func (e *Error) Error() string {
	var b strings.Builder
	b.WriteString("policy: ")
	b.WriteString(e.File)
	if e.Line > 0 {
		fmt.Fprintf(&b, ":%d:%d", e.Line, e.Col)
	}
	b.WriteString(": ")
	if e.Key != "" {
		b.WriteString(e.Key)
		b.WriteString(": ")
	}
	b.WriteString(e.Msg)
	if e.Err != nil {
		if e.Msg != "" {
			b.WriteString(": ")
		}
		b.WriteString(e.Err.Error())
	}
	return b.String()
}

// Unwrap returns the cause.
func (e *Error) Unwrap() error { return e.Err }

// decoder turns a node tree into the policy file's structs.
type decoder struct {
	file string
	pos  map[string]*yaml.Node // every decoded key path -> its value's node
}

// at returns an error about the value at path, placed where the file holds
// it (or at the file when it does not).
func (d *decoder) at(path, format string, args ...any) error {
	return d.errAt(d.pos[path], path, format, args...)
}

func (d *decoder) errAt(n *yaml.Node, path, format string, args ...any) error {
	e := &Error{File: d.file, Key: path, Msg: fmt.Sprintf(format, args...)}
	if n != nil {
		e.Line, e.Col = n.Line, n.Column
	}
	return e
}

// parseTree reads data as JSON when it starts with '{' or '[', as YAML
// otherwise, and returns the root node.
func parseTree(file string, data []byte) (*yaml.Node, error) {
	trimmed := bytes.TrimLeft(data, " \t\r\n\ufeff")
	if len(bytes.TrimSpace(trimmed)) == 0 {
		return nil, &Error{File: file, Msg: "empty file (the smallest policy is {})"}
	}
	if trimmed[0] == '{' || trimmed[0] == '[' {
		return parseJSONTree(file, data)
	}
	var doc yaml.Node
	dec := yaml.NewDecoder(bytes.NewReader(data))
	if err := dec.Decode(&doc); err != nil {
		return nil, yamlError(file, err)
	}
	var extra yaml.Node
	if err := dec.Decode(&extra); err == nil {
		return nil, &Error{File: file, Line: extra.Line, Col: extra.Column, Msg: "a second YAML document (a policy file holds one)"}
	} else if !errors.Is(err, io.EOF) {
		return nil, yamlError(file, err)
	}
	if doc.Kind != yaml.DocumentNode || len(doc.Content) != 1 {
		return nil, &Error{File: file, Msg: "empty file (the smallest policy is {})"}
	}
	root := doc.Content[0]
	if err := checkTree(file, root, 0); err != nil {
		return nil, err
	}
	return root, nil
}

// yamlError turns the YAML library's error ("yaml: line 3: ...") into one
// that names the file.
func yamlError(file string, err error) error {
	msg := strings.TrimPrefix(err.Error(), "yaml: ")
	if rest, ok := strings.CutPrefix(msg, "line "); ok {
		if n, after, ok := strings.Cut(rest, ": "); ok {
			if line, err := strconv.Atoi(n); err == nil {
				return &Error{File: file, Line: line, Col: 1, Msg: after}
			}
		}
	}
	return &Error{File: file, Msg: msg}
}

// maxDepth bounds how deeply a policy file nests.
const maxDepth = 64

// checkTree refuses what the decoder does not read: aliases (an anchor's
// copies could make a small file large), repeated keys (the second would
// silently win), non-string keys and nesting deeper than maxDepth.
func checkTree(file string, n *yaml.Node, depth int) error {
	if depth > maxDepth {
		return &Error{File: file, Line: n.Line, Col: n.Column, Msg: fmt.Sprintf("nested deeper than %d levels", maxDepth)}
	}
	switch n.Kind {
	case yaml.AliasNode:
		return &Error{File: file, Line: n.Line, Col: n.Column, Msg: "YAML aliases (*" + n.Value + ") are not supported: write the value out"}
	case yaml.MappingNode:
		seen := make(map[string]*yaml.Node, len(n.Content)/2)
		for i := 0; i+1 < len(n.Content); i += 2 {
			k := n.Content[i]
			if k.Kind != yaml.ScalarNode || (k.Tag != "!!str" && k.Tag != "!!int" && k.Tag != "!!float" && k.Tag != "!!bool") {
				return &Error{File: file, Line: k.Line, Col: k.Column, Msg: "a key must be a string"}
			}
			if k.Value == "<<" && k.Tag == "!!merge" {
				return &Error{File: file, Line: k.Line, Col: k.Column, Msg: "YAML merge keys (<<) are not supported"}
			}
			if first, ok := seen[k.Value]; ok {
				return &Error{File: file, Line: k.Line, Col: k.Column, Msg: fmt.Sprintf("key %q repeats the key at line %d, column %d", k.Value, first.Line, first.Column)}
			}
			seen[k.Value] = k
			if err := checkTree(file, n.Content[i+1], depth+1); err != nil {
				return err
			}
		}
	case yaml.SequenceNode:
		for _, c := range n.Content {
			if err := checkTree(file, c, depth+1); err != nil {
				return err
			}
		}
	}
	return nil
}

// parseJSONTree reads a JSON text into the same node tree as YAML's, with
// positions, refusing repeated keys and anything after the value.
func parseJSONTree(file string, data []byte) (*yaml.Node, error) {
	p := &jsonTree{file: file, data: data, dec: json.NewDecoder(bytes.NewReader(data))}
	p.dec.UseNumber()
	root, err := p.value(0)
	if err != nil {
		return nil, err
	}
	if rest := bytes.TrimLeft(data[p.dec.InputOffset():], " \t\r\n"); len(rest) > 0 {
		line, col := lineCol(data, len(data)-len(rest))
		return nil, &Error{File: file, Line: line, Col: col, Msg: "data after the policy object"}
	}
	return root, nil
}

type jsonTree struct {
	file  string
	data  []byte
	dec   *json.Decoder
	lines []int // offsets of the newlines in data, for lineCol
}

// lineCol turns a byte offset of the text into a line and a column, both
// from 1, by a binary search of the newlines: a large file costs
// O(tokens × log lines), not O(tokens × size).
func (p *jsonTree) lineCol(off int) (int, int) {
	if p.lines == nil {
		p.lines = []int{}
		for i, c := range p.data {
			if c == '\n' {
				p.lines = append(p.lines, i)
			}
		}
	}
	off = min(max(off, 0), len(p.data))
	n, _ := slices.BinarySearch(p.lines, off) // newlines before off
	start := 0
	if n > 0 {
		start = p.lines[n-1] + 1
	}
	return n + 1, off - start + 1
}

// next returns the next token and the line and column where it starts.
func (p *jsonTree) next() (json.Token, int, int, error) {
	off := int(p.dec.InputOffset())
	for off < len(p.data) && strings.IndexByte(" \t\r\n,:", p.data[off]) >= 0 {
		off++
	}
	line, col := p.lineCol(off)
	tok, err := p.dec.Token()
	if err != nil {
		var se *json.SyntaxError
		switch {
		case errors.As(err, &se):
			off := int(se.Offset) - 1
			if off >= 0 && off < len(p.data) && strings.IndexByte(" \t\r\n,:", p.data[off]) >= 0 {
				off++ // the scanner stopped after a separator: point at what followed it
				for off < len(p.data) && strings.IndexByte(" \t\r\n", p.data[off]) >= 0 {
					off++
				}
			}
			l, c := p.lineCol(off)
			return nil, 0, 0, &Error{File: p.file, Line: l, Col: c, Msg: err.Error()}
		case errors.Is(err, io.EOF), errors.Is(err, io.ErrUnexpectedEOF):
			return nil, 0, 0, &Error{File: p.file, Msg: "unexpected end of file"}
		}
		return nil, 0, 0, &Error{File: p.file, Line: line, Col: col, Msg: err.Error()}
	}
	return tok, line, col, nil
}

func (p *jsonTree) value(depth int) (*yaml.Node, error) {
	tok, line, col, err := p.next()
	if err != nil {
		return nil, err
	}
	return p.node(tok, line, col, depth)
}

func (p *jsonTree) node(tok json.Token, line, col, depth int) (*yaml.Node, error) {
	if depth > maxDepth {
		return nil, &Error{File: p.file, Line: line, Col: col, Msg: fmt.Sprintf("nested deeper than %d levels", maxDepth)}
	}
	n := &yaml.Node{Line: line, Column: col, Kind: yaml.ScalarNode}
	switch v := tok.(type) {
	case json.Delim:
		switch v {
		case '{':
			n.Kind, n.Tag, n.Style = yaml.MappingNode, "!!map", yaml.FlowStyle
			seen := map[string]*yaml.Node{}
			for {
				tok, l, c, err := p.next()
				if err != nil {
					return nil, err
				}
				if tok == json.Delim('}') {
					return n, nil
				}
				key := &yaml.Node{Kind: yaml.ScalarNode, Tag: "!!str", Value: tok.(string), Line: l, Column: c, Style: yaml.DoubleQuotedStyle}
				if first, ok := seen[key.Value]; ok {
					return nil, &Error{File: p.file, Line: l, Col: c, Msg: fmt.Sprintf("key %q repeats the key at line %d, column %d", key.Value, first.Line, first.Column)}
				}
				seen[key.Value] = key
				val, err := p.value(depth + 1)
				if err != nil {
					return nil, err
				}
				n.Content = append(n.Content, key, val)
			}
		case '[':
			n.Kind, n.Tag, n.Style = yaml.SequenceNode, "!!seq", yaml.FlowStyle
			for {
				tok, l, c, err := p.next()
				if err != nil {
					return nil, err
				}
				if tok == json.Delim(']') {
					return n, nil
				}
				val, err := p.node(tok, l, c, depth+1)
				if err != nil {
					return nil, err
				}
				n.Content = append(n.Content, val)
			}
		}
	case string:
		n.Tag, n.Value, n.Style = "!!str", v, yaml.DoubleQuotedStyle
	case json.Number:
		n.Tag, n.Value = "!!float", v.String()
		if _, err := strconv.ParseInt(v.String(), 10, 64); err == nil {
			n.Tag = "!!int"
		}
	case bool:
		n.Tag, n.Value = "!!bool", strconv.FormatBool(v)
	case nil:
		n.Tag, n.Value = "!!null", "null"
	}
	return n, nil
}

// lineCol turns a byte offset into a line and a column, both from 1.
func lineCol(data []byte, off int) (int, int) {
	off = min(max(off, 0), len(data))
	before := data[:off]
	return bytes.Count(before, []byte("\n")) + 1, off - bytes.LastIndexByte(before, '\n')
}

var (
	durationType   = reflect.TypeFor[time.Duration]()
	rawMessageType = reflect.TypeFor[json.RawMessage]()
	anyType        = reflect.TypeFor[any]()
	exprType       = reflect.TypeFor[policyExpr]()
)

// decode fills v from n; path names v in errors.
func (d *decoder) decode(n *yaml.Node, path string, v reflect.Value) error {
	t := v.Type()
	if d.pos != nil {
		d.pos[path] = n
	}
	if n.Kind == yaml.ScalarNode && n.Tag == "!!null" && t != anyType {
		return nil // the default
	}
	switch {
	case t == exprType:
		if n.Kind != yaml.ScalarNode || n.Tag != "!!str" {
			return d.wrongType(n, path, t)
		}
		v.Set(reflect.ValueOf(policyExpr{src: n.Value, line: n.Line, col: n.Column, style: n.Style, path: path}))
		return nil
	case t == rawMessageType:
		var b bytes.Buffer
		if err := d.writeJSON(&b, n, path); err != nil {
			return err
		}
		v.SetBytes(b.Bytes())
		return nil
	case t == anyType:
		x, err := d.plain(n, path)
		if err != nil {
			return err
		}
		if x != nil {
			v.Set(reflect.ValueOf(x))
		}
		return nil
	case t == durationType:
		return d.decodeDuration(n, path, v)
	case t.Kind() == reflect.Pointer:
		p := reflect.New(t.Elem())
		if err := d.decode(n, path, p.Elem()); err != nil {
			return err
		}
		v.Set(p)
		return nil
	case t.Kind() == reflect.Struct:
		return d.decodeStruct(n, path, v)
	case t.Kind() == reflect.Map:
		return d.decodeMap(n, path, v)
	case t.Kind() == reflect.Slice:
		return d.decodeSlice(n, path, v)
	}
	return d.decodeScalar(n, path, v)
}

// decodeDuration decodes a Go duration written as a string ("30s").
func (d *decoder) decodeDuration(n *yaml.Node, path string, v reflect.Value) error {
	t := v.Type()
	if n.Kind != yaml.ScalarNode || n.Tag != "!!str" {
		return d.wrongType(n, path, t)
	}
	if n.Value == "" {
		return nil
	}
	x, err := time.ParseDuration(n.Value)
	if err != nil {
		return d.errAt(n, path, "%q is not a duration (want a Go duration such as \"30s\" or \"1m30s\")", n.Value)
	}
	v.SetInt(int64(x))
	return nil
}

// decodeStruct decodes a mapping into a struct by its json field names,
// refusing a key the struct has no field for.
func (d *decoder) decodeStruct(n *yaml.Node, path string, v reflect.Value) error {
	t := v.Type()
	if n.Kind != yaml.MappingNode {
		return d.wrongType(n, path, t)
	}
	fields := structFields(t)
	known := make([]string, 0, len(fields))
	for k := range fields {
		known = append(known, k)
	}
	for i := 0; i+1 < len(n.Content); i += 2 {
		k := n.Content[i]
		f, ok := fields[k.Value]
		if !ok {
			return d.unknownField(k, path, k.Value, known)
		}
		if err := d.decode(n.Content[i+1], join(path, k.Value), v.FieldByIndex(f)); err != nil {
			return err
		}
	}
	return nil
}

// decodeMap decodes a mapping into a map keyed by strings.
func (d *decoder) decodeMap(n *yaml.Node, path string, v reflect.Value) error {
	t := v.Type()
	if n.Kind != yaml.MappingNode {
		return d.wrongType(n, path, t)
	}
	m := reflect.MakeMapWithSize(t, len(n.Content)/2)
	for i := 0; i+1 < len(n.Content); i += 2 {
		k := n.Content[i]
		e := reflect.New(t.Elem()).Elem()
		if err := d.decode(n.Content[i+1], join(path, k.Value), e); err != nil {
			return err
		}
		m.SetMapIndex(reflect.ValueOf(k.Value).Convert(t.Key()), e)
	}
	v.Set(m)
	return nil
}

// decodeSlice decodes a sequence into a slice.
func (d *decoder) decodeSlice(n *yaml.Node, path string, v reflect.Value) error {
	t := v.Type()
	if n.Kind != yaml.SequenceNode {
		return d.wrongType(n, path, t)
	}
	s := reflect.MakeSlice(t, len(n.Content), len(n.Content))
	for i, e := range n.Content {
		if err := d.decode(e, fmt.Sprintf("%s[%d]", path, i), s.Index(i)); err != nil {
			return err
		}
	}
	v.Set(s)
	return nil
}

// decodeScalar decodes a scalar into a string, bool, int, uint32 or
// float64, each only from a scalar of its own YAML tag.
func (d *decoder) decodeScalar(n *yaml.Node, path string, v reflect.Value) error {
	t := v.Type()
	if n.Kind != yaml.ScalarNode {
		return d.wrongType(n, path, t)
	}
	switch t.Kind() {
	case reflect.String:
		if n.Tag != "!!str" {
			return d.wrongType(n, path, t)
		}
		v.SetString(n.Value)
	case reflect.Bool:
		if n.Tag != "!!bool" {
			return d.wrongType(n, path, t)
		}
		b, _ := strconv.ParseBool(strings.ToLower(n.Value))
		v.SetBool(b)
	case reflect.Int:
		if n.Tag != "!!int" {
			return d.wrongType(n, path, t)
		}
		x, err := strconv.ParseInt(strings.ReplaceAll(n.Value, "_", ""), 0, 64)
		if err != nil || x > math.MaxInt32 || x < math.MinInt32 {
			return d.errAt(n, path, "%s is out of range", n.Value)
		}
		v.SetInt(x)
	case reflect.Uint32:
		if n.Tag != "!!int" {
			return d.wrongType(n, path, t)
		}
		x, err := strconv.ParseInt(strings.ReplaceAll(n.Value, "_", ""), 0, 64)
		if err != nil || x < 0 || x > math.MaxInt32 {
			return d.errAt(n, path, "%s is out of range (want at least 0)", n.Value)
		}
		v.SetUint(uint64(x))
	case reflect.Float64:
		x, ok := number(n)
		if !ok {
			return d.wrongType(n, path, t)
		}
		v.SetFloat(x)
	default:
		return d.errAt(n, path, "cannot hold %s", t)
	}
	return nil
}

// number reads an int or float scalar; NaN and infinities are not numbers here.
func number(n *yaml.Node) (float64, bool) {
	if n.Kind != yaml.ScalarNode || (n.Tag != "!!int" && n.Tag != "!!float") {
		return 0, false
	}
	x, err := strconv.ParseFloat(strings.ReplaceAll(n.Value, "_", ""), 64)
	if err != nil {
		if i, err := strconv.ParseInt(strings.ReplaceAll(n.Value, "_", ""), 0, 64); err == nil {
			return float64(i), true
		}
		return 0, false
	}
	return x, !math.IsNaN(x) && !math.IsInf(x, 0)
}

// plain turns a node into plain Go values: map[string]any, []any, string,
// int64, float64, bool and nil.
func (d *decoder) plain(n *yaml.Node, path string) (any, error) {
	switch n.Kind {
	case yaml.MappingNode:
		m := make(map[string]any, len(n.Content)/2)
		for i := 0; i+1 < len(n.Content); i += 2 {
			k := n.Content[i].Value
			x, err := d.plain(n.Content[i+1], join(path, k))
			if err != nil {
				return nil, err
			}
			m[k] = x
		}
		return m, nil
	case yaml.SequenceNode:
		s := make([]any, len(n.Content))
		for i, c := range n.Content {
			x, err := d.plain(c, fmt.Sprintf("%s[%d]", path, i))
			if err != nil {
				return nil, err
			}
			s[i] = x
		}
		return s, nil
	case yaml.ScalarNode:
		switch n.Tag {
		case "!!null":
			return nil, nil
		case "!!bool":
			b, _ := strconv.ParseBool(strings.ToLower(n.Value))
			return b, nil
		case "!!int":
			if i, err := strconv.ParseInt(strings.ReplaceAll(n.Value, "_", ""), 0, 64); err == nil {
				return i, nil
			}
			return nil, d.errAt(n, path, "%s is out of range", n.Value)
		case "!!float":
			if x, ok := number(n); ok {
				return x, nil
			}
			return nil, d.errAt(n, path, "%s is not a finite number", n.Value)
		case "!!str":
			return n.Value, nil
		}
		return nil, d.errAt(n, path, "values tagged %s are not supported", n.Tag)
	}
	return nil, d.errAt(n, path, "unsupported value")
}

// writeJSON writes n as compact JSON, keys in the file's order.
func (d *decoder) writeJSON(b *bytes.Buffer, n *yaml.Node, path string) error {
	switch n.Kind {
	case yaml.MappingNode:
		b.WriteByte('{')
		for i := 0; i+1 < len(n.Content); i += 2 {
			if i > 0 {
				b.WriteByte(',')
			}
			k, _ := json.Marshal(n.Content[i].Value)
			b.Write(k)
			b.WriteByte(':')
			if err := d.writeJSON(b, n.Content[i+1], join(path, n.Content[i].Value)); err != nil {
				return err
			}
		}
		b.WriteByte('}')
		return nil
	case yaml.SequenceNode:
		b.WriteByte('[')
		for i, c := range n.Content {
			if i > 0 {
				b.WriteByte(',')
			}
			if err := d.writeJSON(b, c, fmt.Sprintf("%s[%d]", path, i)); err != nil {
				return err
			}
		}
		b.WriteByte(']')
		return nil
	}
	x, err := d.plain(n, path)
	if err != nil {
		return err
	}
	if n.Tag == "!!int" || n.Tag == "!!float" {
		b.WriteString(strings.ReplaceAll(n.Value, "_", "")) // the number as written
		if _, ok := x.(float64); ok && !json.Valid([]byte(strings.ReplaceAll(n.Value, "_", ""))) {
			b.Truncate(b.Len() - len(strings.ReplaceAll(n.Value, "_", "")))
			e, _ := json.Marshal(x)
			b.Write(e)
		}
		return nil
	}
	e, err := json.Marshal(x)
	if err != nil {
		return d.errAt(n, path, "%v", err)
	}
	b.Write(e)
	return nil
}

func (d *decoder) wrongType(n *yaml.Node, path string, t reflect.Type) error {
	return d.errAt(n, path, "want %s, got %s", describeType(t), describeNode(n))
}

// structFields maps the keys of a struct type to their fields: each field
// by its json name, fields of "-" and unexported ones left out, and the
// fields of an embedded struct as if they were the struct's own, unless
// the struct has a field of the same key.
func structFields(t reflect.Type) map[string][]int {
	out := map[string][]int{}
	var embedded []reflect.StructField
	for i := range t.NumField() {
		f := t.Field(i)
		switch k := jsonKey(f); {
		case f.Anonymous && k == "" && f.Type.Kind() == reflect.Struct:
			embedded = append(embedded, f)
		case k != "" && k != "-" && f.IsExported():
			out[k] = f.Index
		}
	}
	for _, e := range embedded {
		for k, idx := range structFields(e.Type) {
			if _, shadowed := out[k]; !shadowed {
				out[k] = append(slices.Clone(e.Index), idx...)
			}
		}
	}
	return out
}

func (d *decoder) unknownField(n *yaml.Node, path, key string, known []string) error {
	if path == "" {
		if moved, ok := movedKeys[key]; ok {
			return d.errAt(n, path, "unknown field %q (since version 2 it is %s)", key, moved)
		}
	}
	best, bestDist := "", 3 // suggest only close names
	for _, k := range known {
		if dist := editDistance(strings.ToLower(key), k); dist < bestDist {
			best, bestDist = k, dist
		}
	}
	if best != "" {
		return d.errAt(n, path, "unknown field %q (did you mean %q?)", key, best)
	}
	sorted := append([]string(nil), known...)
	slices.Sort(sorted)
	return d.errAt(n, path, "unknown field %q (known: %s)", key, strings.Join(sorted, ", "))
}

func describeNode(n *yaml.Node) string {
	switch n.Kind {
	case yaml.MappingNode:
		return "an object"
	case yaml.SequenceNode:
		return "an array"
	}
	s := n.Value
	if len(s) > 40 {
		s = s[:40] + "…"
	}
	if n.Tag == "!!str" {
		return strconv.Quote(s)
	}
	return s
}
