package guard_test

import (
	"os/exec"
	"strings"
	"testing"
)

// TestDependencyRules keeps the rooms apart: guard, memory and trace never
// link badger or OpenTelemetry, trace and memory never import guard or
// ledger, and no core package drags in langchaingo's agents, chains,
// prompts, memory or provider packages.
func TestDependencyRules(t *testing.T) {
	if testing.Short() {
		t.Skip("runs go list")
	}
	const mod = "github.com/agentguard/agentguard/"
	banned := map[string][]string{
		"guard":  {"github.com/dgraph-io/badger", "go.opentelemetry.io/otel", mod + "ledger"},
		"memory": {"github.com/dgraph-io/badger", "go.opentelemetry.io/otel", mod + "guard", mod + "ledger"},
		"trace":  {"github.com/dgraph-io/badger", "go.opentelemetry.io/otel", mod + "guard", mod + "ledger", mod + "memory", "github.com/tmc/langchaingo"},
		"ledger": {mod + "guard", mod + "memory"},
	}
	heavy := []string{"github.com/tmc/langchaingo/agents", "github.com/tmc/langchaingo/chains", "github.com/tmc/langchaingo/prompts",
		"github.com/tmc/langchaingo/memory", "github.com/tmc/langchaingo/llms/openai", "github.com/tmc/langchaingo/vectorstores"}
	for pkg, bad := range banned {
		t.Run(pkg, func(t *testing.T) {
			out, err := exec.Command("go", "list", "-deps", mod+pkg).CombinedOutput()
			if err != nil {
				t.Fatalf("go list: %v\n%s", err, out)
			}
			for _, dep := range strings.Fields(string(out)) {
				for _, b := range append(bad, heavy...) {
					if dep == b || strings.HasPrefix(dep, b+"/") {
						t.Errorf("%s depends on %s", pkg, dep)
					}
				}
			}
		})
	}
}
