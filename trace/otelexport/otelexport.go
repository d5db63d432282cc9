package otelexport

import (
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"iter"
	"math"
	"net"
	"strconv"
	"strings"
	"time"

	"github.com/agentguard/agentguard/trace"
	"github.com/agentguard/agentguard/trace/redact"
	"go.opentelemetry.io/otel"
	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/codes"
	"go.opentelemetry.io/otel/log"
	logglobal "go.opentelemetry.io/otel/log/global"
	semconv "go.opentelemetry.io/otel/semconv/v1.39.0"
	oteltrace "go.opentelemetry.io/otel/trace"
)

// InstrumentationName is the name of the tracer that spans are created with.
const InstrumentationName = "github.com/agentguard/agentguard/trace/otelexport"

// DefaultMaxContent is the cap, in bytes, on each recorded text when
// Options.MaxContent is zero.
const DefaultMaxContent = 4 << 10

// ErrNilTrace is returned by Export for a nil trace.
var ErrNilTrace = errors.New("otelexport: nil trace")

// Operation names, the values of gen_ai.operation.name and the first word of
// span names.
const (
	OpInvokeAgent = "invoke_agent"
	OpChat        = "chat"
	OpExecuteTool = "execute_tool"
	OpRetrieval   = "retrieval"
)

// Event names.
const (
	// EventEvaluation is the span event recorded for each gate step.
	EventEvaluation = "gen_ai.evaluation.result"
	// EventMemory is the agent-span event recorded for each memory step.
	EventMemory = "agentguard.memory"
	// EventStep is the agent-span event recorded for a step of a kind this
	// package does not know.
	EventStep = "agentguard.step"
)

// Attribute keys of the GenAI conventions that the semconv package this
// module pins does not define yet.
const (
	AttrRetrievalDocuments attribute.Key = "gen_ai.retrieval.documents"
	AttrRetrievalQuery     attribute.Key = "gen_ai.retrieval.query.text"
)

// agentguard's own attribute keys, for what the GenAI conventions have no
// name for.
const (
	AttrTraceID      attribute.Key = "agentguard.trace_id"     // Trace.ID
	AttrRoute        attribute.Key = "agentguard.route"        // Trace.Route
	AttrTools        attribute.Key = "agentguard.tools"        // names of Trace.Tools, the allow-list
	AttrVerdict      attribute.Key = "agentguard.verdict"      // the strongest enforced verdict of the run
	AttrFindings     attribute.Key = "agentguard.findings"     // number of gate steps in the run
	AttrStep         attribute.Key = "agentguard.step"         // Step.Index, as Finding.Step and the ledger name it
	AttrTurn         attribute.Key = "agentguard.turn"         // Step.Turn
	AttrCost         attribute.Key = "agentguard.cost"         // Step.Cost, or the run's total
	AttrToolCalls    attribute.Key = "agentguard.tool_calls"   // names of the tool calls a model step proposed
	AttrRefusal      attribute.Key = "agentguard.refusal"      // Step.Refusal
	AttrIntent       attribute.Key = "agentguard.intent"       // Step.Intent
	AttrConfidence   attribute.Key = "agentguard.confidence"   // Step.Confidence
	AttrAlternatives attribute.Key = "agentguard.alternatives" // Step.Alternatives
	AttrCitations    attribute.Key = "agentguard.citations"    // Step.Citations
	AttrBlocked      attribute.Key = "agentguard.blocked"      // Step.Blocked
	AttrTruncated    attribute.Key = "agentguard.truncated"    // Step.Truncated
	AttrDimension    attribute.Key = "agentguard.dimension"    // Finding.Dimension
	AttrSeverity     attribute.Key = "agentguard.severity"     // Finding.Severity
	AttrShadow       attribute.Key = "agentguard.shadow"       // Finding.Shadow
	AttrTags         attribute.Key = "agentguard.tags"         // Finding.Tags
	AttrEvidence     attribute.Key = "agentguard.evidence"     // Finding.Evidence (content)
	AttrQuestion     attribute.Key = "agentguard.question"     // Finding.Question (content)
	AttrFacts        attribute.Key = "agentguard.facts"        // Finding.Facts as JSON (content)
	AttrStepKind     attribute.Key = "agentguard.step.kind"    // Step.Kind, on step events
	AttrStepName     attribute.Key = "agentguard.step.name"    // Step.Name, on step events
	AttrStepArgs     attribute.Key = "agentguard.step.args"    // Step.Args, on step events (content)
	AttrStepResult   attribute.Key = "agentguard.step.result"  // Step.Result, on step events (content)
	AttrStepError    attribute.Key = "agentguard.step.error"   // Step.Error, on step events
)

// Options configures an export. The zero value records no content, redacts
// with redact.String, and names neither agent, provider nor default model.
type Options struct {
	// AgentName is gen_ai.agent.name on the invoke_agent span, and the
	// second word of its name ("invoke_agent support"). Empty means neither.
	AgentName string
	// Provider is gen_ai.provider.name on chat spans of model steps that
	// do not name their own (Step.Provider, which a guard records from the
	// model it wraps), in the conventions' spelling: "openai",
	// "anthropic", "gcp.gemini", "aws.bedrock", or your own for others
	// ("ollama"). Empty leaves it out for them.
	Provider string
	// Model is gen_ai.request.model, and the second word of the span name,
	// for model steps whose Name is empty: steps of a trace recorded
	// without a model name. Empty leaves both out for them.
	Model string
	// RecordContent turns on the opt-in content attributes: the user turns,
	// model answers and proposed tool calls, tool arguments and results,
	// retrieval queries, memory step text, and the evidence and question of
	// findings. False, the default, records none of them; the spans still
	// carry names, ids, counts, token usage, verdicts and timings.
	RecordContent bool
	// Redact rewrites each text before it is recorded. It is applied to all
	// content when RecordContent is on, and always to the texts that are
	// recorded without it: finding messages (gen_ai.evaluation.explanation)
	// and the first line of step errors (the span status). Nil means redact.String,
	// the built-in redactor; func(s string) string { return s } records text
	// as it is. It must be safe for concurrent use if the Exporter is used
	// concurrently.
	Redact func(string) string
	// MaxContent caps each recorded text, in bytes, after Redact; a longer
	// text is cut at a rune boundary and ends in trace.TruncationMarker.
	// Zero means DefaultMaxContent; negative means no cap.
	MaxContent int
	// Logs receives the gate decisions, as gen_ai.evaluation.result log
	// events (the OpenTelemetry Logs API) parented to the span of the step
	// they judged. Nil means the global provider (go.opentelemetry.io/otel/
	// log/global), which records nothing until one is set.
	Logs log.LoggerProvider
	// SpanEvents records the gate decisions as span events as well, for
	// backends that read no log events: the conventions define them as
	// log-based events, and span events are being deprecated.
	SpanEvents bool
}

// Exporter turns recorded traces into spans on one tracer provider. It is
// safe for concurrent use; the zero value is not usable, use NewExporter.
type Exporter struct {
	tracer oteltrace.Tracer
	logger log.Logger
	opts   Options
}

// NewExporter returns an Exporter that creates spans with tp's tracer named
// InstrumentationName. A nil tp means otel.GetTracerProvider(), the global
// provider.
func NewExporter(tp oteltrace.TracerProvider, opts Options) *Exporter {
	if tp == nil {
		tp = otel.GetTracerProvider()
	}
	if opts.Redact == nil {
		opts.Redact = redact.String
	}
	if opts.MaxContent == 0 {
		opts.MaxContent = DefaultMaxContent
	}
	lp := opts.Logs
	if lp == nil {
		lp = logglobal.GetLoggerProvider()
	}
	return &Exporter{
		tracer: tp.Tracer(InstrumentationName, oteltrace.WithSchemaURL(semconv.SchemaURL)),
		logger: lp.Logger(InstrumentationName, log.WithSchemaURL(semconv.SchemaURL)),
		opts:   opts,
	}
}

// Export records t as spans on tp: see NewExporter and Exporter.Export.
func Export(ctx context.Context, tp oteltrace.TracerProvider, t *trace.Trace, opts Options) error {
	return NewExporter(tp, opts).Export(ctx, t)
}

// Export records t as one invoke_agent span with a child span per model,
// tool and retrieval step, gate steps as gen_ai.evaluation.result events on
// the span of the step they judged, and memory steps as events on the agent
// span (the package documentation lists every name and attribute). Spans
// carry the steps' recorded start times and durations; a step without a
// start time starts where the step before it ended, and a trace without any
// time starts now.
//
// The agent span is a child of the span in ctx, if any, so a run exported
// from inside a request handler nests under the handler's span. Export only
// creates and ends spans: sending them is the tracer provider's job, which
// usually batches them (flush or shut the provider down before exiting).
// Exporting the same trace twice records it twice.
//
// Export returns ErrNilTrace for a nil t and ctx's error when ctx is done;
// it records nothing then.
func (e *Exporter) Export(ctx context.Context, t *trace.Trace) error {
	if t == nil {
		return ErrNilTrace
	}
	if err := ctx.Err(); err != nil {
		return err
	}
	times, run := layout(t)
	// The gate steps that judged each span step, by the judged step's position.
	judged := make(map[int][]*trace.Finding)
	for _, s := range t.Steps {
		if s != nil && s.Kind == trace.KindGate && s.Finding != nil && hasSpan(t, s.Finding.Step) {
			judged[s.Finding.Step] = append(judged[s.Finding.Step], s.Finding)
		}
	}

	actx, agent := e.tracer.Start(ctx, spanName(OpInvokeAgent, e.opts.AgentName),
		oteltrace.WithTimestamp(run.start),
		oteltrace.WithSpanKind(oteltrace.SpanKindInternal),
		oteltrace.WithAttributes(e.agentAttrs(t)...))
	for i, s := range t.Steps {
		if s == nil {
			continue
		}
		w := times[i]
		switch s.Kind {
		case trace.KindModel, trace.KindTool, trace.KindRetrieval:
			name, kind, attrs := e.stepSpan(t, s)
			_, sp := e.tracer.Start(actx, name,
				oteltrace.WithTimestamp(w.start),
				oteltrace.WithSpanKind(kind),
				oteltrace.WithAttributes(attrs...))
			e.markError(sp, s)
			for _, f := range judged[i] {
				e.judged(oteltrace.ContextWithSpan(actx, sp), sp, w.end, trace.Violation{TraceID: t.ID, SessionID: t.SessionID, Finding: *f}, s)
			}
			sp.End(oteltrace.WithTimestamp(w.end))
		case trace.KindGate:
			if s.Finding != nil && !hasSpan(t, s.Finding.Step) {
				e.judged(actx, agent, w.start, trace.Violation{TraceID: t.ID, SessionID: t.SessionID, Finding: *s.Finding}, nil)
			}
		case trace.KindMemory:
			agent.AddEvent(EventMemory, oteltrace.WithTimestamp(w.start), oteltrace.WithAttributes(e.stepEvent(s)...))
		default:
			agent.AddEvent(EventStep, oteltrace.WithTimestamp(w.start), oteltrace.WithAttributes(e.stepEvent(s)...))
		}
	}
	agent.End(oteltrace.WithTimestamp(run.end))
	return nil
}

// ExportAll exports every trace of traces, such as the ones a trace.Reader
// or trace.ImportOpenAI yields, and returns how many it exported. A trace
// that comes with an error is skipped and the error kept; ExportAll goes on
// with the next one and returns the errors joined. It stops early, adding
// ctx's error, when ctx is done.
func (e *Exporter) ExportAll(ctx context.Context, traces iter.Seq2[*trace.Trace, error]) (int, error) {
	var errs []error
	n := 0
	for t, err := range traces {
		if err == nil {
			err = e.Export(ctx, t)
		}
		if cerr := ctx.Err(); cerr != nil {
			errs = append(errs, cerr)
			break
		}
		if err != nil {
			errs = append(errs, err)
			continue
		}
		n++
	}
	return n, errors.Join(errs...)
}

// window is when a step ran.
type window struct{ start, end time.Time }

// layout places every step in time: its own start and duration, or, without
// a start, right after the step before it; and returns the run's window,
// which covers the trace's start and every step.
func layout(t *trace.Trace) ([]window, window) {
	anchor := t.Start
	for _, s := range t.Steps {
		if !anchor.IsZero() {
			break
		}
		if s != nil {
			anchor = s.Start
		}
	}
	if anchor.IsZero() {
		anchor = time.Now()
	}
	times := make([]window, len(t.Steps))
	run := window{anchor, anchor}
	cursor := anchor
	for i, s := range t.Steps {
		if s == nil {
			times[i] = window{cursor, cursor}
			continue
		}
		start := s.Start
		if start.IsZero() {
			start = cursor
		}
		end := start.Add(max(s.Duration, 0))
		times[i] = window{start, end}
		if end.After(cursor) {
			cursor = end
		}
		if start.Before(run.start) {
			run.start = start
		}
		if end.After(run.end) {
			run.end = end
		}
	}
	return times, run
}

// markError gives the span of a step that failed the error status, with
// the error's first line, and error.type.
func (e *Exporter) markError(sp oteltrace.Span, s *trace.Step) {
	if s.Error != "" {
		sp.SetAttributes(semconv.ErrorTypeOther)
		sp.SetStatus(codes.Error, e.errorText(s.Error))
	}
}

// hasSpan reports whether step i of t becomes a span of its own.
func hasSpan(t *trace.Trace, i int) bool {
	if i < 0 || i >= len(t.Steps) || t.Steps[i] == nil {
		return false
	}
	return spanKind(t.Steps[i].Kind)
}

// spanKind reports whether steps of kind k get a span.
func spanKind(k trace.Kind) bool {
	return k == trace.KindModel || k == trace.KindTool || k == trace.KindRetrieval
}

func spanName(op, subject string) string {
	if subject == "" {
		return op
	}
	return op + " " + subject
}

func (e *Exporter) agentAttrs(t *trace.Trace) []attribute.KeyValue {
	attrs := []attribute.KeyValue{
		semconv.GenAIOperationNameInvokeAgent,
		AttrTraceID.String(t.ID),
	}
	if e.opts.AgentName != "" {
		attrs = append(attrs, semconv.GenAIAgentName(e.opts.AgentName))
	}
	if t.SessionID != "" {
		attrs = append(attrs, semconv.GenAIConversationID(t.SessionID))
	}
	if t.Route != "" {
		attrs = append(attrs, AttrRoute.String(t.Route))
	}
	if len(t.Tools) > 0 {
		attrs = append(attrs, AttrTools.StringSlice(t.ToolNames()))
		defs := make([]toolDefinition, len(t.Tools))
		for i, spec := range t.Tools {
			defs[i] = toolDefinition{Type: "function", Name: spec.Name, Description: spec.Description, Parameters: spec.Parameters}
		}
		attrs = append(attrs, semconv.GenAIToolDefinitionsKey.String(jsonString(defs)))
	}
	var in, out, findings int
	var cost float64
	verdict := trace.Allow
	provider, model := e.opts.Provider, e.opts.Model
	asked := false // the model the agent asked for first names them
	for _, s := range t.Steps {
		if s == nil {
			continue
		}
		if s.Kind == trace.KindModel && s.Error == "" && s.Name != "" && !asked {
			provider, model, asked = cmp.Or(s.Provider, provider), s.Name, true
		}
		in, out, cost = in+s.TokensIn, out+s.TokensOut, cost+s.Cost
		if s.Kind == trace.KindGate && s.Finding != nil {
			findings++
			if f := s.Finding; !f.Shadow && f.Verdict.Strength() > verdict.Strength() {
				verdict = f.Verdict
			}
		}
	}
	if provider != "" {
		attrs = append(attrs, semconv.GenAIProviderNameKey.String(provider))
	}
	if model != "" {
		attrs = append(attrs, semconv.GenAIRequestModel(model))
	}
	if in > 0 || out > 0 {
		attrs = append(attrs, semconv.GenAIUsageInputTokens(in), semconv.GenAIUsageOutputTokens(out))
	}
	if cost > 0 {
		attrs = append(attrs, AttrCost.Float64(cost))
	}
	attrs = append(attrs, AttrFindings.Int(findings))
	if verdict != trace.Allow {
		attrs = append(attrs, AttrVerdict.String(string(verdict)))
	}
	if e.opts.RecordContent && len(t.UserTurns) > 0 {
		msgs := make([]message, len(t.UserTurns))
		for i, u := range t.UserTurns {
			msgs[i] = message{Role: "user", Parts: []part{{Type: "text", Content: e.text(u)}}}
		}
		attrs = append(attrs, semconv.GenAIInputMessagesKey.String(jsonString(msgs)))
	}
	return attrs
}

// stepSpan returns the name, kind and attributes of the span of a model,
// tool or retrieval step.
// t, which gives tools their descriptions, may be nil.
func (e *Exporter) stepSpan(t *trace.Trace, s *trace.Step) (string, oteltrace.SpanKind, []attribute.KeyValue) {
	name, kind := e.spanNameKind(s)
	attrs := stepAttrs(s)
	switch s.Kind {
	case trace.KindTool:
		return name, kind, e.toolAttrs(attrs, t, s)
	case trace.KindRetrieval:
		return name, kind, e.retrievalAttrs(attrs, s)
	default: // trace.KindModel
		return name, kind, e.modelAttrs(attrs, s, cmp.Or(s.Name, e.opts.Model))
	}
}

// spanNameKind returns the name and kind of the span of a model, tool or
// retrieval step.
func (e *Exporter) spanNameKind(s *trace.Step) (string, oteltrace.SpanKind) {
	switch s.Kind {
	case trace.KindTool:
		return spanName(OpExecuteTool, s.Name), oteltrace.SpanKindInternal
	case trace.KindRetrieval:
		return spanName(OpRetrieval, s.Name), oteltrace.SpanKindClient
	default: // trace.KindModel
		return spanName(OpChat, cmp.Or(s.Name, e.opts.Model)), oteltrace.SpanKindClient
	}
}

// stepAttrs returns the attributes every step span may carry: its place,
// cost, flags and intent.
func stepAttrs(s *trace.Step) []attribute.KeyValue {
	attrs := []attribute.KeyValue{AttrStep.Int(s.Index), AttrTurn.Int(s.Turn)}
	if s.Cost > 0 {
		attrs = append(attrs, AttrCost.Float64(s.Cost))
	}
	if s.Truncated {
		attrs = append(attrs, AttrTruncated.Bool(true))
	}
	if s.Intent != "" {
		attrs = append(attrs, AttrIntent.String(s.Intent))
	}
	if s.Confidence != 0 {
		attrs = append(attrs, AttrConfidence.Float64(s.Confidence))
	}
	if len(s.Alternatives) > 0 {
		attrs = append(attrs, AttrAlternatives.StringSlice(s.Alternatives))
	}
	if s.Blocked && s.Kind != trace.KindTool { // tool spans always say
		attrs = append(attrs, AttrBlocked.Bool(true))
	}
	return attrs
}

// toolAttrs appends to attrs the attributes of a tool step's
// execute_tool span: the tool, its description in t, whether it was
// blocked and, with content, its arguments and result.
func (e *Exporter) toolAttrs(attrs []attribute.KeyValue, t *trace.Trace, s *trace.Step) []attribute.KeyValue {
	attrs = append(attrs,
		semconv.GenAIOperationNameExecuteTool,
		semconv.GenAIToolName(s.Name),
		semconv.GenAIToolType("function"),
		AttrBlocked.Bool(s.Blocked))
	if s.CallID != "" {
		attrs = append(attrs, semconv.GenAIToolCallID(s.CallID))
	}
	for _, spec := range toolSpecs(t) {
		if spec.Name == s.Name && spec.Description != "" {
			attrs = append(attrs, semconv.GenAIToolDescription(spec.Description))
			break
		}
	}
	if e.opts.RecordContent {
		if s.Args != "" {
			attrs = append(attrs, semconv.GenAIToolCallArgumentsKey.String(e.text(s.Args)))
		}
		if s.Result != "" {
			attrs = append(attrs, semconv.GenAIToolCallResultKey.String(e.text(s.Result)))
		}
	}
	return attrs
}

// toolSpecs returns the tools of t, which may be nil.
func toolSpecs(t *trace.Trace) []trace.ToolSpec {
	if t == nil {
		return nil
	}
	return t.Tools
}

// retrievalAttrs appends to attrs the attributes of a retrieval step's
// span: the data source, the documents' ids and scores and, with content,
// the query.
func (e *Exporter) retrievalAttrs(attrs []attribute.KeyValue, s *trace.Step) []attribute.KeyValue {
	attrs = append(attrs, semconv.GenAIOperationNameKey.String(OpRetrieval))
	if s.Name != "" {
		attrs = append(attrs, semconv.GenAIDataSourceID(s.Name))
	}
	if len(s.DocIDs) > 0 {
		// Ids and scores only: the step holds no document text.
		docs := make([]document, len(s.DocIDs))
		for i, id := range s.DocIDs {
			docs[i].ID = id
			if i < len(s.Scores) && !math.IsNaN(s.Scores[i]) && !math.IsInf(s.Scores[i], 0) {
				docs[i].Score = &s.Scores[i]
			}
		}
		attrs = append(attrs, AttrRetrievalDocuments.String(jsonString(docs)))
	}
	if e.opts.RecordContent && s.Args != "" {
		attrs = append(attrs, AttrRetrievalQuery.String(e.text(s.Args)))
	}
	return attrs
}

// modelAttrs appends to attrs the attributes of a model step's chat span,
// whose request model is model: provider, response, usage, the calls it
// proposed, refusal, citations and, with content, its answer.
func (e *Exporter) modelAttrs(attrs []attribute.KeyValue, s *trace.Step, model string) []attribute.KeyValue {
	attrs = append(attrs, semconv.GenAIOperationNameChat)
	provider := s.Provider
	if provider == "" {
		provider = e.opts.Provider
	}
	if provider != "" {
		attrs = append(attrs, semconv.GenAIProviderNameKey.String(provider))
	}
	if model != "" {
		attrs = append(attrs, semconv.GenAIRequestModel(model))
	}
	if s.ResponseModel != "" {
		attrs = append(attrs, semconv.GenAIResponseModel(s.ResponseModel))
	}
	if s.ResponseID != "" {
		attrs = append(attrs, semconv.GenAIResponseID(s.ResponseID))
	}
	attrs = appendServer(attrs, s.Server)
	if s.FinishReason != "" {
		attrs = append(attrs, semconv.GenAIResponseFinishReasons(s.FinishReason))
	}
	if s.TokensIn > 0 || s.TokensOut > 0 {
		attrs = append(attrs, semconv.GenAIUsageInputTokens(s.TokensIn), semconv.GenAIUsageOutputTokens(s.TokensOut))
	}
	if len(s.Calls) > 0 {
		names := make([]string, len(s.Calls))
		for i, c := range s.Calls {
			names[i] = c.Name
		}
		attrs = append(attrs, AttrToolCalls.StringSlice(names))
	}
	if s.Refusal {
		attrs = append(attrs, AttrRefusal.Bool(true))
	}
	if len(s.Citations) > 0 {
		attrs = append(attrs, AttrCitations.StringSlice(s.Citations))
	}
	if e.opts.RecordContent && s.Error == "" {
		attrs = append(attrs, semconv.GenAIOutputMessagesKey.String(jsonString([]message{e.output(s)})))
	}
	return attrs
}

// output is a model step's answer in the conventions' output message shape.
func (e *Exporter) output(s *trace.Step) message {
	m := message{Role: "assistant", FinishReason: "stop"}
	if s.Result != "" {
		m.Parts = append(m.Parts, part{Type: "text", Content: e.text(s.Result)})
	}
	for _, c := range s.Calls {
		m.Parts = append(m.Parts, part{Type: "tool_call", ID: c.ID, Name: c.Name, Arguments: jsonOrString(e.text(c.Args))})
		m.FinishReason = "tool_call"
	}
	if r := finishReason(s.FinishReason); r != "" {
		m.FinishReason = r
	}
	if m.Parts == nil {
		m.Parts = []part{}
	}
	return m
}

// finishReason is a provider's stop reason in the output message schema's
// terms (stop, length, content_filter, tool_call), or "" when it has none.
// gen_ai.response.finish_reasons keeps the provider's own word.
func finishReason(r string) string {
	switch r {
	case "stop", "end_turn", "stop_sequence", "STOP":
		return "stop"
	case "length", "max_tokens", "MAX_TOKENS":
		return "length"
	case "tool_calls", "tool_use", "function_call":
		return "tool_call"
	case "content_filter", "refusal", "SAFETY":
		return "content_filter"
	}
	return ""
}

// judged records the gen_ai.evaluation.result event of v, a finding of
// the trace about the step s (nil for a finding about the run), at time
// at: a log event in ctx, which holds the span sp it judged, and with
// Options.SpanEvents a span event on sp as well.
func (e *Exporter) judged(ctx context.Context, sp oteltrace.Span, at time.Time, v trace.Violation, s *trace.Step) {
	attrs := e.evaluation(&v.Finding, s)
	if e.opts.SpanEvents {
		sp.AddEvent(EventEvaluation, oteltrace.WithTimestamp(at), oteltrace.WithAttributes(attrs...))
	}
	if !e.logger.Enabled(ctx, log.EnabledParameters{Severity: severity(v.Severity), EventName: EventEvaluation}) {
		return
	}
	var r log.Record
	r.SetEventName(EventEvaluation)
	r.SetTimestamp(at)
	r.SetSeverity(severity(v.Severity))
	r.SetSeverityText(string(v.Severity))
	r.AddAttributes(attrs...)
	r.AddAttributes(AttrTraceID.String(v.TraceID))
	if v.SessionID != "" {
		r.AddAttributes(semconv.GenAIConversationID(v.SessionID))
	}
	e.logger.Emit(ctx, r)
}

// severity is the log severity of a finding's.
func severity(s trace.Severity) log.Severity {
	switch s {
	case trace.SeverityError:
		return log.SeverityError
	case trace.SeverityWarning:
		return log.SeverityWarn
	}
	return log.SeverityInfo
}

// appendServer appends server.address and, when hostport names one,
// server.port.
func appendServer(attrs []attribute.KeyValue, hostport string) []attribute.KeyValue {
	if hostport == "" {
		return attrs
	}
	host, port, err := net.SplitHostPort(hostport)
	if err != nil {
		return append(attrs, semconv.ServerAddress(hostport))
	}
	attrs = append(attrs, semconv.ServerAddress(host))
	if n, err := strconv.Atoi(port); err == nil {
		attrs = append(attrs, semconv.ServerPort(n))
	}
	return attrs
}

// evaluation returns the attributes of the gen_ai.evaluation.result event
// for f, a finding about s (nil for the run). Its score is 1 when the step
// went on (an Allow finding, a warning), 0 when the finding stopped or
// changed it.
func (e *Exporter) evaluation(f *trace.Finding, s *trace.Step) []attribute.KeyValue {
	score := 0.0
	if f.Verdict == trace.Allow || f.Verdict == "" || f.Shadow {
		score = 1
	}
	attrs := []attribute.KeyValue{
		semconv.GenAIEvaluationName(f.Rule),
		semconv.GenAIEvaluationScoreLabel(string(f.Verdict)),
		semconv.GenAIEvaluationScoreValue(score),
		AttrStep.Int(f.Step),
		AttrDimension.String(string(f.Dimension)),
		AttrSeverity.String(string(f.Severity)),
		AttrShadow.Bool(f.Shadow),
	}
	if f.Message != "" {
		attrs = append(attrs, semconv.GenAIEvaluationExplanation(e.text(f.Message)))
	}
	if len(f.Tags) > 0 {
		attrs = append(attrs, AttrTags.StringSlice(f.Tags))
	}
	if s != nil && s.ResponseID != "" {
		attrs = append(attrs, semconv.GenAIResponseID(s.ResponseID))
	}
	if e.opts.RecordContent {
		if f.Evidence != "" {
			attrs = append(attrs, AttrEvidence.String(e.text(f.Evidence)))
		}
		if f.Question != "" {
			attrs = append(attrs, AttrQuestion.String(e.text(f.Question)))
		}
		if len(f.Facts) > 0 {
			c := *f
			c.Texts(func(v *string) { *v = e.opts.Redact(*v) })
			if b, err := json.Marshal(c.Facts); err == nil {
				attrs = append(attrs, AttrFacts.String(string(b)))
			}
		}
	}
	return attrs
}

// stepEvent returns the attributes of the agent-span event for a memory
// step or a step of an unknown kind.
func (e *Exporter) stepEvent(s *trace.Step) []attribute.KeyValue {
	attrs := []attribute.KeyValue{AttrStep.Int(s.Index), AttrStepKind.String(string(s.Kind))}
	if s.Name != "" {
		attrs = append(attrs, AttrStepName.String(s.Name))
	}
	if s.Error != "" {
		attrs = append(attrs, AttrStepError.String(e.errorText(s.Error)))
	}
	if s.Truncated {
		attrs = append(attrs, AttrTruncated.Bool(true))
	}
	if e.opts.RecordContent {
		if s.Args != "" {
			attrs = append(attrs, AttrStepArgs.String(e.text(s.Args)))
		}
		if s.Result != "" {
			attrs = append(attrs, AttrStepResult.String(e.text(s.Result)))
		}
	}
	return attrs
}

// text is s redacted and capped.
func (e *Exporter) text(s string) string {
	s = e.opts.Redact(s)
	if e.opts.MaxContent > 0 {
		s, _ = trace.Truncate(s, e.opts.MaxContent)
	}
	return s
}

// errorText is the first line of an error (a recovered panic's stack
// follows it in Step.Error), redacted and capped.
func (e *Exporter) errorText(s string) string {
	if i := strings.IndexByte(s, '\n'); i >= 0 {
		s = s[:i]
	}
	return e.text(s)
}

// message and part follow the GenAI conventions' input and output message
// JSON schemas.
type message struct {
	Role         string `json:"role"`
	Parts        []part `json:"parts"`
	FinishReason string `json:"finish_reason,omitempty"`
}

type part struct {
	Type      string `json:"type"`
	Content   string `json:"content,omitempty"`
	ID        string `json:"id,omitempty"`
	Name      string `json:"name,omitempty"`
	Arguments any    `json:"arguments,omitempty"`
}

// toolDefinition is one entry of gen_ai.tool.definitions, in the source
// system's (OpenAI's) tool definition format.
type toolDefinition struct {
	Type        string          `json:"type"`
	Name        string          `json:"name"`
	Description string          `json:"description,omitempty"`
	Parameters  json.RawMessage `json:"parameters,omitempty"`
}

type document struct {
	ID    string   `json:"id"`
	Score *float64 `json:"score,omitempty"`
}

// jsonOrString returns s as a JSON value when it is one (tool arguments
// usually are), and as a string otherwise (redaction or the cap may have
// broken it).
func jsonOrString(s string) any {
	if s == "" {
		return nil
	}
	if json.Valid([]byte(s)) {
		return json.RawMessage(s)
	}
	return s
}

// jsonString is v as compact JSON, without HTML escaping.
func jsonString(v any) string {
	var b strings.Builder
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil { // cannot happen for the types above
		return ""
	}
	return strings.TrimSuffix(b.String(), "\n")
}
