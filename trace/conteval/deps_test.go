package conteval_test

import (
	"os/exec"
	"strings"
	"testing"
)

// TestDependencies keeps conteval light for the services that embed it:
// none of langchaingo's heavy packages (agents, chains, prompts, memory,
// providers, vector stores). It links badger, and through badger parts of
// OpenTelemetry, by way of the ledger it files red samples in.
func TestDependencies(t *testing.T) {
	if testing.Short() {
		t.Skip("runs go list")
	}
	out, err := exec.Command("go", "list", "-deps", "github.com/agentguard/agentguard/trace/conteval").CombinedOutput()
	if err != nil {
		t.Fatalf("go list: %v\n%s", err, out)
	}
	banned := []string{"github.com/tmc/langchaingo/agents", "github.com/tmc/langchaingo/chains",
		"github.com/tmc/langchaingo/prompts", "github.com/tmc/langchaingo/memory", "github.com/tmc/langchaingo/llms/openai",
		"github.com/tmc/langchaingo/llms/anthropic", "github.com/tmc/langchaingo/llms/ollama", "github.com/tmc/langchaingo/vectorstores"}
	for _, dep := range strings.Fields(string(out)) {
		for _, b := range banned {
			if dep == b || strings.HasPrefix(dep, b+"/") {
				t.Errorf("conteval depends on %s", dep)
			}
		}
	}
}
