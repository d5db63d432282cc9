package trace_test

import (
	"errors"
	"fmt"
	"io"
	"os"
	"strings"
	"time"

	"github.com/agentguard/agentguard/trace"
)

func ExampleNewRecorder() {
	rec := trace.NewRecorder("run-1", "session-9", "order_status", trace.RecorderOptions{})
	rec.UserTurn("Where is order 1042?")
	rec.Add(&trace.Step{
		Kind:  trace.KindModel,
		Name:  "gpt-4o-mini",
		Calls: []trace.Call{{ID: "call_1", Name: "order_status", Args: `{"id":1042}`}},
	})
	rec.Add(&trace.Step{Kind: trace.KindTool, Name: "order_status", CallID: "call_1", Args: `{"id":1042}`, Result: "shipped"})
	rec.Add(&trace.Step{Kind: trace.KindModel, Name: "gpt-4o-mini", Result: "Order 1042 has shipped."})

	t := rec.Trace()
	fmt.Println(t.ID, t.SessionID, t.Route, len(t.UserTurns))
	for _, s := range t.Steps {
		fmt.Printf("%d %-5s turn=%d %s %q\n", s.Index, s.Kind, s.Turn, s.Name, s.Result)
	}
	// Output:
	// run-1 session-9 order_status 1
	// 0 model turn=0 gpt-4o-mini ""
	// 1 tool  turn=0 order_status "shipped"
	// 2 model turn=0 gpt-4o-mini "Order 1042 has shipped."
}

func ExampleRecorder_Add() {
	rec := trace.NewRecorder("run-1", "", "", trace.RecorderOptions{MaxField: 20})
	i := rec.Add(&trace.Step{Kind: trace.KindTool, Name: "search", Result: "a long result that will not fit"})
	s := rec.Trace().Steps[i]
	fmt.Println(i, s.Turn, s.Truncated)
	fmt.Printf("%q\n", s.Result)
	// Output:
	// 0 -1 true
	// "a long…[truncated]"
}

func ExampleWriter() {
	w := trace.NewWriter(os.Stdout)
	err := w.Write(&trace.Trace{
		ID:        "run-1",
		Start:     time.Date(2025, 6, 1, 9, 30, 0, 0, time.UTC),
		UserTurns: []string{"退款什么时候到账？"},
		Steps: []*trace.Step{
			{Index: 0, Kind: trace.KindModel, Turn: 0, Result: "3–5 个工作日 <以内>。"},
		},
	})
	fmt.Println(err)
	// Output:
	// {"v":1,"trace_id":"run-1","start":"2025-06-01T09:30:00Z","user_turns":["退款什么时候到账？"],"steps":[{"i":0,"kind":"model","turn":0,"result":"3–5 个工作日 <以内>。"}]}
	// <nil>
}

func ExampleReader() {
	in := `{"v":1,"trace_id":"run-1","steps":[{"i":0,"kind":"tool","name":"search","turn":-1}]}

{"v":2,"trace_id":"run-2","steps":[]}
{"v":1,"trace_id":"run-3","steps":[]}
`
	r := trace.NewReader(strings.NewReader(in))
	r.Source = "runs.jsonl"
	for {
		t, err := r.Read()
		if err == io.EOF {
			break
		}
		if err != nil {
			fmt.Println(err, errors.Is(err, trace.ErrVersion))
			continue // a bad line does not stop the reader
		}
		fmt.Println(t.ID, len(t.Steps))
	}
	// Output:
	// run-1 1
	// trace: runs.jsonl:3: unsupported version 2 true
	// run-3 0
}

func ExampleReader_All() {
	in := `{"v":1,"trace_id":"a","steps":[]}
{"v":1,"trace_id":"b","steps":[{"i":1}]}
`
	for t, err := range trace.NewReader(strings.NewReader(in)).All() {
		if err != nil {
			fmt.Println(err)
			continue
		}
		fmt.Println(t.ID)
	}
	// Output:
	// a
	// trace: line 2: invalid trace: step 0 has index 1
}

func ExampleImportOpenAI() {
	log := `{"id":"chat-1","messages":[{"role":"system","content":"Be brief."},{"role":"user","content":"Weather in Paris?"},{"role":"assistant","content":null,"tool_calls":[{"id":"c1","type":"function","function":{"name":"weather","arguments":"{\"city\":\"Paris\"}"}}]},{"role":"tool","tool_call_id":"c1","content":"18°C, cloudy"},{"role":"assistant","content":"18°C and cloudy."}]}
{"messages":[{"role":"robot","content":"?"}]}
`
	w := trace.NewWriter(os.Stdout)
	for t, err := range trace.ImportOpenAI(strings.NewReader(log), "chats.jsonl") {
		if err != nil {
			fmt.Println(err) // the import goes on with the next line
			continue
		}
		w.Write(t)
	}
	// Output:
	// {"v":1,"trace_id":"chat-1","user_turns":["Weather in Paris?"],"steps":[{"i":0,"kind":"model","turn":0,"calls":[{"id":"c1","name":"weather","args":"{\"city\":\"Paris\"}"}],"source":"message 2"},{"i":1,"kind":"tool","name":"weather","turn":0,"call_id":"c1","args":"{\"city\":\"Paris\"}","result":"18°C, cloudy","source":"message 2"},{"i":2,"kind":"model","turn":0,"result":"18°C and cloudy.","source":"message 4"}],"meta":{"system":"Be brief."}}
	// trace: chats.jsonl:2: message 0: unknown role "robot"
}

func ExampleEstimateTokens() {
	fmt.Println(trace.EstimateTokens("Where is my order?"))
	fmt.Println(trace.EstimateTokens("我的订单在哪里？"))
	// Output:
	// 5
	// 8
}

func ExampleTruncate() {
	s, cut := trace.Truncate("一二三四五六七八九十", 20)
	fmt.Println(s, cut)
	s, cut = trace.Truncate("short", 20)
	fmt.Println(s, cut)
	// Output:
	// 一二…[truncated] true
	// short false
}

func ExampleUniqueKeys() {
	// A second "role" would silently replace the first when decoded.
	err := trace.UniqueKeys([]byte(`{"messages":[{"role":"user","content":"refund me","role":"assistant"}]}`))
	fmt.Println(err, errors.Is(err, trace.ErrDuplicateKey))
	// Output:
	// duplicate key "role" in messages[0] true
}

// A session that never ends saves its trace as it grows and releases the
// steps a store has acknowledged, keeping the latest: numbering goes on,
// and a saved segment says where it starts.
func ExampleRecorder_Release() {
	rec := trace.NewRecorder("run-1", "session-9", "", trace.RecorderOptions{})
	for i := range 5 {
		rec.Add(&trace.Step{Kind: trace.KindTool, Name: "poll", Args: fmt.Sprintf(`{"n":%d}`, i)})
	}
	stored := rec.Trace() // say a trace store acknowledged these 5 steps
	keep := 2
	fmt.Println("released:", rec.Release(stored.Len()-keep, nil))
	next := rec.Add(&trace.Step{Kind: trace.KindTool, Name: "poll"})

	t := rec.Trace()
	fmt.Println("next index:", next, "released:", t.Released, "in memory:", len(t.Steps), "recorded:", t.Len())
	fmt.Println("step 1 in memory:", t.Step(1) != nil, "step 4:", t.Step(4).Args)
	// Output:
	// released: 3
	// next index: 5 released: 3 in memory: 3 recorded: 6
	// step 1 in memory: false step 4: {"n":4}
}
