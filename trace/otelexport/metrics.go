package otelexport

import (
	"context"
	"errors"
	"sync"
	"time"

	"github.com/agentguard/agentguard/trace"
	"go.opentelemetry.io/otel"
	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/metric"
)

// Metric names. They are stable: dashboards and alerts may depend on them.
// Units follow UCUM, as the OpenTelemetry conventions ask.
const (
	// MetricFindings counts findings, by rule, verdict and shadow; unit
	// {finding}. Attributes: agentguard.rule, agentguard.verdict,
	// agentguard.shadow.
	MetricFindings = "agentguard.findings"
	// MetricGateDuration is how long the rules took to judge one step;
	// unit s. Attributes: agentguard.step.kind, agentguard.verdict (the
	// verdict enforced).
	MetricGateDuration = "agentguard.gate.duration"
	// MetricBreakerTransitions counts circuit-breaker state changes; unit
	// {transition}. Attributes: agentguard.breaker, agentguard.breaker.from,
	// agentguard.breaker.state (the new state).
	MetricBreakerTransitions = "agentguard.breaker.transitions"
	// MetricBreakerState is a breaker's state since its last change: 0
	// closed, 1 half-open, 2 open; unit {state}. Attribute:
	// agentguard.breaker.
	MetricBreakerState = "agentguard.breaker.state"
	// MetricReportQueue is how many findings and traces wait for the
	// guard's reporter; unit {report}. Observed from
	// MetricsOptions.Reporter.
	MetricReportQueue = "agentguard.report.queue"
	// MetricLedgerFindings counts findings on their way to the ledger, by
	// agentguard.outcome: "delivered", "dropped" (a full queue) or
	// "refused" (the ledger failed); unit {finding}. Observed from
	// MetricsOptions.Reporter.
	MetricLedgerFindings = "agentguard.ledger.findings"
	// MetricTraces counts traces handed to the trace store, by
	// agentguard.outcome: "stored", "dropped" or "refused"; unit {trace}.
	// Observed from MetricsOptions.Reporter.
	MetricTraces = "agentguard.traces"
)

// Metric attribute keys, besides the span attributes of the same name.
const (
	AttrRule        attribute.Key = "agentguard.rule"          // Finding.Rule
	AttrBreaker     attribute.Key = "agentguard.breaker"       // "tool:NAME", "model:primary", "model:fallback"
	AttrBreakerFrom attribute.Key = "agentguard.breaker.from"  // the state left
	AttrBreakerTo   attribute.Key = "agentguard.breaker.state" // the state entered
	AttrOutcome     attribute.Key = "agentguard.outcome"       // what became of a finding or trace
)

// ReporterStats is what the guard's reporter counted: findings and traces
// queued, delivered, dropped and refused. It has the fields of
// guard.ReportStats, in the same order, so that one converts to the other
// (otelexport.ReporterStats(g.ReportStats())) without this package
// importing guard.
type ReporterStats struct {
	Delivered, Dropped, Unstored, Queued      uint64
	TracesSaved, TracesDropped, TracesUnsaved uint64
}

// MetricsOptions configures NewMetrics. The zero value records the
// guard's events and observes no reporter.
type MetricsOptions struct {
	// Reporter, when set, is read at each collection for the report queue,
	// ledger and trace metrics: usually
	//
	//	func() otelexport.ReporterStats { return otelexport.ReporterStats(g.ReportStats()) }
	//
	// It must be safe to call from the meter provider's goroutine.
	Reporter func() ReporterStats
}

// Metrics records a guard's operational events as OpenTelemetry metrics:
// set it as guard.Config.Observe.Metrics (it implements guard.Observer).
// It is safe for concurrent use; the zero value is not usable, use
// NewMetrics.
//
// With no meter provider installed, the global one is a no-op and so is
// every method: it returns at the instrument's Enabled check, before any
// attribute is built, without allocating. With one, each method records
// one measurement and allocates nothing once the rule, verdict or breaker
// has been seen.
type Metrics struct {
	findings    metric.Int64Counter
	gate        metric.Float64Histogram
	transitions metric.Int64Counter
	state       metric.Int64Gauge
	reg         metric.Registration

	mu   sync.RWMutex
	sets map[attrKey]*measure
}

// attrKey identifies a cached attribute set.
type attrKey struct {
	metric  byte
	a, b, c string
	shadow  bool
}

// NewMetrics creates the instruments on mp's meter named
// InstrumentationName. A nil mp means otel.GetMeterProvider(), the global
// provider. Call Close to stop observing the reporter.
func NewMetrics(mp metric.MeterProvider, opts MetricsOptions) (*Metrics, error) {
	if mp == nil {
		mp = otel.GetMeterProvider()
	}
	meter := mp.Meter(InstrumentationName)
	m := &Metrics{sets: make(map[attrKey]*measure)}
	var err, e error
	m.findings, e = meter.Int64Counter(MetricFindings, metric.WithUnit("{finding}"),
		metric.WithDescription("Findings of the guard's rules, by rule and verdict."))
	err = errors.Join(err, e)
	m.gate, e = meter.Float64Histogram(MetricGateDuration, metric.WithUnit("s"),
		metric.WithDescription("Time the guard's rules took to judge one step."),
		metric.WithExplicitBucketBoundaries(0.00001, 0.000025, 0.00005, 0.0001, 0.00025, 0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1))
	err = errors.Join(err, e)
	m.transitions, e = meter.Int64Counter(MetricBreakerTransitions, metric.WithUnit("{transition}"),
		metric.WithDescription("Circuit-breaker state changes."))
	err = errors.Join(err, e)
	m.state, e = meter.Int64Gauge(MetricBreakerState, metric.WithUnit("{state}"),
		metric.WithDescription("Circuit-breaker state: 0 closed, 1 half-open, 2 open."))
	err = errors.Join(err, e)
	if opts.Reporter != nil {
		queue, e1 := meter.Int64ObservableGauge(MetricReportQueue, metric.WithUnit("{report}"),
			metric.WithDescription("Findings and traces waiting for the guard's reporter."))
		ledger, e2 := meter.Int64ObservableCounter(MetricLedgerFindings, metric.WithUnit("{finding}"),
			metric.WithDescription("Findings on their way to the ledger, by outcome."))
		traces, e3 := meter.Int64ObservableCounter(MetricTraces, metric.WithUnit("{trace}"),
			metric.WithDescription("Traces handed to the trace store, by outcome."))
		err = errors.Join(err, e1, e2, e3)
		outcome := func(v string) metric.ObserveOption {
			return metric.WithAttributeSet(attribute.NewSet(AttrOutcome.String(v)))
		}
		delivered, dropped, refused, stored := outcome("delivered"), outcome("dropped"), outcome("refused"), outcome("stored")
		if err == nil {
			m.reg, err = meter.RegisterCallback(func(_ context.Context, o metric.Observer) error {
				s := opts.Reporter()
				o.ObserveInt64(queue, clamp(s.Queued))
				o.ObserveInt64(ledger, clamp(s.Delivered), delivered)
				o.ObserveInt64(ledger, clamp(s.Dropped), dropped)
				o.ObserveInt64(ledger, clamp(s.Unstored), refused)
				o.ObserveInt64(traces, clamp(s.TracesSaved), stored)
				o.ObserveInt64(traces, clamp(s.TracesDropped), dropped)
				o.ObserveInt64(traces, clamp(s.TracesUnsaved), refused)
				return nil
			}, queue, ledger, traces)
		}
	}
	if err != nil {
		return nil, errors.Join(errors.New("otelexport: metrics"), err)
	}
	return m, nil
}

func clamp(n uint64) int64 { return int64(min(n, 1<<63-1)) }

// Close stops observing the reporter. The instruments stay: events
// recorded after Close are still measured.
func (m *Metrics) Close() error {
	if m.reg == nil {
		return nil
	}
	return m.reg.Unregister()
}

// measure holds the options of one attribute set, as the variadic
// arguments the instruments take, so that passing them allocates nothing.
type measure struct {
	add []metric.AddOption
	rec []metric.RecordOption
}

// set returns the cached options for k, making them with attrs the first
// time.
func (m *Metrics) set(k attrKey, attrs func() attribute.Set) *measure {
	m.mu.RLock()
	ms, ok := m.sets[k]
	m.mu.RUnlock()
	if ok {
		return ms
	}
	o := metric.WithAttributeSet(attrs())
	ms = &measure{add: []metric.AddOption{o}, rec: []metric.RecordOption{o}}
	m.mu.Lock()
	m.sets[k] = ms
	m.mu.Unlock()
	return ms
}

// Judged records the time the rules took to judge a step.
func (m *Metrics) Judged(kind trace.Kind, verdict trace.Verdict, took time.Duration) {
	ctx := context.Background()
	if !m.gate.Enabled(ctx) {
		return
	}
	o := m.set(attrKey{metric: 'g', a: string(kind), b: string(verdict)}, func() attribute.Set {
		return attribute.NewSet(AttrStepKind.String(string(kind)), AttrVerdict.String(string(verdict)))
	})
	m.gate.Record(ctx, took.Seconds(), o.rec...)
}

// Finding counts a finding.
func (m *Metrics) Finding(rule string, verdict trace.Verdict, shadow bool) {
	ctx := context.Background()
	if !m.findings.Enabled(ctx) {
		return
	}
	o := m.set(attrKey{metric: 'f', a: rule, b: string(verdict), shadow: shadow}, func() attribute.Set {
		return attribute.NewSet(AttrRule.String(rule), AttrVerdict.String(string(verdict)), AttrShadow.Bool(shadow))
	})
	m.findings.Add(ctx, 1, o.add...)
}

// BreakerChanged counts a breaker's state change and records its new
// state. It does not block: the guard calls it under the breaker's lock.
func (m *Metrics) BreakerChanged(breaker, from, to string) {
	ctx := context.Background()
	if m.transitions.Enabled(ctx) {
		o := m.set(attrKey{metric: 't', a: breaker, b: from, c: to}, func() attribute.Set {
			return attribute.NewSet(AttrBreaker.String(breaker), AttrBreakerFrom.String(from), AttrBreakerTo.String(to))
		})
		m.transitions.Add(ctx, 1, o.add...)
	}
	if m.state.Enabled(ctx) {
		o := m.set(attrKey{metric: 's', a: breaker}, func() attribute.Set {
			return attribute.NewSet(AttrBreaker.String(breaker))
		})
		m.state.Record(ctx, breakerState(to), o.rec...)
	}
}

func breakerState(s string) int64 {
	switch s {
	case "half-open":
		return 1
	case "open":
		return 2
	}
	return 0
}
