package guard_test

import (
	"context"
	"errors"
	"slices"
	"strings"
	"testing"

	"github.com/agentguard/agentguard/guard"
	"github.com/agentguard/agentguard/guard/guardtest"
	"github.com/agentguard/agentguard/guard/internal/testkit"
	"github.com/agentguard/agentguard/trace"
	"github.com/tmc/langchaingo/agents"
	"github.com/tmc/langchaingo/chains"
	"github.com/tmc/langchaingo/llms"
	"github.com/tmc/langchaingo/tools"
)

// TestExecutorWithWrappedParts runs langchaingo's agents.Executor, unmodified,
// over a wrapped model and wrapped tools: the model first calls a tool the
// agent was not given, then the real tool, then answers.
func TestExecutorWithWrappedParts(t *testing.T) {
	g := guard.New(guard.Config{})
	model := guardtest.Script(
		guardtest.ToolCall("delete_account", `{"__arg1":"A1001"}`),
		guardtest.ToolCall("query_order", `{"order_id":"A1001"}`),
		guardtest.Text("Order A1001 has shipped."),
	)
	tool := orderTool()
	wrapped := []tools.Tool{g.WrapTool(tool)}
	agent := agents.NewOpenAIFunctionsAgent(g.WrapModel(model), wrapped)
	exec := agents.NewExecutor(agent, agents.WithMaxIterations(5))

	ctx, rec := g.StartTrace(context.Background(), "sess-1", "order-status")
	out, err := chains.Run(ctx, exec, "Where is order A1001?")
	if err != nil {
		t.Fatal(err)
	}
	if out != "Order A1001 has shipped." {
		t.Errorf("output = %q", out)
	}
	if got := tool.Inputs(); !slices.Equal(got, []string{`{"order_id":"A1001"}`}) {
		t.Errorf("tool inputs = %q", got)
	}
	// The agent sent functions, not tools; the guard read them as the allow-list.
	if fs := model.Options()[0].Functions; len(fs) != 1 || fs[0].Name != "query_order" {
		t.Errorf("functions offered = %+v", fs)
	}
	tr := rec.Trace()
	if got, want := tr.ToolNames(), []string{"query_order"}; !slices.Equal(got, want) {
		t.Errorf("recorded tools = %v, want %v", got, want)
	}
	var got []string
	for _, s := range tr.Steps {
		got = append(got, string(s.Kind)+":"+s.Name)
	}
	want := []string{"memory:card", "model:", "tool:delete_account", "gate:tool-allow-list", "model:", "tool:query_order", "model:"}
	if !slices.Equal(got, want) {
		t.Errorf("steps = %v, want %v", got, want)
	}
	if got, want := ruleVerdicts(g.Evaluate(tr).Findings), []string{"tool-allow-list@block"}; !slices.Equal(got, want) {
		t.Errorf("offline findings = %v, want %v", got, want)
	}
}

// TestExecutorBlockIsAnObservation checks that a blocked call reaches the
// model as an observation and the executor carries on, and that a terminal
// verdict stops the executor with an *Interrupt.
func TestExecutorBlockIsAnObservation(t *testing.T) {
	g := guard.New(guard.Config{Gates: guard.Gates{LoopLimit: 2}})
	call := guardtest.ToolCall("query_order", `{"order_id":"A1001"}`)
	model := guardtest.Script(call, call, guardtest.Text("It shipped."))
	agent := agents.NewOpenAIFunctionsAgent(g.WrapModel(model), []tools.Tool{g.WrapTool(orderTool())})
	ctx, _ := g.StartTrace(context.Background(), "s1", "") // the loop limit counts within one trace
	out, err := chains.Run(ctx, agents.NewExecutor(agent), "Where is A1001?")
	if err != nil || out != "It shipped." {
		t.Fatalf("got %q, %v", out, err)
	}
	last := model.Received()[2]
	if r := toolResults(last); len(r) != 2 || !strings.Contains(r[1], "blocked by rule loop") {
		t.Errorf("observations = %q", r)
	}

	stop := guard.NewRule("human-only", func(_ *trace.Trace, s *trace.Step) []trace.Finding {
		if s.Kind == trace.KindTool {
			return []trace.Finding{{Rule: "human-only", Verdict: trace.Handoff, Message: "orders are handled by people today"}}
		}
		return nil
	})
	g = guard.New(guard.Config{Rules: []guard.Rule{stop}})
	agent = agents.NewOpenAIFunctionsAgent(g.WrapModel(guardtest.Script(call)), []tools.Tool{g.WrapTool(orderTool())})
	_, err = chains.Run(context.Background(), agents.NewExecutor(agent), "Where is A1001?")
	var intr *guard.Interrupt
	if !errors.As(err, &intr) || intr.Verdict != trace.Handoff || intr.Message != testkit.Handoff {
		t.Errorf("err = %v, want a handoff *Interrupt", err)
	}
}

// TestWrapModelReplacesTerminalAnswers checks that a model answer judged
// Refuse becomes the refusal template, without the tool calls.
func TestWrapModelReplacesTerminalAnswers(t *testing.T) {
	refuse := guard.NewRule("fabrication", func(_ *trace.Trace, s *trace.Step) []trace.Finding {
		if s.Kind == trace.KindModel && strings.Contains(s.Result, "clause 9.9") {
			return []trace.Finding{{Rule: "fabrication", Verdict: trace.Refuse, Message: "quotes a clause that does not exist"}}
		}
		return nil
	})
	g := guard.New(guard.Config{Rules: []guard.Rule{refuse}})
	m := g.WrapModel(guardtest.Script(guardtest.Reply{Text: "Per clause 9.9 you get a refund.", Calls: []guardtest.Call{{Name: "send_sms", Args: "{}"}}}))
	ctx, rec := g.StartTrace(context.Background(), "s1", "")
	resp, err := m.GenerateContent(ctx, human("Refund?"))
	if err != nil {
		t.Fatal(err)
	}
	if c := resp.Choices[0]; c.Content != testkit.Refusal || len(c.ToolCalls) != 0 {
		t.Errorf("choice = %+v", c)
	}
	if _, ok := m.(llms.ReasoningModel); !ok {
		t.Error("wrapped model hides llms.ReasoningModel")
	}
	// The user turn's card step (the card is on by default), the model
	// step, then one gate step each for the built-in grounding gate (no
	// retrieval stands behind "clause 9.9") and the custom rule.
	var got []string
	for _, s := range rec.Trace().Steps {
		got = append(got, string(s.Kind)+":"+s.Name)
	}
	if want := []string{"memory:card", "model:", "gate:grounding", "gate:fabrication"}; !slices.Equal(got, want) {
		t.Errorf("trace = %v, want %v", got, want)
	}
}
