package ledger

import (
	"bytes"
	"cmp"
	"context"
	"encoding/binary"
	"encoding/json"
	"fmt"
	"io"
	"iter"
	"math"
	"slices"
	"time"

	"github.com/agentguard/agentguard/trace"
	"github.com/dgraph-io/badger/v4"
)

// Query selects entries. Every field is a filter that an entry must pass;
// a zero field does not filter, so the zero Query selects every entry.
// Entries come in sequence order, oldest first.
type Query struct {
	Rule      string          // Finding.Rule equals Rule
	TraceID   string          // Violation.TraceID equals TraceID
	SessionID string          // Violation.SessionID equals SessionID
	Tag       string          // Finding.Tags contains Tag
	Dimension trace.Dimension // Finding.Dimension equals Dimension
	Since     time.Time       // Time is not before Since
	Until     time.Time       // Time is before Until
	// AfterSeq selects entries with a larger sequence number: pass the last
	// Seq you have read to resume. Appends commit in sequence order, so a
	// reader resuming this way never skips an entry.
	AfterSeq uint64
	// Limit is the most entries to return; zero or negative means all.
	Limit int
}

func (q *Query) match(e *Entry) bool {
	switch {
	case q.Rule != "" && e.Rule != q.Rule,
		q.TraceID != "" && e.TraceID != q.TraceID,
		q.SessionID != "" && e.SessionID != q.SessionID,
		q.Dimension != "" && e.Dimension != q.Dimension,
		q.Tag != "" && !slices.Contains(e.Tags, q.Tag),
		!q.Since.IsZero() && e.Time.Before(q.Since),
		!q.Until.IsZero() && !e.Time.Before(q.Until):
		return false
	}
	return true
}

// pageSize is how many entries one read transaction returns. Entries reads
// page by page so that no transaction stays open while its consumer runs.
const pageSize = 256

// Query returns the entries that q selects, oldest first.
func (l *Ledger) Query(ctx context.Context, q Query) ([]Entry, error) {
	var out []Entry
	for e, err := range l.entries(ctx, "query", q) {
		if err != nil {
			return nil, err
		}
		out = append(out, e)
	}
	return out, nil
}

// Entries returns an iterator over the entries that q selects, oldest
// first. It reads in pages of a few hundred entries with no transaction
// open between them, so the loop body may call any method of l, and an
// entry appended during the loop may or may not be seen. On failure it
// yields one zero Entry with the error and stops. Breaking out of the loop
// releases everything.
func (l *Ledger) Entries(ctx context.Context, q Query) iter.Seq2[Entry, error] {
	return l.entries(ctx, "query", q)
}

func (l *Ledger) entries(ctx context.Context, op string, q Query) iter.Seq2[Entry, error] {
	return func(yield func(Entry, error) bool) {
		after, left := q.AfterSeq, q.Limit
		if left <= 0 {
			left = math.MaxInt
		}
		for {
			page, last, end, err := l.page(ctx, op, &q, after, min(left, pageSize))
			if err != nil {
				yield(Entry{}, err)
				return
			}
			for _, e := range page {
				if !yield(e, nil) {
					return
				}
			}
			left -= len(page)
			if end || left == 0 {
				return
			}
			after = last
		}
	}
}

// page reads, in one read transaction, up to max entries that q selects
// with a sequence number larger than after. It returns them, the largest
// sequence number it looked at, and whether it reached the end.
func (l *Ledger) page(ctx context.Context, op string, q *Query, after uint64, max int) (out []Entry, last uint64, end bool, err error) {
	if after == math.MaxUint64 {
		return nil, after, true, nil
	}
	if err := l.acquire(ctx, op); err != nil {
		return nil, 0, false, err
	}
	defer l.mu.RUnlock()
	end = true
	err = l.db.View(func(txn *badger.Txn) error {
		it := txn.NewIterator(badger.IteratorOptions{
			PrefetchValues: true,
			PrefetchSize:   min(max, 100),
			Prefix:         []byte(entryPrefix),
		})
		defer it.Close()
		n := 0
		for it.Seek(key(after + 1)); it.Valid(); it.Next() {
			if n++; n%pageSize == 0 {
				if err := ctx.Err(); err != nil {
					return err
				}
			}
			item := it.Item()
			k := item.Key()
			if len(k) != len(entryPrefix)+8 || !bytes.HasPrefix(k, []byte(entryPrefix)) {
				return &corruptError{fmt.Sprintf("malformed key %q", k)}
			}
			last = binary.BigEndian.Uint64(k[len(entryPrefix):])
			var e Entry
			if err := item.Value(func(v []byte) error { return json.Unmarshal(v, &e) }); err != nil {
				return &corruptError{fmt.Sprintf("entry %d: %v", last, err)}
			}
			if !q.match(&e) {
				continue
			}
			out = append(out, e)
			if len(out) == max {
				it.Next()
				end = !it.Valid()
				return nil
			}
		}
		return nil
	})
	if err != nil {
		if ctx.Err() == nil {
			err = translate(err)
		}
		return nil, 0, false, l.error(op, err)
	}
	return out, last, end, nil
}

// Lesson is what the ledger has learned about one rule and one root cause:
// how often the rule fired with that tag, and when.
type Lesson struct {
	Rule string
	// Tag is the root-cause tag; "" gathers the entries that had no tags.
	Tag string
	// Dimension is the dimension of the latest entry counted.
	Dimension trace.Dimension
	Count     int
	// FirstSeen and LastSeen are the earliest and latest entry times.
	FirstSeen, LastSeen time.Time
	// Examples holds up to five distinct trace ids, in the order first seen.
	Examples []string
}

// MaxExamples is the most trace ids a Lesson keeps.
const MaxExamples = 5

// Lessons aggregates the entries that q selects by rule and root-cause tag.
// An entry with several tags counts once under each; one with none counts
// under Tag "". When q.Tag is set, only that tag is aggregated. The result
// is sorted by Count, largest first, then by Rule and Tag; q.Limit, if
// positive, keeps only that many lessons (not entries).
func (l *Ledger) Lessons(ctx context.Context, q Query) ([]Lesson, error) {
	type lessonKey struct{ rule, tag string }
	limit := q.Limit
	q.Limit = 0
	byKey := map[lessonKey]*Lesson{}
	add := func(e *Entry, tag string) {
		k := lessonKey{e.Rule, tag}
		ls := byKey[k]
		if ls == nil {
			ls = &Lesson{Rule: e.Rule, Tag: tag, FirstSeen: e.Time, LastSeen: e.Time}
			byKey[k] = ls
		}
		ls.Count++
		ls.Dimension = e.Dimension // entries come in sequence order
		if e.Time.Before(ls.FirstSeen) {
			ls.FirstSeen = e.Time
		}
		if e.Time.After(ls.LastSeen) {
			ls.LastSeen = e.Time
		}
		if e.TraceID != "" && len(ls.Examples) < MaxExamples && !slices.Contains(ls.Examples, e.TraceID) {
			ls.Examples = append(ls.Examples, e.TraceID)
		}
	}
	for e, err := range l.entries(ctx, "lessons", q) {
		if err != nil {
			return nil, err
		}
		switch {
		case q.Tag != "":
			add(&e, q.Tag)
		case len(e.Tags) == 0:
			add(&e, "")
		default:
			for i, tag := range e.Tags {
				if !slices.Contains(e.Tags[:i], tag) {
					add(&e, tag)
				}
			}
		}
	}
	out := make([]Lesson, 0, len(byKey))
	for _, ls := range byKey {
		out = append(out, *ls)
	}
	slices.SortFunc(out, func(a, b Lesson) int {
		return cmp.Or(cmp.Compare(b.Count, a.Count), cmp.Compare(a.Rule, b.Rule), cmp.Compare(a.Tag, b.Tag))
	})
	if limit > 0 && len(out) > limit {
		out = out[:limit]
	}
	return out, nil
}

// Export writes the entries that q selects to w as JSON Lines, one Entry
// per line, oldest first, and returns how many it wrote. The output reads
// back with encoding/json into Entry. An error from w is returned wrapped in
// an *Error.
func (l *Ledger) Export(ctx context.Context, w io.Writer, q Query) (int, error) {
	enc := json.NewEncoder(w)
	enc.SetEscapeHTML(false)
	n := 0
	for e, err := range l.entries(ctx, "export", q) {
		if err != nil {
			return n, err
		}
		if err := enc.Encode(e); err != nil {
			return n, l.error("export", err)
		}
		n++
	}
	return n, nil
}
