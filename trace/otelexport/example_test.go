package otelexport_test

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/agentguard/agentguard/guard"
	"github.com/agentguard/agentguard/guard/guardtest"
	"github.com/agentguard/agentguard/trace"
	"github.com/agentguard/agentguard/trace/otelexport"
	sdkmetric "go.opentelemetry.io/otel/sdk/metric"
	"go.opentelemetry.io/otel/sdk/metric/metricdata"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/sdk/trace/tracetest"
)

func ExampleExport() {
	// A recorded run, as the guard (guard.Run, or a wrapped model and
	// tools) records one for every request: Result.Trace or Recorder.Trace.
	start := time.Date(2025, 6, 1, 9, 30, 0, 0, time.UTC)
	run := &trace.Trace{ID: "run-1", SessionID: "session-9", Route: "refund", Start: start,
		UserTurns: []string{"Refund order 1042 and text me at +1 415 555 0100"},
		Steps: []*trace.Step{
			{Index: 0, Kind: trace.KindModel, Name: "gpt-4o", Start: start, Duration: 700 * time.Millisecond, TokensIn: 150, TokensOut: 40,
				Calls: []trace.Call{{ID: "call_1", Name: "refund", Args: `{"order":"1042"}`}, {ID: "call_2", Name: "send_sms", Args: `{"to":"+1 415 555 0100"}`}}},
			{Index: 1, Kind: trace.KindTool, Name: "refund", CallID: "call_1", Args: `{"order":"1042"}`, Result: "refunded",
				Start: start.Add(710 * time.Millisecond), Duration: 90 * time.Millisecond},
			{Index: 2, Kind: trace.KindTool, Name: "send_sms", CallID: "call_2", Blocked: true, Start: start.Add(800 * time.Millisecond)},
			{Index: 3, Kind: trace.KindGate, Name: "allow_list", Start: start.Add(800 * time.Millisecond), Finding: &trace.Finding{
				Rule: "allow_list", Step: 2, Verdict: trace.Block, Dimension: trace.Accuracy, Severity: trace.SeverityError,
				Message: `tool "send_sms" is not allowed`}},
			{Index: 4, Kind: trace.KindModel, Name: "gpt-4o", Result: "Your refund is done.", Start: start.Add(810 * time.Millisecond),
				Duration: 400 * time.Millisecond, TokensIn: 210, TokensOut: 8},
		},
	}

	// Any TracerProvider: here the SDK's, with an in-memory exporter; in
	// production, one with an OTLP exporter pointed at your collector.
	// The gate decisions go to a LoggerProvider as log events: here the
	// SDK's, with an exporter that keeps them.
	exp := tracetest.NewInMemoryExporter()
	tp := sdktrace.NewTracerProvider(sdktrace.WithSyncer(exp))
	defer tp.Shutdown(context.Background())
	lp, logs := newLogs()

	if err := otelexport.Export(context.Background(), tp, run, otelexport.Options{AgentName: "support", Logs: lp}); err != nil {
		fmt.Println(err)
		return
	}
	spans := exp.GetSpans()
	for _, s := range spans { // in the order they ended
		fmt.Printf("%-22s %v\n", s.Name, s.EndTime.Sub(s.StartTime))
	}
	for _, r := range logs.records() {
		judged := spans[slices.IndexFunc(spans, func(s tracetest.SpanStub) bool { return s.SpanContext.SpanID() == r.SpanID() })]
		fmt.Printf("log event %s %s, on %s\n", r.EventName(), r.Severity(), judged.Name)
	}
	// Output:
	// chat gpt-4o            700ms
	// execute_tool refund    90ms
	// execute_tool send_sms  0s
	// chat gpt-4o            400ms
	// invoke_agent support   1.21s
	// log event gen_ai.evaluation.result ERROR, on execute_tool send_sms
}

func ExampleExporter_ExportAll() {
	// Ship a trace file, such as one written by trace.Writer, to the collector.
	file := `{"v":1,"trace_id":"a","steps":[{"i":0,"kind":"model","name":"gpt-4o","turn":-1,"result":"Hi"}]}
{"v":1,"trace_id":"b","steps":[{"i":0,"kind":"tool","name":"search","turn":-1,"result":"none"}]}
`
	exp := tracetest.NewInMemoryExporter()
	tp := sdktrace.NewTracerProvider(sdktrace.WithSyncer(exp))
	defer tp.Shutdown(context.Background())

	e := otelexport.NewExporter(tp, otelexport.Options{})
	n, err := e.ExportAll(context.Background(), trace.NewReader(strings.NewReader(file)).All())
	fmt.Println(n, err)
	for _, s := range exp.GetSpans() {
		fmt.Println(s.Name)
	}
	// Output:
	// 2 <nil>
	// chat gpt-4o
	// invoke_agent
	// execute_tool search
	// invoke_agent
}

func ExampleNewMetrics() {
	reader := sdkmetric.NewManualReader()
	mp := sdkmetric.NewMeterProvider(sdkmetric.WithReader(reader))
	m, _ := otelexport.NewMetrics(mp, otelexport.MetricsOptions{})
	g := guard.New(guard.Config{Observe: guard.Observation{Metrics: m}})
	tool := g.WrapTool(guardtest.NewTool("query_order", "Look up an order", nil))
	ctx, _ := g.StartTrace(context.Background(), "s", "")
	for range 3 { // the third identical call is blocked by the loop rule
		tool.Call(ctx, `{"order_id":"A1"}`)
	}
	var rm metricdata.ResourceMetrics
	reader.Collect(context.Background(), &rm)
	for _, sm := range rm.ScopeMetrics {
		for _, mt := range sm.Metrics {
			if s, ok := mt.Data.(metricdata.Sum[int64]); ok && mt.Name == otelexport.MetricFindings {
				for _, p := range s.DataPoints {
					rule, _ := p.Attributes.Value(otelexport.AttrRule)
					fmt.Println(mt.Name, mt.Unit, rule.AsString(), p.Value)
				}
			}
		}
	}
	// Output:
	// agentguard.findings {finding} loop 1
}
