package otelexport_test

import (
	"bytes"
	"compress/gzip"
	"context"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"net/url"
	"slices"
	"sort"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/agentguard/agentguard/trace/otelexport"
	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/exporters/otlp/otlptrace/otlptracehttp"
	"go.opentelemetry.io/otel/sdk/resource"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	coltracepb "go.opentelemetry.io/proto/otlp/collector/trace/v1"
	commonpb "go.opentelemetry.io/proto/otlp/common/v1"
	tracepb "go.opentelemetry.io/proto/otlp/trace/v1"
	"google.golang.org/protobuf/proto"
)

// collector is an OTLP/HTTP trace receiver on loopback: it decodes each
// protobuf ExportTraceServiceRequest the way a collector does.
type collector struct {
	*httptest.Server
	mu       sync.Mutex
	requests []*coltracepb.ExportTraceServiceRequest
	problems []string
}

func newCollector(t *testing.T) *collector {
	c := &collector{}
	c.Server = httptest.NewServer(http.HandlerFunc(c.serve))
	t.Cleanup(c.Close)
	return c
}

func (c *collector) fail(w http.ResponseWriter, format string, args ...any) {
	c.mu.Lock()
	c.problems = append(c.problems, fmt.Sprintf(format, args...))
	c.mu.Unlock()
	http.Error(w, "bad request", http.StatusBadRequest)
}

func (c *collector) serve(w http.ResponseWriter, r *http.Request) {
	if r.Method != http.MethodPost || r.URL.Path != "/v1/traces" {
		c.fail(w, "%s %s, want POST /v1/traces", r.Method, r.URL.Path)
		return
	}
	if ct := r.Header.Get("Content-Type"); ct != "application/x-protobuf" {
		c.fail(w, "Content-Type %q", ct)
		return
	}
	var body io.Reader = r.Body
	if r.Header.Get("Content-Encoding") == "gzip" {
		zr, err := gzip.NewReader(r.Body)
		if err != nil {
			c.fail(w, "gzip: %v", err)
			return
		}
		body = zr
	}
	raw, err := io.ReadAll(body)
	if err != nil {
		c.fail(w, "read: %v", err)
		return
	}
	req := &coltracepb.ExportTraceServiceRequest{}
	if err := proto.Unmarshal(raw, req); err != nil {
		c.fail(w, "decode: %v", err)
		return
	}
	c.mu.Lock()
	c.requests = append(c.requests, req)
	c.mu.Unlock()
	resp, _ := proto.Marshal(&coltracepb.ExportTraceServiceResponse{})
	w.Header().Set("Content-Type", "application/x-protobuf")
	w.Write(resp)
}

// received returns the scope spans that arrived, with their resource.
func (c *collector) received(t *testing.T) ([]*tracepb.ResourceSpans, int) {
	t.Helper()
	c.mu.Lock()
	defer c.mu.Unlock()
	for _, p := range c.problems {
		t.Errorf("collector: %s", p)
	}
	var rs []*tracepb.ResourceSpans
	for _, req := range c.requests {
		rs = append(rs, req.ResourceSpans...)
	}
	return rs, len(c.requests)
}

// anyString renders an OTLP value the way attribute.Value.Emit does.
func anyString(v *commonpb.AnyValue) string {
	switch v := v.GetValue().(type) {
	case *commonpb.AnyValue_StringValue:
		return v.StringValue
	case *commonpb.AnyValue_IntValue:
		return fmt.Sprint(v.IntValue)
	case *commonpb.AnyValue_DoubleValue:
		return fmt.Sprint(v.DoubleValue)
	case *commonpb.AnyValue_BoolValue:
		return fmt.Sprint(v.BoolValue)
	case *commonpb.AnyValue_ArrayValue:
		var parts []string
		for _, e := range v.ArrayValue.Values {
			parts = append(parts, anyString(e))
		}
		return "[" + strings.Join(parts, " ") + "]"
	}
	return fmt.Sprintf("%T", v)
}

func kvs(list []*commonpb.KeyValue) map[string]string {
	m := make(map[string]string, len(list))
	for _, kv := range list {
		m[kv.Key] = anyString(kv.Value)
	}
	return m
}

func TestWireOTLPHTTP(t *testing.T) {
	tests := []struct {
		name        string
		compression otlptracehttp.Compression
	}{
		{"plain", otlptracehttp.NoCompression},
		{"gzip", otlptracehttp.GzipCompression},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) { testWire(t, tt.compression) })
	}
}

func testWire(t *testing.T, compression otlptracehttp.Compression) {
	col := newCollector(t)
	u, _ := url.Parse(col.URL)
	ctx := context.Background()
	exp, err := otlptracehttp.New(ctx,
		otlptracehttp.WithEndpoint(u.Host),
		otlptracehttp.WithInsecure(),
		otlptracehttp.WithCompression(compression),
		otlptracehttp.WithRetry(otlptracehttp.RetryConfig{Enabled: false}),
		otlptracehttp.WithTimeout(10*time.Second))
	if err != nil {
		t.Fatal(err)
	}
	tp := sdktrace.NewTracerProvider(
		sdktrace.WithBatcher(exp),
		sdktrace.WithResource(resource.NewSchemaless(attribute.String("service.name", "support-agent"))))
	e := otelexport.NewExporter(tp, otelexport.Options{AgentName: "support", Provider: "openai", RecordContent: true, SpanEvents: true})
	if err := e.Export(ctx, support()); err != nil {
		t.Fatal(err)
	}
	if err := tp.Shutdown(ctx); err != nil { // flushes the batch to the collector
		t.Fatalf("shutdown: %v", err)
	}

	rs, requests := col.received(t)
	if requests == 0 || len(rs) == 0 {
		t.Fatalf("the collector received %d requests", requests)
	}
	if got := kvs(rs[0].Resource.Attributes)["service.name"]; got != "support-agent" {
		t.Errorf("service.name = %q", got)
	}
	var spans []*tracepb.Span
	for _, r := range rs {
		for _, ss := range r.ScopeSpans {
			if ss.Scope.Name != otelexport.InstrumentationName {
				t.Errorf("scope %q, want %q", ss.Scope.Name, otelexport.InstrumentationName)
			}
			if !strings.HasPrefix(ss.SchemaUrl, "https://opentelemetry.io/schemas/1.") {
				t.Errorf("schema URL %q", ss.SchemaUrl)
			}
			spans = append(spans, ss.Spans...)
		}
	}
	sort.SliceStable(spans, func(i, j int) bool { return spans[i].StartTimeUnixNano < spans[j].StartTimeUnixNano })
	var got []string
	for _, s := range spans {
		got = append(got, s.Name)
	}
	want := []string{"invoke_agent support", "chat gpt-4o", "execute_tool lookup_user", "retrieval kb", "chat gpt-4o",
		"execute_tool send_sms", "execute_tool refund", "chat gpt-4o"}
	if !slices.Equal(got, want) {
		t.Fatalf("spans on the wire = %q, want %q", got, want)
	}

	agent := spans[0]
	if len(agent.ParentSpanId) != 0 {
		t.Errorf("agent span has parent %x", agent.ParentSpanId)
	}
	for _, s := range spans[1:] {
		if !bytes.Equal(s.ParentSpanId, agent.SpanId) || !bytes.Equal(s.TraceId, agent.TraceId) {
			t.Errorf("%s: parent %x trace %x, want parent %x trace %x", s.Name, s.ParentSpanId, s.TraceId, agent.SpanId, agent.TraceId)
		}
	}

	tests := []struct {
		span  int
		kind  tracepb.Span_SpanKind
		start time.Time
		end   time.Time
		attrs map[string]string
	}{
		{0, tracepb.Span_SPAN_KIND_INTERNAL, t0, at(3900), map[string]string{
			"gen_ai.operation.name":     "invoke_agent",
			"gen_ai.conversation.id":    "session-9",
			"agentguard.trace_id":       "run-1",
			"agentguard.route":          "refund",
			"gen_ai.usage.input_tokens": "820",
			"gen_ai.input.messages":     `[{"role":"user","parts":[{"type":"text","content":"My email is [email], refund order 1042 please"}]}]`,
		}},
		{1, tracepb.Span_SPAN_KIND_CLIENT, at(10), at(810), map[string]string{
			"gen_ai.operation.name":      "chat",
			"gen_ai.provider.name":       "openai",
			"gen_ai.request.model":       "gpt-4o",
			"gen_ai.usage.input_tokens":  "120",
			"gen_ai.usage.output_tokens": "30",
			"agentguard.tool_calls":      "[lookup_user]",
		}},
		{2, tracepb.Span_SPAN_KIND_INTERNAL, at(820), at(860), map[string]string{
			"gen_ai.operation.name":      "execute_tool",
			"gen_ai.tool.name":           "lookup_user",
			"gen_ai.tool.call.id":        "call_1",
			"gen_ai.tool.type":           "function",
			"gen_ai.tool.call.arguments": `{"email":"[email]"}`,
			"agentguard.blocked":         "false",
		}},
		{3, tracepb.Span_SPAN_KIND_CLIENT, at(870), at(885), map[string]string{
			"gen_ai.operation.name": "retrieval",
			"gen_ai.data_source.id": "kb",
		}},
		{5, tracepb.Span_SPAN_KIND_INTERNAL, at(1410), at(1410), map[string]string{
			"gen_ai.tool.call.id": "call_2",
			"agentguard.blocked":  "true",
		}},
	}
	for _, tt := range tests {
		s := spans[tt.span]
		t.Run(s.Name, func(t *testing.T) {
			if s.Kind != tt.kind {
				t.Errorf("kind %v, want %v", s.Kind, tt.kind)
			}
			if s.StartTimeUnixNano != uint64(tt.start.UnixNano()) || s.EndTimeUnixNano != uint64(tt.end.UnixNano()) {
				t.Errorf("time %d..%d, want %d..%d", s.StartTimeUnixNano, s.EndTimeUnixNano, tt.start.UnixNano(), tt.end.UnixNano())
			}
			a := kvs(s.Attributes)
			for k, v := range tt.attrs {
				if a[k] != v {
					t.Errorf("%s = %q, want %q", k, a[k], v)
				}
			}
		})
	}

	// The blocked call carries the gate's decision; the failed call its error.
	blocked, failed := spans[5], spans[6]
	if len(blocked.Events) != 1 {
		t.Fatalf("%s has %d events, want 1", blocked.Name, len(blocked.Events))
	}
	ev := blocked.Events[0]
	wantEv := map[string]string{
		"gen_ai.evaluation.name":        "card_prohibition",
		"gen_ai.evaluation.score.label": "block",
		"gen_ai.evaluation.score.value": "0",
		"gen_ai.evaluation.explanation": "the user asked for no SMS to [phone]",
		"agentguard.dimension":          "memory",
		"agentguard.severity":           "error",
		"agentguard.shadow":             "false",
		"agentguard.evidence":           `{"to":"[phone]"}`,
		"agentguard.step":               "5",
		"agentguard.tags":               "[prohibition]",
	}
	if ev.Name != "gen_ai.evaluation.result" || ev.TimeUnixNano != uint64(at(1410).UnixNano()) {
		t.Errorf("event %s at %d", ev.Name, ev.TimeUnixNano)
	}
	if got := kvs(ev.Attributes); fmt.Sprint(got) != fmt.Sprint(wantEv) {
		t.Errorf("evaluation event:\n got %v\nwant %v", got, wantEv)
	}
	if failed.Status.GetCode() != tracepb.Status_STATUS_CODE_ERROR || failed.Status.GetMessage() != "refund failed: timeout for [email]" {
		t.Errorf("%s status %v %q", failed.Name, failed.Status.GetCode(), failed.Status.GetMessage())
	}
	var agentEvents []string
	for _, e := range agent.Events {
		agentEvents = append(agentEvents, e.Name)
	}
	if want := []string{"agentguard.memory", "gen_ai.evaluation.result"}; !slices.Equal(agentEvents, want) {
		t.Errorf("agent events %q, want %q", agentEvents, want)
	}
}
