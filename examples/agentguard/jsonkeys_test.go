package main

import (
	"bytes"
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"unicode"
)

// TestJSONKeysSnakeCase: every verb's JSON spells its keys as the trace
// format does, in snake_case ("last_seen", not "LastSeen"), whatever
// struct it comes from.
func TestJSONKeysSnakeCase(t *testing.T) {
	dir := t.TempDir()
	demo := filepath.Join(dir, "demo")
	runOK := func(args ...string) []byte {
		t.Helper()
		var stdout, stderr bytes.Buffer
		if code := run(context.Background(), args, &stdout, &stderr); code == 2 {
			t.Fatalf("%q: exit %d\n%s", args, code, stderr.String())
		}
		return stdout.Bytes()
	}
	runOK("demo", "-quiet", "-out", demo)
	report := filepath.Join(dir, "conteval.json")
	runOK("conteval", "-traces", filepath.Join(demo, "traces.jsonl"), "-report", report)
	conteval, err := os.ReadFile(report)
	if err != nil {
		t.Fatal(err)
	}
	outputs := map[string][]byte{
		"ledger lessons -json": runOK("ledger", "lessons", "-json", filepath.Join(demo, "ledger")),
		"conteval -report":     conteval,
		"evaluate":             runOK("evaluate", filepath.Join(demo, "traces.jsonl")),
	}
	for name, out := range outputs {
		dec := json.NewDecoder(bytes.NewReader(out))
		for dec.More() {
			var v any
			if err := dec.Decode(&v); err != nil {
				t.Fatalf("%s: %v", name, err)
			}
			if bad := upperKeys(v, ""); len(bad) > 0 {
				t.Errorf("%s: keys not in snake_case: %s", name, strings.Join(bad, ", "))
			}
		}
	}
}

// upperKeys returns the object keys of v, at any depth, with an upper-case
// letter that are field names (not data such as a case id used as a key:
// those hold a digit).
func upperKeys(v any, path string) []string {
	var out []string
	switch x := v.(type) {
	case map[string]any:
		for k, e := range x {
			data := strings.ContainsFunc(k, unicode.IsDigit)
			if !data && strings.ContainsFunc(k, unicode.IsUpper) {
				out = append(out, path+"."+k)
			}
			out = append(out, upperKeys(e, path+"."+k)...)
		}
	case []any:
		for _, e := range x {
			out = append(out, upperKeys(e, path+"[]")...)
		}
	}
	return out
}
