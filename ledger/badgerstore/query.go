package badgerstore

import (
	"context"
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"iter"
	"math"

	"github.com/agentguard/agentguard/ledger"
	"github.com/dgraph-io/badger/v4"
)

// pageSize is how many entries one read transaction returns. Entries reads
// page by page so that no transaction stays open while its consumer runs.
const pageSize = 256

// ledger.Query returns the entries that q selects, oldest first.
func (l *Store) Query(ctx context.Context, q ledger.Query) ([]ledger.Entry, error) {
	var out []ledger.Entry
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
// yields one zero ledger.Entry with the error and stops. Breaking out of the loop
// releases everything.
func (l *Store) Entries(ctx context.Context, q ledger.Query) iter.Seq2[ledger.Entry, error] {
	return l.entries(ctx, "query", q)
}

func (l *Store) entries(ctx context.Context, op string, q ledger.Query) iter.Seq2[ledger.Entry, error] {
	return func(yield func(ledger.Entry, error) bool) {
		q := q // planFor moves AfterSeq: each iteration plans afresh
		q.SessionID = l.sessionKey(q.SessionID)
		if err := l.acquire(ctx, op); err != nil {
			yield(ledger.Entry{}, err)
			return
		}
		p, err := l.planFor(&q)
		l.mu.RUnlock()
		if err != nil {
			yield(ledger.Entry{}, l.error(op, err))
			return
		}
		if p.empty {
			return
		}
		after, left := q.AfterSeq, q.Limit
		if left <= 0 {
			left = math.MaxInt
		}
		for {
			page, last, end, err := l.page(ctx, op, &q, p, after, min(left, pageSize))
			if err != nil {
				yield(ledger.Entry{}, err)
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
// with a sequence number larger than after, through plan p. It returns
// them, the largest sequence number it looked at, and whether it reached
// the end.
func (l *Store) page(ctx context.Context, op string, q *ledger.Query, p plan, after uint64, max int) (out []ledger.Entry, last uint64, end bool, err error) {
	if err := l.acquire(ctx, op); err != nil {
		return nil, 0, false, err
	}
	defer l.mu.RUnlock()
	out, last, end, err = l.readPage(ctx, q, p, after, max)
	if err != nil {
		if ctx.Err() == nil {
			err = translate(err)
		}
		return nil, 0, false, l.error(op, err)
	}
	return out, last, end, nil
}

// readPage is page without the checks; the caller holds l.mu.
func (l *Store) readPage(ctx context.Context, q *ledger.Query, p plan, after uint64, max int) (out []ledger.Entry, last uint64, end bool, err error) {
	if after >= p.hi {
		return nil, after, true, nil
	}
	end = true
	err = l.db.View(func(txn *badger.Txn) error {
		prefix, seek := []byte(entryPrefix), key(after+1)
		if p.prefix != nil {
			prefix, seek = p.prefix, indexKey(p.prefix, after+1)
		}
		it := txn.NewIterator(badger.IteratorOptions{
			// Through an index the keys are all there is to read.
			PrefetchValues: p.prefix == nil,
			PrefetchSize:   min(max, 100),
			Prefix:         prefix,
		})
		defer it.Close()
		n := 0
		for it.Seek(seek); it.Valid(); it.Next() {
			if n++; n%pageSize == 0 {
				if err := ctx.Err(); err != nil {
					return err
				}
			}
			item := it.Item()
			k := item.Key()
			if len(k) != len(prefix)+8 {
				return &corruptError{fmt.Sprintf("malformed key %q", k)}
			}
			seq := binary.BigEndian.Uint64(k[len(prefix):])
			if seq > p.hi {
				return nil
			}
			last = seq
			if p.prefix != nil {
				if item, err = txn.Get(key(seq)); errors.Is(err, badger.ErrKeyNotFound) {
					return &corruptError{fmt.Sprintf("index key %q: entry %d is missing", k, seq)}
				} else if err != nil {
					return err
				}
			}
			var e ledger.Entry
			if err := item.Value(func(v []byte) error { return json.Unmarshal(v, &e) }); err != nil {
				return &corruptError{fmt.Sprintf("entry %d: %v", seq, err)}
			}
			if !q.Matches(&e) {
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
	return out, last, end, err
}

// Export writes the entries that q selects to w as JSON Lines, one ledger.Entry
// per line, oldest first, and returns how many it wrote. The output reads
// back with encoding/json into ledger.Entry. An error from w is returned wrapped in
// an *ledger.Error.
func (l *Store) Export(ctx context.Context, w io.Writer, q ledger.Query) (int, error) {
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

// Lessons aggregates the entries that q selects by rule and root-cause tag,
// as ledger.Learn does. When q filters by nothing but Rule and Tag it reads
// the aggregates the ledger keeps (see "Indexes and lessons" in the package
// documentation): O(rules), whatever the ledger's size. q.Limit, if
// positive, keeps only that many lessons (not entries).
func (l *Store) Lessons(ctx context.Context, q ledger.Query) ([]ledger.Lesson, error) {
	q.SessionID = l.sessionKey(q.SessionID)
	if err := l.acquire(ctx, "lessons"); err != nil {
		return nil, err
	}
	out, ok := l.cachedLessons(q)
	l.mu.RUnlock()
	if ok {
		return out, nil
	}
	all := q
	all.Limit = 0
	return ledger.Learn(l.entries(ctx, "lessons", all), q)
}
