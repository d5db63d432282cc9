package badgerstore

import (
	"encoding/binary"
	"encoding/json"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/agentguard/agentguard/ledger"
	"github.com/agentguard/agentguard/trace"
	"github.com/dgraph-io/badger/v4"
)

// benchWriters is how many goroutines append at once in the concurrent
// benchmarks: an agent server with 64 sessions in flight.
const benchWriters = 64

// benchViolation is the violation every benchmark appends: about 400 bytes
// of JSON.
func benchViolation() trace.Violation {
	v := violation("grounding", "trace-0123456789", "no-citation")
	v.Evidence = strings.Repeat("x", 200)
	return v
}

// setWriters makes b.RunParallel start benchWriters goroutines (or the
// next multiple of GOMAXPROCS) and reports their number.
func setWriters(b *testing.B) {
	procs := runtime.GOMAXPROCS(0)
	p := (benchWriters + procs - 1) / procs
	b.SetParallelism(p)
	b.ReportMetric(float64(p*procs), "writers")
}

func reportRate(b *testing.B, entries int) {
	b.ReportMetric(float64(entries)/b.Elapsed().Seconds(), "entries/s")
}

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
	v := benchViolation()
	b.ReportAllocs()
	for b.Loop() {
		if _, err := l.Append(ctx, v); err != nil {
			b.Fatal(err)
		}
	}
	reportRate(b, b.N)
}

// BenchmarkLedgerAppend appends to an on-disk ledger in the default mode,
// one goroutine.
func BenchmarkLedgerAppend(b *testing.B) { benchAppend(b, Options{}) }

// BenchmarkLedgerAppendInMemory is the baseline without a disk.
func BenchmarkLedgerAppendInMemory(b *testing.B) { benchAppend(b, Options{InMemory: true}) }

// BenchmarkLedgerAppendDurableOneWriter is the latency of a durable append
// with nobody to share its sync.
func BenchmarkLedgerAppendDurableOneWriter(b *testing.B) { benchAppend(b, Options{Durable: true}) }

// BenchmarkLedgerAppendDurable appends from 64 goroutines to a Durable
// ledger; each Append returns once its entry is synced. Compare its
// entries/s with BenchmarkBadgerSyncBaseline's.
func BenchmarkLedgerAppendDurable(b *testing.B) { benchAppendParallel(b, Options{Durable: true}) }

// BenchmarkLedgerAppendParallel is the default mode under the same 64
// goroutines.
func BenchmarkLedgerAppendParallel(b *testing.B) { benchAppendParallel(b, Options{}) }

func benchAppendParallel(b *testing.B, opts Options) {
	l, err := Open(b.TempDir(), opts)
	if err != nil {
		b.Fatal(err)
	}
	defer l.Close()
	v := benchViolation()
	setWriters(b)
	b.ReportAllocs()
	b.RunParallel(func(pb *testing.PB) {
		for pb.Next() {
			if _, err := l.Append(ctx, v); err != nil {
				b.Error(err)
				return
			}
		}
	})
	reportRate(b, b.N)
}

// BenchmarkBadgerSyncBaseline is what BenchmarkLedgerAppendDurable
// improves on: badger alone, with the ledger's options and SyncWrites, one
// db.Update per entry of the same size from the same 64 goroutines.
func BenchmarkBadgerSyncBaseline(b *testing.B) {
	db, err := badger.Open(badgerOptions(b.TempDir(), Options{}).WithSyncWrites(true))
	if err != nil {
		b.Fatal(err)
	}
	defer db.Close()
	body, err := json.Marshal(ledger.Entry{Seq: 1 << 40, Violation: benchViolation()})
	if err != nil {
		b.Fatal(err)
	}
	var seq atomic.Uint64
	setWriters(b)
	b.ReportAllocs()
	b.RunParallel(func(pb *testing.PB) {
		for pb.Next() {
			k := make([]byte, len(entryPrefix)+8)
			copy(k, entryPrefix)
			binary.BigEndian.PutUint64(k[len(entryPrefix):], seq.Add(1))
			if err := db.Update(func(txn *badger.Txn) error { return txn.Set(k, body) }); err != nil {
				b.Error(err)
				return
			}
		}
	})
	reportRate(b, b.N)
}

// BenchmarkLedgerAppendBatch100 appends 100 violations per call, on disk.
func BenchmarkLedgerAppendBatch100(b *testing.B) {
	l, err := Open(b.TempDir(), Options{})
	if err != nil {
		b.Fatal(err)
	}
	defer l.Close()
	v := benchViolation()
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
	reportRate(b, b.N*len(vs))
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
		es, err := l.Query(ctx, ledger.Query{Rule: "loop"})
		if err != nil || len(es) != 1000 {
			b.Fatal(len(es), err)
		}
	}
}

// BenchmarkLedgerSnapshot copies a ledger of 10,000 entries.
func BenchmarkLedgerSnapshot(b *testing.B) {
	l, err := Open(b.TempDir(), Options{})
	if err != nil {
		b.Fatal(err)
	}
	defer l.Close()
	vs := make([]trace.Violation, 100)
	for i := range vs {
		vs[i] = benchViolation()
	}
	for i := 0; i < 100; i++ {
		if _, err := l.AppendBatch(ctx, vs); err != nil {
			b.Fatal(err)
		}
	}
	root := b.TempDir()
	b.ReportAllocs()
	i := 0
	for b.Loop() {
		i++
		if err := l.Snapshot(ctx, filepath.Join(root, strconv.Itoa(i))); err != nil {
			b.Fatal(err)
		}
	}
}
