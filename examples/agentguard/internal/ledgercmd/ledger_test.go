package ledgercmd

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
	"github.com/agentguard/agentguard/examples/agentguard/internal/democmd"
	"github.com/agentguard/agentguard/guard/replay"
	"github.com/agentguard/agentguard/ledger"
	"github.com/agentguard/agentguard/ledger/badgerstore"
	"github.com/agentguard/agentguard/trace/redact"
)

// demoLedger runs the demo into a fresh directory and returns its ledger.
func demoLedger(t *testing.T, args ...string) string {
	t.Helper()
	dir := t.TempDir()
	var errs bytes.Buffer
	if code := democmd.Run(context.Background(), append([]string{"-quiet", "-out", dir}, args...), &bytes.Buffer{}, &errs); code != 0 {
		t.Fatalf("demo: exit %d\n%s", code, errs.String())
	}
	return filepath.Join(dir, "ledger")
}

// ledgerCmd runs the verb and returns its stdout.
func ledgerCmd(t *testing.T, want int, args ...string) string {
	t.Helper()
	var out, errs bytes.Buffer
	if code := Run(context.Background(), args, &out, &errs); code != want {
		t.Fatalf("ledger %s: exit %d, want %d\n%s", strings.Join(args, " "), code, want, errs.String())
	}
	return out.String()
}

func lessonsOf(t *testing.T, args ...string) map[string]ledger.Lesson {
	t.Helper()
	var ls []ledger.Lesson
	if err := json.Unmarshal([]byte(ledgerCmd(t, 0, append([]string{"lessons", "-json"}, args...)...)), &ls); err != nil {
		t.Fatal(err)
	}
	m := map[string]ledger.Lesson{}
	for _, l := range ls {
		if l.Count == 0 || len(l.Examples) == 0 || l.FirstSeen.After(l.LastSeen) {
			t.Errorf("lesson %+v", l)
		}
		m[l.Rule+"/"+l.Tag] = l
	}
	return m
}

// TestSeveralLedgers: lessons, query and export over two ledgers (two
// replicas) read them as one.
func TestSeveralLedgers(t *testing.T) {
	a, b := demoLedger(t), demoLedger(t)
	one, both := lessonsOf(t, a), lessonsOf(t, a, b)
	if len(one) == 0 || len(both) != len(one) {
		t.Fatalf("%d lessons in one ledger, %d in both", len(one), len(both))
	}
	for k, l := range one {
		m := both[k]
		if m.Count != 2*l.Count || !slices.Contains(m.Examples, l.Examples[0]) || m.FirstSeen.After(l.FirstSeen) {
			t.Errorf("%s: one ledger %+v, both %+v", k, l, m)
		}
	}

	// Merging the stores' lessons gives what learning from all their
	// entries gives.
	var stores []store
	for _, d := range []string{a, b} {
		st, err := badgerstore.Open(d, badgerstore.Options{ReadOnly: true})
		if err != nil {
			t.Fatal(err)
		}
		stores = append(stores, st)
	}
	ctx := context.Background()
	merged, err := mergedLessons(ctx, stores, ledger.Query{})
	if err != nil {
		t.Fatal(err)
	}
	learned, err := ledger.Learn(entries(ctx, stores, ledger.Query{}), ledger.Query{})
	if err != nil {
		t.Fatal(err)
	}
	for _, st := range stores {
		st.Close()
	}
	if len(merged) != len(learned) {
		t.Fatalf("%d lessons merged, %d learned", len(merged), len(learned))
	}
	for i, m := range merged {
		l := learned[i]
		if m.Rule != l.Rule || m.Tag != l.Tag || m.Count != l.Count || !m.FirstSeen.Equal(l.FirstSeen) || !m.LastSeen.Equal(l.LastSeen) || len(m.Examples) != len(l.Examples) {
			t.Errorf("lesson %d: merged %+v, learned %+v", i, m, l)
		}
	}

	lines := strings.Split(strings.TrimSpace(ledgerCmd(t, 0, "export", a, b)), "\n")
	var last ledger.Entry
	for i, line := range lines {
		var e ledger.Entry
		if err := json.Unmarshal([]byte(line), &e); err != nil {
			t.Fatal(err)
		}
		if i > 0 && e.Time.Before(last.Time) {
			t.Errorf("entry %d is older than the one before", i)
		}
		last = e
	}
	if n := strings.Count(ledgerCmd(t, 0, "export", a), "\n"); len(lines) != 2*n {
		t.Errorf("export of both: %d entries, of one: %d", len(lines), n)
	}

	// Filters.
	q := ledgerCmd(t, 0, "query", "-json", "-rule", "confirmation", a, b)
	if n := strings.Count(q, "\n"); n != both["confirmation/unconfirmed-write"].Count {
		t.Errorf("query -rule confirmation: %d entries, lessons count %d", n, both["confirmation/unconfirmed-write"].Count)
	}
	if q := ledgerCmd(t, 0, "query", "-json", "-limit", "2", a, b); strings.Count(q, "\n") != 2 {
		t.Errorf("-limit 2:\n%s", q)
	}
	if q := ledgerCmd(t, 0, "query", "-json", "-since", "2h", "-until", "1h", a); q != "" {
		t.Errorf("an hour ago:\n%s", q)
	}
	ledgerCmd(t, cli.ExitUsage, "query", "-since", "yesterday", a)
	ledgerCmd(t, cli.ExitUsage, "query", "-limit", "-1", a)
}

// TestCases builds cases from a ledger, with and without filters.
func TestCases(t *testing.T) {
	led := demoLedger(t)
	all := readCases(t, ledgerCmd(t, 0, "cases", led))
	confirm := readCases(t, ledgerCmd(t, 0, "cases", "-rule", "confirmation", led))
	if len(confirm) == 0 || len(confirm) >= len(all) {
		t.Fatalf("%d cases, %d of them for confirmation", len(all), len(confirm))
	}
	for _, c := range confirm {
		// A write the guard asked to confirm: the tool must not run in
		// that turn. The question's wording is not checked: "请回答“是”或
		// “否”。" asks without a "？". Nobody has verified the case yet.
		if !slices.Contains(c.Tags, "ledger_confirmation") || len(c.Constraints) != 1 || c.Constraints[0].NoTool != "update_address" ||
			len(c.Answer.Must) != 0 || c.Category != replay.Boundary || c.LastVerified != "" {
			t.Errorf("case %+v", c)
		}
	}
	for _, c := range all {
		for _, u := range c.Turns {
			if redact.String(u) != u {
				t.Errorf("case %s: turn %q not de-identified", c.ID, u)
			}
		}
		if !slices.Contains(c.Tags, TagUnverified) || !slices.Contains(c.Tags, TagLedger) {
			t.Errorf("case %s tags %v", c.ID, c.Tags)
		}
		if slices.Contains(c.Tags, "ledger_loop") && (c.MaxToolCalls == 0 || len(c.Constraints) != 0) {
			// The loop: the tool is fine, the repeats are not.
			t.Errorf("loop case: budget %d, constraints %+v", c.MaxToolCalls, c.Constraints)
		}
	}
	ledgerCmd(t, cli.ExitUsage, "cases", "-since", "2099-01-01", led) // no entry: no case
}

func readCases(t *testing.T, s string) []replay.Case {
	t.Helper()
	cs, err := replay.LoadCases(strings.NewReader(s), "cases")
	if err != nil {
		t.Fatal(err)
	}
	return cs
}

// TestExportDeidentifies: a ledger written raw is de-identified on export
// unless -raw.
func TestExportDeidentifies(t *testing.T) {
	led := demoLedger(t, "-raw")
	out := ledgerCmd(t, 0, "export", led)
	for _, line := range strings.Split(strings.TrimSpace(out), "\n") {
		var e ledger.Entry
		if err := json.Unmarshal([]byte(line), &e); err != nil {
			t.Fatal(err)
		}
		for _, text := range []string{e.Message, e.Question, e.Evidence} {
			if redact.String(text) != text {
				t.Errorf("entry %d holds text the redactor masks: %q", e.Seq, text)
			}
		}
	}
	raw := ledgerCmd(t, 0, "export", "-raw", led)
	if raw == out || strings.Count(raw, "\n") != strings.Count(out, "\n") {
		t.Errorf("-raw: %d entries, default %d; the same text: %v", strings.Count(raw, "\n"), strings.Count(out, "\n"), raw == out)
	}
}

// TestCollectorFile reads the file a collector wrote for three replicas
// (trace/testdata/otlp_collector.jsonl, see examples/fleet) as a ledger:
// lessons, query and trace read it as they read a ledger directory, and a
// file that is not such an export is refused with a reason.
func TestCollectorFile(t *testing.T) {
	file := filepath.Join("..", "..", "..", "..", "trace", "testdata", "otlp_collector.jsonl")
	ls := lessonsOf(t, file)
	total := 0
	for _, l := range ls {
		total += l.Count
	}
	var entries []ledger.Entry
	for _, line := range strings.Split(strings.TrimSpace(ledgerCmd(t, 0, "query", "-json", file)), "\n") {
		var e ledger.Entry
		if err := json.Unmarshal([]byte(line), &e); err != nil {
			t.Fatal(err)
		}
		entries = append(entries, e)
	}
	if len(ls) == 0 || len(entries) < len(ls) || total < len(entries) {
		t.Fatalf("%d lessons counting %d, %d entries", len(ls), total, len(entries))
	}
	tr := ledgerCmd(t, 0, "trace", file, entries[0].TraceID)
	if !strings.Contains(tr, entries[0].TraceID) || !strings.Contains(tr, `"kind":"gate"`) {
		t.Errorf("trace %s: %.300s", entries[0].TraceID, tr)
	}
	var errs bytes.Buffer
	notOTLP := filepath.Join(t.TempDir(), "notes.jsonl")
	os.WriteFile(notOTLP, []byte(`{"note":"not an export"}`+"\n"), 0o644)
	if code := Run(context.Background(), []string{"lessons", notOTLP}, &bytes.Buffer{}, &errs); code == 0 || !strings.Contains(errs.String(), "not an OTLP JSON export") {
		t.Errorf("a file that is no OTLP export: exit %d, %s", code, errs.String())
	}
}
