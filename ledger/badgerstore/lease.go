package badgerstore

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"sync"
)

// Sequence numbers are reserved ahead, in a file of their own, so that no
// number is ever given twice even if the host dies.
//
// Without the reservation the next number would be one past the largest
// key stored, and an entry that a reader had already seen — committed to
// badger's memtable but not yet synced, or acknowledged in the default mode
// — could vanish in a power loss and its number go to a different entry
// after the restart. Instead, before handing out a number the ledger makes
// sure a synced file, LEDGER-SEQ, records a number at least as large; Open
// continues after the larger of that and the largest key. Reservations
// come in blocks of leaseBlock and are renewed in the background when half
// used, so an append waits for the file only if it outruns a renewal. Close
// gives back the unused part, so a clean restart leaves no gap; a crash
// leaves one of at most leaseBlock numbers.

// leaseFile is the name of the reservation file in the ledger directory.
const leaseFile = "LEDGER-SEQ"

// leaseBlock is how many sequence numbers one renewal reserves.
const leaseBlock = 1 << 16

type lease struct {
	path string

	mu       sync.Mutex
	renewed  sync.Cond // signalled when a renewal ends; uses mu
	reserved uint64    // numbers up to this one may be handed out
	renewing bool      // a renewal is running
	err      error     // the last renewal's error, until reported
}

// openLease reads the reservation in dir and reserves a block after the
// larger of it and last, the largest number stored. It returns the lease and
// that larger number, after which numbering continues.
func openLease(dir string, last uint64) (*lease, uint64, error) {
	s := &lease{path: filepath.Join(dir, leaseFile)}
	s.renewed.L = &s.mu
	b, err := os.ReadFile(s.path)
	switch {
	case errors.Is(err, fs.ErrNotExist):
	case err != nil:
		return nil, 0, err
	default:
		n, perr := strconv.ParseUint(strings.TrimSuffix(string(b), "\n"), 10, 64)
		if perr != nil {
			return nil, 0, &corruptError{fmt.Sprintf("%s: %q is not a sequence number", leaseFile, b)}
		}
		last = max(last, n)
	}
	if err := writeLease(s.path, last+leaseBlock); err != nil {
		return nil, 0, err
	}
	s.reserved = last + leaseBlock
	return s, last, nil
}

// reserve returns once every number up to last is reserved. It starts a
// renewal in the background when less than half a block is left, and waits
// for one only when last is beyond the reservation. A nil lease reserves
// everything.
func (s *lease) reserve(last uint64) error {
	if s == nil {
		return nil
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if last+leaseBlock/2 > s.reserved && !s.renewing {
		s.renew(last + leaseBlock)
	}
	for last > s.reserved {
		if !s.renewing {
			if err := s.err; err != nil {
				s.err = nil
				return err
			}
			s.renew(last + leaseBlock)
		}
		s.renewed.Wait()
	}
	return nil
}

// renew writes a reservation up to n in the background. s.mu is held.
func (s *lease) renew(n uint64) {
	s.renewing = true
	go func() {
		err := writeLease(s.path, n)
		s.mu.Lock()
		defer s.mu.Unlock()
		s.renewing = false
		if err != nil {
			s.err = err
		} else if n > s.reserved {
			s.reserved = n
		}
		s.renewed.Broadcast()
	}()
}

// release waits for a running renewal and records last, the largest number
// used, as the reservation. Nothing may be reserved after it.
func (s *lease) release(last uint64) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	for s.renewing {
		s.renewed.Wait()
	}
	return writeLease(s.path, last)
}

// writeLease replaces the file at path, atomically and durably, with n.
func writeLease(path string, n uint64) error {
	tmp := path + ".tmp"
	f, err := os.OpenFile(tmp, os.O_WRONLY|os.O_CREATE|os.O_TRUNC, 0o600)
	if err != nil {
		return err
	}
	_, err = f.WriteString(strconv.FormatUint(n, 10) + "\n")
	if err == nil {
		err = f.Sync()
	}
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err == nil {
		err = os.Rename(tmp, path)
	}
	if err != nil {
		os.Remove(tmp)
		return err
	}
	return syncDir(filepath.Dir(path))
}

// syncDir makes a rename in dir durable. Windows cannot sync a directory
// and does not need to.
func syncDir(dir string) error {
	if runtime.GOOS == "windows" {
		return nil
	}
	d, err := os.Open(dir)
	if err != nil {
		return err
	}
	err = d.Sync()
	if cerr := d.Close(); err == nil {
		err = cerr
	}
	return err
}
