package schema

import (
	"errors"
	"strconv"
	"strings"
)

// Error is what Validate returns: the first fault it finds in a tool call's
// arguments, and where.
type Error struct {
	// Path is where the fault is: "arguments" for the arguments object
	// itself, "address.city" or "items[0]" for a value inside it. It is
	// empty when the arguments are not valid JSON (ErrSyntax).
	Path string
	// Err is the fault: ErrSyntax or ErrDuplicateName, wrapped with
	// detail, when the arguments are not JSON Validate reads, or a plain
	// error saying how a value breaks the schema.
	Err error
}

// Error is the fault after its path: "quantity: want integer, got
// number", or "not valid JSON: ..." alone.
func (e *Error) Error() string {
	if errors.Is(e.Err, ErrSyntax) {
		return e.Err.Error()
	}
	return e.Path + ": " + e.Err.Error()
}

// Unwrap returns e.Err.
func (e *Error) Unwrap() error { return e.Err }

var (
	// ErrSyntax is the fault of arguments that are not one JSON value's
	// text: not JSON, not valid UTF-8, or a value followed by more than
	// white space.
	ErrSyntax = errors.New("not valid JSON")
	// ErrDuplicateName is the fault of an object that has a name twice.
	// JSON parsers disagree on which of the two values such an object
	// holds, so the guard and the tool could read different arguments.
	ErrDuplicateName = errors.New("duplicate property")
)

// step is one step of a path into the arguments: a name, or an index when
// the name is empty and index is at least 0.
type step struct {
	name  string
	index int
}

// pathString spells a path as package guard always has: names joined by
// dots, indexes in brackets, "arguments" for the empty path.
func pathString(path []step) string {
	if len(path) == 0 {
		return "arguments"
	}
	var b strings.Builder
	for _, s := range path {
		if s.index >= 0 {
			b.WriteByte('[')
			b.WriteString(strconv.Itoa(s.index))
			b.WriteByte(']')
			continue
		}
		b.WriteByte('.')
		b.WriteString(s.name)
	}
	return strings.TrimPrefix(b.String(), ".")
}
