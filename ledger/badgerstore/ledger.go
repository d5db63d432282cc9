package badgerstore

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/binary"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"math"
	"os"
	"slices"
	"strconv"
	"sync"
	"sync/atomic"
	"time"
	"unicode/utf8"

	"github.com/agentguard/agentguard/ledger"
	"github.com/agentguard/agentguard/trace"
	"github.com/agentguard/agentguard/trace/redact"
	"github.com/dgraph-io/badger/v4"
)

// DefaultMaxEvidence is the number of bytes of Finding.Evidence an entry
// keeps when Options.MaxEvidence is zero.
const DefaultMaxEvidence = 4096

// entryPrefix starts every entry key; the big-endian sequence number follows.
const entryPrefix = "e/"

// Options configures a Store. The zero value is the default: on disk,
// not synced on every append, personal data redacted, evidence cut to 4096
// bytes, silent.
type Options struct {
	// InMemory keeps everything in memory (badger's in-memory mode): dir is
	// ignored and nothing survives Close. Meant for tests.
	InMemory bool
	// Durable makes every Append and AppendBatch wait until its entries are
	// synced to disk, so a power loss or kernel crash loses nothing that
	// was acknowledged. Appends are group-committed: they queue, and one
	// goroutine writes everything queued as one transaction, syncs it once
	// and then acknowledges all of it. A lone append waits about one sync
	// (0.3 to 1.4 ms on the virtual disk measured); concurrent appenders
	// share syncs, 64 of them reaching 10 to 36 times badger's throughput
	// with one synced update each (see "Durability and cost" in the package
	// documentation).
	// Without Durable a crashed process loses nothing (the data is in the
	// kernel's page cache) but a crashed host may lose the last appends.
	Durable bool
	// ReadOnly opens an existing ledger for reading: ledger.Query, Entries,
	// Lessons, Export and Snapshot work, appends fail with ledger.ErrReadOnly, and
	// nothing in dir is written or has its mode changed. It cannot open a
	// directory that a read-write Store holds (ledger.ErrLocked): read a Snapshot
	// instead. Nor can it open one whose writer died without Close: open it
	// read-write once to recover it. Incompatible with InMemory; badger
	// does not support it on Windows or Plan 9.
	ReadOnly bool
	// MaxEvidence is how many bytes of Finding.Evidence an entry keeps; the
	// rest is cut at a rune boundary and marked with trace.TruncationMarker.
	// Zero means DefaultMaxEvidence; negative keeps everything.
	MaxEvidence int
	// Redact rewrites Finding.Evidence, Finding.Message, Finding.Question
	// and the text of Finding.Facts before an entry is encoded, so what it removes never reaches the disk
	// or an Export; a session id in which it finds something is stored as
	// a pseudonym (see sessionKey), which queries by the id as given still
	// find. Nil means redact.String, which masks e-mail addresses,
	// phone numbers, card numbers and Chinese resident identity numbers;
	// redact.None turns redaction off; redact.Redactor{...}.Redact chooses
	// what to mask. It runs on the appending goroutine and must be safe for
	// concurrent use. Evidence is redacted before it is cut to MaxEvidence.
	Redact func(string) string
	// Logger receives badger's warnings and errors. Nil means silent.
	Logger *slog.Logger
	// MaxTraceBytes caps the JSON of the steps PutTrace keeps for one
	// trace; later steps are counted, not stored. Zero means
	// DefaultMaxTraceBytes; negative means no cap.
	MaxTraceBytes int
	// DiskReserve is the free space, in bytes, the ledger leaves on its
	// disk: while less is free, appends, PutTrace and Open fail with
	// ledger.ErrDiskFull instead of writing (see "Full disk" in the package
	// documentation). Zero means DefaultDiskReserve; a positive value
	// below MinDiskReserve is refused by Open; negative turns the check
	// off. Ignored in memory and read-only.
	DiskReserve int64

	// freeSpace replaces diskFree in tests.
	freeSpace func(dir string) (uint64, error)
}

// Store is an append-only store of violations on badger. Its methods are
// safe for concurrent use. Only one Store, in one process, may have a given
// directory open at a time.
type Store struct {
	db          *badger.DB
	path        string
	maxEvidence int
	redact      func(string) string
	readOnly    bool
	space       *space // nil when not checked

	maxTraceBytes int

	// indexed is set once the indexes are complete; until then (a
	// read-only ledger written before them) queries scan the entries.
	indexed atomic.Bool
	// lmu guards the three below. Only appends, under wmu, change them.
	lmu       sync.RWMutex
	lessons   lessonMap // as committed
	lessonSeq uint64    // the last checkpoint: the a/ and m/ keys count the entries up to this one
	dirty     bucketMap // the minute buckets of the entries after lessonSeq

	mu     sync.RWMutex // held for reading by every operation, for writing by Close
	closed bool

	// next is the next sequence number. Without Durable it is guarded by
	// wmu, which orders appends so that they commit in sequence order; with
	// Durable only the committer's goroutine uses it, until Close.
	wmu   sync.Mutex
	next  uint64
	lease *lease     // nil in memory and read-only
	gc    *committer // nil unless Durable
	// wbuf and wents are write's buffers, kept for the next transaction;
	// guarded by wmu.
	wbuf  []byte
	wents []badger.Entry
}

// Open opens the ledger in dir, creating dir if it is missing; with
// opts.InMemory dir is ignored. The directory is the ledger's own: a
// read-write Open fails if it holds anything but ledger files. Sequence
// numbers continue after the largest one stored or reserved in dir. Before
// badger sees the directory, Open verifies the MANIFEST and the checksums
// of every table file, which reads them all once (about 5 ms per 10,000
// entries). It fails with ledger.ErrLocked if the directory is open elsewhere and
// with ledger.ErrCorrupt if its files are damaged. Unless opts.ReadOnly is set, it
// sets the mode of dir to 0700 and of every file in it to 0600 (see "File
// permissions" in the package documentation). Call Close when done.
func Open(dir string, opts Options) (*Store, error) {
	path := dir
	if opts.InMemory {
		path = ""
	}
	fail := func(err error) error { return &ledger.Error{Op: "open", Path: path, Err: err} }
	if err := prepareDir(dir, opts); err != nil {
		return nil, fail(err)
	}
	sp, err := diskSpace(dir, opts)
	if err != nil {
		return nil, fail(err)
	}
	bo := badgerOptions(path, opts)
	if !opts.InMemory {
		if err := check(dir, bo); err != nil {
			return nil, fail(err)
		}
	}
	if !opts.InMemory {
		if err := cleanWAL(path); err != nil && !opts.ReadOnly {
			return nil, fail(err)
		}
	}
	db, err := openDB(bo)
	if err != nil {
		return nil, fail(err)
	}
	if sp != nil {
		if sp.wal, err = openWAL(path); err != nil {
			db.Close()
			return nil, fail(err)
		}
		sp.watch()
	}
	l := newStore(db, path, sp, opts)
	indexed, version, err := l.loadIndex()
	if err == nil {
		l.indexed.Store(indexed)
		if !opts.ReadOnly {
			err = l.readyForAppends(dir, indexed, version, opts)
		}
	}
	if err != nil {
		db.Close()
		sp.close()
		return nil, fail(err)
	}
	return l, nil
}

// prepareDir checks that opts and dir can open a ledger, and creates and
// claims dir for a read-write one on disk.
func prepareDir(dir string, opts Options) error {
	switch {
	case opts.InMemory && opts.ReadOnly:
		return errors.New("a ledger cannot be both in memory and read-only")
	case opts.InMemory:
	case dir == "":
		return errors.New("empty directory name")
	case opts.ReadOnly:
		if _, err := os.Stat(dir); err != nil {
			return err
		}
	default:
		if err := os.MkdirAll(dir, 0o700); err != nil {
			return err
		}
		if err := claimDir(dir); err != nil {
			return err
		}
	}
	return nil
}

// diskSpace returns what keeps opts.DiskReserve free on the disk of dir,
// after checking that it is free now; nil in memory, read-only, or with a
// negative reserve.
func diskSpace(dir string, opts Options) (*space, error) {
	if opts.InMemory || opts.ReadOnly || opts.DiskReserve < 0 {
		return nil, nil
	}
	if opts.DiskReserve > 0 && opts.DiskReserve < MinDiskReserve {
		return nil, fmt.Errorf("DiskReserve %d is below %d, the least that keeps a memtable flush from faulting", opts.DiskReserve, MinDiskReserve)
	}
	sp := &space{dir: dir, reserve: uint64(opts.DiskReserve), free: opts.freeSpace}
	if sp.reserve == 0 {
		sp.reserve = DefaultDiskReserve
	}
	if sp.free == nil {
		sp.free = diskFree
	}
	if err := sp.check(0); err != nil {
		return nil, err
	}
	return sp, nil
}

// newStore returns the Store of db, with the defaults of the options
// left zero.
func newStore(db *badger.DB, path string, sp *space, opts Options) *Store {
	l := &Store{db: db, path: path, maxEvidence: opts.MaxEvidence, redact: opts.Redact, readOnly: opts.ReadOnly,
		space: sp, maxTraceBytes: opts.MaxTraceBytes}
	if l.maxEvidence == 0 {
		l.maxEvidence = DefaultMaxEvidence
	}
	switch {
	case l.maxTraceBytes == 0:
		l.maxTraceBytes = DefaultMaxTraceBytes
	case l.maxTraceBytes < 0:
		l.maxTraceBytes = math.MaxInt
	}
	if l.redact == nil {
		l.redact = redact.String
	}
	return l
}

// readyForAppends readies a read-write ledger, whose index loadIndex
// found indexed at version, for appends: it builds or upgrades the
// indexes, reserves sequence numbers after the last one (on disk),
// restricts the files' modes and, with Durable, starts the committer.
func (l *Store) readyForAppends(dir string, indexed bool, version string, opts Options) error {
	last, err := lastSeq(l.db)
	if err == nil && !indexed {
		err = l.migrate(last, opts.Logger)
	} else if err == nil && version != indexVersion {
		err = l.upgrade()
	}
	if err == nil && !opts.InMemory {
		l.lease, last, err = openLease(dir, last)
	}
	if err == nil && !opts.InMemory {
		err = restrictModes(dir)
	}
	if err != nil {
		return err
	}
	l.next = last + 1
	if opts.Durable {
		if l.gc, err = startCommitter(l); err != nil {
			return err
		}
	}
	return nil
}

// badgerOptions are the badger options for a ledger in dir.
func badgerOptions(dir string, opts Options) badger.Options {
	bo := badger.DefaultOptions(dir).
		WithInMemory(opts.InMemory).
		WithReadOnly(opts.ReadOnly).
		// With Durable the committer syncs, once per group (see
		// committer.sync).
		WithSyncWrites(false).
		// Appends are serialised by the ledger (wmu or the committer) and
		// never read what they write: nothing can conflict.
		WithDetectConflicts(false).
		// Memory (see "Memory" in the package documentation): small
		// memtables and tables, few of them waiting in level 0, small
		// caches. badger's table builders hold about twice the
		// uncompressed size of the table they build, a dozen of them at
		// once in a compaction.
		WithMemTableSize(memTableSize).
		WithNumMemtables(2).
		WithBlockCacheSize(4 << 20).
		WithIndexCacheSize(2 << 20).
		WithBaseTableSize(512 << 10).
		WithNumLevelZeroTables(3).
		WithNumLevelZeroTablesStall(8).
		// Every entry stays below the value threshold (see maxEntry), so
		// the value log only ever holds its header: keep its files small.
		WithValueLogFileSize(1 << 20).
		WithValueThreshold(valueThreshold).
		WithNumCompactors(2).
		WithMetricsEnabled(false).
		WithLogger(nil)
	// Tables of one size at every level: a builder for a deeper level
	// would hold more.
	bo.TableSizeMultiplier = 1
	if opts.Logger != nil {
		bo = bo.WithLogger(slogAdapter{opts.Logger})
	}
	return bo
}

// openDB calls badger.Open, turning a panic on damaged files into an error.
func openDB(bo badger.Options) (db *badger.DB, err error) {
	defer func() {
		if r := recover(); r != nil {
			db, err = nil, &corruptError{fmt.Sprint("panic while opening: ", r)}
		}
	}()
	db, err = badger.Open(bo)
	return db, translate(err)
}

// lastSeq returns the largest sequence number stored, or 0.
func lastSeq(db *badger.DB) (uint64, error) {
	var last uint64
	err := db.View(func(txn *badger.Txn) error {
		it := txn.NewIterator(badger.IteratorOptions{Reverse: true, Prefix: []byte(entryPrefix)})
		defer it.Close()
		it.Seek(key(^uint64(0)))
		if it.Valid() {
			k := it.Item().Key()
			if len(k) != len(entryPrefix)+8 {
				return &corruptError{fmt.Sprintf("malformed key %q", k)}
			}
			last = binary.BigEndian.Uint64(k[len(entryPrefix):])
		}
		return nil
	})
	return last, translate(err)
}

// key returns the key of the entry with sequence number seq.
func key(seq uint64) []byte {
	return appendKey(make([]byte, 0, len(entryPrefix)+8), seq)
}

// Path returns the directory the ledger was opened in, or "" for an
// in-memory ledger.
func (l *Store) Path() string { return l.path }

// Close flushes and closes the ledger. It waits for running operations to
// finish: with Durable, every append already queued is committed and
// acknowledged first. It then gives back the sequence numbers reserved but
// not used, so that the next Open continues without a gap, and sets the
// mode of every file in the directory to 0600. Calling Close again does
// nothing and returns nil; any other method called after it returns
// ledger.ErrClosed.
func (l *Store) Close() error {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.closed {
		return nil
	}
	l.closed = true
	if l.gc != nil {
		l.gc.stop()
	}
	if !l.readOnly && l.indexed.Load() {
		if err := l.checkpoint(); err != nil {
			l.db.Close()
			return l.error("close", translate(err))
		}
	}
	err := l.db.Close()
	l.space.close()
	if err != nil {
		// Keep the reservation: what was written may not all be on disk.
		return l.error("close", translate(err))
	}
	if l.lease != nil {
		if err := l.lease.release(l.next - 1); err != nil {
			return l.error("close", err)
		}
		if err := restrictModes(l.path); err != nil {
			return l.error("close", err)
		}
	}
	return nil
}

// acquire starts an operation: it fails if ctx is done or the ledger is
// closed. On success the caller must call l.mu.RUnlock.
func (l *Store) acquire(ctx context.Context, op string) error {
	if err := ctx.Err(); err != nil {
		return l.error(op, err)
	}
	l.mu.RLock()
	if l.closed {
		l.mu.RUnlock()
		return l.error(op, ledger.ErrClosed)
	}
	return nil
}

func (l *Store) error(op string, err error) error {
	return &ledger.Error{Op: op, Path: l.path, Err: err}
}

// Append stores v and returns its sequence number. A zero v.Time is set to
// the current time in UTC; v.Evidence, v.Message and v.Question go through
// Options.Redact, and v.Evidence is then cut to Options.MaxEvidence (and
// the entry to 256 KiB of JSON). Its index keys are written in the same
// transaction; the lessons and the minute bucket it counts in are kept in
// memory and written every 4,096 entries and at Close. Append is safe for concurrent use;
// sequence numbers are committed in the order they are given. Append
// implements the guard package's Sink.
//
// With Options.Durable, v is on disk when Append returns nil. If ctx ends
// while v waits for the group commit, Append returns ctx's error and v is
// never written; once the commit that carries v has begun, Append waits for
// it (one sync) and reports its outcome, whatever ctx does. So an error
// matching ctx's means v was not stored; any other error means its commit
// or sync failed, and v may or may not have been kept. While the disk has
// less free space than Options.DiskReserve, Append writes nothing and
// returns an error matching ledger.ErrDiskFull.
func (l *Store) Append(ctx context.Context, v trace.Violation) (uint64, error) {
	var seq [1]uint64
	vs := [1]trace.Violation{v}
	if err := l.append(ctx, vs[:], seq[:]); err != nil {
		return 0, err
	}
	return seq[0], nil
}

// AppendBatch stores vs and returns their sequence numbers, in order. It
// prepares each violation as Append does, and with Options.Durable it is
// acknowledged as Append is. A batch is written in one transaction — all
// of it or none — unless it is larger than one transaction holds (about
// 160 KB of entries and their index keys): then it is split into as many
// as it needs, each whole, in order, and an error may leave the first of
// them stored. So no batch is too large.
func (l *Store) AppendBatch(ctx context.Context, vs []trace.Violation) ([]uint64, error) {
	if len(vs) == 0 {
		return nil, nil
	}
	seqs := make([]uint64, len(vs))
	if err := l.append(ctx, vs, seqs); err != nil {
		return nil, err
	}
	return seqs, nil
}

// append stores vs and sets seqs, as long as vs, to their sequence
// numbers.
func (l *Store) append(ctx context.Context, vs []trace.Violation, seqs []uint64) error {
	const op = "append"
	if err := l.acquire(ctx, op); err != nil {
		return err
	}
	defer l.mu.RUnlock()
	if l.readOnly {
		return l.error(op, ledger.ErrReadOnly)
	}
	// Redact and encode here, on the caller's goroutine, before any lock.
	now := time.Now().UTC()
	var one [1]encoded
	es := one[:]
	if len(vs) > 1 {
		es = make([]encoded, len(vs))
	}
	defer func() {
		for i := range es {
			es[i].release()
		}
	}()
	size := 0
	for i := range vs {
		e, err := l.encode(&vs[i], now)
		if err != nil {
			return l.error(op, err)
		}
		es[i] = e
		size += e.cost()
	}
	if err := l.space.check(size); err != nil {
		return l.error(op, err)
	}
	for done := 0; done < len(es); {
		chunk := es[done:][:fitsOne(es[done:])]
		var first uint64
		var err error
		if l.gc != nil {
			first, err = l.gc.submit(ctx, chunk)
		} else {
			first, err = l.appendChunk(ctx, chunk)
		}
		if err != nil {
			return l.error(op, err)
		}
		for i := range chunk {
			seqs[done+i] = first + uint64(i)
		}
		done += len(chunk)
	}
	return nil
}

// appendChunk writes es, which fit in one transaction, without Durable.
func (l *Store) appendChunk(ctx context.Context, es []encoded) (uint64, error) {
	l.wmu.Lock()
	defer l.wmu.Unlock()
	if err := ctx.Err(); err != nil {
		return 0, err
	}
	if err := l.lease.reserve(l.next + uint64(len(es)) - 1); err != nil {
		return 0, err
	}
	batches := [][]encoded{es}
	txn := l.db.NewTransaction(true)
	defer txn.Discard()
	if err := l.write(txn, batches, l.next); err != nil {
		return 0, translate(err)
	}
	first := l.next
	// Advance even if the commit fails: a failed commit may have reached the
	// log, and a sequence number must never be given twice.
	l.next += uint64(len(es))
	if err := txn.Commit(); err != nil {
		return 0, translate(err)
	}
	l.apply(batches, first)
	if l.checkpointDue() {
		// The entries are stored: a checkpoint that fails is tried again
		// at the next append, and until one succeeds Open counts more
		// entries again.
		l.checkpoint()
	}
	return first, nil
}

// maxEntry is the largest entry the ledger stores, in bytes of JSON. badger
// keeps values below its value threshold (256 KiB, the largest its
// 2 MiB memtables allow) in its write-ahead log and memtables, and larger ones in a separate value log;
// keeping every entry below it means the write-ahead log is the only log a
// durable commit has to sync (see committer.sync).
const maxEntry = valueThreshold - 1

// valueThreshold is the largest the memtable size allows: badger takes
// values up to 15% of it in a transaction.
const valueThreshold = 256 << 10

// memTableSize is the size of each of badger's two memtables.
const memTableSize = 2 << 20

// encode prepares v for storage — time, redaction, evidence cap — and
// returns its JSON. An entry that would be larger than maxEntry has its
// Evidence, then its Message and Question, cut to fit.
func (l *Store) encode(v *trace.Violation, now time.Time) (encoded, error) {
	j := getJSONBuf()
	w := &j.v // the copy to encode: no allocation of its own
	*w = *v
	if w.Time.IsZero() {
		w.Time = now
	}
	w.Message = l.capText(w.Message, l.maxMessage())
	w.Question = l.capText(w.Question, l.maxMessage())
	w.Evidence = l.capText(w.Evidence, l.maxEvidence)
	if len(w.Facts) > 0 {
		w.Facts = slices.Clone(w.Facts) // the caller's are not redacted
		for i := range w.Facts {
			w.Facts[i].Text = l.capText(w.Facts[i].Text, trace.MaxFactText)
			w.Facts[i].Where = l.capText(w.Facts[i].Where, trace.MaxFactText)
			w.Facts[i].Says = l.capText(w.Facts[i].Says, trace.MaxFactText)
		}
	}
	w.SessionID = l.sessionKey(w.SessionID)
	ids := len(w.Rule) + len(w.TraceID) + len(w.SessionID)
	for _, tag := range w.Tags {
		ids += len(tag) + 8
	}
	if ids > maxEntry/2 {
		reduce(w) // no use cutting the text first
	}
	for try := 0; try < 2; try++ {
		if try == 1 {
			// Still too large without its text: the identifying fields are
			// what is left (a model-made tag, say). Store a reduced entry
			// rather than none.
			reduce(w)
		}
		if e, ok, err := fitEntry(j); ok || err != nil {
			if err != nil {
				putJSONBuf(j)
			}
			return e, err
		}
	}
	putJSONBuf(j)
	return encoded{}, fmt.Errorf("violation is larger than %d bytes of JSON even reduced", maxEntry)
}

// sessionKey is a session id as the ledger stores it: the id itself,
// unless the redactor finds personal data in it (a session keyed by the
// customer's e-mail address or phone number): then a pseudonym, "session-"
// and 16 hex digits of the id's SHA-256. The same id always gets the same
// pseudonym, so entries still group by session, and a query by the id as
// given finds them. A pseudonym, not anonymity: whoever knows the address
// can compute it.
func (l *Store) sessionKey(id string) string {
	if id == "" || l.redact(id) == id {
		return id
	}
	sum := sha256.Sum256([]byte(id))
	return "session-" + hex.EncodeToString(sum[:8])
}

// reduce cuts the identifying fields of w — rule, trace and session ids,
// tags — to a size that always fits, marking each cut.
func reduce(w *trace.Violation) {
	const field, tags = 1 << 10, 32
	w.Rule = cutMarked(w.Rule, field)
	w.TraceID = cutMarked(w.TraceID, field)
	w.SessionID = cutMarked(w.SessionID, field)
	if len(w.Tags) > tags {
		w.Tags = append(w.Tags[:tags:tags], trace.TruncationMarker)
	}
	w.Tags = slices.Clone(w.Tags)
	for i := range w.Tags {
		w.Tags[i] = cutMarked(w.Tags[i], maxIndexValue)
	}
}

// fitEntry cuts the evidence, then the message and question, of j.v until
// its JSON fits in an entry; ok is false if it does not fit without them.
// The entry's JSON is in j's buffer.
func fitEntry(j *jsonBuf) (encoded, bool, error) {
	w := &j.v
	if b, err := j.marshal(w); err == nil && len(b)+maxSeqJSON > maxEntry && len(w.Facts) > 0 {
		w.Facts = nil // the facts go first: the message and evidence say more alone
	}
	for _, f := range [...]*string{&w.Evidence, &w.Message, &w.Question} {
		for {
			b, err := j.marshal(w)
			over := len(b) + maxSeqJSON - maxEntry
			if err != nil {
				return encoded{}, false, err
			}
			if over <= 0 {
				e := encodedOf(b, w)
				e.pooled = j
				return e, true, nil
			}
			if *f == "" {
				break
			}
			// Cut the field in proportion to its share of the JSON, and by
			// at least a sixth of the excess: JSON spends 1 to 6 bytes on a
			// byte of text.
			share := int(float64(over) * float64(len(*f)) / float64(len(b)))
			*f = cutMarked(*f, len(*f)-max(share, over/6)-1)
		}
	}
	return encoded{}, false, nil
}

// A jsonBuf encodes a violation into a buffer of its own, reused once the
// entry is written: encoding costs no allocation but what json makes for
// time.Time.
type jsonBuf struct {
	v   trace.Violation // what is encoded
	b   bytes.Buffer
	enc *json.Encoder
}

var jsonBufs = sync.Pool{New: func() any {
	j := new(jsonBuf)
	j.enc = json.NewEncoder(&j.b) // escapes HTML, as json.Marshal does
	return j
}}

func getJSONBuf() *jsonBuf { return jsonBufs.Get().(*jsonBuf) }

func putJSONBuf(j *jsonBuf) {
	j.v = trace.Violation{}
	if j.b.Cap() <= 64<<10 {
		jsonBufs.Put(j)
	}
}

// marshal returns what json.Marshal(v) returns, in j's buffer.
func (j *jsonBuf) marshal(v any) ([]byte, error) {
	j.b.Reset()
	if err := j.enc.Encode(v); err != nil {
		return nil, err
	}
	b := j.b.Bytes()
	return b[:len(b)-1], nil // Encode ends with a newline
}

// cutMarked cuts s to at most max bytes, at a rune boundary, ending with
// trace.TruncationMarker when it fits.
func cutMarked(s string, max int) string {
	if len(s) <= max {
		return s
	}
	marker := trace.TruncationMarker
	if max < len(marker) {
		marker = ""
	}
	return s[:runeCut(s, max-len(marker))] + marker
}

// maxSeqJSON is the most bytes appendWithSeq adds to a violation's JSON.
const maxSeqJSON = len(`{"seq":18446744073709551615,`) - 1

// appendWithSeq appends to b the JSON of the ledger.Entry with sequence
// number seq and the violation whose JSON is body: body with a "seq"
// member put first. It equals json.Marshal(ledger.Entry{seq, v}).
func appendWithSeq(b []byte, seq uint64, body []byte) []byte {
	b = append(b, `{"seq":`...)
	b = strconv.AppendUint(b, seq, 10)
	if len(body) > 2 {
		b = append(b, ',')
	}
	return append(b, body[1:]...)
}

// Redacting very long evidence whole would cost time out of proportion to
// what is kept, so only its first redactWindow(max) bytes are redacted,
// and the last tailGuard bytes of those are dropped: a number or address
// that the window cut in two could have escaped the redactor there, and
// masks shorten the text, which could pull it below the cap.
func redactWindow(max int) int { return 2*max + 1024 }

const tailGuard = 320

// DefaultMaxMessage is how many bytes of Finding.Message and
// Finding.Question an entry keeps: a message may quote what the model
// sent.
const DefaultMaxMessage = 4096

// maxMessage is the cap on Message and Question: the larger of
// DefaultMaxMessage and MaxEvidence, none when MaxEvidence is negative.
func (l *Store) maxMessage() int {
	if l.maxEvidence < 0 {
		return -1
	}
	return max(l.maxEvidence, DefaultMaxMessage)
}

// capText redacts s and cuts it to max bytes, or with a negative max to
// the most an entry holds.
func (l *Store) capText(s string, max int) string {
	if max < 0 {
		max = maxEntry
	}
	if len(s) <= redactWindow(max) {
		s, _ = trace.Truncate(l.redact(s), max)
		return s
	}
	s = l.redact(s[:runeCut(s, redactWindow(max))])
	s = s[:runeCut(s, len(s)-tailGuard)]
	marker := trace.TruncationMarker
	if max < len(marker) {
		marker = ""
	}
	return s[:runeCut(s, max-len(marker))] + marker
}

// runeCut returns the largest n' <= n, at least 0, at which s can be cut
// without splitting a rune.
func runeCut(s string, n int) int {
	if n >= len(s) {
		return len(s)
	}
	if n <= 0 {
		return 0
	}
	for n > 0 && !utf8.RuneStart(s[n]) {
		n--
	}
	return n
}
