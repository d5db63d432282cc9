package main

import (
	"bufio"
	"bytes"
	"compress/gzip"
	"context"
	"fmt"
	"os"
	"strings"
	"testing"

	"github.com/agentguard/agentguard/trace"
)

// TestGenerateDeterministic: the output depends on the seed and n only.
func TestGenerateDeterministic(t *testing.T) {
	var a, b, c bytes.Buffer
	for _, w := range []*bytes.Buffer{&a, &b} {
		if err := Generate(context.Background(), w, 1, 120); err != nil {
			t.Fatal(err)
		}
	}
	if !bytes.Equal(a.Bytes(), b.Bytes()) {
		t.Fatal("two runs with seed 1 differ")
	}
	if err := Generate(context.Background(), &c, 2, 120); err != nil {
		t.Fatal(err)
	}
	if bytes.Equal(a.Bytes(), c.Bytes()) {
		t.Error("seeds 1 and 2 gave the same traces")
	}
	n := 0
	for tr, err := range trace.NewReader(&a).All() {
		if err != nil {
			t.Fatal(err)
		}
		n++
		if tr.Start.Before(Day) || tr.Route == "" || tr.Meta["scenario"] == "" || len(tr.Steps) == 0 {
			t.Errorf("trace %s: start %v, route %q, meta %v, %d steps", tr.ID, tr.Start, tr.Route, tr.Meta, len(tr.Steps))
		}
		for _, s := range tr.Steps {
			if strings.Contains(s.Error, "\n") || strings.Contains(s.Error, "goroutine") {
				t.Errorf("trace %s keeps a stack trace: %q", tr.ID, s.Error)
			}
		}
	}
	if n != 120 {
		t.Errorf("read %d traces, want 120", n)
	}
}

// TestSampleDay regenerates the sample day and checks it against
// testdata/traces.jsonl.gz, line for line — if the demo agent changed, run
// "go generate ./examples/agentguard/internal/contevalcmd" and "go test ./examples/agentguard/internal/contevalcmd
// -update" — and checks that it holds every failure mode the command is
// meant to find.
func TestSampleDay(t *testing.T) {
	if testing.Short() {
		t.Skip("generates 3000 traces")
	}
	var fresh bytes.Buffer
	if err := Generate(context.Background(), &fresh, 1, 3000); err != nil {
		t.Fatal(err)
	}
	f, err := os.Open("../testdata/traces.jsonl.gz")
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	zr, err := gzip.NewReader(f)
	if err != nil {
		t.Fatal(err)
	}
	stored, regenerated := bufio.NewScanner(zr), bufio.NewScanner(bytes.NewReader(fresh.Bytes()))
	stored.Buffer(nil, 1<<24)
	regenerated.Buffer(nil, 1<<24)
	for line := 1; ; line++ {
		s, r := stored.Scan(), regenerated.Scan()
		if s != r || (s && !bytes.Equal(stored.Bytes(), regenerated.Bytes())) {
			t.Fatalf("testdata/traces.jsonl.gz line %d differs from a fresh generation: the demo agent changed; run go generate ./examples/agentguard/internal/contevalcmd", line)
		}
		if !s {
			break
		}
	}

	found := map[string]int{}
	for tr, err := range trace.NewReader(&fresh).All() {
		if err != nil {
			t.Fatal(err)
		}
		shadow := tr.Meta["guard"] == "shadow"
		for _, s := range tr.Steps {
			switch {
			case s.Error != "":
				found["tool or model error"]++
			case s.Intent != "" && s.Confidence < 0.6:
				found["low confidence"]++
			case s.Kind == trace.KindTool && s.Name == "issue_voucher" && !s.Blocked:
				found["unreviewed tool ran"]++
			case s.Kind == trace.KindModel && strings.Contains(s.Result, "[KB-RET-04]"):
				found["stale citation"]++
			case s.Kind == trace.KindModel && strings.Contains(s.Result, `"refund_amount":-`):
				found["negative amount"]++
			case s.Kind == trace.KindModel && tr.Route == RouteAPI && strings.HasPrefix(s.Result, "{") && !strings.HasSuffix(s.Result, "}"):
				found["truncated JSON"]++
			case s.Kind == trace.KindModel && shadow && strings.Contains(s.Result, "clause 7.3"):
				found["invented clause, delivered"]++
			}
		}
		if len(tr.UserTurns[0]) > 4000 {
			found["pasted thread"]++
		}
	}
	for _, mode := range []string{"tool or model error", "low confidence", "unreviewed tool ran", "stale citation", "negative amount", "truncated JSON", "invented clause, delivered", "pasted thread"} {
		if found[mode] == 0 {
			t.Errorf("no %s in the sample day", mode)
		}
	}
	t.Log(fmt.Sprint(found))
}
