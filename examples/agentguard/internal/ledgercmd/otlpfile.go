package ledgercmd

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"iter"
	"os"

	"github.com/agentguard/agentguard/ledger"
	"github.com/agentguard/agentguard/trace"
)

// otlpFile is a ledger read from an OTLP JSON file, as a collector's file
// exporter writes the findings every replica sent as log events
// (trace.ImportOTLPFindings): the entries in the file's order, numbered
// from 1, and the traces of the spans in the same file, if any.
type otlpFile struct {
	entries []ledger.Entry
	traces  map[string]*trace.Trace
}

// openOTLPFile reads path whole, once, for both its findings and its
// spans. A file that holds neither is an error: it is not what a collector
// wrote.
func openOTLPFile(path string) (*otlpFile, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	f := &otlpFile{traces: map[string]*trace.Trace{}}
	for v, err := range trace.ImportOTLPFindings(bytes.NewReader(data), path) {
		if err != nil {
			return nil, err
		}
		f.entries = append(f.entries, ledger.Entry{Seq: uint64(len(f.entries) + 1), Violation: v})
	}
	for t, err := range trace.ImportOTLP(bytes.NewReader(data), path) {
		var pe *trace.ParseError
		if errors.As(err, &pe) {
			continue // a logs request: not a trace
		}
		if err != nil {
			return nil, err
		}
		f.traces[t.ID] = t
	}
	if len(f.entries) == 0 && len(f.traces) == 0 {
		return nil, fmt.Errorf("%s: no gen_ai.evaluation.result log events and no spans: not an OTLP JSON export of agentguard's", path)
	}
	return f, nil
}

func (f *otlpFile) Entries(ctx context.Context, q ledger.Query) iter.Seq2[ledger.Entry, error] {
	return func(yield func(ledger.Entry, error) bool) {
		n := 0
		for _, e := range f.entries {
			if err := ctx.Err(); err != nil {
				yield(ledger.Entry{}, err)
				return
			}
			if e.Seq <= q.AfterSeq || !q.Matches(&e) {
				continue
			}
			if q.Limit > 0 && n == q.Limit {
				return
			}
			n++
			if !yield(e, nil) {
				return
			}
		}
	}
}

func (f *otlpFile) Query(ctx context.Context, q ledger.Query) ([]ledger.Entry, error) {
	var out []ledger.Entry
	for e, err := range f.Entries(ctx, q) {
		if err != nil {
			return nil, err
		}
		out = append(out, e)
	}
	return out, nil
}

func (f *otlpFile) Lessons(ctx context.Context, q ledger.Query) ([]ledger.Lesson, error) {
	all := q
	all.Limit = 0
	return ledger.Learn(f.Entries(ctx, all), q)
}

func (f *otlpFile) Export(ctx context.Context, w io.Writer, q ledger.Query) (int, error) {
	enc := json.NewEncoder(w)
	enc.SetEscapeHTML(false)
	n := 0
	for e, err := range f.Entries(ctx, q) {
		if err != nil {
			return n, err
		}
		if err := enc.Encode(e); err != nil {
			return n, err
		}
		n++
	}
	return n, nil
}

func (f *otlpFile) PutTrace(context.Context, *trace.Trace) error {
	return errors.New("an OTLP file is read-only")
}

func (f *otlpFile) Trace(_ context.Context, id string) (*trace.Trace, error) {
	if t, ok := f.traces[id]; ok {
		return t, nil
	}
	return nil, fmt.Errorf("trace %q: %w", id, ledger.ErrNotFound)
}

func (f *otlpFile) Close() error { return nil }
