package health_test

import (
	"bytes"
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/agentguard/agentguard/guard"
	"github.com/agentguard/agentguard/guard/health"
	"github.com/agentguard/agentguard/guard/replay"
	"github.com/tmc/langchaingo/llms"
)

// newAgent is the factory of your own agent: a fresh one per run, which
// answers through the guard it is given.
func newAgent(*replay.Case, int) (replay.Agent, error) {
	model, tools := myAgent()
	return replay.AgentFunc(func(ctx context.Context, g *guard.Guard, history []llms.MessageContent) (*guard.Result, error) {
		return g.Run(ctx, model, tools, history)
	}), nil
}

// A program of three lines is the whole health check of your agent,
//
//	package main
//
//	func main() { health.Main(newAgent) }
//
// run as "go run . -cases golden.jsonl"; this is what it does with those
// flags.
func ExampleMain() {
	cmd := &health.Command{Agent: newAgent}
	fs := flag.NewFlagSet("own-agent", flag.ContinueOnError)
	cmd.Flags(fs)
	dir, _ := os.MkdirTemp("", "health-example-")
	defer os.RemoveAll(dir)
	if err := fs.Parse([]string{"-cases", "testdata/own/golden.jsonl", "-repeats", "1", "-out", dir}); err != nil {
		fmt.Println(err)
		return
	}
	var out bytes.Buffer
	err := cmd.Execute(context.Background(), &out)
	for line := range strings.Lines(out.String()) {
		if strings.HasPrefix(line, "verdict") || strings.HasPrefix(line, "guarded:") {
			fmt.Print(line)
		}
	}
	fmt.Println("exit status", health.ExitCode(err))
	// Output:
	// guarded: 4.83 of 5 (96 of 100 points, healthy, keep monitoring)
	// verdict (guarded): releasable — 96 of 100 points ≥ the floor 60: healthy, keep monitoring
	// exit status 0
}

// TestMain runs health.Main as a program: the test binary re-executes
// itself with HEALTH_MAIN set, and Main parses the arguments, runs, and
// exits with the verdict's status.
func TestMainProgram(t *testing.T) {
	if args := os.Getenv("HEALTH_MAIN"); args != "" {
		os.Args = append([]string{"own-agent"}, strings.Fields(args)...)
		health.Main(newAgent)
		return
	}
	cases, _ := filepath.Abs("testdata/own/golden.jsonl")
	tests := []struct {
		name   string
		args   string
		status int
		says   string
	}{
		{"releasable", "-repeats 1 -cases " + cases, 0, "verdict (guarded): releasable"},
		{"below a floor of 99", "-repeats 1 -floor 99 -cases " + cases, 1, "total below the floor: 96 of 100 points < the floor 99"},
		{"no golden set", "-repeats 1", 2, "-cases: no golden set given"},
		{"a bad flag", "-repeats 1 -weights accuracy=101 -cases " + cases, 2, "-weights"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			cmd := exec.Command(os.Args[0], "-test.run=^TestMainProgram$")
			cmd.Env = append(os.Environ(), "HEALTH_MAIN="+tt.args+" -out "+t.TempDir())
			var out bytes.Buffer
			cmd.Stdout, cmd.Stderr = &out, &out
			err := cmd.Run()
			status := 0
			if ee := (*exec.ExitError)(nil); errors.As(err, &ee) {
				status = ee.ExitCode()
			} else if err != nil {
				t.Fatal(err)
			}
			if status != tt.status || !strings.Contains(out.String(), tt.says) {
				t.Errorf("status %d, want %d; output lacks %q:\n%s", status, tt.status, tt.says, out.String())
			}
		})
	}
}

// TestCommandFlags: the command's flags as a program with verbs of its own
// registers them, with -scores given once per person.
func TestCommandFlags(t *testing.T) {
	fs := flag.NewFlagSet("x", flag.ContinueOnError)
	fs.SetOutput(io.Discard)
	(&health.Command{}).Flags(fs)
	for _, name := range []string{"out", "repeats", "parallel", "floor", "cases", "weights", "policy", "targets", "tags", "baseline", "strict", "scores", "cite", "timeout", "raw"} {
		if fs.Lookup(name) == nil {
			t.Errorf("no -%s", name)
		}
	}
	if err := fs.Parse([]string{"-scores", "a.jsonl", "-scores", "b.jsonl"}); err != nil || fs.Lookup("scores").Value.String() != "a.jsonl,b.jsonl" {
		t.Errorf("-scores twice: %v, %q", err, fs.Lookup("scores").Value)
	}
	if got := fs.Lookup("floor").DefValue; got != "60" {
		t.Errorf("-floor defaults to %s, want 60 (DefaultFloor)", got)
	}
}

// TestInit: "init" writes the starter set once and will not overwrite it.
func TestInit(t *testing.T) {
	out := filepath.Join(t.TempDir(), "golden.jsonl")
	var stdout, stderr bytes.Buffer
	if code := health.Init([]string{"-tools", "testdata/starter/tools.json", "-o", out}, &stdout, &stderr); code != 0 {
		t.Fatalf("status %d: %s", code, stderr.String())
	}
	if !strings.Contains(stdout.String(), "wrote 30 cases to "+out) {
		t.Errorf("stdout %q", stdout.String())
	}
	if code := health.Init([]string{"-tools", "testdata/starter/tools.json", "-o", out}, &stdout, &stderr); code != 2 || !strings.Contains(stderr.String(), "exists") {
		t.Errorf("second init: status %d, stderr %q; want 2 and the file kept", code, stderr.String())
	}
	if code := health.Init(nil, &stdout, &stderr); code != 2 {
		t.Errorf("no -tools: status %d, want 2", code)
	}
}
