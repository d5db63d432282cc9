package ledger

import (
	"context"
	"os"
	"sync"

	"github.com/agentguard/agentguard/trace"
	"github.com/agentguard/agentguard/trace/redact"
)

// TraceFile is a trace sink (guard.TraceSink) that appends each trace it is given to a file
// as one line of trace JSONL (see package trace), redacted. A trace saved
// several times as it grows appears on several lines; the last one for a
// trace id is the fullest, unless steps were released from memory
// (guard.Observation.KeepSteps): each line then holds the steps kept, from
// "released" on, and the lines of a trace id, joined by step index ("i"),
// make the whole. It is safe for concurrent use.
type TraceFile struct {
	mu     sync.Mutex
	path   string
	f      *os.File
	w      *trace.Writer
	redact func(string) string
}

// OpenTraceFile opens path for appending, creating it with mode 0600.
// redact rewrites the free text of every trace before it is written, as
// the ledger does (RedactTrace); nil means redact.String, and
// redact.None writes raw text.
func OpenTraceFile(path string, redact func(string) string) (*TraceFile, error) {
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_APPEND|os.O_CREATE, 0o600)
	if err != nil {
		return nil, &Error{Op: "open trace file", Path: path, Err: err}
	}
	if redact == nil {
		redact = defaultRedact
	}
	return &TraceFile{path: path, f: f, w: trace.NewWriter(f), redact: redact}, nil
}

var defaultRedact = redact.String

// PutTrace appends t as one line.
func (tf *TraceFile) PutTrace(ctx context.Context, t *trace.Trace) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	tf.mu.Lock()
	defer tf.mu.Unlock()
	if tf.f == nil {
		return &Error{Op: "put trace", Path: tf.path, Err: ErrClosed}
	}
	if err := tf.w.Write(RedactTrace(t, tf.redact)); err != nil {
		return &Error{Op: "put trace", Path: tf.path, Err: err}
	}
	return nil
}

// Close closes the file. Later PutTrace calls fail.
func (tf *TraceFile) Close() error {
	tf.mu.Lock()
	defer tf.mu.Unlock()
	if tf.f == nil {
		return nil
	}
	err := tf.f.Close()
	tf.f = nil
	return err
}
