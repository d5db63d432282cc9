// Package ledger is the vocabulary of agentguard's error ledger: the Entry a
// violation becomes once stored, the Query that selects entries, the Lesson
// that aggregates them by rule and root cause, the errors a store returns,
// and the interfaces its consumers need (Appender, Reader, Store), and
// TraceStore, which keeps the traces behind the entries (RedactTrace
// de-identifies a trace the way entries are).
//
// It links no storage engine. The store that ships, on badger, is
// ledger/badgerstore; the guard, the health check and continuous
// evaluation depend only on the interfaces here, so a program that reads a
// ledger export, or tests a guard, never links badger.
//
// # Example
//
//	st, err := badgerstore.Open("/var/lib/agentguard/ledger", badgerstore.Options{Durable: true})
//	if err != nil {
//		return err
//	}
//	defer st.Close()
//	g := guard.New(guard.Config{Observe: guard.Observation{Ledger: st}})
//	defer g.Close(ctx) // delivers the findings still queued for the ledger
//	...
//	lessons, err := st.Lessons(ctx, ledger.Query{Since: time.Now().Add(-24 * time.Hour)})
package ledger
