package trace

import (
	"bytes"
	"errors"
	"io"
	"iter"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
)

// importers are the importers of other tools' formats, with their sniffs
// and the golden input of each under testdata.
var importers = []struct {
	name   string
	input  string
	traces int
	imp    func(io.Reader, string) iter.Seq2[*Trace, error]
	sniff  func([]byte) bool
}{
	{"otlp", "otlp_genai.jsonl", 1, ImportOTLP, SniffOTLP},
	{"anthropic", "anthropic_messages.jsonl", 2, ImportAnthropic, SniffAnthropic},
	{"langsmith", "langsmith_runs.json", 2, ImportLangSmith, SniffLangSmith},
	{"langfuse", "langfuse_traces.jsonl", 2, ImportLangfuse, SniffLangfuse},
}

func importFile(t *testing.T, imp func(io.Reader, string) iter.Seq2[*Trace, error], path string) []*Trace {
	t.Helper()
	in, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	var out []*Trace
	for tr, err := range imp(bytes.NewReader(in), filepath.Base(path)) {
		if err != nil {
			t.Fatal(err)
		}
		out = append(out, tr)
	}
	return out
}

// TestImportersGolden imports each format's sample and compares the
// traces, as JSONL, with the golden file beside it (go test -update
// rewrites them); the golden file reads back to the same traces.
func TestImportersGolden(t *testing.T) {
	for _, tt := range importers {
		t.Run(tt.name, func(t *testing.T) {
			traces := importFile(t, tt.imp, filepath.Join("testdata", tt.input))
			if len(traces) != tt.traces {
				t.Fatalf("got %d traces, want %d", len(traces), tt.traces)
			}
			path := filepath.Join("testdata", strings.TrimSuffix(strings.TrimSuffix(tt.input, ".jsonl"), ".json")+".golden.jsonl")
			checkGolden(t, path, writeAll(t, traces))
			golden, err := os.ReadFile(path)
			if err != nil {
				t.Fatal(err)
			}
			if read := readAll(t, NewReader(bytes.NewReader(golden))); !reflect.DeepEqual(read, traces) {
				t.Errorf("reading %s does not give the imported traces", path)
			}
		})
	}
}

// TestImportersRead checks, per format, what the rules read: user turns
// in order, each tool call answered by its result, the model that
// answered.
func TestImportersRead(t *testing.T) {
	type want struct {
		turns  []string
		steps  []string // kind:name
		result map[int]string
		errAt  map[int]string
		model  string // provider/response model of the last model step
	}
	tests := map[string][]want{
		"anthropic": {
			{turns: []string{"Where is order A42?"}, steps: []string{"model:claude-sonnet-4-20250514", "tool:query_order", "model:claude-sonnet-4-20250514"},
				result: map[int]string{1: "[]", 2: "There are no records of order A42."}, model: "anthropic/claude-sonnet-4-20250514"},
			{turns: []string{"请取消订单 B7。", "为什么不行？"}, steps: []string{"model:claude-sonnet-4-20250514", "tool:cancel_order", "model:claude-sonnet-4-20250514"},
				errAt: map[int]string{1: "订单已发货，无法取消"}, result: map[int]string{2: "订单 B7 已经发货，所以无法取消。"}, model: "anthropic/claude-sonnet-4-20250514"},
		},
		"langsmith": {
			{turns: []string{"Where is order A42?"}, steps: []string{"model:gpt-4o", "tool:query_order", "model:gpt-4o"},
				result: map[int]string{1: "[]", 2: "There are no records of order A42."}, model: "openai/gpt-4o-2024-08-06"},
			{turns: []string{"退款政策第 9.9 条是什么？"}, steps: []string{"retrieval:policy_search", "model:claude-sonnet-4-20250514"},
				result: map[int]string{1: "根据第 9.9 条，您可以获得全额退款。"}, model: "anthropic/claude-sonnet-4-20250514"},
		},
		"langfuse": {
			{turns: []string{"Where is order A42?"}, steps: []string{"model:gpt-4o", "tool:query_order", "model:gpt-4o"},
				result: map[int]string{1: "[]", 2: "There are no records of order A42."}, model: "/"},
			{turns: []string{"我可以退款吗？"}, steps: []string{"model:claude-sonnet-4-20250514", "tool:refund_order"},
				errAt: map[int]string{1: "金额不能为负数"}, model: "/"},
		},
	}
	for _, tt := range importers {
		cases, ok := tests[tt.name]
		if !ok {
			continue
		}
		t.Run(tt.name, func(t *testing.T) {
			traces := importFile(t, tt.imp, filepath.Join("testdata", tt.input))
			for i, w := range cases {
				tr := traces[i]
				if !reflect.DeepEqual(tr.UserTurns, w.turns) {
					t.Errorf("trace %d: turns %q, want %q", i, tr.UserTurns, w.turns)
				}
				var got []string
				var last *Step
				for _, s := range tr.Steps {
					got = append(got, string(s.Kind)+":"+s.Name)
					if s.Kind == KindModel {
						last = s
					}
				}
				if !reflect.DeepEqual(got, w.steps) {
					t.Errorf("trace %d: steps %q, want %q", i, got, w.steps)
					continue
				}
				for j, r := range w.result {
					if tr.Steps[j].Result != r {
						t.Errorf("trace %d step %d: result %q, want %q", i, j, tr.Steps[j].Result, r)
					}
				}
				for j, e := range w.errAt {
					if tr.Steps[j].Error != e {
						t.Errorf("trace %d step %d: error %q, want %q", i, j, tr.Steps[j].Error, e)
					}
				}
				if m := last.Provider + "/" + last.ResponseModel; m != w.model {
					t.Errorf("trace %d: answered by %q, want %q", i, m, w.model)
				}
				// A proposed call and the tool step that ran it share the id.
				for _, s := range tr.Steps {
					if s.Kind == KindTool && s.CallID != "" && s.Index > 0 {
						prev := tr.Steps[s.Index-1]
						if len(prev.Calls) > 0 && prev.Calls[0].ID != s.CallID {
							t.Errorf("trace %d: tool step %d answers %q, the call was %q", i, s.Index, s.CallID, prev.Calls[0].ID)
						}
					}
				}
			}
		})
	}
}

// TestSniff checks that each format is recognised by its own predicate
// and by no other, and that the OpenAI chat logs and this package's JSONL
// are recognised by none.
func TestSniff(t *testing.T) {
	inputs := map[string][]byte{}
	for _, tt := range importers {
		b, err := os.ReadFile(filepath.Join("testdata", tt.input))
		if err != nil {
			t.Fatal(err)
		}
		inputs[tt.name] = b[:min(len(b), 4096)]
	}
	for _, other := range []string{"openai_chat.jsonl", "golden.jsonl"} {
		b, err := os.ReadFile(filepath.Join("testdata", other))
		if err != nil {
			t.Fatal(err)
		}
		inputs[other] = b[:min(len(b), 4096)]
	}
	for _, tt := range importers {
		for name, head := range inputs {
			if got := tt.sniff(head); got != (name == tt.name) {
				t.Errorf("Sniff %s on %s = %v", tt.name, name, got)
			}
		}
	}
}

// TestImportErrors checks that bad input gets a *ParseError naming the
// line, and that a key given twice is refused.
func TestImportErrors(t *testing.T) {
	tests := []struct {
		name string
		imp  func(io.Reader, string) iter.Seq2[*Trace, error]
		in   string
		line int
		is   error
	}{
		{"otlp duplicate key", ImportOTLP, "\n{\"resourceSpans\":[{\"scopeSpans\":[{\"spans\":[\n{\"traceId\":\"a\",\"traceId\":\"b\"}]}]}]}", 3, ErrDuplicateKey},
		{"otlp not json", ImportOTLP, "{\"resourceSpans\":[]}\n{oops", 2, nil},
		{"otlp other json", ImportOTLP, `{"spans":[]}`, 1, nil},
		{"anthropic duplicate key", ImportAnthropic, "{\"messages\":[]}\n{\"messages\":[],\"messages\":[]}", 2, ErrDuplicateKey},
		{"anthropic bad role", ImportAnthropic, `{"messages":[{"role":"robot","content":"x"}]}`, 1, nil},
		{"langsmith duplicate key", ImportLangSmith, "[{\"id\":\"r\",\"run_type\":\"llm\",\n\"name\":\"a\",\"name\":\"b\"}]", 2, ErrDuplicateKey},
		{"langsmith not a run", ImportLangSmith, `[{"foo":1}]`, 1, nil},
		{"langfuse duplicate key", ImportLangfuse, "{\"id\":\"t\",\"observations\":[{\"id\":\"o\",\"id\":\"p\"}]}", 1, ErrDuplicateKey},
		{"langfuse bad time", ImportLangfuse, `{"id":"t","observations":[{"id":"o","type":"TOOL","startTime":"yesterday"}]}`, 1, nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var errs []error
			for _, err := range tt.imp(strings.NewReader(tt.in), "in.json") {
				if err != nil {
					errs = append(errs, err)
				}
			}
			if len(errs) == 0 {
				t.Fatal("no error")
			}
			var pe *ParseError
			if !errors.As(errs[0], &pe) || pe.Line != tt.line || pe.Source != "in.json" {
				t.Errorf("error %v, want a *ParseError at in.json:%d", errs[0], tt.line)
			}
			if tt.is != nil && !errors.Is(errs[0], tt.is) {
				t.Errorf("error %v, want %v", errs[0], tt.is)
			}
		})
	}
}

// TestImportOTLPForeignSpans imports GenAI spans of another
// instrumentation — no agentguard.* attributes, gen_ai.system for the
// provider, spans out of order in the file — and checks that steps follow
// start times, user turns come from the chat input, and a gate event
// follows the step it judged.
func TestImportOTLPForeignSpans(t *testing.T) {
	in := `{"resourceSpans":[{"scopeSpans":[{"spans":[
{"traceId":"5b8efff798038103d269b633813fc60c","spanId":"0002","parentSpanId":"0001","name":"execute_tool query_order","startTimeUnixNano":"1748770201100000000","endTimeUnixNano":"1748770201300000000",
 "attributes":[{"key":"gen_ai.operation.name","value":{"stringValue":"execute_tool"}},{"key":"gen_ai.tool.name","value":{"stringValue":"query_order"}},{"key":"gen_ai.tool.call.id","value":{"stringValue":"call_1"}},
  {"key":"gen_ai.tool.call.arguments","value":{"stringValue":"{\"order_id\":\"A42\"}"}},{"key":"gen_ai.tool.call.result","value":{"stringValue":"[]"}}]},
{"traceId":"5b8efff798038103d269b633813fc60c","spanId":"0003","parentSpanId":"0001","name":"chat gpt-4o","startTimeUnixNano":"1748770201400000000","endTimeUnixNano":"1748770202000000000",
 "attributes":[{"key":"gen_ai.operation.name","value":{"stringValue":"chat"}},{"key":"gen_ai.system","value":{"stringValue":"openai"}},{"key":"gen_ai.request.model","value":{"stringValue":"gpt-4o"}},
  {"key":"gen_ai.input.messages","value":{"stringValue":"[{\"role\":\"user\",\"parts\":[{\"type\":\"text\",\"content\":\"订单 A42 在哪里？\"}]},{\"role\":\"assistant\",\"parts\":[{\"type\":\"tool_call\",\"id\":\"call_1\",\"name\":\"query_order\",\"arguments\":{\"order_id\":\"A42\"}}]},{\"role\":\"tool\",\"parts\":[{\"type\":\"tool_call_response\",\"id\":\"call_1\",\"response\":\"[]\"}]}]"}},
  {"key":"gen_ai.output.messages","value":{"stringValue":"[{\"role\":\"assistant\",\"parts\":[{\"type\":\"text\",\"content\":\"系统中没有订单 A42 的记录。\"}],\"finish_reason\":\"stop\"}]"}}],
 "events":[{"timeUnixNano":"1748770202000000000","name":"gen_ai.evaluation.result","attributes":[{"key":"gen_ai.evaluation.name","value":{"stringValue":"empty-result"}},{"key":"gen_ai.evaluation.score.label","value":{"stringValue":"clarify"}}]}],
 "status":{"code":1}},
{"traceId":"5b8efff798038103d269b633813fc60c","spanId":"0004","parentSpanId":"0001","name":"chat gpt-4o","startTimeUnixNano":"1748770200100000000","endTimeUnixNano":"1748770201000000000",
 "attributes":[{"key":"gen_ai.operation.name","value":{"stringValue":"chat"}},{"key":"gen_ai.request.model","value":{"stringValue":"gpt-4o"}},
  {"key":"gen_ai.input.messages","value":{"stringValue":"[{\"role\":\"user\",\"parts\":[{\"type\":\"text\",\"content\":\"订单 A42 在哪里？\"}]}]"}},
  {"key":"gen_ai.output.messages","value":{"stringValue":"[{\"role\":\"assistant\",\"parts\":[{\"type\":\"tool_call\",\"id\":\"call_1\",\"name\":\"query_order\",\"arguments\":{\"order_id\":\"A42\"}}],\"finish_reason\":\"tool_call\"}]"}}]},
{"traceId":"5b8efff798038103d269b633813fc60c","spanId":"0001","name":"POST /chat","startTimeUnixNano":"1748770200000000000","endTimeUnixNano":"1748770202100000000","kind":2,"attributes":[{"key":"http.request.method","value":{"stringValue":"POST"}}]}
]}]}]}`
	var got []*Trace
	for tr, err := range ImportOTLP(strings.NewReader(in), "foreign.json") {
		if err != nil {
			t.Fatal(err)
		}
		got = append(got, tr)
	}
	if len(got) != 1 {
		t.Fatalf("got %d traces", len(got))
	}
	tr := got[0]
	var steps []string
	for _, s := range tr.Steps {
		steps = append(steps, string(s.Kind)+":"+s.Name)
	}
	if want := []string{"model:gpt-4o", "tool:query_order", "model:gpt-4o", "gate:empty-result"}; !reflect.DeepEqual(steps, want) {
		t.Fatalf("steps %q, want %q", steps, want)
	}
	if tr.ID != "5b8efff798038103d269b633813fc60c" || !reflect.DeepEqual(tr.UserTurns, []string{"订单 A42 在哪里？"}) {
		t.Errorf("trace %s, turns %q", tr.ID, tr.UserTurns)
	}
	if s := tr.Steps[0]; len(s.Calls) != 1 || s.Calls[0].Args != `{"order_id":"A42"}` || s.Turn != 0 {
		t.Errorf("first model step %+v", s)
	}
	if s := tr.Steps[2]; s.Provider != "openai" || s.Result != "系统中没有订单 A42 的记录。" || s.Args != "" {
		t.Errorf("answer step %+v", s)
	}
	if f := tr.Steps[3].Finding; f == nil || f.Step != 2 || f.Verdict != Clarify {
		t.Errorf("gate finding %+v, want clarify about step 2", f)
	}
	for _, s := range tr.Steps {
		if s.Turn != 0 {
			t.Errorf("step %d turn %d, want 0", s.Index, s.Turn)
		}
	}
}
