package health_test

import (
	"context"
	"fmt"
	"regexp"
	"time"

	"github.com/agentguard/agentguard/guard"
	"github.com/agentguard/agentguard/guard/guardtest"
	"github.com/agentguard/agentguard/guard/health"
	"github.com/agentguard/agentguard/guard/replay"
	"github.com/agentguard/agentguard/trace"
	"github.com/tmc/langchaingo/llms"
	"github.com/tmc/langchaingo/tools"
)

// myAgent stands for your own agent: a model and its tools. This one looks
// an order up and reports what it found, "no records" included.
func myAgent() (llms.Model, []tools.Tool) {
	orders := map[string]string{"A1001": `{"status":"shipped"}`, "A1002": `{"status":"pending"}`}
	lookup := guardtest.NewTool("query_order", "Look an order up", func(_ context.Context, in string) (string, error) {
		return orders[regexp.MustCompile(`A\d+`).FindString(in)], nil
	})
	id := regexp.MustCompile(`A\d{4}`)
	model := guardtest.Func(func(_ context.Context, msgs []llms.MessageContent, _ llms.CallOptions) (guardtest.Reply, error) {
		var user, result string
		for _, m := range msgs {
			for _, p := range m.Parts {
				switch p := p.(type) {
				case llms.TextContent:
					if m.Role == llms.ChatMessageTypeHuman {
						user = p.Text
					}
				case llms.ToolCallResponse:
					result = p.Content
				}
			}
		}
		order := id.FindString(user)
		switch {
		case msgs[len(msgs)-1].Role != llms.ChatMessageTypeTool:
			return guardtest.ToolCall("query_order", `{"order_id":"`+order+`"}`), nil
		case result == "":
			return guardtest.Text("There are no records of order " + order + "."), nil
		}
		return guardtest.Text("Order " + order + " is " + regexp.MustCompile(`"status":"(\w+)"`).FindStringSubmatch(result)[1] + "."), nil
	})
	return model, []tools.Tool{lookup}
}

// The health check of your own agent: a factory that runs one case
// through the guard it is given, and the golden set's file.
func ExampleCheck() {
	newAgent := func(*replay.Case, int) (replay.Agent, error) {
		model, tools := myAgent()
		return replay.AgentFunc(func(ctx context.Context, g *guard.Guard, history []llms.MessageContent) (*guard.Result, error) {
			return g.Run(ctx, model, tools, history)
		}), nil
	}
	rep, err := health.Check(context.Background(), "testdata/own/golden.jsonl", newAgent, health.CheckConfig{
		Score: health.Options{Now: time.Date(2026, 12, 1, 0, 0, 0, 0, time.UTC)},
	})
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Println(health.Headline(rep.Total, rep.Points))
	fmt.Println("accuracy", rep.Score(trace.Accuracy).Score, "coherence", rep.Score(trace.Coherence).Score)
	for _, rc := range rep.RootCauses {
		fmt.Printf("%s in %v → %s: %s\n", rc.Tag, rc.Cases, rc.Fix.Kind, rc.Fix.Where)
	}
	fmt.Println(rep.Shape[0])
	// Output:
	// 4.83 of 5 (96 of 100 points, healthy, keep monitoring)
	// accuracy 5 coherence 4.3
	// asserted-absence in [B01] → config: guard.Gates.EmptyResult
	// 2 normal cases, the method asks for 10
}
