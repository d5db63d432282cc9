package guard_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/agentguard/agentguard/guard"
	"github.com/agentguard/agentguard/guard/guardtest"
	"github.com/agentguard/agentguard/guard/internal/testkit"
	"github.com/agentguard/agentguard/guard/rules"
	"github.com/agentguard/agentguard/trace"
	"github.com/tmc/langchaingo/agents"
	"github.com/tmc/langchaingo/chains"
	"github.com/tmc/langchaingo/tools"
)

// openaiText and openaiCall are OpenAI chat completions in the wire format.
func openaiText(text string) replay {
	b, _ := json.Marshal(text)
	return replay{body: fmt.Sprintf(`{"id":"chatcmpl-o1","object":"chat.completion","created":1748770200,"model":"gpt-4o-2024-08-06","choices":[{"index":0,"message":{"role":"assistant","content":%s},"finish_reason":"stop"}],"usage":{"prompt_tokens":40,"completion_tokens":12,"total_tokens":52}}`, b)}
}

func openaiCall(name, args string) replay {
	b, _ := json.Marshal(args)
	return replay{body: fmt.Sprintf(`{"id":"chatcmpl-o2","object":"chat.completion","created":1748770200,"model":"gpt-4o-2024-08-06","choices":[{"index":0,"message":{"role":"assistant","content":null,"tool_calls":[{"id":"call_1","type":"function","function":{"name":%q,"arguments":%s}}]},"finish_reason":"tool_calls"}],"usage":{"prompt_tokens":40,"completion_tokens":12,"total_tokens":52}}`, name, b)}
}

var serverError = replay{status: 500, file: "openai_error_500.json"}

// emptyOrders finds no order, whatever it is asked.
func emptyOrders() *guardtest.Tool {
	return guardtest.NewTool("query_order", "Look up an order by id", func(context.Context, string) (string, error) {
		return "[]", nil
	}).WithParameters(testkit.OrderSchema)
}

// outcomeCases are the same conversations for every integration path:
// what the model says on the wire, and the outcome the caller must read.
var outcomeCases = []struct {
	name    string
	cfg     guard.Config
	turn    string
	replays []replay
	tool    func() *guardtest.Tool
	status  guard.RunStatus
	rule    string // the rule whose finding ended the turn
}{
	{"done", guard.Config{}, "Where is order A1001?",
		[]replay{openaiCall("query_order", `{"order_id":"A1001"}`), openaiText("Order A1001 has shipped and arrives on Friday.")}, orderTool, guard.StatusDone, ""},
	{"clarify: an empty lookup is no proof of absence", guard.Config{}, "Where is order A42?",
		[]replay{openaiCall("query_order", `{"order_id":"A42"}`), openaiText("There are no records of order A42.")}, emptyOrders, guard.StatusClarify, rules.EmptyResult},
	{"clarify, Chinese", guard.Config{}, "订单 A42 在哪里？",
		[]replay{openaiCall("query_order", `{"order_id":"A42"}`), openaiText("系统中没有订单 A42 的记录。")}, emptyOrders, guard.StatusClarify, rules.EmptyResult},
	{"refused: a clause nothing retrieved, twice", guard.Config{}, "Can I get a refund?",
		[]replay{openaiText("Per section 9.9 of our policy you get a full refund."), openaiText("Section 9.9 says you get a full refund.")}, orderTool, guard.StatusRefused, rules.Grounding},
	{"refused, Chinese", guard.Config{}, "我可以退款吗？",
		[]replay{openaiText("根据第 9.9 条，您可以获得全额退款。"), openaiText("按照第 9.9 条规定，可以全额退款。")}, orderTool, guard.StatusRefused, rules.Grounding},
	{"handoff: over the step budget", guard.Config{Gates: guard.Gates{MaxSteps: 1}}, "Where are orders A1001 and A1002?",
		[]replay{openaiCall("query_order", `{"order_id":"A1001"}`), openaiCall("query_order", `{"order_id":"A1002"}`)}, orderTool, guard.StatusHandoff, rules.MaxSteps},
	{"failed: the provider answers 500", guard.Config{Resilience: guard.Resilience{Backoff: time.Millisecond}}, "Where is order A1001?",
		[]replay{serverError, serverError, serverError}, orderTool, guard.StatusFailed, ""},
}

// TestOutcomeOfExecutor runs langchaingo's agents.Executor over the real
// openai client and a loopback server, and reads each outcome with
// OutcomeOf: model-side verdicts included, which come back as ordinary
// output.
func TestOutcomeOfExecutor(t *testing.T) {
	for _, tt := range outcomeCases {
		t.Run(tt.name, func(t *testing.T) {
			srv := newWire(t, "/v1/chat/completions", tt.replays...)
			g := guard.New(tt.cfg)
			agent := agents.NewOpenAIFunctionsAgent(g.WrapModel(newOpenAI(t, srv.URL)), []tools.Tool{g.WrapTool(tt.tool())})
			ctx, _ := g.StartTrace(context.Background(), "s1", "orders")
			out, err := chains.Run(ctx, agents.NewExecutor(agent, agents.WithMaxIterations(5)), tt.turn)
			o := guard.OutcomeOf(ctx, out, err)
			checkOutcome(t, o, tt.status, tt.rule)
			if tt.status != guard.StatusFailed && tt.status != guard.StatusHandoff && o.Answer != out {
				t.Errorf("answer %q, want the output %q", o.Answer, out)
			}
		})
	}
}

// TestOutcomeRun reads the same conversations through Run: Result.Status
// and Result.Outcome agree with OutcomeOf.
func TestOutcomeRun(t *testing.T) {
	for _, tt := range outcomeCases {
		t.Run(tt.name, func(t *testing.T) {
			srv := newWire(t, "/v1/chat/completions", tt.replays...)
			g := guard.New(tt.cfg)
			res, err := g.Run(context.Background(), newOpenAI(t, srv.URL), []tools.Tool{tt.tool()}, human(tt.turn))
			if res.Status != tt.status {
				t.Errorf("Result.Status = %q, want %q", res.Status, tt.status)
			}
			if (err != nil) != (tt.status == guard.StatusFailed) || !errors.Is(res.Err, err) {
				t.Errorf("err = %v, Result.Err = %v", err, res.Err)
			}
			checkOutcome(t, res.Outcome(), tt.status, tt.rule)
		})
	}
}

func checkOutcome(t *testing.T, o guard.Outcome, status guard.RunStatus, rule string) {
	t.Helper()
	if o.Status != status {
		t.Fatalf("status = %q, want %q (outcome %+v)", o.Status, status, o)
	}
	switch status {
	case guard.StatusFailed:
		var gerr *guard.Error
		if !errors.As(o.Err, &gerr) || !strings.Contains(o.Err.Error(), "500") || o.Answer != "" {
			t.Errorf("failed outcome = %+v, want the provider's error", o)
		}
	case guard.StatusDone:
		if o.Finding != nil || o.Answer == "" {
			t.Errorf("done outcome = %+v", o)
		}
	default:
		if o.Finding == nil || o.Finding.Rule != rule || o.Answer == "" {
			t.Errorf("outcome = %+v, want a finding of %s and an answer", o, rule)
		}
	}
	if status == guard.StatusRefused && o.Answer != testkit.Refusal && !strings.ContainsRune(o.Answer, '。') {
		t.Errorf("refused answer = %q", o.Answer)
	}
	if o.Finding != nil && o.Finding.Verdict == trace.Allow {
		t.Errorf("finding %+v allows", o.Finding)
	}
}

// TestEvaluateStoppedAndEscaped evaluates the traces of the outcome
// conversations offline: what the guard stopped online is reported apart
// from what got through, so the guarded runs pass; the same conversations
// recorded in shadow mode, where nothing was enforced, do not.
func TestEvaluateStoppedAndEscaped(t *testing.T) {
	for _, tt := range outcomeCases {
		if tt.status == guard.StatusDone || tt.status == guard.StatusFailed {
			continue
		}
		for _, shadow := range []bool{false, true} {
			t.Run(fmt.Sprintf("%s/shadow=%v", tt.name, shadow), func(t *testing.T) {
				srv := newWire(t, "/v1/chat/completions", tt.replays...)
				cfg := tt.cfg
				cfg.Shadow = shadow
				g := guard.New(cfg)
				agent := agents.NewOpenAIFunctionsAgent(g.WrapModel(newOpenAI(t, srv.URL)), []tools.Tool{g.WrapTool(tt.tool())})
				ctx, rec := g.StartTrace(context.Background(), "s1", "orders")
				chains.Run(ctx, agents.NewExecutor(agent, agents.WithMaxIterations(len(tt.replays))), tt.turn)
				rep := guard.New(tt.cfg).Evaluate(rec.Trace())
				if rep.Violations() == 0 {
					t.Fatalf("no violation found offline: %+v", rep.Findings)
				}
				if len(rep.Stopped)+len(rep.Escaped) != rep.Violations() {
					t.Errorf("stopped %d + escaped %d != %d violations", len(rep.Stopped), len(rep.Escaped), rep.Violations())
				}
				if !shadow && (len(rep.Escaped) != 0 || !rep.Passed || rep.Score != 100) {
					t.Errorf("guarded: escaped %v, score %d, passed %v; want nothing through", ruleVerdicts(rep.Escaped), rep.Score, rep.Passed)
				}
				if shadow && (len(rep.Stopped) != 0 || rep.Score == 100) {
					t.Errorf("shadow: stopped %v, score %d; want everything through", ruleVerdicts(rep.Stopped), rep.Score)
				}
			})
		}
	}
}

// TestEvaluateUnanswered: a recorded run that ended on a failed call, with
// no answer after it, is a violation offline (online the caller got the
// error); a failure the agent recovered from, or a blocked last call, is
// not.
func TestEvaluateUnanswered(t *testing.T) {
	model := func(result, err string) *trace.Step {
		return &trace.Step{Kind: trace.KindModel, Name: "gpt-4o", Result: result, Error: err}
	}
	tool := func(name, err string, blocked bool) *trace.Step {
		return &trace.Step{Kind: trace.KindTool, Name: name, Args: `{}`, Result: "{}", Error: err, Blocked: blocked}
	}
	tests := []struct {
		name  string
		steps []*trace.Step
		want  bool
	}{
		{"the model call timed out", []*trace.Step{model("", "Request timed out.")}, true},
		{"模型调用超时", []*trace.Step{model("", "context deadline exceeded")}, true},
		{"a trace that stops at a failed tool call (a run may still be going)", []*trace.Step{model("", ""), tool("lookup_order", "connection refused", false)}, false},
		{"the model failed after a tool call", []*trace.Step{model("", ""), tool("lookup_order", "", false), model("", "panic: runtime error")}, true},
		{"a failed attempt, then an answer", []*trace.Step{model("", "503 Service Unavailable"), model("Order A1001 has shipped.", "")}, false},
		{"a failed tool, then an answer", []*trace.Step{model("", ""), tool("lookup_order", "timeout", false), model("I could not look the order up; please try later.", "")}, false},
		{"a blocked last call", []*trace.Step{model("", ""), tool("send_sms", "", true)}, false},
		{"a clean run", []*trace.Step{model("订单 A1001 已发货。", "")}, false},
	}
	g := guard.New(guard.Config{})
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			tr := &trace.Trace{ID: "t", UserTurns: []string{"Where is order A1001?"}, Steps: tt.steps}
			for i, s := range tr.Steps {
				s.Index = i
			}
			r := g.Evaluate(tr)
			i := slices.IndexFunc(r.Escaped, func(f trace.Finding) bool { return f.Rule == rules.Unanswered })
			if got := i >= 0; got != tt.want {
				t.Fatalf("unanswered = %v, want %v: %+v", got, tt.want, r.Findings)
			}
			if i >= 0 && (r.Escaped[i].Step != len(tt.steps)-1 || r.Escaped[i].Verdict != trace.Handoff || len(r.Escaped[i].Facts) == 0 || r.Score != 80) {
				t.Errorf("finding %+v, score %d", r.Escaped[i], r.Score)
			}
		})
	}
}
