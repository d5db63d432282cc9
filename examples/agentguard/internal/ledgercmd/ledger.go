// Package ledgercmd is the verb "agentguard ledger": it reads the error
// ledgers that the guard (and continuous evaluation) write, offline.
//
//	agentguard ledger lessons [-json] [filters] DIR...
//	agentguard ledger query [-json] [filters] DIR...
//	agentguard ledger export [-o FILE] [filters] DIR...
//
// Each DIR is a ledger directory (ledger/badgerstore), opened read-only; a
// directory that a running agent holds cannot be opened: copy a snapshot
// of it. Several directories — snapshots taken from several replicas —
// are read as one ledger: lessons merge across them, and query and export
// list their entries in time order.
//
// The filters select entries (see ledger.Query): -rule, -trace, -session,
// -tag, -dimension, -since and -until.
package ledgercmd

import (
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"iter"
	"slices"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/agentguard/agentguard/examples/agentguard/internal/cli"
	"github.com/agentguard/agentguard/ledger"
	"github.com/agentguard/agentguard/ledger/badgerstore"
	"github.com/agentguard/agentguard/trace"
)

var verb = cli.Verb{
	Name:     "ledger",
	Synopsis: "lessons|query|export [flags] DIR...",
	Doc: `Reads error ledgers offline:
  lessons  what the ledger learned, by rule and root-cause tag: count, first
           and last seen, example trace ids
  query    the entries a filter selects, one line each (-json: JSON Lines)
  export   the entries as JSON Lines, to stdout or -o FILE
Several DIRs are read as one ledger. "agentguard ledger SUBVERB -h" for each.`,
	MinArgs: 1,
	MaxArgs: -1,
	ArgName: "DIR",
}

// subverb is one of the ledger's verbs.
type subverb struct {
	cli.Verb
	run func(ctx context.Context, s *session) int
}

var subverbs = map[string]subverb{
	"lessons": {cli.Verb{Name: "ledger lessons", Synopsis: "[-json] [filters] DIR...",
		Doc: "Prints the lessons of the ledgers, by rule and root-cause tag, largest count first.", MinArgs: 1, MaxArgs: -1, ArgName: "DIR"}, lessons},
	"query": {cli.Verb{Name: "ledger query", Synopsis: "[-json] [-limit N] [filters] DIR...",
		Doc: "Prints the entries the filters select, oldest first.", MinArgs: 1, MaxArgs: -1, ArgName: "DIR"}, query},
	"export": {cli.Verb{Name: "ledger export", Synopsis: "[-o FILE] [filters] DIR...",
		Doc: "Writes the entries the filters select as JSON Lines (ledger.Entry), oldest first.", MinArgs: 1, MaxArgs: -1, ArgName: "DIR"}, export},
}

// session is one run of a subverb: its flags, parsed, and its output.
type session struct {
	verb           cli.Verb
	fs             *flag.FlagSet
	dirs           []string
	q              ledger.Query
	json           bool
	out            string
	stdout, stderr io.Writer
}

// Run is the verb: it runs the subverb args name and returns the exit
// status (see package cli).
func Run(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	if len(args) == 0 {
		return verb.Fail(stderr, verb.FlagSet(), "missing subverb")
	}
	switch args[0] {
	case "-h", "-help", "--help", "help":
		verb.Usage(stdout, verb.FlagSet())
		return cli.ExitPassed
	}
	sv, ok := subverbs[args[0]]
	if !ok {
		return verb.Fail(stderr, verb.FlagSet(), fmt.Sprintf("unknown subverb %q", args[0]))
	}
	s := &session{verb: sv.Verb, fs: sv.FlagSet(), stdout: stdout, stderr: stderr}
	var rule, traceID, sessionID, tag, dim, since, until string
	var limit int
	s.fs.StringVar(&rule, "rule", "", "only entries of this rule")
	s.fs.StringVar(&traceID, "trace", "", "only entries of this trace id")
	s.fs.StringVar(&sessionID, "session", "", "only entries of this session id")
	s.fs.StringVar(&tag, "tag", "", "only entries with this root-cause tag")
	s.fs.StringVar(&dim, "dimension", "", "only entries of this dimension (accuracy, coherence, memory, stability, efficiency)")
	s.fs.StringVar(&since, "since", "", "only entries at or after T: RFC 3339, YYYY-MM-DD, or a duration before now (24h)")
	s.fs.StringVar(&until, "until", "", "only entries before T, as for -since")
	switch args[0] {
	case "lessons", "query":
		s.fs.BoolVar(&s.json, "json", false, "print JSON (lessons: one array; query: JSON Lines)")
	case "export":
		s.fs.StringVar(&s.out, "o", "", "write to FILE, replaced only when the export succeeds (default: standard output)")
	}
	if args[0] == "query" {
		s.fs.IntVar(&limit, "limit", 0, "print at most N entries (0: all)")
	}
	dirs, code, ok := sv.Parse(s.fs, args[1:], stdout, stderr)
	if !ok {
		return code
	}
	s.dirs = dirs
	s.q = ledger.Query{Rule: rule, TraceID: traceID, SessionID: sessionID, Tag: tag, Dimension: trace.Dimension(dim), Limit: limit}
	now := time.Now()
	var err error
	if since != "" {
		if s.q.Since, err = cli.ParseTime("since", since, now); err != nil {
			return sv.Fail(stderr, s.fs, err.Error())
		}
	}
	if until != "" {
		if s.q.Until, err = cli.ParseTime("until", until, now); err != nil {
			return sv.Fail(stderr, s.fs, err.Error())
		}
	}
	if limit < 0 {
		return sv.Fail(stderr, s.fs, fmt.Sprintf("-limit %d: want 0 or more", limit))
	}
	return sv.run(ctx, s)
}

// stores opens every directory read-only; close closes them.
func (s *session) stores() (stores []*badgerstore.Store, closeAll func(), err error) {
	closeAll = func() {
		for _, st := range stores {
			st.Close()
		}
	}
	for _, d := range s.dirs {
		st, err := badgerstore.Open(d, badgerstore.Options{ReadOnly: true})
		if err != nil {
			closeAll()
			if errors.Is(err, ledger.ErrLocked) {
				err = fmt.Errorf("%w (a running agent holds it: copy a snapshot and read that)", err)
			}
			return nil, nil, err
		}
		stores = append(stores, st)
	}
	return stores, closeAll, nil
}

// entries streams the entries q selects from every store, merged by time
// (each store's entries are in sequence order, which is time order but
// for clock steps).
func entries(ctx context.Context, stores []*badgerstore.Store, q ledger.Query) iter.Seq2[ledger.Entry, error] {
	if len(stores) == 1 {
		return stores[0].Entries(ctx, q)
	}
	return func(yield func(ledger.Entry, error) bool) {
		type head struct {
			next func() (ledger.Entry, error, bool)
			stop func()
			e    ledger.Entry
		}
		var heads []*head
		defer func() {
			for _, h := range heads {
				h.stop()
			}
		}()
		for _, st := range stores {
			all := q
			all.Limit = 0
			next, stop := iter.Pull2(st.Entries(ctx, all))
			h := &head{next: next, stop: stop}
			e, err, ok := next()
			if err != nil {
				yield(ledger.Entry{}, err)
				stop()
				return
			}
			if !ok {
				stop()
				continue
			}
			h.e = e
			heads = append(heads, h)
		}
		for n := 0; len(heads) > 0 && (q.Limit <= 0 || n < q.Limit); n++ {
			i := 0
			for j, h := range heads {
				if h.e.Time.Before(heads[i].e.Time) {
					i = j
				}
			}
			h := heads[i]
			if !yield(h.e, nil) {
				return
			}
			e, err, ok := h.next()
			if err != nil {
				yield(ledger.Entry{}, err)
				return
			}
			if !ok {
				h.stop()
				heads = slices.Delete(heads, i, i+1)
				continue
			}
			h.e = e
		}
	}
}

func (s *session) fail(err error) int {
	s.verb.Errorf(s.stderr, "%v", err)
	return cli.ExitUsage
}

func lessons(ctx context.Context, s *session) int {
	stores, closeAll, err := s.stores()
	if err != nil {
		return s.fail(err)
	}
	defer closeAll()
	ls, err := ledger.Learn(entries(ctx, stores, ledger.Query{
		Rule: s.q.Rule, TraceID: s.q.TraceID, SessionID: s.q.SessionID, Tag: s.q.Tag,
		Dimension: s.q.Dimension, Since: s.q.Since, Until: s.q.Until}), s.q)
	if err != nil {
		return s.fail(err)
	}
	if s.json {
		enc := json.NewEncoder(s.stdout)
		enc.SetEscapeHTML(false)
		enc.SetIndent("", "  ")
		if ls == nil {
			ls = []ledger.Lesson{}
		}
		if err := enc.Encode(ls); err != nil {
			return s.fail(err)
		}
		return cli.ExitPassed
	}
	if len(ls) == 0 {
		fmt.Fprintln(s.stdout, "no entries")
		return cli.ExitPassed
	}
	tw := tabwriter.NewWriter(s.stdout, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "RULE\tTAG\tCOUNT\tFIRST SEEN\tLAST SEEN\tEXAMPLE TRACES")
	for _, l := range ls {
		fmt.Fprintf(tw, "%s\t%s\t%d\t%s\t%s\t%s\n", l.Rule, cmp.Or(l.Tag, "-"), l.Count,
			l.FirstSeen.UTC().Format(time.RFC3339), l.LastSeen.UTC().Format(time.RFC3339), strings.Join(l.Examples, " "))
	}
	if err := tw.Flush(); err != nil {
		return s.fail(err)
	}
	return cli.ExitPassed
}

func query(ctx context.Context, s *session) int {
	stores, closeAll, err := s.stores()
	if err != nil {
		return s.fail(err)
	}
	defer closeAll()
	enc := json.NewEncoder(s.stdout)
	enc.SetEscapeHTML(false)
	tw := tabwriter.NewWriter(s.stdout, 0, 0, 2, ' ', 0)
	if !s.json {
		fmt.Fprintln(tw, "TIME\tTRACE\tSTEP\tRULE\tVERDICT\tMESSAGE")
	}
	for e, err := range entries(ctx, stores, s.q) {
		if err != nil {
			return s.fail(err)
		}
		if s.json {
			if err := enc.Encode(e); err != nil {
				return s.fail(err)
			}
			continue
		}
		verdict := string(e.Verdict)
		if e.Shadow {
			verdict += " (shadow)"
		}
		fmt.Fprintf(tw, "%s\t%s\t%d\t%s\t%s\t%s\n", e.Time.UTC().Format(time.RFC3339), e.TraceID, e.Step, e.Rule, verdict, clip(e.Message, 100))
	}
	if err := tw.Flush(); err != nil {
		return s.fail(err)
	}
	return cli.ExitPassed
}

func export(ctx context.Context, s *session) int {
	stores, closeAll, err := s.stores()
	if err != nil {
		return s.fail(err)
	}
	defer closeAll()
	write := func(w io.Writer) error {
		enc := json.NewEncoder(w)
		enc.SetEscapeHTML(false)
		for e, err := range entries(ctx, stores, s.q) {
			if err != nil {
				return err
			}
			if err := enc.Encode(e); err != nil {
				return err
			}
		}
		return nil
	}
	if s.out == "" {
		err = write(s.stdout)
	} else {
		err = cli.WriteFile(s.out, write)
	}
	if err != nil {
		return s.fail(err)
	}
	return cli.ExitPassed
}

func clip(s string, n int) string {
	s = strings.Join(strings.Fields(s), " ")
	if r := []rune(s); len(r) > n {
		return string(r[:n]) + "…"
	}
	return s
}
