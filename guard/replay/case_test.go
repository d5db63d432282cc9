package replay

import (
	"bytes"
	"errors"
	"os"
	"reflect"
	"strings"
	"testing"
	"time"
)

const good = `{"id":"c1","category":"normal","turns":["hi"],"answer":{},"last_verified":"2026-11-01"}`

// withKey returns good with one key replaced or added: "key":value.
func withKey(key, value string) string {
	return strings.Replace(good, `{"id":"c1",`, `{"id":"c1","`+key+`":`+value+`,`, 1)
}

func TestLoadCasesRejects(t *testing.T) {
	tests := []struct {
		name, line string
		want       string // in the error
	}{
		{"not JSON", `{"id":`, "invalid JSON"},
		{"not an object", `["c1"]`, "want an object"},
		{"two values", good + ` {}`, "more than one JSON value"},
		{"duplicate key", withKey("turns", `["refund me"]`), `duplicate key "turns"`},
		{"duplicate key in a call", withKey("trajectory", `{"calls":[{"name":"a","name":"b"}]}`), `duplicate key "name" in trajectory.calls[0]`},
		{"negative tool budget", withKey("max_tool_calls", "-1"), "max_tool_calls -1 is negative"},
		{"unknown key", withKey("must", `["x"]`), `unknown key "must"`},
		{"wrong type", strings.Replace(good, `"turns":["hi"]`, `"turns":"hi"`, 1), `key "turns"`},
		{"no id", strings.Replace(good, `"id":"c1",`, ``, 1), `missing "id"`},
		{"bad id", strings.Replace(good, `"id":"c1"`, `"id":"c 1"`, 1), `id "c 1"`},
		{"bad category", strings.Replace(good, `"normal"`, `"easy"`, 1), `category "easy"`},
		{"no turns", strings.Replace(good, `"turns":["hi"]`, `"turns":[]`, 1), `"turns" is empty`},
		{"blank turn", strings.Replace(good, `"turns":["hi"]`, `"turns":["hi","  "]`, 1), "turn 1 is blank"},
		{"intent turn out of range", withKey("intent_turn", "1"), "intent_turn 1"},
		{"negative intent turn out of range", withKey("intent_turn", "-2"), "intent_turn -2"},
		{"bad match", withKey("trajectory", `{"match":"loose","calls":[]}`), `match "loose"`},
		{"bad args mode", withKey("trajectory", `{"args":"fuzzy","calls":[]}`), `args "fuzzy"`},
		{"bad override", withKey("trajectory", `{"overrides":{"t":"some"},"calls":[]}`), `overrides.t "some"`},
		{"call without name", withKey("trajectory", `{"calls":[{"args":{}}]}`), "call 0 has no name"},
		{"call args not an object", withKey("trajectory", `{"calls":[{"name":"t","args":[1]}]}`), "args must be a JSON object"},
		{"empty alternative", strings.Replace(good, `"answer":{}`, `"answer":{"must":["a|"]}`, 1), "empty alternative"},
		{"constraint without id", withKey("constraints", `[{"turn":0,"no_tool":"t"}]`), `constraint 0: missing "id"`},
		{"constraint turn", withKey("constraints", `[{"id":"k","turn":3,"no_tool":"t"}]`), "k: turn 3"},
		{"constraint without kind", withKey("constraints", `[{"id":"k","turn":0}]`), "set exactly one"},
		{"constraint with two kinds", withKey("constraints", `[{"id":"k","turn":0,"no_tool":"t","answer_not":["x"]}]`), "set exactly one"},
		{"constraint half an arg", withKey("constraints", `[{"id":"k","turn":0,"tool":"t","arg":"a"}]`), `go together`},
		{"duplicate constraint", withKey("constraints", `[{"id":"k","turn":0,"no_tool":"t"},{"id":"k","turn":0,"no_tool":"u"}]`), `duplicate id "k"`},
		{"negative budget", withKey("max_tool_calls", "-1"), "max_tool_calls -1"},
		{"tag with space", withKey("tags", `["two words"]`), `tag 0 "two words"`},
		{"bad date", strings.Replace(good, `2026-11-01`, `01/11/2026`, 1), `last_verified "01/11/2026"`},
		{"not UTF-8", strings.Replace(good, "hi", "h\xffi", 1), "not UTF-8"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			in := good + "\n\n" + tt.line + "\n"
			cases, err := LoadCases(strings.NewReader(in), "set.jsonl")
			if len(cases) != 1 || cases[0].ID != "c1" {
				t.Errorf("got %d cases, want the valid one", len(cases))
			}
			var e *Error
			if !errors.As(err, &e) {
				t.Fatalf("err = %v, want an *Error", err)
			}
			if e.Line != 3 || e.Source != "set.jsonl" {
				t.Errorf("error at %s:%d, want set.jsonl:3", e.Source, e.Line)
			}
			if !errors.Is(err, ErrInvalid) {
				t.Errorf("err = %v, want ErrInvalid", err)
			}
			if !strings.Contains(err.Error(), tt.want) || !strings.HasPrefix(err.Error(), "replay: set.jsonl:3: ") {
				t.Errorf("err = %q, want it to start with the place and contain %q", err, tt.want)
			}
		})
	}
}

func TestLoadCasesDuplicate(t *testing.T) {
	_, err := LoadCases(strings.NewReader(good+"\n"+good+"\n"), "")
	if !errors.Is(err, ErrDuplicate) {
		t.Fatalf("err = %v, want ErrDuplicate", err)
	}
	if got, want := err.Error(), `replay: line 2: case c1: duplicate case: id "c1" is already used on line 1`; got != want {
		t.Errorf("err = %q, want %q", got, want)
	}
}

func TestLoadCasesAllErrors(t *testing.T) {
	in := "\uFEFF" + good + "\r\n" + `{"id":"b1"}` + "\n" + `nope` + "\n"
	cases, err := LoadCases(strings.NewReader(in), "x")
	if len(cases) != 1 {
		t.Errorf("got %d cases, want 1", len(cases))
	}
	for _, want := range []string{"x:2: case b1:", "x:3:"} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("err = %q, want it to contain %q", err, want)
		}
	}
}

func TestLoadCasesLongLine(t *testing.T) {
	long := strings.Replace(good, "hi", strings.Repeat("a", MaxLine), 1)
	_, err := LoadCases(strings.NewReader(good+"\n"+long+"\n"), "x")
	if !errors.Is(err, ErrInvalid) || !strings.Contains(err.Error(), "longer than") {
		t.Errorf("err = %v, want a too-long line", err)
	}
}

func TestWriteCaseRoundTrip(t *testing.T) {
	f, err := os.ReadFile("testdata/cases.jsonl")
	if err != nil {
		t.Fatal(err)
	}
	cases, err := LoadCases(bytes.NewReader(f), "cases.jsonl")
	if err != nil {
		t.Fatal(err)
	}
	var b bytes.Buffer
	for _, c := range cases {
		if err := WriteCase(&b, c); err != nil {
			t.Fatal(err)
		}
	}
	if got, want := b.String(), string(f); got != want {
		t.Errorf("written:\n%s\nwant the file back:\n%s", got, want)
	}
	again, err := LoadCases(&b, "")
	if err != nil || !reflect.DeepEqual(again, cases) {
		t.Errorf("read back %+v, %v; want %+v", again, err, cases)
	}
}

func TestWriteCaseInvalid(t *testing.T) {
	var b bytes.Buffer
	err := WriteCase(&b, Case{ID: "x", Category: Normal})
	if !errors.Is(err, ErrInvalid) || b.Len() != 0 {
		t.Errorf("err = %v, wrote %q; want ErrInvalid and nothing", err, b.String())
	}
}

func FuzzLoadCases(f *testing.F) {
	b, err := os.ReadFile("testdata/cases.jsonl")
	if err != nil {
		f.Fatal(err)
	}
	f.Add(b)
	for line := range bytes.Lines(b) {
		f.Add(line)
	}
	f.Add([]byte(good))
	f.Add([]byte(`{"id":"x","category":"normal","turns":["a"],"answer":{"must":["|"]},"last_verified":"2026-01-01"}`))
	f.Fuzz(func(t *testing.T, data []byte) {
		cases, _ := LoadCases(bytes.NewReader(data), "fuzz")
		for _, c := range cases {
			if err := c.Validate(); err != nil {
				t.Fatalf("loaded an invalid case: %v", err)
			}
			var b bytes.Buffer
			if err := WriteCase(&b, c); err != nil {
				t.Fatalf("WriteCase(%+v): %v", c, err)
			}
			again, err := LoadCases(bytes.NewReader(b.Bytes()), "")
			if err != nil || len(again) != 1 {
				t.Fatalf("read back %q: %v", b.String(), err)
			}
			var b2 bytes.Buffer
			if err := WriteCase(&b2, again[0]); err != nil || b2.String() != b.String() {
				t.Fatalf("second write %q differs from first %q (%v)", b2.String(), b.String(), err)
			}
		}
	})
}

// TestMinimalCase: a case of three keys is valid; its category reads as
// normal and, never verified, it is stale.
func TestMinimalCase(t *testing.T) {
	cases, err := LoadCases(strings.NewReader(`{"id":"q1","turns":["Where is my order A1001?"],"answer":{"must":["shipped"]}}
{"id":"q2","turns":["我的订单 A1002 到哪了？"]}
`), "min.jsonl")
	if err != nil {
		t.Fatal(err)
	}
	if len(cases) != 2 || cases[0].Category != Normal || cases[1].Category != Normal {
		t.Fatalf("cases %+v, want two normal ones", cases)
	}
	if st := Stale(cases, time.Date(2026, 12, 1, 0, 0, 0, 0, time.UTC), 0); len(st) != 2 {
		t.Errorf("Stale = %d cases, want both: never verified", len(st))
	}
}
