package guard_test

import (
	"context"
	"encoding/json"
	"fmt"
	"testing"
	"time"

	"github.com/agentguard/agentguard/guard"
	"github.com/agentguard/agentguard/guard/guardtest"
	"github.com/tmc/langchaingo/tools"
)

// sessionTools are the tools of a long session through wrapped tools:
// get_invoice and get_customer read, send_email writes to the address an
// earlier read returned.
func sessionTools(g *guard.Guard) (invoice, customer, send tools.Tool) {
	invoice = g.WrapTool(guardtest.NewTool("get_invoice", "Reads an order's invoice", func(_ context.Context, in string) (string, error) {
		var a struct {
			OrderID string `json:"order_id"`
		}
		if err := json.Unmarshal([]byte(in), &a); err != nil {
			return "", err
		}
		return fmt.Sprintf(`{"order_id":%q,"email":"c-%s@example.com","invoice":"INV-%s","total":120.50}`, a.OrderID, a.OrderID, a.OrderID), nil
	}))
	customer = g.WrapTool(guardtest.NewTool("get_customer", "Reads a customer by e-mail", func(_ context.Context, in string) (string, error) {
		var a struct {
			Email string `json:"email"`
		}
		if err := json.Unmarshal([]byte(in), &a); err != nil {
			return "", err
		}
		return fmt.Sprintf(`{"email":%q,"name":"Customer"}`, a.Email), nil
	}))
	send = g.WrapTool(guardtest.NewTool("send_email", "Sends an e-mail", func(context.Context, string) (string, error) {
		return `{"status":"sent"}`, nil
	}))
	return invoice, customer, send
}

// sessionRound is one round of a long session: two reads and a write
// whose recipient an earlier read returned, 2:1 as the issue measured.
func sessionRound(ctx context.Context, tb testing.TB, i int, invoice, customer, send tools.Tool) {
	order := fmt.Sprintf("A%d", 1000+i)
	email := "c-" + order + "@example.com"
	for _, call := range []struct {
		tool tools.Tool
		args string
	}{
		{invoice, fmt.Sprintf(`{"order_id":%q}`, order)},
		{customer, fmt.Sprintf(`{"email":%q}`, email)},
		{send, fmt.Sprintf(`{"to":%q,"body":"Your invoice INV-%s, total 120.50"}`, email, order)},
	} {
		out, err := call.tool.Call(ctx, call.args)
		if err != nil {
			tb.Fatal(err)
		}
		if len(out) > 0 && out[0] != '{' {
			tb.Fatalf("step %d of round %d refused: %s", i, i, out)
		}
	}
}

// BenchmarkSessionGrowth is the guard's cost per tool call in a session
// already 10, 1,000 or 10,000 steps long, through wrapped tools with the
// default rules (step and loop limits off, as a long-running agent sets
// them), with and without one user turn opening the session: a batch job's
// workload (BenchmarkConversation is a chat's, a user turn every four
// steps). The session is
// started afresh, untimed, whenever it has grown by a tenth, so every
// measured call sees a session of about the stated length. Cost per step
// should be flat: the 10,000 figure within 2× of the 10 one.
func BenchmarkSessionGrowth(b *testing.B) {
	for _, said := range []string{"Please send each customer of order A1000 their invoice.", ""} {
		name := "opening-turn"
		if said == "" {
			name = "no-user-turn"
		}
		for _, n := range []int{10, 1000, 10000} {
			b.Run(fmt.Sprintf("%s/steps=%d", name, n), func(b *testing.B) { benchSessionStep(b, said, n) })
		}
	}
}

// benchSessionStep is one sized run of BenchmarkSessionGrowth: tool calls
// in a session about n steps long, opened by the user turn said ("" for
// none).
func benchSessionStep(b *testing.B, said string, n int) {
	g := guard.New(guard.Config{Gates: guard.Gates{LoopLimit: -1, MaxSteps: -1}})
	invoice, customer, send := sessionTools(g)
	var ctx context.Context
	rounds, every := 0, max(3, n/30) // rounds per session before it is started afresh
	start := func() {
		b.StopTimer()
		c, rec := g.StartTrace(context.Background(), "s", "r")
		if said != "" {
			rec.UserTurn(said)
		}
		for i := range n / 3 {
			sessionRound(c, b, i, invoice, customer, send)
		}
		ctx, rounds = c, 0
		b.StartTimer()
	}
	start()
	b.ReportAllocs()
	for i := 0; b.Loop(); i++ {
		if rounds == every {
			start()
		}
		sessionRound(ctx, b, n+i, invoice, customer, send)
		rounds++
	}
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(3*b.N), "ns/step")
}

// BenchmarkWholeSession runs whole sessions of 10, 100, 1,000 and 10,000
// steps, as the issue that found the growth measured them: the average
// guard time per step, the last write of the session (a write near the
// end, which once rescanned every earlier result) and the whole session.
// Run it with -benchtime 3x: a 10,000-step session is one iteration.
func BenchmarkWholeSession(b *testing.B) {
	for _, n := range []int{10, 100, 1000, 10000} {
		b.Run(fmt.Sprintf("steps=%d", n), func(b *testing.B) {
			g := guard.New(guard.Config{Gates: guard.Gates{LoopLimit: -1, MaxSteps: -1}})
			invoice, customer, send := sessionTools(g)
			var last time.Duration
			b.ReportAllocs()
			for b.Loop() {
				ctx, rec := g.StartTrace(context.Background(), "s", "r")
				rec.UserTurn("Please send each customer of order A1000 their invoice.")
				for i := range n/3 - 1 {
					sessionRound(ctx, b, i, invoice, customer, send)
				}
				i := n/3 - 1
				order := fmt.Sprintf("A%d", 1000+i)
				email := "c-" + order + "@example.com"
				for _, c := range []struct {
					tool tools.Tool
					args string
				}{
					{invoice, fmt.Sprintf(`{"order_id":%q}`, order)},
					{customer, fmt.Sprintf(`{"email":%q}`, email)},
				} {
					if _, err := c.tool.Call(ctx, c.args); err != nil {
						b.Fatal(err)
					}
				}
				t0 := time.Now()
				if _, err := send.Call(ctx, fmt.Sprintf(`{"to":%q,"body":"Your invoice INV-%s"}`, email, order)); err != nil {
					b.Fatal(err)
				}
				last += time.Since(t0)
			}
			steps := 3 * (n / 3)
			b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N*steps), "ns/step")
			b.ReportMetric(float64(last.Nanoseconds())/float64(b.N), "ns/last-write")
			b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N)/1e6, "ms/session")
		})
	}
}
