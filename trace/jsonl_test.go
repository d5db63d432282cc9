package trace

import (
	"bytes"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"sync"
	"testing"
	"testing/iotest"
	"time"
)

var update = flag.Bool("update", false, "rewrite the golden files under testdata")

// goldenTraces covers every field of Trace, Step, ToolSpec, Call and
// Finding, every Kind, CJK text and a truncated step.
func goldenTraces() []*Trace {
	t0 := time.Date(2025, 6, 1, 9, 30, 0, 123456789, time.UTC)
	args, _ := Truncate(`{"query":"退货政策 return policy `+strings.Repeat("很长", 20)+`"}`, 48)
	return []*Trace{
		{
			ID:        "run-1",
			SessionID: "session-9",
			Route:     "refund",
			Start:     t0,
			UserTurns: []string{"I want a refund for order 1042.", "退款什么时候到账？"},
			Tools: []ToolSpec{
				{Name: "order_status", Description: "Look up an order.", Parameters: []byte(`{"type":"object","properties":{"id":{"type":"integer"}}}`)},
				{Name: "refund"},
			},
			Steps: []*Step{
				{Index: 0, Kind: KindMemory, Name: "extract", Turn: 0, Result: `{"order":"1042"}`, Start: t0.Add(time.Millisecond), Duration: 150 * time.Microsecond},
				{Index: 1, Kind: KindRetrieval, Name: "kb", Turn: 0, Args: "refund policy", DocIDs: []string{"kb/refunds", "kb/shipping"}, Scores: []float64{0.91, 0.5}, Start: t0.Add(2 * time.Millisecond), Duration: 12 * time.Millisecond},
				{
					Index: 2, Kind: KindModel, Name: "gpt-4o-mini", Turn: 0,
					Result: "Let me check <that> & refund it.",
					Calls:  []Call{{ID: "call_1", Name: "order_status", Args: `{"id":1042}`}, {Name: "refund", Args: `{"id":1042}`}},
					Start:  t0.Add(15 * time.Millisecond), Duration: 1500 * time.Millisecond,
					TokensIn: 1200, TokensOut: 35, Cost: 0.00042,
					Intent: "refund", Confidence: 0.875, Citations: []string{"kb/refunds"},
				},
				{Index: 3, Kind: KindTool, Name: "order_status", Turn: 0, CallID: "call_1", Args: `{"id":1042}`, Result: `{"status":"delivered"}`, Start: t0.Add(2 * time.Second), Duration: 80 * time.Millisecond},
				{
					Index: 4, Kind: KindGate, Name: "refund_needs_confirmation", Turn: 0,
					Finding: &Finding{
						Rule: "refund_needs_confirmation", Step: 5, Verdict: Clarify, Dimension: Accuracy, Severity: SeverityWarning,
						Message:  "refund requested without the user's confirmation",
						Question: "Shall I refund order 1042 to your card?",
						Evidence: `{"id":1042}`, Tags: []string{"missing-confirmation", "irreversible"}, Shadow: true,
					},
				},
				{Index: 5, Kind: KindTool, Name: "refund", Turn: 0, Args: `{"id":1042}`, Error: "blocked by refund_needs_confirmation", Blocked: true},
				{Index: 6, Kind: KindModel, Name: "gpt-4o-mini", Turn: 1, Result: "退款将在 3–5 个工作日内到账。", Refusal: false, TokensIn: 1300, TokensOut: 20},
			},
			Meta: map[string]string{"tenant": "acme", "区域": "华东"},
		},
		{
			ID:    "run-2",
			Start: time.Date(2025, 6, 2, 0, 0, 0, 0, time.UTC),
			Steps: []*Step{
				{Index: 0, Kind: KindModel, Turn: -1, Result: "抱歉，我无法回答这个问题。", Refusal: true},
				{Index: 1, Kind: KindTool, Name: "search", Turn: -1, Args: args, Result: "", Error: "timeout after 5s", Truncated: true},
			},
		},
	}
}

func readAll(t *testing.T, r *Reader) []*Trace {
	t.Helper()
	var out []*Trace
	for tr, err := range r.All() {
		if err != nil {
			t.Fatal(err)
		}
		out = append(out, tr)
	}
	return out
}

func writeAll(t *testing.T, traces []*Trace) []byte {
	t.Helper()
	var b bytes.Buffer
	w := NewWriter(&b)
	for _, tr := range traces {
		if err := w.Write(tr); err != nil {
			t.Fatal(err)
		}
	}
	return b.Bytes()
}

func checkGolden(t *testing.T, path string, got []byte) {
	t.Helper()
	if *update {
		if err := os.WriteFile(path, got, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("%v (run go test -update to create it)", err)
	}
	if !bytes.Equal(got, want) {
		t.Errorf("output differs from %s (run go test -update after checking the change)\ngot:\n%s\nwant:\n%s", path, got, want)
	}
}

func TestGolden(t *testing.T) {
	path := filepath.Join("testdata", "golden.jsonl")
	checkGolden(t, path, writeAll(t, goldenTraces()))

	golden, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	r := NewReader(bytes.NewReader(golden))
	r.Source = path
	got := readAll(t, r)
	if want := goldenTraces(); !reflect.DeepEqual(got, want) {
		t.Errorf("read %s:\ngot  %+v\nwant %+v", path, got, want)
	}
	if again := writeAll(t, got); !bytes.Equal(again, golden) {
		t.Errorf("read then write is not byte-identical:\ngot:\n%s\nwant:\n%s", again, golden)
	}
}

func TestWriteFormat(t *testing.T) {
	tests := []struct {
		name string
		in   *Trace
		want string
	}{
		{"empty", &Trace{}, `{"v":1,"trace_id":"","steps":[]}` + "\n"},
		{"nil steps become []", &Trace{ID: "x", Route: "r"}, `{"v":1,"trace_id":"x","route":"r","steps":[]}` + "\n"},
		{"no HTML escaping", &Trace{ID: "<a&b>", Steps: []*Step{{Kind: KindModel, Result: "x<y && y>z"}}},
			`{"v":1,"trace_id":"<a&b>","steps":[{"i":0,"kind":"model","turn":0,"result":"x<y && y>z"}]}` + "\n"},
		{"schema compacted", &Trace{ID: "x", Tools: []ToolSpec{{Name: "t", Parameters: []byte("{ \"a\" :\n 1 }")}}},
			`{"v":1,"trace_id":"x","tools":[{"name":"t","parameters":{"a":1}}],"steps":[]}` + "\n"},
		{"line separators escaped", &Trace{ID: "a\u2028b\nc"}, `{"v":1,"trace_id":"a\u2028b\nc","steps":[]}` + "\n"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var b bytes.Buffer
			if err := NewWriter(&b).Write(tt.in); err != nil {
				t.Fatal(err)
			}
			if got := b.String(); got != tt.want {
				t.Errorf("got  %s\nwant %s", got, tt.want)
			}
		})
	}
}

func TestWriteInvalid(t *testing.T) {
	tests := []struct {
		name string
		in   *Trace
		want string
	}{
		{"nil trace", nil, "trace: write: invalid trace: nil trace"},
		{"nil step", &Trace{Steps: []*Step{{}, nil}}, "trace: write: invalid trace: step 1 is null"},
		{"wrong index", &Trace{Steps: []*Step{{Index: 1}}}, "trace: write: invalid trace: step 0 has index 1"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var b bytes.Buffer
			err := NewWriter(&b).Write(tt.in)
			if err == nil || err.Error() != tt.want {
				t.Fatalf("got error %v, want %s", err, tt.want)
			}
			if !errors.Is(err, ErrInvalid) {
				t.Errorf("errors.Is(%v, ErrInvalid) = false", err)
			}
			if b.Len() != 0 {
				t.Errorf("wrote %q, want nothing", b.String())
			}
		})
	}
}

type failWriter struct{ n int }

func (w *failWriter) Write(p []byte) (int, error) {
	w.n++
	if w.n > 1 {
		return 3, io.ErrClosedPipe
	}
	return len(p), nil
}

func TestWriteErrorIsSticky(t *testing.T) {
	fw := &failWriter{}
	w := NewWriter(fw)
	if err := w.Write(&Trace{ID: "a"}); err != nil {
		t.Fatal(err)
	}
	err := w.Write(&Trace{ID: "b"})
	if !errors.Is(err, io.ErrClosedPipe) {
		t.Fatalf("got %v, want io.ErrClosedPipe", err)
	}
	if err2 := w.Write(&Trace{ID: "c"}); err2 != err {
		t.Errorf("after a failure: got %v, want %v", err2, err)
	}
	if fw.n != 2 {
		t.Errorf("underlying writer called %d times, want 2", fw.n)
	}
}

func TestWriterConcurrent(t *testing.T) {
	var b bytes.Buffer
	w := NewWriter(&b)
	var wg sync.WaitGroup
	for g := range 16 {
		wg.Go(func() {
			for i := range 50 {
				tr := &Trace{ID: fmt.Sprintf("%d-%d", g, i), Steps: []*Step{{Kind: KindModel, Result: strings.Repeat("x", 1000)}}}
				if err := w.Write(tr); err != nil {
					t.Error(err)
				}
			}
		})
	}
	wg.Wait()
	seen := map[string]bool{}
	for _, tr := range readAll(t, NewReader(&b)) {
		seen[tr.ID] = true
	}
	if len(seen) != 16*50 {
		t.Errorf("read %d distinct traces, want %d", len(seen), 16*50)
	}
}

func TestReaderErrors(t *testing.T) {
	good := `{"v":1,"trace_id":"ok","steps":[]}`
	tests := []struct {
		name    string
		line    string
		want    string
		wantErr error
	}{
		{"unsupported version", `{"v":2,"trace_id":"x","steps":[]}`, `trace: f.jsonl:2: unsupported version 2`, ErrVersion},
		{"version and wrong shape", `{"v":2,"steps":{"new":"shape"}}`, `trace: f.jsonl:2: unsupported version 2`, ErrVersion},
		{"version as string", `{"v":"1","trace_id":"x"}`, `trace: f.jsonl:2: unsupported version "1"`, ErrVersion},
		{"version as float", `{"v":1.0,"trace_id":"x"}`, `trace: f.jsonl:2: unsupported version 1.0`, ErrVersion},
		{"no version", `{"trace_id":"x","steps":[]}`, `trace: f.jsonl:2: unsupported version: no "v" key`, ErrVersion},
		{"null version", `{"v":null,"trace_id":"x"}`, `trace: f.jsonl:2: unsupported version null`, ErrVersion},
		{"not an object", `[{"v":1}]`, `trace: f.jsonl:2: not a JSON object`, nil},
		{"string", `"hello"`, `trace: f.jsonl:2: not a JSON object`, nil},
		{"bad JSON", `{"v":1,"trace_id":}`, `trace: f.jsonl:2: invalid JSON: invalid character '}' looking for beginning of value`, nil},
		{"truncated JSON", `{"v":1,"trace_id":"x"`, `trace: f.jsonl:2: invalid JSON: unexpected end of JSON input`, nil},
		{"trailing data", `{"v":1,"trace_id":"x"} {}`, `trace: f.jsonl:2: invalid JSON: invalid character '{' after top-level value`, nil},
		{"wrong type", `{"v":1,"trace_id":"x","steps":[{"i":"0"}]}`, `trace: f.jsonl:2: key "steps.i": want an integer, got JSON string`, nil},
		{"fraction for an integer", `{"v":1,"trace_id":"x","steps":[{"i":0.5}]}`, `trace: f.jsonl:2: key "steps.i": want an integer, got JSON number 0.5`, nil},
		{"null step", `{"v":1,"trace_id":"x","steps":[{"i":0},null]}`, `trace: f.jsonl:2: invalid trace: step 1 is null`, ErrInvalid},
		{"index off", `{"v":1,"trace_id":"x","steps":[{"i":0},{"i":2}]}`, `trace: f.jsonl:2: invalid trace: step 1 has index 2`, ErrInvalid},
		{"bad time", `{"v":1,"trace_id":"x","start":"yesterday"}`, `trace: f.jsonl:2: parsing time "yesterday" as "2006-01-02T15:04:05Z07:00": cannot parse "yesterday" as "2006"`, nil},
		{"duplicate key", `{"v":1,"trace_id":"x","trace_id":"y"}`, `trace: f.jsonl:2: duplicate key "trace_id"`, ErrDuplicateKey},
		{"duplicate key in a step", `{"v":1,"trace_id":"x","steps":[{"i":0,"result":"a","result":"b"}]}`, `trace: f.jsonl:2: duplicate key "result" in steps[0]`, ErrDuplicateKey},
		{"duplicate key, escaped", `{"v":1,"trace_id":"x","user_turns":["hi"],"user_turn\u0073":["bye"]}`, `trace: f.jsonl:2: duplicate key "user_turns"`, ErrDuplicateKey},
		{"duplicate key in a finding", `{"v":1,"trace_id":"x","steps":[{"i":0,"finding":{"rule":"a","verdict":"allow","rule":"b"}}]}`, `trace: f.jsonl:2: duplicate key "rule" in steps[0].finding`, ErrDuplicateKey},
		{"negative cost", `{"v":1,"trace_id":"x","steps":[{"i":0,"cost":-100}]}`, `trace: f.jsonl:2: invalid trace: step 0: "cost" -100 is negative`, ErrInvalid},
		{"confidence over 1", `{"v":1,"trace_id":"x","steps":[{"i":0,"confidence":1.5}]}`, `trace: f.jsonl:2: invalid trace: step 0: "confidence" 1.5 is outside [0, 1]`, ErrInvalid},
		{"negative tokens", `{"v":1,"trace_id":"x","steps":[{"i":0,"tokens_in":-1}]}`, `trace: f.jsonl:2: invalid trace: step 0: "tokens_in" -1 is negative`, ErrInvalid},
		{"negative duration", `{"v":1,"trace_id":"x","steps":[{"i":0,"duration_ns":-5}]}`, `trace: f.jsonl:2: invalid trace: step 0: "duration_ns" -5 is negative`, ErrInvalid},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := NewReader(strings.NewReader(good + "\n" + tt.line + "\n" + good + "\n"))
			r.Source = "f.jsonl"
			var got []string
			var gotErr error
			for tr, err := range r.All() {
				if err != nil {
					gotErr = err
					got = append(got, err.Error())
					continue
				}
				got = append(got, tr.ID)
			}
			want := []string{"ok", tt.want, "ok"}
			if !reflect.DeepEqual(got, want) {
				t.Fatalf("got %q\nwant %q", got, want)
			}
			var pe *ParseError
			if !errors.As(gotErr, &pe) || pe.Line != 2 || pe.Source != "f.jsonl" {
				t.Errorf("got %#v, want a *ParseError for f.jsonl line 2", gotErr)
			}
			if tt.wantErr != nil && !errors.Is(gotErr, tt.wantErr) {
				t.Errorf("errors.Is(%v, %v) = false", gotErr, tt.wantErr)
			}
		})
	}
}

func TestReaderLines(t *testing.T) {
	line := func(id string) string { return `{"v":1,"trace_id":"` + id + `","steps":[]}` }
	tests := []struct {
		name    string
		in      string
		maxLine int
		want    []string // ids, or error messages
	}{
		{"empty", "", 0, nil},
		{"only blank lines", "\n\n  \t\r\n", 0, nil},
		{"no final newline", line("a") + "\n" + line("b"), 0, []string{"a", "b"}},
		{"blank lines skipped and counted", "\n" + line("a") + "\n\n   \n{}\n", 0, []string{"a", `trace: line 5: unsupported version: no "v" key`}},
		{"CRLF", line("a") + "\r\n" + line("b") + "\r\n", 0, []string{"a", "b"}},
		{"BOM", "\uFEFF" + line("a") + "\n", 0, []string{"a"}},
		{"BOM only on line 1", line("a") + "\n\uFEFF" + line("b") + "\n", 0, []string{"a", "trace: line 2: not a JSON object"}},
		{"line at the cap", line("abc") + "\n", len(line("abc")), []string{"abc"}},
		{"line at the cap with CRLF", line("abc") + "\r\n", len(line("abc")), []string{"abc"}},
		{"line over the cap", line("a") + "\n" + line("abcd") + "\n" + line("b") + "\n", len(line("abc")),
			[]string{"a", fmt.Sprintf("trace: line 2: line too long: over %d bytes", len(line("abc"))), "b"}},
		{"last line over the cap", line("a") + "\n" + line("abcd"), len(line("abc")),
			[]string{"a", fmt.Sprintf("trace: line 2: line too long: over %d bytes", len(line("abc")))}},
		{"long lines over many buffers", line(strings.Repeat("x", 300<<10)) + "\n" + line(strings.Repeat("y", 200<<10)) + "\n" + line("c"), 250 << 10,
			[]string{"trace: line 1: line too long: over 256000 bytes", strings.Repeat("y", 200<<10), "c"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			for _, oneByte := range []bool{false, true} {
				var in io.Reader = strings.NewReader(tt.in)
				if oneByte {
					in = iotest.OneByteReader(in)
				}
				r := NewReader(in)
				r.MaxLine = tt.maxLine
				var got []string
				for tr, err := range r.All() {
					if err != nil {
						got = append(got, err.Error())
						continue
					}
					got = append(got, tr.ID)
				}
				if !reflect.DeepEqual(got, tt.want) {
					t.Errorf("one byte at a time %v: got %.200q\nwant %.200q", oneByte, got, tt.want)
				}
			}
		})
	}
}

func TestReaderIOError(t *testing.T) {
	in := io.MultiReader(strings.NewReader(`{"v":1,"trace_id":"a","steps":[]}`+"\n"+`{"v":1,`), iotest.ErrReader(io.ErrUnexpectedEOF))
	r := NewReader(in)
	r.Source = "s"
	var got []string
	for tr, err := range r.All() {
		if err != nil {
			got = append(got, err.Error())
			if !errors.Is(err, io.ErrUnexpectedEOF) {
				t.Errorf("errors.Is(%v, io.ErrUnexpectedEOF) = false", err)
			}
			continue
		}
		got = append(got, tr.ID)
	}
	want := []string{"a", "trace: s:2: unexpected EOF"}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("got %q, want %q", got, want)
	}
	if _, err := r.Read(); !errors.Is(err, io.ErrUnexpectedEOF) {
		t.Errorf("Read after an I/O error: got %v, want the same error", err)
	}
}

func TestReadEOF(t *testing.T) {
	r := NewReader(strings.NewReader(`{"v":1,"trace_id":"a","steps":[]}`))
	if _, err := r.Read(); err != nil {
		t.Fatal(err)
	}
	for range 2 {
		if tr, err := r.Read(); tr != nil || err != io.EOF {
			t.Fatalf("got %v, %v; want nil, io.EOF", tr, err)
		}
	}
}

func TestAllStopsEarly(t *testing.T) {
	r := NewReader(strings.NewReader("{}\n{}\n{}\n"))
	n := 0
	for range r.All() {
		n++
		break
	}
	if n != 1 {
		t.Fatalf("got %d, want 1", n)
	}
	_, err := r.Read()
	var pe *ParseError
	if !errors.As(err, &pe) || pe.Line != 2 {
		t.Errorf("Read after break: got %v, want an error for line 2", err)
	}
}

func TestUnknownKeysIgnored(t *testing.T) {
	r := NewReader(strings.NewReader(`{"v":1,"trace_id":"a","future":{"x":[1,2]},"steps":[{"i":0,"kind":"model","turn":0,"new_field":true}]}`))
	tr, err := r.Read()
	if err != nil {
		t.Fatal(err)
	}
	if tr.ID != "a" || len(tr.Steps) != 1 || tr.Steps[0].Kind != KindModel {
		t.Errorf("got %+v", tr)
	}
}

func TestParseErrorMessage(t *testing.T) {
	tests := []struct {
		err  *ParseError
		want string
	}{
		{&ParseError{Line: 3, Err: fmt.Errorf("%w 2", ErrVersion)}, "trace: line 3: unsupported version 2"},
		{&ParseError{Source: "runs.jsonl", Line: 3, Err: fmt.Errorf("%w 2", ErrVersion)}, "trace: runs.jsonl:3: unsupported version 2"},
	}
	for _, tt := range tests {
		if got := tt.err.Error(); got != tt.want {
			t.Errorf("got %q, want %q", got, tt.want)
		}
		if !errors.Is(tt.err, ErrVersion) {
			t.Errorf("errors.Is(%v, ErrVersion) = false", tt.err)
		}
	}
}
