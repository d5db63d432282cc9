package badgerstore_test

import (
	"context"
	"errors"
	"fmt"
	"log"
	"os"
	"path/filepath"
	"time"

	"github.com/agentguard/agentguard/ledger"
	"github.com/agentguard/agentguard/ledger/badgerstore"
	"github.com/agentguard/agentguard/trace"
	"github.com/agentguard/agentguard/trace/redact"
)

// at is a fixed clock for the examples.
var at = time.Date(2025, 3, 1, 12, 0, 0, 0, time.UTC)

func v(minute int, traceID, rule string, tags ...string) trace.Violation {
	return trace.Violation{
		Time:    at.Add(time.Duration(minute) * time.Minute),
		TraceID: traceID,
		Finding: trace.Finding{
			Rule: rule, Verdict: trace.Block, Dimension: trace.Accuracy,
			Severity: trace.SeverityError, Message: "answer cites no retrieved document", Tags: tags,
		},
	}
}

func ExampleOpen() {
	dir, err := os.MkdirTemp("", "ledger")
	if err != nil {
		log.Fatal(err)
	}
	defer os.RemoveAll(dir)

	l, err := badgerstore.Open(dir, badgerstore.Options{Durable: true})
	if err != nil {
		log.Fatal(err)
	}
	defer l.Close()

	// One Ledger per directory: a second Open fails until the first closes.
	_, err = badgerstore.Open(dir, badgerstore.Options{})
	fmt.Println(errors.Is(err, ledger.ErrLocked))

	// For tests, keep everything in memory.
	mem, err := badgerstore.Open("", badgerstore.Options{InMemory: true})
	if err != nil {
		log.Fatal(err)
	}
	defer mem.Close()
	fmt.Printf("%q\n", mem.Path())
	// Output:
	// true
	// ""
}

func ExampleStore_Append() {
	ctx := context.Background()
	l, err := badgerstore.Open("", badgerstore.Options{InMemory: true})
	if err != nil {
		log.Fatal(err)
	}
	defer l.Close()

	seq, err := l.Append(ctx, v(0, "trace-1", "grounding", "no-citation"))
	if err != nil {
		log.Fatal(err)
	}
	seqs, err := l.AppendBatch(ctx, []trace.Violation{
		v(1, "trace-2", "grounding"),
		v(2, "trace-2", "loop"),
	})
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println(seq, seqs)
	// Output: 1 [2 3]
}

func ExampleStore_Query() {
	ctx := context.Background()
	l, _ := badgerstore.Open("", badgerstore.Options{InMemory: true})
	defer l.Close()
	for i, id := range []string{"trace-1", "trace-2", "trace-3"} {
		l.Append(ctx, v(i, id, "grounding", "no-citation"))
	}
	l.Append(ctx, v(3, "trace-3", "loop"))

	es, err := l.Query(ctx, ledger.Query{Rule: "grounding", Since: at.Add(time.Minute)})
	if err != nil {
		log.Fatal(err)
	}
	for _, e := range es {
		fmt.Println(e.Seq, e.TraceID, e.Rule, e.Time.Format(time.Kitchen))
	}

	// Resume after the last entry read; Entries streams page by page.
	for e, err := range l.Entries(ctx, ledger.Query{AfterSeq: es[len(es)-1].Seq}) {
		if err != nil {
			log.Fatal(err)
		}
		fmt.Println(e.Seq, e.TraceID, e.Rule)
	}
	// Output:
	// 2 trace-2 grounding 12:01PM
	// 3 trace-3 grounding 12:02PM
	// 4 trace-3 loop
}

func ExampleStore_Lessons() {
	ctx := context.Background()
	l, _ := badgerstore.Open("", badgerstore.Options{InMemory: true})
	defer l.Close()
	l.AppendBatch(ctx, []trace.Violation{
		v(0, "trace-1", "grounding", "no-citation"),
		v(1, "trace-2", "grounding", "no-citation", "stale-doc"),
		v(2, "trace-2", "grounding", "no-citation"),
		v(3, "trace-3", "tool-allowlist"),
	})

	lessons, err := l.Lessons(ctx, ledger.Query{})
	if err != nil {
		log.Fatal(err)
	}
	for _, ls := range lessons {
		fmt.Printf("%-15s %-12q %d  %v\n", ls.Rule, ls.Tag, ls.Count, ls.Examples)
	}
	// Output:
	// grounding       "no-citation" 3  [trace-1 trace-2]
	// grounding       "stale-doc"  1  [trace-2]
	// tool-allowlist  ""           1  [trace-3]
}

func ExampleStore_Export() {
	ctx := context.Background()
	l, _ := badgerstore.Open("", badgerstore.Options{InMemory: true})
	defer l.Close()
	l.Append(ctx, v(0, "trace-1", "grounding", "no-citation"))

	n, err := l.Export(ctx, os.Stdout, ledger.Query{})
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println(n, "entry")
	// Output:
	// {"seq":1,"time":"2025-03-01T12:00:00Z","trace_id":"trace-1","rule":"grounding","step":0,"verdict":"block","dimension":"accuracy","severity":"error","message":"answer cites no retrieved document","tags":["no-citation"]}
	// 1 entry
}

func ExampleStore_Snapshot() {
	ctx := context.Background()
	root, err := os.MkdirTemp("", "ledger")
	if err != nil {
		log.Fatal(err)
	}
	defer os.RemoveAll(root)

	// The agent's process holds its ledger.
	l, err := badgerstore.Open(filepath.Join(root, "live"), badgerstore.Options{Durable: true})
	if err != nil {
		log.Fatal(err)
	}
	defer l.Close()
	l.Append(ctx, v(0, "trace-1", "grounding", "no-citation"))
	l.Append(ctx, v(1, "trace-2", "loop"))

	// Nobody else can open it, not even read-only...
	_, err = badgerstore.Open(l.Path(), badgerstore.Options{ReadOnly: true})
	fmt.Println(errors.Is(err, ledger.ErrLocked))

	// ...so the agent writes a copy, which any process can read.
	snap := filepath.Join(root, "snap")
	if err := l.Snapshot(ctx, snap); err != nil {
		log.Fatal(err)
	}
	r, err := badgerstore.Open(snap, badgerstore.Options{ReadOnly: true})
	if err != nil {
		log.Fatal(err)
	}
	defer r.Close()
	es, _ := r.Query(ctx, ledger.Query{})
	fmt.Println(len(es), "entries")
	_, err = r.Append(ctx, v(2, "trace-3", "loop"))
	fmt.Println(errors.Is(err, ledger.ErrReadOnly))
	// Output:
	// true
	// 2 entries
	// true
}

func ExampleOptions_redact() {
	ctx := context.Background()
	x := v(0, "trace-1", "pii")
	x.Message = "refund to ann@example.com"
	x.Evidence = `{"card":"4111 1111 1111 1111","phone":"+86 138 0013 8000"}`

	for _, opts := range []badgerstore.Options{
		{InMemory: true}, // the default redactor
		{InMemory: true, Redact: redact.Redactor{CardLast4: true, Skip: redact.Email}.Redact},
		{InMemory: true, Redact: redact.None},
	} {
		l, _ := badgerstore.Open("", opts)
		l.Append(ctx, x)
		es, _ := l.Query(ctx, ledger.Query{})
		fmt.Println(es[0].Message, es[0].Evidence)
		l.Close()
	}
	// Output:
	// refund to [email] {"card":"[card]","phone":"[phone]"}
	// refund to ann@example.com {"card":"[card-1111]","phone":"[phone]"}
	// refund to ann@example.com {"card":"4111 1111 1111 1111","phone":"+86 138 0013 8000"}
}
