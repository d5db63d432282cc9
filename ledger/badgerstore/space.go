package badgerstore

import (
	"fmt"
	"math"
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

	stop, done chan struct{} // the watcher's (see watch)
	ballast    bool          // the ballast is on disk
}

// held is the space the ledger holds for badger, allocated and not yet
// written: the next memtable log and the ballast. It counts toward the
// reserve. s.mu is held.
func (s *space) held() uint64 {
	n := s.wal.spare()
	if s.ballast {
		n += ballastSize
	}
	return n
}

// saturatingAdd is a+b, or the largest uint64 when that overflows (diskFree
// reads the largest where it cannot measure).
func saturatingAdd(a, b uint64) uint64 {
	if a > math.MaxUint64-b {
		return math.MaxUint64
	}
	return a + b
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
	free = saturatingAdd(free, s.held()) // that part of the reserve is the ledger's already
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

// watchEvery is how often the watcher reads the disk's free space.
const watchEvery = 2 * time.Millisecond

// ballastSize is the space the ledger holds in its ballast file for the
// tables badger is writing when another process takes the rest of the
// disk; ballastRelease is the free space below which the watcher gives it
// back.
const ballastSize, ballastRelease = 16 << 20, 1 << 20

// watch reads the free space every watchEvery, between appends too.
// When there is less than the reserve, the next append is refused
// (ErrDiskFull) rather than at the ledger's next check, so that badger
// starts no flush, nor the compactions a flush brings, while another
// process fills the disk. And the watcher holds a ballast file of
// ballastSize while the disk has room, which it gives back when less than
// ballastRelease is free: badger writes its tables through memory maps,
// and a table being written when the last byte goes faults; the ballast's
// space lets what badger has begun finish. It takes the ballast again
// once the reserve and the ballast are free. It runs until close.
func (s *space) watch() {
	s.stop, s.done = make(chan struct{}), make(chan struct{})
	s.mu.Lock()
	s.ballast = holdBallast(s.dir, ballastSize) == nil
	s.mu.Unlock()
	go func() {
		defer close(s.done)
		t := time.NewTicker(watchEvery)
		defer t.Stop()
		for {
			select {
			case <-s.stop:
				return
			case <-t.C:
			}
			if free, err := s.free(s.dir); err == nil {
				s.mu.Lock()
				if saturatingAdd(free, s.held()) < s.reserve {
					s.budget = 0 // the next append reads the disk again, and is refused
				}
				switch {
				case s.ballast && free < ballastRelease:
					if releaseBallast(s.dir) == nil {
						s.ballast = false
					}
				case !s.ballast && free >= s.reserve+ballastSize:
					s.ballast = holdBallast(s.dir, ballastSize) == nil
				}
				s.mu.Unlock()
			}
		}
	}()
}

// close stops the watcher and removes the memtable log prepared ahead,
// once badger is closed.
func (s *space) close() {
	if s == nil {
		return
	}
	if s.stop != nil {
		close(s.stop)
		<-s.done
		releaseBallast(s.dir)
	}
	s.wal.close()
}
