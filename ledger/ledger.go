package ledger

import (
	"cmp"
	"context"
	"io"
	"iter"
	"slices"
	"time"

	"github.com/agentguard/agentguard/trace"
)

// Entry is one stored violation and its sequence number. Its JSON encoding
// is one flat object: "seq" followed by the fields of trace.Violation.
type Entry struct {
	Seq uint64 `json:"seq"`
	trace.Violation
}

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

// Matches reports whether e passes every filter of q but AfterSeq and
// Limit, which a store applies while it reads.
func (q *Query) Matches(e *Entry) bool {
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

// Lesson is what the ledger has learned about one rule and one root cause:
// how often the rule fired with that tag, and when.
//
// As JSON its keys are snake_case, as the trace format's are.
type Lesson struct {
	Rule string `json:"rule"`
	// Tag is the root-cause tag; "" gathers the entries that had no tags.
	Tag string `json:"tag"`
	// Dimension is the dimension of the latest entry counted.
	Dimension trace.Dimension `json:"dimension"`
	Count     int             `json:"count"`
	// FirstSeen and LastSeen are the earliest and latest entry times.
	FirstSeen time.Time `json:"first_seen,omitzero"`
	LastSeen  time.Time `json:"last_seen,omitzero"`
	// Examples holds up to five distinct trace ids, in the order first seen.
	Examples []string `json:"examples"`
}

// MaxExamples is the most trace ids a Lesson keeps.
const MaxExamples = 5

// Learn aggregates entries, which a store has already selected with q, by
// rule and root-cause tag; a store's Lessons method is Learn over its
// Entries.
// An entry with several tags counts once under each; one with none counts
// under Tag "". When q.Tag is set, only that tag is aggregated. The result
// is sorted by Count, largest first, then by Rule and Tag; q.Limit, if
// positive, keeps only that many lessons (not entries).
func Learn(entries iter.Seq2[Entry, error], q Query) ([]Lesson, error) {
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
	for e, err := range entries {
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

// Appender is what a guard reports findings to: Append files one violation
// and returns its sequence number. guard.Sink is the same method set.
type Appender interface {
	Append(ctx context.Context, v trace.Violation) (uint64, error)
}

// BatchAppender also files several violations at once, all or none.
type BatchAppender interface {
	Appender
	AppendBatch(ctx context.Context, vs []trace.Violation) ([]uint64, error)
}

// Reader is what the offline tools read a ledger through: the health
// check, continuous evaluation and the agentguard command.
type Reader interface {
	// Query returns the entries that q selects, oldest first.
	Query(ctx context.Context, q Query) ([]Entry, error)
	// Entries streams the entries that q selects, oldest first.
	Entries(ctx context.Context, q Query) iter.Seq2[Entry, error]
	// Lessons is Learn over the entries that q selects.
	Lessons(ctx context.Context, q Query) ([]Lesson, error)
	// Export writes the entries that q selects as JSON Lines.
	Export(ctx context.Context, w io.Writer, q Query) (int, error)
}

// Store is a whole ledger: appends, reads and Close. ledger/badgerstore's
// *Store is the implementation that ships.
type Store interface {
	BatchAppender
	Reader
	Close() error
}
