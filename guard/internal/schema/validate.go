package schema

import (
	"bytes"
	"errors"
	"fmt"
	"math"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/go-json-experiment/json/jsontext"
)

// Validate checks a tool call's arguments against s. It returns nil or an
// *Error: the first fault, in the order the package documentation gives.
//
// Validate reads the arguments once, with a jsontext.Decoder, checking
// each value against its schema as it is read; it allocates nothing for
// arguments the schema allows unless a name or a string the schema
// constrains holds an escape. Flat arguments it allows (an object of
// plain scalars, what most calls carry) are read byte by byte instead
// (acceptsFlat); every error comes from the decoder's reading. It is safe
// for concurrent use.
func (s *Schema) Validate(args string) error {
	if s.catchAll {
		return nil
	}
	if !utf8.ValidString(args) {
		return &Error{Err: fmt.Errorf("%w: the arguments are not valid UTF-8", ErrSyntax)}
	}
	if strings.TrimSpace(args) == "" {
		// Providers send "" for a call without arguments.
		if s.empty == nil {
			return nil
		}
		e := *s.empty
		return &e
	}
	if acceptsFlat(s.root, args) {
		return nil
	}
	if err := s.read(args); err != nil {
		return err
	}
	return nil
}

// read validates args, which are valid UTF-8.
func (s *Schema) read(args string) *Error {
	r, _ := s.readers.Get().(*reader)
	if r == nil {
		r = &reader{opts: []jsontext.Options{jsontext.AllowInvalidUTF8(true)}}
	}
	r.reset(args)
	err := r.arguments(s.root)
	r.release()
	s.readers.Put(r)
	return err
}

// reader reads one call's arguments and checks them against a schema. The
// decoder reads from buf, a copy of src, which it parses in place; so
// every value it returns is at the same offsets in src, and a name or
// string without escapes is a substring of src, at no cost.
type reader struct {
	src  string
	buf  bytes.Buffer
	dec  jsontext.Decoder
	opts []jsontext.Options
	path []step // where the value being read is
	text []byte // scratch: a string unquoted, a composite value canonicalized
	err  *Error // the arguments are not JSON Validate reads: reading stopped
}

// maxKept is the largest buffer a reader keeps between calls.
const maxKept = 256 << 10

func (r *reader) reset(args string) {
	r.src, r.err = args, nil
	r.buf.Reset()
	r.buf.WriteString(args)
	// AllowInvalidUTF8 only lets an escaped lone surrogate ("\ud800")
	// through, read as U+FFFD the way encoding/json reads it: Validate has
	// checked the text is UTF-8.
	r.dec.Reset(&r.buf, r.opts...)
}

func (r *reader) release() {
	r.src, r.path = "", r.path[:0]
	if r.buf.Cap() > maxKept {
		r.buf = bytes.Buffer{}
		r.dec.Reset(&r.buf, r.opts...) // the decoder holds the old buffer too
	}
	if cap(r.text) > maxKept {
		r.text = nil
	}
	r.buf.Reset()
}

// arguments reads the whole of the arguments: one object, then nothing
// but white space. Faults of the text come first, then the object's.
func (r *reader) arguments(root *node) *Error {
	var fault *Error
	if k := r.dec.PeekKind(); k == '{' {
		fault = r.value(root)
	} else {
		r.skip()
		if r.err == nil {
			fault = r.fault("want a JSON object, got %s", kindName(k))
		}
	}
	if r.err != nil {
		return r.err
	}
	if rest := r.src[r.dec.InputOffset():]; strings.TrimLeft(rest, " \t\r\n") != "" {
		return &Error{Err: fmt.Errorf("%w: trailing data after the object", ErrSyntax)}
	}
	return fault
}

// value reads the next value and checks it against n. It returns the
// value's first fault; when the text is not valid JSON it sets r.err and
// returns nil.
func (r *reader) value(n *node) *Error {
	if n == nil || n.free {
		r.skip()
		return nil
	}
	k := r.dec.PeekKind()
	switch k {
	case '{', '[':
		bit := typeObject
		if k == '[' {
			bit = typeArray
		}
		if n.typed && n.kinds&bit == 0 {
			r.skip()
			return r.wantType(n, k)
		}
		if n.enum != nil {
			return r.composite(n)
		}
		if k == '{' {
			return r.object(n)
		}
		return r.array(n)
	case '"':
		v := r.read()
		if v == nil {
			return nil
		}
		str := ""
		if n.enum != nil || n.pattern != nil {
			str = r.unquote(v)
		}
		return r.scalarFault(n, k, "", str)
	case '0':
		v := r.read()
		if v == nil {
			return nil
		}
		return r.scalarFault(n, k, r.lastText(v), "")
	case 't', 'f', 'n':
		if r.read() == nil {
			return nil
		}
		return r.scalarFault(n, k, "", "")
	}
	r.read() // not the start of a value: the decoder says why
	return nil
}

// verdict is what a node says of a scalar value: allowed, or its fault.
type verdict uint8

const (
	allowed verdict = iota
	wrongType
	notInEnum
	noMatch
	belowMinimum
	aboveMaximum
)

// scalar judges a scalar value of kind k ('"', '0', 't', 'f' or 'n')
// against n, which is not free: lit is a number's text, str a string's
// unquoted value when n has an enum or a pattern. Validate's reader and
// its fast path (flat.go) both judge by it.
func (n *node) scalar(k jsontext.Kind, lit, str string) verdict {
	switch k {
	case '"':
		switch {
		case n.typed && n.kinds&typeString == 0:
			return wrongType
		case n.enum != nil && !n.hasString(str):
			return notInEnum
		case n.pattern != nil && !n.pattern.MatchString(str):
			return noMatch
		}
	case '0':
		if !n.number && !n.typed {
			return allowed
		}
		f, err := 0.0, error(nil)
		if n.number {
			f, err = strconv.ParseFloat(lit, 64) // out of range: ±Inf, and not an integer
		}
		switch {
		case n.typed && n.kinds&typeNumber == 0 && (n.kinds&typeInteger == 0 || err != nil || f != math.Trunc(f)):
			return wrongType
		case n.enum != nil && !n.hasNumber(f):
			return notInEnum
		case n.hasMin && f < n.min:
			return belowMinimum
		case n.hasMax && f > n.max:
			return aboveMaximum
		}
	default:
		bit := typeBoolean
		if k == 'n' {
			bit = typeNull
		}
		switch {
		case n.typed && n.kinds&bit == 0:
			return wrongType
		case n.enum != nil && !n.hasLiteral(k):
			return notInEnum
		}
	}
	return allowed
}

// scalarFault is the fault of a scalar value, as scalar judges it, at
// r.path; nil when n allows it.
func (r *reader) scalarFault(n *node, k jsontext.Kind, lit, str string) *Error {
	switch n.scalar(k, lit, str) {
	case wrongType:
		return r.wantType(n, k)
	case notInEnum:
		switch k {
		case '"':
			return r.fault("%s is not one of %s", str, n.enumText)
		case '0':
			return r.fault("%s is not one of %s", lit, n.enumText)
		case 'n':
			return r.fault("<nil> is not one of %s", n.enumText) // as fmt prints the nil that encoding/json reads null as
		}
		return r.fault("%s is not one of %s", strconv.FormatBool(k == 't'), n.enumText)
	case noMatch:
		return r.fault("%q does not match the pattern %s", str, n.pattern)
	case belowMinimum:
		return r.fault("%s is below the minimum %v", lit, n.min)
	case aboveMaximum:
		return r.fault("%s is above the maximum %v", lit, n.max)
	}
	return nil
}

// object reads an object and checks it against n, which allows objects.
// Its fault is, as package guard has always reported it, the first
// required name it lacks, else the fault of its smallest name that has
// one, so a name that sorts after a fault already found is only read.
func (r *reader) object(n *node) *Error {
	if !r.token() {
		return nil
	}
	var seen uint64 // a bit per required name found, when there are at most 64
	var many []bool // when there are more
	if len(n.required) > 64 {
		many = make([]bool, len(n.required))
	}
	var fault *Error
	var faultName string
	for r.dec.PeekKind() != '}' {
		name, ok := r.name()
		if !ok {
			return nil
		}
		f := n.props[name]
		if f.req > 0 {
			if many != nil {
				many[f.req-1] = true
			} else {
				seen |= 1 << (f.req - 1)
			}
		}
		var err *Error
		switch {
		case fault != nil && name > faultName, f.node == nil && (f.known || !n.closed):
			r.skip()
		case !f.known:
			r.skip()
			err = r.fault("unknown property %q", name)
		default:
			r.path = append(r.path, step{name: name, index: -1})
			err = r.value(f.node)
			r.path = r.path[:len(r.path)-1]
		}
		if r.err != nil {
			return nil
		}
		if err != nil {
			fault, faultName = err, name
		}
	}
	if !r.token() {
		return nil
	}
	for i, name := range n.required {
		if many != nil && !many[i] || many == nil && seen&(1<<i) == 0 {
			return r.fault("missing required %q", name)
		}
	}
	return fault
}

// array reads an array and checks it against n, which allows arrays. Its
// fault is a wrong count of items, else its first item's fault.
func (r *reader) array(n *node) *Error {
	if !r.token() {
		return nil
	}
	var fault *Error
	count := 0
	for r.dec.PeekKind() != ']' {
		if fault == nil && n.items != nil && !n.items.free {
			r.path = append(r.path, step{index: count})
			fault = r.value(n.items)
			r.path = r.path[:len(r.path)-1]
		} else {
			r.skip()
		}
		if r.err != nil {
			return nil
		}
		count++
	}
	if !r.token() {
		return nil
	}
	if n.minItems >= 0 && count < n.minItems {
		return r.fault("%d items, fewer than the minimum %d", count, n.minItems)
	}
	if n.maxItems >= 0 && count > n.maxItems {
		return r.fault("%d items, more than the maximum %d", count, n.maxItems)
	}
	return fault
}

// composite reads an object or array that n, which has an enum, allows
// the type of. The enum comes first; a value in it is then checked
// against the rest of n, read again from its text.
func (r *reader) composite(n *node) *Error {
	v := r.read()
	if v == nil {
		return nil
	}
	text := r.lastText(v)
	r.text = append(r.text[:0], v...)
	c := jsontext.Value(r.text)
	if err := c.Canonicalize(r.opts...); err != nil || !n.hasComposite(c) {
		return r.fault("%s is not one of %s", text, n.enumText)
	}
	sub := &reader{opts: r.opts, path: append([]step(nil), r.path...)}
	sub.reset(text)
	return sub.value(n.unenum) // text has been read once: no fault of syntax here
}

func (n *node) hasString(s string) bool {
	for _, e := range n.enum {
		if e.kind == '"' && e.str == s {
			return true
		}
	}
	return false
}

func (n *node) hasNumber(f float64) bool {
	for _, e := range n.enum {
		if e.kind == '0' && e.num == f {
			return true
		}
	}
	return false
}

func (n *node) hasLiteral(k jsontext.Kind) bool {
	for _, e := range n.enum {
		if e.kind == k {
			return true
		}
	}
	return false
}

func (n *node) hasComposite(canonical []byte) bool {
	for _, e := range n.enum {
		if e.kind == '{' && e.str == string(canonical) {
			return true
		}
	}
	return false
}

// read reads the next scalar value; nil when the text is not valid JSON.
func (r *reader) read() jsontext.Value {
	v, err := r.dec.ReadValue()
	if err != nil {
		r.fail(err)
		return nil
	}
	return v
}

// token reads a '{', '}', '[' or ']' that PeekKind has seen.
func (r *reader) token() bool {
	if _, err := r.dec.ReadToken(); err != nil {
		r.fail(err)
		return false
	}
	return true
}

func (r *reader) skip() {
	if err := r.dec.SkipValue(); err != nil {
		r.fail(err)
	}
}

// name reads an object's name and unquotes it.
func (r *reader) name() (string, bool) {
	v := r.read()
	if v == nil {
		return "", false
	}
	if bytes.IndexByte(v, '\\') < 0 {
		s := r.lastText(v)
		return s[1 : len(s)-1], true
	}
	return string(r.unquoteBytes(v)), true
}

// lastText is the text in src of v, the value just read.
func (r *reader) lastText(v jsontext.Value) string {
	end := int(r.dec.InputOffset())
	return r.src[end-len(v) : end]
}

// unquote is the string v, just read: a substring of src unless it holds
// escapes.
func (r *reader) unquote(v jsontext.Value) string {
	if bytes.IndexByte(v, '\\') < 0 {
		s := r.lastText(v)
		return s[1 : len(s)-1]
	}
	return string(r.unquoteBytes(v))
}

func (r *reader) unquoteBytes(v jsontext.Value) []byte {
	// The decoder has read v, so the only error left is an escaped lone
	// surrogate, which AppendUnquote writes as U+FFFD as encoding/json does.
	r.text, _ = jsontext.AppendUnquote(r.text[:0], v)
	return r.text
}

// fault is a fault of the value at r.path.
func (r *reader) fault(format string, args ...any) *Error {
	return &Error{Path: pathString(r.path), Err: fmt.Errorf(format, args...)}
}

func (r *reader) wantType(n *node, k jsontext.Kind) *Error {
	return r.fault("want %s, got %s", n.typeList, kindName(k))
}

func kindName(k jsontext.Kind) string {
	switch k {
	case '{':
		return "object"
	case '[':
		return "array"
	case '"':
		return "string"
	case '0':
		return "number"
	case 't', 'f':
		return "boolean"
	case 'n':
		return "null"
	}
	return "nothing"
}

// fail records why the text is not JSON Validate reads.
func (r *reader) fail(err error) {
	if r.err != nil {
		return
	}
	var se *jsontext.SyntacticError
	switch {
	case errors.As(err, &se) && errors.Is(se.Err, jsontext.ErrDuplicateName):
		path, name := r.stackPath(se.JSONPointer)
		r.err = &Error{Path: path, Err: fmt.Errorf("%w %q", ErrDuplicateName, name)}
	case se != nil:
		r.err = &Error{Err: fmt.Errorf("%w: %v after offset %d", ErrSyntax, se.Err, se.ByteOffset)}
	default:
		r.err = &Error{Err: fmt.Errorf("%w: %v", ErrSyntax, err)}
	}
}

// stackPath spells the pointer of a duplicate name as a path, with the
// decoder's stack telling names from indexes, and returns the name.
func (r *reader) stackPath(p jsontext.Pointer) (string, string) {
	var path []step
	level := 0
	for tok := range p.Tokens() {
		level++
		path = append(path, step{name: tok, index: -1})
		if level <= r.dec.StackDepth() {
			if k, _ := r.dec.StackIndex(level); k == '[' {
				if i, err := strconv.Atoi(tok); err == nil {
					path[len(path)-1] = step{index: i}
				}
			}
		} else if i, err := strconv.Atoi(tok); err == nil && i >= 0 && tok == strconv.Itoa(i) {
			path[len(path)-1] = step{index: i} // inside a value read whole: an index, most likely
		}
	}
	if len(path) == 0 {
		return "arguments", ""
	}
	name := path[len(path)-1].name
	return pathString(path[:len(path)-1]), name
}
