package guard_test

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strconv"
	"strings"
	"testing"
	"unicode"

	"github.com/agentguard/agentguard/guard"
	"github.com/agentguard/agentguard/trace"
)

// TestScenarioFilesHangTogether decodes every scenario file in
// testdata/scenarios and fails on any problem: a line the trace package
// cannot read or would write differently (a misspelt key), a label that is
// missing or malformed, or a trace whose steps do not hang together (a tool
// step no model step proposed, a tool missing from the policy, a turn index
// out of range). It logs the number of traces per file, expectation and
// language.
func TestScenarioFilesHangTogether(t *testing.T) {
	for _, err := range checkScenarios(t, filepath.Join("testdata", "scenarios")) {
		t.Error(err)
	}
}

// The label keys a scenario may carry in Trace.Meta.
const (
	keyExpect  = "label.expect"
	keyFamily  = "label.rule_family"
	keyLang    = "label.lang"
	keyChannel = "label.channel"
	keyWhy     = "label.why"
	keySteps   = "label.steps"
	keyAlso    = "label.also"
	keyTwin    = "label.twin"
	keyVariant = "label.variant"
)

var scenarioFamilyNames = []string{"false-claim", "cross-entity", "fabricated-id", "injected-argument", "destructive-unauthorized", "relay", "normalisation"}

type scenarioCount struct{ flagEN, flagZH, cleanEN, cleanZH int }

func checkScenarios(t *testing.T, dir string) []error {
	var errs []error
	fail := func(format string, a ...any) { errs = append(errs, fmt.Errorf(format, a...)) }

	pf, err := os.Open(filepath.Join(dir, "policy.json"))
	if err != nil {
		return []error{err}
	}
	cfg, err := loadPolicy(pf)
	pf.Close()
	if err != nil {
		return []error{fmt.Errorf("policy.json: %w", err)}
	}

	files, err := filepath.Glob(filepath.Join(dir, "*.jsonl"))
	if err != nil || len(files) == 0 {
		return []error{fmt.Errorf("no scenario files in %s (%v)", dir, err)}
	}
	sort.Strings(files)

	ids := map[string]string{} // trace id -> file
	var twins [][2]string      // (trace id, twin id)
	counts := map[string]*scenarioCount{}
	for _, path := range files {
		name := filepath.Base(path)
		c := &scenarioCount{}
		counts[name] = c
		f, err := os.Open(path)
		if err != nil {
			fail("%s: %v", name, err)
			continue
		}
		r := trace.NewReader(f)
		r.Source = name
		n := 0
		var canon bytes.Buffer // the traces as trace.Writer writes them
		w := trace.NewWriter(&canon)
		bad := false
		for tr, err := range r.All() {
			n++
			if err != nil {
				fail("%v", err)
				bad = true
				continue
			}
			if err := w.Write(tr); err != nil {
				fail("%s:%d: %v", name, n, err)
				bad = true
			}
			where := fmt.Sprintf("%s:%d (%s)", name, n, tr.ID)
			if prev, dup := ids[tr.ID]; dup {
				fail("%s: trace id also used in %s", where, prev)
			}
			ids[tr.ID] = name
			if tw := tr.Meta[keyTwin]; tw != "" {
				twins = append(twins, [2]string{tr.ID, tw})
			}
			for _, e := range checkScenarioLabels(tr) {
				fail("%s: %v", where, e)
			}
			for _, e := range checkScenarioSteps(tr, cfg.Tools) {
				fail("%s: %v", where, e)
			}
			switch tr.Meta[keyExpect] + "/" + tr.Meta[keyLang] {
			case "flag/en":
				c.flagEN++
			case "flag/zh":
				c.flagZH++
			case "clean/en":
				c.cleanEN++
			case "clean/zh":
				c.cleanZH++
			}
		}
		f.Close()
		if n == 0 {
			fail("%s: no traces", name)
		}
		// Every line must be exactly what trace.Writer writes for the trace
		// it decodes to: the reader ignores keys it does not know, so a
		// misspelt key would otherwise vanish without a word.
		if !bad {
			raw, err := os.ReadFile(path)
			if err != nil {
				fail("%s: %v", name, err)
				continue
			}
			got := nonBlankLines(raw)
			want := nonBlankLines(canon.Bytes())
			for i := range min(len(got), len(want)) {
				if !bytes.Equal(got[i], want[i]) {
					fail("%s:%d: not in the form trace.Writer writes (a misspelt or unknown key, or a hand edit); rewrite it with trace.Writer", name, i+1)
				}
			}
		}
	}
	for _, tw := range twins {
		if _, ok := ids[tw[1]]; !ok {
			fail("%s: twin %q does not exist", tw[0], tw[1])
		}
	}

	var table strings.Builder
	fmt.Fprintf(&table, "%-22s %8s %8s %9s %9s %6s\n", "file", "flag/en", "flag/zh", "clean/en", "clean/zh", "total")
	var tot scenarioCount
	for _, path := range files {
		name := filepath.Base(path)
		c := counts[name]
		fmt.Fprintf(&table, "%-22s %8d %8d %9d %9d %6d\n", name, c.flagEN, c.flagZH, c.cleanEN, c.cleanZH, c.flagEN+c.flagZH+c.cleanEN+c.cleanZH)
		tot.flagEN += c.flagEN
		tot.flagZH += c.flagZH
		tot.cleanEN += c.cleanEN
		tot.cleanZH += c.cleanZH
	}
	fmt.Fprintf(&table, "%-22s %8d %8d %9d %9d %6d", "all", tot.flagEN, tot.flagZH, tot.cleanEN, tot.cleanZH, tot.flagEN+tot.flagZH+tot.cleanEN+tot.cleanZH)
	t.Logf("scenarios:\n%s", table.String())
	return errs
}

// nonBlankLines splits b into lines, dropping a trailing "\r" and blank lines.
func nonBlankLines(b []byte) [][]byte {
	var out [][]byte
	for _, l := range bytes.Split(b, []byte("\n")) {
		l = bytes.TrimSuffix(l, []byte("\r"))
		if len(bytes.TrimSpace(l)) > 0 {
			out = append(out, l)
		}
	}
	return out
}

func checkScenarioLabels(t *trace.Trace) []error {
	var errs []error
	fail := func(format string, a ...any) { errs = append(errs, fmt.Errorf(format, a...)) }
	m := t.Meta
	for k := range m {
		switch k {
		case keyExpect, keyFamily, keyLang, keyChannel, keyWhy, keySteps, keyAlso, keyTwin, keyVariant:
		default:
			if strings.HasPrefix(k, "label.") {
				fail("unknown label key %q", k)
			}
		}
	}
	expect := m[keyExpect]
	if expect != "flag" && expect != "clean" {
		fail("%s is %q, want flag or clean", keyExpect, expect)
	}
	if !slices.Contains(scenarioFamilyNames, m[keyFamily]) {
		fail("%s is %q, want one of %v", keyFamily, m[keyFamily], scenarioFamilyNames)
	}
	if also := m[keyAlso]; also != "" {
		for _, f := range strings.Split(also, ",") {
			if !slices.Contains(scenarioFamilyNames, f) {
				fail("%s names unknown family %q", keyAlso, f)
			}
		}
	}
	lang := m[keyLang]
	if lang != "en" && lang != "zh" {
		fail("%s is %q, want en or zh", keyLang, lang)
	}
	if strings.TrimSpace(m[keyWhy]) == "" {
		fail("%s is empty", keyWhy)
	}
	// The language label must match what the user wrote.
	han := false
	for _, u := range t.UserTurns {
		han = han || strings.ContainsFunc(u, func(r rune) bool { return unicode.Is(unicode.Han, r) })
	}
	if lang == "zh" && !han {
		fail("labelled zh but no user turn holds Chinese")
	}
	if lang == "en" && han {
		fail("labelled en but a user turn holds Chinese")
	}
	steps := m[keySteps]
	switch {
	case expect == "flag" && steps == "":
		fail("a flag case needs %s", keySteps)
	case expect == "clean" && steps != "":
		fail("a clean case must not have %s", keySteps)
	}
	if steps != "" {
		for _, s := range strings.Split(steps, ",") {
			i, err := strconv.Atoi(s)
			if err != nil || i < 0 || i >= len(t.Steps) {
				fail("%s holds %q, not a step index", keySteps, s)
				continue
			}
			if k := t.Steps[i].Kind; k != trace.KindTool && k != trace.KindModel {
				fail("%s names step %d of kind %s; only model and tool steps are judged", keySteps, i, k)
			}
		}
	}
	return errs
}

func checkScenarioSteps(t *trace.Trace, policy map[string]guard.ToolPolicy) []error {
	var errs []error
	fail := func(format string, a ...any) { errs = append(errs, fmt.Errorf(format, a...)) }
	if len(t.UserTurns) == 0 {
		fail("no user turns")
	}
	offered := map[string]bool{}
	for _, ts := range t.Tools {
		offered[ts.Name] = true
	}
	proposed := map[string]trace.Call{} // call id -> call
	turn := -1
	for i, s := range t.Steps {
		if s.Turn < turn || s.Turn >= len(t.UserTurns) {
			fail("step %d: turn %d out of order or range", i, s.Turn)
		}
		turn = s.Turn
		switch s.Kind {
		case trace.KindModel:
			for _, c := range s.Calls {
				if c.ID == "" {
					fail("step %d: proposed call without id", i)
				}
				proposed[c.ID] = c
				if !json.Valid([]byte(c.Args)) {
					fail("step %d: call args are not JSON", i)
				}
			}
		case trace.KindTool:
			c, ok := proposed[s.CallID]
			if !ok {
				fail("step %d: tool step answers no proposed call (%q)", i, s.CallID)
			} else if c.Name != s.Name || c.Args != s.Args {
				fail("step %d: tool step differs from the call it answers", i)
			}
			delete(proposed, s.CallID)
			if !offered[s.Name] {
				fail("step %d: tool %q not in trace.Tools", i, s.Name)
			}
			if _, ok := policy[s.Name]; !ok {
				fail("step %d: tool %q not in policy.json", i, s.Name)
			}
			if !json.Valid([]byte(s.Args)) {
				fail("step %d: args are not JSON", i)
			}
			if s.Blocked {
				g := i + 1
				if g >= len(t.Steps) || t.Steps[g].Kind != trace.KindGate || t.Steps[g].Finding == nil || t.Steps[g].Finding.Step != i {
					fail("step %d: blocked tool step not followed by its gate step", i)
				}
			}
		case trace.KindRetrieval:
			if len(s.DocIDs) == 0 || len(s.DocIDs) != len(s.Scores) {
				fail("step %d: retrieval without matching doc ids and scores", i)
			}
		case trace.KindGate:
			if s.Finding == nil || s.Finding.Step >= i {
				fail("step %d: gate step without a finding about an earlier step", i)
			}
		}
	}
	if n := len(t.Steps); n == 0 || t.Steps[n-1].Kind != trace.KindModel || t.Steps[n-1].Result == "" || len(t.Steps[n-1].Calls) > 0 {
		fail("the last step is not the final answer")
	}
	for _, ts := range t.Tools {
		if _, ok := policy[ts.Name]; !ok {
			fail("offered tool %q not in policy.json", ts.Name)
		}
	}
	return errs
}
