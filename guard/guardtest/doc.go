// Package guardtest provides what tests of guarded agents need and no
// network: a scripted llms.Model that answers with text and tool calls the
// way a real provider client does (call ids, stop reasons, usage), and a
// recording tools.Tool.
//
// It plays the role testing/slogtest plays for slog handlers: the demo agent
// in examples/agentguard (the demo agent) and agentguard's own tests are built on it.
//
//	model := guardtest.Script(
//		guardtest.ToolCall("query_order", `{"order_id":"A1001"}`),
//		guardtest.Text("Your order has shipped."),
//	)
//	tool := guardtest.NewTool("query_order", "Look up an order", nil)
//	res, err := g.Run(ctx, model, []tools.Tool{tool}, msgs)
package guardtest
