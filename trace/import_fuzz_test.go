package trace

import (
	"bytes"
	"errors"
	"io"
	"iter"
	"os"
	"path/filepath"
	"testing"
)

// fuzzImporter checks what any importer must do with any input: errors
// are *ParseError, and every trace it makes is one the JSONL format
// carries unchanged.
func fuzzImporter(f *testing.F, input string, imp func(io.Reader, string) iter.Seq2[*Trace, error], seeds ...string) {
	if b, err := os.ReadFile(filepath.Join("testdata", input)); err == nil {
		f.Add(b)
	}
	for _, s := range seeds {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, in []byte) {
		for tr, err := range imp(bytes.NewReader(in), "fuzz") {
			if err != nil {
				var pe *ParseError
				if !errors.As(err, &pe) || pe.Line < 1 {
					t.Fatalf("error %v is not a *ParseError with a line", err)
				}
				continue
			}
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
	})
}

func FuzzImportOTLP(f *testing.F) {
	fuzzImporter(f, "otlp_genai.jsonl", ImportOTLP,
		``, `{}`, `{"resourceSpans":[]}`, `[1,2]`,
		`{"resourceSpans":[{"scopeSpans":[{"spans":[{"traceId":"t","spanId":"s","startTimeUnixNano":"18446744073709551615","attributes":[{"key":"gen_ai.operation.name","value":{"stringValue":"chat"}},{"key":"agentguard.step","value":{"intValue":"-3"}}],"events":[{"name":"gen_ai.evaluation.result","attributes":[{"key":"agentguard.step","value":{"intValue":"99"}}]}]}]}]}]}`,
		`{"resourceSpans":[{"scopeSpans":[{"spans":[{"traceId":"t","attributes":[{"key":"gen_ai.operation.name","value":{"stringValue":"invoke_agent"}}],"events":[{"name":"agentguard.memory"},{"name":"gen_ai.evaluation.result","attributes":[{"key":"agentguard.step","value":{"intValue":"0"}}]}]}]}]}]}`)
}

// FuzzImportOTLPLogs reads spans and log events as a collector writes
// them: the log events join their spans as gates, and the findings read
// back as violations; errors are *ParseError with a line.
func FuzzImportOTLPLogs(f *testing.F) {
	if b, err := os.ReadFile(filepath.Join("testdata", "otlp_collector.jsonl")); err == nil {
		f.Add(b)
	}
	for _, s := range []string{``, `{"resourceLogs":[]}`, `{"resourceLogs":[{"scopeLogs":[{"logRecords":[{"eventName":"gen_ai.evaluation.result","traceId":"t","spanId":"s","timeUnixNano":"x","attributes":[{"key":"agentguard.step","value":{"intValue":"-1"}}]}]}]}]}`,
		`{"resourceSpans":[{"scopeSpans":[{"spans":[{"traceId":"t","spanId":"s","attributes":[{"key":"gen_ai.operation.name","value":{"stringValue":"execute_tool"}}]}]}]}],"resourceLogs":[{"scopeLogs":[{"logRecords":[{"attributes":[{"key":"event.name","value":{"stringValue":"gen_ai.evaluation.result"}}],"traceId":"t","spanId":"s"}]}]}]}`} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, in []byte) {
		for _, err := range ImportOTLPFindings(bytes.NewReader(in), "fuzz") {
			var pe *ParseError
			if err != nil && (!errors.As(err, &pe) || pe.Line < 1) {
				t.Fatalf("error %v is not a *ParseError with a line", err)
			}
		}
		for tr, err := range ImportOTLP(bytes.NewReader(in), "fuzz") {
			if err != nil {
				continue
			}
			if _, err := appendLine(nil, tr); err != nil {
				t.Fatalf("cannot write an imported trace: %v", err)
			}
		}
	})
}

func FuzzImportAnthropic(f *testing.F) {
	fuzzImporter(f, "anthropic_messages.jsonl", ImportAnthropic,
		``, `{"messages":[]}`, `{"request":{"messages":[{"role":"user","content":[{"type":"tool_result","tool_use_id":"x","content":[{"type":"text","text":"y"}]}]}]}}`,
		`{"messages":[{"role":"assistant","content":[{"type":"tool_use","id":"a","name":"f","input":{"x":[1, 2]}}]}],"response":{"role":"assistant","content":"ok","usage":{"input_tokens":-1}}}`)
}

func FuzzImportLangSmith(f *testing.F) {
	fuzzImporter(f, "langsmith_runs.json", ImportLangSmith,
		``, `[]`, `{"runs":[{"id":"a","run_type":"tool","parent_run_id":"a"}]}`,
		`{"id":"a","run_type":"llm","outputs":{"choices":[{"message":{"role":"assistant","tool_calls":[{"function":{"name":"f","arguments":"{}"}}]}}]}}`,
		`{"id":"b","run_type":"chain","child_runs":[{"id":"c","run_type":"retriever","outputs":{"documents":[{}]}}]}`)
}

func FuzzImportLangfuse(f *testing.F) {
	fuzzImporter(f, "langfuse_traces.jsonl", ImportLangfuse,
		``, `{"data":[]}`, `{"id":"t","observations":[]}`,
		`{"id":"o","traceId":"t","type":"GENERATION","startTime":"2025-06-01T09:30:00Z","input":{"messages":[[{"type":"human","content":"hi"}]]}}`,
		`[{"id":"t","observations":[{"id":"o","type":"RETRIEVER","output":{"documents":[{"metadata":{"id":"d"}}]}}]}]`)
}
