package badgerstore

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/dgraph-io/badger/v4"
)

// ledgerFile reports whether name is a file that badger or the ledger keeps
// in a ledger directory.
func ledgerFile(name string) bool {
	switch name {
	case badger.ManifestFilename, "MANIFEST-REWRITE", badger.KeyRegistryFileName,
		badger.KeyRegistryRewriteFileName, "DISCARD", "LOCK", leaseFile, leaseFile + ".tmp", ballastFile:
		return true
	}
	base, ext, ok := strings.Cut(name, ".")
	if !ok || base == "" || strings.Trim(base, "0123456789") != "" {
		return false
	}
	return ext == "sst" || ext == "vlog" || ext == "mem"
}

// claimDir readies an existing directory for a read-write ledger: it must
// hold nothing but ledger files — the ledger changes the modes of what it
// holds, which must never reach a directory shared with anything else —
// and it is set to 0700.
func claimDir(dir string) error {
	ents, err := os.ReadDir(dir)
	if err != nil {
		return err
	}
	for _, e := range ents {
		if !ledgerFile(e.Name()) || !e.Type().IsRegular() {
			return fmt.Errorf("dir holds %q, which is not a ledger file: give the ledger a directory of its own", e.Name())
		}
	}
	return os.Chmod(dir, 0o700)
}

// restrictModes sets the mode of dir to 0700 and of every ledger file in
// it to 0600. badger creates its files 0666 less the umask and has no
// option to do otherwise; the ledger calls this at Open, Close and after a
// Snapshot. It leaves anything else alone.
func restrictModes(dir string) error {
	if err := os.Chmod(dir, 0o700); err != nil {
		return err
	}
	ents, err := os.ReadDir(dir)
	if err != nil {
		return err
	}
	for _, e := range ents {
		if !ledgerFile(e.Name()) || !e.Type().IsRegular() {
			continue
		}
		info, err := e.Info()
		if os.IsNotExist(err) {
			continue // removed by badger meanwhile
		} else if err != nil {
			return err
		}
		if info.Mode().Perm() == 0o600 {
			continue
		}
		if err := os.Chmod(filepath.Join(dir, e.Name()), 0o600); err != nil && !os.IsNotExist(err) {
			return err
		}
	}
	return nil
}
