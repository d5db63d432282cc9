package trace

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"iter"
	"reflect"
	"strconv"
	"strings"
	"sync"
)

// Version is the version of the JSONL format that Writer writes and Reader
// reads. It is the value of the "v" key that starts every line.
const Version = 1

// DefaultMaxLine is the longest line, in bytes, that a Reader or ImportOpenAI
// accepts when no other cap is set.
const DefaultMaxLine = 64 << 20

// Sentinel errors, wrapped by *ParseError and the Writer's errors; test with
// errors.Is.
var (
	// ErrVersion: a line's "v" key is missing or is not Version.
	ErrVersion = errors.New("unsupported version")
	// ErrLineTooLong: a line is longer than the reader's cap.
	ErrLineTooLong = errors.New("line too long")
	// ErrInvalid: a trace breaks the model's rules: a nil step, or a step
	// whose Index is not Trace.Released plus its position in Trace.Steps.
	ErrInvalid = errors.New("invalid trace")
)

// ParseError reports a line that could not be read, or the I/O error that
// stopped a reader. It is the one error type of this package.
type ParseError struct {
	Source string // the input's name, usually a file name; may be empty
	Line   int    // 1-based line number
	Err    error  // what went wrong; wraps ErrVersion, ErrLineTooLong, ErrInvalid, a JSON or an I/O error
}

// Error returns "trace: SOURCE:LINE: ERR", or "trace: line LINE: ERR" when
// Source is empty.
func (e *ParseError) Error() string {
	if e.Source != "" {
		return "trace: " + e.Source + ":" + strconv.Itoa(e.Line) + ": " + e.Err.Error()
	}
	return "trace: line " + strconv.Itoa(e.Line) + ": " + e.Err.Error()
}

// Unwrap returns e.Err.
func (e *ParseError) Unwrap() error { return e.Err }

// Writer writes traces as JSONL: one line per trace, in the format the
// package documentation describes. It is safe for concurrent use: each call
// to Write writes one whole line with one call to the underlying writer.
// The zero value is not usable; use NewWriter.
type Writer struct {
	mu  sync.Mutex
	w   io.Writer
	err error // sticky: the first write error
}

// NewWriter returns a Writer that writes to w. It does not buffer: wrap w in
// a bufio.Writer for many small traces, and flush it when done.
func NewWriter(w io.Writer) *Writer {
	return &Writer{w: w}
}

// Write writes t as one line. It returns an error wrapping ErrInvalid, and
// writes nothing, if t could not be read back: when t is nil, a step is nil
// or a step's Index is not Released plus its position. Nil Steps are written as [].
// After the underlying writer fails, every later Write returns that error,
// so that a torn line is never followed by more lines.
func (w *Writer) Write(t *Trace) error {
	line, err := appendLine(nil, t)
	if err != nil {
		return err
	}
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.err != nil {
		return w.err
	}
	n, err := w.w.Write(line)
	if err == nil && n < len(line) {
		err = io.ErrShortWrite
	}
	if err != nil {
		w.err = fmt.Errorf("trace: write: %w", err)
		return w.err
	}
	return nil
}

// appendLine appends t to b as one JSONL line, newline included.
func appendLine(b []byte, t *Trace) ([]byte, error) {
	if err := validate(t); err != nil {
		return b, fmt.Errorf("trace: write: %w", err)
	}
	v := *t
	if v.Steps == nil {
		v.Steps = []*Step{}
	}
	buf := bytes.NewBuffer(b)
	buf.WriteString(`{"v":1,`) // Version
	mark := buf.Len()
	enc := json.NewEncoder(buf)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(&v); err != nil {
		return b, fmt.Errorf("trace: write %q: %w", t.ID, err)
	}
	// Drop the '{' that opened the trace's own object: "v" joins it.
	out := buf.Bytes()
	copy(out[mark:], out[mark+1:])
	return out[:len(out)-1], nil
}

// validate checks what the reader checks.
func validate(t *Trace) error {
	if t == nil {
		return fmt.Errorf("%w: nil trace", ErrInvalid)
	}
	if t.Released < 0 {
		return fmt.Errorf(`%w: "released" %d is negative`, ErrInvalid, t.Released)
	}
	for i, s := range t.Steps {
		if s == nil {
			return fmt.Errorf("%w: step %d is null", ErrInvalid, i)
		}
		if s.Index != t.Released+i {
			return fmt.Errorf("%w: step %d has index %d", ErrInvalid, t.Released+i, s.Index)
		}
	}
	return nil
}

// Reader reads traces from JSONL written by Writer. A line it cannot read
// yields a *ParseError naming the line, and the next Read goes on with the
// next line; an I/O error stops the reader. Blank lines are skipped, a UTF-8
// byte order mark before the first line is ignored, and lines may end in
// "\r\n". Keys a line has and Trace does not are ignored, so that a newer
// writer can add fields without changing Version.
//
// Set the exported fields before the first Read. A Reader is not safe for
// concurrent use. The zero value is not usable; use NewReader.
type Reader struct {
	// Source names the input in errors, usually a file name. Empty means
	// errors carry only the line number.
	Source string
	// MaxLine caps the length of a line in bytes; a longer line is an error
	// wrapping ErrLineTooLong. Zero or less means DefaultMaxLine.
	MaxLine int

	lines lineReader
}

// NewReader returns a Reader that reads from r. It buffers: it may read
// past the last line it returns.
func NewReader(r io.Reader) *Reader {
	return &Reader{lines: lineReader{br: bufio.NewReaderSize(r, 64<<10)}}
}

// Read returns the next trace, or io.EOF after the last one. Errors are
// *ParseError values.
func (r *Reader) Read() (*Trace, error) {
	r.lines.source, r.lines.max = r.Source, r.MaxLine
	line, err := r.lines.next()
	if err != nil {
		return nil, err
	}
	t, err := decodeLine(line)
	if err != nil {
		return nil, r.lines.errorf(err)
	}
	return t, nil
}

// All returns an iterator over the remaining traces. A line that cannot be
// read yields (nil, err) and the iteration goes on; an I/O error is yielded
// last. The iteration ends at io.EOF, which is not yielded.
func (r *Reader) All() iter.Seq2[*Trace, error] {
	return func(yield func(*Trace, error) bool) {
		for {
			t, err := r.Read()
			if err == io.EOF {
				return
			}
			if !yield(t, err) {
				return
			}
			if err != nil && r.lines.err != nil {
				return
			}
		}
	}
}

// jsonlLine is the shape of one line: "v" and the trace's own keys.
type jsonlLine struct {
	V json.RawMessage `json:"v"`
	Trace
}

func decodeLine(line []byte) (*Trace, error) {
	if line[0] != '{' {
		return nil, errors.New("not a JSON object")
	}
	var l jsonlLine
	err := unmarshal(line, &l)
	if err != nil {
		// Report a wrong version rather than the type errors it causes.
		var head struct {
			V json.RawMessage `json:"v"`
		}
		if json.Unmarshal(line, &head) == nil {
			if verr := checkVersion(head.V); verr != nil {
				return nil, verr
			}
		}
		return nil, jsonError(err)
	}
	if err := checkVersion(l.V); err != nil {
		return nil, err
	}
	if err := UniqueKeys(line); err != nil {
		return nil, err
	}
	if err := validate(&l.Trace); err != nil {
		return nil, err
	}
	if err := checkRanges(&l.Trace); err != nil {
		return nil, err
	}
	return &l.Trace, nil
}

// checkRanges rejects measured values no recorder writes: a negative
// duration, token count or cost, a confidence outside [0, 1].
func checkRanges(t *Trace) error {
	for i, s := range t.Steps {
		var bad string
		switch {
		case s.Duration < 0:
			bad = fmt.Sprintf(`"duration_ns" %d is negative`, s.Duration)
		case s.TokensIn < 0:
			bad = fmt.Sprintf(`"tokens_in" %d is negative`, s.TokensIn)
		case s.TokensOut < 0:
			bad = fmt.Sprintf(`"tokens_out" %d is negative`, s.TokensOut)
		case s.Cost < 0:
			bad = fmt.Sprintf(`"cost" %g is negative`, s.Cost)
		case s.Confidence < 0 || s.Confidence > 1:
			bad = fmt.Sprintf(`"confidence" %g is outside [0, 1]`, s.Confidence)
		default:
			continue
		}
		return fmt.Errorf("%w: step %d: %s", ErrInvalid, i, bad)
	}
	return nil
}

func checkVersion(v json.RawMessage) error {
	switch {
	case v == nil:
		return fmt.Errorf(`%w: no "v" key`, ErrVersion)
	case string(v) != "1":
		return fmt.Errorf("%w %s", ErrVersion, v)
	}
	return nil
}

// jsonError rewords encoding/json's errors for a ParseError, keeping them
// reachable with errors.As.
func jsonError(err error) error {
	var te *json.UnmarshalTypeError
	if errors.As(err, &te) {
		msg := fmt.Sprintf("want %s, got JSON %s", jsonKind(te.Type), te.Value)
		if field := strings.TrimPrefix(te.Field, "Trace."); field != "" {
			msg = fmt.Sprintf("key %q: %s", field, msg)
		}
		return &rewordedError{msg, err}
	}
	var se *json.SyntaxError
	if errors.As(err, &se) {
		return &rewordedError{"invalid JSON: " + se.Error(), err}
	}
	return err
}

// jsonKind names the JSON value that decodes into t.
func jsonKind(t reflect.Type) string {
	if t == nil {
		return "another value"
	}
	switch t.Kind() {
	case reflect.Slice, reflect.Array:
		return "an array"
	case reflect.Struct, reflect.Map:
		return "an object"
	case reflect.String:
		return "a string"
	case reflect.Bool:
		return "true or false"
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64,
		reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64, reflect.Uintptr:
		return "an integer"
	case reflect.Float32, reflect.Float64:
		return "a number"
	case reflect.Pointer:
		return jsonKind(t.Elem())
	}
	return "another value"
}

type rewordedError struct {
	msg string
	err error
}

func (e *rewordedError) Error() string { return e.msg }
func (e *rewordedError) Unwrap() error { return e.err }

// lineReader splits its input into lines up to a size cap, skipping blank
// ones, and counts them.
type lineReader struct {
	br     *bufio.Reader
	source string
	max    int
	line   int    // number of the line last returned
	buf    []byte // holds the line last returned
	err    error  // sticky I/O error or io.EOF
}

func (lr *lineReader) errorf(err error) *ParseError {
	return &ParseError{Source: lr.source, Line: lr.line, Err: err}
}

// next returns the next non-blank line with surrounding white space removed,
// valid until the following call. Its errors are io.EOF and *ParseError.
func (lr *lineReader) next() ([]byte, error) {
	max := lr.max
	if max <= 0 {
		max = DefaultMaxLine
	}
	for {
		if lr.err != nil {
			return nil, lr.err
		}
		lr.line++
		lr.buf = lr.buf[:0]
		tooLong, read := false, false
		for {
			chunk, err := lr.br.ReadSlice('\n')
			read = read || len(chunk) > 0
			if !tooLong {
				lr.buf = append(lr.buf, chunk...)
				if len(bytes.TrimRight(lr.buf, "\r\n")) > max {
					tooLong = true
					lr.buf = lr.buf[:0]
				}
			}
			if err == bufio.ErrBufferFull {
				continue
			}
			if err != nil {
				if err != io.EOF {
					lr.err = lr.errorf(err)
					return nil, lr.err
				}
				lr.err = io.EOF
				if !read {
					return nil, io.EOF
				}
			}
			break
		}
		if tooLong {
			return nil, lr.errorf(fmt.Errorf("%w: over %d bytes", ErrLineTooLong, max))
		}
		line := lr.buf
		if lr.line == 1 {
			line = bytes.TrimPrefix(line, []byte("\uFEFF"))
		}
		line = bytes.Trim(line, " \t\r\n")
		if len(line) > 0 {
			return line, nil
		}
	}
}
