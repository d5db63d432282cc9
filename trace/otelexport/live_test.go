package otelexport_test

import (
	"context"
	"net"
	"net/http"
	"net/http/httptest"
	"slices"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/agentguard/agentguard/guard"
	"github.com/agentguard/agentguard/guard/guardtest"
	"github.com/agentguard/agentguard/trace/otelexport"
	"github.com/tmc/langchaingo/llms/openai"
	"github.com/tmc/langchaingo/tools"
	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/log"
	sdkmetric "go.opentelemetry.io/otel/sdk/metric"
	"go.opentelemetry.io/otel/sdk/metric/metricdata"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/sdk/trace/tracetest"
	semconv "go.opentelemetry.io/otel/semconv/v1.39.0"
	"go.opentelemetry.io/otel/semconv/v1.39.0/genaiconv"
	oteltrace "go.opentelemetry.io/otel/trace"
)

// httpSpans is an instrumented HTTP transport, as otelhttp is: a client
// span per request, a child of the span in the request's context.
type httpSpans struct {
	tracer oteltrace.Tracer
	base   http.RoundTripper
}

func (h httpSpans) RoundTrip(r *http.Request) (*http.Response, error) {
	ctx, sp := h.tracer.Start(r.Context(), "POST", oteltrace.WithSpanKind(oteltrace.SpanKindClient))
	defer sp.End()
	return h.base.RoundTrip(r.WithContext(ctx))
}

// TestLive runs a guarded conversation turn through langchaingo's real
// openai client against a loopback server, with Live as the step observer:
// the spans exist as the calls run (the HTTP client's span nests under the
// chat span), the blocked call's gate decision is a log event parented to
// its span, and the GenAI client metrics carry the conventions' names.
func TestLive(t *testing.T) {
	var calls atomic.Int32
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		if calls.Add(1) == 1 {
			w.Write([]byte(`{"id":"chatcmpl-1","object":"chat.completion","model":"gpt-4o-2024-08-06","choices":[{"index":0,"message":{"role":"assistant","content":"","tool_calls":[` +
				`{"id":"call_1","type":"function","function":{"name":"lookup_order","arguments":"{\"order\":\"A1001\"}"}},` +
				`{"id":"call_2","type":"function","function":{"name":"send_sms","arguments":"{\"to\":\"+1 415 555 0100\"}"}}]},"finish_reason":"tool_calls"}],"usage":{"prompt_tokens":40,"completion_tokens":12,"total_tokens":52}}`))
			return
		}
		w.Write([]byte(`{"id":"chatcmpl-2","object":"chat.completion","model":"gpt-4o-2024-08-06","choices":[{"index":0,"message":{"role":"assistant","content":"订单 A1001 已发货。"},"finish_reason":"stop"}],"usage":{"prompt_tokens":70,"completion_tokens":9,"total_tokens":79}}`))
	}))
	defer srv.Close()

	spans := tracetest.NewInMemoryExporter()
	tp := sdktrace.NewTracerProvider(sdktrace.WithSyncer(spans))
	defer tp.Shutdown(context.Background())
	reader := sdkmetric.NewManualReader()
	mp := sdkmetric.NewMeterProvider(sdkmetric.WithReader(reader))
	lp, logs := newLogs()
	live, err := otelexport.NewLive(tp, mp, otelexport.Options{AgentName: "support", Logs: lp})
	if err != nil {
		t.Fatal(err)
	}

	client := &http.Client{Transport: guard.Transport(httpSpans{tp.Tracer("http"), http.DefaultTransport})}
	llm, err := openai.New(openai.WithBaseURL(srv.URL+"/v1"), openai.WithToken("test"), openai.WithModel("gpt-4o"), openai.WithHTTPClient(client))
	if err != nil {
		t.Fatal(err)
	}
	lookup := guardtest.NewTool("lookup_order", "Look an order up", func(context.Context, string) (string, error) {
		return `{"order":"A1001","status":"shipped"}`, nil
	})
	g := guard.New(guard.Config{Observe: guard.Observation{Steps: live}})
	ctx, end := live.StartAgent(context.Background())
	ctx, rec := g.StartTrace(ctx, "session-7", "orders")
	if _, err := g.Run(ctx, g.WrapModel(llm), []tools.Tool{lookup}, human("订单 A1001 到哪了？发短信到 +1 415 555 0100 告诉我")); err != nil {
		t.Fatal(err)
	}
	end(rec.Trace())

	got := spans.GetSpans()
	byName := map[string]tracetest.SpanStub{}
	for _, s := range got {
		byName[s.Name] = s
	}
	agent, ok := byName["invoke_agent support"]
	if !ok {
		t.Fatalf("no invoke_agent span in %v", names(got))
	}
	for _, name := range []string{"chat gpt-4o", "execute_tool lookup_order", "execute_tool send_sms"} {
		s, ok := byName[name]
		switch {
		case !ok:
			t.Fatalf("no span %q in %v", name, names(got))
		case s.Parent.SpanID() != agent.SpanContext.SpanID():
			t.Errorf("%s is not a child of the agent span", name)
		}
	}
	// The HTTP spans are children of the chat spans: they ran in their context.
	var chats, nested int
	for _, s := range got {
		if s.Name == "chat gpt-4o" {
			chats++
			if slices.ContainsFunc(got, func(h tracetest.SpanStub) bool {
				return h.Name == "POST" && h.Parent.SpanID() == s.SpanContext.SpanID()
			}) {
				nested++
			}
			a := attribute.NewSet(s.Attributes...)
			host, port, _ := net.SplitHostPort(srv.Listener.Addr().String())
			n, _ := strconv.Atoi(port)
			for _, want := range []attribute.KeyValue{semconv.GenAIProviderNameOpenAI, semconv.GenAIResponseModel("gpt-4o-2024-08-06"),
				semconv.ServerAddress(host), semconv.ServerPort(n)} {
				if v, ok := a.Value(want.Key); !ok || v != want.Value {
					t.Errorf("chat span %s = %v, want %v", want.Key, v.Emit(), want.Value.Emit())
				}
			}
		}
	}
	if chats != 2 || nested != 2 {
		t.Errorf("%d chat spans, %d with the HTTP span nested; want 2 and 2", chats, nested)
	}
	a := attribute.NewSet(agent.Attributes...)
	for _, want := range []attribute.KeyValue{semconv.GenAIOperationNameInvokeAgent, semconv.GenAIProviderNameOpenAI,
		semconv.GenAIRequestModel("gpt-4o"), semconv.GenAIConversationID("session-7"), semconv.GenAIAgentName("support")} {
		if v, ok := a.Value(want.Key); !ok || v != want.Value {
			t.Errorf("agent span %s = %v, want %v", want.Key, v.Emit(), want.Value.Emit())
		}
	}

	// The allow-list's decision about send_sms, as a log event on its span.
	sms := byName["execute_tool send_sms"]
	var found bool
	for _, r := range logs.records() {
		if r.EventName() != otelexport.EventEvaluation || r.SpanID() != sms.SpanContext.SpanID() {
			continue
		}
		found = true
		kv := map[string]string{}
		r.WalkAttributes(func(a attribute.KeyValue) bool { kv[string(a.Key)] = a.Value.Emit(); return true })
		if kv["gen_ai.evaluation.name"] != "tool-allow-list" || kv["gen_ai.evaluation.score.label"] != "block" ||
			kv["agentguard.trace_id"] != rec.ID() || kv["gen_ai.conversation.id"] != "session-7" || r.Severity() != log.SeverityError {
			t.Errorf("evaluation event %v, severity %v", kv, r.Severity())
		}
	}
	if !found {
		t.Errorf("no evaluation log event on the send_sms span; logs: %d", len(logs.records()))
	}

	var rm metricdata.ResourceMetrics
	if err := reader.Collect(context.Background(), &rm); err != nil {
		t.Fatal(err)
	}
	counts := map[string]uint64{}
	tokens := map[string]int64{}
	for _, sm := range rm.ScopeMetrics {
		for _, m := range sm.Metrics {
			switch m.Name {
			case genaiconv.ClientOperationDuration{}.Name():
				for _, dp := range m.Data.(metricdata.Histogram[float64]).DataPoints {
					op, _ := dp.Attributes.Value(semconv.GenAIOperationNameKey)
					counts[op.AsString()] += dp.Count
				}
			case genaiconv.ClientTokenUsage{}.Name():
				for _, dp := range m.Data.(metricdata.Histogram[int64]).DataPoints {
					typ, _ := dp.Attributes.Value(semconv.GenAITokenTypeKey)
					tokens[typ.AsString()] += dp.Sum
				}
			}
		}
	}
	// Two model calls and the one tool call that ran; the blocked call made none.
	if counts["chat"] != 2 || counts["execute_tool"] != 1 {
		t.Errorf("operation durations by operation = %v, want chat 2, execute_tool 1", counts)
	}
	if tokens["input"] != 110 || tokens["output"] != 21 {
		t.Errorf("token usage = %v, want input 110, output 21", tokens)
	}

	// Every name emitted is the conventions' (their generated constants)
	// or agentguard's own.
	conventions := map[attribute.Key]bool{}
	for _, k := range []attribute.Key{semconv.GenAIOperationNameKey, semconv.GenAIProviderNameKey, semconv.GenAIRequestModelKey,
		semconv.GenAIResponseModelKey, semconv.GenAIResponseIDKey, semconv.GenAIResponseFinishReasonsKey, semconv.GenAIUsageInputTokensKey,
		semconv.GenAIUsageOutputTokensKey, semconv.GenAIToolNameKey, semconv.GenAIToolCallIDKey, semconv.GenAIToolTypeKey,
		semconv.GenAIToolDescriptionKey, semconv.GenAIToolDefinitionsKey, semconv.GenAIAgentNameKey, semconv.GenAIConversationIDKey,
		semconv.GenAIEvaluationNameKey, semconv.GenAIEvaluationScoreLabelKey, semconv.GenAIEvaluationScoreValueKey,
		semconv.GenAIEvaluationExplanationKey, semconv.GenAITokenTypeKey, semconv.ServerAddressKey, semconv.ServerPortKey, semconv.ErrorTypeKey} {
		conventions[k] = true
	}
	check := func(where string, k attribute.Key) {
		if !conventions[k] && !strings.HasPrefix(string(k), "agentguard.") {
			t.Errorf("%s: attribute %q is neither the conventions' nor agentguard's", where, k)
		}
	}
	for _, s := range got {
		if s.Name == "POST" {
			continue // the test's own HTTP span
		}
		set := attribute.NewSet(s.Attributes...)
		if op, _ := set.Value(semconv.GenAIOperationNameKey); !strings.HasPrefix(s.Name, op.AsString()) {
			t.Errorf("span %q does not start with its gen_ai.operation.name %q", s.Name, op.AsString())
		}
		for _, kv := range s.Attributes {
			check(s.Name, kv.Key)
		}
	}
	for _, r := range logs.records() {
		if r.EventName() != otelexport.EventEvaluation {
			t.Errorf("log event %q, want %q", r.EventName(), otelexport.EventEvaluation)
		}
		r.WalkAttributes(func(a attribute.KeyValue) bool { check(r.EventName(), a.Key); return true })
	}
	for _, sm := range rm.ScopeMetrics {
		for _, m := range sm.Metrics {
			if m.Name != (genaiconv.ClientOperationDuration{}).Name() && m.Name != (genaiconv.ClientTokenUsage{}).Name() {
				t.Errorf("metric %q is not a GenAI client metric", m.Name)
			}
		}
	}
}
