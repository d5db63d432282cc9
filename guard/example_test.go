package guard_test

import (
	"context"
	"fmt"
	"strings"

	"github.com/agentguard/agentguard/guard"
	"github.com/agentguard/agentguard/guard/guardtest"
	"github.com/agentguard/agentguard/trace"
	"github.com/agentguard/agentguard/trace/lexicon"
	"github.com/tmc/langchaingo/llms"
	"github.com/tmc/langchaingo/tools"
)

func ExampleGuard_Run() {
	g := guard.New(guard.Config{})
	model := guardtest.Script( // a scripted stand-in for any llms.Model
		guardtest.ToolCall("query_order", `{"order_id":"A1001"}`),
		guardtest.ToolCall("delete_order", `{"order_id":"A1001"}`), // not offered
		guardtest.Text("Order A1001 has shipped."),
	)
	queryOrder := guardtest.NewTool("query_order", "Look up an order", func(context.Context, string) (string, error) {
		return `{"status":"shipped"}`, nil
	})
	res, _ := g.Run(context.Background(), model, []tools.Tool{queryOrder},
		[]llms.MessageContent{llms.TextParts(llms.ChatMessageTypeHuman, "Where is my order A1001?")})
	fmt.Println(res.Status, "-", res.Answer)
	for _, f := range res.Findings {
		fmt.Printf("step %d: %s %s: %s\n", f.Step, f.Rule, f.Verdict, f.Message)
	}
	// Output:
	// done - Order A1001 has shipped.
	// step 4: tool-allow-list block: tool "delete_order" is not on the allow-list
}

func ExampleGuard_WrapTool() {
	g := guard.New(guard.Config{Gates: guard.Gates{LoopLimit: 2}})
	tool := g.WrapTool(guardtest.NewTool("logistics", "Track a parcel", nil))
	ctx, _ := g.StartTrace(context.Background(), "session-7", "tracking")
	for range 2 {
		out, err := tool.Call(ctx, `{"tracking_no":"SF123"}`)
		fmt.Printf("%q %v\n", out, err)
	}
	// Output:
	// "ok" <nil>
	// "[agentguard] call blocked by rule loop: tool \"logistics\" called 2 times in a row with the same arguments. Do not repeat it." <nil>
}

func ExampleGuard_Evaluate() {
	tr := &trace.Trace{
		ID:        "t1",
		UserTurns: []string{"How do refunds work?"},
		Tools:     []trace.ToolSpec{{Name: "search_kb"}},
		Steps: []*trace.Step{
			{Index: 0, Kind: trace.KindTool, Name: "search_kb", Args: `{"q":"refund"}`, Result: `[{"id":"KB-REF-01","score":0.8}]`},
			{Index: 1, Kind: trace.KindTool, Name: "send_sms", Args: `{"to":"+8613800000000"}`},
		},
	}
	rep := guard.New(guard.Config{}).Evaluate(tr)
	fmt.Println(rep.Score, rep.Passed)
	for _, f := range rep.Findings {
		fmt.Println(f.Step, f.Rule, f.Message)
	}
	// Output:
	// 60 false
	// 1 tool-allow-list tool "send_sms" is not on the allow-list
	// 1 argument-provenance to="+8613800000000" comes from no user turn, memory or earlier tool result
}

func ExampleNewRule() {
	// A domain policy as code: never promise a refund amount.
	noAmounts := guard.NewRule("no-refund-amounts", func(_ *trace.Trace, s *trace.Step) []trace.Finding {
		if s.Kind == trace.KindModel && strings.Contains(s.Result, "¥") {
			return []trace.Finding{{Rule: "no-refund-amounts", Verdict: trace.Handoff, Dimension: trace.Accuracy,
				Severity: trace.SeverityError, Message: "the answer promises an amount"}}
		}
		return nil
	})
	g := guard.New(guard.Config{Rules: []guard.Rule{noAmounts}})
	res, _ := g.Run(context.Background(), guardtest.Script(guardtest.Text("您将获得 ¥200 退款。")), nil,
		[]llms.MessageContent{llms.TextParts(llms.ChatMessageTypeHuman, "我能退多少钱？")})
	fmt.Println(res.Status)
	fmt.Println(res.Answer)
	// Output:
	// handoff
	// 我将把这段对话转交给人工同事，由他们继续为您服务。
}

// A lexicon that knows the agent's own vocabulary: "ship" is a write verb,
// so ship_order needs the user's confirmation, asked in the user's
// language with the tool named as that language names it.
func ExampleConfig_lexicon() {
	lx := lexicon.Default()
	lx.WriteVerbs = append(lx.WriteVerbs, "ship")
	zh := lx.Replies[lexicon.ZH]
	zh.Names = map[string]string{"ship_order": "发货", "order_id": "订单号"}
	lx.Replies[lexicon.ZH] = zh

	g := guard.New(guard.Config{Lexicon: lx, Gates: guard.Gates{ConfirmWrites: true}})
	ship := guardtest.NewTool("ship_order", "Ships an order.", func(context.Context, string) (string, error) { return "ok", nil })
	for _, turn := range []string{"Please ship A1", "请把 A1 发出去"} {
		res, _ := g.Run(context.Background(), guardtest.Script(guardtest.ToolCall("ship_order", `{"order_id":"A1"}`)),
			[]tools.Tool{ship}, []llms.MessageContent{llms.TextParts(llms.ChatMessageTypeHuman, turn)})
		fmt.Println(res.Status, res.Answer)
	}
	// Output:
	// clarify Before I ship order (order id A1), can you confirm that this is what you want? Please answer yes or no.
	// clarify 在执行 发货（订单号 A1）之前，请您确认这是您想要的操作。请回答“是”或“否”。
}
