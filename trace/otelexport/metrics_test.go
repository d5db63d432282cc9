package otelexport_test

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/agentguard/agentguard/guard"
	"github.com/agentguard/agentguard/guard/guardtest"
	"github.com/agentguard/agentguard/guard/rules"
	"github.com/agentguard/agentguard/trace"
	"github.com/agentguard/agentguard/trace/otelexport"
	"github.com/tmc/langchaingo/llms"
	"github.com/tmc/langchaingo/tools"
	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/metric/noop"
	sdkmetric "go.opentelemetry.io/otel/sdk/metric"
	"go.opentelemetry.io/otel/sdk/metric/metricdata"
)

var _ guard.Observer = (*otelexport.Metrics)(nil)

func human(text string) []llms.MessageContent {
	return []llms.MessageContent{llms.TextParts(llms.ChatMessageTypeHuman, text)}
}

// collect returns the metrics of reader by name.
func collect(t *testing.T, reader *sdkmetric.ManualReader) map[string]metricdata.Metrics {
	t.Helper()
	var rm metricdata.ResourceMetrics
	if err := reader.Collect(context.Background(), &rm); err != nil {
		t.Fatal(err)
	}
	out := map[string]metricdata.Metrics{}
	for _, sm := range rm.ScopeMetrics {
		if sm.Scope.Name != otelexport.InstrumentationName {
			t.Errorf("scope %q", sm.Scope.Name)
		}
		for _, m := range sm.Metrics {
			out[m.Name] = m
		}
	}
	return out
}

// sum returns the value of a counter's point with attribute k=v.
func sum(t *testing.T, m metricdata.Metrics, k attribute.Key, v string) int64 {
	t.Helper()
	s, ok := m.Data.(metricdata.Sum[int64])
	if !ok {
		t.Fatalf("%s is %T, want a sum", m.Name, m.Data)
	}
	var n int64
	for _, p := range s.DataPoints {
		if got, ok := p.Attributes.Value(k); ok && got.Emit() == v {
			n += p.Value
		}
	}
	return n
}

// TestMetricsFromAGuard runs a real guard with the metrics observer and
// reads what the SDK collected: findings by rule, gate latency, a breaker
// opening, and the reporter's counts.
func TestMetricsFromAGuard(t *testing.T) {
	reader := sdkmetric.NewManualReader()
	mp := sdkmetric.NewMeterProvider(sdkmetric.WithReader(reader))
	defer mp.Shutdown(context.Background())
	stats := otelexport.ReporterStats{Delivered: 7, Dropped: 2, Unstored: 1, Queued: 3, TracesSaved: 4, TracesDropped: 1}
	m, err := otelexport.NewMetrics(mp, otelexport.MetricsOptions{Reporter: func() otelexport.ReporterStats { return stats }})
	if err != nil {
		t.Fatal(err)
	}
	defer m.Close()

	g := guard.New(guard.Config{
		Observe:    guard.Observation{Metrics: m},
		Resilience: guard.Resilience{BreakerFailures: 1, Backoff: time.Millisecond},
	})
	broken := guardtest.NewTool("query_order", "Look up an order", func(context.Context, string) (string, error) {
		return "", errors.New("connection refused")
	})
	model := guardtest.Script(
		guardtest.ToolCall("delete_account", `{"__arg1":"A1"}`), // not offered: blocked
		guardtest.ToolCall("query_order", `{"__arg1":"A1"}`),    // fails: the breaker opens
		guardtest.Text("Order A1 has shipped."),
	)
	if _, err := g.Run(context.Background(), model, []tools.Tool{broken}, human("Where is order A1?")); err != nil {
		t.Fatal(err)
	}

	got := collect(t, reader)
	for name, unit := range map[string]string{
		otelexport.MetricFindings:           "{finding}",
		otelexport.MetricGateDuration:       "s",
		otelexport.MetricBreakerTransitions: "{transition}",
		otelexport.MetricBreakerState:       "{state}",
		otelexport.MetricReportQueue:        "{report}",
		otelexport.MetricLedgerFindings:     "{finding}",
		otelexport.MetricTraces:             "{trace}",
	} {
		if m, ok := got[name]; !ok || m.Unit != unit {
			t.Errorf("%s: unit %q, present %v; want %q", name, m.Unit, ok, unit)
		}
	}
	if n := sum(t, got[otelexport.MetricFindings], otelexport.AttrRule, rules.AllowList); n != 1 {
		t.Errorf("allow-list findings = %d, want 1", n)
	}
	if n := sum(t, got[otelexport.MetricBreakerTransitions], otelexport.AttrBreakerTo, "open"); n != 1 {
		t.Errorf("breaker openings = %d, want 1", n)
	}
	h := got[otelexport.MetricGateDuration].Data.(metricdata.Histogram[float64])
	var judged uint64
	for _, p := range h.DataPoints {
		judged += p.Count
	}
	if judged < 4 { // three model turns and two tool calls, the blocked one included
		t.Errorf("gate durations recorded = %d, want one per judged step", judged)
	}
	if n := sum(t, got[otelexport.MetricLedgerFindings], otelexport.AttrOutcome, "dropped"); n != 2 {
		t.Errorf("dropped findings = %d, want 2", n)
	}
	if n := sum(t, got[otelexport.MetricTraces], otelexport.AttrOutcome, "stored"); n != 4 {
		t.Errorf("stored traces = %d, want 4", n)
	}
	q := got[otelexport.MetricReportQueue].Data.(metricdata.Gauge[int64])
	if len(q.DataPoints) != 1 || q.DataPoints[0].Value != 3 {
		t.Errorf("queue = %+v, want 3", q.DataPoints)
	}
}

// TestMetricsAllocateNothing pins the cost of the observer: nothing is
// allocated per event, with no meter provider (the no-op one) and, once a
// rule has been seen, with the SDK's.
func TestMetricsAllocateNothing(t *testing.T) {
	reader := sdkmetric.NewManualReader()
	sdk := sdkmetric.NewMeterProvider(sdkmetric.WithReader(reader))
	defer sdk.Shutdown(context.Background())
	for _, tt := range []struct {
		name string
		m    *otelexport.Metrics
	}{
		{"no-op provider", must(otelexport.NewMetrics(noop.NewMeterProvider(), otelexport.MetricsOptions{}))},
		{"global provider, none installed", must(otelexport.NewMetrics(nil, otelexport.MetricsOptions{}))},
		{"sdk", must(otelexport.NewMetrics(sdk, otelexport.MetricsOptions{}))},
	} {
		t.Run(tt.name, func(t *testing.T) {
			event := func() {
				tt.m.Judged(trace.KindTool, trace.Allow, time.Microsecond)
				tt.m.Finding(rules.Loop, trace.Block, false)
				tt.m.BreakerChanged("tool:query_order", "closed", "open")
			}
			event() // the first sight of each attribute set makes it
			if n := testing.AllocsPerRun(100, event); n != 0 {
				t.Errorf("%v allocations per event, want 0", n)
			}
		})
	}
}

func must(m *otelexport.Metrics, err error) *otelexport.Metrics {
	if err != nil {
		panic(err)
	}
	return m
}

// BenchmarkMetricsOverhead measures what metrics cost a guarded tool call
// (judged, run, recorded, in a fresh trace): without an observer (the
// baseline), with the observer on the no-op meter provider, and on the
// SDK's. The three run in turn within each iteration, so that they share
// the machine's load; it reports each one's time per call and the ratios
// to the baseline.
func BenchmarkMetricsOverhead(b *testing.B) {
	sdk := sdkmetric.NewMeterProvider(sdkmetric.WithReader(sdkmetric.NewManualReader()))
	defer sdk.Shutdown(context.Background())
	variants := []struct {
		name string
		obs  guard.Observer
	}{
		{"none", nil},
		{"noop", must(otelexport.NewMetrics(noop.NewMeterProvider(), otelexport.MetricsOptions{}))},
		{"sdk", must(otelexport.NewMetrics(sdk, otelexport.MetricsOptions{}))},
	}
	calls := make([]func(), len(variants))
	for i, v := range variants {
		g := guard.New(guard.Config{Observe: guard.Observation{Metrics: v.obs}})
		tool := g.WrapTool(guardtest.NewTool("query_order", "Look up an order", func(context.Context, string) (string, error) {
			return `{"status":"shipped"}`, nil
		}))
		calls[i] = func() {
			ctx, _ := g.StartTrace(context.Background(), "s", "")
			if _, err := tool.Call(ctx, `{"order_id":"A1"}`); err != nil {
				b.Fatal(err)
			}
		}
	}
	took := make([]time.Duration, len(variants))
	for b.Loop() {
		for i, call := range calls {
			start := time.Now()
			call()
			took[i] += time.Since(start)
		}
	}
	for i, v := range variants {
		b.ReportMetric(float64(took[i].Nanoseconds())/float64(b.N), v.name+"-ns/call")
		if i > 0 {
			b.ReportMetric(float64(took[i])/float64(took[0]), v.name+"/none")
		}
	}
}

// TestMetricsCostAGuardNoAllocations checks that a guarded tool call
// allocates as much with the observer on the no-op provider, or on the
// SDK's, as without one.
func TestMetricsCostAGuardNoAllocations(t *testing.T) {
	sdk := sdkmetric.NewMeterProvider(sdkmetric.WithReader(sdkmetric.NewManualReader()))
	defer sdk.Shutdown(context.Background())
	allocs := func(obs guard.Observer) float64 {
		g := guard.New(guard.Config{Observe: guard.Observation{Metrics: obs}})
		tool := g.WrapTool(guardtest.NewTool("query_order", "Look up an order", func(context.Context, string) (string, error) {
			return `{"status":"shipped"}`, nil
		}))
		call := func() {
			ctx, _ := g.StartTrace(context.Background(), "s", "")
			tool.Call(ctx, `{"order_id":"A1"}`)
		}
		call()
		return testing.AllocsPerRun(200, call)
	}
	base := allocs(nil)
	for name, obs := range map[string]guard.Observer{
		"no-op provider": must(otelexport.NewMetrics(noop.NewMeterProvider(), otelexport.MetricsOptions{})),
		"sdk":            must(otelexport.NewMetrics(sdk, otelexport.MetricsOptions{})),
	} {
		if got := allocs(obs); got != base {
			t.Errorf("%s: %v allocations per call, %v without metrics", name, got, base)
		}
	}
}

// BenchmarkMetricsEvent measures one guarded step's worth of metric
// events (Judged and Finding) on the no-op meter provider and on the
// SDK's, against the baseline of a nil observer, which the guard checks
// and skips.
func BenchmarkMetricsEvent(b *testing.B) {
	sdk := sdkmetric.NewMeterProvider(sdkmetric.WithReader(sdkmetric.NewManualReader()))
	defer sdk.Shutdown(context.Background())
	for _, bc := range []struct {
		name string
		obs  guard.Observer
	}{
		{"none", nil},
		{"noop", must(otelexport.NewMetrics(noop.NewMeterProvider(), otelexport.MetricsOptions{}))},
		{"sdk", must(otelexport.NewMetrics(sdk, otelexport.MetricsOptions{}))},
	} {
		b.Run(bc.name, func(b *testing.B) {
			obs := bc.obs
			b.ReportAllocs()
			for b.Loop() {
				if obs != nil {
					obs.Judged(trace.KindTool, trace.Block, 3*time.Microsecond)
					obs.Finding(rules.Loop, trace.Block, false)
				}
			}
		})
	}
}
