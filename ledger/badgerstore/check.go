package badgerstore

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"

	"github.com/dgraph-io/badger/v4"
	"github.com/dgraph-io/badger/v4/options"
	"github.com/dgraph-io/badger/v4/table"
)

// check reads the MANIFEST and every table file it lists, verifying their
// checksums, before badger opens dir. badger opens table files in goroutines
// of its own and panics there on a damaged one, which no recover in this
// package can catch; reading them first turns that damage into ledger.ErrCorrupt.
// It also keeps badger from "repairing" a garbled MANIFEST by dropping the
// tables it no longer lists. It costs one read of the table files — a few
// milliseconds per ten thousand entries.
func check(dir string, bo badger.Options) error {
	f, err := os.Open(filepath.Join(dir, badger.ManifestFilename))
	if errors.Is(err, fs.ErrNotExist) {
		return nil // a new ledger
	} else if err != nil {
		return err
	}
	defer f.Close()
	m, _, err := badger.ReplayManifestFile(f, bo.ExternalMagicVersion, bo)
	if err != nil {
		return &corruptError{fmt.Sprintf("MANIFEST: %v", err)}
	}
	for id, tm := range m.Tables {
		if tm.KeyID != 0 {
			continue // encrypted; the ledger never encrypts
		}
		if err := checkTable(table.NewFilename(id, dir), id, tm.Compression); err != nil {
			return err
		}
	}
	return nil
}

// checkTable verifies one table file, recovering from badger's panics.
func checkTable(name string, id uint64, c options.CompressionType) (err error) {
	data, err := os.ReadFile(name)
	if errors.Is(err, fs.ErrNotExist) {
		return nil // badger reports a missing table itself
	} else if err != nil {
		return err
	}
	defer func() {
		if r := recover(); r != nil {
			err = &corruptError{fmt.Sprintf("table %s: unreadable (damaged index or block)", filepath.Base(name))}
		}
	}()
	t, err := table.OpenInMemoryTable(data, id, &table.Options{
		BlockSize:          4 << 10,
		BloomFalsePositive: 0.01,
		Compression:        c,
		ChkMode:            options.NoVerification, // VerifyChecksum checks every block
	})
	if err == nil {
		err = t.VerifyChecksum()
	}
	if err != nil {
		return &corruptError{fmt.Sprintf("table %s: %v", filepath.Base(name), err)}
	}
	return nil
}
