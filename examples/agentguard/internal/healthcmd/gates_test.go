package healthcmd

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

// runVerb runs "agentguard health ARGS" in-process.
func runVerb(t *testing.T, args ...string) (code int, stdout, stderr string) {
	t.Helper()
	var out, errb bytes.Buffer
	code = Run(context.Background(), args, &out, &errb)
	return code, out.String(), errb.String()
}

// demoLines returns the lines of the demo golden set whose case id is in ids.
func demoLines(t *testing.T, ids ...string) string {
	t.Helper()
	var b strings.Builder
	for line := range strings.SplitSeq(string(goldenSet), "\n") {
		for _, id := range ids {
			if strings.HasPrefix(line, `{"id":"`+id+`"`) {
				b.WriteString(line + "\n")
			}
		}
	}
	return b.String()
}

// TestEmptySet: an empty or unreadable golden set is an input error
// (status 2), never "5.00, healthy".
func TestEmptySet(t *testing.T) {
	dir := t.TempDir()
	empty := filepath.Join(dir, "empty.jsonl")
	if err := os.WriteFile(empty, []byte("\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, tt := range []struct {
		args []string
		says string
	}{
		{[]string{"-cases", empty}, "no case"},
		{[]string{"-cases", filepath.Join(dir, "missing.jsonl")}, "missing.jsonl"},
		{[]string{"-tags", "no-such-tag"}, "no case has one of these tags"},
	} {
		code, stdout, stderr := runVerb(t, append(tt.args, "-out", t.TempDir(), "-repeats", "1")...)
		if code != 2 || !strings.Contains(stderr, tt.says) {
			t.Errorf("%v: status %d, stderr %q; want 2 saying %q", tt.args, code, stderr, tt.says)
		}
		if strings.Contains(stdout, "healthy") {
			t.Errorf("%v: stdout %q", tt.args, stdout)
		}
	}
}

// TestStaleBaseline: stale baselines and a set of the wrong shape are
// printed on stdout before the run; -strict fails on them, with nothing
// run.
func TestStaleBaseline(t *testing.T) {
	cases := filepath.Join(t.TempDir(), "stale.jsonl")
	lines := demoLines(t, "N01", "N02")
	lines = strings.Replace(lines, `"last_verified":"2026-11-20"`, `"last_verified":"2025-03-01"`, 1)
	if err := os.WriteFile(cases, []byte(lines), 0o644); err != nil {
		t.Fatal(err)
	}
	out := t.TempDir()
	code, stdout, _ := runVerb(t, "-cases", cases, "-out", out, "-repeats", "1", "-floor", "0")
	for _, want := range []string{
		"warning: 1 stale baselines, last verified over 90 days ago: N01 (2025-03-01)",
		"warning: golden set: 2 normal cases, the method asks for 10",
		"warning: golden set: the longest conversation has 1 turns, the method asks for one of 15 or more",
	} {
		if !strings.Contains(stdout, want) {
			t.Errorf("stdout lacks %q:\n%s", want, stdout)
		}
	}
	if code != 0 {
		t.Errorf("without -strict: status %d, want 0", code)
	}
	out = t.TempDir()
	code, stdout, stderr := runVerb(t, "-cases", cases, "-out", out, "-repeats", "1", "-floor", "0", "-strict")
	if code != 1 || !strings.Contains(stderr, "strict") || !strings.Contains(stdout, "stale baselines") {
		t.Errorf("-strict: status %d, stderr %q; want 1", code, stderr)
	}
	if _, err := os.Stat(filepath.Join(out, "report.html")); err == nil {
		t.Error("-strict ran the check anyway")
	}
}

// TestSideEffect compares a run with an earlier report (-baseline): the
// total rises by 8 points or more while coherence, not a target, falls by
// 2 or more, and the run fails; naming coherence a target passes it.
func TestSideEffect(t *testing.T) {
	dir := t.TempDir()
	baseline := filepath.Join(dir, "before.json")
	// Before: coherence 5, the rest 1, 40 points. The demo's guarded run
	// of the negation cases scores about 70 points, coherence 2.0: the
	// classifier misreads "don't cancel, just track".
	before := `{"label":"prompt-v1","total":2,"points":40,"dimensions":[{"dimension":"accuracy","score":1},{"dimension":"coherence","score":5},` +
		`{"dimension":"memory","score":1},{"dimension":"stability","score":1},{"dimension":"efficiency","score":1}]}`
	if err := os.WriteFile(baseline, []byte(before), 0o644); err != nil {
		t.Fatal(err)
	}
	out := t.TempDir()
	code, stdout, stderr := runVerb(t, "-baseline", baseline, "-targets", "accuracy", "-tags", "negation", "-out", out, "-repeats", "1")
	if code != 1 || !strings.Contains(stderr, "side effect") || !strings.Contains(stdout, "side effect flagged: [coherence]") {
		t.Errorf("targets accuracy: status %d\nstdout %s\nstderr %s\nwant 1 and the side effect on coherence", code, stdout, stderr)
	}
	if _, err := os.Stat(filepath.Join(out, "unguarded")); err == nil {
		t.Error("with -baseline the unguarded replay ran")
	}
	html, _ := os.ReadFile(filepath.Join(out, "report.html"))
	if !bytes.Contains(html, []byte("prompt-v1")) || !bytes.Contains(html, []byte("Side effect flagged")) {
		t.Error("report.html lacks the baseline's radar or the side-effect verdict")
	}
	code, stdout, stderr = runVerb(t, "-baseline", baseline, "-targets", "accuracy,coherence", "-tags", "negation", "-out", t.TempDir(), "-repeats", "1")
	if code != 0 || strings.Contains(stdout, "side effect flagged") {
		t.Errorf("targets accuracy,coherence: status %d\nstdout %s\nstderr %s\nwant 0", code, stdout, stderr)
	}
}

// TestFlagsValidated: a floor off the 100-point scale, weights that do not
// sum to 100 and unknown dimensions are usage errors (status 2) before
// anything runs.
func TestFlagsValidated(t *testing.T) {
	for _, tt := range []struct {
		args []string
		says string
	}{
		{[]string{"-floor", "150"}, "not on the 100-point scale"},
		{[]string{"-floor", "-5"}, "not on the 100-point scale"},
		{[]string{"-floor", "3.5"}, "looks like the 1–5 scale; the floor is on the 100-point scale: use 70"},
		{[]string{"-weights", "accuracy=50,coherence=50"}, "no weight for memory"},
		{[]string{"-weights", "accuracy=30,coherence=30,memory=20,stability=15,efficiency=10"}, "sum to 105"},
		{[]string{"-targets", "accuracy,speed"}, `unknown dimension "speed"`},
	} {
		code, _, stderr := runVerb(t, tt.args...)
		if code != 2 || !strings.Contains(stderr, tt.says) {
			t.Errorf("%v: status %d, stderr %q; want 2 saying %q", tt.args, code, stderr, tt.says)
		}
	}
}

// TestHeadline: totals name their scale; "2.08/42" reads as "2.08 out of 42".
func TestHeadline(t *testing.T) {
	code, stdout, _ := runVerb(t, "-tags", "returns", "-out", t.TempDir(), "-repeats", "1", "-floor", "0",
		"-weights", "accuracy=25,coherence=25,memory=20,stability=10,efficiency=20")
	if code != 0 {
		t.Fatalf("status %d:\n%s", code, stdout)
	}
	if m := regexp.MustCompile(`\d\.\d\d/\d`).FindString(stdout); m != "" {
		t.Errorf("ambiguous total %q in:\n%s", m, stdout)
	}
	for _, want := range []string{"total (of 5)", "points (of 100)", " of 5 (", " of 100 points, "} {
		if !strings.Contains(stdout, want) {
			t.Errorf("stdout lacks %q:\n%s", want, stdout)
		}
	}
}

// TestWeightsFromPolicy: the health check reads the weights of the agent's
// policy file; a file whose weights do not sum to 100 is an input error.
func TestWeightsFromPolicy(t *testing.T) {
	dir := t.TempDir()
	bad := filepath.Join(dir, "bad.yaml")
	if err := os.WriteFile(bad, []byte("weights: {accuracy: 50, coherence: 25, memory: 20, stability: 15, efficiency: 10}\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	var out, errOut bytes.Buffer
	if code := Run(context.Background(), []string{"-policy", bad, "-out", dir}, &out, &errOut); code != 2 {
		t.Fatalf("exit %d, want 2:\n%s", code, errOut.String())
	}
	if !strings.Contains(errOut.String(), "bad.yaml:1") {
		t.Errorf("the error does not name the file and line:\n%s", errOut.String())
	}
}
