package policy_test

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/agentguard/agentguard/guard"
	"github.com/agentguard/agentguard/guard/policy"
	"github.com/agentguard/agentguard/guard/rules"
	"github.com/agentguard/agentguard/trace"
)

// checkPolicy loads a policy whose only rules are its checks, so that
// what a test sees is what the checks decide.
func checkPolicy(t testing.TB, yaml string) *policy.Policy {
	t.Helper()
	p, err := policy.Read("test.yaml", []byte(yaml))
	if err != nil {
		t.Fatal(err)
	}
	return p
}

// checksOnly returns a guard running only p's checks.
func checksOnly(p *policy.Policy) *guard.Guard {
	cfg := p.Config()
	cfg.Disable = append(cfg.Disable, rules.Builtin()...)
	return guard.New(cfg)
}

// fired returns "step:rule" for every finding that is not Allow.
// fired lists the findings of g on tr as "step:rule", a warning (a check
// that could not be established) as "step:rule?".
func fired(g *guard.Guard, tr *trace.Trace) []string {
	var out []string
	for _, f := range g.Evaluate(tr).Findings {
		mark := ""
		if f.Verdict == trace.Allow {
			mark = "?"
		}
		out = append(out, fmt.Sprintf("%d:%s%s", f.Step, f.Rule, mark))
	}
	return out
}

// numbered numbers steps in order.
func numbered(ss ...*trace.Step) []*trace.Step {
	for i, s := range ss {
		s.Index = i
	}
	return ss
}

func tool(name, args, result string) *trace.Step {
	return &trace.Step{Kind: trace.KindTool, Name: name, Args: args, Result: result}
}

const cancelPolicy = `
now: "2024-05-15T15:00:00"
tools:
  cancel_reservation:
    checks:
      - name: cancel-within-24h
        # booked less than 24 hours ago, or business, or insured
        require: >-
          cel.bind(r, last('get_reservation', args.reservation_id),
            now - time(r.created_at) < duration('24h') || r.cabin == 'business' || r.insurance == 'yes')
        message: too late to cancel
`

func TestCheckLast(t *testing.T) {
	g := checksOnly(checkPolicy(t, cancelPolicy))
	for _, tc := range []struct {
		name  string
		steps []*trace.Step
		want  []string
	}{
		{"booked an hour ago", numbered(
			tool("get_reservation", `{"reservation_id":"R1"}`, `{"created_at":"2024-05-15T14:00:00","cabin":"economy","insurance":"no"}`),
			tool("cancel_reservation", `{"reservation_id":"R1"}`, `ok`)), nil},
		{"booked two days ago", numbered(
			tool("get_reservation", `{"reservation_id":"R1"}`, `{"created_at":"2024-05-13T14:00:00","cabin":"economy","insurance":"no"}`),
			tool("cancel_reservation", `{"reservation_id":"R1"}`, `ok`)), []string{"1:cancel-within-24h"}},
		{"booked two days ago, insured", numbered(
			tool("get_reservation", `{"reservation_id":"R1"}`, `{"created_at":"2024-05-13T14:00:00","cabin":"economy","insurance":"yes"}`),
			tool("cancel_reservation", `{"reservation_id":"R1"}`, `ok`)), nil},
		{"another reservation's record does not count", numbered(
			tool("get_reservation", `{"reservation_id":"R2"}`, `{"created_at":"2024-05-15T14:00:00","cabin":"economy","insurance":"no"}`),
			tool("cancel_reservation", `{"reservation_id":"R1"}`, `ok`)), []string{"1:cancel-within-24h?"}}, // not established: a warning
		{"never looked up", numbered(
			tool("cancel_reservation", `{"reservation_id":"R1"}`, `ok`)), []string{"0:cancel-within-24h?"}},
		{"the latest record counts", numbered(
			tool("get_reservation", `{"reservation_id":"R1"}`, `{"created_at":"2024-05-13T14:00:00","cabin":"business","insurance":"no"}`),
			tool("get_reservation", `{"reservation_id":"R1"}`, `{"created_at":"2024-05-13T14:00:00","cabin":"economy","insurance":"no"}`),
			tool("cancel_reservation", `{"reservation_id":"R1"}`, `ok`)), []string{"2:cancel-within-24h"}},
		{"a failed lookup is no record", numbered(
			tool("get_reservation", `{"reservation_id":"R1"}`, `{"created_at":"2024-05-15T14:00:00","cabin":"economy","insurance":"no"}`),
			&trace.Step{Kind: trace.KindTool, Name: "get_reservation", Args: `{"reservation_id":"R1"}`, Error: "timeout"},
			tool("cancel_reservation", `{"reservation_id":"R1"}`, `ok`)), nil},
		{"a record fetched after the call does not count", numbered(
			tool("cancel_reservation", `{"reservation_id":"R1"}`, `ok`),
			tool("get_reservation", `{"reservation_id":"R1"}`, `{"created_at":"2024-05-15T14:00:00","cabin":"economy","insurance":"no"}`)), []string{"0:cancel-within-24h?"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got := fired(g, &trace.Trace{ID: "t", Steps: tc.steps})
			if !slices.Equal(got, tc.want) {
				t.Errorf("fired %v, want %v", got, tc.want)
			}
		})
	}
}

func TestCheckFindingFields(t *testing.T) {
	p := checkPolicy(t, `
tools:
  refund:
    checks:
      - name: refund-known-order
        require: size(calls('get_order', args.order_id)) > 0
        message: refund only an order that was looked up
        verdict: clarify
        severity: critical
        dimension: coherence
        tags: [refund, lookup]
      - name: refund-record
        require: last('get_order', args.order_id).status == 'delivered'
`)
	tr := &trace.Trace{ID: "t", Steps: numbered(tool("refund", `{"order_id":"#1"}`, ""))}
	fs := checksOnly(p).Evaluate(tr).Findings
	if len(fs) != 2 {
		t.Fatalf("findings %+v, want two", fs)
	}
	want := trace.Finding{Rule: "refund-known-order", Step: 0, Verdict: trace.Clarify, Severity: trace.SeverityCritical, Dimension: trace.Coherence,
		Message: "refund only an order that was looked up", Evidence: `{"order_id":"#1"}`, Tags: []string{"refund", "lookup"}}
	if got := fs[0]; got.Rule != want.Rule || got.Verdict != want.Verdict || got.Severity != want.Severity || got.Dimension != want.Dimension ||
		got.Message != want.Message || got.Evidence != want.Evidence || !slices.Equal(got.Tags, want.Tags) {
		t.Errorf("finding\n\t%+v\nwant\n\t%+v", got, want)
	}
	// Defaults: block, error, accuracy, tag "policy"; an expression that
	// cannot be evaluated says why, and is a warning: what the agent did
	// not establish is no proof the policy was broken.
	got := fs[1]
	if got.Verdict != trace.Allow || got.Severity != trace.SeverityWarning || got.Dimension != trace.Accuracy || !slices.Equal(got.Tags, []string{"policy", "not-established"}) ||
		got.Message != `policy check refund-record failed (not established: no get_order result for "#1" earlier in the trace)` {
		t.Errorf("default finding %+v", got)
	}
}

// TestTruncatedRecord: a result the recorder cut short is no record. A
// check that reads it is not established (a warning naming the cut), and
// never reads the cut text as if it were the record.
func TestTruncatedRecord(t *testing.T) {
	p := checkPolicy(t, `
tools:
  refund:
    checks:
      - name: refund-delivered
        require: last('get_order', args.order_id).status == 'delivered'
      - name: refund-once
        require: size(results('get_order', args.order_id)) < 5
`)
	cut := tool("get_order", `{"order_id":"#1"}`, `{"status":"pending","items":[{"name":"lamp","pri`+trace.TruncationMarker)
	cut.Truncated = true
	tr := &trace.Trace{ID: "t", Steps: numbered(cut, tool("refund", `{"order_id":"#1"}`, ""))}
	fs := checksOnly(p).Evaluate(tr).Findings
	if len(fs) != 2 {
		t.Fatalf("findings %+v, want two warnings", fs)
	}
	for _, f := range fs {
		if f.Verdict != trace.Allow || !slices.Contains(f.Tags, "not-established") || !strings.Contains(f.Message, "cut short") {
			t.Errorf("finding %+v: want a not-established warning saying the record was cut short", f)
		}
	}
}

func TestCheckFunctionsAndVariables(t *testing.T) {
	history := []*trace.Step{
		tool("get_order", `{"order_id":"#1"}`, `{"status":"delivered","items":[{"price":10},{"price":2.5}]}`),
		tool("exchange_items", `{"order_id":"#1","items":["a"]}`, `{"status":"exchange requested"}`),
		tool("exchange_items", `{"order_id":"#2","items":["b"]}`, `Error: order not found`),
		{Kind: trace.KindTool, Name: "exchange_items", Args: `{"order_id":"#1"}`, Blocked: true},
	}
	for _, tc := range []struct {
		name, expr string
		args       string
		want       bool // the check holds
		warning    bool // it fails as a warning: it cannot be evaluated
	}{
		{"calls by entity", `size(calls('exchange_items', args.order_id)) == 1`, `{"order_id":"#1"}`, true, false},
		{"blocked calls do not count", `size(calls('exchange_items', '#1')) == 1`, `{}`, true, false},
		{"calls of a tool", `size(calls('exchange_items')) == 2`, `{}`, true, false},
		{"calls' arguments", `calls('exchange_items', '#1')[0].items == ['a']`, `{}`, true, false},
		{"results by entity", `results('exchange_items', '#2')[0].startsWith('Error')`, `{}`, true, false},
		{"results of a tool", `results('get_order').all(r, r.status == 'delivered')`, `{}`, true, false},
		{"sum of mixed numbers", `sum(last('get_order', '#1').items.map(i, i.price)) == 12.5`, `{}`, true, false},
		{"sum of ints is an int", `sum([1, 2]) * 2 == 6`, `{}`, true, false},
		{"num of text", `num('3.5') == 3.5`, `{}`, true, false},
		{"integer arguments compare with ints", `args.n + 1 == 3`, `{"n":2}`, true, false},
		{"fractions compare with ints", `args.n > 2`, `{"n":2.5}`, true, false},
		{"numbers as entities", `size(calls('get_order', args.n)) == 0`, `{"n":7}`, true, false},
		{"tables", `tables.limits[args.tier] >= 3`, `{"tier":"gold"}`, true, false},
		{"tool", `tool == 'act'`, `{}`, true, false},
		{"user turns so far", `user.size() == 1 && user[0].contains('exchange')`, `{}`, true, false},
		{"time and duration", `time('2024-05-16') - time('2024-05-15T12:00:00') == duration('12h')`, `{}`, true, false},
		{"time with a zone", `time('2024-05-15T15:00:00-05:00') == time('2024-05-15T20:00:00Z')`, `{}`, true, false},
		{"now from the policy", `now == time('2024-05-15T15:00:00')`, `{}`, true, false},
		{"optional fields", `last('get_order', '#1').?refund.orValue('none') == 'none'`, `{}`, true, false},
		{"a missing key fails", `args.missing == 1`, `{}`, false, true},
		{"arguments that are no object are empty", `size(args) == 0`, `not json`, true, false},
		{"a non-boolean fails", `dyn(args.n)`, `{"n":1}`, false, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			p := checkPolicy(t, fmt.Sprintf("now: '2024-05-15T15:00:00'\ntables:\n  limits: {gold: 3, silver: 1}\nchecks:\n  - name: c\n    require: %q\n", tc.expr))
			tr := &trace.Trace{ID: "t", UserTurns: []string{"please exchange my order", "later turn"}}
			tr.Steps = append(tr.Steps, history...)
			act := tool("act", tc.args, "")
			tr.Steps = numbered(append(tr.Steps, act)...)
			got := fired(checksOnly(p), tr)
			var want []string
			if !tc.want {
				want = []string{fmt.Sprintf("%d:c", act.Index)}
				if tc.warning {
					want[0] += "?"
				}
			}
			// The history's own tool calls are judged too (checks with no
			// tool run on every call): keep only the last call's.
			got = slices.DeleteFunc(got, func(s string) bool { return !strings.HasPrefix(s, fmt.Sprint(act.Index)+":") })
			if !slices.Equal(got, want) {
				t.Errorf("fired %v, want %v", got, want)
			}
		})
	}
}

func TestCheckWhen(t *testing.T) {
	p := checkPolicy(t, `
tools:
  modify:
    checks:
      - name: modify-pending
        when: last('get_order', args.order_id).kind == 'physical'
        require: last('get_order', args.order_id).status == 'pending'
`)
	g := checksOnly(p)
	for _, tc := range []struct {
		name, record string
		want         []string
	}{
		{"in scope and holds", `{"kind":"physical","status":"pending"}`, nil},
		{"in scope and fails", `{"kind":"physical","status":"delivered"}`, []string{"1:modify-pending"}},
		{"out of scope", `{"kind":"digital","status":"delivered"}`, nil},
		{"scope unknown: not applied", `{"status":"delivered"}`, nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			tr := &trace.Trace{ID: "t", Steps: numbered(tool("get_order", `{"order_id":"1"}`, tc.record), tool("modify", `{"order_id":"1"}`, ""))}
			if got := fired(g, tr); !slices.Equal(got, tc.want) {
				t.Errorf("fired %v, want %v", got, tc.want)
			}
		})
	}
}

func TestCheckClock(t *testing.T) {
	const pol = `
checks:
  - name: office-hours
    require: now.getHours() >= 9 && now.getHours() < 17
`
	at := func(h int) *trace.Trace {
		return &trace.Trace{ID: "t", Steps: numbered(&trace.Step{Kind: trace.KindTool, Name: "act", Args: `{}`, Start: time.Date(2024, 5, 15, h, 0, 0, 0, time.UTC)})}
	}
	p := checkPolicy(t, pol)
	if got := fired(checksOnly(p), at(10)); got != nil {
		t.Errorf("at 10:00 (the step's time) fired %v", got)
	}
	if got := fired(checksOnly(p), at(20)); !slices.Equal(got, []string{"0:office-hours"}) {
		t.Errorf("at 20:00 fired %v", got)
	}
	// WithNow overrides the steps' times, as the evaluate command's -now does.
	q := p.WithNow(time.Date(2024, 5, 15, 12, 0, 0, 0, time.UTC))
	if got := fired(checksOnly(q), at(20)); got != nil {
		t.Errorf("with now at 12:00 fired %v", got)
	}
	// A trace with no times and no clock: the check cannot hold.
	noTime := &trace.Trace{ID: "t", Steps: numbered(tool("act", `{}`, ""))}
	fs := checksOnly(p).Evaluate(noTime).Findings
	if len(fs) != 1 || !strings.Contains(fs[0].Message, "records no time") {
		t.Errorf("without a clock: %+v", fs)
	}
}

// TestCheckOnline runs a check through a wrapped tool: the call is
// blocked before it runs, on the record an earlier call returned.
func TestCheckOnline(t *testing.T) {
	p := checkPolicy(t, `
tools:
  get_order: {effect: read}
  cancel_order:
    effect: write
    checks:
      - name: cancel-pending
        require: last('get_order', args.order_id).status == 'pending'
        message: only a pending order can be cancelled
`)
	cfg := p.Config()
	cfg.Disable = append(cfg.Disable, rules.Provenance, rules.Authorization, rules.Injection)
	g := guard.New(cfg)
	get := g.WrapTool(fixedTool{"get_order", `{"order_id":"7","status":"delivered"}`})
	cancel := g.WrapTool(fixedTool{"cancel_order", `cancelled`})
	ctx, rec := g.StartTrace(context.Background(), "s", "r")
	rec.UserTurn("cancel order 7")
	if _, err := get.Call(ctx, `{"order_id":"7"}`); err != nil {
		t.Fatal(err)
	}
	out, err := cancel.Call(ctx, `{"order_id":"7"}`)
	var intr *guard.Interrupt
	if err == nil && !strings.Contains(out, "only a pending order") {
		t.Fatalf("cancel ran: %q", out)
	}
	if err != nil && !errors.As(err, &intr) {
		t.Fatalf("cancel: %v", err)
	}
	var rules []string
	for _, s := range rec.Trace().Steps {
		if s.Kind == trace.KindGate && s.Finding != nil {
			rules = append(rules, s.Finding.Rule)
		}
	}
	if !slices.Contains(rules, "cancel-pending") {
		t.Errorf("gate findings %v, want cancel-pending", rules)
	}
}

type fixedTool struct{ name, out string }

func (f fixedTool) Name() string                                 { return f.name }
func (f fixedTool) Description() string                          { return f.name }
func (f fixedTool) Call(context.Context, string) (string, error) { return f.out, nil }

func ExamplePolicy() {
	p, err := policy.Read("orders.yaml", []byte(`
tools:
  cancel_order:
    effect: write
    checks:
      # "An order can only be cancelled if its status is 'pending'."
      - name: cancel-pending
        require: last('get_order_details', args.order_id).status == 'pending'
        message: only a pending order can be cancelled
`))
	if err != nil {
		fmt.Println(err)
		return
	}
	tr := &trace.Trace{ID: "t", Steps: []*trace.Step{
		{Index: 0, Kind: trace.KindTool, Name: "get_order_details", Args: `{"order_id":"#W1"}`, Result: `{"status":"delivered"}`},
		{Index: 1, Kind: trace.KindTool, Name: "cancel_order", Args: `{"order_id":"#W1"}`},
	}}
	for _, f := range guard.New(p.Config()).Evaluate(tr).Findings {
		if f.Rule == "cancel-pending" {
			fmt.Println(f.Step, f.Verdict, f.Message)
		}
	}

	_, err = policy.Read("orders.yaml", []byte("checks:\n  - name: c\n    require: order.status == 'pending'\n"))
	fmt.Println(err)
	// Output:
	// 1 block only a pending order can be cancelled
	// policy: orders.yaml:3:14: checks[0].require: undeclared reference to 'order'
}

// TestCheckLastOfSeveralTools reads a record that lookups and writes both
// return: the latest of them is the state of the entity.
func TestCheckLastOfSeveralTools(t *testing.T) {
	p := checkPolicy(t, `
tables:
  order_tools: [get_order, return_items, exchange_items]
tools:
  exchange_items:
    checks:
      - name: exchange-delivered
        require: last(tables.order_tools, args.order_id).status == 'delivered'
`)
	g := checksOnly(p)
	tr := &trace.Trace{ID: "t", Steps: numbered(
		tool("get_order", `{"order_id":"1"}`, `{"status":"delivered"}`),
		tool("return_items", `{"order_id":"1"}`, `{"status":"return requested"}`),
		tool("exchange_items", `{"order_id":"1"}`, ``),
	)}
	if got := fired(g, tr); !slices.Equal(got, []string{"2:exchange-delivered"}) {
		t.Errorf("fired %v, want the exchange after the return", got)
	}
	tr.Steps = numbered(tr.Steps[0], tr.Steps[2])
	if got := fired(g, tr); got != nil {
		t.Errorf("fired %v on an exchange of a delivered order", got)
	}
}

// TestChecksConcurrent runs one policy's checks in many sessions at once:
// each session's index is its own, the compiled checks are shared (run
// with -race).
func TestChecksConcurrent(t *testing.T) {
	p := checkPolicy(t, cancelPolicy)
	g := checksOnly(p)
	done := make(chan []string)
	for i := range 8 {
		go func() {
			created := "2024-05-15T14:00:00" // booked an hour before now
			if i%2 == 1 {
				created = "2024-05-10T14:00:00"
			}
			var got []string
			for range 50 {
				tr := &trace.Trace{ID: fmt.Sprint(i), Steps: numbered(
					tool("get_reservation", `{"reservation_id":"R"}`, `{"created_at":"`+created+`","cabin":"economy","insurance":"no"}`),
					tool("cancel_reservation", `{"reservation_id":"R"}`, `ok`))}
				got = append(got, fired(g, tr)...)
			}
			done <- got
		}()
	}
	total := 0
	for range 8 {
		total += len(<-done)
	}
	if total != 4*50 {
		t.Errorf("%d findings, want %d (one per late cancellation)", total, 4*50)
	}
}

func TestPolicySections(t *testing.T) {
	p := checkPolicy(t, `
weights: {accuracy: 40, coherence: 20, memory: 20, stability: 10, efficiency: 10}
assertions:
  disable: [allow-list]
  guard_rules: [grounding, loop]
  refusal_texts: [Sorry.]
checks:
  - {name: a, require: 'true'}
tools:
  t:
    checks:
      - {name: b, require: 'true'}
`)
	w := p.Weights()
	if len(w) != 5 || w[trace.Accuracy] != 40 || w[trace.Efficiency] != 10 {
		t.Errorf("weights %v", w)
	}
	w[trace.Accuracy] = 0 // the caller's copy
	if p.Weights()[trace.Accuracy] != 40 {
		t.Error("Weights shares its map")
	}
	a := p.Assertions()
	if !slices.Equal(a.Disable, []string{"allow-list"}) || !slices.Equal(a.GuardRules, []string{"grounding", "loop"}) || !slices.Equal(a.RefusalTexts, []string{"Sorry."}) {
		t.Errorf("assertions %+v", a)
	}
	if got := p.Checks(); !slices.Equal(got, []string{"a", "b"}) {
		t.Errorf("checks %v", got)
	}
	if got := p.Where("assertions.guard_rules[1]"); got != "test.yaml:5:28" {
		t.Errorf("Where = %q", got)
	}
	if got := p.Where("no.such.key"); got != "test.yaml" {
		t.Errorf("Where of a key the file lacks = %q", got)
	}
	if p.WithNow(time.Time{}) != p {
		t.Error("WithNow of the zero time copies the policy")
	}
	empty := checkPolicy(t, "{}")
	if empty.Weights() != nil || empty.Checks() != nil || len(empty.Config().Rules) != 0 {
		t.Errorf("an empty policy: weights %v, checks %v, rules %v", empty.Weights(), empty.Checks(), empty.Config().Rules)
	}
	if _, err := policy.Open("testdata/policy/no-such-file.yaml"); err == nil || !strings.Contains(err.Error(), "no-such-file.yaml") {
		t.Errorf("missing file: %v", err)
	}
}
