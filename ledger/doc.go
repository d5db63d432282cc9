// Package ledger is the error ledger: an append-only store, on badger, of
// every violation the guard finds. It is what the rest of agentguard learns
// from: Lessons groups violations by rule and root cause, Query and Entries
// pick out the traces behind them to turn into regression cases, and Export
// writes them as JSON Lines for offline scoring.
//
// # How it fits
//
// The guard reports violations through a small interface of its own,
// guard.Sink:
//
//	Append(ctx context.Context, v trace.Violation) (uint64, error)
//
// *Ledger implements it. The vocabulary — trace.Violation and the
// trace.Finding it carries — lives in package trace, so neither trace nor
// guard imports badger; only this package does, and it never returns one of
// badger's errors: every error is an *Error, matched with errors.Is against
// ErrLocked, ErrCorrupt and ErrClosed, or against the context's error.
//
// # Storage
//
// Each entry is one badger key, "e/" followed by its sequence number as 8
// big-endian bytes, so keys sort in append order; the value is the JSON of
// the Entry. Sequence numbers start at 1 and only grow. At Open the ledger
// reads the largest stored key and continues after it; no counter is stored
// separately and entries are never deleted, so a number is never given
// twice, and a failed commit leaves a gap. Appends commit in sequence
// order, so Query.AfterSeq is a safe cursor for a reader that follows the
// ledger. Queries scan in key order and test every entry against every
// filter; the key layout leaves room for secondary indexes ("i/...") later
// without changing the API.
//
// Open checks the MANIFEST and the checksums of every table file before
// handing the directory to badger, which would otherwise panic in a
// goroutine of its own on a damaged table file; damage is reported as
// ErrCorrupt instead.
//
// # Durability and cost
//
// Figures measured on 2 vCPUs with an ext4 virtio disk; yours will differ.
//
//   - Default: an Append commits to badger's log without an fsync — about
//     15–35 µs, some 30,000–60,000 appends/s (BenchmarkLedgerAppend; the
//     lower figure on a busy machine). A crashed process loses nothing (the
//     data is in the kernel's page cache); a power loss or kernel crash may
//     lose the last appends.
//   - Options.Durable: every Append or AppendBatch is fsynced before it
//     returns — about 1.2 ms on an idle disk, some 850 appends/s, whatever
//     the number of goroutines (badger syncs its log once per commit).
//     AppendBatch spreads one fsync over many violations.
//   - Options.InMemory: nothing touches the disk; for tests. Open takes
//     about 1 ms.
//
// Memory is kept small: 8 MiB memtables (two), 8 MiB block cache, 4 MiB
// index cache, 64 MiB value log files — about 65 MB resident after 100,000
// entries, half of badger's defaults.
//
// # One process per directory
//
// A directory may be open in one Ledger at a time. A second Open, from this
// process or another, fails with ErrLocked. The lock is released by Close,
// or by the operating system when the process dies.
//
// # Example
//
//	l, err := ledger.Open("/var/lib/agentguard/ledger", ledger.Options{})
//	if err != nil {
//		return err
//	}
//	defer l.Close()
//	g := guard.New(guard.Config{Ledger: l})
//	...
//	lessons, err := l.Lessons(ctx, ledger.Query{Since: time.Now().Add(-24 * time.Hour)})
package ledger
