package contevalcmd

import (
	"encoding/json"
	"io"
	"os"
	"strings"
	"testing"
)

// TestScheduleInDocs quotes seed 002's schedule — a round "daily, or hourly
// for a busy agent", a weekly human check, red samples merged every two
// weeks — as guard/conteval's doc gives it to cron and to a Kubernetes
// CronJob: every command there is one this verb accepts, flags included.
func TestScheduleInDocs(t *testing.T) {
	src, err := os.ReadFile("../../../../guard/conteval/doc.go")
	if err != nil {
		t.Fatal(err)
	}
	doc := string(src)
	var crons []string
	for _, line := range strings.Split(doc, "\n") {
		if _, cmd, ok := strings.Cut(line, "agentguard conteval"); ok && strings.HasPrefix(strings.TrimSpace(line), "0 ") {
			crons = append(crons, line)
			fields := strings.Fields(strings.TrimSpace(line))
			if len(fields) < 6 || strings.Contains(strings.Join(fields[:5], " "), "agentguard") {
				t.Errorf("cron line %q: want five schedule fields first", line)
			}
			// The shell's $(date +%F) is one word.
			args := strings.Fields(strings.ReplaceAll(cmd, `$(date +\%F)`, "2026-12-07"))
			if len(args) > 0 && args[0] == "merge" {
				if len(args) < 4 || args[1] != "-into" {
					t.Errorf("merge line %q: want merge -into GOLDEN RED...", line)
				}
				continue
			}
			if _, code, ok := parseFlags(args, io.Discard, io.Discard); !ok {
				t.Errorf("cron line %q: the verb refuses its flags (exit %d)", line, code)
			}
		}
	}
	if len(crons) != 3 {
		t.Fatalf("%d cron lines, want 3 (daily round, weekly human check, merge every other week)", len(crons))
	}
	for i, want := range []string{"0 2 * * *", "0 2 * * 1", "0 3 * * 0"} {
		if !strings.HasPrefix(strings.TrimSpace(crons[i]), want) || i == 1 && !strings.Contains(crons[i], "-review") || i == 2 && !strings.Contains(crons[i], "% 2") {
			t.Errorf("cron line %d %q: want %q", i, crons[i], want)
		}
	}

	// The CronJob: hourly, its container's args a JSON array the verb accepts.
	if !strings.Contains(doc, `schedule: "0 * * * *"`) {
		t.Error("the CronJob is not hourly")
	}
	_, rest, ok := strings.Cut(doc, "args: [")
	if !ok {
		t.Fatal("no CronJob args")
	}
	list, _, _ := strings.Cut(rest, "]")
	var args []string
	if err := json.Unmarshal([]byte("["+list+"]"), &args); err != nil {
		t.Fatalf("CronJob args: %v", err)
	}
	if args[0] != "conteval" {
		t.Fatalf("CronJob args %q: want the conteval verb", args)
	}
	if _, code, ok := parseFlags(args[1:], io.Discard, io.Discard); !ok {
		t.Errorf("CronJob args %q: the verb refuses them (exit %d)", args, code)
	}
}
