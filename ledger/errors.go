package ledger

import (
	"errors"
	"fmt"
)

// Sentinel errors, matched with errors.Is. The ledger returns them wrapped
// in an *Error that names the operation and the directory.
var (
	// ErrLocked means another process, or another open Ledger in this
	// process, holds the directory. One process per directory; a read-only
	// open gets it too (read a Snapshot instead).
	ErrLocked = errors.New("dir is locked by another process")
	// ErrCorrupt means the stored data could not be read back: a damaged
	// MANIFEST, value log or table file, or an entry that is not valid JSON.
	ErrCorrupt = errors.New("data is corrupt")
	// ErrClosed means the Ledger was used after Close.
	ErrClosed = errors.New("ledger is closed")
	// ErrReadOnly means an append to a Ledger opened with Options.ReadOnly.
	ErrReadOnly = errors.New("ledger is read-only")
	// ErrNotFound means a trace that is not stored (TraceStore.Trace).
	ErrNotFound = errors.New("not found")
	// ErrDiskFull means the disk holding the ledger has less free space
	// than the ledger's reserve: nothing was written. Appends succeed
	// again once space is freed.
	ErrDiskFull = errors.New("disk is full")
)

// Error is the error type of package ledger: every error its functions and
// methods return is an *Error. Err is ErrLocked, ErrCorrupt, ErrClosed,
// ErrReadOnly, ErrNotFound or ErrDiskFull, the context's error, the error of the io.Writer given to
// Export, an error from the file system (an *fs.PathError), or an error
// describing the failure in words — never one of badger's types.
type Error struct {
	Op   string // "open", "append", "query", "lessons", "export", "snapshot", "close", "put trace", "trace", "reindex", "open trace file"
	Path string // the ledger directory; empty for an in-memory ledger
	Err  error
}

func (e *Error) Error() string {
	if e.Path != "" {
		return fmt.Sprintf("ledger: %s %q: %v", e.Op, e.Path, e.Err)
	}
	return fmt.Sprintf("ledger: %s: %v", e.Op, e.Err)
}

func (e *Error) Unwrap() error { return e.Err }
