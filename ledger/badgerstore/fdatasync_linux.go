package badgerstore

import (
	"os"
	"syscall"
)

// datasync flushes the data of f, and only the metadata needed to read it
// back: what badger's msync does for its own logs.
func datasync(f *os.File) error {
	for {
		err := syscall.Fdatasync(int(f.Fd()))
		if err != syscall.EINTR {
			if err != nil {
				return &os.PathError{Op: "fdatasync", Path: f.Name(), Err: err}
			}
			return nil
		}
	}
}
