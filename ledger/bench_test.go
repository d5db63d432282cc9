package ledger

import (
	"strings"
	"testing"

	"github.com/agentguard/agentguard/trace"
)

func benchAppend(b *testing.B, opts Options) {
	dir := ""
	if !opts.InMemory {
		dir = b.TempDir()
	}
	l, err := Open(dir, opts)
	if err != nil {
		b.Fatal(err)
	}
	defer l.Close()
	v := violation("grounding", "trace-0123456789", "no-citation")
	v.Evidence = strings.Repeat("x", 200)
	b.ReportAllocs()
	for b.Loop() {
		if _, err := l.Append(ctx, v); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkLedgerAppend appends to an on-disk ledger in the default mode.
func BenchmarkLedgerAppend(b *testing.B) { benchAppend(b, Options{}) }

// BenchmarkLedgerAppendInMemory is the baseline without a disk.
func BenchmarkLedgerAppendInMemory(b *testing.B) { benchAppend(b, Options{InMemory: true}) }

// BenchmarkLedgerAppendDurable fsyncs every append.
func BenchmarkLedgerAppendDurable(b *testing.B) { benchAppend(b, Options{Durable: true}) }

// BenchmarkLedgerAppendBatch100 appends 100 violations per call, on disk.
func BenchmarkLedgerAppendBatch100(b *testing.B) {
	l, err := Open(b.TempDir(), Options{})
	if err != nil {
		b.Fatal(err)
	}
	defer l.Close()
	v := violation("grounding", "trace-0123456789", "no-citation")
	v.Evidence = strings.Repeat("x", 200)
	vs := make([]trace.Violation, 100)
	for i := range vs {
		vs[i] = v
	}
	b.ReportAllocs()
	for b.Loop() {
		if _, err := l.AppendBatch(ctx, vs); err != nil {
			b.Fatal(err)
		}
	}
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N*len(vs)), "ns/entry")
}

// BenchmarkLedgerQuery scans 10,000 entries on disk for one rule.
func BenchmarkLedgerQuery(b *testing.B) {
	l, err := Open(b.TempDir(), Options{})
	if err != nil {
		b.Fatal(err)
	}
	defer l.Close()
	vs := make([]trace.Violation, 100)
	for i := 0; i < 100; i++ {
		for j := range vs {
			vs[j] = violation("grounding", "trace-0123456789", "no-citation")
			if j%10 == 0 {
				vs[j].Rule = "loop"
			}
		}
		if _, err := l.AppendBatch(ctx, vs); err != nil {
			b.Fatal(err)
		}
	}
	b.ReportAllocs()
	for b.Loop() {
		es, err := l.Query(ctx, Query{Rule: "loop"})
		if err != nil || len(es) != 1000 {
			b.Fatal(len(es), err)
		}
	}
}
