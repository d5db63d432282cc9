// Package fleet is the end-to-end test of agentguard across a fleet of
// replicas, through a real OpenTelemetry Collector rather than through
// agentguard: each replica runs its own guard with its own badger ledger
// and sends its spans and findings over OTLP/HTTP (trace/otelexport's
// Live); the collector's OTLP receiver takes them and contrib's file
// exporter writes them to one file; and "agentguard ledger lessons" on that
// file must say what it says on the replicas' ledger directories together.
//
// It is a module of its own, so that the library does not depend on the
// collector:
//
//	cd examples/fleet && go test ./...
//
// The collector set-up it runs is the one the README's "Send traces to your
// collector" shows: an otlp receiver, a file exporter, and a traces and a
// logs pipeline between them (testdata/collector.yaml).
package fleet
