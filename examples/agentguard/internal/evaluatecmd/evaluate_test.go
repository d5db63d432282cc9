package evaluatecmd

import (
	"bytes"
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/agentguard/agentguard/examples/agentguard/internal/cli"
)

var update = flag.Bool("update", false, "rewrite the golden files in testdata/golden")

// TestRun runs the command on the checked-in samples and compares its
// exit status, standard output and standard error with testdata/golden.
func TestRun(t *testing.T) {
	clean, err := os.ReadFile(filepath.Join("testdata", "clean.jsonl"))
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name  string
		args  []string
		stdin string
		want  int
	}{
		{name: "agentguard", args: []string{"testdata/traces.jsonl"}, want: exitFailed}, // a critical finding fails its trace
		{name: "openai", args: []string{"-format", "openai", "testdata/chats.jsonl"}, want: exitFailed},
		{name: "openai detected", args: []string{"testdata/chats.jsonl"}, want: exitFailed},
		{name: "openai messages", args: []string{"testdata/messages.jsonl"}, want: exitFailed},
		{name: "unknown input", args: []string{"testdata/policy.json"}, want: exitBadInput},
		{name: "gzipped", args: []string{"testdata/clean.jsonl.gz"}, want: exitPassed},
		{name: "policy", args: []string{"-policy", "testdata/policy.json", "testdata/traces.jsonl"}, want: exitFailed},
		{name: "clean", args: []string{"testdata/clean.jsonl"}, want: exitPassed},
		{name: "several files", args: []string{"testdata/clean.jsonl", "testdata/traces.jsonl"}, want: exitFailed},
		{name: "stdin", args: []string{"-"}, stdin: string(clean), want: exitPassed},
		{name: "bad lines", args: []string{"testdata/bad.jsonl"}, want: exitBadInput},
		{name: "wrong format", args: []string{"-format", "openai", "testdata/traces.jsonl"}, want: exitBadInput},
		{name: "missing file", args: []string{"testdata/clean.jsonl", "testdata/missing.jsonl"}, want: exitBadInput},
		{name: "empty input", args: []string{"-"}, want: exitBadInput},
		{name: "bad policy", args: []string{"-policy", "testdata/badpolicy.json", "testdata/traces.jsonl"}, want: exitBadInput},
		{name: "missing policy", args: []string{"-policy", "testdata/missing.json", "testdata/traces.jsonl"}, want: exitBadInput},
		{name: "unknown format", args: []string{"-format", "csv", "testdata/traces.jsonl"}, want: exitBadInput},
		{name: "unknown flag", args: []string{"-strict", "testdata/traces.jsonl"}, want: exitBadInput},
		{name: "no file", want: exitBadInput},
		{name: "explain", args: []string{"-explain", "testdata/traces.jsonl"}, want: exitFailed}, // the facts of each finding, as text
		{name: "autonomous profile", args: []string{"-profile", "autonomous", "testdata/traces.jsonl"}, want: exitFailed},
		{name: "unknown profile", args: []string{"-profile", "yolo", "testdata/traces.jsonl"}, want: exitBadInput},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var stdout, stderr bytes.Buffer
			got := run(cli.WithStdin(context.Background(), strings.NewReader(tc.stdin)), tc.args, &stdout, &stderr)
			if got != tc.want {
				t.Errorf("exit status %d, want %d\nstderr:\n%s", got, tc.want, stderr.String())
			}
			out := fmt.Sprintf("$ agentguard evaluate %s\nexit %d\n-- stdout --\n%s-- stderr --\n%s", strings.Join(tc.args, " "), got, stdout.String(), stderr.String())
			golden := filepath.Join("testdata", "golden", strings.ReplaceAll(tc.name, " ", "_")+".txt")
			if *update {
				if err := os.MkdirAll(filepath.Dir(golden), 0o755); err != nil {
					t.Fatal(err)
				}
				if err := os.WriteFile(golden, []byte(out), 0o644); err != nil {
					t.Fatal(err)
				}
				return
			}
			want, err := os.ReadFile(golden)
			if err != nil {
				t.Fatalf("%v (run go test -update to create it)", err)
			}
			if out != string(want) {
				t.Errorf("output differs from %s (run go test -update if the change is right)\ngot:\n%s\nwant:\n%s", golden, out, want)
			}
		})
	}
}

// TestSeedCase pins the seed trajectory in both formats: sending
// contact 3's quotes to contact 7 is flagged by provenance, and the same
// flow with one contact scores 100.
func TestSeedCase(t *testing.T) {
	for _, tc := range []struct {
		name string
		args []string
		bad  string // the id of the wrong-entity trace
		good string // the id of the one-contact trace
	}{
		{name: "agentguard", args: []string{"testdata/traces.jsonl"}, bad: "seed-wrong-entity", good: "seed-one-contact"},
		{name: "openai", args: []string{"testdata/chats.jsonl"}, bad: "chat-seed-wrong-entity", good: "chat-seed-one-contact"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var stdout, stderr bytes.Buffer
			run(context.Background(), tc.args, &stdout, &stderr)
			results := map[string]result{}
			for _, line := range strings.Split(strings.TrimSpace(stdout.String()), "\n") {
				var r result
				if err := json.Unmarshal([]byte(line), &r); err != nil {
					t.Fatalf("line %q: %v", line, err)
				}
				results[r.TraceID] = r
			}
			bad, ok := results[tc.bad]
			if !ok {
				t.Fatalf("no result for %s", tc.bad)
			}
			if len(bad.Violations) != 1 || bad.Violations[0].Rule != "argument-provenance" || bad.Violations[0].Step != 5 {
				t.Errorf("%s: violations %+v, want one argument-provenance finding on step 5 (send_email)", tc.bad, bad.Violations)
			}
			if good := results[tc.good]; good.Score != 100 || !good.Passed || len(good.Violations) != 0 {
				t.Errorf("%s: %+v, want score 100, passed, no violations", tc.good, good)
			}
		})
	}
}

// TestErrorLinesCapped: the wrong -format on a large file says so in a few
// lines and a count, not one line per line of the file (53,013 were
// printed before).
func TestErrorLinesCapped(t *testing.T) {
	name := filepath.Join(t.TempDir(), "big.jsonl")
	line := `{"messages":[{"role":"robot","content":"?"}]}` + "\n"
	if err := os.WriteFile(name, []byte(strings.Repeat(line, 1000)), 0o600); err != nil {
		t.Fatal(err)
	}
	var stdout, stderr bytes.Buffer
	if code := run(context.Background(), []string{"-format", "openai", name}, &stdout, &stderr); code != exitBadInput {
		t.Errorf("exit %d, want %d", code, exitBadInput)
	}
	lines := strings.Split(strings.TrimSpace(stderr.String()), "\n")
	if len(lines) != maxErrorLines+1 || !strings.Contains(lines[len(lines)-1], "1000 unreadable traces in all (5 shown)") {
		t.Errorf("stderr, %d lines:\n%s", len(lines), stderr.String())
	}
	if !strings.Contains(stdout.String(), `"errors":1000`) {
		t.Errorf("the summary does not count every error: %s", stdout.String())
	}
}

// TestTerminalTable: on a terminal the results are a table — trace, score,
// result, findings, the worst finding — and a summary line; -json, or any
// stdout that is not a terminal, keeps the JSON lines.
func TestTerminalTable(t *testing.T) {
	defer func(f func(io.Writer) bool) { isTerminal = f }(isTerminal)
	isTerminal = func(io.Writer) bool { return true }
	var stdout, stderr bytes.Buffer
	if code := run(context.Background(), []string{"testdata/traces.jsonl"}, &stdout, &stderr); code != exitFailed {
		t.Fatalf("exit %d, want %d\n%s", code, exitFailed, stderr.String())
	}
	lines := strings.Split(strings.TrimSpace(stdout.String()), "\n")
	if !strings.HasPrefix(lines[0], "TRACE") || !strings.Contains(lines[0], "WORST FINDING") {
		t.Errorf("no header: %q", lines[0])
	}
	if last := lines[len(lines)-1]; !strings.Contains(last, "traces:") || !strings.Contains(last, "failed") {
		t.Errorf("no summary line: %q", last)
	}
	if strings.Contains(stdout.String(), `{"trace_id"`) {
		t.Errorf("JSON on a terminal without -json:\n%s", stdout.String())
	}
	stdout.Reset()
	run(context.Background(), []string{"-json", "testdata/traces.jsonl"}, &stdout, &stderr)
	if !strings.HasPrefix(stdout.String(), `{"trace_id"`) {
		t.Errorf("-json on a terminal gave:\n%s", stdout.String())
	}
}
