package health

import (
	"bytes"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/agentguard/agentguard/guard/replay"
)

// TestStarterSet: the starter set from a tool list has the method's shape
// (10 normal, 10 boundary, 10 adversarial, one conversation of 15 turns or
// more), loads back as a golden set, and stays stale until verified.
func TestStarterSet(t *testing.T) {
	f, err := os.Open("testdata/starter/tools.json")
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	tools, err := ReadTools(f, "tools.json")
	if err != nil {
		t.Fatal(err)
	}
	var b bytes.Buffer
	if err := WriteStarterSet(&b, tools); err != nil {
		t.Fatal(err)
	}
	cases, err := replay.LoadCases(bytes.NewReader(b.Bytes()), "starter")
	if err != nil {
		t.Fatal(err)
	}
	if shape := replay.Shape(cases); len(shape) > 0 {
		t.Errorf("starter set departs from the method's shape: %v", shape)
	}
	if st := replay.Stale(cases, time.Now(), 0); len(st) != len(cases) {
		t.Errorf("%d of %d cases stale, want all: none is verified", len(st), len(cases))
	}
	// Negations and changed conditions are tried on tools that change state.
	for _, c := range cases {
		if c.Category == replay.Adversarial && !strings.HasPrefix(c.Trajectory.Calls[0].Name, "update_") && !strings.HasPrefix(c.Trajectory.Calls[0].Name, "send_") {
			t.Errorf("%s exercises %s, want a tool that changes state", c.ID, c.Trajectory.Calls[0].Name)
		}
	}
	golden := filepath.Join("testdata", "starter", "golden.jsonl")
	if *update {
		if err := os.WriteFile(golden, b.Bytes(), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	want, err := os.ReadFile(golden)
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(b.Bytes(), want) {
		t.Errorf("starter set differs from %s (go test -update after checking)", golden)
	}
}

func TestReadToolsRejects(t *testing.T) {
	for _, tt := range []struct{ name, in, says string }{
		{"not an array", `{"name":"x"}`, "want a JSON array"},
		{"no name", `[{"description":"x"}]`, "tool 0 has no name"},
		{"twice", `[{"name":"x"},{"type":"function","function":{"name":"x"}}]`, `tool "x" is defined twice`},
		{"empty", `[]`, "no tool"},
	} {
		_, err := ReadTools(strings.NewReader(tt.in), "t.json")
		var he *Error
		if err == nil || !strings.Contains(err.Error(), tt.says) || !errors.As(err, &he) {
			t.Errorf("%s: err = %v, want it to say %q", tt.name, err, tt.says)
		}
	}
}

// FuzzReadTools: any input is tools or an error, and the starter set of
// any tools it accepts is a valid golden set.
func FuzzReadTools(f *testing.F) {
	seed, _ := os.ReadFile("testdata/starter/tools.json")
	f.Add(string(seed))
	f.Add(`[{"name":"取消订单","parameters":{"required":["订单号"]}}]`)
	f.Add(`[{"type":"function","function":{"name":"x","parameters":{"required":"nope"}}}]`)
	f.Fuzz(func(t *testing.T, in string) {
		tools, err := ReadTools(strings.NewReader(in), "fuzz")
		if err != nil {
			return
		}
		var b bytes.Buffer
		if err := WriteStarterSet(&b, tools); err != nil {
			t.Fatalf("starter set of %q: %v", in, err)
		}
		if _, err := replay.LoadCases(&b, "fuzz"); err != nil {
			t.Fatalf("starter set of %q does not load: %v", in, err)
		}
	})
}
