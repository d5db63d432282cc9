package ledger

import (
	"errors"
	"fmt"
	"strings"

	"github.com/dgraph-io/badger/v4"
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
)

// Error is the error type of package ledger: every error its functions and
// methods return is an *Error. Err is ErrLocked, ErrCorrupt, ErrClosed or
// ErrReadOnly, the context's error, the error of the io.Writer given to
// Export, an error from the file system (an *fs.PathError), or an error
// describing the failure in words — never one of badger's types.
type Error struct {
	Op   string // "open", "append", "query", "lessons", "export", "snapshot", "close"
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

// errUnclean is what opening, read-only, a directory whose last writer
// did not Close returns: recovering it means writing to it.
var errUnclean = errors.New("dir was not closed cleanly: open it read-write once to recover it, or read a Snapshot")

// storeError carries the text of a storage-engine error without its type, so
// that callers never come to depend on badger's errors.
type storeError struct{ msg string }

func (e *storeError) Error() string { return e.msg }

// corruptError is a corruption report from the storage engine: it matches
// ErrCorrupt and keeps the engine's words for the human reading the log.
type corruptError struct{ msg string }

func (e *corruptError) Error() string        { return ErrCorrupt.Error() + ": " + e.msg }
func (e *corruptError) Is(target error) bool { return target == ErrCorrupt }

// corruptionHints are fragments of badger's messages that mean "the files
// are damaged". badger flattens its errors to strings (y.Wrap without debug
// mode), so the text is all there is to go on.
var corruptionHints = []string{
	"bad magic",
	"checksum",
	"corrupt",
	"truncat",
	"unexpected eof",
	"invalid datakey",         // garbage where a value log header should be
	"encryption key mismatch", // garbage in KEYREGISTRY
	"unable to replay",
}

// translate turns an error from badger into one of ours. It never returns a
// badger type.
func translate(err error) error {
	switch {
	case err == nil:
		return nil
	case errors.Is(err, badger.ErrDBClosed), errors.Is(err, badger.ErrBlockedWrites):
		return ErrClosed
	}
	msg := strings.TrimSpace(err.Error())
	if strings.Contains(msg, "Cannot acquire directory lock") {
		return ErrLocked
	}
	if strings.Contains(msg, "Log truncate required") {
		// Only a read-only open reports this: the memtable logs of a process
		// that died hold a tail that a read-write open would cut off.
		return errUnclean
	}
	lower := strings.ToLower(msg)
	for _, h := range corruptionHints {
		if strings.Contains(lower, h) {
			return &corruptError{msg}
		}
	}
	return &storeError{msg}
}
