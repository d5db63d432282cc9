package contevalcmd

import (
	"bytes"
	"context"
	"encoding/json"
	"flag"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/agentguard/agentguard/examples/agentguard/internal/cli"
	"github.com/agentguard/agentguard/guard/conteval"
	"github.com/agentguard/agentguard/guard/replay"
	"github.com/agentguard/agentguard/ledger"
	"github.com/agentguard/agentguard/ledger/badgerstore"
)

var update = flag.Bool("update", false, "rewrite the golden files")

var now = time.Date(2025, 6, 2, 6, 0, 0, 0, time.UTC)

const (
	sampleTraces = "testdata/traces.jsonl.gz"
	sampleConfig = "testdata/config.json"
)

// TestSampleRun runs the command on the sample day and compares what it
// prints with testdata/sample-run.golden (regenerate with -update).
func TestSampleRun(t *testing.T) {
	var stdout, stderr bytes.Buffer
	code := run(context.Background(), []string{"-traces", sampleTraces, "-config", sampleConfig, "-judge", "demo"}, &stdout, &stderr, now)
	if stderr.Len() > 0 {
		t.Errorf("stderr: %s", stderr.String())
	}
	golden := filepath.Join("testdata", "sample-run.golden")
	if *update {
		if err := os.WriteFile(golden, stdout.Bytes(), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	want, err := os.ReadFile(golden)
	if err != nil {
		t.Fatal(err)
	}
	if got := stdout.String(); got != string(want) {
		t.Errorf("output differs from %s (run with -update to accept):\n%s", golden, got)
	}
	// The day's traffic holds traces that ran a tool outside the
	// allow-list: any one of them fails the gate, whatever the pass rate.
	if !strings.Contains(stdout.String(), "→ RED (26 traces ran a tool outside the allow-list") || code != 1 {
		t.Errorf("exit %d, want 1 with a red verdict for the privilege band", code)
	}
}

// TestLoopClosed runs two rounds with a ledger, cases and a trend, the
// second under a new config version, and checks what they leave behind.
func TestLoopClosed(t *testing.T) {
	dir := t.TempDir()
	led := filepath.Join(dir, "ledger")
	cases := filepath.Join(dir, "cases.jsonl")
	trend := filepath.Join(dir, "trend.jsonl")
	args := []string{"-traces", sampleTraces, "-config", sampleConfig, "-ledger", led, "-cases", cases, "-trend", trend, "-report", filepath.Join(dir, "report.json")}

	var out bytes.Buffer
	if code := run(context.Background(), args, &out, &out, now); code != 1 { // red: the privilege band
		t.Fatalf("exit %d, want 1:\n%s", code, out.String())
	}
	f, err := os.Open(cases)
	if err != nil {
		t.Fatal(err)
	}
	loaded, err := replay.LoadCases(f, cases)
	f.Close()
	if err != nil || len(loaded) == 0 {
		t.Fatalf("health-check loader: %d cases, %v", len(loaded), err)
	}
	for _, c := range loaded {
		if !strings.HasPrefix(c.ID, "ce-") || !strings.Contains(strings.Join(c.Tags, " "), "ce_") {
			t.Errorf("case %s tags %v", c.ID, c.Tags)
		}
	}
	df, err := os.Open(filepath.Join(dir, "cases.details.jsonl"))
	if err != nil {
		t.Fatal(err)
	}
	details, err := conteval.ReadCaseDetails(df)
	df.Close()
	if err != nil || len(details) != len(loaded) {
		t.Fatalf("details: %d, %v", len(details), err)
	}
	var rep conteval.Report
	b, _ := os.ReadFile(filepath.Join(dir, "report.json"))
	if err := json.Unmarshal(b, &rep); err != nil || rep.ConfigVersion != "demo-2025-06-01" || rep.Filed == 0 {
		t.Fatalf("report: version %q, filed %d, %v", rep.ConfigVersion, rep.Filed, err)
	}

	// A second round under a new version: nothing new to file, and the
	// trend marks the change.
	cfg, _ := os.ReadFile(sampleConfig)
	cfg2 := filepath.Join(dir, "config-v2.json")
	os.WriteFile(cfg2, bytes.Replace(cfg, []byte(`"demo-2025-06-01"`), []byte(`"demo-2025-06-02"`), 1), 0o600)
	pol, _ := os.ReadFile(filepath.Join(filepath.Dir(sampleConfig), "policy.yaml")) // the config names it beside itself
	os.WriteFile(filepath.Join(dir, "policy.yaml"), pol, 0o600)
	args[3] = cfg2
	out.Reset()
	if code := run(context.Background(), args, &out, &out, now.Add(time.Hour)); code != 1 { // red again: the privilege band
		t.Fatalf("exit %d:\n%s", code, out.String())
	}
	if !strings.Contains(out.String(), "0 violations filed, "+itoa(rep.Filed)+" already there") {
		t.Errorf("second round refiled violations:\n%s", out.String())
	}
	if !strings.Contains(out.String(), "regression cases, 0 of them new") {
		t.Errorf("second round added cases again:\n%s", out.String())
	}
	f, _ = os.Open(cases)
	again, err := replay.LoadCases(f, cases)
	f.Close()
	if err != nil || len(again) != len(loaded) {
		t.Errorf("after two rounds the cases file holds %d cases (%v), want %d", len(again), err, len(loaded))
	}
	if !strings.Contains(out.String(), "| 2025-06-02 07:00 demo-2025-06-02") {
		t.Errorf("trend does not mark the new version:\n%s", out.String())
	}
	points, err := conteval.LoadTrend(trend)
	if err != nil || len(points) != 2 || !points[1].VersionChanged {
		t.Errorf("trend %+v, %v", points, err)
	}
	l, err := badgerstore.Open(led, badgerstore.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	entries, err := l.Query(context.Background(), ledger.Query{})
	if err != nil || len(entries) != rep.Filed {
		t.Errorf("ledger holds %d entries, want %d (%v)", len(entries), rep.Filed, err)
	}
	for _, e := range entries {
		if !strings.HasPrefix(e.Rule, conteval.RulePrefix) {
			t.Errorf("ledger rule %q", e.Rule)
		}
		// Every entry's trace is stored beside it.
		if tr, err := l.Trace(context.Background(), e.TraceID); err != nil || tr.ID != e.TraceID {
			t.Errorf("entry %d: trace %s: %v", e.Seq, e.TraceID, err)
		}
	}
}

func itoa(n int) string { b, _ := json.Marshal(n); return string(b) }

func TestExitCodes(t *testing.T) {
	dir := t.TempDir()
	write := func(name, text string) string {
		p := filepath.Join(dir, name)
		os.WriteFile(p, []byte(text), 0o600)
		return p
	}
	tests := []struct {
		name string
		args []string
		want int
	}{
		{"red: tools outside the allow-list", []string{"-traces", sampleTraces, "-config", sampleConfig}, 1},
		{"yellow: those tools allowed", []string{"-traces", sampleTraces, "-config", write("yellow.json", `{"version":"y","gate":{"floor":0.95,"max_width":0.15},"policy":"`+write("yellow.yaml", allowedPolicy)+`"}`)}, 0},
		{"red: a higher floor", []string{"-traces", sampleTraces, "-config", write("red.json", `{"version":"r","gate":{"floor":0.995}}`)}, 1},
		{"green: a lower floor", []string{"-traces", sampleTraces, "-config", write("green.json", `{"version":"g","gate":{"floor":0.8},"policy":"`+write("green.yaml", "gates:\n  json_routes: [order-api]\n  allowed_tools: [query_order, logistics, search_kb, submit_return, update_address, send_sms, issue_voucher, cancel_order]\n")+`"}`)}, 0},
		{"not enough: the last hour only", []string{"-traces", sampleTraces, "-since", "2025-06-01T23:00:00Z"}, cli.ExitNotEnough},
		{"no traces after since", []string{"-traces", sampleTraces, "-since", "2030-01-01"}, cli.ExitNotEnough},
		{"missing flag", []string{}, exitFailed},
		{"bad config", []string{"-traces", sampleTraces, "-config", write("bad.json", `{"version":"x","gate":{"floor":7}}`)}, exitFailed},
		{"missing file", []string{"-traces", filepath.Join(dir, "nope.jsonl")}, exitFailed},
		{"bad since", []string{"-traces", sampleTraces, "-since", "yesterday"}, exitFailed},
		{"truncated gzip", []string{"-traces", truncatedCopy(t, dir)}, exitFailed},
		{"help", []string{"-h"}, 0},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var out bytes.Buffer
			if got := run(context.Background(), tt.args, &out, &out, now); got != tt.want {
				t.Errorf("exit %d, want %d:\n%s", got, tt.want, out.String())
			}
		})
	}
}

// allowedPolicy is the sample policy with the two tools the demo's model
// calls outside its allow-list allowed.
const allowedPolicy = `gates:
  allowed_tools: [query_order, logistics, search_kb, submit_return, update_address, send_sms, issue_voucher, cancel_order]
  json_routes: [order-api]
tools:
  search_kb: {retrieval: true}
assertions:
  guard_rules: [grounding, argument-provenance, loop, empty-result]
`

func truncatedCopy(t *testing.T, dir string) string {
	b, err := os.ReadFile(sampleTraces)
	if err != nil {
		t.Fatal(err)
	}
	p := filepath.Join(dir, "cut.jsonl.gz")
	os.WriteFile(p, b[:len(b)/2], 0o600)
	return p
}

// TestPlainAndBadLines: an uncompressed file is read as well, and lines
// that are not traces are skipped with a note.
func TestPlainAndBadLines(t *testing.T) {
	dir := t.TempDir()
	p := filepath.Join(dir, "t.jsonl")
	text := `{"v":1,"trace_id":"a","route":"r","steps":[{"i":0,"kind":"model","turn":0,"result":"hi"}]}
not json
{"v":2,"trace_id":"b","steps":[]}
`
	os.WriteFile(p, []byte(text), 0o600)
	var out, errOut bytes.Buffer
	code := run(context.Background(), []string{"-traces", p}, &out, &errOut, now)
	if code != cli.ExitUsage || !strings.Contains(out.String(), "1 traces from") || !strings.Contains(out.String(), "2 unreadable lines skipped") {
		t.Errorf("exit %d:\n%s", code, out.String())
	}
	if strings.Count(errOut.String(), "skipped:") != 2 {
		t.Errorf("stderr: %s", errOut.String())
	}
}

// TestMergeVerb: the round's red cases join the golden set once.
func TestMergeVerb(t *testing.T) {
	dir := t.TempDir()
	golden := filepath.Join(dir, "golden.jsonl")
	red := filepath.Join(dir, "red.jsonl")
	if err := os.WriteFile(golden, []byte(`{"id":"N01","turns":["Where is A1001?"],"answer":{},"last_verified":"2026-11-01"}`+"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(red, []byte(`{"id":"ce-t1","turns":["退货要多久？"],"answer":{},"tags":["ce_grounding","continuous-eval","review"]}
{"id":"ce-t2","turns":["Where is A1001?"],"answer":{}}
`), 0o644); err != nil {
		t.Fatal(err)
	}
	for i, want := range []string{"merged 1 of 2 regression cases", "merged 0 of 2 regression cases"} {
		var stdout, stderr bytes.Buffer
		if code := Run(context.Background(), []string{"merge", "-into", golden, red}, &stdout, &stderr); code != 0 || !strings.Contains(stdout.String(), want) {
			t.Errorf("round %d: status %d, stdout %q, stderr %q; want %q", i, code, stdout.String(), stderr.String(), want)
		}
	}
	b, _ := os.ReadFile(golden)
	if n := strings.Count(string(b), "\n"); n != 2 || !strings.Contains(string(b), `"id":"ce-t1"`) {
		t.Errorf("golden set after merging twice:\n%s", b)
	}
	var stdout, stderr bytes.Buffer
	if code := Run(context.Background(), []string{"merge", red}, &stdout, &stderr); code != 2 || !strings.Contains(stderr.String(), "missing -into") {
		t.Errorf("no -into: status %d, stderr %q", code, stderr.String())
	}
}

// TestHumanCheck: -review writes 20 green head samples for this week's
// check; the person's file, passed as -reviewed, lands on the trend and in
// the gate line.
func TestHumanCheck(t *testing.T) {
	dir := t.TempDir()
	review, trend := filepath.Join(dir, "review.jsonl"), filepath.Join(dir, "trend.jsonl")
	var stdout, stderr bytes.Buffer
	run(context.Background(), []string{"-traces", sampleTraces, "-config", sampleConfig, "-review", review}, &stdout, &stderr, now)
	if !strings.Contains(stdout.String(), "human check: 20 green head samples in "+review) {
		t.Fatalf("stdout lacks the review line:\n%s\nstderr %s", stdout.String(), stderr.String())
	}
	b, err := os.ReadFile(review)
	if err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(strings.TrimSpace(string(b)), "\n")
	for i := range lines {
		verdict := `"ok":true`
		if i == 3 {
			verdict = `"ok":false,"note":"回答了别的订单"`
		}
		lines[i] = strings.Replace(lines[i], `"ok":null`, verdict, 1)
	}
	if err := os.WriteFile(review, []byte(strings.Join(lines, "\n")+"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	stdout.Reset()
	run(context.Background(), []string{"-traces", sampleTraces, "-config", sampleConfig, "-reviewed", review, "-trend", trend}, &stdout, &stderr, now)
	if !strings.Contains(stdout.String(), "a person found 1 of 20 green samples wrong") || !strings.Contains(stdout.String(), "20 samples checked, 1 found wrong") {
		t.Errorf("stdout lacks the human check:\n%s", stdout.String())
	}
	tb, _ := os.ReadFile(trend)
	if !strings.Contains(string(tb), `"human_check":{"source":"`+review+`","checked":20,"wrong":[`) {
		t.Errorf("trend lacks the human check:\n%s", tb)
	}
}
