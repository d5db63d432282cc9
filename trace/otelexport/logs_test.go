package otelexport_test

import (
	"context"
	"slices"
	"sync"

	"go.opentelemetry.io/otel/attribute"
	sdklog "go.opentelemetry.io/otel/sdk/log"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/sdk/trace/tracetest"
)

// logSink is an sdklog.Exporter that keeps what it is given, as the
// collector would receive it.
type logSink struct {
	mu   sync.Mutex
	recs []sdklog.Record
}

func (s *logSink) Export(_ context.Context, rs []sdklog.Record) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	for _, r := range rs {
		s.recs = append(s.recs, r.Clone())
	}
	return nil
}
func (s *logSink) Shutdown(context.Context) error   { return nil }
func (s *logSink) ForceFlush(context.Context) error { return nil }

func (s *logSink) records() []sdklog.Record {
	s.mu.Lock()
	defer s.mu.Unlock()
	return slices.Clone(s.recs)
}

// newLogs returns an SDK logger provider that exports synchronously to
// the returned sink.
func newLogs() (*sdklog.LoggerProvider, *logSink) {
	sink := new(logSink)
	return sdklog.NewLoggerProvider(sdklog.WithProcessor(sdklog.NewSimpleProcessor(sink))), sink
}

// withLogEvents returns spans with each log event of recs added to the
// span it is parented to, as a span event of the same name, time and
// attributes, the events of each span in time order: so that a test reads
// the gate decisions where a backend shows them. A log event whose span is
// not among spans is returned apart.
func withLogEvents(spans tracetest.SpanStubs, recs []sdklog.Record) (tracetest.SpanStubs, []sdklog.Record) {
	var orphans []sdklog.Record
	out := slices.Clone(spans)
	for _, r := range recs {
		i := slices.IndexFunc(out, func(s tracetest.SpanStub) bool {
			return s.SpanContext.SpanID() == r.SpanID() && s.SpanContext.TraceID() == r.TraceID()
		})
		if i < 0 || r.EventName() == "" {
			orphans = append(orphans, r)
			continue
		}
		ev := sdktrace.Event{Name: r.EventName(), Time: r.Timestamp()}
		r.WalkAttributes(func(kv attribute.KeyValue) bool {
			ev.Attributes = append(ev.Attributes, kv)
			return true
		})
		out[i].Events = append(slices.Clip(out[i].Events), ev)
	}
	for i := range out {
		slices.SortStableFunc(out[i].Events, func(a, b sdktrace.Event) int { return a.Time.Compare(b.Time) })
	}
	return out, orphans
}
