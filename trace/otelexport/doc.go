/*
Package otelexport sends recorded agent traces to OpenTelemetry, as spans
that follow the OpenTelemetry semantic conventions for generative AI
(gen_ai.*), so that the collector a team already runs (an OpenTelemetry
Collector, Jaeger, Grafana Tempo, Phoenix) shows agentguard's runs and gate
decisions next to the rest of its telemetry.

# How it fits

The guard records every run into a [trace.Trace] (guard.Run's
Result.Trace, or the Recorder of guard.StartTrace); the ledger keeps the
violations locally. This package turns a finished trace into spans on any
[go.opentelemetry.io/otel/trace.TracerProvider]: the SDK's with an OTLP
exporter in production, or an in-memory one in tests. It is the only
package of the module that imports OpenTelemetry: guard, memory and trace do
not, so an agent that does not export pays nothing for it.

	exp, _ := otlptracehttp.New(ctx) // OTEL_EXPORTER_OTLP_ENDPOINT, or WithEndpoint
	tp := sdktrace.NewTracerProvider(sdktrace.WithBatcher(exp))
	defer tp.Shutdown(ctx)
	res, err := g.Run(ctx, model, tools, msgs)
	otelexport.Export(ctx, tp, res.Trace, otelexport.Options{AgentName: "support"})

Export creates and ends the spans after the fact, with the steps' recorded
times: the provider batches and sends them like any other span. For spans
as the calls happen, use [Live] instead: it is a guard.StepObserver, so
each model and tool call gets its span when it starts, in the call's
context (the HTTP client's spans nest under it), and the GenAI client
metrics (gen_ai.client.operation.duration, gen_ai.client.token.usage):

	live, err := otelexport.NewLive(tp, mp, otelexport.Options{AgentName: "support", Logs: lp})
	g := guard.New(guard.Config{Observe: guard.Observation{Steps: live}})
	ctx, end := live.StartAgent(ctx)
	ctx, rec := g.StartTrace(ctx, sessionID, "support")
	res, err := g.Run(ctx, model, tools, msgs)
	end(rec.Trace())

For many traces, or a trace file written by trace.Writer, make one
[Exporter] and call [Exporter.Export] or [Exporter.ExportAll].

# Spans

One trace becomes one span tree. The conventions are of Development status
(semantic conventions 1.39 and the retrieval attributes added after it);
names follow them where they name a thing, and agentguard.* attributes
carry the rest.

	span                     kind      from
	invoke_agent [AGENT]     internal  the trace; AGENT is Options.AgentName, when set
	chat [MODEL]             client    each KindModel step; MODEL is Step.Name, or Options.Model
	execute_tool TOOL        internal  each KindTool step; TOOL is Step.Name
	retrieval [SOURCE]       client    each KindRetrieval step; SOURCE is Step.Name, when set

Step spans are children of the invoke_agent span, in step order, which is
itself a child of the span in the context given to Export, if any. A
span starts at Step.Start and lasts Step.Duration; a step recorded without
a start time starts where the step before it ended. The agent span covers
Trace.Start and all the steps.

Gate steps (KindGate, whose Finding judges the step Finding.Step) become
gen_ai.evaluation.result log events (the OpenTelemetry Logs API, on
Options.Logs or the global logger provider), parented to the span of the
judged step and stamped with that span's end; a finding about a step
without a span of its own (a memory step, the run as a whole) is parented
to the agent span. The conventions define the event as log-based and span
events are being deprecated; Options.SpanEvents records them as span
events as well, for backends that read no logs. (A guardrail-specific
event, gen_ai.security.finding, is proposed in semantic-conventions-genai
pull request 427 and not released: when it is, the decisions will be
emitted under its names too.) Memory steps become
agentguard.memory events on the agent span, and steps of other kinds
agentguard.step events. A step with Step.Error gets span status Error with
the error's first line as description, and error.type "_OTHER". A blocked
tool call is not an error: its span says agentguard.blocked=true and its
evaluation event says why.

# Attributes

Always recorded (when the field is set):

	invoke_agent span
	  gen_ai.operation.name        "invoke_agent"
	  gen_ai.agent.name            Options.AgentName
	  gen_ai.conversation.id       Trace.SessionID
	  agentguard.trace_id          Trace.ID
	  agentguard.route             Trace.Route
	  agentguard.tools             []string: names of Trace.Tools, the allow-list
	  gen_ai.tool.definitions      JSON [{"type":"function","name":..,"description":..,"parameters":..}] from Trace.Tools
	  gen_ai.usage.input_tokens    int: sum of Step.TokensIn
	  gen_ai.usage.output_tokens   int: sum of Step.TokensOut
	  agentguard.cost              float: sum of Step.Cost
	  gen_ai.provider.name         the first model step's Step.Provider, or Options.Provider
	  gen_ai.request.model         the first model step's Step.Name, or Options.Model
	  agentguard.findings          int: number of gate steps (always)
	  agentguard.verdict           the strongest enforced (not shadow) verdict, when not "allow"
	chat span
	  gen_ai.operation.name        "chat"
	  gen_ai.provider.name         Step.Provider, or Options.Provider
	  gen_ai.request.model         Step.Name, or Options.Model
	  gen_ai.response.model        Step.ResponseModel
	  gen_ai.response.id           Step.ResponseID
	  server.address, server.port  Step.Server, the host and port the call was sent to (guard.Transport)
	  gen_ai.response.finish_reasons []string: Step.FinishReason, the provider's word
	  gen_ai.usage.input_tokens    int: Step.TokensIn
	  gen_ai.usage.output_tokens   int: Step.TokensOut
	  agentguard.cost              float: Step.Cost
	  agentguard.tool_calls        []string: names of the tool calls proposed (Step.Calls)
	  agentguard.refusal           bool: Step.Refusal
	  agentguard.citations         []string: Step.Citations
	execute_tool span
	  gen_ai.operation.name        "execute_tool"
	  gen_ai.tool.name             Step.Name
	  gen_ai.tool.call.id          Step.CallID
	  gen_ai.tool.type             "function"
	  gen_ai.tool.description      the tool's description in Trace.Tools
	  agentguard.blocked           bool: Step.Blocked (always)
	retrieval span
	  gen_ai.operation.name        "retrieval"
	  gen_ai.data_source.id        Step.Name
	  gen_ai.retrieval.documents   JSON [{"id":..,"score":..}] from Step.DocIDs and Step.Scores (ids only, no text)
	every step span
	  agentguard.step              int: Step.Index, as Finding.Step and the ledger name it (always)
	  agentguard.turn              int: Step.Turn (always)
	  agentguard.intent            Step.Intent
	  agentguard.confidence        float: Step.Confidence
	  agentguard.alternatives      []string: Step.Alternatives, the next most likely intents
	  agentguard.blocked           bool: Step.Blocked (on chat spans: a gate answered instead of the model)
	  agentguard.truncated         bool: Step.Truncated
	  error.type                   "_OTHER", when Step.Error is set
	gen_ai.evaluation.result event (severity: the finding's; error, warn or info)
	  gen_ai.evaluation.name       Finding.Rule
	  gen_ai.evaluation.score.label Finding.Verdict: "allow", "retry", "clarify", "refuse", "handoff" or "block"
	  gen_ai.evaluation.score.value 1 when the step went on (Allow, or shadow mode), 0 when the finding stopped or changed it
	  gen_ai.response.id           the judged model step's Step.ResponseID
	  agentguard.trace_id          Trace.ID (log events)
	  gen_ai.conversation.id       Trace.SessionID (log events)
	  gen_ai.evaluation.explanation Finding.Message, redacted
	  agentguard.step              int: Finding.Step, the judged step
	  agentguard.dimension         Finding.Dimension
	  agentguard.severity          Finding.Severity
	  agentguard.shadow            bool: Finding.Shadow (always)
	  agentguard.tags              []string: Finding.Tags
	agentguard.memory and agentguard.step events
	  agentguard.step              int: Step.Index
	  agentguard.step.kind         Step.Kind
	  agentguard.step.name         Step.Name (for memory steps, the operation)
	  agentguard.step.error        the first line of Step.Error, redacted

Recorded only with Options.RecordContent, each text passed through
Options.Redact and capped at Options.MaxContent:

	invoke_agent  gen_ai.input.messages       JSON: Trace.UserTurns as user messages
	chat          gen_ai.output.messages      JSON: the answer (Step.Result) and tool calls (Step.Calls)
	execute_tool  gen_ai.tool.call.arguments  Step.Args
	execute_tool  gen_ai.tool.call.result     Step.Result (for a blocked call, what the agent was told)
	retrieval     gen_ai.retrieval.query.text Step.Args
	evaluation    agentguard.evidence         Finding.Evidence
	evaluation    agentguard.question         Finding.Question
	evaluation    agentguard.facts            JSON: Finding.Facts, each text redacted
	step events   agentguard.step.args        Step.Args
	step events   agentguard.step.result      Step.Result

The JSON attributes follow the conventions' message schemas and are
recorded as JSON strings. Trace.Meta is not exported.

A guard fills Step.Name and Step.Provider from the model it wraps
(guard.DescribedModel: langchaingo's clients are recognised, and
guard.DescribeModel names others), and Step.ResponseModel and
Step.ResponseID from the provider's answer when the client's HTTP client
uses guard.Transport; so the zero Options give complete chat spans.

# Metrics

[Metrics] implements guard.Observer with the OpenTelemetry metrics API:
set it as guard.Config.Observe.Metrics. Names and units are stable:

	agentguard.findings             counter    {finding}     agentguard.rule, agentguard.verdict, agentguard.shadow
	agentguard.gate.duration        histogram  s             agentguard.step.kind, agentguard.verdict
	agentguard.breaker.transitions  counter    {transition}  agentguard.breaker, agentguard.breaker.from, agentguard.breaker.state
	agentguard.breaker.state        gauge      {state}       agentguard.breaker; 0 closed, 1 half-open, 2 open
	agentguard.report.queue         gauge      {report}      findings and traces waiting for the reporter
	agentguard.ledger.findings      counter    {finding}     agentguard.outcome: delivered, dropped, refused
	agentguard.traces               counter    {trace}       agentguard.outcome: stored, dropped, refused

The last three are observed at collection time from
MetricsOptions.Reporter. With no meter provider installed every method
returns at the instrument's Enabled check; with one, an event allocates
nothing once its attribute set has been seen.

	m, err := otelexport.NewMetrics(mp, otelexport.MetricsOptions{})
	g := guard.New(guard.Config{Observe: guard.Observation{Metrics: m}})

# Privacy

Content is off by default: arguments, results and answers hold what users
typed and what tools returned. Two texts are recorded without it because
operators need them: finding messages and step errors (first line only,
so no panic stack). Both, and all content when it is on, go through
Options.Redact first, by default [redact.String] (package trace/redact, the
same redactor the ledger uses), which masks e-mail addresses,
phone numbers and card-like digit runs; pass your own to mask more.

# Limits

The SDK caps attributes and events per span (128 each by default, see
sdktrace.SpanLimits); with SpanEvents, a step judged by more rules than
that loses the extra span events (the log events are not capped). Export
creates spans after the run ends, so a run that never finishes is not
exported: export what the recorder holds when you give up on it, or trace
it with Live. Live traces model, tool and retrieval calls; memory steps and
findings about the run as a whole reach the trace only through Export.
*/
package otelexport
