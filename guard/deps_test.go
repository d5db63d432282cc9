package guard_test

import (
	"os/exec"
	"strings"
	"testing"
)

// layers gives each top folder of the module its height: a package may
// import only packages of its own folder or of a lower layer (STYLE.md, "The
// house"). memory and ledger share a height but do not import each other.
var layers = map[string]int{"trace": 0, "memory": 1, "ledger": 1, "guard": 2, "examples": 3}

// TestDependencyRules keeps the layers apart for every package of the
// module, not only the roots, reading the transitive dependencies that go
// list reports (tailscale's tstest/deptest is the model):
//   - nothing imports a higher layer, and memory and ledger not each other;
//   - only ledger/badgerstore and the programs link badger;
//   - only trace/otelexport and the programs link OpenTelemetry (badger
//     brings its API, not the SDK, into ledger/badgerstore);
//   - trace links no langchaingo; trace/lexicon imports only the standard
//     library; memory imports nothing of this module but trace and nothing
//     of langchaingo but llms;
//   - no library package drags in langchaingo's agents, chains, prompts,
//     memory, providers or vector stores;
//   - only guard/policy and what reads policy files (conteval, health and
//     healthtest, the programs) link cel-go and YAML: a program that imports guard
//     alone links neither.
func TestDependencyRules(t *testing.T) {
	if testing.Short() {
		t.Skip("runs go list")
	}
	const mod = "github.com/agentguard/agentguard/"
	const badger, otel, lc = "github.com/dgraph-io/badger", "go.opentelemetry.io/otel", "github.com/tmc/langchaingo"
	const cel, yaml = "cel.dev/cel-go", "go.yaml.in/yaml"
	readsPolicies := map[string]bool{"guard/policy": true, "guard/conteval": true, "guard/health": true, "guard/health/healthtest": true}
	heavy := []string{lc + "/agents", lc + "/chains", lc + "/prompts", lc + "/memory", lc + "/llms/openai",
		lc + "/llms/anthropic", lc + "/llms/ollama", lc + "/vectorstores"}
	out, err := exec.Command("go", "list", "-f", `{{.ImportPath}}{{range .Deps}} {{.}}{{end}}`, mod+"...").CombinedOutput()
	if err != nil {
		t.Fatalf("go list: %v\n%s", err, out)
	}
	under := func(dep, prefix string) bool { return dep == prefix || strings.HasPrefix(dep, prefix+"/") }
	checked := 0
	for line := range strings.Lines(string(out)) {
		f := strings.Fields(line)
		pkg, deps := strings.TrimPrefix(f[0], mod), f[1:]
		top, _, _ := strings.Cut(pkg, "/")
		if _, ok := layers[top]; !ok {
			t.Errorf("%s: top folder %q is no layer; add it to layers", pkg, top)
			continue
		}
		checked++
		if top == "examples" {
			continue
		}
		for _, dep := range deps {
			if rel, ok := strings.CutPrefix(dep, mod); ok {
				dtop, _, _ := strings.Cut(rel, "/")
				if layers[dtop] > layers[top] || (layers[dtop] == layers[top] && dtop != top) {
					t.Errorf("%s depends on %s, a higher or sibling layer", pkg, rel)
				}
			}
			switch {
			case under(dep, badger) && pkg != "ledger/badgerstore":
				t.Errorf("%s links badger (%s): only ledger/badgerstore may", pkg, dep)
			case under(dep, otel+"/sdk") && pkg != "trace/otelexport":
				t.Errorf("%s links the OpenTelemetry SDK (%s): only trace/otelexport may", pkg, dep)
			case under(dep, otel) && pkg != "trace/otelexport" && pkg != "ledger/badgerstore":
				t.Errorf("%s links OpenTelemetry (%s): only trace/otelexport, and badger's own tracing, may", pkg, dep)
			case pkg == "trace/lexicon" && strings.Contains(strings.SplitN(dep, "/", 2)[0], "."):
				t.Errorf("%s links %s: the lexicon imports only the standard library", pkg, dep)
			case (under(dep, cel) || under(dep, yaml+"/v3")) && !readsPolicies[pkg]:
				t.Errorf("%s links %s: only the packages that read policy files may", pkg, dep)
			case under(dep, lc) && top == "trace":
				t.Errorf("%s links langchaingo (%s): trace is the bottom layer", pkg, dep)
			case under(dep, lc) && top == "memory" && dep != lc+"/llms" && !strings.HasPrefix(dep, lc+"/llms/internal"):
				t.Errorf("%s links %s: memory uses only langchaingo's llms", pkg, dep)
			}
			for _, h := range heavy {
				if under(dep, h) {
					t.Errorf("%s links %s: keep it to the programs under examples/", pkg, dep)
				}
			}
		}
	}
	if checked < 10 {
		t.Errorf("checked %d packages; go list found fewer than expected", checked)
	}
}
