package healthcmd

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"unicode"

	"github.com/agentguard/agentguard/examples/agentguard/internal/shop"
	"github.com/agentguard/agentguard/guard/health"
	"github.com/agentguard/agentguard/guard/replay"
	"github.com/agentguard/agentguard/trace"
	"github.com/agentguard/agentguard/trace/redact"
)

// TestGoldenSet checks the demo golden set against what it must cover.
func TestGoldenSet(t *testing.T) {
	cases, err := loadCases()
	if err != nil {
		t.Fatal(err)
	}
	if len(cases) != 30 {
		t.Fatalf("%d cases, want 30", len(cases))
	}
	count := map[replay.Category]int{}
	tags := map[string]bool{}
	longest, chinese, constrained := 0, 0, 0
	for _, c := range cases {
		count[c.Category]++
		for _, tag := range c.Tags {
			tags[tag] = true
		}
		longest = max(longest, len(c.Turns))
		if strings.IndexFunc(strings.Join(c.Turns, ""), func(r rune) bool { return unicode.Is(unicode.Han, r) }) >= 0 {
			chinese++
		}
		if len(c.Constraints) > 0 {
			constrained++
		}
	}
	if count[replay.Normal] != 10 || count[replay.Boundary] != 10 || count[replay.Adversarial] != 10 {
		t.Errorf("categories %v, want 10 of each", count)
	}
	if longest < 15 {
		t.Errorf("longest conversation has %d turns, want 15 or more", longest)
	}
	if chinese < 8 || chinese > 22 {
		t.Errorf("%d cases in Chinese, want a mix", chinese)
	}
	if constrained < 4 {
		t.Errorf("%d cases with constraints, want at least 4 for the memory card", constrained)
	}
	for _, tag := range []string{"order-status", "address-change", "returns", "policy", "memory", "en", "zh",
		"vague", "multi-fact", "long-input", "rare-term", "leading", "negation", "pushing", "changed-condition"} {
		if !tags[tag] {
			t.Errorf("no case tagged %q", tag)
		}
	}
}

// TestRun runs the health check end to end: both replays, both reports,
// the comparison, and the floor.
func TestRun(t *testing.T) {
	repeats := 3
	if testing.Short() { // about 10 s under the race detector
		repeats = 1
	}
	out := t.TempDir()
	var w bytes.Buffer
	err := run(context.Background(), options{out: out, repeats: repeats, floor: 100}, &w)
	if !errors.Is(err, errBelowFloor) {
		t.Errorf("floor 100: err = %v, want errBelowFloor", err)
	}
	for _, name := range []string{
		"report.html", "report.md", "report.json",
		"unguarded/execution_trace.jsonl", "unguarded/report.html", "unguarded/report.md", "unguarded/report.json",
		"guarded/execution_trace.jsonl", "guarded/report.html", "guarded/report.md", "guarded/report.json",
	} {
		if fi, err := os.Stat(filepath.Join(out, name)); err != nil || fi.Size() == 0 {
			t.Errorf("%s: %v", name, err)
		}
	}
	for _, want := range []string{"accuracy", "efficiency", "total", "fabrication", "amnesia", "report: " + filepath.Join(out, "report.html")} {
		if !strings.Contains(w.String(), want) {
			t.Errorf("output lacks %q:\n%s", want, w.String())
		}
	}

	b, err := os.ReadFile(filepath.Join(out, "report.json"))
	if err != nil {
		t.Fatal(err)
	}
	var cmp health.Comparison
	if err := json.Unmarshal(b, &cmp); err != nil {
		t.Fatal(err)
	}
	before, after := cmp.Before, cmp.After
	t.Logf("unguarded %.2f (%.0f), guarded %.2f (%.0f); rates %+v → %+v", before.Total, before.Points, after.Total, after.Points, before.Rates, after.Rates)
	if !(after.Rates.Fabrication < before.Rates.Fabrication) || !(after.Rates.Cascade < before.Rates.Cascade) || !(after.Rates.Amnesia < before.Rates.Amnesia) {
		t.Errorf("rates unguarded %+v, guarded %+v: want fabrication, cascade and amnesia lower when guarded", before.Rates, after.Rates)
	}
	if !(after.Points > before.Points) || cmp.Flagged {
		t.Errorf("points %v → %v, side effects %v", before.Points, after.Points, cmp.SideEffects)
	}
	if before.Metrics.Runs != 30*repeats || after.Metrics.Runs != 30*repeats {
		t.Errorf("runs %d and %d, want %d", before.Metrics.Runs, after.Metrics.Runs, 30*repeats)
	}

	// The traces file reads back into the runs that were scored.
	f, err := os.Open(filepath.Join(out, "guarded", "execution_trace.jsonl"))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	n := 0
	for tr, err := range trace.NewReader(f).All() {
		if err != nil {
			t.Fatal(err)
		}
		texts := slices.Clone(tr.UserTurns)
		for _, s := range tr.Steps {
			texts = append(texts, s.Args, s.Result, s.Error)
		}
		for _, text := range texts {
			if redact.String(text) != text {
				t.Errorf("trace %s is not de-identified: %q", tr.ID, text)
				break
			}
		}
		if r, ok := replay.RunFromTrace(tr); !ok || r.Label != "guarded" || len(r.Turns) == 0 {
			t.Errorf("trace %s reads back as %+v", tr.ID, r)
		}
		n++
	}
	if n != 30*repeats {
		t.Errorf("%d traces, want %d", n, 30*repeats)
	}

	// Every problem case links to a trace shown in the page.
	html, _ := os.ReadFile(filepath.Join(out, "report.html"))
	for _, p := range after.Problems {
		if !bytes.Contains(html, []byte(`id="trace-`+p.Traces[0]+`"`)) {
			t.Errorf("problem %s: no timeline for %s", p.Case, p.Traces[0])
		}
	}
}

func TestRunInterrupted(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	var w bytes.Buffer
	err := run(ctx, options{out: t.TempDir(), repeats: 1}, &w)
	if !errors.Is(err, context.Canceled) {
		t.Errorf("err = %v, want context.Canceled", err)
	}
	if !strings.Contains(w.String(), "interrupted") {
		t.Errorf("output %q", w.String())
	}
}

func TestRunBadCases(t *testing.T) {
	name := filepath.Join(t.TempDir(), "bad.jsonl")
	if err := os.WriteFile(name, []byte(`{"id":"x"}`+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	err := run(context.Background(), options{out: t.TempDir(), repeats: 1, cases: name}, &bytes.Buffer{})
	if !errors.Is(err, replay.ErrInvalid) || !strings.Contains(err.Error(), "bad.jsonl:1") {
		t.Errorf("err = %v, want the bad line", err)
	}
}

// BenchmarkReplayDemo replays the demo golden set, 30 cases × 3 repeats,
// through the guard, without a ledger and without scoring.
func BenchmarkReplayDemo(b *testing.B) {
	cases, err := loadCases()
	if err != nil {
		b.Fatal(err)
	}
	for _, mode := range []struct {
		name   string
		shadow bool
	}{{"guarded", false}, {"unguarded", true}} {
		b.Run(mode.name, func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				runs, err := replay.Replay(context.Background(), cases, newDemoAgent, replay.Config{Guard: shop.GuardConfig(nil, mode.shadow), Label: mode.name})
				if err != nil || len(runs) != 90 {
					b.Fatalf("%d runs, %v", len(runs), err)
				}
			}
		})
	}
}

// BenchmarkHealthCheck is the whole main job: both replays into an on-disk
// ledger, both reports, the comparison.
func BenchmarkHealthCheck(b *testing.B) {
	b.ReportAllocs()
	for b.Loop() {
		if err := run(context.Background(), options{out: b.TempDir(), repeats: 3}, &bytes.Buffer{}); err != nil {
			b.Fatal(err)
		}
	}
}

// TestUnguardedExplained: the demo's guarded report says what the guard
// could not fix, from the runs: a wrong intent the classifier was sure of
// (A04), two requests in one sentence of which the agent did one (B05).
func TestUnguardedExplained(t *testing.T) {
	out := t.TempDir()
	if err := run(context.Background(), options{out: out, repeats: 1}, &bytes.Buffer{}); err != nil {
		t.Fatal(err)
	}
	b, err := os.ReadFile(filepath.Join(out, "guarded", "report.json"))
	if err != nil {
		t.Fatal(err)
	}
	var rep health.Report
	if err := json.Unmarshal(b, &rep); err != nil {
		t.Fatal(err)
	}
	var all []string
	for _, rc := range rep.RootCauses {
		all = append(all, rc.Unguarded...)
	}
	text := strings.Join(all, "\n")
	for _, want := range []string{"A04: the classifier read", "the intent gate asks back only when the classifier is unsure",
		"B05: turn 0 asks for several things", "no guard rail checks that every request of a turn was served"} {
		if !strings.Contains(text, want) {
			t.Errorf("explanations lack %q:\n%s", want, text)
		}
	}
	md, _ := os.ReadFile(filepath.Join(out, "guarded", "report.md"))
	if !strings.Contains(string(md), "Why no guard rail caught it: B05") {
		t.Error("report.md does not say what the guard could not fix")
	}
}
