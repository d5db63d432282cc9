//go:build unix

package badgerstore

import (
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"

	"github.com/agentguard/agentguard/trace"
)

// modes returns every path under dir whose mode is not 0700 for a
// directory or 0600 for a regular file.
func badModes(t *testing.T, dir string) []string {
	t.Helper()
	var bad []string
	err := filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		fi, err := d.Info()
		if err != nil {
			return err
		}
		want := fs.FileMode(0o600)
		if d.IsDir() {
			want = 0o700
		}
		if fi.Mode().Perm() != want {
			bad = append(bad, strings.TrimPrefix(p, dir)+" "+fi.Mode().String())
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return bad
}

func TestFileModes(t *testing.T) {
	// With no umask, badger's files would come out 0666.
	old := syscall.Umask(0)
	defer syscall.Umask(old)

	root := t.TempDir()
	dir := filepath.Join(root, "ledger")
	if err := os.Mkdir(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	// A file the ledger did not write keeps Open out: it would change modes
	// in a directory shared with something else.
	stray := filepath.Join(dir, "notes.txt")
	if err := os.WriteFile(stray, []byte("x"), 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := Open(dir, Options{}); err == nil || !strings.Contains(err.Error(), "notes.txt") {
		t.Errorf("Open of a directory holding notes.txt: %v, want an error naming it", err)
	}
	if fi, _ := os.Stat(dir); fi.Mode().Perm() != 0o755 {
		t.Errorf("refused Open changed the directory's mode to %v", fi.Mode())
	}
	os.Remove(stray)
	// A ledger file of the wrong mode, as an older version might have left.
	if err := os.WriteFile(filepath.Join(dir, leaseFile), []byte("0\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	l, err := Open(dir, Options{Durable: true})
	if err != nil {
		t.Fatal(err)
	}
	if bad := badModes(t, dir); len(bad) > 0 {
		t.Errorf("after Open: %v", bad)
	}
	// Enough to switch memtables and write tables while open.
	vs := make([]trace.Violation, 100)
	for i := range vs {
		vs[i] = violation("r", "t")
		vs[i].Evidence = strings.Repeat("e", 4000)
	}
	for i := 0; i < 30; i++ {
		if _, err := l.AppendBatch(ctx, vs); err != nil {
			t.Fatal(err)
		}
	}
	t.Logf("while open, created since Open: %v", badModes(t, dir))
	// While open, files badger has created since Open may have its modes,
	// but the directory keeps everyone else out.
	if fi, err := os.Stat(dir); err != nil || fi.Mode().Perm() != 0o700 {
		t.Errorf("dir while open: %v, %v", fi.Mode(), err)
	}
	if fi, err := os.Stat(filepath.Join(dir, leaseFile)); err != nil || fi.Mode().Perm() != 0o600 {
		t.Errorf("%s while open: %v, %v", leaseFile, fi.Mode(), err)
	}
	snap := filepath.Join(root, "snap")
	if err := l.Snapshot(ctx, snap); err != nil {
		t.Fatal(err)
	}
	if err := l.Close(); err != nil {
		t.Fatal(err)
	}
	for _, d := range []string{dir, snap} {
		if bad := badModes(t, d); len(bad) > 0 {
			t.Errorf("after Close, in %s: %v", filepath.Base(d), bad)
		}
		ents, _ := os.ReadDir(d)
		if len(ents) < 3 {
			t.Errorf("%s holds only %d files", d, len(ents))
		}
	}
	// A read-only open changes nothing.
	manifest := filepath.Join(dir, "MANIFEST")
	if err := os.Chmod(manifest, 0o644); err != nil {
		t.Fatal(err)
	}
	r, err := Open(dir, Options{ReadOnly: true})
	if err != nil {
		t.Fatal(err)
	}
	r.Close()
	if fi, _ := os.Stat(manifest); fi.Mode().Perm() != 0o644 {
		t.Errorf("read-only open changed a mode to %v", fi.Mode())
	}
}
