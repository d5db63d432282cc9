package badgerstore

import (
	"cmp"
	"context"
	"crypto/sha256"
	"encoding/binary"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"maps"
	"math"
	"slices"
	"time"

	"github.com/agentguard/agentguard/ledger"
	"github.com/agentguard/agentguard/trace"
	"github.com/dgraph-io/badger/v4"
)

// The indexes. Every key below is written in the same transaction as the
// entry it describes, so an entry and its index keys are stored together
// or not at all.
//
//	x/ kind value seq   one key per entry and indexed field, no value:
//	                    kind 't' trace id, 's' session id, 'r' rule,
//	                    'g' each tag. value is the field with its length
//	                    (2 bytes), seq 8 big-endian bytes, so that the keys
//	                    of one value sort in sequence order.
//	m/ minute           the smallest and largest sequence numbers of the
//	                    entries whose Time falls in that minute (Unix
//	                    minutes, sign bit flipped, 8 bytes).
//	a/ rule tag         the ledger.Lesson of that rule and tag, as JSON:
//	                    Lessons reads these instead of the entries.
//	meta/index          indexVersion, once the indexes are complete.
const (
	indexPrefix  = "x/"
	bucketPrefix = "m/"
	lessonPrefix = "a/"
	metaIndexKey = "meta/index"
	indexVersion = "1"
)

// maxIndexValue bounds the bytes of a field an index key holds; a longer
// value is indexed by its head and a hash, and queries test every entry
// they read against the whole filter anyway.
const maxIndexValue = 256

// Transactions are kept well below badger's limits (about 1.2 MB and
// 10,000 keys with the ledger's 8 MiB memtables): a batch of appends is
// split into transactions of at most txnBudget bytes and txnKeys keys, so
// that no transaction is ever too big for badger.
const (
	txnBudget = 640 << 10
	txnKeys   = 4000
)

// encoded is one prepared entry: its JSON and the fields it is indexed by.
type encoded struct {
	body      []byte // JSON of the violation, without the sequence number
	rule      string
	traceID   string
	sessionID string
	tags      []string // distinct
	dim       trace.Dimension
	time      time.Time
}

func encodedOf(body []byte, v *trace.Violation) encoded {
	e := encoded{body: body, rule: v.Rule, traceID: v.TraceID, sessionID: v.SessionID, dim: v.Dimension, time: v.Time}
	for i, tag := range v.Tags {
		if !slices.Contains(v.Tags[:i], tag) {
			e.tags = append(e.tags, tag)
		}
	}
	return e
}

// keys is how many keys the entry adds to a transaction.
func (e *encoded) keys() int { return 4 + len(e.tags) }

// cost estimates the bytes the entry adds to a transaction, badger's
// per-key overhead included.
func (e *encoded) cost() int {
	n := len(e.body) + 28 + 5*64 + len(e.rule) + len(e.traceID) + len(e.sessionID)
	for _, tag := range e.tags {
		n += len(tag) + 64
	}
	return n
}

func indexValue(s string) string {
	if len(s) <= maxIndexValue {
		return s
	}
	sum := sha256.Sum256([]byte(s))
	return s[:runeCut(s, maxIndexValue-33)] + "#" + hex.EncodeToString(sum[:16])
}

func appendField(k []byte, s string) []byte {
	s = indexValue(s)
	k = binary.BigEndian.AppendUint16(k, uint16(len(s)))
	return append(k, s...)
}

// indexPrefixOf is the prefix of the index keys of the entries whose field
// kind equals value.
func indexPrefixOf(kind byte, value string) []byte {
	k := make([]byte, 0, len(indexPrefix)+1+2+len(value)+8)
	k = append(k, indexPrefix...)
	k = append(k, kind)
	return appendField(k, value)
}

func indexKey(prefix []byte, seq uint64) []byte {
	return binary.BigEndian.AppendUint64(slices.Clip(prefix), seq)
}

func minuteOf(t time.Time) int64 {
	s := t.Unix()
	m := s / 60
	if s < 0 && s%60 != 0 {
		m--
	}
	return m
}

func bucketKey(minute int64) []byte {
	return binary.BigEndian.AppendUint64([]byte(bucketPrefix), uint64(minute)^(1<<63))
}

func lessonKeyBytes(rule, tag string) []byte {
	return appendField(appendField([]byte(lessonPrefix), rule), tag)
}

type lessonKey struct{ rule, tag string }

// indexUpdate is what one transaction changes in the aggregates: the
// lessons and minute buckets it writes, applied to the Store's cache once
// it has committed.
type indexUpdate struct {
	lessons map[lessonKey]*ledger.Lesson
	buckets map[int64][2]uint64
	// checkpoint is set when the update wrote every lesson: the sequence
	// number they count up to.
	checkpoint uint64
}

// addLesson counts e, with sequence number seq, in the lessons of its rule.
func (u *indexUpdate) addLesson(e *encoded, base func(lessonKey) *ledger.Lesson) {
	add := func(tag string) {
		k := lessonKey{e.rule, tag}
		ls := u.lessons[k]
		if ls == nil {
			ls = base(k)
			u.lessons[k] = ls
		}
		if ls.Count == 0 {
			ls.Rule, ls.Tag, ls.FirstSeen, ls.LastSeen = e.rule, tag, e.time, e.time
		}
		ls.Count++
		ls.Dimension = e.dim
		if e.time.Before(ls.FirstSeen) {
			ls.FirstSeen = e.time
		}
		if e.time.After(ls.LastSeen) {
			ls.LastSeen = e.time
		}
		if e.traceID != "" && len(ls.Examples) < ledger.MaxExamples && !slices.Contains(ls.Examples, e.traceID) {
			ls.Examples = append(ls.Examples, e.traceID)
		}
	}
	if len(e.tags) == 0 {
		add("")
	}
	for _, tag := range e.tags {
		add(tag)
	}
}

func (u *indexUpdate) addBucket(e *encoded, seq uint64) {
	m := minuteOf(e.time)
	b, ok := u.buckets[m]
	if !ok {
		b = [2]uint64{seq, seq}
	}
	b[0], b[1] = min(b[0], seq), max(b[1], seq)
	u.buckets[m] = b
}

// cachedLesson returns a copy of the cached lesson under k, or a zero one.
func (l *Store) cachedLesson(k lessonKey) *ledger.Lesson {
	l.lmu.RLock()
	defer l.lmu.RUnlock()
	ls := new(ledger.Lesson)
	if c := l.lessons[k]; c != nil {
		*ls = *c
		ls.Examples = slices.Clone(c.Examples)
	}
	return ls
}

// write adds the entries of batches to txn, numbered from first on, with
// their index keys and the aggregates they change, and returns the update
// to apply to the cache once txn has committed. The caller has checked
// that the batches fit (fits).
func (l *Store) write(txn *badger.Txn, batches [][]encoded, first uint64) (*indexUpdate, error) {
	u := &indexUpdate{lessons: map[lessonKey]*ledger.Lesson{}, buckets: map[int64][2]uint64{}}
	seq := first
	for _, es := range batches {
		for i := range es {
			e := &es[i]
			v := withSeq(seq, e.body)
			if len(v) > maxEntry {
				// encode keeps entries smaller; see maxEntry.
				return nil, fmt.Errorf("entry of %d bytes is larger than %d", len(v), maxEntry)
			}
			if err := txn.Set(key(seq), v); err != nil {
				return nil, err
			}
			set := func(kind byte, value string) error {
				if value == "" {
					return nil
				}
				return txn.Set(indexKey(indexPrefixOf(kind, value), seq), nil)
			}
			err := errors.Join(set('t', e.traceID), set('s', e.sessionID), set('r', e.rule))
			for _, tag := range e.tags {
				err = errors.Join(err, set('g', tag))
			}
			if err != nil {
				return nil, err
			}
			u.addLesson(e, l.cachedLesson)
			u.addBucket(e, seq)
			seq++
		}
	}
	for m, b := range u.buckets {
		bk := bucketKey(m)
		l.lmu.RLock()
		old, ok := l.buckets[m]
		l.lmu.RUnlock()
		if ok {
			b[0], b[1] = min(b[0], old[0]), max(b[1], old[1])
		} else if item, err := txn.Get(bk); err == nil {
			v, err := item.ValueCopy(nil)
			if err != nil {
				return nil, err
			}
			if len(v) == 16 {
				b[0] = min(b[0], binary.BigEndian.Uint64(v))
				b[1] = max(b[1], binary.BigEndian.Uint64(v[8:]))
			}
		} else if !errors.Is(err, badger.ErrKeyNotFound) {
			return nil, err
		}
		u.buckets[m] = b
		v := binary.BigEndian.AppendUint64(binary.BigEndian.AppendUint64(make([]byte, 0, 16), b[0]), b[1])
		if err := txn.Set(bk, v); err != nil {
			return nil, err
		}
	}
	l.lmu.RLock()
	due := seq-1-l.lessonSeq >= lessonCheckpoint
	l.lmu.RUnlock()
	if due {
		if err := l.putLessons(txn.Set, u.lessons, seq-1); err != nil {
			return nil, err
		}
		u.checkpoint = seq - 1
	}
	return u, nil
}

// lessonCheckpoint is how many entries may be appended before the lessons
// are written again. Between checkpoints they live in memory; Open counts
// the entries after the last checkpoint again (at most this many after a
// crash; none after Close, which writes them), so that an append writes
// its entry and index keys but not, every time, the lessons it changes.
const lessonCheckpoint = 4096

// metaLessonsKey holds the sequence number up to which the stored lessons
// count the entries.
const metaLessonsKey = "meta/lessons"

// putLessons writes every lesson — the cache with over laid on it — and
// the sequence number they are complete up to.
func (l *Store) putLessons(set func(k, v []byte) error, over map[lessonKey]*ledger.Lesson, upTo uint64) error {
	l.lmu.RLock()
	all := make(map[lessonKey]*ledger.Lesson, len(l.lessons)+len(over))
	maps.Copy(all, l.lessons)
	l.lmu.RUnlock()
	maps.Copy(all, over)
	for k, ls := range all {
		b, err := json.Marshal(ls)
		if err != nil {
			return err
		}
		if err := set(lessonKeyBytes(k.rule, k.tag), b); err != nil {
			return err
		}
	}
	return set([]byte(metaLessonsKey), binary.BigEndian.AppendUint64(nil, upTo))
}

// maxBuckets bounds the minute buckets kept in memory: an append reads its
// minute's bucket from there, not from badger.
const maxBuckets = 1024

// apply records a committed update in the caches.
func (l *Store) apply(u *indexUpdate) {
	if u == nil {
		return
	}
	l.lmu.Lock()
	defer l.lmu.Unlock()
	for k, ls := range u.lessons {
		l.lessons[k] = ls
	}
	if len(l.buckets)+len(u.buckets) > maxBuckets {
		clear(l.buckets)
	}
	maps.Copy(l.buckets, u.buckets)
	if u.checkpoint > 0 {
		l.lessonSeq = u.checkpoint
	}
}

// fits returns how many of batches, from the front, fit in one
// transaction; at least one.
func fits(batches [][]encoded) int {
	size, keys := 0, 0
	for n, es := range batches {
		for i := range es {
			size += es[i].cost()
			keys += es[i].keys()
		}
		if n > 0 && (size > txnBudget || keys > txnKeys) {
			return n
		}
	}
	return len(batches)
}

// chunks splits es into runs that each fit in one transaction.
func chunks(es []encoded) [][]encoded {
	var out [][]encoded
	size, keys, start := 0, 0, 0
	for i := range es {
		c, k := es[i].cost(), es[i].keys()
		if i > start && (size+c > txnBudget || keys+k > txnKeys) {
			out = append(out, es[start:i])
			start, size, keys = i, 0, 0
		}
		size += c
		keys += k
	}
	return append(out, es[start:])
}

// loadIndex reads the index state at Open: whether the indexes are
// complete, and the lessons.
func (l *Store) loadIndex() (bool, error) {
	indexed := false
	l.lessons = map[lessonKey]*ledger.Lesson{}
	l.buckets = map[int64][2]uint64{}
	err := l.db.View(func(txn *badger.Txn) error {
		item, err := txn.Get([]byte(metaIndexKey))
		if errors.Is(err, badger.ErrKeyNotFound) {
			return nil
		} else if err != nil {
			return err
		}
		v, err := item.ValueCopy(nil)
		if err != nil {
			return err
		}
		if string(v) != indexVersion {
			return &corruptError{fmt.Sprintf("index version %q, want %q", v, indexVersion)}
		}
		indexed = true
		if item, err := txn.Get([]byte(metaLessonsKey)); err == nil {
			v, err := item.ValueCopy(nil)
			if err != nil || len(v) != 8 {
				return &corruptError{fmt.Sprintf("lessons checkpoint %q: %v", v, err)}
			}
			l.lessonSeq = binary.BigEndian.Uint64(v)
		} else if !errors.Is(err, badger.ErrKeyNotFound) {
			return err
		}
		it := txn.NewIterator(badger.IteratorOptions{PrefetchValues: true, PrefetchSize: 100, Prefix: []byte(lessonPrefix)})
		defer it.Close()
		for it.Rewind(); it.Valid(); it.Next() {
			ls := new(ledger.Lesson)
			if err := it.Item().Value(func(v []byte) error { return json.Unmarshal(v, ls) }); err != nil {
				return &corruptError{fmt.Sprintf("lesson %q: %v", it.Item().Key(), err)}
			}
			l.lessons[lessonKey{ls.Rule, ls.Tag}] = ls
		}
		return nil
	})
	if err != nil || !indexed {
		return indexed, translate(err)
	}
	// Count the entries appended after the lessons were last written.
	u := &indexUpdate{lessons: map[lessonKey]*ledger.Lesson{}, buckets: map[int64][2]uint64{}}
	after := l.lessonSeq
	for {
		page, last, end, err := l.scanPage(context.Background(), after, 1024)
		if err != nil {
			return false, err
		}
		for _, ent := range page {
			e := encodedOf(nil, &ent.Violation)
			u.addLesson(&e, l.cachedLesson)
		}
		if end || len(page) == 0 {
			break
		}
		after = last
	}
	maps.Copy(l.lessons, u.lessons)
	return true, nil
}

// Reindex rebuilds the indexes and lessons from the entries, and returns
// how many entries it indexed. Open does it once, by itself, for a ledger
// written before the indexes (see "Indexes" in the package
// documentation); call it after restoring entries by other means, or when
// lessons look wrong. Appends wait while it runs; it reads every entry
// once (about 10 s per million entries here). It fails with
// ledger.ErrReadOnly on a read-only ledger.
func (l *Store) Reindex(ctx context.Context) (int, error) {
	const op = "reindex"
	if err := l.acquire(ctx, op); err != nil {
		return 0, err
	}
	defer l.mu.RUnlock()
	if l.readOnly {
		return 0, l.error(op, ledger.ErrReadOnly)
	}
	if err := l.space.check(txnBudget); err != nil {
		return 0, l.error(op, err)
	}
	l.wmu.Lock()
	defer l.wmu.Unlock()
	n, err := l.reindex(ctx)
	if err != nil {
		if ctx.Err() != nil {
			err = ctx.Err()
		}
		return n, l.error(op, err)
	}
	return n, nil
}

// reindex rebuilds the indexes. The caller holds wmu. The index version
// key goes first and comes back last, so that a reindex cut short is
// redone by the next Open.
func (l *Store) reindex(ctx context.Context) (int, error) {
	if err := l.db.Update(func(txn *badger.Txn) error { return txn.Delete([]byte(metaIndexKey)) }); err != nil {
		return 0, translate(err)
	}
	l.indexed.Store(false)
	if err := l.db.DropPrefix([]byte(indexPrefix), []byte(bucketPrefix), []byte(lessonPrefix)); err != nil {
		return 0, translate(err)
	}
	l.lmu.Lock()
	l.lessons = map[lessonKey]*ledger.Lesson{}
	l.buckets = map[int64][2]uint64{}
	l.lessonSeq = 0
	l.lmu.Unlock()

	u := &indexUpdate{lessons: map[lessonKey]*ledger.Lesson{}, buckets: map[int64][2]uint64{}}
	base := func(lessonKey) *ledger.Lesson { return new(ledger.Lesson) }
	w := &txnWriter{db: l.db}
	defer w.discard()
	n, size := 0, 0
	var after, lastSeq uint64
	for {
		page, last, end, err := l.scanPage(ctx, after, 1024)
		if err != nil {
			return n, err
		}
		for _, ent := range page {
			e := encodedOf(nil, &ent.Violation)
			set := func(kind byte, value string) error {
				if value == "" {
					return nil
				}
				return w.set(indexKey(indexPrefixOf(kind, value), ent.Seq), nil)
			}
			err := errors.Join(set('t', e.traceID), set('s', e.sessionID), set('r', e.rule))
			for _, tag := range e.tags {
				err = errors.Join(err, set('g', tag))
			}
			if err != nil {
				return n, err
			}
			u.addLesson(&e, base)
			u.addBucket(&e, ent.Seq)
			lastSeq = ent.Seq
			n++
			if size += e.cost(); size > 16<<20 {
				if err := l.space.check(size); err != nil {
					return n, err
				}
				size = 0
			}
		}
		if end {
			break
		}
		after = last
	}
	if err := l.putLessons(w.set, u.lessons, lastSeq); err != nil {
		return n, err
	}
	for m, b := range u.buckets {
		v := binary.BigEndian.AppendUint64(binary.BigEndian.AppendUint64(make([]byte, 0, 16), b[0]), b[1])
		if err := w.set(bucketKey(m), v); err != nil {
			return n, err
		}
	}
	if err := w.set([]byte(metaIndexKey), []byte(indexVersion)); err != nil {
		return n, err
	}
	if err := w.commit(); err != nil {
		return n, err
	}
	if l.path != "" {
		if err := translate(l.db.Sync()); err != nil {
			return n, err
		}
	}
	u.checkpoint = lastSeq
	l.apply(u)
	l.indexed.Store(true)
	return n, nil
}

// scanPage reads up to max entries after the sequence number after, in
// one read transaction, in sequence order.
func (l *Store) scanPage(ctx context.Context, after uint64, max int) (out []ledger.Entry, last uint64, end bool, err error) {
	all := ledger.Query{}
	return l.readPage(ctx, &all, plan{hi: math.MaxUint64}, after, max)
}

// A plan is how a query reads: through the index keys under prefix, or
// the entries themselves when prefix is nil, between sequence numbers
// after+1 and hi.
type plan struct {
	prefix []byte
	hi     uint64
	empty  bool // nothing can match
}

// planFor picks the index q reads through: the trace or session id when
// given, else the rarer of rule and tag, and the sequence numbers of its
// time range.
func (l *Store) planFor(q *ledger.Query) (plan, error) {
	p := plan{hi: math.MaxUint64}
	if !l.indexed.Load() {
		return p, nil
	}
	switch {
	case q.TraceID != "":
		p.prefix = indexPrefixOf('t', q.TraceID)
	case q.SessionID != "":
		p.prefix = indexPrefixOf('s', q.SessionID)
	case q.Rule != "" && q.Tag != "":
		if l.countRule(q.Rule) <= l.countTag(q.Tag) {
			p.prefix = indexPrefixOf('r', q.Rule)
		} else {
			p.prefix = indexPrefixOf('g', q.Tag)
		}
	case q.Rule != "":
		p.prefix = indexPrefixOf('r', q.Rule)
	case q.Tag != "":
		p.prefix = indexPrefixOf('g', q.Tag)
	}
	if q.Since.IsZero() && q.Until.IsZero() {
		return p, nil
	}
	lo, hi, ok, err := l.timeBounds(q.Since, q.Until)
	if err != nil {
		return p, err
	}
	if !ok || hi <= q.AfterSeq {
		p.empty = true
	}
	p.hi = hi
	if lo > 0 && lo-1 > q.AfterSeq {
		q.AfterSeq = lo - 1
	}
	return p, nil
}

func (l *Store) countRule(rule string) int {
	l.lmu.RLock()
	defer l.lmu.RUnlock()
	n := 0
	for k, ls := range l.lessons {
		if k.rule == rule {
			n += ls.Count
		}
	}
	return n
}

func (l *Store) countTag(tag string) int {
	l.lmu.RLock()
	defer l.lmu.RUnlock()
	n := 0
	for k, ls := range l.lessons {
		if k.tag == tag {
			n += ls.Count
		}
	}
	return n
}

// timeBounds returns the smallest and largest sequence numbers of the
// entries whose minute overlaps [since, until), from the minute buckets.
func (l *Store) timeBounds(since, until time.Time) (lo, hi uint64, ok bool, err error) {
	from, to := int64(math.MinInt64), int64(math.MaxInt64)
	if !since.IsZero() {
		from = minuteOf(since)
	}
	if !until.IsZero() {
		to = minuteOf(until.Add(-time.Nanosecond))
	}
	if from > to {
		return 0, 0, false, nil
	}
	lo = math.MaxUint64
	err = l.db.View(func(txn *badger.Txn) error {
		it := txn.NewIterator(badger.IteratorOptions{PrefetchValues: true, PrefetchSize: 100, Prefix: []byte(bucketPrefix)})
		defer it.Close()
		end := bucketKey(to)
		for it.Seek(bucketKey(from)); it.Valid(); it.Next() {
			item := it.Item()
			if string(item.Key()) > string(end) {
				break
			}
			err := item.Value(func(v []byte) error {
				if len(v) != 16 {
					return &corruptError{fmt.Sprintf("minute bucket %q: %d bytes", item.Key(), len(v))}
				}
				lo = min(lo, binary.BigEndian.Uint64(v))
				hi = max(hi, binary.BigEndian.Uint64(v[8:]))
				ok = true
				return nil
			})
			if err != nil {
				return err
			}
		}
		return nil
	})
	return lo, hi, ok, translate(err)
}

// cachedLessons answers Lessons from the aggregates when q filters by
// nothing but rule and tag; ok is false when it cannot.
func (l *Store) cachedLessons(q ledger.Query) (out []ledger.Lesson, ok bool) {
	if !l.indexed.Load() || q.TraceID != "" || q.SessionID != "" || q.Dimension != "" ||
		!q.Since.IsZero() || !q.Until.IsZero() || q.AfterSeq != 0 {
		return nil, false
	}
	l.lmu.RLock()
	for k, ls := range l.lessons {
		if q.Rule != "" && k.rule != q.Rule || q.Tag != "" && k.tag != q.Tag || ls.Count == 0 {
			continue
		}
		c := *ls
		c.Examples = slices.Clone(ls.Examples)
		out = append(out, c)
	}
	l.lmu.RUnlock()
	if out == nil {
		out = []ledger.Lesson{}
	}
	slices.SortFunc(out, func(a, b ledger.Lesson) int {
		return cmp.Or(cmp.Compare(b.Count, a.Count), cmp.Compare(a.Rule, b.Rule), cmp.Compare(a.Tag, b.Tag))
	})
	if q.Limit > 0 && len(out) > q.Limit {
		out = out[:q.Limit]
	}
	return out, true
}

// migrate builds the indexes of a ledger opened read-write without them:
// a new one, or one written before they existed.
func (l *Store) migrate(last uint64, log *slog.Logger) error {
	if last == 0 {
		err := l.db.Update(func(txn *badger.Txn) error { return txn.Set([]byte(metaIndexKey), []byte(indexVersion)) })
		if err == nil {
			l.indexed.Store(true)
		}
		return translate(err)
	}
	if log != nil {
		log.Info("agentguard ledger: indexing entries written before the indexes", "dir", l.path, "entries", last)
	}
	l.wmu.Lock()
	defer l.wmu.Unlock()
	_, err := l.reindex(context.Background())
	return err
}
