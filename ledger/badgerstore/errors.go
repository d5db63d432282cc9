package badgerstore

import (
	"errors"
	"strings"

	"github.com/agentguard/agentguard/ledger"
	"github.com/dgraph-io/badger/v4"
)

// errUnclean is what opening, read-only, a directory whose last writer
// did not Close returns: recovering it means writing to it.
var errUnclean = errors.New("dir was not closed cleanly: open it read-write once to recover it, or read a Snapshot")

// storeError carries the text of a storage-engine error without its type, so
// that callers never come to depend on badger's errors.
type storeError struct{ msg string }

func (e *storeError) Error() string { return e.msg }

// corruptError is a corruption report from the storage engine: it matches
// ledger.ErrCorrupt and keeps the engine's words for the human reading the log.
type corruptError struct{ msg string }

func (e *corruptError) Error() string        { return ledger.ErrCorrupt.Error() + ": " + e.msg }
func (e *corruptError) Is(target error) bool { return target == ledger.ErrCorrupt }

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
		return ledger.ErrClosed
	}
	msg := strings.TrimSpace(err.Error())
	if strings.Contains(msg, "Cannot acquire directory lock") {
		return ledger.ErrLocked
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
