package origins

import (
	"fmt"
	"testing"

	"github.com/agentguard/agentguard/guard/internal/rulekit"
	"github.com/agentguard/agentguard/trace"
	"github.com/agentguard/agentguard/trace/lexicon"
)

// BenchmarkIndexTurn is what indexing one user turn of a support chat
// costs the origins index: the turn, which names a new order in English
// or in Chinese, and its three calls — the invoice read, the customer
// read and the e-mail sent. An op is a conversation of ten such turns
// indexed afresh; the traces are built untimed.
func BenchmarkIndexTurn(b *testing.B) {
	tools := rulekit.NewTools(lexicon.Default().Compiled(), nil)
	conversation := func() *trace.Trace {
		t := &trace.Trace{}
		for i := range 10 {
			o := fmt.Sprintf("A%d", 1000+i)
			e := "c-" + o + "@example.com"
			turn := "Please send the invoice of order " + o + " to its customer."
			if i%2 == 1 {
				turn = "请把订单 " + o + " 的发票发给客户。"
			}
			t.UserTurns = append(t.UserTurns, turn)
			add := func(s *trace.Step) { s.Index, s.Turn = len(t.Steps), i; t.Steps = append(t.Steps, s) }
			add(&trace.Step{Kind: trace.KindTool, Name: "get_invoice", Args: fmt.Sprintf(`{"order_id":%q}`, o),
				Result: fmt.Sprintf(`{"order_id":%q,"email":%q,"invoice":"INV-%s","total":120.50}`, o, e, o)})
			add(&trace.Step{Kind: trace.KindTool, Name: "get_customer", Args: fmt.Sprintf(`{"email":%q}`, e),
				Result: fmt.Sprintf(`{"email":%q,"name":"Customer"}`, e)})
			add(&trace.Step{Kind: trace.KindTool, Name: "send_email", Args: fmt.Sprintf(`{"to":%q,"body":"Your invoice INV-%s, total 120.50"}`, e, o),
				Result: `{"status":"sent"}`})
		}
		return t
	}
	const batch = 256
	traces := make([]*trace.Trace, batch)
	b.ReportAllocs()
	for i := 0; b.Loop(); i++ {
		if i%batch == 0 {
			b.StopTimer()
			for j := range traces {
				traces[j] = conversation()
			}
			b.StartTimer()
		}
		indexOf(traces[i%batch], tools)
	}
}
