// Package ledgercmd is the verb "agentguard ledger": it reads the error
// ledgers that the guard (and continuous evaluation) write, offline.
//
//	agentguard ledger lessons [-json] [filters] DIR...
//	agentguard ledger query [-json] [filters] DIR...
//	agentguard ledger trace DIR ID...
//	agentguard ledger cases [-o FILE] [-raw] [filters] DIR...
//	agentguard ledger export [-o FILE] [-raw] [filters] DIR...
//
// Each DIR is a ledger directory (ledger/badgerstore), opened read-only; a
// directory that a running agent holds cannot be opened: copy a snapshot
// of it. Or it is a file an OpenTelemetry Collector's file exporter wrote
// (OTLP JSON): the findings every replica sent as gen_ai.evaluation.result
// log events (trace/otelexport), with the traces of the spans beside them,
// read as one ledger (trace.ImportOTLPFindings). Several — snapshots taken
// from several replicas, or several files — are read as one ledger:
// lessons merge across them, and query and export list their entries in
// time order.
//
// The filters select entries (see ledger.Query): -rule, -trace, -session,
// -tag, -dimension, -since and -until.
//
// trace prints the stored traces (ledger.TraceStore) as trace JSONL. cases
// turns the entries into regression cases for the health check ("agentguard
// health -cases FILE"), in the golden-case format of guard/replay: see
// newCase for how an entry and its trace become a case. What cases and
// export write is de-identified (trace/redact) unless -raw; the store has
// already de-identified what it holds unless its writer chose otherwise.
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
	"os"
	"slices"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/agentguard/agentguard/examples/agentguard/internal/cli"
	"github.com/agentguard/agentguard/guard/replay"
	"github.com/agentguard/agentguard/ledger"
	"github.com/agentguard/agentguard/ledger/badgerstore"
	"github.com/agentguard/agentguard/trace"
	"github.com/agentguard/agentguard/trace/redact"
)

var verb = cli.Verb{
	Name:     "ledger",
	Synopsis: "lessons|query|trace|cases|export [flags] DIR...",
	Doc: `Reads error ledgers offline:
  lessons  what the ledger learned, by rule and root-cause tag: count, first
           and last seen, example trace ids
  query    the entries a filter selects, one line each (-json: JSON Lines)
  trace    the stored traces of the ids given, as trace JSONL
  cases    regression cases for "agentguard health -cases", built from the
           entries and their stored traces
  export   the entries as JSON Lines, to stdout or -o FILE
A DIR may also be an OTLP JSON file a collector wrote (the findings every
replica sent as log events). Several DIRs are read as one ledger.
"agentguard ledger SUBVERB -h" for each.`,
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
	"trace": {cli.Verb{Name: "ledger trace", Synopsis: "DIR ID...",
		Doc: "Prints the traces stored under the ids given as trace JSONL, one per line.", MinArgs: 2, MaxArgs: -1, ArgName: "DIR and ID"}, traces},
	"cases": {cli.Verb{Name: "ledger cases", Synopsis: "[-o FILE] [-raw] [filters] DIR...",
		Doc: `Builds a regression case from each entry the filters select whose trace is
stored: the user turns up to the judged one, de-identified; the guarded
outcome (the tool stopped, the question asked) as the expected behaviour;
tagged ledger_<rule> and unverified. The cases are in the golden-case format
that "agentguard health -cases FILE" replays.`, MinArgs: 1, MaxArgs: -1, ArgName: "DIR"}, cases},
	"export": {cli.Verb{Name: "ledger export", Synopsis: "[-o FILE] [-raw] [filters] DIR...",
		Doc: "Writes the entries the filters select as JSON Lines (ledger.Entry), oldest first.", MinArgs: 1, MaxArgs: -1, ArgName: "DIR"}, export},
}

// session is one run of a subverb: its flags, parsed, and its output.
type session struct {
	verb           cli.Verb
	fs             *flag.FlagSet
	dirs           []string
	q              ledger.Query
	json, raw      bool
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
	if args[0] == "trace" {
		s.fs = sv.FlagSet() // no filters
	}
	switch args[0] {
	case "lessons", "query":
		s.fs.BoolVar(&s.json, "json", false, "print JSON (lessons: one array; query: JSON Lines)")
	case "export", "cases":
		s.fs.StringVar(&s.out, "o", "", "write to FILE, replaced only when the whole output is written (default: standard output)")
		s.fs.BoolVar(&s.raw, "raw", false, "keep the text as stored, without de-identifying it")
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

// store is what the verb reads a ledger directory through.
type store interface {
	ledger.Reader
	ledger.TraceStore
	Close() error
}

// stores opens every directory read-only; closeAll closes them.
func (s *session) stores() (stores []store, closeAll func(), err error) {
	closeAll = func() {
		for _, st := range stores {
			st.Close()
		}
	}
	for _, d := range s.dirs {
		if fi, err := os.Stat(d); err == nil && fi.Mode().IsRegular() {
			f, err := openOTLPFile(d)
			if err != nil {
				closeAll()
				return nil, nil, err
			}
			stores = append(stores, f)
			continue
		}
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

// traceOf returns the trace stored under id in the first store that has
// it, or an error matching ledger.ErrNotFound.
func traceOf(ctx context.Context, stores []store, id string) (*trace.Trace, error) {
	var first error
	for _, st := range stores {
		t, err := st.Trace(ctx, id)
		if err == nil {
			return t, nil
		}
		if first == nil || !errors.Is(err, ledger.ErrNotFound) {
			first = err
		}
	}
	return nil, first
}

// entries streams the entries q selects from every store, merged by time
// (each store's entries are in sequence order, which is time order but
// for clock steps).
func entries(ctx context.Context, stores []store, q ledger.Query) iter.Seq2[ledger.Entry, error] {
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
	ls, err := mergedLessons(ctx, stores, s.q)
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
			if !s.raw {
				e.Texts(func(v *string) { *v = redact.String(*v) })
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

func traces(ctx context.Context, s *session) int {
	dir, ids := s.dirs[:1], s.dirs[1:]
	s.dirs = dir
	stores, closeAll, err := s.stores()
	if err != nil {
		return s.fail(err)
	}
	defer closeAll()
	w := trace.NewWriter(s.stdout)
	code := cli.ExitPassed
	for _, id := range ids {
		t, err := traceOf(ctx, stores, id)
		if errors.Is(err, ledger.ErrNotFound) {
			s.verb.Errorf(s.stderr, "no trace %q in %s", id, dir[0])
			code = cli.ExitUsage
			continue
		}
		if err != nil {
			return s.fail(err)
		}
		if err := w.Write(t); err != nil {
			return s.fail(err)
		}
	}
	return code
}

func cases(ctx context.Context, s *session) int {
	stores, closeAll, err := s.stores()
	if err != nil {
		return s.fail(err)
	}
	defer closeAll()
	red := redact.String
	if s.raw {
		red = redact.None
	}
	cs, noTrace, noTurn, err := buildCases(ctx, stores, s.q, red)
	if err != nil {
		return s.fail(err)
	}
	write := func(w io.Writer) error {
		for _, c := range cs {
			if err := replay.WriteCase(w, c); err != nil {
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
	fmt.Fprintf(s.stderr, "agentguard ledger cases: %d cases", len(cs))
	if noTrace > 0 {
		fmt.Fprintf(s.stderr, "; %d entries left out: their trace is not stored", noTrace)
	}
	if noTurn > 0 {
		fmt.Fprintf(s.stderr, "; %d entries left out: no user turn to replay", noTurn)
	}
	fmt.Fprintln(s.stderr)
	if len(cs) == 0 {
		return s.fail(errors.New("no case: no entry selected has a stored trace with a user turn"))
	}
	return cli.ExitPassed
}

// mergedLessons returns the lessons of several ledgers as those of one:
// each store's lessons (kept as aggregates by badgerstore, so reading them
// does not grow with the ledger), merged by rule and tag — counts summed,
// first and last seen widened, examples joined up to ledger.MaxExamples —
// and sorted as ledger.Learn sorts them.
func mergedLessons(ctx context.Context, stores []store, q ledger.Query) ([]ledger.Lesson, error) {
	limit := q.Limit
	q.Limit = 0
	type key struct{ rule, tag string }
	byKey := map[key]*ledger.Lesson{}
	var out []*ledger.Lesson
	for _, st := range stores {
		ls, err := st.Lessons(ctx, q)
		if err != nil {
			return nil, err
		}
		for _, l := range ls {
			m := byKey[key{l.Rule, l.Tag}]
			if m == nil {
				l.Examples = slices.Clone(l.Examples)
				byKey[key{l.Rule, l.Tag}] = &l
				out = append(out, &l)
				continue
			}
			m.Count += l.Count
			if l.FirstSeen.Before(m.FirstSeen) {
				m.FirstSeen = l.FirstSeen
			}
			if l.LastSeen.After(m.LastSeen) {
				m.LastSeen, m.Dimension = l.LastSeen, l.Dimension
			}
			for _, id := range l.Examples {
				if len(m.Examples) < ledger.MaxExamples && !slices.Contains(m.Examples, id) {
					m.Examples = append(m.Examples, id)
				}
			}
		}
	}
	ls := make([]ledger.Lesson, len(out))
	for i, l := range out {
		ls[i] = *l
	}
	slices.SortFunc(ls, func(a, b ledger.Lesson) int {
		return cmp.Or(cmp.Compare(b.Count, a.Count), cmp.Compare(a.Rule, b.Rule), cmp.Compare(a.Tag, b.Tag))
	})
	if limit > 0 && len(ls) > limit {
		ls = ls[:limit]
	}
	return ls, nil
}
