package guard_test

import (
	"context"
	"fmt"
	"strings"

	"github.com/agentguard/agentguard/guard"
	"github.com/agentguard/agentguard/guard/guardtest"
	"github.com/agentguard/agentguard/guard/internal/testkit"
	"github.com/agentguard/agentguard/trace"
	"github.com/tmc/langchaingo/agents"
	"github.com/tmc/langchaingo/chains"
	"github.com/tmc/langchaingo/llms"
	"github.com/tmc/langchaingo/llms/openai"
	"github.com/tmc/langchaingo/tools"
)

// An agents.Executor run whose final answer quotes a clause nothing
// retrieved, twice: the wrapped model replaces it with the refusal, which
// comes back as ordinary output; OutcomeOf reads that it was refused.
func ExampleOutcomeOf() {
	g := guard.New(guard.Config{})
	model := guardtest.Script(
		guardtest.Text("Per clause 9.9 you get a full refund."),
		guardtest.Text("Clause 9.9 gives you a full refund."),
	)
	agent := agents.NewOpenAIFunctionsAgent(g.WrapModel(model), []tools.Tool{g.WrapTool(orderTool())})
	ctx, _ := g.StartTrace(context.Background(), "session-1", "refunds")
	out, err := chains.Run(ctx, agents.NewExecutor(agent), "Can I get a refund?")
	o := guard.OutcomeOf(ctx, out, err)
	fmt.Println(o.Status, "by", o.Finding.Rule)
	fmt.Println(o.Answer == testkit.Refusal)
	// Output:
	// refused by grounding
	// true
}

// The model a guard records on its steps, and the exporter on its spans,
// comes from the client it wraps; DescribeModel names one it does not
// recognise.
func ExampleDescribedModel() {
	llm, _ := openai.New(openai.WithToken("unused"), openai.WithModel("gpt-4o"))
	fmt.Println(guard.DescribedModel(llm))
	fmt.Println(guard.DescribedModel(guard.DescribeModel(llm, guard.ModelInfo{Provider: "deepseek", Model: "deepseek-chat"})))
	fmt.Println(guard.DescribedModel(guardtest.Script()))
	// Output:
	// {openai gpt-4o}
	// {deepseek deepseek-chat}
	// { }
}

// Streaming is buffered by default: the user's streaming function
// receives an answer only once it is judged, and a stopped answer never.
func ExampleAnswers_passThrough() {
	fabricated := guardtest.Text("Per clause 7.3 you get ¥50.")
	for _, passThrough := range []bool{false, true} {
		g := guard.New(guard.Config{Answers: guard.Answers{PassThrough: passThrough}})
		var seen strings.Builder
		stream := llms.WithStreamingFunc(func(_ context.Context, chunk []byte) error {
			seen.Write(chunk)
			return nil
		})
		g.Run(context.Background(), guardtest.Script(fabricated, fabricated), nil, human("Refund?"), stream)
		fmt.Printf("pass-through %v: user saw the clause: %v\n", passThrough, strings.Contains(seen.String(), "7.3"))
	}
	// Output:
	// pass-through false: user saw the clause: false
	// pass-through true: user saw the clause: true
}

// An Observer receives verdicts, gate latency and breaker changes; embed
// NopObserver to implement only some of them.
func ExampleObserver() {
	var counts = map[string]int{}
	obs := &findingCounter{counts: counts}
	g := guard.New(guard.Config{Observe: guard.Observation{Metrics: obs}})
	model := guardtest.Script(guardtest.ToolCall("delete_order", `{"order_id":"A1"}`), guardtest.Text("Order A1 has shipped."))
	g.Run(context.Background(), model, []tools.Tool{orderTool()}, human("Where is my order A1?"))
	fmt.Println(counts)
	// Output:
	// map[tool-allow-list/block:1]
}

type findingCounter struct {
	guard.NopObserver
	counts map[string]int
}

func (c *findingCounter) Finding(rule string, v trace.Verdict, _ bool) {
	c.counts[rule+"/"+string(v)]++
}
