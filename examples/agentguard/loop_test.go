package main

import (
	"bytes"
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/agentguard/agentguard/examples/agentguard/internal/cli"
	"github.com/agentguard/agentguard/guard/health"
	"github.com/agentguard/agentguard/guard/replay"
	"github.com/agentguard/agentguard/ledger"
	"github.com/agentguard/agentguard/trace"
	"github.com/agentguard/agentguard/trace/redact"
)

// TestLoop is the loop a user closes, through the command's verbs: run the
// demo twice into one directory, read the lessons, fetch every example
// trace, build regression cases from the ledger and replay them through
// the health check.
func TestLoop(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	led := filepath.Join(dir, "ledger")
	agentguard := func(want int, args ...string) string {
		t.Helper()
		var stdout, stderr bytes.Buffer
		if got := run(ctx, args, &stdout, &stderr); got != want {
			t.Fatalf("agentguard %s: exit %d, want %d\n%s%s", strings.Join(args, " "), got, want, stdout.String(), stderr.String())
		}
		return stdout.String()
	}

	// 1. The demo, twice: the second run adds to the first.
	agentguard(0, "demo", "-quiet", "-out", dir)
	agentguard(0, "demo", "-quiet", "-out", dir)

	// 2. The lessons.
	var lessons []ledger.Lesson
	if err := json.Unmarshal([]byte(agentguard(0, "ledger", "lessons", "-json", led)), &lessons); err != nil {
		t.Fatal(err)
	}
	if len(lessons) == 0 {
		t.Fatal("no lessons")
	}
	entries := strings.Count(agentguard(0, "ledger", "export", led), "\n")
	if entries == 0 || entries%2 != 0 {
		t.Errorf("%d entries after two identical runs", entries)
	}

	// 3. Every example trace, fetched.
	var ids []string
	for _, l := range lessons {
		for _, id := range l.Examples {
			if !slices.Contains(ids, id) {
				ids = append(ids, id)
			}
		}
	}
	out := agentguard(0, append([]string{"ledger", "trace", led}, ids...)...)
	var fetched []string
	for tr, err := range trace.NewReader(strings.NewReader(out)).All() {
		if err != nil {
			t.Fatal(err)
		}
		fetched = append(fetched, tr.ID)
		for _, u := range tr.UserTurns {
			if redact.String(u) != u {
				t.Errorf("trace %s: user turn %q is not de-identified", tr.ID, u)
			}
		}
	}
	if !slices.Equal(fetched, ids) {
		t.Errorf("fetched %v, want %v", fetched, ids)
	}
	agentguard(cli.ExitUsage, "ledger", "trace", led, "no-such-trace")

	// 4. Cases from the ledger: one per entry of each run.
	casesFile := filepath.Join(dir, "cases.jsonl")
	agentguard(0, "ledger", "cases", "-o", casesFile, led)
	f, err := os.Open(casesFile)
	if err != nil {
		t.Fatal(err)
	}
	cases, err := replay.LoadCases(f, casesFile)
	f.Close()
	if err != nil {
		t.Fatal(err)
	}
	if len(cases) == 0 {
		t.Fatal("no cases")
	}
	for _, c := range cases {
		if !slices.Contains(c.Tags, "unverified") || !slices.ContainsFunc(c.Tags, func(tag string) bool { return strings.HasPrefix(tag, "ledger_") }) {
			t.Errorf("case %s: tags %v", c.ID, c.Tags)
		}
	}

	// 5. The health check replays them, at its default floor: the guard
	// that made them passes every one (what it caught counts as
	// recovered, nothing fails).
	report := filepath.Join(dir, "health")
	agentguard(0, "health", "-cases", casesFile, "-repeats", "1", "-out", report)
	b, err := os.ReadFile(filepath.Join(report, "report.json"))
	if err != nil {
		t.Fatal(err)
	}
	var cmp health.Comparison
	if err := json.Unmarshal(b, &cmp); err != nil {
		t.Fatal(err)
	}
	if cmp.After.Metrics.Runs != len(cases) {
		t.Errorf("the health check ran %d cases, want %d", cmp.After.Metrics.Runs, len(cases))
	}
	for _, h := range cmp.After.Hits {
		if h.Outcome == health.Failed {
			t.Errorf("guarded replay of its own regression cases: %s failed: %s (%s)", h.Case, h.Cause, h.Detail)
		}
	}
	if !cmp.After.Release.Releasable {
		t.Errorf("guarded: %s", cmp.After.Release.Why)
	}
	t.Logf("%d entries, %d lessons, %d example traces, %d cases; health check: unguarded %.1f, guarded %.1f",
		entries, len(lessons), len(ids), len(cases), cmp.Before.Points, cmp.After.Points)
}
