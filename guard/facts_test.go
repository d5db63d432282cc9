package guard_test

import (
	"fmt"
	"path/filepath"
	"sort"
	"strings"
	"testing"

	"github.com/agentguard/agentguard/guard"
	"github.com/agentguard/agentguard/guard/internal/testkit"
	"github.com/agentguard/agentguard/guard/policy"
	"github.com/agentguard/agentguard/trace"
)

// TestEveryFindingHasFacts holds every finding of the built-in rules to
// carry the facts it rests on, so that a reviewer reading
// `agentguard evaluate -explain` can uphold or reject it without opening
// the trace: on every run of the shared corpus, under the default guard,
// the autonomous profile and the shipped policies, and on the scenario
// files. A fact must say where it is read from and what is there.
func TestEveryFindingHasFacts(t *testing.T) {
	var runs []testkit.Run
	if _, err := testkit.SharedCorpus(); err != nil {
		t.Logf("shared corpus not read (%v): the scenario files only", err)
	} else {
		for _, name := range []string{"agentdojo.jsonl", "agentdojo_models.jsonl", "taubench_airline.jsonl", "tau2_retail.jsonl", "tau2_telecom.jsonl", "tau2_models.jsonl"} {
			runs = append(runs, testkit.LoadCorpus(t, name)...)
		}
	}
	scenarios, err := filepath.Glob(filepath.Join("testdata", "scenarios", "*.jsonl"))
	if err != nil || len(scenarios) == 0 {
		t.Fatalf("no scenario files: %v", err)
	}
	var traces []*trace.Trace
	for _, r := range runs {
		traces = append(traces, r.Trace)
	}
	for _, f := range scenarios {
		for _, r := range testkit.LoadFile(t, f) {
			traces = append(traces, r.Trace)
		}
	}
	guards := map[string]*guard.Guard{
		"default":    guard.New(guard.Config{}),
		"autonomous": guard.New(guard.Config{Gates: guard.Gates{Profile: guard.ProfileAutonomous}}),
	}
	policies, err := filepath.Glob(filepath.Join("..", "examples", "policies", "*.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	for _, name := range policies {
		p, err := policy.Open(name)
		if err != nil {
			t.Fatal(err)
		}
		guards[filepath.Base(name)] = guard.New(p.Config())
	}
	missing := map[string]int{} // rule → findings without facts
	var example []string
	findings := 0
	for setup, g := range guards {
		for _, tr := range traces {
			for _, f := range g.Evaluate(tr).Findings {
				findings++
				if ok, why := factful(f); !ok {
					missing[f.Rule]++
					if len(example) < 5 {
						example = append(example, fmt.Sprintf("%s, %s step %d: %s: %s (%s)", setup, tr.ID, f.Step, f.Rule, f.Message, why))
					}
				}
			}
		}
	}
	if len(missing) > 0 {
		var rules []string
		for r, n := range missing {
			rules = append(rules, fmt.Sprintf("%s %d", r, n))
		}
		sort.Strings(rules)
		t.Errorf("findings without facts, by rule: %s\n  %s", strings.Join(rules, ", "), strings.Join(example, "\n  "))
	}
	t.Logf("%d findings over %d traces and %d configurations, each with its facts", findings, len(traces), len(guards))
}

// factful reports whether every fact of f says where it is read from and
// what is there, and f has one at least.
func factful(f trace.Finding) (bool, string) {
	if len(f.Facts) == 0 {
		return false, "no facts"
	}
	for _, fact := range f.Facts {
		switch {
		case fact.Kind == "":
			return false, "a fact of no kind"
		case fact.Step < 0 && fact.Kind != trace.FactUser && fact.Kind != trace.FactCard && fact.Kind != trace.FactPolicy && fact.Kind != trace.FactAbsent:
			return false, fmt.Sprintf("a %s fact of no step", fact.Kind)
		case fact.Text == "" && fact.Where == "" && fact.Says == "":
			return false, fmt.Sprintf("an empty %s fact", fact.Kind)
		}
	}
	return true, ""
}
