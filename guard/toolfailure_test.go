package guard_test

import (
	"context"
	"errors"
	"fmt"
	"testing"

	"github.com/agentguard/agentguard/guard"
	"github.com/agentguard/agentguard/guard/guardtest"
	"github.com/agentguard/agentguard/trace"
	"github.com/tmc/langchaingo/llms"
	"github.com/tmc/langchaingo/tools"
)

// TestToolFailureGate: a tool exception followed by a dead-end answer is
// handed off or re-asked, as configured; a retried call that worked, an
// answer that asks the user, and a blocked call are left alone. Offline
// evaluation finds the same (gateCase.run).
func TestToolFailureGate(t *testing.T) {
	submit := func() tools.Tool {
		return guardtest.NewTool("submit_return", "", func(_ context.Context, in string) (string, error) {
			if in == `{"order_id":"A1001"}` {
				return "", errors.New("order A1001 is shipped, not delivered")
			}
			return `{"status":"submitted"}`, nil
		})
	}
	deadEnd := []guardtest.Reply{
		guardtest.ToolCall("submit_return", `{"order_id":"A1001"}`),
		guardtest.Text("I could not submit the return for A1001."),
	}
	cfg := func(v trace.Verdict) guard.Config {
		return guard.Config{Gates: guard.Gates{DeadEnds: v}}
	}
	for _, tc := range []gateCase{
		{name: "hand off", cfg: cfg(trace.Handoff), tools: []tools.Tool{submit()}, turns: []string{"Return A1001, it is broken."},
			script: deadEnd, wantStatus: guard.StatusHandoff, wantRules: []string{"tool-failure@handoff"}, wantAnswer: "human colleague"},
		{name: "re-ask the user", cfg: cfg(trace.Clarify), tools: []tools.Tool{submit()}, turns: []string{"订单 A1001 坏了，我要退货。"},
			script: deadEnd, wantStatus: guard.StatusClarify, wantRules: []string{"tool-failure@clarify"}},
		{name: "re-ask the model", cfg: cfg(trace.Retry), tools: []tools.Tool{submit()}, turns: []string{"Return A1001, it is broken."},
			script:     append(deadEnd, guardtest.Text("A1001 has not been delivered yet, so it cannot be returned; would you like me to track it?")),
			wantStatus: guard.StatusDone, wantRules: []string{"tool-failure@retry"}, wantAnswer: "would you like", wantCalls: 3},
		{name: "tried again and it worked", cfg: cfg(trace.Handoff), tools: []tools.Tool{submit()}, turns: []string{"Return A1001 and A1003, both are broken."},
			script: []guardtest.Reply{
				guardtest.ToolCall("submit_return", `{"order_id":"A1001"}`),
				guardtest.ToolCall("submit_return", `{"order_id":"A1003"}`),
				guardtest.Text("Your return for A1003 is submitted."),
			}, wantStatus: guard.StatusDone, wantAnswer: "submitted"},
		{name: "the answer asks the user", cfg: cfg(trace.Handoff), tools: []tools.Tool{submit()}, turns: []string{"Return A1001, it is broken."},
			script: []guardtest.Reply{
				guardtest.ToolCall("submit_return", `{"order_id":"A1001"}`),
				guardtest.Text("A1001 has not been delivered yet. Shall I track it instead?"),
			}, wantStatus: guard.StatusDone, wantAnswer: "Shall I"},
		{name: "a failure in an earlier turn", cfg: cfg(trace.Handoff), tools: []tools.Tool{submit()}, turns: []string{"Return A1001.", "OK, where is it then?"},
			script: []guardtest.Reply{
				guardtest.ToolCall("submit_return", `{"order_id":"A1001"}`),
				guardtest.Text("It is not delivered yet; shall I track it?"),
				guardtest.Text("It is out for delivery."),
			}, wantStatus: guard.StatusDone, wantAnswer: "out for delivery"},
		{name: "a failed read beside one that worked", cfg: cfg(trace.Handoff), tools: []tools.Tool{fixed("query_order", `{"status":"shipped"}`), broken("logistics")},
			turns: []string{"Where is A1005?"},
			script: []guardtest.Reply{
				guardtest.ToolCall("query_order", `{"order_id":"A1005"}`),
				guardtest.ToolCall("logistics", `{"order_id":"A1005"}`),
				guardtest.Text("Order A1005 has shipped; tracking is unavailable right now."),
			}, wantStatus: guard.StatusDone, wantAnswer: "shipped"},
		{name: "the only read failed", cfg: cfg(trace.Handoff), tools: []tools.Tool{broken("logistics")}, turns: []string{"Where is A1005?"},
			script: []guardtest.Reply{
				guardtest.ToolCall("logistics", `{"order_id":"A1005"}`),
				guardtest.Text("Your parcel is on its way."),
			}, wantStatus: guard.StatusHandoff, wantRules: []string{"tool-failure@handoff"}},
	} {
		t.Run(tc.name, tc.run)
	}
}

func broken(name string) tools.Tool {
	return guardtest.NewTool(name, "", func(context.Context, string) (string, error) { return "", errors.New("upstream 503") })
}

func TestDeadEndsVerdicts(t *testing.T) {
	defer func() {
		if recover() == nil {
			t.Error("Gates.DeadEnds: block did not panic")
		}
	}()
	guard.New(guard.Config{Gates: guard.Gates{DeadEnds: trace.Block}})
}

// A return that fails in the tool reaches a person, not a dead end.
func ExampleGates_deadEnds() {
	submit := guardtest.NewTool("submit_return", "Submit a return", func(context.Context, string) (string, error) {
		return "", errors.New("order A1001 is shipped, not delivered")
	})
	model := guardtest.Script(
		guardtest.ToolCall("submit_return", `{"order_id":"A1001"}`),
		guardtest.Text("I could not submit the return for A1001."),
	)
	g := guard.New(guard.Config{Gates: guard.Gates{DeadEnds: trace.Handoff}})
	ctx, _ := g.StartTrace(context.Background(), "s1", "after-sales")
	res, err := g.Run(ctx, model, []tools.Tool{submit}, []llms.MessageContent{llms.TextParts(llms.ChatMessageTypeHuman, "Return A1001, it is broken.")})
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Println(res.Status, "—", res.Answer)
	// Output:
	// handoff — I am handing this conversation to a human colleague, who will continue from here.
}
