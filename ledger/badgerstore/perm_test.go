package badgerstore

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestLedgerFile(t *testing.T) {
	tests := []struct {
		name string
		want bool
	}{
		{"MANIFEST", true},
		{"MANIFEST-REWRITE", true},
		{"KEYREGISTRY", true},
		{"REWRITE-KEYREGISTRY", true},
		{"DISCARD", true},
		{"LOCK", true},
		{leaseFile, true},
		{leaseFile + ".tmp", true},
		{"000001.sst", true},
		{"00002.mem", true},
		{"000001.vlog", true},
		{".sst", false},
		{"a1.sst", false},
		{"000001.sst.bak", false},
		{"notes.txt", false},
		{"manifest", false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := ledgerFile(tt.name); got != tt.want {
				t.Errorf("ledgerFile(%q) = %v, want %v", tt.name, got, tt.want)
			}
		})
	}
}

func TestOpenRefusesASharedDirectory(t *testing.T) {
	dir := t.TempDir()
	if err := os.Mkdir(filepath.Join(dir, "photos"), 0o755); err != nil {
		t.Fatal(err)
	}
	_, err := Open(dir, Options{})
	if err == nil || !strings.Contains(err.Error(), `"photos"`) {
		t.Errorf("Open of a directory holding photos/: %v, want an error naming it", err)
	}
	if ents, _ := os.ReadDir(dir); len(ents) != 1 {
		t.Errorf("refused Open left %d entries", len(ents))
	}
}
