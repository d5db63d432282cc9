package health

import (
	"cmp"
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/signal"
	"path/filepath"
	"strings"
	"time"

	"github.com/agentguard/agentguard/guard"
	guardpolicy "github.com/agentguard/agentguard/guard/policy"
	"github.com/agentguard/agentguard/guard/replay"
	"github.com/agentguard/agentguard/trace"
	"github.com/agentguard/agentguard/trace/redact"
)

// Ledger is a ledger the command's guard writes to and its scores read:
// *badgerstore.Store is one.
type Ledger interface {
	guard.Sink
	Violations
	Close() error
}

// Errors of a failed gate: the command exits 1 (see ExitCode).
var (
	// ErrBelowFloor: the total is below the release floor.
	ErrBelowFloor = errors.New("total below the floor")
	// ErrSideEffect: the side-effect rule flagged a dimension.
	ErrSideEffect = errors.New("side effect")
	// ErrStrict: with -strict, the golden set breaks the method's shape or
	// has stale baselines.
	ErrStrict = errors.New("strict")
)

// ErrUsage marks a bad flag value: the command exits 2.
var ErrUsage = errors.New("usage")

// Exit statuses of the command.
const (
	ExitPassed = 0 // releasable, no gate failed
	ExitFailed = 1 // a failed gate: below the floor, a side effect, -strict
	ExitUsage  = 2 // nothing was judged: a bad flag or input, an interruption
)

// ExitCode returns the exit status an error of Command.Execute stands for.
func ExitCode(err error) int {
	switch {
	case err == nil:
		return ExitPassed
	case errors.Is(err, ErrBelowFloor), errors.Is(err, ErrSideEffect), errors.Is(err, ErrStrict):
		return ExitFailed
	}
	return ExitUsage
}

// Main is the health check of your own agent as a program. With newAgent,
// the factory of a fresh agent per run, it is the whole program:
//
//	func main() { health.Main(newAgent) }
//
// and "go run . -cases golden.jsonl" replays the golden set through the
// agent twice, its guard rails watching and enforcing, scores both and
// writes the reports; see Command for the flags and the exit status. The
// guard is the default guard, or the one -policy FILE configures; Command
// gives a program more to say (its guard, knowledge base, raters).
func Main(newAgent replay.Factory) {
	(&Command{Agent: newAgent}).Main()
}

// Main parses os.Args, runs the command until it ends or an interrupt
// arrives, and exits with its status.
//
// "PROGRAM init -tools FILE" writes a starter golden set instead (Init).
func (c *Command) Main() {
	if len(os.Args) > 1 && os.Args[1] == "init" {
		os.Exit(Init(os.Args[2:], os.Stdout, os.Stderr))
	}
	fs := flag.NewFlagSet(filepath.Base(os.Args[0]), flag.ContinueOnError)
	c.Flags(fs)
	if err := fs.Parse(os.Args[1:]); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			os.Exit(ExitPassed)
		}
		os.Exit(ExitUsage)
	}
	if fs.NArg() > 0 {
		fmt.Fprintf(os.Stderr, "%s: unexpected argument %q\n", fs.Name(), fs.Arg(0))
		os.Exit(ExitUsage)
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt)
	defer stop()
	err := c.Execute(ctx, os.Stdout)
	if err != nil {
		fmt.Fprintf(os.Stderr, "%s: %v\n", fs.Name(), err)
	}
	os.Exit(ExitCode(err))
}

// Command is the health check as a command. Main runs it as a program's
// main; a program with commands of its own registers the flags on its flag
// set (Flags) and runs it after parsing (Execute).
//
// It replays the golden set twice — the guard in shadow mode
// ("unguarded": every rule detects, none enforces) and enforcing
// ("guarded") — scores both, compares them, prints the five-dimension
// table before and after with the verdict, and writes into -out DIR:
// unguarded/ and guarded/, each with execution_trace.jsonl and
// report.{json,md,html}, the shared ledger/ (with OpenLedger), and the comparison as
// report.{json,md,html}. -baseline REPORT.json compares this guarded run
// with an earlier report instead (the unguarded replay does not run).
//
// Execute returns an error ExitCode maps to the exit status: 1 when the
// guarded total is below -floor (default DefaultFloor, the lowest
// releasable band), when the side-effect rule flags a dimension outside
// -targets, or, with -strict, when the golden set breaks the method's
// shape or a baseline is stale; 2 when nothing was judged (a bad flag, an
// empty or malformed golden set, an interruption: the runs that finished
// are scored and kept).
type Command struct {
	// Agent returns a fresh agent for each run of a case. Required.
	Agent replay.Factory
	// Guard returns the configuration of the guard every run goes
	// through, in shadow mode or not; the command sets its ledger. Nil
	// means the policy file's (-policy), else guard.Config's defaults.
	Guard func(shadow bool) guard.Config
	// Cases is the golden set replayed when -cases is not given, and
	// CasesName names it in messages. Empty means -cases is required.
	Cases     []byte
	CasesName string
	// Knowledge is the knowledge base the fabrication screen checks
	// answers against (Options.Knowledge).
	Knowledge []Document
	// Raters, when set, returns the raters of the screened cases of the
	// golden set about to run (a judge model first): the files of -scores
	// join them.
	Raters func(cases []replay.Case) ([]Rater, error)
	// Timeout is the default of -timeout, the time limit of one run. Zero
	// means one minute.
	Timeout time.Duration
	// Progress receives the replay's progress lines. Nil means none.
	Progress io.Writer
	// Now is the time of the reports and of the baselines' validity. Zero
	// means time.Now().
	Now time.Time
	// OpenLedger, when set, opens the ledger the guard sends its findings
	// to, in DIR/ledger, shared by both replays, and the scores read them
	// back from it (badgerstore.Open is one: the CLI's health verb uses
	// it). Nil means no ledger: the findings are read from the traces' gate
	// steps, so a program that only checks its agent links no database.
	OpenLedger func(dir string) (Ledger, error)

	f commandFlags
}

// commandFlags are the values of the flags.
type commandFlags struct {
	out, cases, weights, policy, targets, tags, baseline, cite string
	repeats, parallel                                          int
	floor                                                      float64
	strict, raw                                                bool
	scores                                                     stringList
	timeout                                                    time.Duration
}

// stringList is a flag that may be given more than once.
type stringList []string

func (l *stringList) String() string     { return strings.Join(*l, ",") }
func (l *stringList) Set(s string) error { *l = append(*l, s); return nil }

// Flags defines the command's flags on fs.
func (c *Command) Flags(fs *flag.FlagSet) {
	f := &c.f
	fs.StringVar(&f.out, "out", "", "output `DIR` (default: a fresh temporary directory)")
	fs.IntVar(&f.repeats, "repeats", 3, "runs per case")
	fs.IntVar(&f.parallel, "parallel", 0, "runs at once (default: the number of CPUs)")
	fs.Float64Var(&f.floor, "floor", DefaultFloor, "lowest acceptable guarded total, on the 100-point scale (0 to 100); the default is the lowest releasable band's")
	casesHelp := "golden set `FILE`, JSONL (package guard/replay gives the format)"
	if len(c.Cases) > 0 {
		casesHelp += " (default: " + c.casesName() + ")"
	}
	fs.StringVar(&f.cases, "cases", "", casesHelp)
	fs.StringVar(&f.weights, "weights", "", "dimension weights summing to 100, accuracy=30,coherence=25,memory=20,stability=15,efficiency=10 (the default)")
	fs.StringVar(&f.policy, "policy", "", "the agent's policy `FILE` (YAML or JSON): its health weights unless -weights, and its guard unless the program sets one")
	fs.StringVar(&f.targets, "targets", "accuracy,coherence,memory", "dimensions the change aims at; the others are watched for side effects")
	fs.StringVar(&f.tags, "tags", "", "run only the cases with one of these tags, comma-separated")
	fs.StringVar(&f.baseline, "baseline", "", "`REPORT.json` of an earlier run to compare this run with (before/after)")
	fs.BoolVar(&f.strict, "strict", false, "fail when the golden set breaks the method's shape or a baseline is stale")
	fs.Var(&f.scores, "scores", "a person's scores of the screened cases, JSONL {\"case\",\"score\",\"reason\"}: a rater; give it once per person")
	fs.StringVar(&f.cite, "cite", "", "retrieval routes whose answers must cite a retrieved document, comma-separated")
	fs.DurationVar(&f.timeout, "timeout", 0, "time limit of one run (default "+c.defaultTimeout().String()+")")
	fs.BoolVar(&f.raw, "raw", false, "write the execution traces as they are, without de-identifying them")
}

func (c *Command) casesName() string {
	if c.CasesName != "" {
		return c.CasesName
	}
	return "the program's golden set"
}

func (c *Command) defaultTimeout() time.Duration {
	if c.Timeout > 0 {
		return c.Timeout
	}
	return time.Minute
}

// settings are the flags' values, checked.
type settings struct {
	weights Weights
	targets []trace.Dimension
	tags    []string
	cite    []string
	guard   func(shadow bool) guard.Config
	now     time.Time
}

func usage(format string, a ...any) error {
	return fmt.Errorf("%w: %s", ErrUsage, fmt.Sprintf(format, a...))
}

// settings checks the flags' values.
func (c *Command) settings() (settings, error) {
	f := &c.f
	s := settings{guard: c.Guard, now: c.Now}
	if c.Agent == nil {
		return s, usage("health.Command: no Agent")
	}
	if f.repeats < 1 {
		return s, usage("-repeats %d: want 1 or more", f.repeats)
	}
	if f.timeout < 0 {
		return s, usage("-timeout %v: want a positive duration", f.timeout)
	}
	if err := CheckFloor(f.floor); err != nil {
		return s, usage("-floor: %v", err)
	}
	var err error
	if f.policy != "" {
		p, err := guardpolicy.Open(f.policy)
		if err != nil {
			return s, usage("-policy: %v", err)
		}
		if s.guard == nil {
			s.guard = func(shadow bool) guard.Config {
				cfg := p.Config()
				cfg.Shadow = shadow
				return cfg
			}
		}
		if w := p.Weights(); w != nil && f.weights == "" {
			m := make(map[string]float64, len(w))
			for d, v := range w {
				m[string(d)] = v
			}
			if s.weights, err = WeightsFrom(m); err != nil {
				return s, usage("%s: weights: %v", f.policy, err)
			}
		}
	}
	if s.guard == nil {
		s.guard = func(shadow bool) guard.Config { return guard.Config{Shadow: shadow} }
	}
	if f.weights != "" {
		if s.weights, err = ParseWeights(f.weights); err != nil {
			return s, usage("-weights: %v", err)
		}
	}
	if s.targets, err = ParseDimensions(f.targets); err != nil {
		return s, usage("-targets: %v", err)
	}
	s.tags, s.cite = list(f.tags), list(f.cite)
	if s.now.IsZero() {
		s.now = time.Now()
	}
	return s, nil
}

// Execute runs the health check with the parsed flags and prints the
// comparison and the verdict on w. Its error says which gate failed, or why
// nothing was judged (ExitCode).
func (c *Command) Execute(ctx context.Context, w io.Writer) (err error) {
	s, err := c.settings()
	if err != nil {
		return err
	}
	f := &c.f
	cases, err := c.loadCases()
	if err != nil {
		return err
	}
	if err := gates(w, cases, f.strict, s.now); err != nil {
		return err
	}
	if len(s.tags) > 0 {
		if cases = replay.Tagged(cases, s.tags...); len(cases) == 0 {
			return fmt.Errorf("-tags %s: %w: no case has one of these tags", strings.Join(s.tags, ","), ErrNoCases)
		}
	}
	var before *Report
	if f.baseline != "" {
		if before, err = readReport(f.baseline); err != nil {
			return err
		}
	}
	var raters []Rater
	if c.Raters != nil {
		if raters, err = c.Raters(cases); err != nil {
			return err
		}
	}
	for _, name := range f.scores {
		sc, err := readScores(name)
		if err != nil {
			return err
		}
		raters = append(raters, Rater{Name: "scores:" + filepath.Base(name), Scores: sc})
	}
	out := f.out
	if out == "" {
		if out, err = os.MkdirTemp("", "agentguard-health-"); err != nil {
			return err
		}
		// A run that fails leaves nothing behind; one that finishes, fails
		// a gate or is interrupted keeps its reports.
		defer func() {
			if ExitCode(err) == ExitUsage && ctx.Err() == nil {
				os.RemoveAll(out)
			}
		}()
	}
	var led Ledger
	if c.OpenLedger != nil {
		if led, err = c.OpenLedger(filepath.Join(out, "ledger")); err != nil {
			return err
		}
		defer led.Close()
	}

	var reports []*Report
	var interrupted error
	modes := []struct {
		label  string
		shadow bool
	}{{"unguarded", true}, {"guarded", false}}
	if before != nil {
		reports, modes = append(reports, before), modes[1:]
	}
	for _, mode := range modes {
		rep, err := c.replayAndScore(ctx, cases, led, s, raters, out, mode.label, mode.shadow)
		if rep == nil {
			if errors.Is(err, ErrNoRuns) && ctx.Err() != nil {
				fmt.Fprintf(w, "interrupted: no %s run finished; nothing to score\n", mode.label)
				return ctx.Err()
			}
			return err
		}
		reports = append(reports, rep)
		if err != nil { // interrupted: keep what finished, stop here
			interrupted = err
			break
		}
	}
	if len(reports) < 2 {
		fmt.Fprintf(w, "interrupted: partial %s report in %s\n", reports[0].Label, filepath.Join(out, reports[0].Label, FileHTML))
		return interrupted
	}
	if before != nil && before.Label == reports[1].Label {
		before.Label = "before"
		reports[1].Label = "after"
	}
	cmp := Compare(reports[0], reports[1], s.targets...)
	if err := cmp.WriteFiles(out); err != nil {
		return err
	}
	PrintComparison(w, cmp)
	fmt.Fprintf(w, "report: %s\n", filepath.Join(out, FileHTML))
	if interrupted != nil {
		return interrupted
	}
	var failed []error
	if cmp.Flagged {
		failed = append(failed, fmt.Errorf("%w: the total rose by %+.1f points while %v, outside the targets %v, fell by %.0f or more", ErrSideEffect, cmp.PointsDelta, cmp.SideEffects, s.targets, SideEffectDrop))
	}
	if g := reports[1]; !g.Release.Releasable {
		failed = append(failed, fmt.Errorf("%w: %s", ErrBelowFloor, g.Release.Why))
	}
	return errors.Join(failed...)
}

// loadCases reads the golden set: an empty or unreadable one, or one with
// a malformed line, is an error.
func (c *Command) loadCases() ([]replay.Case, error) {
	name := c.f.cases
	var cases []replay.Case
	var err error
	switch {
	case name != "":
		file, oerr := os.Open(name)
		if oerr != nil {
			return nil, fmt.Errorf("-cases: %w", oerr)
		}
		defer file.Close()
		cases, err = replay.LoadCases(file, name)
	case len(c.Cases) > 0:
		name = c.casesName()
		cases, err = replay.LoadCases(strings.NewReader(string(c.Cases)), name)
	default:
		return nil, usage("-cases: no golden set given (package guard/replay gives the format; a case needs only id, turns and answer)")
	}
	if err == nil && len(cases) == 0 {
		err = fmt.Errorf("-cases %s: %w: the file holds no case; a health check of nothing passes nothing", name, ErrNoCases)
	}
	return cases, err
}

// gates prints how the golden set departs from the method's shape and
// which baselines are stale or were never verified, on w before anything
// runs, and with strict fails on any.
func gates(w io.Writer, cases []replay.Case, strict bool, now time.Time) error {
	shape := replay.Shape(cases)
	for _, s := range shape {
		fmt.Fprintf(w, "warning: golden set: %s\n", s)
	}
	stale := replay.Stale(cases, now, 0)
	if len(stale) > 0 {
		ids := make([]string, len(stale))
		for i, c := range stale {
			ids[i] = c.ID + " (" + cmp.Or(c.LastVerified, "never verified") + ")"
		}
		fmt.Fprintf(w, "warning: %d stale baselines, last verified over 90 days ago: %s\n", len(stale), strings.Join(ids, ", "))
	}
	if strict && len(shape)+len(stale) > 0 {
		return fmt.Errorf("%w: the golden set breaks the method's shape or has stale baselines (see the warnings); nothing was run", ErrStrict)
	}
	return nil
}

func list(s string) []string {
	var out []string
	for part := range strings.SplitSeq(s, ",") {
		if part = strings.TrimSpace(part); part != "" {
			out = append(out, part)
		}
	}
	return out
}

func readReport(name string) (*Report, error) {
	f, err := os.Open(name)
	if err != nil {
		return nil, fmt.Errorf("-baseline: %w", err)
	}
	defer f.Close()
	return ReadReport(f, name)
}

func readScores(name string) (Scores, error) {
	f, err := os.Open(name)
	if err != nil {
		return nil, fmt.Errorf("-scores: %w", err)
	}
	defer f.Close()
	return LoadScores(f, name)
}

// replayAndScore replays the cases in one mode, writes the traces and the
// report into out/label, and returns the report. When ctx ends the replay
// early, it scores what finished, without the raters, and returns the
// report with ctx's error.
func (c *Command) replayAndScore(ctx context.Context, cases []replay.Case, led Ledger, s settings, raters []Rater, out, label string, shadow bool) (*Report, error) {
	dir := filepath.Join(out, label)
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return nil, err
	}
	file, err := os.Create(filepath.Join(dir, "execution_trace.jsonl"))
	if err != nil {
		return nil, err
	}
	defer file.Close()
	// The traces are de-identified on their way to the file, unless -raw.
	red := redact.String
	if c.f.raw {
		red = redact.None
	}
	timeout := cmp.Or(c.f.timeout, c.defaultTimeout())
	cfg := s.guard(shadow)
	cfg.Shadow = shadow
	var v Violations
	if led != nil {
		cfg.Observe.Ledger, v = led, led
	}
	runs, replayErr := replay.Replay(ctx, cases, c.Agent, replay.Config{
		Guard:    cfg,
		Label:    label,
		Repeats:  c.f.repeats,
		Parallel: c.f.parallel,
		Timeout:  timeout,
		Traces:   file,
		Redact:   red,
		Progress: c.Progress,
	})
	if replayErr != nil && ctx.Err() == nil {
		return nil, replayErr // the traces could not be written
	}
	// After a Ctrl-C during the replay, what finished is scored, without
	// the raters; a Ctrl-C while they work stops their calls, each case
	// left recorded as not judged.
	opts := Options{Label: label, Knowledge: c.Knowledge, Weights: s.weights, CitationRoutes: s.cite, Now: s.now, Redact: red, Floor: c.f.floor}
	interrupted := ctx.Err() != nil
	sctx := ctx
	if interrupted {
		sctx = context.WithoutCancel(ctx)
	} else {
		opts.Raters = raters
	}
	rep, err := Score(sctx, cases, runs, v, opts)
	if err != nil && !interrupted && ctx.Err() != nil {
		// Ctrl-C while reading the ledger: score what finished, without the raters.
		opts.Raters, replayErr = nil, ctx.Err()
		rep, err = Score(context.WithoutCancel(ctx), cases, runs, v, opts)
	}
	if err != nil {
		return nil, err
	}
	if err := rep.WriteFiles(dir); err != nil {
		return nil, err
	}
	return rep, replayErr
}

// PrintComparison prints a comparison as the command does: the dimensions
// before and after, the screening rates, the headlines, the raters, the
// verdict with what blocked release, and what to fix first.
func PrintComparison(w io.Writer, c *Comparison) {
	b, a := c.Before, c.After
	fmt.Fprintf(w, "%-16s %10s %10s %8s\n", "dimension (1-5)", b.Label, a.Label, "change")
	for _, d := range c.Deltas {
		fmt.Fprintf(w, "%-16s %10.1f %10.1f %+8.1f\n", d.Dimension, d.Before, d.After, d.Change)
	}
	fmt.Fprintf(w, "%-16s %10.2f %10.2f %+8.2f\n", "total (of 5)", b.Total, a.Total, c.TotalDelta)
	fmt.Fprintf(w, "%-16s %10.0f %10.0f %+8.1f\n", "points (of 100)", b.Points, a.Points, c.PointsDelta)
	rate := func(name string, x, y float64) {
		fmt.Fprintf(w, "%-16s %9.1f%% %9.1f%% %+7.1f\n", name, 100*x, 100*y, 100*(y-x))
	}
	rate("fabrication", b.Rates.Fabrication, a.Rates.Fabrication)
	rate("over-refusal", b.Rates.OverRefusal, a.Rates.OverRefusal)
	rate("cascade", b.Rates.Cascade, a.Rates.Cascade)
	rate("amnesia", b.Rates.Amnesia, a.Rates.Amnesia)
	rate("drift", b.Metrics.DriftRate, a.Metrics.DriftRate)
	rate("timeouts", b.Metrics.TimeoutRate, a.Metrics.TimeoutRate)
	rate("guard retries", b.Metrics.RetryRate, a.Metrics.RetryRate)
	for _, r := range []*Report{b, a} {
		fmt.Fprintf(w, "%s: %s\n", r.Label, Headline(r.Total, r.Points))
	}
	for _, r := range []*Report{b, a} {
		if j := r.Judge; j != nil {
			fmt.Fprintf(w, "raters of %s: %d of %d cases screened and judged: %d confirmed, %d disputed, %d errors, %d sent to review; %d calls, %d tokens, cost %.4f\n",
				r.Label, j.Screened, j.Cases, j.Confirmed, j.Disputed, j.Errors, j.Review, j.Calls, j.TokensIn+j.TokensOut, j.Cost)
		}
	}
	for _, warn := range c.Warnings() {
		fmt.Fprintf(w, "warning: not like for like: %s\n", warn)
	}
	verdict := "releasable"
	if !a.Release.Releasable {
		verdict = "not releasable"
	}
	fmt.Fprintf(w, "verdict (%s): %s — %s\n", a.Label, verdict, a.Release.Why)
	for _, b := range a.Release.Blockers {
		fmt.Fprintf(w, "  blocked by %s\n", b)
	}
	if rc := a.RootCauses; len(rc) > 0 && rc[0].Failed > 0 {
		fmt.Fprintf(w, "what to fix first (%s):\n", a.Label)
		for i, r := range rc {
			if i == 3 || r.Failed == 0 {
				break
			}
			fmt.Fprintf(w, "  %s (%d failed, cases %s): %s, %s\n", r.Tag, r.Failed, strings.Join(r.Cases, " "), r.Fix.Kind, r.Fix.Where)
			for _, why := range r.Unguarded {
				fmt.Fprintf(w, "    why no guard rail caught it: %s\n", why)
			}
		}
	}
	if c.Flagged {
		fmt.Fprintf(w, "side effect flagged: %v fell by %.0f or more\n", c.SideEffects, SideEffectDrop)
	}
}
