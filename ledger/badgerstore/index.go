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
	"math"
	"slices"
	"time"

	"github.com/agentguard/agentguard/ledger"
	"github.com/agentguard/agentguard/trace"
	"github.com/dgraph-io/badger/v4"
)

// The indexes. The x/ keys of an entry are written in the same transaction
// as the entry, so an entry and its index keys are stored together or not
// at all; the m/ and a/ keys are aggregates, written at checkpoints (see
// lessonCheckpoint) and counted again from the entries after the last one
// when a ledger opens.
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
//	meta/lessons        the sequence number of the last entry the a/ and
//	                    m/ keys count: the last checkpoint.
//	meta/index          indexVersion, once the indexes are complete.
//	                    Version 1 wrote the m/ key of an entry with the
//	                    entry; it reads as version 2.
const (
	indexPrefix  = "x/"
	bucketPrefix = "m/"
	lessonPrefix = "a/"
	metaIndexKey = "meta/index"
	indexVersion = "2"
)

// maxIndexValue bounds the bytes of a field an index key holds; a longer
// value is indexed by its head and a hash, and queries test every entry
// they read against the whole filter anyway.
const maxIndexValue = 256

// Transactions are kept well below badger's limits (15% of the memtable
// size, about 300 KB, and 3,200 keys with the ledger's 2 MiB memtables): a batch of appends is
// split into transactions of at most txnBudget bytes and txnKeys keys, so
// that no transaction is ever too big for badger.
const (
	txnBudget = 160 << 10
	txnKeys   = 1500
)

// encoded is one prepared entry: its JSON and the fields it is indexed by.
type encoded struct {
	body      []byte   // JSON of the violation, without the sequence number
	pooled    *jsonBuf // holds body, if it came from the pool; see release
	rule      string
	traceID   string
	sessionID string
	tags      []string // distinct
	dim       trace.Dimension
	time      time.Time
}

func encodedOf(body []byte, v *trace.Violation) encoded {
	e := encoded{body: body, rule: v.Rule, traceID: v.TraceID, sessionID: v.SessionID, tags: v.Tags, dim: v.Dimension, time: v.Time}
	for i := 1; i < len(v.Tags); i++ {
		if slices.Contains(v.Tags[:i], v.Tags[i]) {
			e.tags = nil // copy the distinct ones
			for i, tag := range v.Tags {
				if !slices.Contains(v.Tags[:i], tag) {
					e.tags = append(e.tags, tag)
				}
			}
			break
		}
	}
	return e
}

// release gives the entry's JSON buffer back to the pool once it is
// written, or abandoned.
func (e *encoded) release() {
	if e.pooled != nil {
		putJSONBuf(e.pooled)
		e.pooled, e.body = nil, nil
	}
}

// keys is how many keys the entry adds to a transaction, at most.
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

// size is the bytes write puts in its buffer for the entry, at most: its
// key and value and its index keys.
func (e *encoded) size() int {
	n := len(entryPrefix) + 8 + len(e.body) + maxSeqJSON
	field := func(s string) int { return len(indexPrefix) + 1 + 2 + min(len(s), maxIndexValue) + 8 }
	n += field(e.traceID) + field(e.sessionID) + field(e.rule)
	for _, tag := range e.tags {
		n += field(tag)
	}
	return n
}

// appendField appends s with its length, as an index key holds it: a value
// longer than maxIndexValue is cut and followed by "#" and a hash of the
// whole.
func appendField(k []byte, s string) []byte {
	if len(s) <= maxIndexValue {
		k = binary.BigEndian.AppendUint16(k, uint16(len(s)))
		return append(k, s...)
	}
	head := s[:runeCut(s, maxIndexValue-33)]
	sum := sha256.Sum256([]byte(s))
	k = binary.BigEndian.AppendUint16(k, uint16(len(head)+33))
	k = append(append(k, head...), '#')
	return hex.AppendEncode(k, sum[:16])
}

// indexPrefixOf is the prefix of the index keys of the entries whose field
// kind equals value.
func indexPrefixOf(kind byte, value string) []byte {
	return appendIndexPrefix(make([]byte, 0, len(indexPrefix)+1+2+min(len(value), maxIndexValue)+8), kind, value)
}

func appendIndexPrefix(k []byte, kind byte, value string) []byte {
	k = append(k, indexPrefix...)
	k = append(k, kind)
	return appendField(k, value)
}

func indexKey(prefix []byte, seq uint64) []byte {
	return binary.BigEndian.AppendUint64(slices.Clip(prefix), seq)
}

func appendKey(k []byte, seq uint64) []byte {
	return binary.BigEndian.AppendUint64(append(k, entryPrefix...), seq)
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

// lessonMap holds lessons by rule and tag.
type lessonMap map[lessonKey]*ledger.Lesson

// storedLesson is a lesson as the index stores it, with the keys the
// index has always written (Go's field names: "FirstSeen"), so that a
// ledger written before ledger.Lesson's JSON went snake_case reads on; the
// index's format is the store's, not the API's.
type storedLesson struct {
	Rule                string
	Tag                 string
	Dimension           trace.Dimension
	Count               int
	FirstSeen, LastSeen time.Time
	Examples            []string
}

// add counts e in the lessons of its rule.
func (m lessonMap) add(e *encoded) {
	if len(e.tags) == 0 {
		m.addTag(e, "")
	}
	for _, tag := range e.tags {
		m.addTag(e, tag)
	}
}

func (m lessonMap) addTag(e *encoded, tag string) {
	ls := m[lessonKey{e.rule, tag}]
	if ls == nil {
		ls = &ledger.Lesson{Rule: e.rule, Tag: tag, FirstSeen: e.time, LastSeen: e.time}
		m[lessonKey{e.rule, tag}] = ls
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

// bucketMap holds the smallest and largest sequence numbers of the entries
// of each minute.
type bucketMap map[int64][2]uint64

func (m bucketMap) add(minute int64, lo, hi uint64) {
	if b, ok := m[minute]; ok {
		lo, hi = min(lo, b[0]), max(hi, b[1])
	}
	m[minute] = [2]uint64{lo, hi}
}

func bucketValue(b [2]uint64) []byte {
	return binary.BigEndian.AppendUint64(binary.BigEndian.AppendUint64(make([]byte, 0, 16), b[0]), b[1])
}

// write adds the entries of batches to txn, numbered from first on, with
// their index keys. The caller has checked that the batches fit (fits),
// holds wmu, and calls apply once txn has committed. Keys and values go
// into one buffer, reused from one transaction to the next.
func (l *Store) write(txn *badger.Txn, batches [][]encoded, first uint64) error {
	size, keys := 0, 0
	for _, es := range batches {
		for i := range es {
			size += es[i].size()
			keys += es[i].keys()
		}
	}
	// Slices of buf and pointers into ents stay with txn until it ends,
	// and are reused by the next write, once it has: the last transaction
	// has ended when the next write begins, since both happen under wmu.
	// Both are sized for everything they will hold: were they to grow,
	// what txn holds would still be right, only no longer reused.
	clear(l.wents[:cap(l.wents)])
	buf, ents := l.wbuf[:0], l.wents[:0]
	if cap(buf) < size {
		buf = make([]byte, 0, size)
	}
	if cap(ents) < keys {
		ents = make([]badger.Entry, 0, keys)
	}
	if cap(buf) <= maxWriteBuf {
		l.wbuf, l.wents = buf, ents
	} else {
		l.wbuf, l.wents = nil, nil
	}
	set := func(start int) error {
		ents = append(ents, badger.Entry{Key: buf[start:len(buf):len(buf)]})
		return txn.SetEntry(&ents[len(ents)-1])
	}
	seq := first
	for _, es := range batches {
		for i := range es {
			e := &es[i]
			k := len(buf)
			buf = appendKey(buf, seq)
			v := len(buf)
			buf = appendWithSeq(buf, seq, e.body)
			if len(buf)-v > maxEntry {
				// encode keeps entries smaller; see maxEntry.
				return fmt.Errorf("entry of %d bytes is larger than %d", len(buf)-v, maxEntry)
			}
			ents = append(ents, badger.Entry{Key: buf[k:v:v], Value: buf[v:len(buf):len(buf)]})
			if err := txn.SetEntry(&ents[len(ents)-1]); err != nil {
				return err
			}
			for _, f := range [...]struct {
				kind  byte
				value string
			}{{'t', e.traceID}, {'s', e.sessionID}, {'r', e.rule}} {
				if f.value == "" {
					continue
				}
				k := len(buf)
				buf = binary.BigEndian.AppendUint64(appendIndexPrefix(buf, f.kind, f.value), seq)
				if err := set(k); err != nil {
					return err
				}
			}
			for _, tag := range e.tags {
				k := len(buf)
				buf = binary.BigEndian.AppendUint64(appendIndexPrefix(buf, 'g', tag), seq)
				if err := set(k); err != nil {
					return err
				}
			}
			seq++
		}
	}
	return nil
}

// maxWriteBuf is the largest buffer write keeps for the next transaction.
const maxWriteBuf = 1 << 20

// apply counts the committed entries of batches, numbered from first on,
// in the lessons and the minute buckets. The caller holds wmu.
func (l *Store) apply(batches [][]encoded, first uint64) {
	l.lmu.Lock()
	defer l.lmu.Unlock()
	seq := first
	for _, es := range batches {
		for i := range es {
			l.lessons.add(&es[i])
			l.dirty.add(minuteOf(es[i].time), seq, seq)
			seq++
		}
	}
}

// lessonCheckpoint is how many entries may be appended before the lessons
// and minute buckets are written again. Between checkpoints they live in
// memory; Open counts the entries after the last checkpoint again (at most
// this many after a crash; none after Close, which writes them), so that
// an append writes its entry and index keys but neither the lessons nor
// the minute bucket it changes.
const lessonCheckpoint = 4096

// metaLessonsKey holds the sequence number up to which the stored lessons
// count the entries, and the stored minute buckets hold them.
const metaLessonsKey = "meta/lessons"

// checkpointDue reports whether the lessons are lessonCheckpoint or more
// entries behind. The caller holds wmu.
func (l *Store) checkpointDue() bool {
	return l.indexed.Load() && l.next-1-l.lessonSeq >= lessonCheckpoint
}

// checkpoint writes the lessons and the minute buckets changed since the
// last checkpoint, so that they count every entry up to l.next-1. The
// caller holds wmu, so no entry commits meanwhile. The buckets go first, in
// as many transactions as they need: merged with what is stored, they are
// right at any time. The lessons follow in one transaction, with the
// sequence number they count up to: a crash before it commits leaves the
// last checkpoint whole.
func (l *Store) checkpoint() error {
	upTo := l.next - 1
	if upTo == l.lessonSeq {
		return nil
	}
	// Only writers change lessons and dirty, and they hold wmu: read both
	// without lmu.
	w := &txnWriter{db: l.db}
	defer w.discard()
	err := l.db.View(func(txn *badger.Txn) error {
		for m, b := range l.dirty {
			k := bucketKey(m)
			if stored, err := storedBucket(txn, k); err != nil {
				return err
			} else if stored[1] != 0 {
				b = [2]uint64{min(b[0], stored[0]), max(b[1], stored[1])}
			}
			if err := w.set(k, bucketValue(b)); err != nil {
				return err
			}
		}
		return nil
	})
	if err == nil {
		err = w.commit()
	}
	if err == nil {
		err = l.db.Update(func(txn *badger.Txn) error { return putLessons(txn.Set, l.lessons, upTo) })
	}
	if err != nil {
		return translate(err)
	}
	l.lmu.Lock()
	l.lessonSeq = upTo
	clear(l.dirty)
	l.lmu.Unlock()
	return nil
}

// storedBucket returns the minute bucket stored under k, or zeros.
func storedBucket(txn *badger.Txn, k []byte) ([2]uint64, error) {
	var b [2]uint64
	item, err := txn.Get(k)
	if errors.Is(err, badger.ErrKeyNotFound) {
		return b, nil
	} else if err != nil {
		return b, err
	}
	return b, item.Value(func(v []byte) error {
		if len(v) != 16 {
			return &corruptError{fmt.Sprintf("minute bucket %q: %d bytes", k, len(v))}
		}
		b = [2]uint64{binary.BigEndian.Uint64(v), binary.BigEndian.Uint64(v[8:])}
		return nil
	})
}

// putLessons writes every lesson of ls and the sequence number they count
// up to.
func putLessons(set func(k, v []byte) error, ls lessonMap, upTo uint64) error {
	for k, ls := range ls {
		b, err := json.Marshal(storedLesson(*ls))
		if err != nil {
			return err
		}
		if err := set(lessonKeyBytes(k.rule, k.tag), b); err != nil {
			return err
		}
	}
	return set([]byte(metaLessonsKey), binary.BigEndian.AppendUint64(nil, upTo))
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

// fitsOne returns how many of es, from the front, fit in one transaction;
// at least one.
func fitsOne(es []encoded) int {
	size, keys := 0, 0
	for i := range es {
		size += es[i].cost()
		keys += es[i].keys()
		if i > 0 && (size > txnBudget || keys > txnKeys) {
			return i
		}
	}
	return len(es)
}

// loadIndex reads the index state at Open: whether the indexes are
// complete, and the lessons. It counts the entries appended after the last
// checkpoint again, into the lessons and the minute buckets kept in memory.
// An index of version 1 is read as it is: its minute buckets were written
// with every entry, which is more than version 2 needs.
func (l *Store) loadIndex() (indexed bool, version string, err error) {
	l.lessons = lessonMap{}
	l.dirty = bucketMap{}
	err = l.db.View(func(txn *badger.Txn) error {
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
		if version = string(v); version != indexVersion && version != "1" {
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
			var st storedLesson
			if err := it.Item().Value(func(v []byte) error { return json.Unmarshal(v, &st) }); err != nil {
				return &corruptError{fmt.Sprintf("lesson %q: %v", it.Item().Key(), err)}
			}
			ls := ledger.Lesson(st)
			l.lessons[lessonKey{ls.Rule, ls.Tag}] = &ls
		}
		return nil
	})
	if err != nil || !indexed {
		return indexed, version, translate(err)
	}
	// Count the entries appended after the last checkpoint.
	after := l.lessonSeq
	for {
		page, last, end, err := l.scanPage(context.Background(), after, 1024)
		if err != nil {
			return false, version, err
		}
		for _, ent := range page {
			e := encodedOf(nil, &ent.Violation)
			l.lessons.add(&e)
			l.dirty.add(minuteOf(e.time), ent.Seq, ent.Seq)
		}
		if end || len(page) == 0 {
			break
		}
		after = last
	}
	return true, version, nil
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
	if err := l.dropIndexes(); err != nil {
		return 0, err
	}
	lessons, buckets := lessonMap{}, bucketMap{}
	w := &txnWriter{db: l.db}
	defer w.discard()
	n, lastSeq, err := l.indexEntries(ctx, w, lessons, buckets)
	if err != nil {
		return n, err
	}
	for m, b := range buckets {
		if err := w.set(bucketKey(m), bucketValue(b)); err != nil {
			return n, err
		}
	}
	if err := putLessons(w.set, lessons, lastSeq); err != nil {
		return n, err
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
	l.lmu.Lock()
	l.lessons, l.lessonSeq = lessons, lastSeq
	l.lmu.Unlock()
	l.indexed.Store(true)
	return n, nil
}

// dropIndexes deletes the index version key, then the index keys, the
// minute buckets and the lessons, on disk and in memory.
func (l *Store) dropIndexes() error {
	if err := l.db.Update(func(txn *badger.Txn) error { return txn.Delete([]byte(metaIndexKey)) }); err != nil {
		return translate(err)
	}
	l.indexed.Store(false)
	if err := l.db.DropPrefix([]byte(indexPrefix), []byte(bucketPrefix), []byte(lessonPrefix)); err != nil {
		return translate(err)
	}
	l.lmu.Lock()
	l.lessons = lessonMap{}
	l.dirty = bucketMap{}
	l.lessonSeq = 0
	l.lmu.Unlock()
	return nil
}

// indexEntries reads every entry, in sequence order, writing its index
// keys with w and adding it to lessons and its minute to buckets. It
// returns how many entries it read and the last one's sequence number,
// and checks the free space every 16 MB written.
func (l *Store) indexEntries(ctx context.Context, w *txnWriter, lessons lessonMap, buckets bucketMap) (int, uint64, error) {
	n, size := 0, 0
	var after, lastSeq uint64
	var kbuf []byte
	for {
		page, last, end, err := l.scanPage(ctx, after, 1024)
		if err != nil {
			return n, lastSeq, err
		}
		for _, ent := range page {
			e := encodedOf(nil, &ent.Violation)
			if kbuf, err = setIndexKeys(w, kbuf, ent.Seq, &e); err != nil {
				return n, lastSeq, err
			}
			lessons.add(&e)
			buckets.add(minuteOf(e.time), ent.Seq, ent.Seq)
			lastSeq = ent.Seq
			n++
			if size += e.cost(); size > 16<<20 {
				if err := l.space.check(size); err != nil {
					return n, lastSeq, err
				}
				size = 0
			}
		}
		if end {
			return n, lastSeq, nil
		}
		after = last
	}
}

// setIndexKeys writes with w the index keys of the entry seq, encoded as
// e: by trace id, session id, rule and tag. kbuf is scratch space for the
// keys, returned for the next entry.
func setIndexKeys(w *txnWriter, kbuf []byte, seq uint64, e *encoded) ([]byte, error) {
	set := func(kind byte, value string) error {
		if value == "" {
			return nil
		}
		kbuf = binary.BigEndian.AppendUint64(appendIndexPrefix(kbuf[:0], kind, value), seq)
		return w.set(slices.Clone(kbuf), nil)
	}
	err := errors.Join(set('t', e.traceID), set('s', e.sessionID), set('r', e.rule))
	for _, tag := range e.tags {
		err = errors.Join(err, set('g', tag))
	}
	return kbuf, err
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
	// The buckets in memory first: a checkpoint writes them before it
	// clears them, so they are either here or in the read below.
	l.lmu.RLock()
	for m, b := range l.dirty {
		if m >= from && m <= to {
			lo, hi, ok = min(lo, b[0]), max(hi, b[1]), true
		}
	}
	l.lmu.RUnlock()
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

// upgrade marks the indexes of an earlier version as the current one: the
// caller has checked that they read as it.
func (l *Store) upgrade() error {
	return translate(l.db.Update(func(txn *badger.Txn) error { return txn.Set([]byte(metaIndexKey), []byte(indexVersion)) }))
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
