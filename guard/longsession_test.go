package guard_test

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"testing"

	"github.com/agentguard/agentguard/guard"
	"github.com/tmc/langchaingo/tools"
)

// plainTool is a tool that keeps nothing of its calls, unlike
// guardtest.Tool, so that a long session's heap is the guard's.
type plainTool struct {
	name string
	fn   func(args map[string]string) string
}

func (p plainTool) Name() string        { return p.name }
func (p plainTool) Description() string { return p.name }
func (p plainTool) Call(_ context.Context, in string) (string, error) {
	var a map[string]string
	if err := json.Unmarshal([]byte(in), &a); err != nil {
		return "", err
	}
	return p.fn(a), nil
}

// plainSessionTools are sessionTools that keep nothing of their calls.
func plainSessionTools(g *guard.Guard) (invoice, customer, send tools.Tool) {
	invoice = g.WrapTool(plainTool{"get_invoice", func(a map[string]string) string {
		id := a["order_id"]
		return fmt.Sprintf(`{"order_id":%q,"email":"c-%s@example.com","invoice":"INV-%s","total":120.50}`, id, id, id)
	}})
	customer = g.WrapTool(plainTool{"get_customer", func(a map[string]string) string {
		return fmt.Sprintf(`{"email":%q,"name":"Customer"}`, a["email"])
	}})
	send = g.WrapTool(plainTool{"send_email", func(map[string]string) string { return `{"status":"sent"}` }})
	return invoice, customer, send
}

// liveHeap is the heap in use after a full collection.
func liveHeap() uint64 {
	var m runtime.MemStats
	runtime.GC()
	runtime.GC()
	runtime.ReadMemStats(&m)
	return m.HeapAlloc
}

// longSession runs a session of reads and writes 2:1 with no user turn
// through wrapped tools, about pool orders in turn, saving its trace to a
// trace file every 1,000 steps, and returns the live heap when it is
// 10,000 and total steps long.
func longSession(t *testing.T, keep, total, pool int) (at10k, atEnd uint64, stats guard.ReportStats) {
	tf, err := guard.OpenTraceFile(filepath.Join(t.TempDir(), "traces.jsonl"), nil)
	if err != nil {
		t.Fatal(err)
	}
	defer tf.Close()
	g := guard.New(guard.Config{Gates: guard.Gates{LoopLimit: -1, MaxSteps: -1},
		Observe: guard.Observation{Traces: tf, TraceEvery: 1000, KeepSteps: keep}})
	defer g.Close(context.Background())
	invoice, customer, send := plainSessionTools(g)
	ctx, rec := g.StartTrace(context.Background(), "s", "r")
	for i := 0; rec.Trace().Len() < total; i++ {
		sessionRound(ctx, t, i%pool, invoice, customer, send)
		if n := 3 * (i + 1); n == 9999 || n >= total {
			if err := g.Flush(context.Background()); err != nil {
				t.Fatal(err)
			}
			if n < total {
				at10k = liveHeap()
			} else {
				atEnd = liveHeap()
			}
		}
	}
	runtime.KeepAlive(rec)
	return at10k, atEnd, g.ReportStats()
}

// A session that never ends holds a bounded window of steps once its
// trace is stored: at 100,000 steps its guard holds less than twice what
// it held at 10,000 (each step's origins stay indexed; the steps go).
func TestLongSessionBoundedHeap(t *testing.T) {
	if testing.Short() {
		t.Skip("runs a 100,000-step session")
	}
	const total = 100_000
	for _, tc := range []struct {
		name string
		keep int
	}{
		{"release", 1000},
		{"keep-all", -1},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if tc.keep < 0 && os.Getenv("AGENTGUARD_LONG") == "" {
				t.Skip("the session without release takes minutes (its trace file is rewritten whole every 1,000 steps); set AGENTGUARD_LONG=1 to measure it")
			}
			at10k, atEnd, stats := longSession(t, tc.keep, total, 1000)
			t.Logf("live heap: %.1f MiB at 10k steps, %.1f MiB at %dk (×%.2f); %d steps released, %d traces saved",
				float64(at10k)/(1<<20), float64(atEnd)/(1<<20), total/1000, float64(atEnd)/float64(at10k), stats.StepsReleased, stats.TracesSaved)
			if tc.keep < 0 {
				return
			}
			if stats.StepsReleased == 0 {
				t.Fatal("no step was released")
			}
			if atEnd >= 2*at10k {
				t.Errorf("live heap at %d steps is %d bytes, ≥ 2× the %d at 10,000", total, atEnd, at10k)
			}
		})
	}
}
