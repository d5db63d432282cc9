package badgerstore

import (
	"fmt"
	"sync"
	"time"

	"github.com/agentguard/agentguard/ledger"
)

// DefaultDiskReserve is the free space, in bytes, that a ledger keeps on
// its disk when Options.DiskReserve is zero: room for what badger writes
// through memory maps without asking — a memtable log, a flushed table
// and the compactions under way — so that none of those writes can fault
// when the ledger itself fills the disk, and so that, when another
// process fills it, appends stop early enough for most compactions to
// finish first (see "Full disk" in the package documentation).
const DefaultDiskReserve = 64 << 20

// MinDiskReserve is the least Options.DiskReserve Open accepts: two
// memtable logs, what one flush writes at most.
const MinDiskReserve = 2 * walLog

// spaceCheckEvery bounds how long the ledger trusts a free-space reading.
const spaceCheckEvery = 50 * time.Millisecond

// space is the ledger's free-space guard. badger writes its memtable logs
// and tables through memory maps of sparse files: on a full disk, a write
// there faults (SIGBUS) and takes the process down, and no error is ever
// returned. So the ledger refuses to write — ledger.ErrDiskFull — while the
// disk has less than the reserve free, reading the free space at most
// every spaceCheckEvery or once it may have written a tenth of the margin
// it last saw.
type space struct {
	dir     string
	reserve uint64
	free    func(dir string) (uint64, error) // diskFree unless a test sets it
	wal     *walPrealloc                     // badger's memtable logs, allocated ahead; nil before Open has opened badger

	mu      sync.Mutex
	budget  int64 // bytes that may still be written before the next reading
	checked time.Time
}

// diskFullError is ledger.ErrDiskFull with the figures.
type diskFullError struct{ free, reserve uint64 }

func (e *diskFullError) Error() string {
	return fmt.Sprintf("%v: %d bytes free, the ledger keeps %d in reserve", ledger.ErrDiskFull, e.free, e.reserve)
}
func (e *diskFullError) Is(target error) bool { return target == ledger.ErrDiskFull }

// check returns ledger.ErrDiskFull, wrapped, when writing n more bytes may
// eat into the reserve. A nil space (in memory, read-only, or the reserve
// turned off) never fails.
func (s *space) check(n int) error {
	if s == nil {
		return nil
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	now := time.Now()
	s.budget -= int64(n)
	if s.budget > 0 && now.Sub(s.checked) < spaceCheckEvery {
		return nil
	}
	if err := s.wal.check(); err != nil {
		s.budget = 0
		return err
	}
	free, err := s.free(s.dir)
	if err != nil {
		return err
	}
	s.checked = now
	// The next memtable log is allocated already: that part of the
	// reserve is held, not free.
	free += s.wal.spare()
	if free < s.reserve+uint64(n) {
		s.budget = 0
		return &diskFullError{free, s.reserve}
	}
	// Read again before badger can fill a memtable: its next log must be
	// allocated before it takes it.
	s.budget = min(int64(free-s.reserve)/10, memTableSize/2)
	return nil
}

// checkSpace is check for one small write.
func (l *Store) checkSpace() error { return l.space.check(4 << 10) }

// walLog is the size of one of badger's memtable logs: it truncates each
// new one to twice the memtable size and writes it through a memory map.
const walLog = 2 * memTableSize

// close removes the memtable log prepared ahead, once badger is closed.
func (s *space) close() {
	if s != nil {
		s.wal.close()
	}
}
