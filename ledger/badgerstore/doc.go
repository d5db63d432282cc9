// Package badgerstore is the error ledger on badger: an append-only store of
// every violation the guard finds. It is what the rest of agentguard learns
// from: Lessons groups violations by rule and root cause, ledger.Query and Entries
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
// *Store implements it. The vocabulary — trace.Violation and the
// trace.Finding it carries — lives in package trace, so neither trace nor
// guard imports badger; only this package does, and it never returns one of
// badger's errors: every error is an *ledger.Error, matched with errors.Is against
// ledger.ErrLocked, ledger.ErrCorrupt, ledger.ErrClosed and ledger.ErrReadOnly, or against the context's
// error. Personal data is masked by package trace/redact, which imports
// nothing but the standard library, so the guard can use it too.
//
// # Storage
//
// Each entry is one badger key, "e/" followed by its sequence number as 8
// big-endian bytes, so keys sort in append order; the value is the JSON of
// the ledger.Entry, at most 256 KiB (longer evidence, then message and question, is
// cut to fit, with trace.TruncationMarker). Sequence numbers start at 1 and
// only grow, and are never given twice, even across a crash of the host:
// they are reserved ahead in blocks of 65,536 in a small file of their own,
// LEDGER-SEQ, synced before any number in the block is used, and Open
// continues after the larger of that reservation and the largest key. Close
// gives back the unused part, so after a clean Close numbering continues
// without a gap; after a crash it skips what was reserved. Appends commit in
// sequence order, so ledger.Query.AfterSeq is a safe cursor for a reader that
// follows the ledger.
//
// # Indexes and lessons
//
// Each entry is written with index keys in the same transaction — "x/",
// a field kind, the field's value and the entry's sequence number, for its
// trace id, session id, rule and each tag — so an entry and its index keys
// are stored together or not at all; the keys and the value of a
// transaction are built in one buffer. The per-minute buckets of entry
// times ("m/", the smallest and largest sequence numbers of each minute)
// are aggregates, like the lessons below. A query reads through the index of its most
// selective filter (trace, then session, then the rarer of rule and tag),
// bounded by the sequence numbers of its time range, and tests each entry
// it reads against the whole filter: it costs O(entries it returns), not
// O(entries stored). A time range alone reads the entries appended
// between the first and the last in the range, which is the range itself
// when entries are appended in time order, as the guard does.
//
// Lessons are aggregates ("a/", per rule and tag) kept in memory,
// updated as entries commit and written, with the minute buckets changed
// since, every 4,096 entries and at Close; Open counts again the entries
// appended after the last write (none after a clean Close, at most 4,096
// after a crash). Ledgers written with index version 1, which wrote the
// minute bucket with each entry, read as they are. So Lessons with no filter
// but rule, tag and limit costs O(rules); with any other filter it
// aggregates the entries the query selects. Reindex rebuilds everything
// from the entries.
//
// A ledger written before the indexes (by an earlier version) is indexed
// by its first read-write Open — it reads every entry once, about 10
// seconds per million here, logged to Options.Logger — and read by a
// scan, correctly but slowly, when opened read-only. Indexes cost appends:
// badger spends about nine allocations on every key it writes to disk,
// and an entry with one tag writes four (entry, trace, rule, tag) besides
// the commit's own. Of the 75 to 82 allocations of an Append (116 before
// the keys of a transaction shared one buffer and the minute buckets
// moved to the checkpoints) one is the ledger's: time.Time's MarshalJSON.
//
// The memory options (see "Memory") cost appends CPU: smaller memtables
// flush four times as often and badger allocates 3 MB for the index of
// every table it builds, however small. Measured side by side on a loaded
// machine, an Append took 20 to 86 µs with them against 24 to 43 µs with
// the previous ones (8 MiB memtables, 2 MiB tables doubling per level),
// and 11 to 13 KB against 4.8 KB; 64 durable appenders made 9,500 to
// 16,600 entries/s against 13,800 to 27,400, 26 to 28 times badger's own
// synced updates under the same options (which sync a smaller memtable
// log, and were three times faster with them) against 15 to 31 times.
//
// Traces (PutTrace, Trace: ledger.TraceStore) live in the same database
// under "t/": the trace id with its length, then "h" for the header (the
// trace without its steps) or "s" and the step's index as 4 big-endian
// bytes, one key per step, so that storing a growing trace again writes
// only its new steps. They are redacted like entries and bounded by
// Options.MaxTraceBytes.
//
// Open checks the MANIFEST and the checksums of every table file before
// handing the directory to badger, which would otherwise panic in a
// goroutine of its own on a damaged table file; damage is reported as
// ledger.ErrCorrupt instead.
//
// # Durability and cost
//
// Figures from go test -bench on 2 vCPUs with an ext4 virtio disk; entries
// of about 400 bytes of JSON, measured before the memory options of
// "Memory" (see "Indexes and lessons" for what those cost). Both the disk (one sync took 0.25 to 1.4 ms
// at different times) and the CPU varied a lot between runs, so compare
// figures from one run only; yours will differ.
//
//   - Default: an Append commits to badger's write-ahead log without a
//     sync — 19 to 23 µs, 44 allocations (3.9 KB), 44,000 to 52,000
//     appends/s from one goroutine (BenchmarkLedgerAppend), 56,000 to
//     73,000/s from 64 (BenchmarkLedgerAppendParallel). A process that
//     crashes loses nothing: what it wrote is in the kernel's page cache. A
//     power loss or kernel crash may lose the last appends; their numbers
//     are not reused.
//   - Options.Durable: Append returns only once its entry is on disk, and
//     appends are group-committed. Each appender encodes its entry on its
//     own goroutine and queues it; one committer goroutine takes everything
//     queued, writes it to badger as one transaction, syncs badger's
//     write-ahead log once (an fdatasync of the active memtable log, the
//     only file an entry goes to) and acknowledges the whole group. No
//     appender syncs on its own goroutine, and none waits for another's
//     sync except by sharing it. Under steady load the committer also
//     lingers — up to one commit's time, at most 2 ms — for the appenders it
//     just acknowledged to come back, so that they share the next sync
//     instead of alternating between two half-size groups; after a
//     time-out it does not linger for one round. One appender alone waits
//     one sync: 0.26 to 0.39 ms here (BenchmarkLedgerAppendDurableOneWriter;
//     up to 1.4 ms when the disk was slow). Sixty-four appenders
//     (BenchmarkLedgerAppendDurable: 21 allocations, 3 KB) made 44,000 to
//     50,000 entries/s, 10 to 18 times badger's own synced db.Update per
//     entry under the same load (BenchmarkBadgerSyncBaseline: 2,700 to
//     4,500 entries/s). When syncs were slow (the baseline at 500 to 1,000
//     entries/s) the ratio was 18 to 36. The ratio is bounded by the 64
//     appenders — no sync can carry more entries than there are appenders
//     waiting, and a sync of 50 entries costs more than a sync of one — and,
//     when syncs are fast, by CPU: on a RAM disk the same code makes 148,000
//     durable entries/s (the default mode 82,000, the baseline 106,000).
//   - Options.InMemory: nothing touches the disk; for tests. Open takes
//     about 1 ms.
//
// AppendBatch writes its violations in one transaction, all or none, and
// with Durable they share one sync: 7 to 8.5 µs per entry in batches of
// 100 (BenchmarkLedgerAppendBatch100).
//
// # Crashes
//
// With Durable, every Append or AppendBatch that returned nil is on disk
// when it returns: a test (TestCrash) kills a process appending from eight
// goroutines with SIGKILL in mid-stream and finds every acknowledged entry
// after reopening, and the next number above everything stored. Entries
// whose commit had begun when the process died may be there too, without
// their appender having heard of it; an entry is always whole or absent,
// and a batch all or nothing. (Likewise a ledger.Query may see an entry a moment
// before its Append returns.) If ctx ends while an entry waits for the
// committer, Append returns ctx's error and the entry is never written;
// once its commit has begun, Append waits for it (one sync) whatever ctx
// does, so the caller always knows. If a sync fails, the ledger stops
// acknowledging durable appends — what the kernel did with the failed
// pages is unknown — and every later one fails with that error; close and
// reopen it.
//
// # One process per directory, and reading while the agent runs
//
// A directory may be open in one Store at a time. A second Open, from this
// process or another, fails with ledger.ErrLocked — read-only opens too, because
// badger locks the directory for them as well (shared, against the
// writer's exclusive lock), and reading files that another process is
// writing and compacting would not be safe anyway. The lock is released by
// Close, or by the operating system when the process dies.
//
// To report on a ledger while the agent keeps appending, the agent's
// process writes a copy with Snapshot — on a schedule, on a signal, or on
// request — and the reporting process opens the copy with
// Options{ReadOnly: true}; Export streams entries as JSON Lines for the
// same purpose. A snapshot is the ledger as it stood when Snapshot began
// (10,000 entries take 70 to 110 ms). A read-only open also works on a
// ledger whose process has ended with Close; one whose process died must
// be opened read-write once first, to recover its log.
//
// # File permissions
//
// A ledger directory is the ledger's own: a read-write Open refuses one
// that holds anything but ledger files, since it changes the modes of what
// is in it. Open creates dir with mode 0700, or sets an existing dir to
// 0700, before badger creates anything in it, and sets every file in it to
// 0600 once badger has opened it; Close does the same once badger has
// written its last file, and Snapshot for the copy. LEDGER-SEQ is created
// 0600. What
// is guaranteed: while a Store is open, and whenever none is, no other
// user can read or reach anything in the directory (root excepted), and
// when no Store has the directory open every file in it is 0600. Files
// that badger creates while the ledger is open — new tables, memtable logs,
// value logs — are created 0666 less the process umask (badger has no
// option for the mode, and changing the umask would affect the whole
// process); they sit inside the 0700 directory and become 0600 at the
// next Close or Open. Read-only opens change no modes. On Windows, modes
// other than the read-only bit do not apply.
//
// # Redaction
//
// Before an entry is encoded, Options.Redact rewrites its Evidence,
// Message and Question, so that what it masks reaches neither the disk nor
// an Export or a Snapshot. The default, redact.String, masks e-mail
// addresses, phone numbers (Chinese mobile numbers, international numbers
// written with + or 00, North American numbers and labelled numbers), card
// numbers (13 to 19 digits, Luhn-checked) and Chinese resident identity
// numbers (checksum-validated), writing "[email]", "[phone]", "[card]"
// and "[id]"; redact.Redactor chooses kinds and can keep a card's last four
// digits, redact.None turns redaction off. Evidence is redacted before it
// is cut to MaxEvidence, so the cut never leaves half a number behind;
// evidence much longer than the cap is redacted in a window twice its size
// and cut well inside it. Trace ids, rule names and tags are stored as
// given; a session id in which the redactor finds personal data is stored
// as a pseudonym that queries by the id as given still find.
//
// # Full disk
//
// badger writes its memtable logs and tables through memory maps of
// sparse files: on a full disk such a write faults, and the process dies
// of SIGBUS with no error returned (reproduced on a 96 MiB tmpfs). Two
// things keep that from happening:
//
//   - The memtable logs — written on every append — are allocated ahead:
//     at Open the current ones get their blocks (fallocate), and the log
//     of the next memtable is created before badger needs it, empty, with
//     its blocks allocated past its end, so badger extends it over blocks
//     that are there. When there is no block to allocate, the ledger
//     learns it as ledger.ErrDiskFull before badger could fault; a log
//     prepared ahead and never taken is removed at Close and Open. (Linux;
//     elsewhere only the reserve below.)
//
//   - A reserve of free space, Options.DiskReserve (64 MiB by default, at
//     least MinDiskReserve): before it writes — Append, AppendBatch,
//     PutTrace, Reindex — the ledger checks the disk's free space (statfs,
//     at most every 50 ms or every megabyte written), and while less than
//     the reserve is free it writes nothing and returns an error matching
//     ledger.ErrDiskFull; Open on such a disk fails the same way. Once
//     space is freed, appends succeed again.
//
//   - A watcher reads the free space every 2 ms: below the reserve it has
//     the next append refused, so badger starts no flush or compaction
//     while the disk fills, and it holds a 16 MiB ballast file that it
//     gives back when less than 1 MiB is free, so that the tables badger
//     is writing then can be finished; the ballast and the next memtable
//     log count toward the reserve.
//
// TestDiskFullTmpfs fills a real tmpfs with the ledger's own entries, and
// TestExternalDiskFill has another process take all of it mid-run, as fast
// as memory copies (when the test may mount one; .ci/run runs both as
// root): no run dies writing a memtable log, where every run died before;
// about one in ten still dies in a table badger's compaction was writing
// at the moment the last byte went. Only badger can prevent that (by
// allocating a table file before mapping it); a larger reserve makes it
// rarer, since appends, and so flushes and compactions, stop earlier.
//
// # Size
//
// Nothing a model sends can make an entry too large to store: Message and
// Question are cut to 4096 bytes (DefaultMaxMessage) and Evidence to
// Options.MaxEvidence, with trace.TruncationMarker; an entry whose rule,
// ids or tags alone are too large is stored reduced (each cut to 1 KiB,
// at most 32 tags), never refused. A batch larger than one transaction is
// split into several.
//
// # Memory
//
// Memory is kept small: 2 MiB memtables (two), 512 KiB tables at every
// level, three tables in level 0 before a compaction and eight before
// writes stall, 4 MiB block cache, 2 MiB index cache, 1 MiB value log
// files (entries never go there). Queries stream in pages of 256 entries;
// only Query, which returns a slice, holds its whole result. What a query
// allocates does not grow with the ledger (BenchmarkLedgerQueries: B/op).
//
// TestPeakRSS -ledger.rss 1000000 measures the peak resident memory
// (VmHWM, which counts the pages of badger's memory-mapped files) of three
// processes on a ledger of a million entries (2 vCPUs, a loaded machine):
//
//   - one that reopens it: 52 MiB (25 anonymous, 35 file-backed), Close
//     included; the appending process had left nothing to compact. With
//     the previous options the reopening process compacted for 6 s and
//     peaked at 324 MiB, and at 1 GB by the end of its Close; with 4 MiB
//     memtables and 1 MiB tables, at 81 MiB while it compacted and 149
//     MiB by the end of its Close;
//   - one that reads it: 44 to 52 MiB for the entries of a trace or a
//     rule (mostly the file-backed pages of the tables Open touches); 71
//     MiB (27 anonymous, 45 file-backed; was 85) while a day's 33,000
//     entries stream by; 139 MiB (113 file-backed; was 162) while every
//     entry does;
//   - one that appends the million entries, one Append at a time: 386 to
//     563 MiB between runs (226 to 357 anonymous, 177 to 210 file-backed;
//     the ledger is 150 MB on disk), was 1.8 GB. badger's compactions run
//     table builders that hold a table's blocks uncompressed and stop at
//     its size compressed — several times the table size when entries
//     compress well — a dozen of them per compaction and two compactions
//     at once, and the Go heap grows to twice what is live before it is
//     collected; the tables badger writes are written through memory maps,
//     and stay resident until they are compacted away or the kernel needs
//     the memory, so the file-backed part is about the live tables. Tables
//     of 256 KiB took the anonymous part to 211 MiB in one run and doubled
//     the files; no compression halved it (122 MiB) but took the tables to
//     565 MB and the file-backed part to 625 MiB.
//
// GOMEMLIMIT bounds the heap, where badger's builders are; the ledger does
// not set it, since it is the whole process's. Measured one after the
// other (TestPeakRSS, 2 vCPUs): with GOMEMLIMIT=96MiB, appending a
// million entries peaked at 286 MiB (95 anonymous) against 411 (224) and
// ran at 0.60× the rate (12,700 entries/s against 21,300); at 100,000
// entries, 115 to 118 MiB against 198 to 211, at 0.88×. A limit of 64 MiB
// or less is under what the compactions hold live: the collector runs
// without pause, the rate halves, and the peak barely moves (86 to 102 MiB
// at 100,000).
//
// CI runs TestPeakRSS at 100,000 entries (.ci/run): the appending process
// is held under 320 MiB and the others under 128 (one whose reopening
// compacts reaches 76 to 80 MiB), bounds that catch a regression, not the
// 64 MiB target.
//
// # Example
//
//	l, err := badgerstore.Open("/var/lib/agentguard/ledger", badgerstore.Options{Durable: true})
//	if err != nil {
//		return err
//	}
//	defer l.Close()
//	g := guard.New(guard.Config{Observe: guard.Observation{Ledger: l}}) // findings and traces
//	defer g.Close(ctx) // delivers the findings still queued for the ledger
//	...
//	lessons, err := l.Lessons(ctx, ledger.Query{Since: time.Now().Add(-24 * time.Hour)})
//	...
//	err = l.Snapshot(ctx, "/var/lib/agentguard/report/ledger-"+time.Now().Format("20060102T150405"))
package badgerstore
