package conteval

import (
	"errors"
	"strconv"
)

// Sentinel errors, matched with errors.Is through an *Error.
var (
	// ErrConfig: a configuration is malformed or out of range.
	ErrConfig = errors.New("invalid config")
	// ErrTrend: a trend file line could not be read.
	ErrTrend = errors.New("invalid trend line")
	// ErrCase: a regression case could not be written or read back.
	ErrCase = errors.New("invalid regression case")
)

// Error is the error type of package conteval: every error its functions
// return is an *Error. Err wraps ErrConfig, ErrTrend or ErrCase, an I/O
// error, the context's error, or the error of the ledger or judge model.
type Error struct {
	Op   string // "config", "trend", "cases", "ledger", "judge", "run"
	Path string // the file involved, when there is one
	Line int    // the 1-based line of Path, when known
	Err  error
}

// Error returns "conteval: OP PATH:LINE: ERR", leaving out what is unknown.
func (e *Error) Error() string {
	s := "conteval: " + e.Op
	if e.Path != "" {
		s += " " + strconv.Quote(e.Path)
		if e.Line > 0 {
			s += ":" + strconv.Itoa(e.Line)
		}
	} else if e.Line > 0 {
		s += " line " + strconv.Itoa(e.Line)
	}
	return s + ": " + e.Err.Error()
}

// Unwrap returns e.Err.
func (e *Error) Unwrap() error { return e.Err }
