package otelexport

import (
	"cmp"
	"context"
	"errors"
	"time"

	"github.com/agentguard/agentguard/trace"
	"go.opentelemetry.io/otel"
	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/metric"
	semconv "go.opentelemetry.io/otel/semconv/v1.39.0"
	"go.opentelemetry.io/otel/semconv/v1.39.0/genaiconv"
	oteltrace "go.opentelemetry.io/otel/trace"
)

// Live traces a guard's model, tool and retrieval calls while they run:
// set it as guard.Config.Observe.Steps (it implements guard.StepObserver).
// Each call gets its span as it starts, in the call's context, so that what
// the call traces itself (the HTTP client's spans, with otelhttp) nests
// under it; the span gets the attributes Export gives the same step once
// the step is recorded, and the gate decisions about it go out as
// gen_ai.evaluation.result log events parented to it. It records the GenAI
// client metrics as well:
//
//	gen_ai.client.operation.duration  histogram  s        chat and execute_tool calls; gen_ai.operation.name,
//	                                                      gen_ai.provider.name, gen_ai.request.model,
//	                                                      gen_ai.response.model, server.address, server.port, error.type
//	gen_ai.client.token.usage         histogram  {token}  chat calls; gen_ai.token.type "input" or "output", and the above
//
// The run's invoke_agent span is the caller's to open, with StartAgent, so
// that it covers the run however the agent loop is written. Live is safe for
// concurrent use.
type Live struct {
	exp      *Exporter
	duration genaiconv.ClientOperationDuration
	tokens   genaiconv.ClientTokenUsage
}

// NewLive returns a Live that creates spans on tp, metrics on mp and log
// events on opts.Logs, each nil meaning the global provider. Options are
// those of an export: content stays off unless opts.RecordContent.
func NewLive(tp oteltrace.TracerProvider, mp metric.MeterProvider, opts Options) (*Live, error) {
	if mp == nil {
		mp = otel.GetMeterProvider()
	}
	meter := mp.Meter(InstrumentationName, metric.WithSchemaURL(semconv.SchemaURL))
	l := &Live{exp: NewExporter(tp, opts)}
	var e1, e2 error
	l.duration, e1 = genaiconv.NewClientOperationDuration(meter,
		metric.WithExplicitBucketBoundaries(0.01, 0.02, 0.04, 0.08, 0.16, 0.32, 0.64, 1.28, 2.56, 5.12, 10.24, 20.48, 40.96, 81.92))
	l.tokens, e2 = genaiconv.NewClientTokenUsage(meter,
		metric.WithExplicitBucketBoundaries(1, 4, 16, 64, 256, 1024, 4096, 16384, 65536, 262144, 1048576, 4194304, 16777216, 67108864))
	if err := errors.Join(e1, e2); err != nil {
		return nil, errors.Join(errors.New("otelexport: live metrics"), err)
	}
	return l, nil
}

// StartAgent starts the invoke_agent span of one run and returns a context
// holding it: start the guard's trace and run the agent with that context,
// then call end with the run's trace, which gives the span the attributes
// Export gives it and ends it.
//
//	ctx, end := live.StartAgent(ctx)
//	ctx, rec := g.StartTrace(ctx, sessionID, "support")
//	res, err := g.Run(ctx, model, tools, msgs)
//	end(rec.Trace())
func (l *Live) StartAgent(ctx context.Context) (context.Context, func(*trace.Trace)) {
	ctx, sp := l.exp.tracer.Start(ctx, spanName(OpInvokeAgent, l.exp.opts.AgentName),
		oteltrace.WithSpanKind(oteltrace.SpanKindInternal),
		oteltrace.WithAttributes(semconv.GenAIOperationNameInvokeAgent))
	return ctx, func(t *trace.Trace) {
		if t != nil {
			sp.SetAttributes(l.exp.agentAttrs(t)...)
		}
		sp.End()
	}
}

// StepStarted starts the span of a model, tool or retrieval step; steps
// of other kinds get none.
func (l *Live) StepStarted(ctx context.Context, s *trace.Step) context.Context {
	if !spanKind(s.Kind) {
		return ctx
	}
	name, kind := l.exp.spanNameKind(s)
	ctx, _ = l.exp.tracer.Start(ctx, name, oteltrace.WithTimestamp(s.Start), oteltrace.WithSpanKind(kind))
	return ctx
}

// StepEnded completes and ends the span StepStarted put in ctx, emits the
// evaluation events of findings, and records the step's metrics.
// Findings about a step without a span (the run as a whole) are parented
// to the span in ctx, the agent's.
func (l *Live) StepEnded(ctx context.Context, s *trace.Step, findings []trace.Violation) {
	sp := oteltrace.SpanFromContext(ctx)
	if !spanKind(s.Kind) {
		for _, v := range findings {
			l.exp.judged(ctx, sp, v.Time, v, nil)
		}
		return
	}
	end := s.Start.Add(s.Duration)
	if s.Start.IsZero() {
		end = time.Now()
	}
	name, _, attrs := l.exp.stepSpan(nil, s)
	sp.SetName(name) // a fallback may have answered for the model asked
	sp.SetAttributes(attrs...)
	l.exp.markError(sp, s)
	for _, v := range findings {
		l.exp.judged(ctx, sp, cmp.Or(v.Time, end), v, s)
	}
	sp.End(oteltrace.WithTimestamp(end))
	l.measure(ctx, s)
}

// measure records the GenAI client metrics of a model or tool step.
func (l *Live) measure(ctx context.Context, s *trace.Step) {
	var op genaiconv.OperationNameAttr
	switch {
	case s.Kind == trace.KindModel && !s.Blocked:
		op = genaiconv.OperationNameChat
	case s.Kind == trace.KindTool && !s.Blocked:
		op = genaiconv.OperationNameExecuteTool
	default:
		return // no call was made
	}
	if !l.duration.Inst().Enabled(ctx) && !l.tokens.Inst().Enabled(ctx) {
		return
	}
	attrs := []attribute.KeyValue{semconv.GenAIOperationNameKey.String(string(op))}
	if op == genaiconv.OperationNameChat {
		if p := cmp.Or(s.Provider, l.exp.opts.Provider); p != "" {
			attrs = append(attrs, semconv.GenAIProviderNameKey.String(p))
		}
		if m := cmp.Or(s.Name, l.exp.opts.Model); m != "" {
			attrs = append(attrs, semconv.GenAIRequestModel(m))
		}
		if s.ResponseModel != "" {
			attrs = append(attrs, semconv.GenAIResponseModel(s.ResponseModel))
		}
		attrs = appendServer(attrs, s.Server)
	} else {
		attrs = append(attrs, semconv.GenAIToolName(s.Name))
	}
	if s.Error != "" {
		attrs = append(attrs, semconv.ErrorTypeOther)
	}
	l.duration.Inst().Record(ctx, s.Duration.Seconds(), metric.WithAttributes(attrs...))
	if op == genaiconv.OperationNameChat && s.Error == "" && (s.TokensIn > 0 || s.TokensOut > 0) {
		l.tokens.Inst().Record(ctx, int64(s.TokensIn), metric.WithAttributes(append(attrs, semconv.GenAITokenTypeInput)...))
		l.tokens.Inst().Record(ctx, int64(s.TokensOut), metric.WithAttributes(append(attrs, semconv.GenAITokenTypeOutput)...))
	}
}
