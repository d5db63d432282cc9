package policy_test

import (
	"strings"
	"testing"

	"github.com/agentguard/agentguard/guard/policy"
)

const testedPolicy = `
tools:
  cancel_pending_order:
    effect: write
    checks:
      - name: cancel-pending
        require: last('get_order_details', args.order_id).status == 'pending'
tests:
  - name: passes
    conversation:
      - {user: "Cancel #W1."}
      - {tool: get_order_details, args: {order_id: "#W1"}, result: {status: pending}}
      - {tool: cancel_pending_order, args: {order_id: "#W1"}}
  - name: wants a finding that does not come
    conversation:
      - {user: "Cancel #W1."}
      - {tool: get_order_details, args: {order_id: "#W1"}, result: {status: pending}}
      - {tool: cancel_pending_order, args: {order_id: "#W1"}}
    want: [cancel-pending]
  - name: a failed lookup is no record
    conversation:
      - {user: "取消订单 #W1。"}
      - {tool: get_order_details, args: {order_id: "#W1"}, error: "Error: order not found"}
      - {tool: cancel_pending_order, args: {order_id: "#W1"}}
    want: ["cancel-pending?"]
`

// TestRunTests: each test passes when the checks that fire are those it
// wants, no more and no fewer, and a failure says what came instead.
func TestRunTests(t *testing.T) {
	p := checkPolicy(t, testedPolicy)
	rs := p.RunTests()
	if len(rs) != 3 {
		t.Fatalf("%d results, want 3", len(rs))
	}
	for i, want := range []bool{true, false, true} {
		if rs[i].Passed() != want {
			t.Errorf("%s", rs[i])
		}
	}
	if got := rs[1].String(); got != "FAIL wants a finding that does not come (test.yaml:14): want [cancel-pending], got []" {
		t.Errorf("a failure reads %q", got)
	}
	if got := rs[0].String(); got != "ok   passes" {
		t.Errorf("a pass reads %q", got)
	}
}

// TestTestsLoadErrors: a test is checked where it is written.
func TestTestsLoadErrors(t *testing.T) {
	base := "tools:\n  t:\n    checks:\n      - {name: c, require: 'true'}\n"
	for _, tt := range []struct{ name, tests, want string }{
		{"no name", "tests:\n  - conversation: [{user: hi}]\n", "a test needs a name"},
		{"no conversation", "tests:\n  - name: x\n", `test "x" needs a conversation`},
		{"two kinds in an entry", "tests:\n  - name: x\n    conversation: [{user: hi, agent: hello}]\n", "want exactly one of user, agent and tool"},
		{"args without a tool", "tests:\n  - name: x\n    conversation: [{user: hi, args: {a: 1}}]\n", "args, result, error and together go with a tool"},
		{"together with nothing", "tests:\n  - name: x\n    conversation: [{tool: t, together: true}]\n", "no call before it to go with"},
		{"an unknown check", "tests:\n  - name: x\n    conversation: [{user: hi}]\n    want: [nope]\n", `"nope" is not a check of this file`},
		{"a repeated name", "tests:\n  - {name: x, conversation: [{user: hi}]}\n  - {name: x, conversation: [{user: hi}]}\n", `test "x" is already defined`},
		{"a bad clock", "tests:\n  - {name: x, now: yesterday, conversation: [{user: hi}]}\n", `"yesterday" is not a time`},
		{"an unknown key", "tests:\n  - {name: x, conversation: [{usr: hi}]}\n", `unknown field "usr"`},
	} {
		t.Run(tt.name, func(t *testing.T) {
			_, err := policy.Read("test.yaml", []byte(base+tt.tests))
			if err == nil || !strings.Contains(err.Error(), tt.want) {
				t.Errorf("error %v, want one containing %q", err, tt.want)
			}
		})
	}
}
