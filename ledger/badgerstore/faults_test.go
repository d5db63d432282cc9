package badgerstore

import (
	"errors"
	"fmt"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/agentguard/agentguard/ledger"
	"github.com/agentguard/agentguard/trace"
)

// Model-controlled strings of any size become entries: capped with a
// marker, or reduced, never refused. findings = entries.
func TestOversizedFindingsAreStored(t *testing.T) {
	oneGoroutine(t)
	huge := strings.Repeat("2026-12-01", 3_000) // a 30 KB "date"
	cases := []struct {
		name string
		n    int
		mod  func(v *trace.Violation)
	}{
		{"30 KB message and evidence", 400, func(v *trace.Violation) { v.Message, v.Evidence = "bad date "+huge, huge }},
		{"2 MB message, evidence, question", 70, func(v *trace.Violation) {
			big := strings.Repeat("日期", 350_000)
			v.Message, v.Evidence, v.Question = big, big, big
		}},
		{"2 MB tag", 70, func(v *trace.Violation) { v.Tags = []string{strings.Repeat("t", 2<<20)} }},
		{"10,000 tags", 70, func(v *trace.Violation) {
			for i := range 10_000 {
				v.Tags = append(v.Tags, fmt.Sprint(strings.Repeat("x", 100), i))
			}
		}},
		{"2 MB trace id", 70, func(v *trace.Violation) { v.TraceID = strings.Repeat("id", 1<<20) }},
	}
	for _, durable := range []bool{true, false} {
		for _, c := range cases {
			t.Run(fmt.Sprintf("%s/durable=%v", c.name, durable), func(t *testing.T) {
				l := openMem(t, Options{Durable: durable})
				vs := make([]trace.Violation, c.n)
				for i := range vs {
					vs[i] = violation("date-check", fmt.Sprint("trace-", i%7))
					c.mod(&vs[i])
				}
				// As the guard delivers them: batches of up to 64.
				for i := 0; i < len(vs); i += 64 {
					if _, err := l.AppendBatch(ctx, vs[i:min(i+64, len(vs))]); err != nil {
						t.Fatal(err)
					}
				}
				n := 0
				for e, err := range l.Entries(ctx, ledger.Query{Rule: "date-check"}) {
					if err != nil {
						t.Fatal(err)
					}
					if len(e.Message) > DefaultMaxMessage || len(e.Evidence) > DefaultMaxEvidence {
						t.Fatalf("entry %d: message %d bytes, evidence %d", e.Seq, len(e.Message), len(e.Evidence))
					}
					n++
				}
				if n != len(vs) {
					t.Errorf("%d findings, %d entries", len(vs), n)
				}
			})
		}
	}
}

// freeDisk is an injected free-space reading.
type freeDisk struct{ free atomic.Uint64 }

func (d *freeDisk) read(string) (uint64, error) { return d.free.Load(), nil }

// With less free space than the reserve, Open, Append, AppendBatch and
// PutTrace write nothing and fail with ErrDiskFull; once space returns, the
// ledger goes on by itself.
func TestDiskFullReserve(t *testing.T) {
	const reserve = DefaultDiskReserve
	if _, err := Open(t.TempDir(), Options{DiskReserve: MinDiskReserve - 1}); err == nil || !strings.Contains(err.Error(), "below") {
		t.Errorf("Open with a reserve below MinDiskReserve = %v, want it refused", err)
	}
	disk := &freeDisk{}
	disk.free.Store(reserve / 2)
	dir := t.TempDir()
	opts := Options{DiskReserve: reserve, freeSpace: disk.read}
	_, err := Open(dir, opts)
	var le *ledger.Error
	if !errors.Is(err, ledger.ErrDiskFull) || !errors.As(err, &le) || le.Op != "open" {
		t.Fatalf("Open on a full disk = %v, want ErrDiskFull", err)
	}
	for _, durable := range []bool{false, true} {
		t.Run(fmt.Sprint("durable=", durable), func(t *testing.T) {
			// Just over the reserve: every append reads the disk again.
			disk.free.Store(reserve + 100)
			opts.Durable = durable
			l, err := Open(dir, opts)
			if err != nil {
				t.Fatal(err)
			}
			defer l.Close()
			before, _ := l.Query(ctx, ledger.Query{})
			// What the ledger holds allocated for badger — the next memtable
			// log and the ballast — counts as its own.
			disk.free.Store(reserve - 1 - walLog - ballastSize)

			if _, err := l.Append(ctx, violation("r", "t")); !errors.Is(err, ledger.ErrDiskFull) {
				t.Errorf("Append on a full disk = %v", err)
			}
			if _, err := l.AppendBatch(ctx, []trace.Violation{violation("r", "t"), violation("r", "t")}); !errors.Is(err, ledger.ErrDiskFull) {
				t.Errorf("AppendBatch on a full disk = %v", err)
			}
			if err := l.PutTrace(ctx, sampleTrace("t", 2)); !errors.Is(err, ledger.ErrDiskFull) {
				t.Errorf("PutTrace on a full disk = %v", err)
			}
			if es, _ := l.Query(ctx, ledger.Query{}); len(es) != len(before) {
				t.Errorf("%d entries written on a full disk", len(es)-len(before))
			}
			disk.free.Store(reserve + 10_000)
			if _, err := l.Append(ctx, violation("r", "t")); err != nil {
				t.Errorf("Append once space returned = %v", err)
			}
		})
	}
	// A negative reserve turns the check off.
	disk.free.Store(0)
	l, err := Open(t.TempDir(), Options{DiskReserve: -1, freeSpace: disk.read})
	if err != nil {
		t.Fatal(err)
	}
	mustAppend(t, l, violation("r", "t"))
	l.Close()
}
