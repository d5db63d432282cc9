package replay

import (
	"errors"
	"strconv"
)

// Sentinel errors, matched with errors.Is.
var (
	// ErrInvalid: a case breaks the format (see Case.Validate).
	ErrInvalid = errors.New("invalid case")
	// ErrDuplicate: a golden set uses a case id twice.
	ErrDuplicate = errors.New("duplicate case")
)

// Error is the error type of package replay: a case that could not be
// read, validated or written.
type Error struct {
	Source string // the golden set's name, usually a file name; may be empty
	Line   int    // 1-based line number; 0 when not reading
	Case   string // the case id, when known
	Err    error
}

// Error returns "replay: SOURCE:LINE: case ID: ERR", leaving out the parts
// that are not known.
func (e *Error) Error() string {
	s := "replay: "
	switch {
	case e.Source != "" && e.Line > 0:
		s += e.Source + ":" + strconv.Itoa(e.Line) + ": "
	case e.Source != "":
		s += e.Source + ": "
	case e.Line > 0:
		s += "line " + strconv.Itoa(e.Line) + ": "
	}
	if e.Case != "" {
		s += "case " + e.Case + ": "
	}
	return s + e.Err.Error()
}

// Unwrap returns e.Err.
func (e *Error) Unwrap() error { return e.Err }
