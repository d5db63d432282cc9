package trace

import (
	"encoding/json"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
)

// FuzzUnmarshalAsEncodingJSON holds unmarshal to encoding/json on the
// types it decodes: the same value when encoding/json decodes the input,
// the same error when it does not.
func FuzzUnmarshalAsEncodingJSON(f *testing.F) {
	for _, name := range []string{"golden.jsonl", "openai_chat.jsonl", "otlp_genai.jsonl", "otlp_collector.jsonl", "anthropic_messages.jsonl", "langfuse_traces.jsonl"} {
		data, err := os.ReadFile(filepath.Join("testdata", name))
		if err != nil {
			f.Fatal(err)
		}
		for line := range strings.Lines(string(data)) {
			f.Add([]byte(line))
		}
	}
	for _, s := range []string{
		`{"v":1,"trace_id":"t","steps":[{"kind":"tool","NAME":"a","args":"{}"}]}`, // v1 matches names in any case
		`{"v":1,"trace_id":"t","trace_id":"u"}`,                                   // a duplicate: the last wins
		"{\"v\":1,\"trace_id\":\"\xff\xfe\"}",                                     // invalid UTF-8 becomes U+FFFD
		`{"v":1,"steps":[{"duration_ns":1e3}]}`, `{"v":1,"steps":{}}`, `{"v":"1"}`, `{"v":1} x`,
		`{"messages":[{"role":"user","content":[{"type":"text","text":"你好"}]}],"id":7}`,
		`{"messages":[{"role":"tool","content":null,"tool_call_id":12}]}`,
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, in []byte) {
		same(t, in, func() *jsonlLine { return new(jsonlLine) })
		same(t, in, func() *chatLog { return new(chatLog) })
		same(t, in, func() *[]chatPart { return new([]chatPart) })
		same(t, in, func() *otlpRequest { return new(otlpRequest) })
		same(t, in, func() *anthropicLog { return new(anthropicLog) })
		same(t, in, func() *lfTrace { return new(lfTrace) })
		same(t, in, func() *lfObservation { return new(lfObservation) })
		same(t, in, func() *lsRun { return new(lsRun) })
	})
}

func same[T any](t *testing.T, in []byte, fresh func() *T) {
	t.Helper()
	got, want := fresh(), fresh()
	gotErr, wantErr := unmarshal(in, got), json.Unmarshal(in, want)
	switch {
	case (gotErr == nil) != (wantErr == nil):
		t.Fatalf("%T of %q: error %v, encoding/json's %v", got, in, gotErr, wantErr)
	case gotErr != nil && gotErr.Error() != wantErr.Error():
		t.Fatalf("%T of %q: error %q, encoding/json's %q", got, in, gotErr, wantErr)
	case gotErr == nil && !reflect.DeepEqual(got, want):
		t.Fatalf("%T of %q:\n got %+v\nwant %+v", got, in, got, want)
	}
}

// failedToolTextByMap is FailedToolText as it was written first, decoding
// the whole object into a map: the reference the token reader is held to.
func failedToolTextByMap(text string) bool {
	t := strings.TrimSpace(text)
	if len(t) >= 6 && strings.EqualFold(t[:6], "error:") {
		return true
	}
	if !strings.HasPrefix(t, "{") {
		return false
	}
	var obj map[string]json.RawMessage
	if json.Unmarshal([]byte(t), &obj) != nil || len(obj) != 1 {
		return false
	}
	v, ok := obj["error"]
	if !ok {
		return false
	}
	switch strings.TrimSpace(string(v)) {
	case "null", "false", `""`, "{}", "[]":
		return false
	}
	return true
}

func FuzzFailedToolText(f *testing.F) {
	for _, s := range []string{
		`Error: order not found`, `{"error":"not found"}`, `{"error":null}`, `{"error":{}}`, `{"error":[ ]}`,
		`{"error":"x","error":null}`, `{"error":null,"error":"x"}`, `{"error":"x","code":404}`, `{"code":404}`,
		`{"\u0065rror":1}`, `{"error":1} trailing`, `{"error":1}}`, `{"error":`, `{}`, ` {"error" : false } `,
		"{\"error\":\"\xff\"}", `{"错误":"未找到"}`, `{"error":"订单不存在"}`, `[{"error":1}]`,
	} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		if got, want := FailedToolText(s), failedToolTextByMap(s); got != want {
			t.Fatalf("FailedToolText(%q) = %v, decoding into a map says %v", s, got, want)
		}
	})
}
