package badgerstore

import (
	"context"
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strconv"

	"github.com/agentguard/agentguard/ledger"
	"github.com/agentguard/agentguard/trace"
	"github.com/dgraph-io/badger/v4"
)

// DefaultMaxTraceBytes is how many bytes of JSON steps a stored trace
// keeps when Options.MaxTraceBytes is zero.
const DefaultMaxTraceBytes = 8 << 20

// Trace keys: tracePrefix, the trace id with its length, then 'h' for the
// header (the trace without its steps) or 's' and the step's Index as 4
// big-endian bytes, so that a trace's steps sort in order after its header.
const tracePrefix = "t/"

// maxTraceID bounds a trace id, which is part of every key of its trace.
const maxTraceID = 1024

// traceField caps each free-text field of a stored step, in bytes, the
// recorder's default cap; a step still larger than an entry may be has its
// fields cut to smallField.
const (
	traceField = trace.DefaultMaxField
	smallField = 4 << 10
)

// droppedMeta is the Meta key under which Trace reports how many steps
// were not stored because the trace had reached Options.MaxTraceBytes.
const droppedMeta = "ledger.steps_dropped"

// traceHeader is what a trace's 'h' key holds.
type traceHeader struct {
	Trace   *trace.Trace `json:"trace"` // without Steps
	Last    int          `json:"last"`  // largest step Index stored, -1 for none
	Bytes   int          `json:"bytes"` // bytes of step JSON stored
	Dropped int          `json:"dropped,omitempty"`
}

func traceKey(id string, kind byte, idx int) []byte {
	k := make([]byte, 0, len(tracePrefix)+2+len(id)+1+4)
	k = append(k, tracePrefix...)
	k = binary.BigEndian.AppendUint16(k, uint16(len(id)))
	k = append(k, id...)
	k = append(k, kind)
	if kind == 's' {
		k = binary.BigEndian.AppendUint32(k, uint32(idx))
	}
	return k
}

// PutTrace stores t, redacted by Options.Redact, under t.ID (ledger.TraceStore).
// Steps already stored for t.ID — by Index — are skipped, new ones added,
// and the user turns, tools and meta replaced, so that storing a growing
// trace again costs only its new steps. Each text field of a step is cut
// to 64 KiB with trace.TruncationMarker; once a trace holds
// Options.MaxTraceBytes of steps, later steps are counted but not stored
// (Trace reports the count in Meta["ledger.steps_dropped"]). Traces are
// not synced on their own, even with Durable: a crashed host may lose the
// last ones, a crashed process does not.
func (l *Store) PutTrace(ctx context.Context, t *trace.Trace) error {
	const op = "put trace"
	if t == nil || t.ID == "" {
		return l.error(op, errors.New("trace has no id"))
	}
	if len(t.ID) > maxTraceID {
		return l.error(op, fmt.Errorf("trace id of %d bytes is longer than %d", len(t.ID), maxTraceID))
	}
	if err := l.acquire(ctx, op); err != nil {
		return err
	}
	defer l.mu.RUnlock()
	if l.readOnly {
		return l.error(op, ledger.ErrReadOnly)
	}
	if err := l.checkSpace(); err != nil {
		return l.error(op, err)
	}
	l.wmu.Lock()
	defer l.wmu.Unlock()
	if err := l.putTrace(t); err != nil {
		return l.error(op, err)
	}
	return nil
}

func (l *Store) putTrace(t *trace.Trace) error {
	hk := traceKey(t.ID, 'h', 0)
	h := traceHeader{Last: -1}
	err := l.db.View(func(txn *badger.Txn) error {
		item, err := txn.Get(hk)
		if errors.Is(err, badger.ErrKeyNotFound) {
			return nil
		} else if err != nil {
			return err
		}
		return item.Value(func(v []byte) error { return json.Unmarshal(v, &h) })
	})
	if err != nil {
		return translate(err)
	}
	w := &txnWriter{db: l.db}
	defer w.discard()
	for _, s := range t.Steps {
		if s.Index <= h.Last {
			continue
		}
		b, err := json.Marshal(l.traceStep(s))
		if err != nil {
			return err
		}
		h.Last = s.Index
		if h.Bytes+len(b) > l.maxTraceBytes {
			h.Dropped++
			continue
		}
		h.Bytes += len(b)
		if err := w.set(traceKey(t.ID, 's', s.Index), b); err != nil {
			return err
		}
	}
	head := *ledger.RedactTrace(&trace.Trace{
		ID: t.ID, SessionID: t.SessionID, Route: t.Route, Start: t.Start,
		UserTurns: t.UserTurns, Tools: t.Tools, Meta: t.Meta,
	}, l.redact)
	head.Steps = nil
	head.SessionID = l.sessionKey(t.SessionID)
	head.UserTurns = slices.Clone(head.UserTurns) // without a redactor they are t's own
	for i := range head.UserTurns {
		head.UserTurns[i], _ = trace.Truncate(head.UserTurns[i], traceField)
	}
	h.Trace = &head
	b, err := json.Marshal(&h)
	for i := 0; err == nil && len(b) > maxEntry && i < len(head.UserTurns); i++ {
		// A session with very many turns: the oldest lose their text
		// first, keeping their place so that Step.Turn still points right.
		head.UserTurns[i] = trace.TruncationMarker
		b, err = json.Marshal(&h)
	}
	if err != nil {
		return err
	}
	if len(b) > maxEntry {
		return fmt.Errorf("trace header of %d bytes is larger than %d", len(b), maxEntry)
	}
	if err := w.set(hk, b); err != nil {
		return err
	}
	return w.commit()
}

// traceStep returns s redacted and cut to fit in one value.
func (l *Store) traceStep(s *trace.Step) *trace.Step {
	c := ledger.RedactStep(s, l.redact)
	for _, max := range []int{traceField, smallField} {
		cut := false
		for _, f := range []*string{&c.Args, &c.Result, &c.Error} {
			var ok bool
			*f, ok = trace.Truncate(*f, max)
			cut = cut || ok
		}
		for i := range c.Calls {
			var ok bool
			c.Calls[i].Args, ok = trace.Truncate(c.Calls[i].Args, max)
			cut = cut || ok
		}
		if c.Finding != nil {
			var a, b bool
			c.Finding.Evidence, a = trace.Truncate(c.Finding.Evidence, max)
			c.Finding.Message, b = trace.Truncate(c.Finding.Message, max)
			cut = cut || a || b
		}
		c.Truncated = c.Truncated || cut
		if b, err := json.Marshal(c); err == nil && len(b) <= maxEntry {
			return c
		}
	}
	// Still too large (thousands of proposed calls): keep what identifies
	// the step.
	return &trace.Step{Index: c.Index, Kind: c.Kind, Name: c.Name, Turn: c.Turn, CallID: c.CallID,
		Start: c.Start, Duration: c.Duration, Blocked: c.Blocked, Truncated: true, Finding: c.Finding}
}

// Trace returns the trace stored under id (ledger.TraceStore), or an error
// matching ledger.ErrNotFound.
func (l *Store) Trace(ctx context.Context, id string) (*trace.Trace, error) {
	const op = "trace"
	if err := l.acquire(ctx, op); err != nil {
		return nil, err
	}
	defer l.mu.RUnlock()
	if id == "" || len(id) > maxTraceID {
		return nil, l.error(op, fmt.Errorf("trace %q: %w", id, ledger.ErrNotFound))
	}
	var h traceHeader
	err := l.db.View(func(txn *badger.Txn) error {
		item, err := txn.Get(traceKey(id, 'h', 0))
		if errors.Is(err, badger.ErrKeyNotFound) {
			return fmt.Errorf("trace %q: %w", id, ledger.ErrNotFound)
		} else if err != nil {
			return translate(err)
		}
		if err := item.Value(func(v []byte) error { return json.Unmarshal(v, &h) }); err != nil || h.Trace == nil {
			return &corruptError{fmt.Sprintf("trace %q: header: %v", id, err)}
		}
		prefix := traceKey(id, 's', 0)[:len(tracePrefix)+2+len(id)+1]
		it := txn.NewIterator(badger.IteratorOptions{PrefetchValues: true, PrefetchSize: 16, Prefix: prefix})
		defer it.Close()
		for it.Rewind(); it.Valid(); it.Next() {
			if err := ctx.Err(); err != nil {
				return err
			}
			s := new(trace.Step)
			if err := it.Item().Value(func(v []byte) error { return json.Unmarshal(v, s) }); err != nil {
				return &corruptError{fmt.Sprintf("trace %q: step: %v", id, err)}
			}
			h.Trace.Steps = append(h.Trace.Steps, s)
		}
		return nil
	})
	if err != nil {
		return nil, l.error(op, err)
	}
	t := h.Trace
	if t.Steps == nil {
		t.Steps = []*trace.Step{}
	}
	if h.Dropped > 0 {
		if t.Meta == nil {
			t.Meta = map[string]string{}
		}
		t.Meta[droppedMeta] = strconv.Itoa(h.Dropped)
	}
	return t, nil
}

// txnWriter writes keys in as many transactions as they need: when one is
// full it is committed and the next begun. What it writes is not atomic as
// a whole, each key is.
type txnWriter struct {
	db  *badger.DB
	txn *badger.Txn
}

func (w *txnWriter) set(k, v []byte) error {
	if w.txn == nil {
		w.txn = w.db.NewTransaction(true)
	}
	err := w.txn.Set(k, v)
	if errors.Is(err, badger.ErrTxnTooBig) {
		if err := w.commit(); err != nil {
			return err
		}
		w.txn = w.db.NewTransaction(true)
		err = w.txn.Set(k, v)
	}
	return translate(err)
}

func (w *txnWriter) commit() error {
	if w.txn == nil {
		return nil
	}
	err := w.txn.Commit()
	w.txn = nil
	return translate(err)
}

func (w *txnWriter) discard() {
	if w.txn != nil {
		w.txn.Discard()
	}
}
