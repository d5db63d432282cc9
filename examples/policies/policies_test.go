// The tests of this package check the worked policy files of this folder: each
// loads, its own tests pass, and customer-service.yaml, evaluated offline over the demo agent's
// own traces, finds what the demo's guard found online. The τ policies and
// the AgentDojo profiles are measured over the shared corpus by the guard
// package's tests (guard/policy_corpus_test.go), which own the corpus
// loader.
package policies_test

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"testing"

	"github.com/agentguard/agentguard/guard"
	"github.com/agentguard/agentguard/guard/policy"
	"github.com/agentguard/agentguard/trace"
)

func TestPoliciesLoad(t *testing.T) {
	files, err := filepath.Glob("*.yaml")
	if err != nil || len(files) < 7 {
		t.Fatalf("policies: %v, %v", files, err)
	}
	for _, f := range files {
		t.Run(f, func(t *testing.T) {
			p, err := policy.Open(f)
			if err != nil {
				t.Fatal(err)
			}
			if g := guard.New(p.Config()); len(g.Rules()) == 0 {
				t.Error("a guard with no rules")
			}
		})
	}
}

// TestPolicyTests runs the unit tests every worked policy holds (tests in
// policy.md; agentguard policy test runs the same): each file has tests,
// and they pass.
func TestPolicyTests(t *testing.T) {
	files, err := filepath.Glob("*.yaml")
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range files {
		t.Run(f, func(t *testing.T) {
			p, err := policy.Open(f)
			if err != nil {
				t.Fatal(err)
			}
			rs := p.RunTests()
			if len(rs) == 0 {
				t.Fatal("no tests: every worked policy tests its checks")
			}
			for _, r := range rs {
				if !r.Passed() {
					t.Error(r)
				}
			}
		})
	}
}

// TestCustomerServiceOffline runs the demo agent (its scripted model), then
// evaluates the traces it recorded with customer-service.yaml: every
// finding its guard recorded online — handoffs, refusals, clarifications,
// approvals, the memory card's — must be found again offline, at the same
// step, under the same rule. Run recorded through approvals and resumed
// calls hold gate steps for calls that never ran; those stay with the
// trace, since Evaluate judges what was recorded.
func TestCustomerServiceOffline(t *testing.T) {
	if testing.Short() {
		t.Skip("builds and runs the demo program")
	}
	dir := t.TempDir()
	cmd := exec.Command("go", "run", "../agentguard", "demo", "-out", dir, "-quiet", "-raw")
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("demo: %v\n%s", err, out)
	}
	f, err := os.Open(filepath.Join(dir, "traces.jsonl"))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	p, err := policy.Open("customer-service.yaml")
	if err != nil {
		t.Fatal(err)
	}
	g := guard.New(p.Config())
	g0 := guard.New(guard.Config{}) // without the file: the default guard
	var online, found, found0 int
	for tr, err := range trace.NewReader(f).All() {
		if err != nil {
			t.Fatal(err)
		}
		offline, byDefault := map[string]bool{}, map[string]bool{}
		for _, fd := range g.Evaluate(tr).Findings {
			offline[fmt.Sprintf("%d:%s", fd.Step, fd.Rule)] = true
		}
		for _, fd := range g0.Evaluate(tr).Findings {
			byDefault[fmt.Sprintf("%d:%s", fd.Step, fd.Rule)] = true
		}
		var missing []string
		for _, s := range tr.Steps {
			if s.Kind != trace.KindGate || s.Finding == nil {
				continue
			}
			key := fmt.Sprintf("%d:%s", s.Finding.Step, s.Finding.Rule)
			online++
			if byDefault[key] {
				found0++
			}
			if offline[key] {
				found++
				continue
			}
			missing = append(missing, key+" ("+s.Finding.Message+")")
		}
		slices.Sort(missing)
		for _, m := range slices.Compact(missing) {
			t.Logf("%s: found online, not offline: %s", tr.ID, m)
		}
	}
	t.Logf("online findings found again offline: %d of %d with the policy file, %d with the default guard", found, online, found0)
	if online == 0 {
		t.Fatal("the demo recorded no finding")
	}
	if found < online {
		t.Errorf("offline evaluation found %d of the %d online findings", found, online)
	}
}
