package trace_test

import (
	"fmt"
	"strings"

	"github.com/agentguard/agentguard/trace"
)

func ExampleImportAnthropic() {
	log := `{"id":"m1","model":"claude-sonnet-4-20250514","messages":[{"role":"user","content":"Where is order A42?"},{"role":"assistant","content":[{"type":"tool_use","id":"tu1","name":"query_order","input":{"order_id":"A42"}}]},{"role":"user","content":[{"type":"tool_result","tool_use_id":"tu1","content":"[]"}]}],"response":{"id":"msg_1","type":"message","role":"assistant","model":"claude-sonnet-4-20250514","content":[{"type":"text","text":"There are no records of order A42."}],"stop_reason":"end_turn","usage":{"input_tokens":90,"output_tokens":11}}}
{"messages":[{"role":"user","content":"a"}],"messages":[]}
`
	for t, err := range trace.ImportAnthropic(strings.NewReader(log), "messages.jsonl") {
		if err != nil {
			fmt.Println(err)
			continue
		}
		for _, s := range t.Steps {
			fmt.Printf("%d %s %s %q %q\n", s.Index, s.Kind, s.Name, s.Result, s.FinishReason)
		}
	}
	// Output:
	// 0 model claude-sonnet-4-20250514 "" ""
	// 1 tool query_order "[]" ""
	// 2 model claude-sonnet-4-20250514 "There are no records of order A42." "end_turn"
	// trace: messages.jsonl:2: duplicate key "messages"
}

func ExampleSniffOTLP() {
	for _, head := range []string{
		`{"resourceSpans":[{"scopeSpans":[{"spans":[]}]}]}`,
		`[{"id":"r1","run_type":"llm","trace_id":"r1"}]`,
		`{"id":"t1","observations":[]}`,
	} {
		fmt.Println(trace.SniffOTLP([]byte(head)), trace.SniffLangSmith([]byte(head)), trace.SniffLangfuse([]byte(head)))
	}
	// Output:
	// true false false
	// false true false
	// false false true
}
