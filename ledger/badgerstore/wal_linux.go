package badgerstore

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"syscall"

	"github.com/agentguard/agentguard/ledger"
)

// A walPrealloc keeps the disk space of badger's memtable logs allocated
// before badger writes them. badger creates each log as a sparse file and
// writes it through a memory map: when another process has filled the
// disk, the first write to a page without a block faults (SIGBUS) and the
// process dies. So the current logs get their blocks at Open (fallocate),
// and the log of the next memtable is created ahead, empty, with its
// blocks allocated past its end (FALLOC_FL_KEEP_SIZE): badger, finding it
// empty, takes it as new and extends it over blocks that are already
// there. When there are no blocks to allocate, the ledger learns it here,
// as ErrDiskFull, before badger could fault.
type walPrealloc struct {
	dir   string
	next  int  // the fid of the log prepared for the next memtable
	ready bool // that log is prepared, and badger has not taken it yet
}

// cleanWAL removes the logs prepared ahead that badger never took (empty
// files, which badger would read as a log with no header), before badger
// opens dir.
func cleanWAL(dir string) error {
	fids, err := memFids(dir)
	for _, fid := range fids {
		p := memFile(dir, fid)
		if fi, err := os.Stat(p); err == nil && fi.Size() == 0 {
			if err := os.Remove(p); err != nil {
				return err
			}
		}
	}
	return err
}

// openWAL allocates the logs badger opened in dir and prepares the next.
func openWAL(dir string) (*walPrealloc, error) {
	fids, err := memFids(dir)
	if err != nil {
		return nil, err
	}
	w := &walPrealloc{dir: dir}
	for _, fid := range fids {
		if err := allocate(memFile(dir, fid)); err != nil {
			return nil, err
		}
		w.next = fid + 1
	}
	return w, w.prepare()
}

// check prepares the next log once badger has taken the one prepared.
func (w *walPrealloc) check() error {
	if w == nil {
		return nil
	}
	fi, err := os.Stat(memFile(w.dir, w.next))
	if err != nil || fi.Size() == 0 {
		return nil // still waiting for badger, or badger went past it (it reports that itself)
	}
	w.next, w.ready = w.next+1, false
	return w.prepare()
}

// spare is the space allocated ahead and not yet written: the log
// prepared for the next memtable.
func (w *walPrealloc) spare() uint64 {
	if w == nil || !w.ready {
		return 0
	}
	return walLog
}

// close removes the log prepared ahead, once badger is closed: the
// directory is then badger's own again.
func (w *walPrealloc) close() {
	if w == nil {
		return
	}
	p := memFile(w.dir, w.next)
	if fi, err := os.Stat(p); err == nil && fi.Size() == 0 {
		os.Remove(p)
	}
}

// prepare creates the log of fid w.next, empty, with its blocks allocated
// past its end.
func (w *walPrealloc) prepare() error {
	err := create(memFile(w.dir, w.next), os.O_EXCL, 1 /* FALLOC_FL_KEEP_SIZE */, walLog)
	if errors.Is(err, os.ErrExist) {
		return nil
	}
	w.ready = err == nil
	return err
}

// create creates the file at p (flag adds to O_CREATE|O_RDWR) and
// allocates n bytes of blocks for it with fallocate's mode; it removes the
// file when that fails.
func create(p string, flag int, mode uint32, n int64) error {
	f, err := os.OpenFile(p, os.O_CREATE|os.O_RDWR|flag, 0o600)
	if err != nil {
		return err
	}
	err = syscall.Fallocate(int(f.Fd()), mode, 0, n)
	f.Close()
	if err != nil {
		os.Remove(p)
		return allocError(p, err)
	}
	return nil
}

// allocate gives the file at p blocks for its whole size, filling only the
// holes.
func allocate(p string) error {
	f, err := os.OpenFile(p, os.O_RDWR, 0)
	if err != nil {
		return err
	}
	defer f.Close()
	fi, err := f.Stat()
	if err != nil || fi.Size() == 0 {
		return err
	}
	return allocError(p, syscall.Fallocate(int(f.Fd()), 0, 0, fi.Size()))
}

// allocError is fallocate's err on file p: ErrDiskFull when there was no
// space to allocate; none on a file system without fallocate (the reserve
// still guards it).
func allocError(p string, err error) error {
	switch {
	case err == nil, errors.Is(err, syscall.EOPNOTSUPP), errors.Is(err, syscall.ENOSYS):
		return nil
	case errors.Is(err, syscall.ENOSPC):
		return fmt.Errorf("%w: no space to allocate %s", ledger.ErrDiskFull, filepath.Base(p))
	}
	return fmt.Errorf("allocating %s: %w", filepath.Base(p), err)
}

// ballastFile is the file, in the ledger's directory, that holds space for
// badger's tables (see space.watch).
const ballastFile = "BALLAST"

// holdBallast creates the ballast file of n bytes, its blocks allocated,
// unless there is no room for it.
func holdBallast(dir string, n int64) error {
	return create(filepath.Join(dir, ballastFile), 0, 0, n)
}

// releaseBallast gives the ballast's space back to the disk.
func releaseBallast(dir string) error {
	err := os.Remove(filepath.Join(dir, ballastFile))
	if errors.Is(err, os.ErrNotExist) {
		return nil
	}
	return err
}
