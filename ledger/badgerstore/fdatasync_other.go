//go:build !linux

package badgerstore

import "os"

// datasync flushes f to stable storage.
func datasync(f *os.File) error { return f.Sync() }
