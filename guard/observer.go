package guard

import (
	"context"
	"time"

	"github.com/agentguard/agentguard/trace"
)

// Observer receives the guard's operational events, for metrics: package
// trace/otelexport implements it with the OpenTelemetry metrics API
// (otelexport.NewMetrics), and a Prometheus or statsd client can as well.
// Set it as Config.Observe.Metrics. Its methods take plain values so that
// an implementation need not import this package.
//
// The guard calls it on the agent's goroutine, and BreakerChanged under
// the breaker's lock: implementations must be safe for concurrent use,
// fast, and never block. Embed NopObserver to implement only some methods.
type Observer interface {
	// Judged reports one step judged by the rules: its kind, the verdict
	// enforced (Allow in shadow mode), and how long the rules took.
	Judged(kind trace.Kind, verdict trace.Verdict, took time.Duration)
	// Finding reports one finding recorded: the rule, its verdict, and
	// whether it was only observed (shadow mode).
	Finding(rule string, verdict trace.Verdict, shadow bool)
	// BreakerChanged reports a circuit breaker's change of state: the
	// breaker ("tool:NAME", "model:primary", "model:fallback") and the
	// states ("closed", "half-open", "open").
	BreakerChanged(breaker, from, to string)
}

// NopObserver is an Observer that does nothing. Embed it in an Observer
// that implements only some of the methods.
type NopObserver struct{}

func (NopObserver) Judged(trace.Kind, trace.Verdict, time.Duration) {}
func (NopObserver) Finding(string, trace.Verdict, bool)             {}
func (NopObserver) BreakerChanged(string, string, string)           {}

// StepObserver sees each model and tool call while it runs, for live
// tracing: package trace/otelexport implements it as OpenTelemetry spans,
// metrics and log events (otelexport.NewLive). Set it as
// Config.Observe.Steps.
//
// StepStarted is called as a call begins, with its step as far as it is
// known then (kind, name, start, and a tool call's arguments); the call
// runs with the context it returns, so that what the call itself traces (a
// model client's HTTP spans) nests under the observer's span. StepEnded is
// called with that context once the step is recorded: the step is complete
// (result, error, duration, index), and findings are what the rules said
// about it, as the ledger receives them. Each attempt at a model call is a
// step of its own; a step that ran no call (a blocked tool call, an answer
// a gate gave instead of the model, the intent classifier's) gets both
// calls in a row, as does the gate step of a finding about the run as a
// whole (its step budget spent), which has no step of its own.
//
// Both are called on the agent's goroutine, so they must be fast; neither
// may keep the step or the findings past its return, nor change them.
type StepObserver interface {
	StepStarted(ctx context.Context, s *trace.Step) context.Context
	StepEnded(ctx context.Context, s *trace.Step, findings []trace.Violation)
}
