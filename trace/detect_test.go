package trace_test

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"iter"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"testing"

	"github.com/agentguard/agentguard/trace"
)

// TestImportDetects reads each built-in format without being told which,
// and checks the error for inputs in none of them.
func TestImportDetects(t *testing.T) {
	golden, err := os.ReadFile("testdata/golden.jsonl")
	if err != nil {
		t.Fatal(err)
	}
	chats, err := os.ReadFile("testdata/openai_chat.jsonl")
	if err != nil {
		t.Fatal(err)
	}
	messages := `{"role":"system","content":"你是客服。"}
{"role":"user","content":"订单 A1002 的地址改成杭州市西湖区文三路 90 号。"}
{"role":"assistant","content":null,"tool_calls":[{"id":"c1","type":"function","function":{"name":"update_address","arguments":"{\"order\":\"A1002\"}"}}]}
{"role":"tool","tool_call_id":"c1","content":"ok"}
{"role":"assistant","content":"Done."}
`
	for _, tt := range []struct {
		name, in string
		format   string // the format detected
		traces   int
		err      string // a substring of the first error, "" for none
	}{
		{name: "agentguard", in: string(golden), format: "agentguard", traces: strings.Count(strings.TrimSpace(string(golden)), "\n") + 1},
		{name: "openai chat logs", in: string(chats), format: "openai", traces: 3},
		{name: "openai messages", in: messages, format: "openai-messages", traces: 1},
		{name: "blank lines and a BOM first", in: "\uFEFF\n\n" + messages, format: "openai-messages", traces: 1},
		{name: "only a user message", in: `{"role":"user","content":"hi"}`, format: "openai-messages", traces: 1},
		{name: "empty", in: "", traces: 0},
		{name: "blank", in: "\n \n", traces: 0},
		{name: "not JSON", in: "hello\n", err: `in.jsonl:1: unknown input format: the line is not a JSON object; want JSON Lines in one of: agentguard: `},
		{name: "a JSON array", in: "\n[1,2]\n", err: `in.jsonl:2: unknown input format: the line is a JSON array`},
		{name: "other keys", in: `{"input":"hi","output":"hello"}`, err: `in.jsonl:1: unknown input format: a JSON object with keys "input", "output"; want one of: agentguard`},
		{name: "bad second message", in: `{"role":"user","content":"hi"}` + "\n" + `{"role":"bot","content":"hi"}`, format: "openai-messages", err: `in.jsonl:2: unknown role "bot"`},
	} {
		t.Run(tt.name, func(t *testing.T) {
			if tt.format != "" {
				first := strings.TrimSpace(strings.TrimPrefix(tt.in, "\uFEFF"))
				first, _, _ = strings.Cut(first, "\n")
				f, err := trace.DetectFormat([]byte(first))
				if err != nil || f.Name != tt.format {
					t.Errorf("DetectFormat = %q, %v; want %q", f.Name, err, tt.format)
				}
			}
			n, firstErr := count(trace.Import(strings.NewReader(tt.in), "in.jsonl", ""))
			if n != tt.traces {
				t.Errorf("%d traces, want %d", n, tt.traces)
			}
			switch {
			case tt.err == "" && firstErr != nil:
				t.Errorf("error %v", firstErr)
			case tt.err != "" && (firstErr == nil || !strings.Contains(firstErr.Error(), tt.err)):
				t.Errorf("error %v\nwant it to hold %q", firstErr, tt.err)
			}
		})
	}
}

// TestImportNamedFormat: a named format is used as it is, and when it fails
// on a line that looks like another format, the error says which.
func TestImportNamedFormat(t *testing.T) {
	chat := `{"id":"c1","messages":[{"role":"user","content":"hi"}]}`
	for _, tt := range []struct {
		name, in, format string
		err              string
	}{
		{name: "right", in: chat, format: "openai"},
		{name: "openai read as trace JSONL", in: chat, format: "agentguard",
			err: `trace: chats.jsonl:1: unsupported version: no "v" key (the line looks like openai: OpenAI chat logs, one conversation per line`},
		{name: "messages read as chat logs", in: `{"role":"user","content":"hi"}`, format: "openai",
			err: `trace: chats.jsonl:1: no "messages" key (the line looks like openai-messages: `},
		{name: "unknown name", in: chat, format: "csv", err: `trace: unknown format "csv" (want agentguard, openai, openai-messages`},
	} {
		t.Run(tt.name, func(t *testing.T) {
			_, err := count(trace.Import(strings.NewReader(tt.in), "chats.jsonl", tt.format))
			if tt.err == "" && err != nil || tt.err != "" && (err == nil || !strings.Contains(err.Error(), tt.err)) {
				t.Errorf("error %v\nwant %q", err, tt.err)
			}
		})
	}
}

// TestDetectFormatAmbiguous registers a second format that claims chat
// logs as surely as openai does, and checks that detection says so.
func TestDetectFormatAmbiguous(t *testing.T) {
	trace.RegisterFormat(trace.Format{
		Name: "test-ambiguous",
		Doc:  "a test format that claims every object with an \"ambiguous\" key",
		Detect: func(first map[string]json.RawMessage) trace.Match {
			if _, ok := first["ambiguous"]; ok {
				return trace.SureMatch
			}
			return trace.NoMatch
		},
		Read: func(io.Reader, string) iter.Seq2[*trace.Trace, error] { return func(func(*trace.Trace, error) bool) {} },
	})
	_, err := trace.DetectFormat([]byte(`{"ambiguous":1,"v":1,"trace_id":"x","steps":[]}`))
	if !errors.Is(err, trace.ErrAmbiguousFormat) || !strings.Contains(err.Error(), "could be agentguard or test-ambiguous") {
		t.Errorf("err = %v", err)
	}
	f, err := trace.DetectFormat([]byte(`{"ambiguous":1}`))
	if err != nil || f.Name != "test-ambiguous" {
		t.Errorf("DetectFormat = %q, %v", f.Name, err)
	}
	defer func() {
		if recover() == nil {
			t.Error("registering a name twice did not panic")
		}
	}()
	trace.RegisterFormat(trace.Format{Name: "openai", Detect: func(map[string]json.RawMessage) trace.Match { return 0 }, Read: trace.ImportOpenAI})
}

// count ranges over seq and returns the traces read and the first error.
func count(seq iter.Seq2[*trace.Trace, error]) (n int, first error) {
	for t, err := range seq {
		if err != nil {
			if first == nil {
				first = err
			}
			continue
		}
		if t != nil {
			n++
		}
	}
	return n, first
}

// FuzzImport: Import never panics and yields either a trace or an error.
func FuzzImport(f *testing.F) {
	for _, s := range []string{"", "\n", `{"v":1,"trace_id":"a","steps":[]}`, `{"messages":[{"role":"user","content":"x"}]}`,
		`{"role":"user","content":"x"}` + "\n" + `{"role":"assistant","content":"y"}`, "[1]", `{"role":7}`, "\uFEFF{}"} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, in []byte) {
		for tr, err := range trace.Import(strings.NewReader(string(in)), "fuzz", "") {
			if (tr == nil) == (err == nil) {
				t.Fatalf("yielded %v and %v", tr, err)
			}
		}
	})
}

func ExampleImport() {
	in := strings.NewReader(`{"role":"user","content":"Where is order A1001?"}
{"role":"assistant","content":"It shipped yesterday."}
`)
	for t, err := range trace.Import(in, "chat.jsonl", "") { // the format is detected
		if err != nil {
			fmt.Println(err)
			continue
		}
		fmt.Println(t.ID, t.UserTurns, len(t.Steps))
	}
	_, err := trace.DetectFormat([]byte(`{"prompt":"hi"}`))
	fmt.Println(errors.Is(err, trace.ErrUnknownFormat))
	// Output:
	// chat.jsonl [Where is order A1001?] 1
	// true
}

// BenchmarkImport reads n traces through Import, the format detected, and
// through a Reader, the baseline: detection reads the first line twice.
func BenchmarkImport(b *testing.B) {
	golden, err := os.ReadFile("testdata/golden.jsonl")
	if err != nil {
		b.Fatal(err)
	}
	lines := strings.SplitAfter(strings.TrimSpace(string(golden)), "\n")
	for _, n := range []int{10, 1000, 10000} {
		var in strings.Builder
		for i := range n {
			in.WriteString(strings.TrimSpace(lines[i%len(lines)]) + "\n")
		}
		text := in.String()
		for _, bb := range []struct {
			name string
			read func() iter.Seq2[*trace.Trace, error]
		}{
			{"Reader", func() iter.Seq2[*trace.Trace, error] { return trace.NewReader(strings.NewReader(text)).All() }},
			{"Import", func() iter.Seq2[*trace.Trace, error] { return trace.Import(strings.NewReader(text), "", "") }},
		} {
			b.Run(fmt.Sprintf("%s/%d", bb.name, n), func(b *testing.B) {
				b.ReportAllocs()
				b.SetBytes(int64(len(text)))
				for b.Loop() {
					if got, err := count(bb.read()); got != n || err != nil {
						b.Fatalf("%d traces, %v", got, err)
					}
				}
			})
		}
	}
}

// A format of one's own joins detection: here, a log whose lines hold a
// "prompt" and a "completion".
func ExampleRegisterFormat() {
	trace.RegisterFormat(trace.Format{
		Name: "example-completions",
		Doc:  `prompt/completion pairs, one per line ({"prompt":...,"completion":...})`,
		Detect: func(first map[string]json.RawMessage) trace.Match {
			_, p := first["prompt"]
			_, c := first["completion"]
			if p && c {
				return trace.SureMatch
			}
			return trace.NoMatch
		},
		Read: func(r io.Reader, source string) iter.Seq2[*trace.Trace, error] {
			return func(yield func(*trace.Trace, error) bool) {
				dec := json.NewDecoder(r)
				for n := 1; ; n++ {
					var l struct{ Prompt, Completion string }
					if err := dec.Decode(&l); err == io.EOF {
						return
					} else if err != nil {
						yield(nil, &trace.ParseError{Source: source, Line: n, Err: err})
						return
					}
					t := &trace.Trace{ID: fmt.Sprint(n), UserTurns: []string{l.Prompt},
						Steps: []*trace.Step{{Kind: trace.KindModel, Result: l.Completion}}}
					if !yield(t, nil) {
						return
					}
				}
			}
		},
	})
	in := strings.NewReader(`{"prompt":"2+2?","completion":"4"}` + "\n")
	for t, err := range trace.Import(in, "log.jsonl", "") {
		fmt.Println(t.UserTurns[0], t.Steps[0].Result, err)
	}
	f, _ := trace.LookupFormat("openai")
	fmt.Println(f.Doc)
	// Output:
	// 2+2? 4 <nil>
	// OpenAI chat logs, one conversation per line ({"messages":[...]})
}

// TestDetectImportedFormats: the first line of each importer's sample is
// detected as its format, and as no other.
func TestDetectImportedFormats(t *testing.T) {
	for _, tc := range []struct{ file, want string }{
		{"testdata/otlp_genai.jsonl", "otlp"},
		{"testdata/anthropic_messages.jsonl", "anthropic"},
		{"testdata/langfuse_traces.jsonl", "langfuse"},
		{"testdata/openai_chat.jsonl", "openai"},
		{"testdata/golden.jsonl", "agentguard"},
	} {
		t.Run(tc.want, func(t *testing.T) {
			data, err := os.ReadFile(tc.file)
			if err != nil {
				t.Fatal(err)
			}
			first, _, _ := bytes.Cut(data, []byte("\n"))
			f, err := trace.DetectFormat(first)
			if err != nil {
				t.Fatal(err)
			}
			if f.Name != tc.want {
				t.Errorf("DetectFormat(%s) = %s, want %s", tc.file, f.Name, tc.want)
			}
			n := 0
			for tr, err := range f.Read(bytes.NewReader(data), tc.file) {
				if err != nil {
					t.Fatal(err)
				}
				if len(tr.Steps) == 0 {
					t.Errorf("%s: a trace with no steps", tr.ID)
				}
				n++
			}
			if n == 0 {
				t.Error("no trace read")
			}
		})
	}
}

// blankInput reads as newlines without end: an input that expands (a small
// gzip of blank lines decompresses to gigabytes).
type blankInput struct{}

func (blankInput) Read(p []byte) (int, error) {
	for i := range p {
		p[i] = '\n'
	}
	return len(p), nil
}

// TestImportBoundsLeadingBlankLines checks that the blank lines before the
// first record are counted, not kept: an input of nothing but blank lines
// is refused after 64 MiB, in bounded memory, and a record
// after blank lines keeps its line number.
func TestImportBoundsLeadingBlankLines(t *testing.T) {
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	var got error
	for _, err := range trace.Import(blankInput{}, "blank.jsonl", "") {
		got = err
	}
	runtime.ReadMemStats(&after)
	var pe *trace.ParseError
	if !errors.As(got, &pe) || !strings.Contains(got.Error(), "blank lines") {
		t.Fatalf("endless blank lines: got %v, want a ParseError saying so", got)
	}
	if alloc := after.TotalAlloc - before.TotalAlloc; alloc > 16<<20 {
		t.Errorf("reading 64 MiB of blank lines allocated %d MiB", alloc>>20)
	}
	in := strings.Repeat("\n", 1000) + "  \n" + `{"role":"user","content":"订单 A1001 到哪了？"}` + "\n" + "{not json\n"
	var lines []int
	for _, err := range trace.Import(strings.NewReader(in), "chat.jsonl", "") {
		if errors.As(err, &pe) {
			lines = append(lines, pe.Line)
		}
	}
	if !slices.Equal(lines, []int{1003}) {
		t.Errorf("a bad line after 1,001 blank lines and a record: errors on lines %v, want [1003]", lines)
	}
}

// otlpLines is n OTLP/JSON export requests of one span each, all of one
// trace, as a collector's file exporter writes a long agent run: model
// calls and tool calls in turn, with the agentguard step attributes.
func otlpLines(n int) string {
	var b strings.Builder
	for i := range n {
		op, name, extra := "chat", "chat gpt-4o", `{"key":"gen_ai.request.model","value":{"stringValue":"gpt-4o"}}`
		if i%2 == 1 {
			op, name = "execute_tool", "execute_tool query_order"
			extra = fmt.Sprintf(`{"key":"gen_ai.tool.name","value":{"stringValue":"query_order"}},{"key":"gen_ai.tool.call.id","value":{"stringValue":"call_%d"}},{"key":"gen_ai.tool.call.arguments","value":{"stringValue":"{\"order_id\":\"A%d\"}"}}`, i, 1000+i)
		}
		start := 1748770200000000000 + int64(i)*1000000
		fmt.Fprintf(&b, `{"resourceSpans":[{"resource":{"attributes":[{"key":"service.name","value":{"stringValue":"support-agent"}}]},"scopeSpans":[{"scope":{"name":"agent"},"spans":[{"traceId":"5b8efff798038103d269b633813fc60c","spanId":"%016x","parentSpanId":"0000000000000001","name":%q,"kind":3,"startTimeUnixNano":"%d","endTimeUnixNano":"%d","attributes":[{"key":"gen_ai.operation.name","value":{"stringValue":%q}},{"key":"agentguard.step","value":{"intValue":"%d"}},%s],"status":{}}]}]}]}`+"\n",
			i+2, name, start, start+500000, op, i, extra)
	}
	return b.String()
}

// BenchmarkImportOTLPSpansPerTrace reads one trace of n spans, a span per
// line: the cost per span should not grow with the trace.
func BenchmarkImportOTLPSpansPerTrace(b *testing.B) {
	for _, n := range []int{10, 1000, 10000} {
		in := otlpLines(n)
		b.Run(fmt.Sprintf("spans=%d", n), func(b *testing.B) {
			b.SetBytes(int64(len(in)))
			b.ReportAllocs()
			for b.Loop() {
				for tr, err := range trace.Import(strings.NewReader(in), "spans.jsonl", "") {
					if err != nil {
						b.Fatal(err)
					}
					if len(tr.Steps) != n {
						b.Fatalf("%d steps, want %d", len(tr.Steps), n)
					}
				}
			}
			b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N*n), "ns/span")
		})
	}
}

// TestImportWholeFiles reads the sample files as other tools also write
// them, whole: pretty-printed (a collector's file exporter with
// indentation, jq's output), as one JSON array of records, and as JSON
// Lines; format detection finds the format in each, and each imports to
// what its JSON Lines form does.
func TestImportWholeFiles(t *testing.T) {
	for _, name := range []string{"otlp_genai.jsonl", "openai_chat.jsonl", "anthropic_messages.jsonl", "langfuse_traces.jsonl", "golden.jsonl"} {
		lines, err := os.ReadFile(filepath.Join("testdata", name))
		if err != nil {
			t.Fatal(err)
		}
		var vals []json.RawMessage
		var pretty bytes.Buffer
		for _, l := range bytes.Split(bytes.TrimSpace(lines), []byte("\n")) {
			if l = bytes.TrimSpace(l); len(l) == 0 {
				continue
			}
			vals = append(vals, l)
			if err := json.Indent(&pretty, l, "", "  "); err != nil {
				t.Fatal(err)
			}
			pretty.WriteByte('\n')
		}
		array, _ := json.MarshalIndent(vals, "", "\t")
		want := importAll(t, lines, "")
		if len(want) == 0 {
			t.Fatalf("%s: imports nothing", name)
		}
		for form, data := range map[string][]byte{"pretty-printed": pretty.Bytes(), "an array": array} {
			if got := importAll(t, data, ""); !slices.Equal(got, want) {
				t.Errorf("%s %s imports %d traces, want %d:\n got %.300q\nwant %.300q", name, form, len(got), len(want), got, want)
			}
		}
	}
}

// importAll imports data with format detection and returns each trace as
// its JSON, failing on any error.
func importAll(t *testing.T, data []byte, format string) []string {
	t.Helper()
	var out []string
	for tr, err := range trace.Import(bytes.NewReader(data), "test", format) {
		if err != nil {
			t.Fatalf("import: %v", err)
		}
		b, _ := json.Marshal(tr)
		out = append(out, string(b))
	}
	return out
}
