package guard_test

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/agentguard/agentguard/guard"
	"github.com/agentguard/agentguard/guard/guardtest"
	"github.com/agentguard/agentguard/guard/internal/testkit"
	"github.com/agentguard/agentguard/ledger"
	"github.com/agentguard/agentguard/ledger/badgerstore"
	"github.com/agentguard/agentguard/trace"
	"github.com/tmc/langchaingo/llms"
	"github.com/tmc/langchaingo/tools"
)

var _ guard.TraceSink = (ledger.TraceStore)(nil)

func memLedger(t *testing.T) *badgerstore.Store {
	t.Helper()
	led, err := badgerstore.Open("", badgerstore.Options{InMemory: true})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { led.Close() })
	return led
}

// runOnce runs a scripted conversation whose second tool call repeats the
// first, so that the loop rule files a finding.
func runOnce(t *testing.T, g *guard.Guard, user string) *guard.Result {
	t.Helper()
	model := guardtest.Script(
		guardtest.ToolCall("query_order", `{"order_id":"A1001"}`),
		guardtest.ToolCall("query_order", `{"order_id":"A1001"}`),
		guardtest.Text("Order A1001 has shipped."),
	)
	tool := guardtest.NewTool("query_order", "Look up an order", func(context.Context, string) (string, error) {
		return `{"status":"shipped","contact":"13812345678"}`, nil
	})
	ctx, rec := g.StartTrace(context.Background(), "s1", "orders")
	rec.UserTurn(user)
	res, err := g.Run(ctx, model, []tools.Tool{tool}, []llms.MessageContent{llms.TextParts(llms.ChatMessageTypeHuman, user)})
	if err != nil {
		t.Fatal(err)
	}
	return res
}

// By default the guard stores each finished run's trace in the ledger when
// the ledger stores traces: every entry's trace can be fetched, redacted.
func TestRunSavesItsTraceInTheLedger(t *testing.T) {
	led := memLedger(t)
	g := guard.New(guard.Config{Gates: guard.Gates{LoopLimit: 2}, Observe: guard.Observation{Ledger: led}})
	res := runOnce(t, g, "Where is order A1001? Call me on 13812345678")
	if err := g.Close(context.Background()); err != nil {
		t.Fatal(err)
	}
	n := 0
	for e, err := range led.Entries(context.Background(), ledger.Query{}) {
		if err != nil {
			t.Fatal(err)
		}
		n++
		tr, err := led.Trace(context.Background(), e.TraceID)
		if err != nil {
			t.Fatalf("entry %d: trace %s: %v", e.Seq, e.TraceID, err)
		}
		if len(tr.Steps) != len(res.Trace.Steps) || len(tr.UserTurns) != 1 {
			t.Errorf("stored trace has %d steps and %d turns, want %d and 1", len(tr.Steps), len(tr.UserTurns), len(res.Trace.Steps))
		}
		if strings.Contains(tr.UserTurns[0], "13812345678") {
			t.Errorf("stored user turn not redacted: %q", tr.UserTurns[0])
		}
	}
	if n == 0 {
		t.Fatal("no ledger entry: the scripted loop filed no finding")
	}
	if st := g.ReportStats(); st.TracesSaved != 1 {
		t.Errorf("stats %+v, want 1 trace saved", st)
	}
}

// Executor users save a trace themselves; long sessions are saved every
// TraceEvery steps as they go, the store adding only the new steps.
func TestSaveTraceAndTraceEvery(t *testing.T) {
	led := memLedger(t)
	g := guard.New(guard.Config{Gates: guard.Gates{LoopLimit: -1, MaxSteps: -1},
		Observe: guard.Observation{Ledger: led, TraceEvery: 10}})
	ctx, rec := g.StartTrace(context.Background(), "s", "")
	tool := g.WrapTool(testkit.BenchTool{})
	for i := range 25 {
		if _, err := tool.Call(ctx, fmt.Sprintf(`{"order_id":"A%d"}`, i)); err != nil {
			t.Fatal(err)
		}
	}
	if err := g.Flush(context.Background()); err != nil {
		t.Fatal(err)
	}
	tr, err := led.Trace(context.Background(), rec.ID())
	if err != nil || len(tr.Steps) != 20 {
		t.Fatalf("after 25 steps, saved every 10: %d steps stored (%v), want 20", len(tr.Steps), err)
	}
	g.SaveTrace(ctx, rec) // the request ends
	if err := g.Close(context.Background()); err != nil {
		t.Fatal(err)
	}
	if tr, err = led.Trace(context.Background(), rec.ID()); err != nil || len(tr.Steps) != 25 {
		t.Fatalf("after SaveTrace: %d steps stored (%v), want 25", len(tr.Steps), err)
	}
}

// TraceFile writes redacted trace JSONL that trace.Reader reads back;
// DiscardTraces keeps traces out of a ledger that would store them.
func TestTraceFileAndDiscard(t *testing.T) {
	path := filepath.Join(t.TempDir(), "traces.jsonl")
	tf, err := ledger.OpenTraceFile(path, nil)
	if err != nil {
		t.Fatal(err)
	}
	led := memLedger(t)
	g := guard.New(guard.Config{Gates: guard.Gates{LoopLimit: 2}, Observe: guard.Observation{Ledger: led, Traces: tf}})
	for _, user := range []string{"Where is order A1001? 13812345678", "订单 A1001 到哪了？邮箱 bob@example.com"} {
		runOnce(t, g, user)
	}
	if err := g.Close(context.Background()); err != nil {
		t.Fatal(err)
	}
	if err := tf.Close(); err != nil {
		t.Fatal(err)
	}
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	n := 0
	for tr, err := range trace.NewReader(f).All() {
		if err != nil {
			t.Fatal(err)
		}
		n++
		if u := tr.UserTurns[0]; strings.Contains(u, "13812345678") || strings.Contains(u, "bob@") {
			t.Errorf("trace file holds personal data: %q", u)
		}
		if _, err := led.Trace(context.Background(), tr.ID); !errors.Is(err, ledger.ErrNotFound) {
			t.Errorf("trace %s went to the ledger too: %v", tr.ID, err)
		}
	}
	if n != 2 {
		t.Errorf("trace file holds %d traces, want 2", n)
	}
	if info, err := os.Stat(path); err != nil || info.Mode().Perm() != 0o600 {
		t.Errorf("trace file mode %v, %v; want 0600", info.Mode().Perm(), err)
	}

	g = guard.New(guard.Config{Gates: guard.Gates{LoopLimit: 2}, Observe: guard.Observation{Ledger: led, Traces: guard.DiscardTraces}})
	res := runOnce(t, g, "hello")
	g.Close(context.Background())
	if _, err := led.Trace(context.Background(), res.Trace.ID); !errors.Is(err, ledger.ErrNotFound) {
		t.Errorf("DiscardTraces: trace stored anyway (%v)", err)
	}
}

func ExampleGuard_SaveTrace() {
	led, err := badgerstore.Open("", badgerstore.Options{InMemory: true})
	if err != nil {
		panic(err)
	}
	defer led.Close()
	// The ledger stores traces too, so the guard saves them there.
	g := guard.New(guard.Config{Gates: guard.Gates{LoopLimit: 2}, Observe: guard.Observation{Ledger: led}})
	ctx, rec := g.StartTrace(context.Background(), "s1", "")
	tool := g.WrapTool(testkit.BenchTool{})
	tool.Call(ctx, `{"order_id":"A1001"}`)
	tool.Call(ctx, `{"order_id":"A1001"}`) // a loop

	g.SaveTrace(ctx, rec) // the request is over
	g.Close(context.Background())
	for e := range led.Entries(context.Background(), ledger.Query{}) {
		tr, _ := led.Trace(context.Background(), e.TraceID)
		fmt.Println(e.Rule, len(tr.Steps), "steps")
	}
	// Output: loop 3 steps
}
