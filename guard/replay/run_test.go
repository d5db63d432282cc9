package replay

import (
	"bytes"
	"context"
	"errors"
	"io"
	"reflect"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"testing/synctest"
	"time"

	"github.com/agentguard/agentguard/guard"
	"github.com/agentguard/agentguard/guard/guardtest"
	"github.com/agentguard/agentguard/guard/rules"
	"github.com/agentguard/agentguard/trace"
	"github.com/tmc/langchaingo/llms"
	"github.com/tmc/langchaingo/tools"
)

// echoAgent answers each turn through g.Run: it looks the order up, then
// says what it found. The case id decides how it misbehaves.
type echoAgent struct {
	caseID string
	model  llms.Model
	tools  []tools.Tool
}

func newEcho(c *Case, repeat int) (Agent, error) {
	switch c.ID {
	case "factory-error":
		return nil, errors.New("no agent today")
	case "factory-panic":
		panic("factory exploded")
	}
	lookup := guardtest.NewTool("query_order", "Look up an order", func(context.Context, string) (string, error) {
		return `{"status":"shipped"}`, nil
	})
	model := guardtest.Func(func(_ context.Context, msgs []llms.MessageContent, _ llms.CallOptions) (guardtest.Reply, error) {
		last := msgs[len(msgs)-1]
		if last.Role == llms.ChatMessageTypeTool {
			return guardtest.Text("It has shipped."), nil
		}
		return guardtest.ToolCall("query_order", `{"order_id":"A1"}`), nil
	})
	return &echoAgent{caseID: c.ID, model: model, tools: []tools.Tool{lookup}}, nil
}

func (a *echoAgent) Respond(ctx context.Context, g *guard.Guard, history []llms.MessageContent) (*guard.Result, error) {
	switch a.caseID {
	case "agent-error":
		if len(history) > 1 {
			return nil, errors.New("model quota exceeded")
		}
	case "agent-panic":
		panic("index out of range")
	case "slow":
		<-ctx.Done()
		return nil, ctx.Err()
	case "own-loop": // an agent that does not go through g.Run
		return &guard.Result{Status: guard.StatusDone, Answer: "hello"}, nil
	}
	return g.Run(ctx, a.model, a.tools, history)
}

func testCases(ids ...string) []Case {
	var cs []Case
	for _, id := range ids {
		cs = append(cs, Case{ID: id, Category: Normal, Turns: []string{"Where is A1?", "Thanks, and now?"}, LastVerified: "2026-11-01"})
	}
	return cs
}

func TestReplay(t *testing.T) {
	cases := testCases("ok", "agent-error", "agent-panic", "factory-error", "factory-panic", "own-loop")
	var traces, progress bytes.Buffer
	runs, err := Replay(context.Background(), cases, newEcho, Config{Label: "t", Repeats: 2, Parallel: 3, Traces: &traces, Progress: &progress})
	if err != nil {
		t.Fatal(err)
	}
	if len(runs) != 12 {
		t.Fatalf("got %d runs, want 12", len(runs))
	}
	for i, r := range runs {
		c := cases[i/2]
		if r.Case != c.ID || r.Repeat != i%2+1 || r.Label != "t" || r.TraceID != "t-"+c.ID+"-"+string(rune('1'+i%2)) {
			t.Errorf("run %d is %s/%d %q, want %s/%d in order", i, r.Case, r.Repeat, r.TraceID, c.ID, i%2+1)
		}
		if r.Trace == nil || r.Trace.ID != r.TraceID || r.Trace.Meta[MetaCase] != c.ID {
			t.Errorf("run %d: trace %+v does not carry the run", i, r.Trace)
		}
	}
	want := map[string]struct {
		turns int
		err   string
	}{
		"ok":            {2, ""},
		"agent-error":   {1, "model quota exceeded"},
		"agent-panic":   {0, "agent panicked: index out of range"},
		"factory-error": {0, "no agent today"},
		"factory-panic": {0, "agent factory panicked: factory exploded"},
		"own-loop":      {2, ""},
	}
	for _, r := range runs {
		w := want[r.Case]
		if len(r.Turns) != w.turns || !strings.HasPrefix(r.Err, w.err) || (w.err == "") != (r.Err == "") {
			t.Errorf("%s: %d turns, error %q; want %d turns, error %q", r.TraceID, len(r.Turns), r.Err, w.turns, w.err)
		}
	}
	ok := runs[0]
	if ok.Final() != "It has shipped." || ok.Turns[0].Status != guard.StatusDone {
		t.Errorf("ok run answered %+v", ok.Turns)
	}
	if got := ok.Trace.UserTurns; !reflect.DeepEqual(got, cases[0].Turns) {
		t.Errorf("trace user turns = %q, want the case's", got)
	}
	if n := len(ok.Trace.ToolSteps("query_order")); n != 2 {
		t.Errorf("ok run: %d query_order steps, want 2", n)
	}
	if own := runs[10]; !reflect.DeepEqual(own.Trace.UserTurns, cases[5].Turns) {
		t.Errorf("own-loop trace user turns = %q, want the turns recorded by the runner", own.Trace.UserTurns)
	}
	if panicked := runs[4]; !strings.Contains(panicked.Trace.Meta[MetaError], "run_test.go") {
		t.Errorf("a panic's trace carries no stack: %q", panicked.Trace.Meta[MetaError])
	}

	// Every run is in the JSONL, and reads back as it was.
	r := trace.NewReader(&traces)
	n := 0
	for tr, err := range r.All() {
		if err != nil {
			t.Fatal(err)
		}
		n++
		back, ok := RunFromTrace(tr)
		if !ok {
			t.Fatalf("trace %s carries no run", tr.ID)
		}
		var orig Run
		for _, r := range runs {
			if r.TraceID == tr.ID {
				orig = r
			}
		}
		back.Trace, orig.Trace = nil, nil
		if !reflect.DeepEqual(back, orig) {
			t.Errorf("read back\n%+v\nwant\n%+v", back, orig)
		}
	}
	if n != 12 {
		t.Errorf("%d traces written, want 12", n)
	}
	if p := progress.String(); !strings.HasPrefix(p, "\rt: 1/12 runs") || !strings.HasSuffix(p, "\rt: 12/12 runs, 8 failed\n") {
		t.Errorf("progress = %q", p)
	}
}

func TestRunFromTraceWithoutMeta(t *testing.T) {
	if _, ok := RunFromTrace(&trace.Trace{ID: "x"}); ok {
		t.Error("RunFromTrace of a plain trace reported a run")
	}
}

// TestReplayTimeout and TestReplayCancelKeepsFinished run in a synctest
// bubble: the run's timeout and the wait for the finished runs pass on its
// fake clock.
func TestReplayTimeout(t *testing.T) {
	synctest.Test(t, testReplayTimeout)
}

func testReplayTimeout(t *testing.T) {
	runs, err := Replay(context.Background(), testCases("slow", "ok"), newEcho, Config{Repeats: 1, Timeout: 20 * time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	if slow := runs[0]; !slow.TimedOut || !strings.HasPrefix(slow.Err, "timed out after 20ms") || slow.Trace.Meta[MetaTimedOut] != "true" {
		t.Errorf("slow run: TimedOut %v, Err %q", slow.TimedOut, slow.Err)
	}
	if runs[1].TimedOut || runs[1].Err != "" {
		t.Errorf("ok run: %+v", runs[1])
	}
}

func TestReplayCancelKeepsFinished(t *testing.T) {
	synctest.Test(t, testReplayCancelKeepsFinished)
}

func testReplayCancelKeepsFinished(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	var done atomic.Int32
	var once sync.Once
	f := func(c *Case, repeat int) (Agent, error) {
		if c.ID == "slow" {
			once.Do(func() {
				for done.Load() < 2 { // let the ok runs finish, then interrupt
					time.Sleep(time.Millisecond)
				}
				cancel()
			})
		}
		a, err := newEcho(c, repeat)
		return AgentFunc(func(ctx context.Context, g *guard.Guard, h []llms.MessageContent) (*guard.Result, error) {
			res, err := a.Respond(ctx, g, h)
			if c.ID == "ok" && len(h) > 2 {
				done.Add(1)
			}
			return res, err
		}), err
	}
	var traces bytes.Buffer
	runs, err := Replay(ctx, testCases("ok", "slow", "ok2"), f, Config{Repeats: 2, Parallel: 1, Traces: &traces})
	if !errors.Is(err, context.Canceled) {
		t.Fatalf("err = %v, want context.Canceled", err)
	}
	if len(runs) != 2 || runs[0].Case != "ok" || runs[1].Case != "ok" || runs[0].Err != "" {
		t.Errorf("got runs %+v, want the two finished ok runs", runs)
	}
	if n := bytes.Count(traces.Bytes(), []byte("\n")); n != 2 {
		t.Errorf("%d traces written, want 2", n)
	}
}

func TestReplayShadowRecordsFindings(t *testing.T) {
	var mu sync.Mutex
	var got []trace.Violation
	sink := guard.SinkFunc(func(_ context.Context, v trace.Violation) (uint64, error) {
		mu.Lock()
		defer mu.Unlock()
		got = append(got, v)
		return uint64(len(got)), nil
	})
	cfg := Config{Repeats: 1, Guard: guard.Config{Shadow: true, Gates: guard.Gates{AllowedTools: []string{"other"}}, Observe: guard.Observation{Ledger: sink}}}
	runs, err := Replay(context.Background(), testCases("ok"), newEcho, cfg)
	if err != nil {
		t.Fatal(err)
	}
	if runs[0].Final() != "It has shipped." {
		t.Errorf("shadow mode changed the answer: %q", runs[0].Final())
	}
	if len(got) != 2 || !got[0].Shadow || got[0].Rule != rules.AllowList || got[0].TraceID != runs[0].TraceID {
		t.Errorf("ledger got %+v, want two shadow allow-list findings of the run", got)
	}
}

func TestReplayBadConfig(t *testing.T) {
	if _, err := Replay(context.Background(), nil, newEcho, Config{Repeats: -1}); err == nil {
		t.Error("negative Repeats accepted")
	}
	runs, err := Replay(context.Background(), nil, newEcho, Config{Progress: io.Discard})
	if err != nil || len(runs) != 0 {
		t.Errorf("no cases: %v, %v", runs, err)
	}
}

// TestReplayRedactsWrittenTraces: with Config.Redact the trace file is
// de-identified, the runs returned for scoring are not.
func TestReplayRedactsWrittenTraces(t *testing.T) {
	cases := []Case{{ID: "pii", Category: Normal, Turns: []string{"Where is A1? Mail li@example.com / 请发邮件给 li@example.com"}, LastVerified: "2026-11-01"}}
	var traces bytes.Buffer
	hide := func(s string) string { return strings.ReplaceAll(s, "li@example.com", "[email]") }
	runs, err := Replay(context.Background(), cases, newEcho, Config{Repeats: 1, Traces: &traces, Redact: hide})
	if err != nil {
		t.Fatal(err)
	}
	if strings.Contains(traces.String(), "li@example.com") || !strings.Contains(traces.String(), "[email]") {
		t.Errorf("trace file not de-identified:\n%s", traces.String())
	}
	if got := strings.Join(runs[0].Trace.UserTurns, " "); !strings.Contains(got, "li@example.com") {
		t.Errorf("the run's own trace was changed: %q", got)
	}
}
