package trace

import (
	"bytes"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// addLines seeds f with every line of the testdata files matching pattern,
// and with each whole file.
func addLines(f *testing.F, pattern string) {
	files, err := filepath.Glob(filepath.Join("testdata", pattern))
	if err != nil || len(files) == 0 {
		f.Fatalf("no seed files for %s: %v", pattern, err)
	}
	for _, name := range files {
		b, err := os.ReadFile(name)
		if err != nil {
			f.Fatal(err)
		}
		f.Add(b)
		for line := range bytes.Lines(b) {
			f.Add(line)
		}
	}
}

func FuzzReader(f *testing.F) {
	addLines(f, "*.golden.jsonl")
	addLines(f, "golden.jsonl")
	for _, s := range []string{
		"",
		"\n\n",
		`{"v":1}`,
		`{"v":2,"trace_id":"x"}`,
		`{"v":1,"trace_id":"x","steps":[null]}`,
		`{"v":1,"trace_id":"x","steps":[{"i":0,"start":"2025-06-01T09:30:00.5+05:30","scores":[-0,1e-7,1e300]}]}`,
		`{"v":1,"trace_id":"x","tools":[{"name":"t","parameters":{ "a" : [1, 2.50] }}]}`,
		`{"v":1,"trace_id":"x","start":"0001-01-01T00:00:00Z","steps":[{"i":0,"start":"2025-06-01T09:30:00.100-00:00","duration_ns":-5,"cost":1e-400,"turn":-7}]}`,
		`{"v":1,"V":1,"Trace_ID":"x","steps":[{"I":0,"finding":null,"calls":[{}]}],"meta":{"":""}}`,
		"\uFEFF{\"v\":1,\"trace_id\":\"\\u2028\\ud800\"}\r\n",
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, in []byte) {
		r := NewReader(bytes.NewReader(in))
		r.MaxLine = 1 << 20
		for tr, err := range r.All() {
			if err != nil {
				var pe *ParseError
				if !errors.As(err, &pe) {
					t.Fatalf("error %v is not a *ParseError", err)
				}
				continue
			}
			first, err := appendLine(nil, tr)
			if err != nil {
				t.Fatalf("cannot write a trace the reader accepted: %v", err)
			}
			again, err := NewReader(bytes.NewReader(first)).Read()
			if err != nil {
				t.Fatalf("cannot read back %s: %v", first, err)
			}
			second, err := appendLine(nil, again)
			if err != nil {
				t.Fatal(err)
			}
			if !bytes.Equal(first, second) {
				t.Fatalf("write, read, write differs:\n%s\n%s", first, second)
			}
		}
	})
}

func FuzzImportOpenAI(f *testing.F) {
	addLines(f, "openai_chat.jsonl")
	for _, s := range []string{
		"",
		`{"messages":[]}`,
		`{"messages":[{"role":"tool","content":"x"}]}`,
		`{"id":1,"messages":[{"role":"assistant","tool_calls":[{"id":"a","function":{"name":"f","arguments":{"x":[1, 2]}}}]},{"role":"tool","tool_call_id":"a","content":[{"type":"text","text":"ok"}]}]}`,
		`{"messages":[{"role":"user","content":42}]}`,
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, in []byte) {
		lines := 0
		for tr, err := range ImportOpenAI(bytes.NewReader(in), "fuzz") {
			lines++
			if err != nil {
				var pe *ParseError
				if !errors.As(err, &pe) {
					t.Fatalf("error %v is not a *ParseError", err)
				}
				continue
			}
			if tr.ID == "" && !strings.Contains(string(in), `"id"`) {
				t.Fatalf("trace without an id: %+v", tr)
			}
			// Whatever the importer makes, the JSONL format must carry.
			first, err := appendLine(nil, tr)
			if err != nil {
				t.Fatalf("cannot write an imported trace: %v", err)
			}
			again, err := NewReader(bytes.NewReader(first)).Read()
			if err != nil {
				t.Fatalf("cannot read back %s: %v", first, err)
			}
			if second, _ := appendLine(nil, again); !bytes.Equal(first, second) {
				t.Fatalf("write, read, write differs:\n%s\n%s", first, second)
			}
		}
		if lines > bytes.Count(in, []byte("\n"))+1 {
			t.Fatalf("%d results from %d lines", lines, bytes.Count(in, []byte("\n"))+1)
		}
	})
}
