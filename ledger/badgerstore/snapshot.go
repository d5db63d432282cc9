package badgerstore

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"

	"github.com/agentguard/agentguard/ledger"
	"github.com/dgraph-io/badger/v4"
)

// Snapshot copies the ledger, as it stands when Snapshot starts, into dir,
// a new or empty directory, as a closed ledger of its own. Open it with
// Options.ReadOnly to report on it while the agent keeps appending here, or
// read-write to work on a copy (its numbering continues after its largest
// entry). The copy holds exactly the entries committed before Snapshot
// started: appends may continue meanwhile and are not in it.
//
// This is how a second process reads a ledger in use: badger lets only the
// process holding a directory open it, even read-only, so the process that
// holds it writes the copy — on a schedule, on a signal, or when a report
// is asked for. dir gets the same modes as a ledger directory (0700, files
// 0600). It takes about as long as reading the entries once. If Snapshot
// fails, it removes what it wrote to dir.
func (l *Store) Snapshot(ctx context.Context, dir string) error {
	const op = "snapshot"
	if err := l.acquire(ctx, op); err != nil {
		return err
	}
	defer l.mu.RUnlock()
	fail := func(err error) error { return &ledger.Error{Op: op, Path: dir, Err: err} }
	if dir == "" {
		return fail(errors.New("empty directory name"))
	}
	if l.path != "" {
		src, err1 := filepath.Abs(l.path)
		dst, err2 := filepath.Abs(dir)
		if err1 == nil && err2 == nil && src == dst {
			return fail(errors.New("cannot snapshot a ledger into its own directory"))
		}
	}
	ents, err := os.ReadDir(dir)
	switch {
	case errors.Is(err, fs.ErrNotExist):
	case err != nil:
		return fail(err)
	case len(ents) > 0:
		return fail(fmt.Errorf("dir is not empty (%d entries)", len(ents)))
	}
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return fail(err)
	}
	if err := l.snapshot(ctx, dir); err != nil {
		// Leave dir as it was: empty, or gone if Snapshot made it.
		ents, _ := os.ReadDir(dir)
		for _, e := range ents {
			os.RemoveAll(filepath.Join(dir, e.Name()))
		}
		if ctx.Err() != nil {
			err = ctx.Err()
		}
		return fail(err)
	}
	return nil
}

func (l *Store) snapshot(ctx context.Context, dir string) error {
	if err := claimDir(dir); err != nil {
		return err
	}
	bo := badgerOptions(dir, Options{})
	bo.Logger = l.db.Opts().Logger
	dst, err := openDB(bo)
	if err != nil {
		return err
	}
	wb := dst.NewWriteBatch()
	// One read transaction: the ledger as it stood at one point in time.
	err = l.db.View(func(txn *badger.Txn) error {
		// Everything: entries, their indexes and lessons, and traces.
		it := txn.NewIterator(badger.IteratorOptions{PrefetchValues: true, PrefetchSize: 100})
		defer it.Close()
		n := 0
		for it.Rewind(); it.Valid(); it.Next() {
			if n++; n%pageSize == 0 {
				if err := ctx.Err(); err != nil {
					return err
				}
			}
			item := it.Item()
			v, err := item.ValueCopy(nil)
			if err != nil {
				return err
			}
			if err := wb.Set(item.KeyCopy(nil), v); err != nil {
				return err
			}
		}
		return nil
	})
	if err == nil {
		err = wb.Flush()
	} else {
		wb.Cancel()
	}
	if cerr := dst.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		if ctx.Err() != nil {
			return ctx.Err()
		}
		return translate(err)
	}
	return restrictModes(dir)
}
