package guard_test

import (
	"os/exec"
	"slices"
	"strings"
	"testing"
)

// TestDependencyRules keeps the rooms apart, for the whole module: guard,
// memory and trace never link badger or OpenTelemetry; trace and memory
// never import guard or ledger; memory imports nothing of this module but
// trace and nothing of langchaingo but llms; only trace/otelexport links
// OpenTelemetry's SDK; and no library package drags in langchaingo's
// agents, chains, prompts, memory, providers or vector stores.
func TestDependencyRules(t *testing.T) {
	if testing.Short() {
		t.Skip("runs go list")
	}
	const mod = "github.com/agentguard/agentguard/"
	const badger, otel, otelSDK = "github.com/dgraph-io/badger", "go.opentelemetry.io/otel", "go.opentelemetry.io/otel/sdk"
	heavy := []string{"github.com/tmc/langchaingo/agents", "github.com/tmc/langchaingo/chains", "github.com/tmc/langchaingo/prompts",
		"github.com/tmc/langchaingo/memory", "github.com/tmc/langchaingo/llms/openai", "github.com/tmc/langchaingo/llms/anthropic",
		"github.com/tmc/langchaingo/llms/ollama", "github.com/tmc/langchaingo/vectorstores"}
	tests := []struct {
		pkg    string
		banned []string // never among the package's dependencies
		only   []string // when set, the only imports of this module and langchaingo allowed
	}{
		{pkg: "guard", banned: []string{badger, otel, mod + "ledger"}},
		{pkg: "memory", banned: []string{badger, otel, mod + "guard", mod + "ledger"}, only: []string{mod + "trace", "github.com/tmc/langchaingo/llms"}},
		{pkg: "trace", banned: []string{badger, otel, mod + "guard", mod + "ledger", mod + "memory", "github.com/tmc/langchaingo"}},
		{pkg: "ledger", banned: []string{mod + "guard", mod + "memory", otelSDK}},
		{pkg: "trace/replay", banned: []string{badger, otelSDK}},
		{pkg: "trace/conteval", banned: []string{otelSDK}},
		{pkg: "ledger/health", banned: []string{otelSDK}},
		{pkg: "trace/otelexport", banned: []string{badger, mod + "guard", mod + "ledger"}},
		{pkg: "trace/redact", banned: []string{badger, otel, mod + "guard", mod + "ledger", mod + "memory", "github.com/tmc/langchaingo"}},
	}
	for _, tt := range tests {
		t.Run(tt.pkg, func(t *testing.T) {
			out, err := exec.Command("go", "list", "-deps", mod+tt.pkg).CombinedOutput()
			if err != nil {
				t.Fatalf("go list: %v\n%s", err, out)
			}
			for _, dep := range strings.Fields(string(out)) {
				for _, b := range append(tt.banned, heavy...) {
					if dep == b || strings.HasPrefix(dep, b+"/") {
						t.Errorf("%s depends on %s", tt.pkg, dep)
					}
				}
			}
			if tt.only == nil {
				return
			}
			imports, err := exec.Command("go", "list", "-f", `{{join .Imports "\n"}}`, mod+tt.pkg).CombinedOutput()
			if err != nil {
				t.Fatalf("go list: %v\n%s", err, imports)
			}
			for _, imp := range strings.Fields(string(imports)) {
				if (strings.HasPrefix(imp, mod) || strings.HasPrefix(imp, "github.com/tmc/langchaingo")) && !slices.Contains(tt.only, imp) {
					t.Errorf("%s imports %s", tt.pkg, imp)
				}
			}
		})
	}
}
