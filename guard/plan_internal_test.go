package guard

import (
	"os"
	"path/filepath"
	"testing"
	"unsafe"

	"github.com/agentguard/agentguard/trace"
)

// A tool's plan leaves out only rules that have nothing to say: on every
// step of the recorded scenarios, judged against the trace before it, each
// rule a plan (for a tool call) or the step rules (for any other step)
// leaves out finds nothing, under configurations that change which rules
// a tool's calls need.
func TestPlanLeavesOutOnlySilentRules(t *testing.T) {
	files, err := filepath.Glob(filepath.Join("testdata", "scenarios", "*.jsonl"))
	if err != nil || len(files) == 0 {
		t.Fatalf("no scenarios: %v", err)
	}
	var traces []*trace.Trace
	for _, name := range files {
		f, err := os.Open(name)
		if err != nil {
			t.Fatal(err)
		}
		for tr, err := range trace.NewReader(f).All() {
			if err != nil {
				t.Fatalf("%s: %v", name, err)
			}
			traces = append(traces, tr)
		}
		f.Close()
	}
	for _, tc := range []struct {
		name string
		cfg  Config
	}{
		{"default", Config{}},
		{"confirm writes", Config{Gates: Gates{ConfirmWrites: true}}},
		{"no loop or step limit", Config{Gates: Gates{LoopLimit: -1, MaxSteps: -1}}},
		{"policies", Config{Tools: map[string]ToolPolicy{
			"get_order":    {Effect: EffectWrite, Confirm: true},
			"cancel_order": {Effect: EffectRead},
			"send_email":   {Confirm: true, Retrieval: true},
		}}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			g := New(tc.cfg)
			steps, left := 0, 0
			for _, tr := range traces {
				for i, s := range tr.Steps {
					before := *tr
					before.Steps = tr.Steps[:i]
					kept := g.stepRules
					if s.Kind == trace.KindTool {
						kept = g.plan(s.Name).rules
					}
					for _, r := range g.rules {
						if containsRule(kept, r) {
							continue
						}
						left++
						if ff := r.Check(&before, s); len(ff) > 0 {
							t.Errorf("%s step %d (%s %q): %s, left out, found %v", tr.ID, i, s.Kind, s.Name, r.Name(), ff)
						}
					}
					steps++
				}
			}
			if kept := len(g.plan("get_order").rules); kept >= len(g.rules) {
				t.Errorf("the plan of a read runs %d of %d rules", kept, len(g.rules))
			}
			if steps == 0 || left == 0 {
				t.Fatalf("judged %d steps, %d rules left out: nothing tested", steps, left)
			}
		})
	}
}

// containsRule reports whether rules holds r itself: the same value, not
// an equal one (the guard's slices share each rule's interface value).
func containsRule(rules []Rule, r Rule) bool {
	for _, x := range rules {
		if ifaceData(x) == ifaceData(r) {
			return true
		}
	}
	return false
}

// ifaceData is the data word of an interface value.
func ifaceData(r Rule) unsafe.Pointer { return (*[2]unsafe.Pointer)(unsafe.Pointer(&r))[1] }
