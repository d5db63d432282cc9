package cli

import (
	"bytes"
	"io"
	"sync"

	"github.com/agentguard/agentguard/ledger"
	"github.com/agentguard/agentguard/trace"
)

// RedactTraces returns a writer that takes trace JSONL, one whole trace
// per line, and writes each trace to w with its free text gone through
// redact (ledger.RedactTrace). A line that is not a trace is written as it
// is not: the error is returned. Call Close to write a last line that
// lacks its "\n". It is safe for concurrent use.
func RedactTraces(w io.Writer, redact func(string) string) io.WriteCloser {
	return &redactingWriter{w: trace.NewWriter(w), redact: redact}
}

type redactingWriter struct {
	mu     sync.Mutex
	w      *trace.Writer
	redact func(string) string
	buf    []byte
}

func (r *redactingWriter) Write(b []byte) (int, error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.buf = append(r.buf, b...)
	for {
		i := bytes.IndexByte(r.buf, '\n')
		if i < 0 {
			return len(b), nil
		}
		line := r.buf[:i+1]
		if err := r.line(line); err != nil {
			return len(b), err
		}
		r.buf = r.buf[i+1:]
	}
}

func (r *redactingWriter) line(line []byte) error {
	if len(bytes.TrimSpace(line)) == 0 {
		return nil
	}
	t, err := trace.NewReader(bytes.NewReader(line)).Read()
	if err != nil {
		return err
	}
	return r.w.Write(ledger.RedactTrace(t, r.redact))
}

// Close writes what is left.
func (r *redactingWriter) Close() error {
	r.mu.Lock()
	defer r.mu.Unlock()
	err := r.line(r.buf)
	r.buf = nil
	return err
}
