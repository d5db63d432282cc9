package conteval

import (
	"context"
	"testing"

	"github.com/agentguard/agentguard/guard"
	"github.com/agentguard/agentguard/guard/guardtest"
	"github.com/agentguard/agentguard/guard/internal/testkit"
	"github.com/agentguard/agentguard/guard/rules"
	"github.com/agentguard/agentguard/trace"
	"github.com/tmc/langchaingo/llms"
	"github.com/tmc/langchaingo/tools"
)

// Step builders for hand-made traces, in the shapes the guard records.
func answer(text string) *trace.Step { return &trace.Step{Kind: trace.KindModel, Result: text} }
func toolCall(name, args, result string) *trace.Step {
	return &trace.Step{Kind: trace.KindTool, Name: name, Args: args, Result: result}
}
func blockedTool(name, args string) *trace.Step {
	return &trace.Step{Kind: trace.KindTool, Name: name, Args: args, Blocked: true, Result: "[agentguard] call blocked"}
}
func intent(label string, conf float64) *trace.Step {
	return &trace.Step{Kind: trace.KindModel, Name: "intent", Intent: label, Confidence: conf, Result: label}
}
func gate(step int, v trace.Verdict, shadow bool) *trace.Step {
	return &trace.Step{Kind: trace.KindGate, Name: "rule", Finding: &trace.Finding{Rule: "rule", Step: step, Verdict: v, Shadow: shadow}}
}
func refusal() *trace.Step {
	return &trace.Step{Kind: trace.KindModel, Blocked: true, Refusal: true, Result: testkit.Refusal}
}
func retrieval(ids ...string) *trace.Step {
	s := &trace.Step{Kind: trace.KindRetrieval, Name: "retriever", Args: "q", DocIDs: ids, Result: "[]"}
	for range ids {
		s.Scores = append(s.Scores, 0.9)
	}
	return s
}

type assertionCase struct {
	name  string
	trace *trace.Trace
	want  AssertionStatus
	step  int // the failing step, when want is Fail
}

func runAssertionCases(t *testing.T, a Assertion, tests []assertionCase) {
	t.Helper()
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			o := a.Check(tt.trace)
			if got := o.status(); got != tt.want {
				t.Fatalf("%s: status = %s, want %s (%+v)", a.Name(), got, tt.want, o.Finding)
			}
			if tt.want == Fail {
				if o.Finding.Step != tt.step {
					t.Errorf("failing step = %d, want %d", o.Finding.Step, tt.step)
				}
				if o.Finding.Message == "" || o.Finding.Verdict == trace.Allow || o.Finding.Shadow {
					t.Errorf("finding = %+v, want a message and an enforced verdict", o.Finding)
				}
			}
		})
	}
}

func TestJSONAnswer(t *testing.T) {
	runAssertionCases(t, JSONAnswer("api"), []assertionCase{
		{"other route", tr("t", "chat", answer("not json")), Skip, 0},
		{"json", tr("t", "api", answer(`{"status":"shipped"}`)), Pass, 0},
		{"fenced json", tr("t", "api", answer("```json\n{\"a\":1}\n```")), Pass, 0},
		{"not json", tr("t", "api", answer(`{"status":"shipped"`)), Fail, 0},
		{"intent step is no answer", tr("t", "api", intent("check_order", 0.9), answer(`{"a":1}`)), Pass, 0},
		{"sent back by the guard, then fixed", tr("t", "api", answer("oops"), gate(0, trace.Retry, false), answer(`{"a":1}`)), Pass, 0},
		{"flagged in shadow mode", tr("t", "api", answer("oops"), gate(0, trace.Retry, true)), Fail, 0},
		{"the guard's refusal is no answer", tr("t", "api", refusal()), Skip, 0},
		{"tool calls only", tr("t", "api", &trace.Step{Kind: trace.KindModel, Calls: []trace.Call{{Name: "q"}}}), Skip, 0},
	})
}

func TestNonNegativeAmounts(t *testing.T) {
	runAssertionCases(t, NonNegativeAmounts("api"), []assertionCase{
		{"negative refund argument", tr("t", "chat", toolCall("issue_refund", `{"order_id":"A1","amount":-5}`, "ok")), Fail, 0},
		{"blocked call did not run", tr("t", "chat", blockedTool("issue_refund", `{"amount":-5}`)), Skip, 0},
		{"positive amount", tr("t", "chat", toolCall("issue_refund", `{"amount":5}`, "ok")), Pass, 0},
		{"no amount", tr("t", "chat", toolCall("query_order", `{"order_id":"A1"}`, "{}")), Skip, 0},
		{"nested price", tr("t", "chat", toolCall("order", `{"items":[{"price":3},{"price":-1}]}`, "ok")), Fail, 0},
		{"negative in a JSON answer", tr("t", "api", answer(`{"refund_amount":-12.5}`)), Fail, 0},
		{"answers on other routes are text", tr("t", "chat", answer(`{"refund_amount":-12.5}`)), Skip, 0},
		{"second call", tr("t", "chat", toolCall("pay", `{"amount":1}`, "ok"), toolCall("pay", `{"total":-1}`, "ok")), Fail, 1},
	})
}

func TestCitationsRetrieved(t *testing.T) {
	kb := map[string]guard.ToolPolicy{"search_kb": {Retrieval: true}}
	search := func(ids ...string) *trace.Step {
		res := "["
		for i, id := range ids {
			if i > 0 {
				res += ","
			}
			res += `{"id":"` + id + `","score":1.5}`
		}
		return toolCall("search_kb", `{"query":"q"}`, res+"]")
	}
	runAssertionCases(t, CitationsRetrieved(kb), []assertionCase{
		{"cites what was retrieved", tr("t", "r", search("KB-RET-01"), answer("Yes. [KB-RET-01]")), Pass, 0},
		{"cites what was not", tr("t", "r", search("KB-RET-01"), answer("Yes. [KB-RET-09]")), Fail, 1},
		{"Step.Citations", tr("t", "r", search("KB-1"), &trace.Step{Kind: trace.KindModel, Result: "Yes.", Citations: []string{"KB-2"}}), Fail, 1},
		{"retrieval step", tr("t", "r", retrieval("D1"), answer("See [D1].")), Pass, 0},
		{"retrieved later does not count", tr("t", "r", answer("See [D1]."), retrieval("D1")), Fail, 0},
		{"unmarked tool", tr("t", "r", toolCall("other", "{}", `[{"id":"D1","score":1}]`), answer("See [D1].")), Fail, 1},
		{"unmarked tool with recorded ids", tr("t", "r", &trace.Step{Kind: trace.KindTool, Name: "other", Result: "...", DocIDs: []string{"D1"}}, answer("See [D1].")), Pass, 0},
		{"no citation", tr("t", "r", search("D1"), answer("Yes.")), Skip, 0},
		{"stopped answer", tr("t", "r", answer("See [D9]."), gate(0, trace.Retry, false)), Skip, 0},
	})
}

func TestAllowedTools(t *testing.T) {
	runAssertionCases(t, AllowedTools("query_order", "search_kb"), []assertionCase{
		{"allowed", tr("t", "r", toolCall("query_order", "{}", "{}")), Pass, 0},
		{"ran outside the list", tr("t", "r", toolCall("query_order", "{}", "{}"), toolCall("issue_voucher", "{}", "ok")), Fail, 1},
		{"blocked outside the list", tr("t", "r", blockedTool("cancel_order", "{}")), Skip, 0},
		{"no tool", tr("t", "r", answer("hi")), Skip, 0},
	})
	offered := tr("t", "r", toolCall("b", "{}", ""))
	offered.Tools = []trace.ToolSpec{{Name: "a"}}
	runAssertionCases(t, AllowedTools(), []assertionCase{
		{"not offered", offered, Fail, 0},
		{"nothing offered", tr("t", "r", toolCall("b", "{}", "")), Pass, 0},
	})
}

func TestRefusalWithoutEvidence(t *testing.T) {
	kb := map[string]guard.ToolPolicy{"search_kb": {Retrieval: true}}
	empty := toolCall("search_kb", `{"query":"vip"}`, "[]")
	weak := toolCall("search_kb", `{"query":"vip"}`, `[{"id":"D1","score":0.3}]`)
	runAssertionCases(t, RefusalWithoutEvidence(kb, 0, nil), []assertionCase{
		{"answered from nothing", tr("t", "r", empty, answer("According to clause 7.3 you get ¥50.")), Fail, 1},
		{"the guard refused", tr("t", "r", empty, refusal()), Pass, 0},
		{"refusal template", tr("t", "r", empty, answer(testkit.Refusal)), Pass, 0},
		{"refusal flag", tr("t", "r", empty, &trace.Step{Kind: trace.KindModel, Result: "I can't help with that.", Refusal: true}), Pass, 0},
		{"stopped answer", tr("t", "r", empty, answer("Clause 7.3 says..."), gate(1, trace.Refuse, false)), Pass, 0},
		{"shadow only", tr("t", "r", empty, answer("Clause 7.3 says..."), gate(1, trace.Refuse, true)), Fail, 1},
		{"evidence", tr("t", "r", toolCall("search_kb", "{}", `[{"id":"D1","score":2}]`), answer("Yes [D1]")), Skip, 0},
		{"weak but no threshold", tr("t", "r", weak, answer("Yes")), Skip, 0},
		{"no retrieval", tr("t", "r", answer("Hello")), Skip, 0},
	})
	runAssertionCases(t, RefusalWithoutEvidence(kb, 0.5, nil), []assertionCase{
		{"below the threshold", tr("t", "r", weak, answer("Yes")), Fail, 1},
	})
	runAssertionCases(t, RefusalWithoutEvidence(kb, 0, map[string]float64{"r": 0.5}, "Sorry, no."), []assertionCase{
		{"route threshold", tr("t", "r", weak, answer("Yes")), Fail, 1},
		{"own refusal text", tr("t", "r", weak, answer("Sorry, no.")), Pass, 0},
	})
}

func TestFromRuleAndFromEvaluate(t *testing.T) {
	// The agent proposed a tool it was not given; the guard blocked it.
	blocked := tr("t", "r", toolCall("query_order", `{"order_id":"A1"}`, "{}"), blockedTool("cancel_order", `{"order_id":"A1"}`), answer("Done."))
	blocked.Tools = []trace.ToolSpec{{Name: "query_order"}}
	loop := tr("t", "r", toolCall("track", `{"n":1}`, "x"), toolCall("track", `{"n":1}`, "x"))

	allow, _ := guard.New(guard.Config{}).Rule(rules.AllowList)
	outcome := FromRule("allow", allow)
	if got := outcome.Check(blocked).status(); got != Pass {
		t.Errorf("FromRule judges outcomes: status = %s, want pass (the call was blocked)", got)
	}
	attempts := FromEvaluate("guard", guard.New(guard.Config{}).Evaluate)
	if o := attempts.Check(blocked); o.status() != Fail || o.Finding.Rule != rules.AllowList || o.Finding.Step != 1 {
		t.Errorf("FromEvaluate judges attempts: %+v, want a tool-allow-list failure on step 1", o)
	}
	loop2, _ := guard.New(guard.Config{Gates: guard.Gates{LoopLimit: 2}}).Rule(rules.Loop)
	loop3, _ := guard.New(guard.Config{Gates: guard.Gates{LoopLimit: 3}}).Rule(rules.Loop)
	if o := FromRule("loop", loop2).Check(loop); o.status() != Fail || o.Finding.Step != 1 {
		t.Errorf("loop: %+v, want a failure on step 1", o)
	}
	if o := FromRule("loop", loop3).Check(loop); o.status() != Pass {
		t.Errorf("loop of 3: %+v, want a pass", o)
	}
}

func TestDefaults(t *testing.T) {
	all := Defaults(AssertionConfig{})
	var names []string
	for _, a := range all {
		names = append(names, a.Name())
	}
	if want := DefaultNames(); len(names) != len(want) {
		t.Fatalf("Defaults = %v, want %v", names, want)
	}
	some := Defaults(AssertionConfig{Disable: []string{NameJSONAnswer, NameAllowedTools}})
	if len(some) != 3 || some[0].Name() != NameNonNegativeAmounts {
		t.Errorf("Defaults with two disabled = %d assertions, first %q", len(some), some[0].Name())
	}
	withRules := Defaults(AssertionConfig{GuardRules: GuardRuleNames()})
	if len(withRules) != 5+len(GuardRuleNames()) {
		t.Fatalf("Defaults with guard rules = %d assertions", len(withRules))
	}
	// The grounding rule, unlike citations-retrieved, catches a clause
	// number no document holds.
	invented := tr("t", "r", retrieval("KB-WAR-01"), answer("Per section 4.2 of the warranty, accidental damage is covered. [KB-WAR-01]"))
	for _, a := range withRules {
		want := Pass
		switch a.Name() {
		case NameJSONAnswer, NameNonNegativeAmounts, NameAllowedTools, NameRefusalWithoutEvidence:
			want = Skip
		case rules.Grounding:
			want = Fail
		}
		if got := a.Check(invented).status(); got != want {
			t.Errorf("%s on an invented section: %s, want %s", a.Name(), got, want)
		}
	}
}

// TestAssertionsOnGuardedRuns records real runs through the guard, in
// enforcing and in shadow mode, and checks what reached the user: enforcing,
// the similarity gate refuses before the model can invent an answer; in
// shadow mode the invented answer goes out and the assertion catches it.
func TestAssertionsOnGuardedRuns(t *testing.T) {
	search := guardtest.NewTool("search_kb", "Search the knowledge base.", func(context.Context, string) (string, error) {
		return "[]", nil
	})
	for _, tt := range []struct {
		shadow bool
		want   AssertionStatus
	}{{false, Pass}, {true, Fail}} {
		g := guard.New(guard.Config{Shadow: tt.shadow, Tools: map[string]guard.ToolPolicy{"search_kb": {Retrieval: true}}})
		model := guardtest.Script(
			guardtest.ToolCall("search_kb", `{"query":"VIP compensation"}`),
			guardtest.Text("According to clause 7.3 you get ¥50 per day."),
		)
		ctx, rec := g.StartTrace(context.Background(), "s", "after-sales")
		if _, err := g.Run(ctx, model, []tools.Tool{search}, []llms.MessageContent{llms.TextParts(llms.ChatMessageTypeHuman, "Is there VIP compensation?")}); err != nil {
			t.Fatal(err)
		}
		a := RefusalWithoutEvidence(map[string]guard.ToolPolicy{"search_kb": {Retrieval: true}}, 0, nil)
		if got := a.Check(rec.Trace()).status(); got != tt.want {
			t.Errorf("shadow=%v: %s = %s, want %s", tt.shadow, a.Name(), got, tt.want)
		}
	}
}
