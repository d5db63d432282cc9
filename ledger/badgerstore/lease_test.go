package badgerstore

import (
	"errors"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/agentguard/agentguard/ledger"
	"github.com/dgraph-io/badger/v4"
)

func readLease(t *testing.T, dir string) string {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(dir, leaseFile))
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

func TestSeqReservation(t *testing.T) {
	dir := t.TempDir()
	l, err := Open(dir, Options{})
	if err != nil {
		t.Fatal(err)
	}
	// Open reserves a block ahead of the first number.
	if got := readLease(t, dir); got != "65536\n" {
		t.Errorf("reservation after Open = %q, want 65536", got)
	}
	for i := 0; i < 3; i++ {
		mustAppend(t, l, violation("r", "t"))
	}
	if err := l.Close(); err != nil {
		t.Fatal(err)
	}
	// Close gives back what was not used: no gap after a clean restart.
	if got := readLease(t, dir); got != "3\n" {
		t.Errorf("reservation after Close = %q, want 3", got)
	}

	tests := []struct {
		name    string
		lease   string // written before Open; "" leaves the file out
		wantSeq uint64
		wantErr error
	}{
		{"clean", "3\n", 4, nil},
		{"after a crash", "70000\n", 70001, nil},
		{"behind the entries", "1\n", 4, nil},
		{"missing", "", 4, nil},
		{"garbage", "x7\n", 0, ledger.ErrCorrupt},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			path := filepath.Join(dir, leaseFile)
			if tt.lease == "" {
				os.Remove(path)
			} else if err := os.WriteFile(path, []byte(tt.lease), 0o600); err != nil {
				t.Fatal(err)
			}
			l, err := Open(dir, Options{})
			if tt.wantErr != nil {
				if !errors.Is(err, tt.wantErr) {
					t.Fatalf("Open = %v, want %v", err, tt.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			seq := mustAppend(t, l, violation("r", "t"))
			l.Close()
			if seq != tt.wantSeq {
				t.Errorf("first seq = %d, want %d", seq, tt.wantSeq)
			}
			// Put the store back as it was: remove the entry just added.
			db, err := openDB(badgerOptions(dir, Options{}))
			if err != nil {
				t.Fatal(err)
			}
			db.Update(func(txn *badger.Txn) error { return txn.Delete(key(seq)) })
			db.Close()
			os.WriteFile(path, []byte("3\n"), 0o600)
		})
	}
}

func TestLeaseRenewal(t *testing.T) {
	dir := t.TempDir()
	s, last, err := openLease(dir, 10)
	if err != nil || last != 10 || s.reserved != 10+leaseBlock {
		t.Fatalf("openLease = %d, reserved %d, %v", last, s.reserved, err)
	}
	// Within the block, past half of it: no wait, a renewal in the background.
	if err := s.reserve(10 + leaseBlock/2 + 1); err != nil {
		t.Fatal(err)
	}
	waitRenewal := func() {
		s.mu.Lock()
		for s.renewing {
			s.renewed.Wait()
		}
		s.mu.Unlock()
	}
	waitRenewal()
	if want := uint64(10 + leaseBlock/2 + 1 + leaseBlock); s.reserved != want {
		t.Errorf("reserved after renewal = %d, want %d", s.reserved, want)
	}
	// Beyond the block: wait for a renewal covering it.
	far := s.reserved + 5*leaseBlock
	if err := s.reserve(far); err != nil || s.reserved < far {
		t.Errorf("reserve(%d) = %v, reserved %d", far, err, s.reserved)
	}
	waitRenewal()
	if got := readLease(t, dir); got == "" {
		t.Error("no reservation on disk")
	}

	// A renewal that cannot be written fails the reserve that needs it,
	// once, and is tried again by the next.
	s.path = filepath.Join(dir, "missing", leaseFile)
	if err := s.reserve(s.reserved + 1); err == nil {
		t.Error("reserve past a failed renewal succeeded")
	}
	s.path = filepath.Join(dir, leaseFile)
	done := make(chan error, 1)
	go func() { done <- s.reserve(s.reserved + 1) }()
	select {
	case err := <-done:
		if err != nil {
			t.Errorf("reserve after the disk came back: %v", err)
		}
	case <-time.After(10 * time.Second): // a bound on real file I/O, not a wait the test needs
		t.Fatal("reserve hangs")
	}
	waitRenewal()
	if err := s.release(42); err != nil {
		t.Fatal(err)
	}
	if got := readLease(t, dir); got != "42\n" {
		t.Errorf("after release: %q", got)
	}
	if _, err := os.Stat(filepath.Join(dir, leaseFile+".tmp")); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("temporary file left behind: %v", err)
	}
}
