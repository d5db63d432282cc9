//go:build !linux

package badgerstore

import "errors"

// walPrealloc preallocates badger's memtable logs on Linux (see
// wal_linux.go); elsewhere only the reserve guards them.
type walPrealloc struct{}

func cleanWAL(string) error                { return nil }
func openWAL(string) (*walPrealloc, error) { return nil, nil }
func (w *walPrealloc) check() error        { return nil }

func (w *walPrealloc) spare() uint64 { return 0 }
func (w *walPrealloc) close()        {}

const ballastFile = "BALLAST"

// holdBallast holds no ballast here: the watcher counts none.
func holdBallast(string, int64) error { return errors.ErrUnsupported }
func releaseBallast(string) error     { return nil }
