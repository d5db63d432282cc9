package guard_test

import (
	"slices"
	"testing"

	"github.com/agentguard/agentguard/guard"
	"github.com/agentguard/agentguard/guard/internal/rulekit"
	"github.com/agentguard/agentguard/guard/rules"
)

// TestBuiltinRulesAreTheGuardsRules keeps guard/rules' catalogue true: a
// default guard files findings under exactly the names rules.Builtin
// lists, in that order, and each can be disabled by that name.
func TestBuiltinRulesAreTheGuardsRules(t *testing.T) {
	var names []string
	for _, r := range guard.New(guard.Config{}).Rules() {
		names = append(names, rulekit.NamesOf(r)...)
	}
	if !slices.Equal(names, rules.Builtin()) {
		t.Errorf("a default guard's rules file %q\nrules.Builtin() lists   %q", names, rules.Builtin())
	}
	for _, name := range rules.Builtin() {
		g := guard.New(guard.Config{Disable: []string{name}})
		for _, r := range g.Rules() {
			if ns := rulekit.NamesOf(r); len(ns) == 1 && ns[0] == name {
				t.Errorf("Disable %q leaves its rule running", name)
			}
		}
	}
	if got := guard.New(guard.Config{Disable: rules.Builtin()}).Rules(); len(got) != 0 {
		t.Errorf("disabling every built-in rule leaves %d running", len(got))
	}
}
