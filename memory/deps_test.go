package memory

import (
	"os/exec"
	"strings"
	"testing"
)

// TestDependencies keeps package memory in its room: of this module it
// imports trace only, and of langchaingo the llms package only, never
// guard, ledger, badger, OpenTelemetry or langchaingo's agents, chains,
// prompts and memory (guard's deps_test checks the same from above).
func TestDependencies(t *testing.T) {
	if testing.Short() {
		t.Skip("runs go list")
	}
	out, err := exec.Command("go", "list", "-f", `{{join .Imports "\n"}}`, ".").CombinedOutput()
	if err != nil {
		t.Fatalf("go list: %v\n%s", err, out)
	}
	const mod = "github.com/agentguard/agentguard/"
	for _, imp := range strings.Fields(string(out)) {
		switch {
		case !strings.Contains(imp, "."): // the standard library
		case imp == mod+"trace", imp == "github.com/tmc/langchaingo/llms":
		default:
			t.Errorf("memory imports %s", imp)
		}
	}
	deps, err := exec.Command("go", "list", "-deps", ".").CombinedOutput()
	if err != nil {
		t.Fatalf("go list -deps: %v\n%s", err, deps)
	}
	banned := []string{mod + "guard", mod + "ledger", "github.com/dgraph-io/badger", "go.opentelemetry.io/otel",
		"github.com/tmc/langchaingo/agents", "github.com/tmc/langchaingo/chains", "github.com/tmc/langchaingo/prompts",
		"github.com/tmc/langchaingo/memory", "github.com/tmc/langchaingo/llms/openai", "github.com/tmc/langchaingo/vectorstores"}
	for _, dep := range strings.Fields(string(deps)) {
		for _, b := range banned {
			if dep == b || strings.HasPrefix(dep, b+"/") {
				t.Errorf("memory depends on %s", dep)
			}
		}
	}
}
