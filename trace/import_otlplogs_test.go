package trace_test

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/agentguard/agentguard/trace"
)

// testdata/otlp_collector.jsonl is what a real OpenTelemetry Collector
// (v0.161.0: the otlp receiver and contrib's file exporter) wrote for three
// guarded replicas sending it OTLP/HTTP: spans and gen_ai.evaluation.result
// log events, one request per line. examples/fleet's test made it
// (go test ./... -keep FILE there).
const collectorFile = "otlp_collector.jsonl"

// TestImportCollectorFile reads the collector's file both ways: the
// findings as the ledger entries the replicas filed, and the traces with
// each log event joined to the span it judged as a gate step.
func TestImportCollectorFile(t *testing.T) {
	path := filepath.Join("testdata", collectorFile)
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	byTrace := map[string]int{}
	for v, err := range trace.ImportOTLPFindings(f, path) {
		if err != nil {
			t.Fatal(err)
		}
		if v.Rule == "" || v.Verdict == "" || v.Dimension == "" || v.Severity == "" || v.Message == "" || v.Time.IsZero() || v.SessionID == "" {
			t.Errorf("violation lacks a field: %+v", v)
		}
		byTrace[v.TraceID]++
	}
	if len(byTrace) != 3 {
		t.Fatalf("findings of %d traces, want the 3 replicas': %v", len(byTrace), byTrace)
	}
	f.Seek(0, 0)
	gates := map[string]int{}
	for tr, err := range trace.Import(f, path, "") {
		if err != nil {
			t.Fatal(err)
		}
		for _, s := range tr.Steps {
			if s.Kind == trace.KindGate {
				gates[tr.ID]++
				if judged := s.Finding.Step; judged < 0 || judged >= s.Index || tr.Steps[judged].Kind == trace.KindGate {
					t.Errorf("trace %s: gate %d judges step %d", tr.ID, s.Index, judged)
				}
			}
		}
	}
	for id, n := range byTrace {
		if gates[id] != n {
			t.Errorf("trace %s: %d gate steps, want its %d findings", id, gates[id], n)
		}
	}
}
