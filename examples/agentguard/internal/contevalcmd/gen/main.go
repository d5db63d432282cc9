// Command gen writes a day of simulated production traces of the demo
// customer-service agent (examples/agentguard/internal/shop) as JSONL, gzipped
// when the output name ends in ".gz": the sample input of
// examples/agentguard/internal/contevalcmd.
//
//	go run ./examples/agentguard/internal/contevalcmd/gen -seed 1 -n 3000 -out examples/agentguard/internal/contevalcmd/testdata/traces.jsonl.gz
//
// Every trace is a real run of the demo agent through agentguard's guard
// (guard.Run with the shop's model, tools, classifier and the demo's
// prices), on seven routes. Traffic is split the way a rollout splits it:
// 80% of runs under an enforcing guard and 20% under a guard in shadow
// mode, 85% on the stable deployment and 15% on a canary whose model has
// regressed and that offers one more tool. What goes wrong, and where:
//
//   - tool errors: a carrier client that panics (order A1005), a return of
//     an order not yet delivered, an address change after shipping;
//   - vague or mixed requests, for the low-confidence band;
//   - a few customers who paste a long e-mail thread, for the over-cost band;
//   - the demo model's own failure modes: a policy clause invented when
//     retrieval is empty, a warranty section invented, a parcel polled in
//     a loop, a tool it was not given, a text to the wrong phone — caught
//     by the enforcing guard, delivered in shadow mode;
//   - the canary's regressions: citing a knowledge-base id from an old
//     version (KB-RET-04), answering the order API with truncated JSON or a
//     negative refund amount, and issuing vouchers with a tool that was
//     never reviewed (issue_voucher).
//
// The output depends only on -seed and -n (and on the demo agent): ids,
// times and durations are drawn from the seed, and stack traces are cut
// from errors.
package main

import (
	"bufio"
	"compress/gzip"
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"math/rand/v2"
	"os"
	"regexp"
	"strings"
	"time"

	"github.com/agentguard/agentguard/examples/agentguard/internal/shop"
	"github.com/agentguard/agentguard/guard"
	"github.com/agentguard/agentguard/guard/guardtest"
	"github.com/agentguard/agentguard/trace"
	"github.com/tmc/langchaingo/llms"
)

func main() {
	seed := flag.Uint64("seed", 1, "seed of every random choice")
	n := flag.Int("n", 3000, "number of traces")
	out := flag.String("out", "", "output file; .gz is gzipped (default: standard output)")
	flag.Parse()
	if err := run(*seed, *n, *out); err != nil {
		fmt.Fprintln(os.Stderr, "gen:", err)
		os.Exit(1)
	}
}

func run(seed uint64, n int, out string) error {
	var w io.Writer = os.Stdout
	var f *os.File
	if out != "" {
		var err error
		if f, err = os.Create(out); err != nil {
			return err
		}
		defer f.Close()
		w = f
	}
	bw := bufio.NewWriter(w)
	var zw *gzip.Writer
	if strings.HasSuffix(out, ".gz") {
		zw, _ = gzip.NewWriterLevel(bw, gzip.BestCompression)
		w = zw
	} else {
		w = bw
	}
	if err := Generate(context.Background(), w, seed, n); err != nil {
		return err
	}
	if zw != nil {
		if err := zw.Close(); err != nil {
			return err
		}
	}
	if err := bw.Flush(); err != nil {
		return err
	}
	if f != nil {
		return f.Close()
	}
	return nil
}

// Day is the day the simulated traffic happens on.
var Day = time.Date(2025, 6, 1, 0, 0, 0, 0, time.UTC)

// Routes of the simulated traffic.
const (
	RouteStatus  = "order-status"
	RouteAfter   = "after-sales"
	RouteChange  = "order-change"
	RouteReturns = "returns"
	RouteTriage  = "triage"
	RouteAPI     = "order-api" // a partner API: answers are JSON
)

// scenario is one kind of request.
type scenario struct {
	name   string
	route  string
	weight int
	turns  [][]string // the conversations to pick from
}

var scenarios = []scenario{
	{"track", RouteStatus, 230, [][]string{
		{"Where is my order A1001?"}, {"Can you track order A1003 for me?"}, {"订单 A1001 到哪了？"},
		{"What is the status of A1003?"}, {"Where is order A1002?"}, {"Where is my order A1003? It should have arrived."},
	}},
	{"track-loop", RouteStatus, 20, [][]string{{"Can you track order A1004 for me?"}, {"Where is order A1004? Please track it."}}},
	{"track-panic", RouteStatus, 8, [][]string{{"Where is order A1005?"}}},
	{"track-missing", RouteStatus, 25, [][]string{{"Where is order A9999?"}, {"Where is my order A9876?"}}},
	{"sms", RouteStatus, 15, [][]string{{"What is the status of A1003?", "Please text me the tracking number of A1001."}}},
	{"policy", RouteAfter, 150, [][]string{
		{"What is the return policy for opened electronics?"}, {"What is the return policy for unopened items?"},
		{"What is the warranty policy for electronics?"}, {"退货政策是什么？"}, {"Is there a warranty policy on headphones?"},
	}},
	{"vip", RouteAfter, 30, [][]string{{"Is there VIP compensation when my parcel is late?"}}},
	{"accidental", RouteAfter, 25, [][]string{{"Does the warranty cover accidental damage?"}}},
	{"address", RouteChange, 60, [][]string{
		{"你好", "订单 A1002 的收货地址改成上海市浦东新区世纪大道 100 号。", "是的"},
		{"Please change the address of order A1002 to 8 Huaihai Rd, Shanghai.", "yes"},
	}},
	{"address-shipped", RouteChange, 8, [][]string{{"Change the address of order A1001 to 8 Huaihai Rd, Shanghai.", "yes"}}},
	{"cancel", RouteChange, 30, [][]string{{"Please cancel order A1002."}, {"取消订单 A1002"}}},
	{"return", RouteReturns, 80, [][]string{{"I want to return order A1003, it is broken."}, {"Order A1003 is broken, I want to return it."}}},
	{"return-pending", RouteReturns, 8, [][]string{{"I want to return order A1002, it is broken."}}},
	{"vague", RouteTriage, 35, [][]string{{"I have a problem with my thing."}, {"Hmm, something is off."}, {"帮帮我"}}},
	{"mixed", RouteTriage, 15, [][]string{{"Where is my refund and can I change the address?"}, {"Where is my return, and what is the warranty policy?"}}},
	{"api-status", RouteAPI, 90, [][]string{{"Where is order A1001?"}, {"Where is order A1003?"}, {"What is the status of A1002?"}}},
	{"api-refund", RouteAPI, 30, [][]string{{"What is the status of A1003?"}}},
}

// Shares of the traffic.
const (
	shadowPercent = 20 // runs under a guard in shadow mode
	canaryPercent = 15 // runs on the canary deployment
	pastePerMille = 4  // runs whose first message carries a pasted e-mail thread
)

// plan is everything random about one trace, drawn before it runs.
type plan struct {
	id, session string
	scenario    scenario
	turns       []string
	shadow      bool
	canary      bool
	// Canary regressions, each drawn whatever the scenario; they act only
	// where they apply.
	staleCitation, truncatedJSON, negativeRefund bool
	start                                        time.Time
	rng                                          *rand.Rand // for durations, after the run
}

// Generate writes n traces drawn with seed to w, one JSONL line each.
func Generate(ctx context.Context, w io.Writer, seed uint64, n int) error {
	rng := rand.New(rand.NewPCG(seed, 0x636f6e746576616c))
	total := 0
	for _, s := range scenarios {
		total += s.weight
	}
	tw := trace.NewWriter(w)
	step := 24 * time.Hour / time.Duration(max(n, 1))
	for i := range n {
		p := plan{
			id:      fmt.Sprintf("prod-%05d-%04x", i, rng.Uint32()&0xffff),
			session: fmt.Sprintf("sess-%05d", i),
			shadow:  rng.IntN(100) < shadowPercent,
			canary:  rng.IntN(100) < canaryPercent,
			start:   Day.Add(time.Duration(i)*step + time.Duration(rng.Int64N(int64(step)))),
		}
		k := rng.IntN(total)
		for _, s := range scenarios {
			if k < s.weight {
				p.scenario = s
				break
			}
			k -= s.weight
		}
		p.turns = append([]string(nil), p.scenario.turns[rng.IntN(len(p.scenario.turns))]...)
		if rng.IntN(1000) < pastePerMille {
			p.turns[0] += pastedThread(rng)
		}
		staleRoll, jsonRoll, refundRoll := rng.IntN(100), rng.IntN(100), rng.IntN(100)
		if p.canary {
			p.staleCitation = staleRoll < 40
			p.truncatedJSON = jsonRoll < 12
			p.negativeRefund = refundRoll < 35
		} else {
			p.truncatedJSON = jsonRoll < 1
		}
		p.rng = rand.New(rand.NewPCG(seed, uint64(i)))
		t, err := record(ctx, p)
		if err != nil {
			return fmt.Errorf("trace %s (%s): %w", p.id, p.scenario.name, err)
		}
		if err := tw.Write(t); err != nil {
			return err
		}
	}
	return nil
}

// pastedThread is an e-mail thread a customer pastes under the request:
// long, and free of the words the demo agent reacts to.
func pastedThread(rng *rand.Rand) string {
	var b strings.Builder
	b.WriteString("\n\n---------- Forwarded message ----------\n")
	for range 40 + rng.IntN(80) {
		b.WriteString("> Dear team, I am writing again about the parcel mentioned below. Kind regards, the customer. Sent from my phone.\n")
	}
	return b.String()
}

// Pricing is the demo's model price (gpt-4o list prices, USD per million tokens).
var Pricing = guard.Pricing{InputPerMillion: 2.5, OutputPerMillion: 10}

// record runs one planned conversation through a fresh guard and returns
// its trace with deterministic times.
func record(ctx context.Context, p plan) (*trace.Trace, error) {
	g := guard.New(guard.Config{
		Shadow: p.shadow,
		Tools: map[string]guard.ToolPolicy{
			"search_kb":      {Retrieval: true},
			"update_address": {Confirm: true},
		},
		Gates: guard.Gates{
			RequireApproval: []string{"submit_return"},
			Classifier:      guard.ClassifierFunc(shop.Classify),
			Intents:         shop.Intents,
		},
		Observe: guard.Observation{
			Pricing: Pricing,
		},
	})
	s := shop.New()
	tls := s.Tools()
	if p.canary {
		tls = append(tls, guardtest.NewTool("issue_voucher", "Issue a goodwill voucher to the customer.", func(context.Context, string) (string, error) {
			return `{"voucher":"V-2025-0601","value":20,"currency":"CNY"}`, nil
		}).WithParameters(map[string]any{"type": "object", "properties": map[string]any{"order_id": map[string]any{"type": "string"}, "value": map[string]any{"type": "number"}}}))
	}
	var model llms.Model = &regressed{inner: shop.Model(), plan: p}
	rec := trace.NewRecorder(p.id, p.session, p.scenario.route, trace.RecorderOptions{})
	ctx = guard.WithRecorder(ctx, rec)
	var msgs []llms.MessageContent
	for _, turn := range p.turns {
		msgs = append(msgs, llms.TextParts(llms.ChatMessageTypeHuman, turn))
		res, err := g.Run(ctx, model, tls, msgs)
		for res != nil && err == nil && res.Status == guard.StatusPaused {
			decisions := map[string]guard.Decision{}
			for _, c := range res.Pending {
				decisions[c.ID] = guard.Decision{Approve: true}
			}
			res, err = g.Resume(ctx, model, tls, res, decisions)
		}
		if err != nil {
			return nil, err
		}
		msgs = res.Messages
	}
	t := rec.Trace()
	deploy, mode := "stable", "enforce"
	if p.canary {
		deploy = "canary"
	}
	if p.shadow {
		mode = "shadow"
	}
	t.Meta = map[string]string{"deploy": deploy, "guard": mode, "scenario": p.scenario.name}
	retime(t, p)
	return t, nil
}

// retime replaces the wall-clock times the guard recorded with times drawn
// from the plan, and cuts stack traces from errors, so that the output
// depends on the seed only.
func retime(t *trace.Trace, p plan) {
	t.Start = p.start
	at := p.start
	for _, s := range t.Steps {
		if i := strings.IndexByte(s.Error, '\n'); i >= 0 {
			s.Error = s.Error[:i]
		}
		var d time.Duration
		switch s.Kind {
		case trace.KindModel:
			if s.Intent != "" {
				d = time.Duration(40+p.rng.IntN(80)) * time.Millisecond
			} else if !s.Blocked {
				d = time.Duration(350+p.rng.IntN(900))*time.Millisecond + time.Duration(s.TokensOut)*15*time.Millisecond
			}
		case trace.KindTool:
			if !s.Blocked {
				d = time.Duration(20+p.rng.IntN(280)) * time.Millisecond
			}
		}
		s.Start, s.Duration = at, d
		at = at.Add(d)
	}
}

// regressed wraps the demo model with the deployment's behaviour: on the
// order API its text answers become JSON; on the canary it has the
// regressions drawn in the plan, and uses issue_voucher when a customer
// asks for compensation.
type regressed struct {
	inner llms.Model
	plan  plan
}

var (
	citation = regexp.MustCompile(`\[KB-[A-Z]+-\d+\]`)
	orderRef = regexp.MustCompile(`\bA\d{4}\b`)
)

func (m *regressed) GenerateContent(ctx context.Context, messages []llms.MessageContent, options ...llms.CallOption) (*llms.ContentResponse, error) {
	p := m.plan
	if p.canary && p.scenario.name == "vip" {
		return m.voucher(messages), nil
	}
	resp, err := m.inner.GenerateContent(ctx, messages, options...)
	if err != nil || len(resp.Choices) == 0 {
		return resp, err
	}
	c := resp.Choices[0]
	if len(c.ToolCalls) > 0 || c.Content == "" {
		return resp, nil
	}
	if p.staleCitation {
		c.Content = citation.ReplaceAllString(c.Content, "[KB-RET-04]")
	}
	if p.scenario.route == RouteAPI {
		c.Content = apiAnswer(c.Content, messages, p)
	}
	return resp, nil
}

// voucher is the canary's answer to a compensation request: issue a
// voucher with the unreviewed tool, then say so.
func (m *regressed) voucher(messages []llms.MessageContent) *llms.ContentResponse {
	for _, msg := range messages {
		for _, part := range msg.Parts {
			if r, ok := part.(llms.ToolCallResponse); ok && r.Name == "issue_voucher" {
				return &llms.ContentResponse{Choices: []*llms.ContentChoice{{Content: "I am sorry about the delay. I have issued you a ¥20 voucher (V-2025-0601) for your next order."}}}
			}
		}
	}
	call := llms.ToolCall{ID: "call_voucher", Type: "function", FunctionCall: &llms.FunctionCall{Name: "issue_voucher", Arguments: `{"value":20}`}}
	return &llms.ContentResponse{Choices: []*llms.ContentChoice{{ToolCalls: []llms.ToolCall{call}, FuncCall: call.FunctionCall, StopReason: "tool_calls"}}}
}

// apiAnswer turns a text answer into the order API's JSON.
func apiAnswer(text string, messages []llms.MessageContent, p plan) string {
	answer := map[string]any{"message": text}
	if id := orderRef.FindString(text); id != "" {
		answer["order_id"] = id
	}
	for _, msg := range messages {
		for _, part := range msg.Parts {
			if r, ok := part.(llms.ToolCallResponse); ok && r.Name == "query_order" {
				var o struct {
					Status string `json:"status"`
				}
				if json.Unmarshal([]byte(r.Content), &o) == nil && o.Status != "" {
					answer["status"] = o.Status
				}
			}
		}
	}
	if p.scenario.name == "api-refund" {
		amount := 29.9
		if p.negativeRefund {
			amount = -amount // the canary's sign bug
		}
		answer["refund_amount"] = amount
	}
	b, _ := json.Marshal(answer)
	s := string(b)
	if p.truncatedJSON {
		s = s[:len(s)*2/3] // the canary stops mid-object
	}
	return s
}

func (m *regressed) Call(ctx context.Context, prompt string, options ...llms.CallOption) (string, error) {
	return llms.GenerateFromSinglePrompt(ctx, m, prompt, options...)
}
