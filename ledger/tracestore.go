package ledger

import (
	"context"

	"github.com/agentguard/agentguard/trace"
)

// TraceStore keeps whole traces beside the entries, so that every entry's
// trace can be fetched again: to read what led to a violation, or to turn
// it into a regression case. ledger/badgerstore's *Store implements it in
// the same directory as its entries.
type TraceStore interface {
	// PutTrace stores t under t.ID. Storing a trace again with more steps
	// adds the steps it has not stored yet (steps are identified by their
	// Index and never change once recorded) and replaces the rest — user
	// turns, tools, meta. So a session that never ends can be stored
	// piece by piece, and a caller may drop steps it has stored.
	PutTrace(ctx context.Context, t *trace.Trace) error
	// Trace returns the trace stored under id, or an error matching
	// ErrNotFound.
	Trace(ctx context.Context, id string) (*trace.Trace, error)
}

// RedactTrace returns a copy of t whose free text has gone through redact:
// user turns, step arguments, results and errors, the arguments of
// proposed calls, findings' messages, questions and evidence, and meta
// values. Ids, names, rules and tags are kept as they are. Steps are
// copied; t is not changed. A nil redact returns t itself.
func RedactTrace(t *trace.Trace, redact func(string) string) *trace.Trace {
	if redact == nil || t == nil {
		return t
	}
	c := *t
	c.Pending = nil
	c.UserTurns = make([]string, len(t.UserTurns))
	for i, s := range t.UserTurns {
		c.UserTurns[i] = redact(s)
	}
	if t.Meta != nil {
		c.Meta = make(map[string]string, len(t.Meta))
		for k, v := range t.Meta {
			c.Meta[k] = redact(v)
		}
	}
	c.Steps = make([]*trace.Step, len(t.Steps))
	for i, s := range t.Steps {
		c.Steps[i] = RedactStep(s, redact)
	}
	return &c
}

// RedactStep returns a copy of s with its free text redacted as
// RedactTrace does.
func RedactStep(s *trace.Step, redact func(string) string) *trace.Step {
	c := *s
	c.Args = redact(s.Args)
	c.Result = redact(s.Result)
	c.Error = redact(s.Error)
	if s.Calls != nil {
		c.Calls = make([]trace.Call, len(s.Calls))
		for i, call := range s.Calls {
			call.Args = redact(call.Args)
			c.Calls[i] = call
		}
	}
	if s.Finding != nil {
		f := *s.Finding
		f.Texts(func(v *string) { *v = redact(*v) })
		c.Finding = &f
	}
	return &c
}
