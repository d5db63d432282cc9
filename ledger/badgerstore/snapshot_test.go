package badgerstore

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"sync"
	"testing"

	"github.com/agentguard/agentguard/ledger"
)

// needReadOnly skips a test that opens a ledger read-only where badger
// cannot.
func needReadOnly(t *testing.T) {
	if runtime.GOOS == "windows" || runtime.GOOS == "plan9" {
		t.Skip("badger has no read-only mode on " + runtime.GOOS)
	}
}

func TestSnapshotAndReadOnly(t *testing.T) {
	needReadOnly(t)
	for _, durable := range []bool{false, true} {
		t.Run(fmt.Sprintf("durable=%v", durable), func(t *testing.T) {
			dir := t.TempDir()
			l, err := Open(dir, Options{Durable: durable})
			if err != nil {
				t.Fatal(err)
			}
			defer l.Close()
			for i := 0; i < 300; i++ {
				mustAppend(t, l, violation(fmt.Sprint("rule", i%3), fmt.Sprint("t", i)))
			}
			// A reader cannot open the directory in use, even read-only.
			if _, err := Open(dir, Options{ReadOnly: true}); !errors.Is(err, ledger.ErrLocked) {
				t.Errorf("read-only open of a ledger in use: %v, want ledger.ErrLocked", err)
			}

			// Snapshot while appends go on: the copy is a gap-free prefix.
			snap := filepath.Join(t.TempDir(), "snap")
			var wg sync.WaitGroup
			wg.Add(1)
			go func() {
				defer wg.Done()
				for i := 0; i < 100; i++ {
					if _, err := l.Append(ctx, violation("late", "t")); err != nil {
						t.Error(err)
						return
					}
				}
			}()
			if err := l.Snapshot(ctx, snap); err != nil {
				t.Fatal(err)
			}
			wg.Wait()

			r, err := Open(snap, Options{ReadOnly: true})
			if err != nil {
				t.Fatal(err)
			}
			defer r.Close()
			es, err := r.Query(ctx, ledger.Query{})
			if err != nil {
				t.Fatal(err)
			}
			if len(es) < 300 || len(es) > 400 {
				t.Fatalf("snapshot holds %d entries, want 300 to 400", len(es))
			}
			for i, e := range es {
				if e.Seq != uint64(i+1) {
					t.Fatalf("snapshot entry %d has seq %d: not a prefix", i, e.Seq)
				}
			}
			lessons, err := r.Lessons(ctx, ledger.Query{Rule: "rule1"})
			if err != nil || len(lessons) != 1 || lessons[0].Count != 100 {
				t.Errorf("lessons from the snapshot: %+v, %v", lessons, err)
			}
			var out strings.Builder
			if n, err := r.Export(ctx, &out, ledger.Query{Limit: 2}); err != nil || n != 2 {
				t.Errorf("export from the snapshot: %d, %v", n, err)
			}
			if _, err := r.Append(ctx, violation("r", "t")); !errors.Is(err, ledger.ErrReadOnly) {
				t.Errorf("append to a read-only ledger: %v, want ledger.ErrReadOnly", err)
			}
			if _, err := r.AppendBatch(ctx, nil); err != nil {
				t.Errorf("empty batch on a read-only ledger: %v", err)
			}

			// The original keeps going.
			if es, err := l.Query(ctx, ledger.Query{}); err != nil || len(es) != 400 {
				t.Errorf("original holds %d entries, %v; want 400", len(es), err)
			}
		})
	}
}

func TestSnapshotOpenedReadWrite(t *testing.T) {
	l := openMem(t, Options{})
	for i := 0; i < 10; i++ {
		mustAppend(t, l, violation("r", "t"))
	}
	snap := t.TempDir()
	if err := l.Snapshot(ctx, snap); err != nil {
		t.Fatal(err)
	}
	c, err := Open(snap, Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	if seq := mustAppend(t, c, violation("r", "t")); seq != 11 {
		t.Errorf("first append to a copy of 10 entries = %d, want 11", seq)
	}
}

func TestSnapshotErrors(t *testing.T) {
	dir := t.TempDir()
	l, err := Open(dir, Options{})
	if err != nil {
		t.Fatal(err)
	}
	mustAppend(t, l, violation("r", "t"))

	full := t.TempDir()
	os.WriteFile(filepath.Join(full, "x"), nil, 0o600)
	file := filepath.Join(t.TempDir(), "file")
	os.WriteFile(file, nil, 0o600)
	canceled, cancel := context.WithCancel(ctx)
	cancel()

	tests := []struct {
		name string
		ctx  context.Context
		dir  string
		want string
	}{
		{"empty name", ctx, "", "empty directory name"},
		{"own dir", ctx, dir, "its own directory"},
		{"not empty", ctx, full, "not empty"},
		{"under a file", ctx, filepath.Join(file, "sub"), "not a directory"},
		{"canceled", canceled, t.TempDir(), "context canceled"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			err := l.Snapshot(tt.ctx, tt.dir)
			var le *ledger.Error
			if !errors.As(err, &le) || le.Op != "snapshot" || !strings.Contains(err.Error(), tt.want) {
				t.Errorf("err = %v, want an *ledger.Error from snapshot saying %q", err, tt.want)
			}
		})
	}
	if ents, _ := os.ReadDir(full); len(ents) != 1 {
		t.Errorf("a refused snapshot changed the directory: %d entries", len(ents))
	}
	l.Close()
	if err := l.Snapshot(ctx, t.TempDir()); !errors.Is(err, ledger.ErrClosed) {
		t.Errorf("snapshot after Close: %v, want ledger.ErrClosed", err)
	}
}

func TestOpenReadOnlyErrors(t *testing.T) {
	if _, err := Open("", Options{InMemory: true, ReadOnly: true}); err == nil {
		t.Error("in-memory read-only open succeeded")
	}
	missing := filepath.Join(t.TempDir(), "missing")
	if _, err := Open(missing, Options{ReadOnly: true}); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("read-only open of a missing dir: %v, want ErrNotExist", err)
	}
	if _, err := os.Stat(missing); !errors.Is(err, os.ErrNotExist) {
		t.Error("read-only open created the directory")
	}
}
