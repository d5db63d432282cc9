package badgerstore

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"
)

// The group committer of a Durable ledger.
//
// badger syncs its logs once per commit request, so N appenders each
// committing a synced transaction pay N syncs one after the other. Instead,
// appenders put their encoded entries on a queue and wait; one goroutine
// takes everything queued, writes it as one transaction — one request, one
// sync — and then wakes every appender in it. While it syncs, the next
// group gathers on the queue, so the more appenders wait, the more each
// sync carries.
//
// A variant that split the work between a committing and a syncing
// goroutine, so that one group is written while the last one syncs, was
// measured side by side with this one and was no faster (40,000 to 42,000
// entries/s against 42,000 to 43,000 with 64 appenders): appenders are
// blocked until their sync ends, so there is little to write meanwhile.

// Request states. A request is pending until the committer takes it or its
// appender gives up on it, whichever comes first.
const (
	pending uint32 = iota
	taken
	canceled
)

// A request is one Append or AppendBatch waiting for the committer.
type request struct {
	entries []encoded     // without their sequence numbers; the request's own copy
	state   atomic.Uint32 // pending, taken or canceled
	first   uint64        // set by the committer: the first sequence number
	err     error         // set by the committer
	done    chan struct{} // the committer sends once, after setting first and err
}

func newRequest() any { return &request{done: make(chan struct{}, 1)} }

type committer struct {
	l *Store

	// Used by the committer's goroutine only.
	dir    string
	log    *os.File // the active memtable's log; nil in memory
	fid    int      // its number
	failed error    // a failed sync: nothing more is acknowledged

	// testHook, if set, runs before each transaction, with the requests it
	// is about to commit. Tests use it to hold the committer.
	testHook func(reqs []*request)

	mu    sync.Mutex
	queue []*request // guarded by mu

	// requests recycles this committer's requests and their channels. It
	// is the committer's own, not the package's, so that a channel never
	// passes between ledgers: a test that opens a ledger in a
	// testing/synctest bubble owns every channel the ledger uses, and a
	// channel made in one bubble must not be used outside it.
	requests sync.Pool

	wake    chan struct{} // capacity 1: a token means "the queue may hold work"
	quit    chan struct{} // closed by stop
	stopped chan struct{} // closed when run returns
}

func startCommitter(l *Store) (*committer, error) {
	c := &committer{
		l:       l,
		dir:     l.path,
		wake:    make(chan struct{}, 1),
		quit:    make(chan struct{}),
		stopped: make(chan struct{}),
	}
	c.requests.New = newRequest
	if l.path != "" {
		var err error
		if c.log, c.fid, err = openLog(l.path); err != nil {
			return nil, err
		}
		if err := syncDir(l.path); err != nil {
			c.log.Close()
			return nil, err
		}
	}
	go c.run()
	return c, nil
}

// submit queues entries and waits until they are committed, failed, or — if
// ctx ends before the committer takes them — abandoned unwritten.
func (c *committer) submit(ctx context.Context, entries []encoded) (uint64, error) {
	r := c.requests.Get().(*request)
	r.entries, r.first, r.err = append(r.entries[:0], entries...), 0, nil
	r.state.Store(pending)
	c.mu.Lock()
	c.queue = append(c.queue, r)
	c.mu.Unlock()
	select {
	case c.wake <- struct{}{}:
	default: // a wake-up is already due
	}
	select {
	case <-r.done:
	case <-ctx.Done():
		if r.state.CompareAndSwap(pending, canceled) {
			// Not written, and never will be. The committer may still hold
			// r in a batch it is about to look at, so r is not reused.
			return 0, ctx.Err()
		}
		<-r.done // taken: its commit is under way
	}
	first, err := r.first, r.err
	clear(r.entries)
	r.entries, r.err = r.entries[:0], nil
	c.requests.Put(r)
	return first, err
}

// stop commits whatever is still queued and ends the committer. The ledger
// calls it from Close, when no append is running.
func (c *committer) stop() {
	close(c.quit)
	<-c.stopped
	if c.log != nil {
		c.log.Close()
	}
}

func (c *committer) run() {
	defer close(c.stopped)
	var (
		batch  []*request
		timer  = time.NewTimer(time.Hour)
		want   int           // queue length to linger for; see gather
		took   time.Duration // what the last commit took
		linger = true
	)
	timer.Stop()
	for {
		select {
		case <-c.wake:
		case <-c.quit:
			c.mu.Lock()
			batch, c.queue = c.queue, nil
			c.mu.Unlock()
			c.commit(batch)
			return
		}
		if linger {
			linger = c.gather(want, min(took, maxLinger), timer)
		} else {
			linger = true
		}
		c.mu.Lock()
		batch, c.queue = c.queue, batch[:0]
		c.mu.Unlock()
		start := time.Now()
		woke := c.commit(batch)
		took = time.Since(start)
		clear(batch)
		// The appenders just acknowledged are likely to append again at
		// once (a busy agent server): linger for most of them, up to one
		// commit's time, so that they join the next group instead of
		// forming the one after it.
		c.mu.Lock()
		want = len(c.queue) + woke - woke/8
		c.mu.Unlock()
	}
}

// maxLinger caps how long the committer waits for a group to fill.
const maxLinger = 2 * time.Millisecond

// gather waits until the queue holds want requests, for at most d, and
// reports whether it did not time out. Without it, appenders under steady
// load split into two groups that take turns, each half as large as it
// could be: one syncs while the other queues. After a time-out the
// committer does not linger for one round.
func (c *committer) gather(want int, d time.Duration, timer *time.Timer) bool {
	full := func() bool {
		c.mu.Lock()
		defer c.mu.Unlock()
		return len(c.queue) >= want
	}
	if d <= 0 || full() {
		return true
	}
	// Since Go 1.23 a stopped or reset timer delivers no stale value, so
	// the timer needs no draining.
	timer.Reset(d)
	defer timer.Stop()
	for !full() {
		select {
		case <-c.wake:
		case <-c.quit:
			return true
		case <-timer.C:
			return false
		}
	}
	return true
}

// commit takes the pending requests of batch and commits them, as few
// transactions as will hold them, in order.
func (c *committer) commit(batch []*request) int {
	reqs := batch[:0]
	for _, r := range batch {
		if r.state.CompareAndSwap(pending, taken) {
			reqs = append(reqs, r)
		}
	}
	n := len(reqs)
	for len(reqs) > 0 {
		reqs = reqs[c.commitSome(reqs):]
	}
	return n
}

// commitSome commits as many requests from the front of reqs as fit in one
// transaction, at least one, acknowledges them and returns how many.
func (c *committer) commitSome(reqs []*request) int {
	l := c.l
	ack := func(rs []*request, err error) int {
		for _, r := range rs {
			r.err = err
			r.done <- struct{}{}
		}
		return len(rs)
	}
	if c.testHook != nil {
		c.testHook(reqs)
	}
	if c.failed != nil {
		return ack(reqs, c.failed)
	}
	// PutTrace and Reindex write too: hold them off from the commit to the
	// end of its sync, so that no write of theirs can switch badger to a
	// new memtable log in between (see sync).
	l.wmu.Lock()
	defer l.wmu.Unlock()
	batches := make([][]encoded, len(reqs))
	for i, r := range reqs {
		batches[i] = r.entries
	}
	// Requests are at most one transaction each (append splits larger
	// batches): take as many as fit in one.
	k := fits(batches)
	n := 0
	for _, es := range batches[:k] {
		n += len(es)
	}
	if err := l.lease.reserve(l.next + uint64(n) - 1); err != nil {
		return ack(reqs[:k], err)
	}
	txn := l.db.NewTransaction(true)
	if err := l.write(txn, batches[:k], l.next); err != nil {
		// Nothing is written, no number used.
		txn.Discard()
		return ack(reqs[:k], translate(err))
	}
	seq := l.next
	for _, r := range reqs[:k] {
		r.first = seq
		seq += uint64(len(r.entries))
	}
	// Advance even if the commit fails: a failed commit may have reached the
	// log, and a sequence number must never be given twice.
	l.next = seq
	err := translate(txn.Commit())
	txn.Discard()
	if err == nil {
		l.apply(batches[:k], seq-uint64(n))
		if err = c.sync(); err != nil {
			c.failed = err
		}
	}
	ack(reqs[:k], err)
	if err == nil && l.checkpointDue() {
		// After the sync, which it need not wait for: Open counts the
		// entries after the last checkpoint that made it to disk. One that
		// fails is tried again after the next commit.
		l.checkpoint()
	}
	return k
}

// sync makes the last commit durable. badger runs without SyncWrites under
// the committer, which syncs on its own terms: one fdatasync of the active
// memtable's log file. badger writes every entry there (fill keeps entries
// below the value threshold, so none goes to the value log), and its own
// SyncWrites would sync the value log too: a second flush, for nothing.
//
// This is sound because the committer is the only writer: badger switches
// to a new memtable only when a commit begins, before writing it, so
// after a commit its entries are all in the newest memtable, whose log is
// the .mem file with the highest number, and every earlier commit has
// already been synced. A new log file's directory entry is synced too.
func (c *committer) sync() error {
	if c.log == nil {
		return nil // in memory
	}
	rotated := false
	for {
		f, err := os.OpenFile(memFile(c.dir, c.fid+1), os.O_RDWR, 0)
		if errors.Is(err, fs.ErrNotExist) {
			break
		} else if err != nil {
			return err
		}
		if fi, err := f.Stat(); err != nil || fi.Size() == 0 { // prepared ahead (walPrealloc), not yet badger's
			f.Close()
			if err != nil {
				return err
			}
			break
		}
		c.log.Close()
		c.log, c.fid, rotated = f, c.fid+1, true
	}
	if rotated {
		if err := syncDir(c.dir); err != nil {
			return err
		}
	}
	return datasync(c.log)
}

// memFids returns the fids of the memtable logs in dir, in increasing
// order (ReadDir sorts by name, and badger pads the fids with zeros).
func memFids(dir string) ([]int, error) {
	ents, err := os.ReadDir(dir)
	if err != nil {
		return nil, err
	}
	var fids []int
	for _, e := range ents {
		if name, ok := strings.CutSuffix(e.Name(), ".mem"); ok {
			if fid, err := strconv.Atoi(name); err == nil {
				fids = append(fids, fid)
			}
		}
	}
	return fids, nil
}

// memFile is the name badger gives the log of memtable fid.
func memFile(dir string, fid int) string {
	return filepath.Join(dir, fmt.Sprintf("%05d.mem", fid))
}

// openLog opens the newest memtable log in dir: the one badger writes to
// after Open (an empty one is prepared ahead for the next memtable, see
// walPrealloc, and is not badger's yet).
func openLog(dir string) (*os.File, int, error) {
	fids, err := memFids(dir)
	if err != nil {
		return nil, 0, err
	}
	fid := -1
	for _, n := range fids {
		if fi, err := os.Stat(memFile(dir, n)); err == nil && fi.Size() > 0 {
			fid = n
		}
	}
	if fid < 0 {
		return nil, 0, fmt.Errorf("no memtable log in %s", dir)
	}
	f, err := os.OpenFile(memFile(dir, fid), os.O_RDWR, 0)
	return f, fid, err
}
