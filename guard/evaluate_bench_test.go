package guard_test

import (
	"context"
	"fmt"
	"testing"

	"github.com/agentguard/agentguard/guard"
	"github.com/agentguard/agentguard/guard/guardtest"
	"github.com/agentguard/agentguard/trace"
	"github.com/tmc/langchaingo/llms"
	"github.com/tmc/langchaingo/tools"
)

// benchTraces records n customer-service traces through Run with scripted
// models: order look-ups, knowledge-base retrievals with cited answers,
// address changes, and now and then a loop, a malformed call or a call to
// a tool the agent was not given.
func benchTraces(tb testing.TB, n int) []*trace.Trace {
	tb.Helper()
	g := guard.New(guard.Config{Tools: map[string]guard.ToolPolicy{"kb_search": {Retrieval: true}}})
	idSchema := map[string]any{
		"type":       "object",
		"properties": map[string]any{"order_id": map[string]any{"type": "string"}},
		"required":   []string{"order_id"},
	}
	addressSchema := map[string]any{
		"type": "object",
		"properties": map[string]any{
			"order_id": map[string]any{"type": "string"},
			"address":  map[string]any{"type": "string"},
		},
		"required": []string{"order_id", "address"},
	}
	querySchema := map[string]any{
		"type":       "object",
		"properties": map[string]any{"query": map[string]any{"type": "string"}},
		"required":   []string{"query"},
	}
	traces := make([]*trace.Trace, 0, n)
	for i := range n {
		order := fmt.Sprintf("A%d", 1000+i)
		address := fmt.Sprintf("%d Elm Street, Springfield", 10+i)
		ts := []tools.Tool{
			guardtest.NewTool("query_order", "Look up an order by id", func(context.Context, string) (string, error) {
				return fmt.Sprintf(`{"order_id":%q,"status":"in transit","amount":42.5,"eta":"2025-06-0%d"}`, order, 1+i%9), nil
			}).WithParameters(idSchema),
			guardtest.NewTool("kb_search", "Search the knowledge base", func(context.Context, string) (string, error) {
				return `[{"id":"KB-RET-01","score":0.82,"text":"Unopened items can be returned within 7 days (clause 3.1)."},{"id":"KB-SHP-01","score":0.41,"text":"Standard shipping takes 3 to 5 days."}]`, nil
			}).WithParameters(querySchema),
			guardtest.NewTool("update_address", "Change the delivery address of an order", nil).WithParameters(addressSchema),
		}
		var turns []string
		var script []guardtest.Reply
		lookup := guardtest.ToolCall("query_order", fmt.Sprintf(`{"order_id":%q}`, order))
		switch i % 5 {
		case 0: // an order look-up
			turns = []string{"Where is my order " + order + "?"}
			script = []guardtest.Reply{lookup, guardtest.Text("Order " + order + " is in transit and should arrive within a few days.")}
		case 1: // a policy question answered from the knowledge base
			turns = []string{"Can I return an opened item?", "And how long does shipping take?"}
			script = []guardtest.Reply{
				guardtest.ToolCall("kb_search", `{"query":"return opened item"}`),
				guardtest.Text("Unopened items can be returned within 7 days (clause 3.1) [KB-RET-01]."),
				guardtest.ToolCall("kb_search", `{"query":"shipping time"}`),
				guardtest.Text("Standard shipping takes 3 to 5 days [KB-SHP-01]."),
			}
		case 2: // an address change after a look-up, confirmed
			turns = []string{"My address is " + address + ". Please put it on order " + order + ".", "Yes, go ahead."}
			script = []guardtest.Reply{
				lookup,
				guardtest.Text("Shall I change the address of order " + order + " to " + address + "?"),
				guardtest.ToolCall("update_address", fmt.Sprintf(`{"order_id":%q,"address":%q}`, order, address)),
				guardtest.Text("The address of order " + order + " is now " + address + "."),
			}
		case 3: // a model that loops and then calls a tool it was not given
			turns = []string{"Where is " + order + "? Track it closely."}
			script = []guardtest.Reply{lookup, lookup, lookup, guardtest.ToolCall("track_parcel", `{"order_id":"`+order+`"}`), guardtest.Text("It is in transit.")}
		case 4: // a malformed call corrected, then a look-up and an answer
			turns = []string{"What is the status of " + order + "?"}
			script = []guardtest.Reply{
				guardtest.ToolCall("query_order", `{"order":`+order+`}`),
				lookup,
				guardtest.Text("Order " + order + " is in transit."),
			}
		}
		model := guardtest.Script(script...)
		ctx, rec := g.StartTrace(context.Background(), fmt.Sprintf("s%d", i), "after-sales")
		var msgs []llms.MessageContent
		for _, turn := range turns {
			msgs = append(msgs, llms.TextParts(llms.ChatMessageTypeHuman, turn))
			res, err := g.Run(ctx, model, ts, msgs)
			if err != nil {
				tb.Fatalf("trace %d: %v", i, err)
			}
			msgs = res.Messages
		}
		traces = append(traces, rec.Trace())
	}
	return traces
}

// BenchmarkEvaluate runs the default rules offline over 100 recorded
// traces per iteration and reports the judged (model and tool) steps per
// second.
func BenchmarkEvaluate(b *testing.B) {
	traces := benchTraces(b, 100)
	ev := guard.New(guard.Config{})
	steps, all, findings := 0, 0, 0
	for _, tr := range traces {
		r := ev.Evaluate(tr)
		steps += r.Judged
		all += len(tr.Steps)
		findings += len(r.Findings)
	}
	if findings == 0 {
		b.Fatal("the recorded traces gave no findings: the benchmark would not exercise them")
	}
	b.ReportAllocs()
	for b.Loop() {
		for _, tr := range traces {
			ev.Evaluate(tr)
		}
	}
	b.ReportMetric(float64(steps*b.N)/b.Elapsed().Seconds(), "steps/s")
	b.ReportMetric(float64(steps), "steps/op")
	b.ReportMetric(float64(all), "recorded-steps/op")
}
