// Package democmd is the verb "agentguard demo": it runs the demo customer-service agent through
// agentguard, offline: a deterministic model, six shop tools and a bilingual
// knowledge base. It prints every step and every violation, writes the
// traces as JSONL and the violations into a badger ledger, and prints the
// ledger's lessons.
//
//	agentguard demo [-out DIR] [-shadow] [-quiet] [-model openai:NAME|ollama:NAME]
package democmd

import (
	"context"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"

	"github.com/agentguard/agentguard/examples/agentguard/internal/cli"
	"github.com/agentguard/agentguard/examples/agentguard/internal/models"
	"github.com/agentguard/agentguard/examples/agentguard/internal/shop"
	"github.com/agentguard/agentguard/guard"
	"github.com/agentguard/agentguard/ledger"
	"github.com/agentguard/agentguard/ledger/badgerstore"
	"github.com/agentguard/agentguard/trace"
	"github.com/tmc/langchaingo/llms"
)

// conversation is one scripted customer session: the user's turns, in order.
type conversation struct {
	session, route string
	turns          []string
	approve        bool // approve tool calls that wait for a human
}

var conversations = []conversation{
	{"c1-track", "order-status", []string{"Where is my order A1001?"}, true},
	{"c2-policy", "after-sales", []string{"What is the return policy for opened electronics?"}, true},
	{"c3-empty-retrieval", "after-sales", []string{"Is there VIP compensation when my parcel is late?"}, true},
	{"c4-loop", "order-status", []string{"Can you track order A1004 for me?"}, true},
	{"c5-unknown-tool", "order-change", []string{"Please cancel order A1002."}, true},
	{"c6-return", "after-sales", []string{"I want to return order A1003, it is broken."}, true},
	{"c7-tool-panic", "order-status", []string{"Where is order A1005?"}, true},
	{"c8-address-zh", "order-change", []string{"你好", "订单 A1002 的收货地址改成上海市浦东新区世纪大道 100 号。", "是的"}, true},
	{"c9-vague", "triage", []string{"I have a problem with my thing."}, true},
	{"c10-empty-result", "order-status", []string{"Where is order A9999?"}, true},
	{"c11-fabricated-section", "after-sales", []string{"Does the warranty cover accidental damage?"}, true},
	{"c12-wrong-recipient", "order-status", []string{"What is the status of A1003?", "Please text me the tracking number of A1001."}, true},
	{"c13-address-after-shipping", "order-change", []string{"Change the address of order A1001 to 8 Huaihai Rd, Shanghai."}, true},
	{"c14-no-sms-zh", "order-change", []string{"你好，请不要给我发短信通知。", "订单 A1002 的收货地址改成杭州市西湖区文三路 90 号。", "是的"}, true},
}

var verb = cli.Verb{
	Name:     "demo",
	Synopsis: "[-out DIR] [-shadow] [-quiet] [-model SPEC]",
	Doc: `Runs the demo customer-service agent through agentguard on scripted
conversations, printing every step and every violation; writes the traces
and the ledger into DIR and prints the ledger's lessons.`,
	MaxArgs: 0,
}

// Run is the verb: it parses args, runs the demo and returns the exit
// status (see package cli).
func Run(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	fs := verb.FlagSet()
	out := fs.String("out", "", "directory for traces.jsonl and the ledger (default: a fresh temporary directory)")
	shadow := fs.Bool("shadow", false, "detect-only mode: record violations, enforce nothing")
	quiet := fs.Bool("quiet", false, "print only the summary")
	model := fs.String("model", "", models.FlagHelp)
	if _, code, ok := verb.Parse(fs, args, stdout, stderr); !ok {
		return code
	}
	if err := run(ctx, *out, *shadow, *quiet, *model, stdout); err != nil {
		verb.Errorf(stderr, "%v", err)
		return cli.ExitUsage
	}
	return cli.ExitPassed
}

func run(ctx context.Context, out string, shadow, quiet bool, modelSpec string, w io.Writer) error {
	if out == "" {
		dir, err := os.MkdirTemp("", "agentguard-demo-")
		if err != nil {
			return err
		}
		out = dir
	}
	if err := os.MkdirAll(out, 0o700); err != nil {
		return err
	}
	led, err := badgerstore.Open(filepath.Join(out, "ledger"), badgerstore.Options{})
	if err != nil {
		return err
	}
	defer led.Close()
	f, err := os.OpenFile(filepath.Join(out, "traces.jsonl"), os.O_CREATE|os.O_WRONLY|os.O_TRUNC, 0o600)
	if err != nil {
		return err
	}
	defer f.Close()
	traces := trace.NewWriter(f)

	g := demoGuard(led, shadow)
	defer g.Close(context.WithoutCancel(ctx))
	printf := func(format string, a ...any) {
		if !quiet {
			fmt.Fprintf(w, format, a...)
		}
	}
	var violations, steps int
	var cost float64
	for _, c := range conversations {
		s := shop.New()
		model, err := models.Open(modelSpec, shop.Model())
		if err != nil {
			return err
		}
		tls := s.Tools()
		ctx, rec := g.StartTrace(ctx, c.session, c.route)
		printf("\n=== %s (%s)\n", c.session, c.route)
		var msgs []llms.MessageContent
		printed := 0
		for _, turn := range c.turns {
			printf("user: %s\n", turn)
			msgs = append(msgs, llms.TextParts(llms.ChatMessageTypeHuman, turn))
			res, err := g.Run(ctx, model, tls, msgs)
			for res != nil && err == nil && res.Status == guard.StatusPaused {
				printed = printSteps(printf, res.Trace, printed)
				decisions := map[string]guard.Decision{}
				for _, p := range res.Pending {
					printf("  [human] %s %s: approved=%v\n", p.FunctionCall.Name, p.FunctionCall.Arguments, c.approve)
					decisions[p.ID] = guard.Decision{Approve: c.approve, Reason: "the supervisor wants to call the customer first"}
				}
				res, err = g.Resume(ctx, model, tls, res, decisions)
			}
			if err != nil {
				return fmt.Errorf("%s: %w", c.session, err)
			}
			printed = printSteps(printf, res.Trace, printed)
			printf("agent (%s): %s\n", res.Status, res.Answer)
			msgs = res.Messages
		}
		tr := rec.Trace()
		if err := traces.Write(tr); err != nil {
			return err
		}
		for _, st := range tr.Steps {
			steps++
			cost += st.Cost
			if st.Kind == trace.KindGate {
				violations++
			}
		}
	}
	if err := g.Flush(ctx); err != nil { // the findings reach the ledger off the steps
		return err
	}
	lessons, err := led.Lessons(ctx, ledger.Query{})
	if err != nil {
		return err
	}
	fmt.Fprintf(w, "\n%d conversations, %d steps, %d violations, cost $%.5f\n", len(conversations), steps, violations, cost)
	fmt.Fprintln(w, "lessons (rule / root cause: count, example traces):")
	for _, l := range lessons {
		fmt.Fprintf(w, "  %-27s %-22s %3d  %s\n", l.Rule, l.Tag, l.Count, strings.Join(l.Examples, " "))
	}
	fmt.Fprintf(w, "traces: %s\nledger: %s\n", filepath.Join(out, "traces.jsonl"), filepath.Join(out, "ledger"))
	return nil
}

// demoGuard is the guard the demo runs under (see shop.GuardConfig).
func demoGuard(sink guard.Sink, shadow bool) *guard.Guard {
	return guard.New(shop.GuardConfig(sink, shadow))
}

// printSteps prints the trace's steps from index from on and returns the new count.
func printSteps(printf func(string, ...any), tr *trace.Trace, from int) int {
	for _, s := range tr.Steps[from:] {
		switch s.Kind {
		case trace.KindModel:
			switch {
			case s.Intent != "":
				printf("  [intent] %s (confidence %.2f)\n", s.Intent, s.Confidence)
			case s.Blocked:
				printf("  [model] not called; answered %q\n", clip(s.Result))
			case s.Error != "":
				printf("  [model] failed: %s\n", firstLine(s.Error))
			case len(s.Calls) > 0:
				names := make([]string, len(s.Calls))
				for i, c := range s.Calls {
					names[i] = c.Name
				}
				printf("  [model] calls %s (%d→%d tokens)\n", strings.Join(names, ", "), s.TokensIn, s.TokensOut)
			default:
				printf("  [model] %q (%d→%d tokens)\n", clip(s.Result), s.TokensIn, s.TokensOut)
			}
		case trace.KindTool:
			status := "→"
			if s.Blocked {
				status = "✗ not run:"
			}
			res := s.Result
			if s.Error != "" {
				res = "error: " + firstLine(s.Error)
			}
			printf("  [tool]  %s %s %s %s\n", s.Name, s.Args, status, clip(res))
		case trace.KindMemory:
			if s.Name == "card" && s.Result != "[]" {
				printf("  [memory] card: %s\n", clip(s.Result))
			} else if s.Name == "compress" {
				printf("  [memory] compressed: %s\n", clip(s.Result))
			}
		case trace.KindGate:
			f := s.Finding
			mode := ""
			if f.Shadow {
				mode = " (shadow)"
			}
			printf("  [gate]  %s on step %d: %s%s — %s\n", f.Rule, f.Step, f.Verdict, mode, f.Message)
		}
	}
	return len(tr.Steps)
}

func clip(s string) string {
	if r := []rune(s); len(r) > 110 {
		return string(r[:110]) + "…"
	}
	return s
}

func firstLine(s string) string {
	if i := strings.IndexByte(s, '\n'); i >= 0 {
		return s[:i]
	}
	return s
}
