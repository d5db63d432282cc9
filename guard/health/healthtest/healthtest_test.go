package healthtest_test

import (
	"bytes"
	"context"
	"errors"
	"flag"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/agentguard/agentguard/guard"
	"github.com/agentguard/agentguard/guard/guardtest"
	"github.com/agentguard/agentguard/guard/health/healthtest"
	"github.com/agentguard/agentguard/guard/replay"
	"github.com/tmc/langchaingo/llms"
	"github.com/tmc/langchaingo/tools"
)

var update = flag.Bool("update", false, "rewrite the golden baselines")

// newAgent looks an order up and says what it found; an unknown order it
// takes as "no records", which B01 forbids.
func newAgent(*replay.Case, int) (replay.Agent, error) {
	orders := map[string]string{"A1001": `{"status":"shipped"}`, "A1002": `{"status":"pending"}`}
	id := regexp.MustCompile(`A\d{4}`)
	lookup := guardtest.NewTool("query_order", "Look an order up", func(_ context.Context, in string) (string, error) {
		return orders[id.FindString(in)], nil
	})
	model := guardtest.Func(func(_ context.Context, msgs []llms.MessageContent, _ llms.CallOptions) (guardtest.Reply, error) {
		var user, result string
		for _, m := range msgs {
			for _, p := range m.Parts {
				switch p := p.(type) {
				case llms.TextContent:
					if m.Role == llms.ChatMessageTypeHuman {
						user = p.Text
					}
				case llms.ToolCallResponse:
					result = p.Content
				}
			}
		}
		order := id.FindString(user)
		switch {
		case msgs[len(msgs)-1].Role != llms.ChatMessageTypeTool:
			return guardtest.ToolCall("query_order", `{"order_id":"`+order+`"}`), nil
		case result == "":
			return guardtest.Text("There are no records of order " + order + "."), nil
		}
		return guardtest.Text("Order " + order + " is " + regexp.MustCompile(`"status":"(\w+)"`).FindStringSubmatch(result)[1] + "."), nil
	})
	return replay.AgentFunc(func(ctx context.Context, g *guard.Guard, history []llms.MessageContent) (*guard.Result, error) {
		return g.Run(ctx, model, []tools.Tool{lookup}, history)
	}), nil
}

// TestGolden is what a user writes; it runs only when TestRun starts it,
// with the golden set HEALTHTEST_CASES names.
func TestGolden(t *testing.T) {
	cases := os.Getenv("HEALTHTEST_CASES")
	if cases == "" {
		t.Skip("run by TestRun in a child process, with HEALTHTEST_CASES set")
	}
	healthtest.Run(t, cases, newAgent, healthtest.Options{})
}

// child runs TestGolden in a child test process and returns its exit
// status and output.
func child(t *testing.T, cases string, args ...string) (int, string) {
	t.Helper()
	cmd := exec.Command(os.Args[0], append([]string{"-test.run=^TestGolden$", "-test.v"}, args...)...)
	cmd.Env = append(os.Environ(), "HEALTHTEST_CASES="+cases)
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	err := cmd.Run()
	if ee := (*exec.ExitError)(nil); errors.As(err, &ee) {
		return ee.ExitCode(), out.String()
	} else if err != nil {
		t.Fatal(err)
	}
	return 0, out.String()
}

func copyCases(t *testing.T) string {
	t.Helper()
	b, err := os.ReadFile("testdata/golden.jsonl")
	if err != nil {
		t.Fatal(err)
	}
	name := filepath.Join(t.TempDir(), "golden.jsonl")
	if err := os.WriteFile(name, b, 0o644); err != nil {
		t.Fatal(err)
	}
	return name
}

// TestRun: each case is a subtest. B01's empty lookup is caught by the
// guard (a recovered hit, logged), so it passes; N03's answer lacks its
// baseline's element, which no guard rail catches, so it fails.
func TestRun(t *testing.T) {
	_ = update
	status, out := child(t, copyCases(t))
	for _, want := range []string{"--- PASS: TestGolden/N01", "--- PASS: TestGolden/N02", "--- PASS: TestGolden/B01",
		"recovered, violation (coherence, asserted-absence)", "--- FAIL: TestGolden/N03", `answer (accuracy, wrong-answer)`} {
		if !strings.Contains(out, want) {
			t.Errorf("output lacks %q:\n%s", want, out)
		}
	}
	if status != 1 {
		t.Errorf("status %d, want 1 (N03 fails)", status)
	}
}

// TestUpdate: -update rewrites the trajectories and answer texts from the
// runs and leaves the elements a person wrote.
func TestUpdate(t *testing.T) {
	cases := copyCases(t)
	if status, out := child(t, cases, "-update"); status != 0 {
		t.Fatalf("-update: status %d:\n%s", status, out)
	}
	f, err := os.Open(cases)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	set, err := replay.LoadCases(f, cases)
	if err != nil {
		t.Fatal(err)
	}
	n01 := set[0]
	if n01.Trajectory == nil || len(n01.Trajectory.Calls) != 1 || n01.Trajectory.Calls[0].Name != "query_order" ||
		string(n01.Trajectory.Calls[0].Args) != `{"order_id":"A1001"}` || n01.Answer.Text != "Order A1001 is shipped." {
		t.Errorf("N01 after -update: %+v %+v", n01.Trajectory, n01.Answer)
	}
	if len(n01.Answer.Must) != 1 || n01.Answer.Must[0] != "shipped" || set[2].Answer.MustNot[0] != "no records" {
		t.Errorf("the person's elements changed: %+v %+v", n01.Answer, set[2].Answer)
	}
	// The updated baselines pass their own trajectories: only N03's
	// answer element, a person's, still fails.
	status, out := child(t, cases)
	if status != 1 || strings.Contains(out, "trajectory (") || !strings.Contains(out, "--- PASS: TestGolden/N01") {
		t.Errorf("after -update: status %d:\n%s", status, out)
	}
}
