package democmd

import (
	"bytes"
	"context"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/agentguard/agentguard/guard/rules"
	"github.com/agentguard/agentguard/ledger"
	"github.com/agentguard/agentguard/ledger/badgerstore"
	"github.com/agentguard/agentguard/trace"
	"github.com/agentguard/agentguard/trace/redact"
)

// TestDemo runs the demo end to end and checks what it promises: every
// failure mode it stages is caught by the rule meant for it, the traces and
// the ledger on disk agree with each other, and re-evaluating the written
// traces offline finds exactly the gate decisions recorded online. It
// runs with -raw: a de-identified trace cannot show that a phone number
// went to the wrong customer (see TestDemoDeidentified).
func TestDemo(t *testing.T) {
	dir := t.TempDir()
	var out bytes.Buffer
	if err := run(context.Background(), options{out: dir, raw: true}, &out); err != nil {
		t.Fatal(err)
	}
	f, err := os.Open(filepath.Join(dir, "traces.jsonl"))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	fired := map[string][]string{} // session -> rules
	var gates int
	g := demoGuard(nil, false)
	for tr, err := range trace.NewReader(f).All() {
		if err != nil {
			t.Fatal(err)
		}
		var online []string
		for _, s := range tr.Steps {
			if s.Kind == trace.KindGate {
				online = append(online, s.Finding.Rule)
				gates++
			}
		}
		fired[tr.SessionID] = online
		var offline []string
		for _, f := range g.Evaluate(tr).Findings {
			offline = append(offline, f.Rule)
		}
		if !slices.Equal(offline, online) {
			t.Errorf("%s: offline findings %v, online %v", tr.SessionID, offline, online)
		}
	}
	want := map[string]string{
		"c3-empty-retrieval":         rules.Similarity,
		"c4-loop":                    rules.Loop,
		"c5-unknown-tool":            rules.AllowList,
		"c7-tool-panic":              rules.ToolError,
		"c8-address-zh":              rules.Confirmation,
		"c9-vague":                   rules.Intent,
		"c10-empty-result":           rules.EmptyResult,
		"c11-fabricated-section":     rules.Grounding,
		"c12-wrong-recipient":        rules.Provenance,
		"c13-address-after-shipping": "address-only-while-pending",
		"c14-no-sms-zh":              "memory-prohibition",
	}
	for session, rule := range want {
		if !slices.Contains(fired[session], rule) {
			t.Errorf("%s: rules fired %v, want %s among them", session, fired[session], rule)
		}
	}
	for _, clean := range []string{"c1-track", "c2-policy", "c6-return"} {
		if len(fired[clean]) != 0 {
			t.Errorf("%s: clean conversation, but rules fired %v", clean, fired[clean])
		}
	}
	led, err := badgerstore.Open(filepath.Join(dir, "ledger"), badgerstore.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer led.Close()
	entries, err := led.Query(context.Background(), ledger.Query{})
	if err != nil {
		t.Fatal(err)
	}
	if len(entries) != gates {
		t.Errorf("ledger holds %d entries, traces %d gate steps", len(entries), gates)
	}
	if !strings.Contains(out.String(), "lessons (rule / root cause") {
		t.Errorf("no lessons in the output:\n%s", out.String())
	}
}

// TestDemoDeidentified runs the demo twice into one directory, as a user
// re-running it does: both runs' traces are kept, in the file and in the
// ledger's trace store, every entry's trace can be fetched, and no text
// the redactor would mask reaches the disk.
func TestDemoDeidentified(t *testing.T) {
	dir := t.TempDir()
	ctx := context.Background()
	for range 2 {
		if err := run(ctx, options{out: dir, quiet: true}, io.Discard); err != nil {
			t.Fatal(err)
		}
	}
	b, err := os.ReadFile(filepath.Join(dir, "traces.jsonl"))
	if err != nil {
		t.Fatal(err)
	}
	ids := map[string]bool{}
	for tr, err := range trace.NewReader(bytes.NewReader(b)).All() {
		if err != nil {
			t.Fatal(err)
		}
		ids[tr.ID] = true
		for i, u := range tr.UserTurns {
			if redact.String(u) != u {
				t.Errorf("%s: user turn %d not de-identified: %q", tr.ID, i, u)
			}
		}
		for _, s := range tr.Steps {
			for _, text := range []string{s.Args, s.Result, s.Error} {
				if redact.String(text) != text {
					t.Errorf("%s step %d: not de-identified: %q", tr.ID, s.Index, text)
				}
			}
		}
	}
	if len(ids) != 2*len(conversations) {
		t.Errorf("%d traces in traces.jsonl after two runs, want %d", len(ids), 2*len(conversations))
	}
	// The same conversations written raw hold personal data, so the check
	// above is not vacuous.
	raw := t.TempDir()
	if err := run(ctx, options{out: raw, quiet: true, raw: true}, io.Discard); err != nil {
		t.Fatal(err)
	}
	rb, err := os.ReadFile(filepath.Join(raw, "traces.jsonl"))
	if err != nil {
		t.Fatal(err)
	}
	personal := 0
	for tr, err := range trace.NewReader(bytes.NewReader(rb)).All() {
		if err != nil {
			t.Fatal(err)
		}
		for _, s := range tr.Steps {
			if redact.String(s.Result) != s.Result || redact.String(s.Args) != s.Args {
				personal++
			}
		}
	}
	if personal == 0 {
		t.Error("the raw traces hold nothing to de-identify")
	}

	led, err := badgerstore.Open(filepath.Join(dir, "ledger"), badgerstore.Options{ReadOnly: true})
	if err != nil {
		t.Fatal(err)
	}
	defer led.Close()
	entries, err := led.Query(ctx, ledger.Query{})
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range entries {
		if !ids[e.TraceID] {
			t.Errorf("entry %d: trace %s is not in traces.jsonl", e.Seq, e.TraceID)
		}
		tr, err := led.Trace(ctx, e.TraceID)
		if err != nil {
			t.Fatalf("entry %d: %v", e.Seq, err)
		}
		if e.Step >= len(tr.Steps) {
			t.Errorf("entry %d judged step %d; its trace has %d", e.Seq, e.Step, len(tr.Steps))
		}
	}
	if len(entries) == 0 || len(entries)%2 != 0 {
		t.Errorf("%d entries after two identical runs, want an even number", len(entries))
	}
}
