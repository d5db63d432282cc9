package evaluatecmd

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"iter"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"testing/synctest"

	"github.com/agentguard/agentguard/guard"
	"github.com/agentguard/agentguard/trace"
)

// chatTraces yields n support conversations (chatLog) imported, with a
// line that cannot be read after every seventh: the input evaluated
// concurrently, whose order the output must keep.
func chatTraces(t *testing.T, n int) iter.Seq2[*trace.Trace, error] {
	t.Helper()
	var in bytes.Buffer
	for i := range n {
		in.Write(chatLog(i, 2))
		if i%7 == 6 {
			in.WriteString(`{"id":"broken","messages":[{"role":"user","content":` + "\n")
		}
	}
	data := in.Bytes()
	return func(yield func(*trace.Trace, error) bool) {
		for tr, err := range trace.Import(bytes.NewReader(data), "chats.jsonl", "openai") {
			if !yield(tr, err) {
				return
			}
		}
	}
}

// outcome is what the command prints of one yielded trace.
func outcome(j judged, err error) string {
	if err != nil {
		return "error: " + err.Error()
	}
	return fmt.Sprintf("%s score=%d findings=%d", j.trace.ID, j.report.Score, len(j.report.Findings))
}

// TestEvaluatedKeepsOrder: judged on several workers, the traces and the
// lines that could not be read come out in the input's order, with the
// reports a sequential evaluation gives.
func TestEvaluatedKeepsOrder(t *testing.T) {
	g := guard.New(guard.Config{})
	var want []string
	for j, err := range evaluated(chatTraces(t, 60), g, 1) {
		want = append(want, outcome(j, err))
	}
	if len(want) != 60+60/7 {
		t.Fatalf("sequential: %d outcomes, want %d", len(want), 60+60/7)
	}
	for _, workers := range []int{2, 3, 8} {
		var got []string
		for j, err := range evaluated(chatTraces(t, 60), g, workers) {
			got = append(got, outcome(j, err))
		}
		if !slices.Equal(got, want) {
			t.Errorf("%d workers: outcomes differ from the sequential ones\ngot:  %q\nwant: %q", workers, got, want)
		}
	}
}

// TestEvaluatedStopsEarly: a caller that stops after a few traces (a
// failed write) leaves no goroutine behind — synctest.Test fails if one is
// still blocked when the test returns.
func TestEvaluatedStopsEarly(t *testing.T) {
	g := guard.New(guard.Config{})
	traces := chatTraces(t, 40)
	for _, workers := range []int{1, 2, 4} {
		synctest.Test(t, func(t *testing.T) {
			n := 0
			for range evaluated(traces, g, workers) {
				if n++; n == 3 {
					break
				}
			}
			if n != 3 {
				t.Errorf("%d workers: stopped after %d traces, want 3", workers, n)
			}
		})
	}
}

// TestPanicCostsOneTrace: a rule that panics on one trace makes that
// trace an error — printed, counted, exit 2 — and every other trace is
// still judged and printed, in order.
func TestPanicCostsOneTrace(t *testing.T) {
	defer func(old func(*guard.Guard, *trace.Trace) guard.Report) { judge = old }(judge)
	judge = func(g *guard.Guard, tr *trace.Trace) guard.Report {
		if tr.ID == "chat-2" {
			panic(errors.New("index out of range [7] with length 7"))
		}
		return g.Evaluate(tr)
	}
	path := filepath.Join(t.TempDir(), "chats.jsonl")
	var in bytes.Buffer
	for i := range 5 {
		in.Write(chatLog(i, 1))
	}
	if err := os.WriteFile(path, in.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}
	var stdout, stderr bytes.Buffer
	if code := run(context.Background(), []string{path}, &stdout, &stderr); code != exitBadInput {
		t.Errorf("exit %d, want %d (an input that could not be judged)", code, exitBadInput)
	}
	if want := `agentguard evaluate: trace "chat-2": evaluation failed: index out of range [7] with length 7`; !strings.Contains(stderr.String(), want) {
		t.Errorf("stderr %q does not hold %q", stderr.String(), want)
	}
	var ids []string
	for line := range strings.Lines(stdout.String()) {
		if _, rest, ok := strings.Cut(line, `"trace_id":"`); ok {
			id, _, _ := strings.Cut(rest, `"`)
			ids = append(ids, id)
		}
	}
	if want := []string{"chat-0", "chat-1", "chat-3", "chat-4"}; !slices.Equal(ids, want) {
		t.Errorf("traces printed %q, want %q", ids, want)
	}
	if !strings.Contains(stdout.String(), `"errors":1`) {
		t.Errorf("the summary does not count the trace as an error:\n%s", stdout.String())
	}
}
