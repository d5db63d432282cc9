package policy_test

import (
	"fmt"
	"os"
	"slices"
	"strings"
	"testing"

	"github.com/agentguard/agentguard/guard/policy"
	"github.com/agentguard/agentguard/trace"
)

// TestVariables: a sub-expression named once in variables (as a
// Kubernetes ValidatingAdmissionPolicy names them) is read by every check
// as variables.<name>, may build on the variables before it, is
// and is type-checked at load.
func TestVariables(t *testing.T) {
	p := checkPolicy(t, `
variables:
  - name: order
    expression: last(['get_order_details', 'modify_pending_order_items'], args.order_id)
  - name: pending
    expression: variables.order.status == 'pending'
  - name: total
    expression: sum(variables.order.items.map(i, i.price))
tools:
  cancel_pending_order:
    checks:
      - name: cancel-pending
        require: variables.pending
  modify_pending_order_items:
    checks:
      - name: modify-pending
        require: variables.pending && variables.total < 1000.0
`)
	lookup := tool("get_order_details", `{"order_id":"#W1"}`, `{"status":"pending","items":[{"price":10.5},{"price":20}]}`)
	delivered := tool("get_order_details", `{"order_id":"#W2"}`, `{"status":"delivered","items":[{"price":5}]}`)
	for _, tt := range []struct {
		name  string
		steps []*trace.Step
		want  []string
	}{
		{"pending: both pass", []*trace.Step{lookup, tool("cancel_pending_order", `{"order_id":"#W1"}`, ""), tool("modify_pending_order_items", `{"order_id":"#W1"}`, "")}, nil},
		{"delivered: both fail", []*trace.Step{delivered, tool("cancel_pending_order", `{"order_id":"#W2"}`, ""), tool("modify_pending_order_items", `{"order_id":"#W2"}`, "")},
			[]string{"1:cancel-pending", "2:modify-pending"}},
		{"never looked up: not established", []*trace.Step{tool("cancel_pending_order", `{"order_id":"#W3"}`, "")}, []string{"0:cancel-pending?"}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			steps := make([]*trace.Step, len(tt.steps))
			for i, s := range tt.steps {
				c := *s
				steps[i] = &c
			}
			got := fired(checksOnly(p), &trace.Trace{ID: "t", Steps: numbered(steps...)})
			if !slices.Equal(got, tt.want) {
				t.Errorf("fired %v, want %v", got, tt.want)
			}
		})
	}
}

// TestVariablesLoadErrors: a variable is checked where it is written.
func TestVariablesLoadErrors(t *testing.T) {
	for _, tt := range []struct{ name, yaml, want string }{
		{"a later variable read early", `
variables:
  - name: a
    expression: variables.b
  - name: b
    expression: "1"
`, "test.yaml:4:17: variables[0].expression: undeclared reference to 'variables'"},
		{"a type error through a variable", `
variables:
  - name: n
    expression: size(args)
checks:
  - name: c
    require: variables.n == 'three'
`, "no matching overload"},
		{"a repeated name", `
variables:
  - name: a
    expression: "1"
  - name: a
    expression: "2"
`, `variable "a" is already defined`},
		{"a bad name", `
variables:
  - name: my-var
    expression: "1"
`, `"my-var" is not a variable name`},
		{"no expression", `
variables:
  - name: a
`, `variable "a" needs an expression`},
		{"an unknown key", `
variables:
  - name: a
    expr: "1"
`, `unknown field "expr"`},
	} {
		t.Run(tt.name, func(t *testing.T) {
			_, err := policy.Read("test.yaml", []byte(tt.yaml))
			if err == nil || !strings.Contains(err.Error(), tt.want) {
				t.Errorf("error %v, want one containing %q", err, tt.want)
			}
		})
	}
}

// TestPolicyMarkdownExamples: every YAML example in policy.md loads, and
// the tests an example holds pass.
func TestPolicyMarkdownExamples(t *testing.T) {
	md, err := os.ReadFile("policy.md")
	if err != nil {
		t.Fatal(err)
	}
	n := 0
	for rest := string(md); ; {
		_, after, ok := strings.Cut(rest, "```yaml\n")
		if !ok {
			break
		}
		block, tail, _ := strings.Cut(after, "```")
		rest = tail
		n++
		p, err := policy.Read(fmt.Sprintf("policy.md example %d", n), []byte(block))
		if err != nil {
			t.Errorf("example %d does not load: %v\n%s", n, err, block)
			continue
		}
		for _, r := range p.RunTests() {
			if !r.Passed() {
				t.Errorf("example %d: %s", n, r)
			}
		}
	}
	if n < 2 {
		t.Errorf("%d YAML examples in policy.md, want at least 2", n)
	}
}
