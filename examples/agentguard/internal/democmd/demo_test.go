package democmd

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/agentguard/agentguard/guard"
	"github.com/agentguard/agentguard/ledger"
	"github.com/agentguard/agentguard/ledger/badgerstore"
	"github.com/agentguard/agentguard/trace"
)

// TestDemo runs the demo end to end and checks what it promises: every
// failure mode it stages is caught by the rule meant for it, the traces and
// the ledger on disk agree with each other, and re-evaluating the written
// traces offline finds exactly the gate decisions recorded online.
func TestDemo(t *testing.T) {
	dir := t.TempDir()
	var out bytes.Buffer
	if err := run(context.Background(), dir, false, false, "", &out); err != nil {
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
		"c3-empty-retrieval":         guard.RuleSimilarity,
		"c4-loop":                    guard.RuleLoop,
		"c5-unknown-tool":            guard.RuleAllowList,
		"c7-tool-panic":              guard.RuleToolError,
		"c8-address-zh":              guard.RuleConfirmation,
		"c9-vague":                   guard.RuleIntent,
		"c10-empty-result":           guard.RuleEmptyResult,
		"c11-fabricated-section":     guard.RuleGrounding,
		"c12-wrong-recipient":        guard.RuleProvenance,
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
