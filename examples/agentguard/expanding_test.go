package main

import (
	"bytes"
	"compress/gzip"
	"context"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"

	"github.com/agentguard/agentguard/examples/agentguard/internal/cli"
)

// TestExpandingInput runs every verb that reads traces on a gzip of blank
// lines — 70 MB that compress to some 70 KB, the shape of input that drove
// the readers to gigabytes when they kept what came before the first
// record — and checks that each refuses it with a message and exit 2,
// allocating far less than it read.
func TestExpandingInput(t *testing.T) {
	if testing.Short() {
		t.Skip("-short: 70 MB of blank lines are decompressed per verb")
	}
	path := filepath.Join(t.TempDir(), "blank.jsonl.gz")
	var buf bytes.Buffer
	zw, _ := gzip.NewWriterLevel(&buf, gzip.BestSpeed)
	line := bytes.Repeat([]byte("\n"), 1<<20)
	for range 70 {
		zw.Write(line)
	}
	zw.Close()
	if err := os.WriteFile(path, buf.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, args := range [][]string{
		{"evaluate", path},
		{"memory", path},
		{"conteval", "-traces", path},
	} {
		t.Run(args[0], func(t *testing.T) {
			var stdout, stderr bytes.Buffer
			var before, after runtime.MemStats
			runtime.ReadMemStats(&before)
			got := run(context.Background(), args, &stdout, &stderr)
			runtime.ReadMemStats(&after)
			if got != cli.ExitUsage || !strings.Contains(stderr.String(), "blank lines") {
				t.Errorf("agentguard %s: exit %d, stderr %q: want exit 2 and a message", strings.Join(args, " "), got, stderr.String())
			}
			if alloc := after.TotalAlloc - before.TotalAlloc; alloc > 64<<20 {
				t.Errorf("agentguard %s allocated %d MiB for %d KB of input", strings.Join(args, " "), alloc>>20, buf.Len()>>10)
			}
		})
	}
}
