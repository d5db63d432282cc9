package trace

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"testing/iotest"
)

func TestImportOpenAIGolden(t *testing.T) {
	in, err := os.ReadFile(filepath.Join("testdata", "openai_chat.jsonl"))
	if err != nil {
		t.Fatal(err)
	}
	var traces []*Trace
	for tr, err := range ImportOpenAI(bytes.NewReader(in), "openai_chat.jsonl") {
		if err != nil {
			t.Fatal(err)
		}
		traces = append(traces, tr)
	}
	if len(traces) != 3 {
		t.Fatalf("got %d traces, want 3", len(traces))
	}
	path := filepath.Join("testdata", "openai_chat.golden.jsonl")
	checkGolden(t, path, writeAll(t, traces))

	golden, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	read := readAll(t, NewReader(bytes.NewReader(golden)))
	if !reflect.DeepEqual(read, traces) {
		t.Errorf("reading %s does not give the imported traces", path)
	}
	if again := writeAll(t, read); !bytes.Equal(again, golden) {
		t.Errorf("read then write of %s is not byte-identical", path)
	}
}

// importOne imports a single line and fails the test on an error.
func importOne(t *testing.T, line string) *Trace {
	t.Helper()
	var got []*Trace
	for tr, err := range ImportOpenAI(strings.NewReader(line), "t") {
		if err != nil {
			t.Fatal(err)
		}
		got = append(got, tr)
	}
	if len(got) != 1 {
		t.Fatalf("got %d traces, want 1", len(got))
	}
	return got[0]
}

func TestImportOpenAIMapping(t *testing.T) {
	tests := []struct {
		name string
		line string
		want *Trace
	}{
		{
			name: "minimal",
			line: `{"messages":[]}`,
			want: &Trace{ID: "t:1", Steps: []*Step{}},
		},
		{
			name: "identity keys",
			line: `{"id":"c1","session_id":"s","route":"r","metadata":{"a":"x","n":1.5,"o":{"k": [1, 2]},"z":null},"messages":[]}`,
			want: &Trace{ID: "c1", SessionID: "s", Route: "r", Meta: map[string]string{"a": "x", "n": "1.5", "o": `{"k":[1,2]}`}, Steps: []*Step{}},
		},
		{
			name: "numeric id",
			line: `{"id":-12.5e3,"messages":[]}`,
			want: &Trace{ID: "-12.5e3", Steps: []*Step{}},
		},
		{
			name: "system messages joined, overriding metadata",
			line: `{"id":"c","metadata":{"system":"old"},"messages":[{"role":"system","content":"a"},{"role":"developer","content":[{"type":"text","text":"b"}]}]}`,
			want: &Trace{ID: "c", Meta: map[string]string{"system": "a\n\nb"}, Steps: []*Step{}},
		},
		{
			name: "turns",
			line: `{"id":"c","model":"m","messages":[{"role":"assistant","content":"hi"},{"role":"user","content":"q1"},{"role":"assistant","content":"a1"},{"role":"user","content":null},{"role":"user","content":[{"type":"image_url","image_url":{"url":"x"}},{"type":"text","text":"look"}]},{"role":"assistant"}]}`,
			want: &Trace{ID: "c", UserTurns: []string{"q1", "", "look"}, Steps: []*Step{
				{Index: 0, Kind: KindModel, Name: "m", Turn: -1, Result: "hi"},
				{Index: 1, Kind: KindModel, Name: "m", Turn: 0, Result: "a1"},
				{Index: 2, Kind: KindModel, Name: "m", Turn: 2},
			}},
		},
		{
			name: "calls matched by id, out of order",
			line: `{"id":"c","messages":[{"role":"user","content":"u"},{"role":"assistant","content":null,"tool_calls":[{"id":"a","type":"function","function":{"name":"f","arguments":"{\"x\": 1}"}},{"id":"b","type":"function","function":{"name":"g","arguments":{"y": [1, 2]}}}]},{"role":"tool","tool_call_id":"b","content":"rb"},{"role":"tool","tool_call_id":"a","content":"ra"}]}`,
			want: &Trace{ID: "c", UserTurns: []string{"u"}, Steps: []*Step{
				{Index: 0, Kind: KindModel, Turn: 0, Calls: []Call{{ID: "a", Name: "f", Args: `{"x": 1}`}, {ID: "b", Name: "g", Args: `{"y":[1,2]}`}}},
				{Index: 1, Kind: KindTool, Name: "f", Turn: 0, CallID: "a", Args: `{"x": 1}`, Result: "ra"},
				{Index: 2, Kind: KindTool, Name: "g", Turn: 0, CallID: "b", Args: `{"y":[1,2]}`, Result: "rb"},
			}},
		},
		{
			name: "no id matches the oldest unanswered call",
			line: `{"id":"c","messages":[{"role":"assistant","tool_calls":[{"id":"a","function":{"name":"f"}},{"id":"b","function":{"name":"g","arguments":null}}]},{"role":"tool","tool_call_id":"a","content":"ra"},{"role":"tool","content":"rb"},{"role":"tool","content":"extra","name":"h"}]}`,
			want: &Trace{ID: "c", Steps: []*Step{
				{Index: 0, Kind: KindModel, Turn: -1, Calls: []Call{{ID: "a", Name: "f"}, {ID: "b", Name: "g"}}},
				{Index: 1, Kind: KindTool, Name: "f", Turn: -1, CallID: "a", Result: "ra"},
				{Index: 2, Kind: KindTool, Name: "g", Turn: -1, CallID: "b", Result: "rb"},
				{Index: 3, Kind: KindTool, Name: "h", Turn: -1, Result: "extra", Error: "unmatched tool result"},
			}},
		},
		{
			name: "a second answer to one call is unmatched",
			line: `{"id":"c","messages":[{"role":"assistant","tool_calls":[{"id":"a","function":{"name":"f"}}]},{"role":"tool","tool_call_id":"a","content":"1"},{"role":"tool","tool_call_id":"a","content":"2"}]}`,
			want: &Trace{ID: "c", Steps: []*Step{
				{Index: 0, Kind: KindModel, Turn: -1, Calls: []Call{{ID: "a", Name: "f"}}},
				{Index: 1, Kind: KindTool, Name: "f", Turn: -1, CallID: "a", Result: "1"},
				{Index: 2, Kind: KindTool, Turn: -1, CallID: "a", Result: "2", Error: "unmatched tool result"},
			}},
		},
		{
			name: "a result after a later turn still matches",
			line: `{"id":"c","messages":[{"role":"assistant","tool_calls":[{"id":"a","function":{"name":"f"}}]},{"role":"user","content":"hurry"},{"role":"tool","tool_call_id":"a","content":"late"}]}`,
			want: &Trace{ID: "c", UserTurns: []string{"hurry"}, Steps: []*Step{
				{Index: 0, Kind: KindModel, Turn: -1, Calls: []Call{{ID: "a", Name: "f"}}},
				{Index: 1, Kind: KindTool, Name: "f", Turn: -1, CallID: "a", Result: "late"},
			}},
		},
		{
			name: "legacy function_call and functions",
			line: `{"id":"c","functions":[{"name":"f","parameters":{ "type" : "object" }}],"messages":[{"role":"assistant","content":"","function_call":{"name":"f","arguments":"{}"}},{"role":"function","name":"f","content":"ok"}]}`,
			want: &Trace{ID: "c", Tools: []ToolSpec{{Name: "f", Parameters: []byte(`{"type":"object"}`)}}, Steps: []*Step{
				{Index: 0, Kind: KindModel, Turn: -1, Calls: []Call{{Name: "f", Args: "{}"}}},
				{Index: 1, Kind: KindTool, Name: "f", Turn: -1, Args: "{}", Result: "ok"},
			}},
		},
		{
			name: "tool result fills a missing call name",
			line: `{"id":"c","messages":[{"role":"assistant","tool_calls":[{"id":"a"}]},{"role":"tool","tool_call_id":"a","name":"f","content":"ok"}]}`,
			want: &Trace{ID: "c", Steps: []*Step{
				{Index: 0, Kind: KindModel, Turn: -1, Calls: []Call{{ID: "a"}}},
				{Index: 1, Kind: KindTool, Name: "f", Turn: -1, CallID: "a", Result: "ok"},
			}},
		},
		{
			name: "refusals",
			line: `{"id":"c","messages":[{"role":"assistant","content":null,"refusal":"no"},{"role":"assistant","content":[{"type":"refusal","refusal":"nope"}]}]}`,
			want: &Trace{ID: "c", Steps: []*Step{
				{Index: 0, Kind: KindModel, Turn: -1, Result: "no", Refusal: true},
				{Index: 1, Kind: KindModel, Turn: -1, Result: "nope", Refusal: true},
			}},
		},
		{
			// The format has no status: a failure is in the content, as
			// τ-bench and LangChain write it. Such a result is the step's
			// Error, not a record; a result that merely mentions an error
			// is a result.
			name: "failed calls",
			line: `{"id":"c","messages":[{"role":"assistant","tool_calls":[{"id":"a","function":{"name":"get_order"}},{"id":"b","function":{"name":"get_user"}},{"id":"c","function":{"name":"get_item"}},{"id":"d","function":{"name":"get_log"}}]},` +
				`{"role":"tool","tool_call_id":"a","content":"Error: order #W1 not found"},{"role":"tool","tool_call_id":"b","content":"{\"error\": \"user not found\"}"},` +
				`{"role":"tool","tool_call_id":"c","content":"{\"error\": null, \"item\": \"lamp\"}"},{"role":"tool","tool_call_id":"d","content":"2 errors: timeout, retry"}]}`,
			want: &Trace{ID: "c", Steps: []*Step{
				{Index: 0, Kind: KindModel, Turn: -1, Calls: []Call{{ID: "a", Name: "get_order"}, {ID: "b", Name: "get_user"}, {ID: "c", Name: "get_item"}, {ID: "d", Name: "get_log"}}},
				{Index: 1, Kind: KindTool, Name: "get_order", Turn: -1, CallID: "a", Error: "Error: order #W1 not found"},
				{Index: 2, Kind: KindTool, Name: "get_user", Turn: -1, CallID: "b", Error: `{"error": "user not found"}`},
				{Index: 3, Kind: KindTool, Name: "get_item", Turn: -1, CallID: "c", Result: `{"error": null, "item": "lamp"}`},
				{Index: 4, Kind: KindTool, Name: "get_log", Turn: -1, CallID: "d", Result: "2 errors: timeout, retry"},
			}},
		},
		{
			name: "tools, nested and flat",
			line: `{"id":"c","tools":[{"type":"function","function":{"name":"a","description":"d","parameters":null}},{"type":"function","name":"b","parameters":{"p":1}}],"messages":[]}`,
			want: &Trace{ID: "c", Tools: []ToolSpec{{Name: "a", Description: "d"}, {Name: "b", Parameters: []byte(`{"p":1}`)}}, Steps: []*Step{}},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := importOne(t, tt.line)
			for _, s := range got.Steps {
				s.Source = "" // TestImportOpenAISource checks it
			}
			if !reflect.DeepEqual(got, tt.want) {
				var g, w bytes.Buffer
				NewWriter(&g).Write(got)
				NewWriter(&w).Write(tt.want)
				t.Errorf("got  %s\nwant %s", g.Bytes(), w.Bytes())
			}
		})
	}
}

func TestImportOpenAIErrors(t *testing.T) {
	tests := []struct {
		name string
		line string
		want string
	}{
		{"not JSON", `hello`, `trace: in.jsonl:2: not a JSON object`},
		{"array", `[{"messages":[]}]`, `trace: in.jsonl:2: not a JSON object`},
		{"bad JSON", `{"messages":[}`, `trace: in.jsonl:2: invalid JSON: invalid character '}' looking for beginning of value`},
		{"no messages", `{"id":"x"}`, `trace: in.jsonl:2: no "messages" key`},
		{"null messages", `{"messages":null}`, `trace: in.jsonl:2: no "messages" key`},
		{"unknown role", `{"messages":[{"role":"user","content":"a"},{"role":"bot","content":"b"}]}`, `trace: in.jsonl:2: message 1: unknown role "bot"`},
		{"content of the wrong type", `{"messages":[{"role":"user","content":42}]}`, `trace: in.jsonl:2: message 0: content is not a string, an array of parts or null`},
		{"parts of the wrong type", `{"messages":[{"role":"user","content":["a"]}]}`, `trace: in.jsonl:2: message 0: content: want an object, got JSON string`},
		{"part text of the wrong type", `{"messages":[{"role":"user","content":[{"type":"text","text":5}]}]}`, `trace: in.jsonl:2: message 0: content: key "text": want a string, got JSON number`},
		{"id of the wrong type", `{"id":{"a":1},"messages":[]}`, `trace: in.jsonl:2: id: not a string or a number`},
		{"wrong type", `{"messages":[{"role":"user","tool_calls":{}}]}`, `trace: in.jsonl:2: key "messages.tool_calls": want an array, got JSON object`},
		// A second "role" once hid a user turn (issue 20).
		{"duplicate role", `{"messages":[{"role":"user","content":"refund me","role":"assistant"}]}`, `trace: in.jsonl:2: duplicate key "role" in messages[0]`},
		{"duplicate messages", `{"messages":[{"role":"user","content":"a"}],"messages":[]}`, `trace: in.jsonl:2: duplicate key "messages"`},
		{"duplicate key in a tool call", `{"messages":[{"role":"assistant","tool_calls":[{"id":"c","type":"function","function":{"name":"a","name":"b","arguments":"{}"}}]}]}`, `trace: in.jsonl:2: duplicate key "name" in messages[0].tool_calls[0].function`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			in := `{"id":"a","messages":[]}` + "\n" + tt.line + "\n" + `{"id":"b","messages":[]}` + "\n"
			var got []string
			for tr, err := range ImportOpenAI(strings.NewReader(in), "in.jsonl") {
				if err != nil {
					got = append(got, err.Error())
					var pe *ParseError
					if !errors.As(err, &pe) || pe.Line != 2 {
						t.Errorf("got %#v, want a *ParseError for line 2", err)
					}
					continue
				}
				got = append(got, tr.ID)
			}
			if want := []string{"a", tt.want, "b"}; !reflect.DeepEqual(got, want) {
				t.Errorf("got %q\nwant %q", got, want)
			}
		})
	}
}

func TestImportOpenAIIOError(t *testing.T) {
	in := io.MultiReader(strings.NewReader(`{"messages":[]}`+"\n"), iotest.ErrReader(io.ErrClosedPipe))
	var got []string
	for tr, err := range ImportOpenAI(in, "") {
		if err != nil {
			got = append(got, err.Error())
			continue
		}
		got = append(got, tr.ID)
	}
	if want := []string{"openai:1", "trace: line 2: io: read/write on closed pipe"}; !reflect.DeepEqual(got, want) {
		t.Errorf("got %q, want %q", got, want)
	}
}

func TestImportOpenAIResumes(t *testing.T) {
	seq := ImportOpenAI(strings.NewReader("{\"messages\":[]}\n{\"messages\":[]}\n"), "s")
	var got []string
	for range 2 {
		for tr := range seq {
			got = append(got, tr.ID)
			break
		}
	}
	if want := []string{"s:1", "s:2"}; !reflect.DeepEqual(got, want) {
		t.Errorf("got %q, want %q", got, want)
	}
}

func TestImportOpenAIManyCalls(t *testing.T) {
	const n = 20000
	var b strings.Builder
	b.WriteString(`{"id":"c","messages":[{"role":"assistant","tool_calls":[`)
	for i := range n {
		if i > 0 {
			b.WriteByte(',')
		}
		fmt.Fprintf(&b, `{"id":"%d","function":{"name":"f"}}`, i)
	}
	b.WriteString(`]}`)
	for i := range n / 2 { // the first half answered in order, without ids
		fmt.Fprintf(&b, `,{"role":"tool","content":"%d"}`, i)
	}
	for i := n - 1; i >= n/2; i-- { // the second half in reverse, by id
		fmt.Fprintf(&b, `,{"role":"tool","tool_call_id":"%d","content":"%d"}`, i, i)
	}
	b.WriteString(`]}`)
	tr := importOne(t, b.String())
	if len(tr.Steps) != n+1 {
		t.Fatalf("got %d steps, want %d", len(tr.Steps), n+1)
	}
	for _, s := range tr.Steps[1:] {
		if s.Result != s.CallID || s.Error != "" {
			t.Fatalf("step %d: call %s got result %q, error %q", s.Index, s.CallID, s.Result, s.Error)
		}
	}
}

// TestImportOpenAISource: each step says which message of the input it
// was read from, so that a finding can be placed in the user's own log:
// a model step its message, a tool step the message that made the call,
// an unmatched result its own message.
func TestImportOpenAISource(t *testing.T) {
	got := importOne(t, `{"id":"c","messages":[{"role":"system","content":"s"},{"role":"user","content":"u"},`+
		`{"role":"assistant","tool_calls":[{"id":"a","function":{"name":"f"}}]},{"role":"tool","tool_call_id":"a","content":"ra"},`+
		`{"role":"tool","tool_call_id":"zz","content":"stray"},{"role":"assistant","content":"done"}]}`)
	var sources []string
	for _, s := range got.Steps {
		sources = append(sources, s.Source)
	}
	if want := []string{"message 2", "message 2", "message 4", "message 5"}; !reflect.DeepEqual(sources, want) {
		t.Errorf("sources %q, want %q", sources, want)
	}
}
