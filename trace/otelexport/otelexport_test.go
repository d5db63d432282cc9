package otelexport_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/agentguard/agentguard/trace"
	"github.com/agentguard/agentguard/trace/otelexport"
	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/codes"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/sdk/trace/tracetest"
	oteltrace "go.opentelemetry.io/otel/trace"
)

var t0 = time.Date(2025, 6, 1, 9, 30, 0, 0, time.UTC)

func at(ms int) time.Time { return t0.Add(time.Duration(ms) * time.Millisecond) }

const (
	email = "ann@example.com"
	phone = "+1 415 555 0100"
)

// support is a recorded run that has every kind of step: a model turn
// calling a tool, a retrieval, a memory injection, a blocked call, a
// failing call, a shadow finding, and a finding about the whole run.
func support() *trace.Trace {
	steps := []*trace.Step{
		{Kind: trace.KindModel, Name: "gpt-4o", Start: at(10), Duration: 800 * time.Millisecond, TokensIn: 120, TokensOut: 30, Cost: 0.0009,
			ResponseModel: "gpt-4o-2024-08-06", ResponseID: "chatcmpl-BfT3x1v9", FinishReason: "tool_calls",
			Calls: []trace.Call{{ID: "call_1", Name: "lookup_user", Args: `{"email":"` + email + `"}`}}},
		{Kind: trace.KindTool, Name: "lookup_user", CallID: "call_1", Args: `{"email":"` + email + `"}`, Result: `{"phone":"` + phone + `"}`,
			Start: at(820), Duration: 40 * time.Millisecond},
		{Kind: trace.KindRetrieval, Name: "kb", Args: "refund policy", DocIDs: []string{"d1", "d2"}, Scores: []float64{0.9, 0.7},
			Start: at(870), Duration: 15 * time.Millisecond},
		{Kind: trace.KindMemory, Name: "inject", Result: "no SMS to " + phone, Start: at(890)},
		{Kind: trace.KindModel, Name: "gpt-4o", Start: at(900), Duration: 500 * time.Millisecond, TokensIn: 300, TokensOut: 20,
			Calls: []trace.Call{{ID: "call_2", Name: "send_sms", Args: `{"to":"` + phone + `"}`}}},
		{Kind: trace.KindTool, Name: "send_sms", CallID: "call_2", Args: `{"to":"` + phone + `"}`, Blocked: true,
			Result: "[agentguard] call blocked by rule card_prohibition", Start: at(1410)},
		{Kind: trace.KindGate, Name: "card_prohibition", Start: at(1410), Finding: &trace.Finding{
			Rule: "card_prohibition", Step: 5, Verdict: trace.Block, Dimension: trace.Memory, Severity: trace.SeverityError,
			Message: "the user asked for no SMS to " + phone, Evidence: `{"to":"` + phone + `"}`, Tags: []string{"prohibition"}}},
		{Kind: trace.KindTool, Name: "refund", CallID: "call_3", Args: `{"order":"1042"}`,
			Error: "refund failed: timeout for " + email + "\ngoroutine 1 [running]:\nmain.main()", Start: at(1420), Duration: 2 * time.Second},
		{Kind: trace.KindGate, Name: "tool_error", Start: at(1420), Finding: &trace.Finding{
			Rule: "tool_error", Step: 7, Verdict: trace.Allow, Dimension: trace.Stability, Severity: trace.SeverityCritical, Message: "refund failed"}},
		{Kind: trace.KindModel, Name: "gpt-4o", Result: "Your refund is on its way, " + email + ".", Start: at(3430), Duration: 400 * time.Millisecond,
			TokensIn: 400, TokensOut: 15, Refusal: false, Citations: []string{"d1"}},
		{Kind: trace.KindGate, Name: "grounding", Start: at(3430), Finding: &trace.Finding{
			Rule: "grounding", Step: 9, Verdict: trace.Retry, Dimension: trace.Accuracy, Severity: trace.SeverityWarning,
			Message: "answer not grounded", Question: "Which order?", Shadow: true}},
		{Kind: trace.KindGate, Name: "iterations", Start: at(3900), Finding: &trace.Finding{
			Rule: "iterations", Step: -1, Verdict: trace.Handoff, Dimension: trace.Efficiency, Severity: trace.SeverityError, Message: "too many turns"}},
	}
	for i, s := range steps {
		s.Index = i
	}
	return &trace.Trace{
		ID: "run-1", SessionID: "session-9", Route: "refund", Start: t0,
		UserTurns: []string{"My email is " + email + ", refund order 1042 please"},
		Tools: []trace.ToolSpec{
			{Name: "lookup_user", Description: "Find a customer by e-mail"},
			{Name: "send_sms"}, {Name: "refund"},
		},
		Steps: steps,
	}
}

// export exports tr through the SDK into in-memory exporters and returns
// the spans in the order they ended, each with the log events parented to
// it among its events (see withLogEvents), unless opts has a logger
// provider of its own. A log event parented to no span fails the test.
func export(t *testing.T, ctx context.Context, tr *trace.Trace, opts otelexport.Options) tracetest.SpanStubs {
	t.Helper()
	exp := tracetest.NewInMemoryExporter()
	tp := sdktrace.NewTracerProvider(sdktrace.WithSyncer(exp))
	defer tp.Shutdown(context.Background())
	lp, sink := newLogs()
	if opts.Logs == nil {
		opts.Logs = lp
	}
	if err := otelexport.Export(ctx, tp, tr, opts); err != nil {
		t.Fatalf("Export: %v", err)
	}
	spans, orphans := withLogEvents(exp.GetSpans(), sink.records())
	if len(orphans) > 0 {
		t.Fatalf("%d log events parented to no exported span: %v", len(orphans), orphans)
	}
	return spans
}

func attrs(kvs []attribute.KeyValue) map[attribute.Key]attribute.Value {
	m := make(map[attribute.Key]attribute.Value, len(kvs))
	for _, kv := range kvs {
		m[kv.Key] = kv.Value
	}
	return m
}

func names(spans tracetest.SpanStubs) []string {
	out := make([]string, len(spans))
	for i, s := range spans {
		out[i] = s.Name
	}
	return out
}

func TestExportStructure(t *testing.T) {
	spans := export(t, context.Background(), support(), otelexport.Options{AgentName: "support"})
	got := names(spans)
	want := []string{
		"chat gpt-4o", "execute_tool lookup_user", "retrieval kb", "chat gpt-4o",
		"execute_tool send_sms", "execute_tool refund", "chat gpt-4o", "invoke_agent support",
	}
	if !slices.Equal(got, want) {
		t.Fatalf("span names = %q, want %q", got, want)
	}
	agent := spans[len(spans)-1]
	if agent.Parent.IsValid() {
		t.Errorf("agent span has parent %v, want a root", agent.Parent.SpanID())
	}
	wantKinds := []oteltrace.SpanKind{
		oteltrace.SpanKindClient, oteltrace.SpanKindInternal, oteltrace.SpanKindClient, oteltrace.SpanKindClient,
		oteltrace.SpanKindInternal, oteltrace.SpanKindInternal, oteltrace.SpanKindClient, oteltrace.SpanKindInternal,
	}
	for i, s := range spans {
		if s.SpanKind != wantKinds[i] {
			t.Errorf("%s: kind %v, want %v", s.Name, s.SpanKind, wantKinds[i])
		}
		if s.SpanContext.TraceID() != agent.SpanContext.TraceID() {
			t.Errorf("%s: trace id %v, want the agent's %v", s.Name, s.SpanContext.TraceID(), agent.SpanContext.TraceID())
		}
		if s.InstrumentationScope.Name != otelexport.InstrumentationName {
			t.Errorf("%s: scope %q, want %q", s.Name, s.InstrumentationScope.Name, otelexport.InstrumentationName)
		}
		if i < len(spans)-1 && s.Parent.SpanID() != agent.SpanContext.SpanID() {
			t.Errorf("%s: parent %v, want the agent span %v", s.Name, s.Parent.SpanID(), agent.SpanContext.SpanID())
		}
	}
}

func TestExportAttributes(t *testing.T) {
	spans := export(t, context.Background(), support(), otelexport.Options{AgentName: "support", Provider: "openai"})
	tests := []struct {
		span   int
		want   map[attribute.Key]attribute.Value
		absent []attribute.Key
	}{
		{span: 7, want: map[attribute.Key]attribute.Value{ // invoke_agent
			"gen_ai.operation.name":      attribute.StringValue("invoke_agent"),
			"gen_ai.agent.name":          attribute.StringValue("support"),
			"gen_ai.conversation.id":     attribute.StringValue("session-9"),
			"agentguard.trace_id":        attribute.StringValue("run-1"),
			"agentguard.route":           attribute.StringValue("refund"),
			"agentguard.tools":           attribute.StringSliceValue([]string{"lookup_user", "send_sms", "refund"}),
			"gen_ai.usage.input_tokens":  attribute.IntValue(820),
			"gen_ai.usage.output_tokens": attribute.IntValue(65),
			"agentguard.cost":            attribute.Float64Value(0.0009),
			"agentguard.findings":        attribute.IntValue(4),
			"agentguard.verdict":         attribute.StringValue("handoff"), // handoff, which ends the run, outranks block
		}, absent: []attribute.Key{"gen_ai.input.messages"}},
		{span: 0, want: map[attribute.Key]attribute.Value{ // chat
			"gen_ai.operation.name":          attribute.StringValue("chat"),
			"gen_ai.provider.name":           attribute.StringValue("openai"),
			"gen_ai.request.model":           attribute.StringValue("gpt-4o"),
			"gen_ai.response.model":          attribute.StringValue("gpt-4o-2024-08-06"),
			"gen_ai.response.id":             attribute.StringValue("chatcmpl-BfT3x1v9"),
			"gen_ai.response.finish_reasons": attribute.StringSliceValue([]string{"tool_calls"}),
			"gen_ai.usage.input_tokens":      attribute.IntValue(120),
			"gen_ai.usage.output_tokens":     attribute.IntValue(30),
			"agentguard.cost":                attribute.Float64Value(0.0009),
			"agentguard.step":                attribute.IntValue(0),
			"agentguard.tool_calls":          attribute.StringSliceValue([]string{"lookup_user"}),
		}, absent: []attribute.Key{"gen_ai.output.messages", "error.type"}},
		{span: 1, want: map[attribute.Key]attribute.Value{ // execute_tool lookup_user
			"gen_ai.operation.name":   attribute.StringValue("execute_tool"),
			"gen_ai.tool.name":        attribute.StringValue("lookup_user"),
			"gen_ai.tool.call.id":     attribute.StringValue("call_1"),
			"gen_ai.tool.type":        attribute.StringValue("function"),
			"gen_ai.tool.description": attribute.StringValue("Find a customer by e-mail"),
			"agentguard.blocked":      attribute.BoolValue(false),
			"agentguard.step":         attribute.IntValue(1),
		}, absent: []attribute.Key{"gen_ai.tool.call.arguments", "gen_ai.tool.call.result"}},
		{span: 2, want: map[attribute.Key]attribute.Value{ // retrieval kb
			"gen_ai.operation.name":      attribute.StringValue("retrieval"),
			"gen_ai.data_source.id":      attribute.StringValue("kb"),
			"gen_ai.retrieval.documents": attribute.StringValue(`[{"id":"d1","score":0.9},{"id":"d2","score":0.7}]`),
		}, absent: []attribute.Key{"gen_ai.retrieval.query.text"}},
		{span: 4, want: map[attribute.Key]attribute.Value{ // execute_tool send_sms
			"gen_ai.tool.call.id": attribute.StringValue("call_2"),
			"agentguard.blocked":  attribute.BoolValue(true),
		}},
		{span: 5, want: map[attribute.Key]attribute.Value{ // execute_tool refund
			"error.type": attribute.StringValue("_OTHER"),
		}},
		{span: 6, want: map[attribute.Key]attribute.Value{ // the answer
			"agentguard.citations": attribute.StringSliceValue([]string{"d1"}),
		}, absent: []attribute.Key{"agentguard.tool_calls", "agentguard.refusal"}},
	}
	for _, tt := range tests {
		s := spans[tt.span]
		t.Run(s.Name, func(t *testing.T) {
			got := attrs(s.Attributes)
			for k, want := range tt.want {
				if g, ok := got[k]; !ok || g != want {
					t.Errorf("%s = %v, want %v", k, g.Emit(), want.Emit())
				}
			}
			for _, k := range tt.absent {
				if g, ok := got[k]; ok {
					t.Errorf("%s = %v, want it absent", k, g.Emit())
				}
			}
		})
	}
}

func TestExportStatus(t *testing.T) {
	spans := export(t, context.Background(), support(), otelexport.Options{})
	for _, s := range spans {
		want := sdktrace.Status{Code: codes.Unset}
		if s.Name == "execute_tool refund" {
			// First line only (no stack), redacted.
			want = sdktrace.Status{Code: codes.Error, Description: "refund failed: timeout for [email]"}
		}
		if s.Status != want {
			t.Errorf("%s: status %+v, want %+v", s.Name, s.Status, want)
		}
	}
}

func TestExportEvents(t *testing.T) {
	spans := export(t, context.Background(), support(), otelexport.Options{})
	type event struct {
		span, name string
		attrs      map[attribute.Key]attribute.Value
	}
	var got []event
	for _, s := range spans {
		for _, e := range s.Events {
			got = append(got, event{s.Name, e.Name, attrs(e.Attributes)})
		}
	}
	want := []event{
		{"execute_tool send_sms", "gen_ai.evaluation.result", map[attribute.Key]attribute.Value{
			"gen_ai.evaluation.name":        attribute.StringValue("card_prohibition"),
			"gen_ai.evaluation.score.value": attribute.Float64Value(0),
			"agentguard.trace_id":           attribute.StringValue("run-1"),
			"gen_ai.conversation.id":        attribute.StringValue("session-9"),
			"gen_ai.evaluation.score.label": attribute.StringValue("block"),
			"gen_ai.evaluation.explanation": attribute.StringValue("the user asked for no SMS to [phone]"),
			"agentguard.step":               attribute.IntValue(5),
			"agentguard.dimension":          attribute.StringValue("memory"),
			"agentguard.severity":           attribute.StringValue("error"),
			"agentguard.shadow":             attribute.BoolValue(false),
			"agentguard.tags":               attribute.StringSliceValue([]string{"prohibition"}),
		}},
		{"execute_tool refund", "gen_ai.evaluation.result", map[attribute.Key]attribute.Value{
			"gen_ai.evaluation.name":        attribute.StringValue("tool_error"),
			"gen_ai.evaluation.score.value": attribute.Float64Value(1),
			"agentguard.trace_id":           attribute.StringValue("run-1"),
			"gen_ai.conversation.id":        attribute.StringValue("session-9"),
			"gen_ai.evaluation.score.label": attribute.StringValue("allow"),
			"gen_ai.evaluation.explanation": attribute.StringValue("refund failed"),
			"agentguard.step":               attribute.IntValue(7),
			"agentguard.dimension":          attribute.StringValue("stability"),
			"agentguard.severity":           attribute.StringValue("critical"),
			"agentguard.shadow":             attribute.BoolValue(false),
		}},
		{"chat gpt-4o", "gen_ai.evaluation.result", map[attribute.Key]attribute.Value{
			"gen_ai.evaluation.name":        attribute.StringValue("grounding"),
			"gen_ai.evaluation.score.value": attribute.Float64Value(1),
			"agentguard.trace_id":           attribute.StringValue("run-1"),
			"gen_ai.conversation.id":        attribute.StringValue("session-9"),
			"gen_ai.evaluation.score.label": attribute.StringValue("retry"),
			"gen_ai.evaluation.explanation": attribute.StringValue("answer not grounded"),
			"agentguard.step":               attribute.IntValue(9),
			"agentguard.dimension":          attribute.StringValue("accuracy"),
			"agentguard.severity":           attribute.StringValue("warning"),
			"agentguard.shadow":             attribute.BoolValue(true),
		}},
		{"invoke_agent", "agentguard.memory", map[attribute.Key]attribute.Value{
			"agentguard.step":      attribute.IntValue(3),
			"agentguard.step.kind": attribute.StringValue("memory"),
			"agentguard.step.name": attribute.StringValue("inject"),
		}},
		{"invoke_agent", "gen_ai.evaluation.result", map[attribute.Key]attribute.Value{
			"gen_ai.evaluation.name":        attribute.StringValue("iterations"),
			"gen_ai.evaluation.score.value": attribute.Float64Value(0),
			"agentguard.trace_id":           attribute.StringValue("run-1"),
			"gen_ai.conversation.id":        attribute.StringValue("session-9"),
			"gen_ai.evaluation.score.label": attribute.StringValue("handoff"),
			"gen_ai.evaluation.explanation": attribute.StringValue("too many turns"),
			"agentguard.step":               attribute.IntValue(-1),
			"agentguard.dimension":          attribute.StringValue("efficiency"),
			"agentguard.severity":           attribute.StringValue("error"),
			"agentguard.shadow":             attribute.BoolValue(false),
		}},
	}
	if len(got) != len(want) {
		t.Fatalf("got %d events, want %d: %+v", len(got), len(want), got)
	}
	for i := range want {
		g, w := got[i], want[i]
		if g.span != w.span || g.name != w.name {
			t.Errorf("event %d: %s on %q, want %s on %q", i, g.name, g.span, w.name, w.span)
		}
		if fmt.Sprint(g.attrs) != fmt.Sprint(w.attrs) {
			t.Errorf("event %d (%s) attributes:\n got %v\nwant %v", i, w.name, g.attrs, w.attrs)
		}
	}
}

func TestExportTimestamps(t *testing.T) {
	tr := support()
	spans := export(t, context.Background(), tr, otelexport.Options{})
	byStep := map[int64]tracetest.SpanStub{}
	var agent tracetest.SpanStub
	for _, s := range spans {
		if v, ok := attrs(s.Attributes)["agentguard.step"]; ok {
			byStep[v.AsInt64()] = s
		} else {
			agent = s
		}
	}
	for _, step := range tr.Steps {
		s, ok := byStep[int64(step.Index)]
		if !ok {
			continue
		}
		if !s.StartTime.Equal(step.Start) || !s.EndTime.Equal(step.Start.Add(step.Duration)) {
			t.Errorf("%s (step %d): %v..%v, want %v..%v", s.Name, step.Index, s.StartTime, s.EndTime, step.Start, step.Start.Add(step.Duration))
		}
		for _, e := range s.Events {
			if !e.Time.Equal(s.EndTime) {
				t.Errorf("%s: event %s at %v, want the span's end %v", s.Name, e.Name, e.Time, s.EndTime)
			}
		}
	}
	if !agent.StartTime.Equal(t0) || !agent.EndTime.Equal(at(3900)) {
		t.Errorf("agent span %v..%v, want %v..%v", agent.StartTime, agent.EndTime, t0, at(3900))
	}
	wantEvents := []time.Time{at(890), at(3900)}
	for i, e := range agent.Events {
		if !e.Time.Equal(wantEvents[i]) {
			t.Errorf("agent event %s at %v, want %v", e.Name, e.Time, wantEvents[i])
		}
	}
}

func TestExportUntimed(t *testing.T) {
	// An imported chat log has no times: spans follow one another from the
	// first timed thing there is, or from now.
	tests := []struct {
		name  string
		start time.Time
	}{
		{"trace start", t0},
		{"no time at all", time.Time{}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			tr := &trace.Trace{ID: "x", Start: tt.start, Steps: []*trace.Step{
				{Index: 0, Kind: trace.KindModel, Calls: []trace.Call{{ID: "c", Name: "f"}}},
				{Index: 1, Kind: trace.KindTool, Name: "f", CallID: "c", Duration: time.Second},
				{Index: 2, Kind: trace.KindModel, Result: "done"},
			}}
			before := time.Now()
			spans := export(t, context.Background(), tr, otelexport.Options{Model: "llama3"})
			if got, want := names(spans), []string{"chat llama3", "execute_tool f", "chat llama3", "invoke_agent"}; !slices.Equal(got, want) {
				t.Fatalf("names = %q, want %q", got, want)
			}
			agent := spans[3]
			if !tt.start.IsZero() && !agent.StartTime.Equal(tt.start) {
				t.Errorf("agent starts %v, want %v", agent.StartTime, tt.start)
			}
			if tt.start.IsZero() && agent.StartTime.Before(before) {
				t.Errorf("agent starts %v, before the export began at %v", agent.StartTime, before)
			}
			if got := spans[1].EndTime.Sub(spans[1].StartTime); got != time.Second {
				t.Errorf("tool span lasts %v, want 1s", got)
			}
			if !spans[2].StartTime.Equal(spans[1].EndTime) {
				t.Errorf("second chat starts %v, want the tool's end %v", spans[2].StartTime, spans[1].EndTime)
			}
			if !agent.EndTime.Equal(spans[2].EndTime) {
				t.Errorf("agent ends %v, want %v", agent.EndTime, spans[2].EndTime)
			}
			a := attrs(spans[0].Attributes)
			if _, ok := a["gen_ai.response.model"]; ok {
				t.Errorf("response model set from Options.Model; it should come from the step only")
			}
			if got := a["gen_ai.request.model"].AsString(); got != "llama3" {
				t.Errorf("request model %q, want the Options.Model fallback", got)
			}
		})
	}
}

// values returns every attribute value of spans and their events, as text.
func values(spans tracetest.SpanStubs) string {
	var b strings.Builder
	for _, s := range spans {
		fmt.Fprintln(&b, s.Status.Description)
		for _, kv := range s.Attributes {
			fmt.Fprintln(&b, kv.Value.Emit())
		}
		for _, e := range s.Events {
			for _, kv := range e.Attributes {
				fmt.Fprintln(&b, kv.Value.Emit())
			}
		}
	}
	return b.String()
}

func TestExportRedactsEverything(t *testing.T) {
	for _, content := range []bool{false, true} {
		t.Run(fmt.Sprintf("RecordContent=%v", content), func(t *testing.T) {
			all := values(export(t, context.Background(), support(), otelexport.Options{RecordContent: content}))
			for _, secret := range []string{email, phone, "415 555"} {
				if strings.Contains(all, secret) {
					t.Errorf("exported attributes contain %q:\n%s", secret, all)
				}
			}
			if !strings.Contains(all, "no SMS to [phone]") {
				t.Errorf("the finding's explanation was not recorded redacted:\n%s", all)
			}
			if got := strings.Contains(all, `{"email":"[email]"}`); got != content {
				t.Errorf("redacted arguments present = %v, want %v", got, content)
			}
		})
	}
}

func TestExportContent(t *testing.T) {
	spans := export(t, context.Background(), support(), otelexport.Options{RecordContent: true})
	byName := func(name string, nth int) map[attribute.Key]attribute.Value {
		for _, s := range spans {
			if s.Name == name {
				if nth == 0 {
					return attrs(s.Attributes)
				}
				nth--
			}
		}
		t.Fatalf("no span %q", name)
		return nil
	}
	tests := []struct {
		name string
		got  attribute.Value
		want string
	}{
		{"user turns", byName("invoke_agent", 0)["gen_ai.input.messages"],
			`[{"role":"user","parts":[{"type":"text","content":"My email is [email], refund order 1042 please"}]}]`},
		{"tool call", byName("chat gpt-4o", 0)["gen_ai.output.messages"],
			`[{"role":"assistant","parts":[{"type":"tool_call","id":"call_1","name":"lookup_user","arguments":{"email":"[email]"}}],"finish_reason":"tool_call"}]`},
		{"answer", byName("chat gpt-4o", 2)["gen_ai.output.messages"],
			`[{"role":"assistant","parts":[{"type":"text","content":"Your refund is on its way, [email]."}],"finish_reason":"stop"}]`},
		{"arguments", byName("execute_tool lookup_user", 0)["gen_ai.tool.call.arguments"], `{"email":"[email]"}`},
		{"result", byName("execute_tool lookup_user", 0)["gen_ai.tool.call.result"], `{"phone":"[phone]"}`},
		{"blocked result", byName("execute_tool send_sms", 0)["gen_ai.tool.call.result"], "[agentguard] call blocked by rule card_prohibition"},
		{"query", byName("retrieval kb", 0)["gen_ai.retrieval.query.text"], "refund policy"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := tt.got.AsString(); got != tt.want {
				t.Errorf("got  %s\nwant %s", got, tt.want)
			}
			if strings.HasPrefix(tt.want, "[{") && !json.Valid([]byte(tt.got.AsString())) {
				t.Errorf("not valid JSON: %s", tt.got.AsString())
			}
		})
	}
	var memory, block map[attribute.Key]attribute.Value
	for _, s := range spans {
		for _, e := range s.Events {
			switch {
			case e.Name == otelexport.EventMemory:
				memory = attrs(e.Attributes)
			case s.Name == "execute_tool send_sms":
				block = attrs(e.Attributes)
			}
		}
	}
	if got, want := memory["agentguard.step.result"].AsString(), "no SMS to [phone]"; got != want {
		t.Errorf("memory event content %q, want %q", got, want)
	}
	if got, want := block["agentguard.evidence"].AsString(), `{"to":"[phone]"}`; got != want {
		t.Errorf("evidence %q, want %q", got, want)
	}
}

func TestExportRedactAndCap(t *testing.T) {
	upper := func(s string) string { return strings.ToUpper(s) }
	tests := []struct {
		name string
		opts otelexport.Options
		want string
	}{
		{"default", otelexport.Options{RecordContent: true}, `{"email":"[email]"}`},
		{"own redactor", otelexport.Options{RecordContent: true, Redact: upper}, `{"EMAIL":"ANN@EXAMPLE.COM"}`},
		{"capped", otelexport.Options{RecordContent: true, MaxContent: 18}, `{"em` + trace.TruncationMarker},
		{"uncapped", otelexport.Options{RecordContent: true, MaxContent: -1, Redact: func(s string) string { return s + strings.Repeat(" ", 5000) }},
			`{"email":"` + email + `"}` + strings.Repeat(" ", 5000)},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			spans := export(t, context.Background(), support(), tt.opts)
			if got := attrs(spans[1].Attributes)["gen_ai.tool.call.arguments"].AsString(); got != tt.want {
				t.Errorf("arguments = %q, want %q", got, tt.want)
			}
		})
	}
	// The default cap.
	long := &trace.Trace{ID: "x", Steps: []*trace.Step{{Kind: trace.KindTool, Name: "t", Result: strings.Repeat("a", 10000)}}}
	spans := export(t, context.Background(), long, otelexport.Options{RecordContent: true})
	if got := len(attrs(spans[0].Attributes)["gen_ai.tool.call.result"].AsString()); got != otelexport.DefaultMaxContent {
		t.Errorf("result is %d bytes, want DefaultMaxContent = %d", got, otelexport.DefaultMaxContent)
	}
}

func TestExportParentFromContext(t *testing.T) {
	exp := tracetest.NewInMemoryExporter()
	tp := sdktrace.NewTracerProvider(sdktrace.WithSyncer(exp))
	defer tp.Shutdown(context.Background())
	ctx, handler := tp.Tracer("app").Start(context.Background(), "POST /chat")
	if err := otelexport.Export(ctx, tp, support(), otelexport.Options{}); err != nil {
		t.Fatal(err)
	}
	handler.End()
	spans := exp.GetSpans()
	agent := spans[len(spans)-2]
	if agent.Name != "invoke_agent" || agent.Parent.SpanID() != handler.SpanContext().SpanID() {
		t.Errorf("%s has parent %v, want the handler span %v", agent.Name, agent.Parent.SpanID(), handler.SpanContext().SpanID())
	}
}

func TestExportRejects(t *testing.T) {
	canceled, cancel := context.WithCancel(context.Background())
	cancel()
	tests := []struct {
		name string
		ctx  context.Context
		tr   *trace.Trace
		want error
	}{
		{"nil trace", context.Background(), nil, otelexport.ErrNilTrace},
		{"canceled", canceled, support(), context.Canceled},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			exp := tracetest.NewInMemoryExporter()
			tp := sdktrace.NewTracerProvider(sdktrace.WithSyncer(exp))
			defer tp.Shutdown(context.Background())
			if err := otelexport.Export(tt.ctx, tp, tt.tr, otelexport.Options{}); !errors.Is(err, tt.want) {
				t.Errorf("Export = %v, want %v", err, tt.want)
			}
			if n := len(exp.GetSpans()); n != 0 {
				t.Errorf("recorded %d spans, want none", n)
			}
		})
	}
}

func TestExportOddSteps(t *testing.T) {
	// Nil steps, findings about gates, memory steps or missing steps, and
	// unknown kinds: nothing is lost and nothing panics.
	tr := &trace.Trace{ID: "odd", Start: t0, Steps: []*trace.Step{
		nil,
		{Index: 1, Kind: trace.KindMemory, Name: "compress"},
		{Index: 2, Kind: trace.KindGate, Finding: &trace.Finding{Rule: "a", Step: 1, Verdict: trace.Block}},
		{Index: 3, Kind: trace.KindGate, Finding: &trace.Finding{Rule: "b", Step: 99, Verdict: trace.Retry}},
		{Index: 4, Kind: trace.KindGate}, // no finding
		{Index: 5, Kind: "plan", Name: "next"},
		{Index: 6, Kind: trace.KindRetrieval, DocIDs: []string{"x"}},
	}}
	spans := export(t, context.Background(), tr, otelexport.Options{})
	if got, want := names(spans), []string{"retrieval", "invoke_agent"}; !slices.Equal(got, want) {
		t.Fatalf("names = %q, want %q", got, want)
	}
	var events []string
	for _, e := range spans[1].Events {
		a := attrs(e.Attributes)
		events = append(events, e.Name+":"+a["gen_ai.evaluation.name"].AsString()+a["agentguard.step.kind"].AsString())
	}
	// Span events and log events are apart, so only the set is compared.
	slices.Sort(events)
	want := []string{"agentguard.memory:memory", "agentguard.step:plan", "gen_ai.evaluation.result:a", "gen_ai.evaluation.result:b"}
	if !slices.Equal(events, want) {
		t.Errorf("agent events = %q, want %q", events, want)
	}
	if got := attrs(spans[0].Attributes)["gen_ai.retrieval.documents"].AsString(); got != `[{"id":"x"}]` {
		t.Errorf("documents = %s", got)
	}
	if got := attrs(spans[1].Attributes)["agentguard.verdict"].AsString(); got != "block" {
		t.Errorf("verdict = %q, want block", got)
	}
}

func TestExportAll(t *testing.T) {
	var jsonl strings.Builder
	w := trace.NewWriter(&jsonl)
	for _, id := range []string{"a", "b"} {
		tr := support()
		tr.ID = id
		if err := w.Write(tr); err != nil {
			t.Fatal(err)
		}
		if id == "a" {
			jsonl.WriteString(`{"v":2,"trace_id":"bad","steps":[]}` + "\n")
		}
	}
	exp := tracetest.NewInMemoryExporter()
	tp := sdktrace.NewTracerProvider(sdktrace.WithSyncer(exp))
	defer tp.Shutdown(context.Background())
	r := trace.NewReader(strings.NewReader(jsonl.String()))
	n, err := otelexport.NewExporter(tp, otelexport.Options{}).ExportAll(context.Background(), r.All())
	if n != 2 {
		t.Errorf("exported %d traces, want 2", n)
	}
	var perr *trace.ParseError
	if !errors.As(err, &perr) || !errors.Is(err, trace.ErrVersion) {
		t.Errorf("err = %v, want the *trace.ParseError of line 2", err)
	}
	var ids []string
	for _, s := range exp.GetSpans() {
		if s.Name == "invoke_agent" {
			ids = append(ids, attrs(s.Attributes)["agentguard.trace_id"].AsString())
		}
	}
	if !slices.Equal(ids, []string{"a", "b"}) {
		t.Errorf("agent spans for %q, want a and b", ids)
	}

	canceled, cancel := context.WithCancel(context.Background())
	cancel()
	r = trace.NewReader(strings.NewReader(jsonl.String()))
	if n, err := otelexport.NewExporter(tp, otelexport.Options{}).ExportAll(canceled, r.All()); n != 0 || !errors.Is(err, context.Canceled) {
		t.Errorf("ExportAll(canceled) = %d, %v; want 0, context.Canceled", n, err)
	}
}

func TestExporterConcurrent(t *testing.T) {
	exp := tracetest.NewInMemoryExporter()
	tp := sdktrace.NewTracerProvider(sdktrace.WithSyncer(exp))
	defer tp.Shutdown(context.Background())
	e := otelexport.NewExporter(tp, otelexport.Options{RecordContent: true})
	done := make(chan error)
	for range 8 {
		go func() { done <- e.Export(context.Background(), support()) }()
	}
	for range 8 {
		if err := <-done; err != nil {
			t.Error(err)
		}
	}
	if got, want := len(exp.GetSpans()), 8*8; got != want {
		t.Errorf("%d spans, want %d", got, want)
	}
}

func TestExportGateAnswered(t *testing.T) {
	// A model step the guard answered itself, before calling the model,
	// after an intent classification with low confidence.
	tr := &trace.Trace{ID: "x", Start: t0, Steps: []*trace.Step{{
		Kind: trace.KindModel, Blocked: true, Refusal: true, Result: "Did you mean a refund or an exchange?",
		Intent: "refund", Confidence: 0.41, Alternatives: []string{"exchange", "order_status"},
	}}}
	spans := export(t, context.Background(), tr, otelexport.Options{})
	got := attrs(spans[0].Attributes)
	want := map[attribute.Key]attribute.Value{
		"agentguard.blocked":      attribute.BoolValue(true),
		"agentguard.refusal":      attribute.BoolValue(true),
		"agentguard.intent":       attribute.StringValue("refund"),
		"agentguard.confidence":   attribute.Float64Value(0.41),
		"agentguard.alternatives": attribute.StringSliceValue([]string{"exchange", "order_status"}),
	}
	for k, w := range want {
		if got[k] != w {
			t.Errorf("%s = %v, want %v", k, got[k].Emit(), w.Emit())
		}
	}
	if _, ok := got["gen_ai.usage.input_tokens"]; ok {
		t.Error("usage recorded for a step without tokens")
	}
}
