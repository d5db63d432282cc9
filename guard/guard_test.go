package guard_test

import (
	"context"
	"errors"
	"slices"
	"strings"
	"testing"

	"github.com/agentguard/agentguard/guard"
	"github.com/agentguard/agentguard/guard/guardtest"
	"github.com/agentguard/agentguard/guard/internal/testkit"
	"github.com/agentguard/agentguard/guard/rules"
	"github.com/agentguard/agentguard/trace"
	"github.com/tmc/langchaingo/llms"
	"github.com/tmc/langchaingo/tools"
)

func orderTool() *guardtest.Tool {
	return guardtest.NewTool("query_order", "Look up an order by id", func(_ context.Context, in string) (string, error) {
		return `{"order_id":"A1001","status":"shipped"}`, nil
	}).WithParameters(testkit.OrderSchema)
}

func human(text string) []llms.MessageContent {
	return []llms.MessageContent{llms.TextParts(llms.ChatMessageTypeHuman, text)}
}

// checkPairs fails unless every tool call in msgs has exactly one tool
// result after it, and every tool result answers a call.
func checkPairs(t *testing.T, msgs []llms.MessageContent) {
	t.Helper()
	open := map[string]int{}
	for _, m := range msgs {
		for _, p := range m.Parts {
			switch p := p.(type) {
			case llms.ToolCall:
				open[p.ID]++
			case llms.ToolCallResponse:
				if open[p.ToolCallID] != 1 {
					t.Errorf("tool result for %q answers %d open calls", p.ToolCallID, open[p.ToolCallID])
				}
				open[p.ToolCallID]--
			}
		}
	}
	for id, n := range open {
		if n != 0 {
			t.Errorf("tool call %q has no result", id)
		}
	}
}

func toolResults(msgs []llms.MessageContent) []string {
	var out []string
	for _, m := range msgs {
		for _, p := range m.Parts {
			if r, ok := p.(llms.ToolCallResponse); ok {
				out = append(out, r.Content)
			}
		}
	}
	return out
}

func ruleVerdicts(fs []trace.Finding) []string {
	var out []string
	for _, f := range fs {
		out = append(out, f.Rule+"@"+string(f.Verdict))
	}
	return out
}

func TestRunCompletes(t *testing.T) {
	g := guard.New(guard.Config{})
	model := guardtest.Script(
		guardtest.Reply{Calls: []guardtest.Call{{Name: "query_order", Args: `{"order_id":"A1001"}`}}, Usage: &guardtest.Usage{In: 120, Out: 12}},
		guardtest.Text("Your order A1001 has shipped."),
	)
	tool := orderTool()
	res, err := g.Run(context.Background(), model, []tools.Tool{tool}, human("Where is order A1001?"))
	if err != nil {
		t.Fatal(err)
	}
	if got, want := res.Status, guard.StatusDone; got != want {
		t.Fatalf("status = %s, want %s", got, want)
	}
	if got, want := res.Answer, "Your order A1001 has shipped."; got != want {
		t.Errorf("answer = %q, want %q", got, want)
	}
	if got, want := tool.Inputs(), []string{`{"order_id":"A1001"}`}; !slices.Equal(got, want) {
		t.Errorf("tool inputs = %q, want %q", got, want)
	}
	checkPairs(t, res.Messages)
	// The model saw the tool offered with its schema, and the result on the second call.
	opts := model.Options()
	if len(opts[0].Tools) != 1 || opts[0].Tools[0].Function.Name != "query_order" {
		t.Errorf("tools offered = %+v", opts[0].Tools)
	}
	if got := toolResults(model.Received()[1]); len(got) != 1 || !strings.Contains(got[0], "shipped") {
		t.Errorf("second call saw tool results %q", got)
	}
	tr := res.Trace
	kinds := make([]trace.Kind, len(tr.Steps))
	for i, s := range tr.Steps {
		kinds[i] = s.Kind
	}
	// The user turn's card step first: the memory card is on by default.
	if want := []trace.Kind{trace.KindMemory, trace.KindModel, trace.KindTool, trace.KindModel}; !slices.Equal(kinds, want) {
		t.Errorf("step kinds = %v, want %v", kinds, want)
	}
	if got, want := tr.UserTurns, []string{"Where is order A1001?"}; !slices.Equal(got, want) {
		t.Errorf("user turns = %q, want %q", got, want)
	}
	if s := tr.Steps[1]; s.TokensIn != 120 || s.TokensOut != 12 || len(s.Calls) != 1 {
		t.Errorf("model step = %+v", s)
	}
	if s := tr.Steps[3]; s.TokensIn == 0 || s.TokensOut == 0 {
		t.Errorf("estimated tokens missing: %+v", s)
	}
	if s := tr.Steps[2]; s.CallID != "call_0_0" || s.Turn != 0 || s.Result == "" {
		t.Errorf("tool step = %+v", s)
	}
	if len(res.Findings) != 0 {
		t.Errorf("findings = %v", ruleVerdicts(res.Findings))
	}
}

// TestFirstRules drives each built-in rule online through Run and checks
// that the step was stopped, that the agent got a refusal result, and that
// Evaluate finds the same findings over the recorded trace.
func TestFirstRules(t *testing.T) {
	loopCall := guardtest.ToolCall("query_order", `{"order_id":"A1001"}`)
	tests := []struct {
		name       string
		cfg        guard.Config
		script     []guardtest.Reply
		wantStatus guard.RunStatus
		wantRules  []string
		wantResult string // a substring of some tool result the model saw
		wantRuns   int    // how often the tool really ran
	}{
		{
			name:       "allow-list",
			script:     []guardtest.Reply{guardtest.ToolCall("delete_account", `{}`), guardtest.Text("Sorry.")},
			wantStatus: guard.StatusDone,
			wantRules:  []string{"tool-allow-list@block"},
			wantResult: "not on the allow-list",
		},
		{
			name:       "explicit allow-list",
			cfg:        guard.Config{Gates: guard.Gates{AllowedTools: []string{"logistics"}}},
			script:     []guardtest.Reply{loopCall, guardtest.Text("I cannot look that up.")},
			wantStatus: guard.StatusDone,
			wantRules:  []string{"tool-allow-list@block"},
			wantResult: "blocked by rule tool-allow-list",
		},
		{
			name:       "loop",
			script:     []guardtest.Reply{loopCall, loopCall, loopCall, guardtest.Text("It shipped.")},
			wantStatus: guard.StatusDone,
			wantRules:  []string{"loop@block"},
			wantResult: "3 times in a row",
			wantRuns:   2,
		},
		{
			name:       "loop limit 2",
			cfg:        guard.Config{Gates: guard.Gates{LoopLimit: 2}},
			script:     []guardtest.Reply{loopCall, guardtest.ToolCall("query_order", `{ "order_id" : "A1001" }`), guardtest.Text("It shipped.")},
			wantStatus: guard.StatusDone,
			wantRules:  []string{"loop@block"},
			wantRuns:   1,
		},
		{
			name: "max steps",
			cfg:  guard.Config{Gates: guard.Gates{MaxSteps: 2, LoopLimit: -1}},
			script: []guardtest.Reply{
				loopCall, guardtest.ToolCall("query_order", `{"order_id":"A1002"}`), guardtest.ToolCall("query_order", `{"order_id":"A1003"}`),
			},
			wantStatus: guard.StatusHandoff,
			// A1002 and A1003 are ids the user never gave: warnings.
			wantRules:  []string{"argument-provenance@allow", "max-steps@handoff", "argument-provenance@allow"},
			wantResult: "handed to a human",
			wantRuns:   2,
		},
		{
			name:       "missing required argument",
			script:     []guardtest.Reply{guardtest.ToolCall("query_order", `{"id":"A1001"}`), loopCall, guardtest.Text("It shipped.")},
			wantStatus: guard.StatusDone,
			wantRules:  []string{"tool-arguments@retry"},
			wantResult: `missing required "order_id"`,
			wantRuns:   1,
		},
		{
			name:       "arguments not JSON",
			script:     []guardtest.Reply{guardtest.ToolCall("query_order", `{"order_id": "A1`), guardtest.Text("Sorry.")},
			wantStatus: guard.StatusDone,
			wantRules:  []string{"tool-arguments@retry"},
			wantResult: "not valid JSON",
		},
		{
			name:       "wrong argument type",
			script:     []guardtest.Reply{guardtest.ToolCall("query_order", `{"order_id": 1001}`), guardtest.Text("Sorry.")},
			wantStatus: guard.StatusDone,
			wantRules:  []string{"tool-arguments@retry", "argument-provenance@allow"}, // 1001 is not A1001
			wantResult: "order_id: want string, got number",
		},
		{
			name:       "clean",
			script:     []guardtest.Reply{loopCall, guardtest.Text("It shipped.")},
			wantStatus: guard.StatusDone,
			wantRuns:   1,
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			g := guard.New(tt.cfg)
			tool := orderTool()
			res, err := g.Run(context.Background(), guardtest.Script(tt.script...), []tools.Tool{tool}, human("Where is A1001?"))
			if err != nil {
				t.Fatal(err)
			}
			if res.Status != tt.wantStatus {
				t.Errorf("status = %s, want %s", res.Status, tt.wantStatus)
			}
			if got := ruleVerdicts(res.Findings); !slices.Equal(got, tt.wantRules) {
				t.Errorf("online findings = %v, want %v", got, tt.wantRules)
			}
			if got := len(tool.Inputs()); got != tt.wantRuns {
				t.Errorf("tool ran %d times, want %d", got, tt.wantRuns)
			}
			checkPairs(t, res.Messages)
			if tt.wantResult != "" && !slices.ContainsFunc(toolResults(res.Messages), func(s string) bool { return strings.Contains(s, tt.wantResult) }) {
				t.Errorf("no tool result contains %q: %q", tt.wantResult, toolResults(res.Messages))
			}
			for _, f := range res.Findings {
				if s := res.Trace.Steps[f.Step]; s.Kind == trace.KindTool && !s.Blocked && f.Verdict != trace.Allow {
					t.Errorf("step %d judged %s but not blocked", f.Step, f.Verdict)
				}
			}
			// Offline: the same rules over the recorded trace find the same.
			rep := g.Evaluate(res.Trace)
			if got, want := ruleVerdicts(rep.Findings), ruleVerdicts(res.Findings); !slices.Equal(got, want) {
				t.Errorf("offline findings = %v, online %v", got, want)
			}
			for i := range rep.Findings {
				if rep.Findings[i].Step != res.Findings[i].Step {
					t.Errorf("offline finding %d at step %d, online at %d", i, rep.Findings[i].Step, res.Findings[i].Step)
				}
			}
			violations := 0 // findings judged Allow are warnings: they cost no points
			for _, r := range tt.wantRules {
				if !strings.HasSuffix(r, "@allow") {
					violations++
				}
			}
			// The guard stopped every violation online: none got through.
			if len(rep.Stopped) != violations || len(rep.Escaped) != 0 || rep.Score != 100 || !rep.Passed {
				t.Errorf("stopped %d, escaped %d, score %d; want %d stopped, none escaped, 100", len(rep.Stopped), len(rep.Escaped), rep.Score, violations)
			}
		})
	}
}

func TestShadowModeRecordsButNeverBlocks(t *testing.T) {
	g := guard.New(guard.Config{Shadow: true})
	call := guardtest.ToolCall("query_order", `{"order_id":"A1001"}`)
	tool := orderTool()
	res, err := g.Run(context.Background(), guardtest.Script(call, call, call, guardtest.Text("It shipped.")), []tools.Tool{tool}, human("Where is A1001?"))
	if err != nil {
		t.Fatal(err)
	}
	if got := len(tool.Inputs()); got != 3 {
		t.Errorf("tool ran %d times, want 3", got)
	}
	if got, want := ruleVerdicts(res.Findings), []string{"loop@block"}; !slices.Equal(got, want) {
		t.Fatalf("findings = %v, want %v", got, want)
	}
	if !res.Findings[0].Shadow {
		t.Error("finding not marked shadow")
	}
	var gates int
	for _, s := range res.Trace.Steps {
		if s.Kind == trace.KindGate {
			gates++
			if !s.Finding.Shadow {
				t.Error("gate step not marked shadow")
			}
		}
		if s.Blocked {
			t.Errorf("step %d blocked in shadow mode", s.Index)
		}
	}
	if gates != 1 {
		t.Errorf("gate steps = %d, want 1", gates)
	}
}

func TestToolPanicIsRecovered(t *testing.T) {
	var got []trace.Violation
	g := guard.New(guard.Config{
		Observe: guard.Observation{
			Ledger: guard.SinkFunc(func(_ context.Context, v trace.Violation) (uint64, error) {
				got = append(got, v)
				return uint64(len(got)), nil
			}),
		},
	})
	boom := guardtest.NewTool("logistics", "Track a parcel", func(context.Context, string) (string, error) { panic("index out of range") })

	// Under Run the panic becomes the tool's result and the loop goes on.
	res, err := g.Run(context.Background(), guardtest.Script(guardtest.ToolCall("logistics", `{}`), guardtest.Text("Tracking is down.")), []tools.Tool{boom}, human("Where is my parcel?"))
	if err != nil {
		t.Fatal(err)
	}
	if res.Status != guard.StatusDone {
		t.Errorf("status = %s", res.Status)
	}
	checkPairs(t, res.Messages)
	if r := toolResults(res.Messages); len(r) != 1 || !strings.Contains(r[0], "tool panicked: index out of range") {
		t.Errorf("tool results = %q", r)
	}
	if err := g.Flush(context.Background()); err != nil {
		t.Fatal(err)
	}
	if len(got) != 1 || got[0].Rule != rules.ToolError || got[0].Severity != trace.SeverityCritical {
		t.Errorf("ledger got %+v", got)
	}

	// Through WrapTool it is an error matching ErrToolPanic.
	_, err = g.WrapTool(boom).Call(context.Background(), "{}")
	var gerr *guard.Error
	if !errors.Is(err, guard.ErrToolPanic) || !errors.As(err, &gerr) || gerr.Name != "logistics" {
		t.Errorf("WrapTool error = %v", err)
	}
}

func TestWrapToolVerdicts(t *testing.T) {
	clarify := guard.NewRule("vague", func(_ *trace.Trace, s *trace.Step) []trace.Finding {
		if s.Kind == trace.KindTool && strings.Contains(s.Args, "?") {
			return []trace.Finding{{Rule: "vague", Verdict: trace.Clarify, Question: "Which order do you mean?", Message: "order id is vague"}}
		}
		return nil
	})
	g := guard.New(guard.Config{Rules: []guard.Rule{clarify}, Gates: guard.Gates{AllowedTools: []string{"query_order"}}})
	tool := g.WrapTool(orderTool())
	ctx, rec := g.StartTrace(context.Background(), "s1", "order-status")

	out, err := tool.Call(ctx, `{"order_id":"A1001"}`)
	if err != nil || !strings.Contains(out, "shipped") {
		t.Errorf("allowed call = %q, %v", out, err)
	}
	out, err = tool.Call(ctx, `{}`)
	if err != nil || !strings.Contains(out, `missing required "order_id"`) {
		t.Errorf("retry call = %q, %v; want an observation and no error", out, err)
	}
	_, err = tool.Call(ctx, `{"order_id":"?"}`)
	var intr *guard.Interrupt
	if !errors.As(err, &intr) || intr.Verdict != trace.Clarify || intr.Message != "Which order do you mean?" || !errors.Is(err, guard.ErrInterrupted) {
		t.Errorf("clarify call error = %v", err)
	}
	tr := rec.Trace()
	if tr.SessionID != "s1" || tr.Route != "order-status" {
		t.Errorf("trace identity = %q %q", tr.SessionID, tr.Route)
	}
	if got, want := ruleVerdicts(g.Evaluate(tr).Findings), []string{"tool-arguments@retry", "vague@clarify"}; !slices.Equal(got, want) {
		t.Errorf("offline findings = %v, want %v", got, want)
	}
}

func TestRetryVerdictOnModelAnswer(t *testing.T) {
	noNumbers := guard.NewRule("no-digits", func(_ *trace.Trace, s *trace.Step) []trace.Finding {
		if s.Kind == trace.KindModel && strings.ContainsAny(s.Result, "0123456789") {
			return []trace.Finding{{Rule: "no-digits", Verdict: trace.Retry, Message: "the answer quotes a number"}}
		}
		return nil
	})
	g := guard.New(guard.Config{Rules: []guard.Rule{noNumbers}})
	tests := []struct {
		name       string
		script     []guardtest.Reply
		wantStatus guard.RunStatus
		wantAnswer string
	}{
		{"recovers", []guardtest.Reply{guardtest.Text("You have 30 days."), guardtest.Text("You can return it within a month.")}, guard.StatusDone, "You can return it within a month."},
		{"refused after retries", []guardtest.Reply{guardtest.Text("30 days."), guardtest.Text("31 days.")}, guard.StatusRefused, testkit.Refusal},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			model := guardtest.Script(tt.script...)
			res, err := g.Run(context.Background(), model, nil, human("Can I return it?"))
			if err != nil {
				t.Fatal(err)
			}
			if res.Status != tt.wantStatus || res.Answer != tt.wantAnswer {
				t.Errorf("got %s %q, want %s %q", res.Status, res.Answer, tt.wantStatus, tt.wantAnswer)
			}
			second := model.Received()[1]
			if last := second[len(second)-1]; !strings.Contains(last.Parts[0].(llms.TextContent).Text, "quotes a number") {
				t.Errorf("feedback not sent: %+v", last)
			}
			if n := len(res.Trace.UserTurns); n != 1 {
				t.Errorf("feedback recorded as a user turn: %d turns", n)
			}
		})
	}
}

func TestPauseForApprovalAndResume(t *testing.T) {
	g := guard.New(guard.Config{Gates: guard.Gates{RequireApproval: []string{"submit_return"}}})
	ret := guardtest.NewTool("submit_return", "Submit a return", nil)
	model := guardtest.Script(
		guardtest.Reply{Calls: []guardtest.Call{{Name: "query_order", Args: `{"order_id":"A1001"}`}, {Name: "submit_return", Args: `{"order_id":"A1001"}`}}},
		guardtest.Text("Your return is submitted."),
		guardtest.ToolCall("submit_return", `{"order_id":"A1002"}`),
		guardtest.Text("OK, I did not submit it."),
	)
	tls := []tools.Tool{orderTool(), ret}
	res, err := g.Run(context.Background(), model, tls, human("Return A1001"))
	if err != nil {
		t.Fatal(err)
	}
	if res.Status != guard.StatusPaused || len(res.Pending) != 1 || res.Pending[0].FunctionCall.Name != "submit_return" {
		t.Fatalf("got %s with pending %+v", res.Status, res.Pending)
	}
	if len(ret.Inputs()) != 0 {
		t.Fatal("tool ran before approval")
	}
	res, err = g.Resume(context.Background(), model, tls, res, map[string]guard.Decision{res.Pending[0].ID: {Approve: true}})
	if err != nil {
		t.Fatal(err)
	}
	if res.Status != guard.StatusDone || len(ret.Inputs()) != 1 {
		t.Fatalf("after approval: %s, tool ran %d times", res.Status, len(ret.Inputs()))
	}
	checkPairs(t, res.Messages)

	// Declined: the model is told, the tool never runs.
	msgs := append(res.Messages, llms.TextParts(llms.ChatMessageTypeHuman, "And A1002?"))
	res, err = g.Run(context.Background(), model, tls, msgs)
	if err != nil || res.Status != guard.StatusPaused {
		t.Fatalf("second run: %v %v", res.Status, err)
	}
	res, err = g.Resume(context.Background(), model, tls, res, map[string]guard.Decision{res.Pending[0].ID: {Reason: "customer changed their mind"}})
	if err != nil {
		t.Fatal(err)
	}
	if len(ret.Inputs()) != 1 {
		t.Error("declined tool ran")
	}
	checkPairs(t, res.Messages)
	if r := toolResults(res.Messages); !strings.Contains(r[len(r)-1], "customer changed their mind") {
		t.Errorf("decline not shown to the model: %q", r[len(r)-1])
	}
	if _, err := g.Resume(context.Background(), model, tls, res, nil); err == nil {
		t.Error("Resume of a finished run: no error")
	}
}

func TestTerminalVerdictFromToolClosesConversation(t *testing.T) {
	handoff := guard.NewRule("needs-agent", func(_ *trace.Trace, s *trace.Step) []trace.Finding {
		if s.Kind == trace.KindTool && s.Name == "submit_return" {
			return []trace.Finding{{Rule: "needs-agent", Verdict: trace.Handoff, Message: "returns over 1000 need an agent"}}
		}
		return nil
	})
	g := guard.New(guard.Config{Rules: []guard.Rule{handoff}})
	model := guardtest.Script(guardtest.Reply{Calls: []guardtest.Call{
		{Name: "submit_return", Args: `{}`}, {Name: "query_order", Args: `{"order_id":"A1"}`},
	}})
	res, err := g.Run(context.Background(), model, []tools.Tool{orderTool(), guardtest.NewTool("submit_return", "", nil)}, human("Return it"))
	if err != nil {
		t.Fatal(err)
	}
	if res.Status != guard.StatusHandoff || res.Answer != testkit.Handoff {
		t.Errorf("got %s %q", res.Status, res.Answer)
	}
	checkPairs(t, res.Messages)
	if last := res.Messages[len(res.Messages)-1]; last.Role != llms.ChatMessageTypeAI {
		t.Errorf("last message role = %s, want ai", last.Role)
	}
}

func TestModelErrorIsWrapped(t *testing.T) {
	g := guard.New(guard.Config{Resilience: guard.Resilience{ModelRetries: -1}})
	upstream := errors.New("429 too many requests")
	res, err := g.Run(context.Background(), guardtest.Script(guardtest.Reply{Err: upstream}), nil, human("hi"))
	var gerr *guard.Error
	if !errors.Is(err, upstream) || !errors.As(err, &gerr) || gerr.Op != "model" {
		t.Fatalf("err = %v", err)
	}
	// The user turn's card step, the failed model call, then the gate steps
	// that record its findings: the failure, and that no answer came.
	if res == nil || len(res.Trace.Steps) != 4 || res.Trace.Steps[0].Kind != trace.KindMemory || !strings.Contains(res.Trace.Steps[1].Error, "429") ||
		res.Trace.Steps[2].Name != rules.ModelError || res.Trace.Steps[3].Name != rules.Unanswered {
		t.Fatalf("failed model call not recorded: %+v", res)
	}
	if len(res.Findings) != 2 || res.Findings[0].Rule != rules.ModelError || res.Findings[1].Rule != rules.Unanswered {
		t.Fatalf("findings = %+v, want model-error and unanswered", res.Findings)
	}
	for _, f := range res.Findings {
		if f.Dimension != trace.Stability || f.Step != 1 || f.Facts[0].Step != 1 {
			t.Errorf("finding %+v: want the stability dimension, about step 1, with a fact of step 1", f)
		}
	}
}

func TestCallerMessagesUntouched(t *testing.T) {
	g := guard.New(guard.Config{})
	msgs := make([]llms.MessageContent, 1, 8) // spare capacity must not be written
	msgs[0] = llms.TextParts(llms.ChatMessageTypeHuman, "Where is A1001?")
	_, err := g.Run(context.Background(), guardtest.Script(guardtest.ToolCall("query_order", `{"order_id":"A1001"}`), guardtest.Text("Shipped.")), []tools.Tool{orderTool()}, msgs)
	if err != nil {
		t.Fatal(err)
	}
	if spare := msgs[:2][1]; spare.Role != "" {
		t.Errorf("Run wrote into the caller's backing array: %+v", spare)
	}
}

func TestDisabledGuardIsFreeAndSilent(t *testing.T) {
	g := guard.New(guard.Config{Bypass: true, Gates: guard.Gates{AllowedTools: []string{"other"}}})
	bare := func(context.Context, string) (string, error) { return "ok", nil }
	tool := g.WrapTool(guardtest.NewTool("query_order", "", bare))
	ctx := context.Background()
	if n := testing.AllocsPerRun(100, func() { _, _ = tool.Call(ctx, `{"order_id":"A1"}`) }); n != 0 {
		t.Errorf("a disabled wrapped call allocates %v times", n)
	}
	res, err := g.Run(ctx, guardtest.Script(guardtest.ToolCall("query_order", `{}`), guardtest.Text("Done.")), []tools.Tool{orderTool()}, human("go"))
	if err != nil {
		t.Fatal(err)
	}
	if res.Status != guard.StatusDone || len(res.Findings) != 0 || len(res.Trace.Steps) != 0 {
		t.Errorf("disabled Run: %s, %d findings, %d steps recorded", res.Status, len(res.Findings), len(res.Trace.Steps))
	}
}
