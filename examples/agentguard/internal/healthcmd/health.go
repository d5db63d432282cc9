// Package healthcmd is the verb "agentguard health", the offline health check of the demo
// customer-service agent: it replays the 30-case golden set through the
// guard twice — once in shadow mode ("unguarded": every rule detects, none
// enforces) and once enforcing ("guarded") — scores both on five
// dimensions, compares them, and writes the reports. By default it needs
// no network and no API key.
//
//	agentguard health [-out DIR] [-repeats N] [-floor F] [-cases FILE] [-tags T,...]
//	                  [-weights D=W,...] [-policy FILE] [-targets D,...] [-baseline REPORT.json] [-strict]
//	                  [-parallel N] [-model SPEC] [-judge SPEC] [-scores FILE] [-cite ROUTES] [-timeout D] [-raw]
//
// DIR receives unguarded/ and guarded/, each with execution_trace.jsonl
// and report.{json,md,html}, the shared ledger/, and the comparison as
// report.{json,md,html}. The command prints the five-dimension table
// before and after and the path of report.html.
//
// # Gates
//
// Exit status 1 is a failed gate, so that the command can gate a release:
//
//   - the guarded total is below -floor, on the 100-point scale (0 to 100;
//     a floor from above 0 to 5 reads as the 1–5 scale and is refused);
//   - the side-effect rule: the total rose by 8 points or more while a
//     dimension not named in -targets fell by 2 or more;
//   - with -strict, before anything runs: the golden set departs from the
//     method's shape (10 normal, 10 boundary, 10 adversarial cases, one
//     conversation of 15 turns or more), or a baseline is past its
//     validity (90 days after last_verified). Without -strict both are
//     printed as warnings on stdout and the check runs.
//
// Status 2 means nothing was judged: a bad flag, an empty, unreadable or
// malformed golden set, a -tags subset that selects no case, or an
// interruption (Ctrl-C keeps and scores the runs that finished, without
// the judge).
//
// The default floor, 60 (health.DefaultFloor), is the lowest total of a
// band the method lets ship: below it the report says "critical, not
// releasable", and the exit status says so too. The terminal and the
// reports say which band, why, and, below the floor, what cost the points.
//
// # Before and after
//
// -baseline REPORT.json compares this run with an earlier one instead of
// with the unguarded replay (which then does not run): the earlier run's
// guarded report — its report.json, or the top-level report.json of its
// comparison — is the "before", this run's guarded report the "after",
// overlaid on one radar. -targets names the dimensions the change aimed
// at (default accuracy, coherence and memory: what enforcing aims at).
// -weights sets the dimension weights, "accuracy=25,coherence=25,memory=20,
// stability=10,efficiency=20", all five, summing to 100; -policy reads
// them from the agent's policy file (its "weights"), the one its guard and
// continuous evaluation read. -weights wins over the file. -tags reruns the
// subset of cases with one of the tags, the cases a prompt change touches.
//
// # Models
//
// -model picks the agent's model, as examples/agentguard/internal/models reads it:
// "" (the default) is the demo's scripted model, offline and
// deterministic, seeded per case and repeat; "openai:NAME" (OPENAI_API_KEY,
// OPENAI_BASE_URL) or "ollama:NAME" (OLLAMA_HOST) a real one. Only the
// model changes: the tools, the knowledge base, the golden set and the
// guard stay the demo's. A real model answers more slowly, so -timeout, the
// time limit of one run, defaults to one minute with the scripted model and
// five with a real one; lower -parallel if the provider limits your rate.
//
// -scores FILE adds a person's scores as a rater (health.LoadScores): with
// -judge there are two raters, each screened case's verdict is their mean,
// and a gap above 1 point sends it to review. -cite ROUTES forces
// citations on those retrieval routes (health.Options.CitationRoutes).
//
// -judge adds a judge model (package guard/health, Options.Judge): it
// gives a second opinion on each screened case — a case a hard filter hit
// or a check failed — shown in the reports' Judge section with its reason
// and cost, beside the computed scores, which it never changes (nor the
// floor). "" (the default) is no judge; "openai:NAME" or "ollama:NAME" a
// real one, its cost priced as the agent's (gpt-4o's list prices); "demo"
// a deterministic scripted judge (see demoJudge) that scores the answers
// shown in the judge's prompt against the case's own baseline, so that the
// offline run can show the feature: it is a stand-in, not an opinion.
//
// The demo's golden set is testdata/golden.jsonl (see package guard/replay
// for the format); the agent is examples/agentguard/internal/shop, with its
// guard configuration (see demoConfig).
package healthcmd

import (
	"bytes"
	"context"
	_ "embed"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/agentguard/agentguard/examples/agentguard/internal/cli"
	"github.com/agentguard/agentguard/examples/agentguard/internal/models"
	"github.com/agentguard/agentguard/examples/agentguard/internal/shop"
	"github.com/agentguard/agentguard/guard/health"
	guardpolicy "github.com/agentguard/agentguard/guard/policy"
	"github.com/agentguard/agentguard/guard/replay"
	"github.com/agentguard/agentguard/ledger/badgerstore"
	"github.com/agentguard/agentguard/trace"
	"github.com/agentguard/agentguard/trace/redact"
	"github.com/tmc/langchaingo/llms"
)

//go:embed testdata/golden.jsonl
var goldenSet []byte

// errBelowFloor is returned when the guarded total is below the floor.
var errBelowFloor = errors.New("guarded total below the floor")

// Errors of a failed gate: exit status 1.
var (
	errSideEffect = errors.New("side effect")
	errStrict     = errors.New("strict")
)

type options struct {
	out      string
	repeats  int
	parallel int
	floor    float64
	weights  health.Weights    // zero means the defaults
	targets  []trace.Dimension // the side-effect rule's targets
	tags     []string          // the subset of cases to run; nil means all
	baseline string            // report.json of an earlier run; "" means compare with the unguarded replay
	strict   bool
	scores   string   // a person's scores file; "" means none
	cite     []string // routes that force citations
	now      time.Time
	cases    string        // golden set file; "" means the embedded one
	model    string        // the agent's model (models.Open); "" means the scripted one
	judge    string        // the judge: "", "demo", or a model as for model
	timeout  time.Duration // of one run; 0 means 1m with the scripted model, 5m with a real one
	raw      bool          // write the traces without de-identifying them
	progress io.Writer
}

var verb = cli.Verb{
	Name:     "health",
	Synopsis: "[-out DIR] [-repeats N] [-floor F] [-cases FILE] [-tags T,...] [-weights D=W,...] [-policy FILE] [-targets D,...] [-baseline REPORT.json] [-strict] [-parallel N] [-model SPEC] [-judge SPEC] [-scores FILE] [-cite ROUTES] [-timeout D] [-raw]",
	Doc: `Replays the golden set through the demo agent twice, its guard rails only
watching ("unguarded") and enforcing ("guarded"), scores both on five
dimensions, prints the comparison and writes the reports into DIR.
With -baseline, compares this guarded run with an earlier report instead.
Exit status 1 when the guarded total is below -floor (0 to 100), when the
side-effect rule flags a dimension outside -targets, or, with -strict,
when the golden set breaks the method's shape or a baseline is stale.`,
	MaxArgs: 0,
}

// Run is the verb: it parses args, runs the health check, and returns the
// exit status (see package cli).
func Run(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	var o options
	fs := verb.FlagSet()
	fs.StringVar(&o.out, "out", "", "output directory (default: a fresh temporary directory)")
	fs.IntVar(&o.repeats, "repeats", 3, "runs per case")
	fs.IntVar(&o.parallel, "parallel", 0, "runs at once (default: the number of CPUs)")
	fs.Float64Var(&o.floor, "floor", health.DefaultFloor, "lowest acceptable guarded total, on the 100-point scale (0 to 100); the default is the lowest releasable band's")
	fs.StringVar(&o.cases, "cases", "", "golden set, JSONL (default: the demo's 30 cases)")
	weights := fs.String("weights", "", "dimension weights summing to 100, accuracy=30,coherence=25,memory=20,stability=15,efficiency=10 (the default)")
	policy := fs.String("policy", "", "the agent's policy `FILE` (YAML or JSON): its health weights, unless -weights")
	targets := fs.String("targets", "accuracy,coherence,memory", "dimensions the change aims at; the others are watched for side effects")
	tags := fs.String("tags", "", "run only the cases with one of these tags, comma-separated")
	fs.StringVar(&o.baseline, "baseline", "", "report.json of an earlier run to compare this run with (before/after)")
	fs.BoolVar(&o.strict, "strict", false, "fail when the golden set breaks the method's shape or a baseline is stale")
	fs.StringVar(&o.scores, "scores", "", "a person's scores of the screened cases, JSONL {\"case\",\"score\",\"reason\"}: a second rater")
	cite := fs.String("cite", "", "retrieval routes whose answers must cite a retrieved document, comma-separated")
	fs.StringVar(&o.model, "model", "", "agent's "+models.FlagHelp)
	fs.StringVar(&o.judge, "judge", "", `judge of the screened cases: "" for none, "demo" for the offline scripted judge, or a model as for -model`)
	fs.DurationVar(&o.timeout, "timeout", 0, "time limit of one run (default 1m with the scripted model, 5m with -model)")
	fs.BoolVar(&o.raw, "raw", false, "write the execution traces as they are, without de-identifying them")
	if _, code, ok := verb.Parse(fs, args, stdout, stderr); !ok {
		return code
	}
	if err := health.CheckFloor(o.floor); err != nil {
		return verb.Fail(stderr, fs, "-floor: "+err.Error())
	}
	var err error
	switch {
	case *weights != "":
		if o.weights, err = health.ParseWeights(*weights); err != nil {
			return verb.Fail(stderr, fs, "-weights: "+err.Error())
		}
	case *policy != "":
		p, err := guardpolicy.Open(*policy)
		if err != nil {
			fmt.Fprintf(stderr, "agentguard health: %v\n", err)
			return cli.ExitUsage
		}
		if w := p.Weights(); w != nil {
			m := make(map[string]float64, len(w))
			for d, v := range w {
				m[string(d)] = v
			}
			if o.weights, err = health.WeightsFrom(m); err != nil {
				fmt.Fprintf(stderr, "agentguard health: %s: weights: %v\n", *policy, err)
				return cli.ExitUsage
			}
		}
	}
	if o.targets, err = health.ParseDimensions(*targets); err != nil {
		return verb.Fail(stderr, fs, "-targets: "+err.Error())
	}
	o.tags, o.cite = list(*tags), list(*cite)
	o.progress = cli.Progress(stderr)
	err = run(ctx, o, stdout)
	switch {
	case errors.Is(err, errBelowFloor), errors.Is(err, errSideEffect), errors.Is(err, errStrict):
		verb.Errorf(stderr, "%v", err)
		return cli.ExitFindings
	case err != nil:
		verb.Errorf(stderr, "%v", err)
		return cli.ExitUsage
	}
	return cli.ExitPassed
}

func run(ctx context.Context, o options, w io.Writer) (err error) {
	if o.repeats < 1 {
		return fmt.Errorf("-repeats %d: want 1 or more", o.repeats)
	}
	if o.timeout < 0 {
		return fmt.Errorf("-timeout %v: want a positive duration", o.timeout)
	}
	agent, err := agentModel(o.model)
	if err != nil {
		return err
	}
	cases, err := loadCases(o.cases)
	if err != nil {
		return err
	}
	if o.now.IsZero() {
		o.now = time.Now()
	}
	if err := gates(w, cases, o); err != nil {
		return err
	}
	if len(o.tags) > 0 {
		if cases = replay.Tagged(cases, o.tags...); len(cases) == 0 {
			return fmt.Errorf("-tags %s: %w: no case has one of these tags", strings.Join(o.tags, ","), health.ErrNoCases)
		}
	}
	var before *health.Report
	if o.baseline != "" {
		if before, err = readReport(o.baseline); err != nil {
			return err
		}
	}
	var scores health.Scores
	if o.scores != "" {
		if scores, err = readScores(o.scores); err != nil {
			return err
		}
	}
	judge, err := judgeModel(o.judge, cases)
	if err != nil {
		return err
	}
	m := modelSet{agent: agent, judge: judge, scores: scores}
	if o.out == "" {
		if o.out, err = os.MkdirTemp("", "agentguard-health-"); err != nil {
			return err
		}
		// A run that fails leaves nothing behind; one that finishes, falls
		// below the floor or is interrupted keeps its reports.
		defer func() {
			if err != nil && !errors.Is(err, errBelowFloor) && ctx.Err() == nil {
				os.RemoveAll(o.out)
			}
		}()
	}
	led, err := badgerstore.Open(filepath.Join(o.out, "ledger"), badgerstore.Options{})
	if err != nil {
		return err
	}
	defer led.Close()

	var reports []*health.Report
	var interrupted error
	modes := []struct {
		label  string
		shadow bool
	}{{"unguarded", true}, {"guarded", false}}
	if before != nil {
		reports, modes = append(reports, before), modes[1:]
	}
	for _, mode := range modes {
		rep, err := replayAndScore(ctx, cases, led, o, m, mode.label, mode.shadow)
		if rep == nil {
			if errors.Is(err, health.ErrNoRuns) && ctx.Err() != nil {
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
		fmt.Fprintf(w, "interrupted: partial %s report in %s\n", reports[0].Label, filepath.Join(o.out, reports[0].Label, health.FileHTML))
		return interrupted
	}
	if before != nil && before.Label == reports[1].Label {
		before.Label = "before"
		reports[1].Label = "after"
	}
	cmp := health.Compare(reports[0], reports[1], o.targets...)
	if err := cmp.WriteFiles(o.out); err != nil {
		return err
	}
	printTable(w, cmp)
	fmt.Fprintf(w, "report: %s\n", filepath.Join(o.out, health.FileHTML))
	if interrupted != nil {
		return interrupted
	}
	var failed []error
	if cmp.Flagged {
		failed = append(failed, fmt.Errorf("%w: the total rose by %+.1f points while %v, outside the targets %v, fell by %.0f or more", errSideEffect, cmp.PointsDelta, cmp.SideEffects, o.targets, health.SideEffectDrop))
	}
	if g := reports[1].Points; g < o.floor {
		failed = append(failed, fmt.Errorf("%w: %.1f < %.1f points", errBelowFloor, g, o.floor))
	}
	return errors.Join(failed...)
}

// gates prints how the golden set departs from the method's shape and
// which baselines are stale, on w before anything runs, and with -strict
// fails on either.
func gates(w io.Writer, cases []replay.Case, o options) error {
	shape := replay.Shape(cases)
	for _, s := range shape {
		fmt.Fprintf(w, "warning: golden set: %s\n", s)
	}
	stale := replay.Stale(cases, o.now, 0)
	if len(stale) > 0 {
		ids := make([]string, len(stale))
		for i, c := range stale {
			ids[i] = c.ID + " (" + c.LastVerified + ")"
		}
		fmt.Fprintf(w, "warning: %d stale baselines, last verified over 90 days ago: %s\n", len(stale), strings.Join(ids, ", "))
	}
	if o.strict && len(shape)+len(stale) > 0 {
		return fmt.Errorf("%w: the golden set breaks the method's shape or has stale baselines (see the warnings); nothing was run", errStrict)
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

func readReport(name string) (*health.Report, error) {
	f, err := os.Open(name)
	if err != nil {
		return nil, fmt.Errorf("-baseline: %w", err)
	}
	defer f.Close()
	return health.ReadReport(f, name)
}

func readScores(name string) (health.Scores, error) {
	f, err := os.Open(name)
	if err != nil {
		return nil, fmt.Errorf("-scores: %w", err)
	}
	defer f.Close()
	return health.LoadScores(f, name)
}

// loadCases reads the golden set: an empty or unreadable one, or one with
// a malformed line, is an error.
func loadCases(name string) ([]replay.Case, error) {
	var cases []replay.Case
	var err error
	if name == "" {
		cases, err = replay.LoadCases(bytes.NewReader(goldenSet), "testdata/golden.jsonl")
	} else {
		f, oerr := os.Open(name)
		if oerr != nil {
			return nil, fmt.Errorf("-cases: %w", oerr)
		}
		defer f.Close()
		cases, err = replay.LoadCases(f, name)
	}
	if err == nil && len(cases) == 0 {
		err = fmt.Errorf("-cases %s: %w: the file holds no case; a health check of nothing passes nothing", name, health.ErrNoCases)
	}
	return cases, err
}

// modelSet holds the agent's model, nil for the scripted one, and the
// judge, nil for none.
type modelSet struct {
	agent, judge llms.Model
	scores       health.Scores
}

// agentModel returns the model -model names, nil for the scripted one.
func agentModel(spec string) (llms.Model, error) {
	if spec == "" {
		return nil, nil // newDemoAgent seeds one per run
	}
	return models.Open(spec, nil)
}

// judgeModel returns the judge -judge names, nil for none.
func judgeModel(spec string, cases []replay.Case) (llms.Model, error) {
	switch spec {
	case "":
		return nil, nil
	case "demo":
		return demoJudge(cases), nil
	}
	if provider, name, _ := strings.Cut(spec, ":"); (provider != "openai" && provider != "ollama") || name == "" {
		return nil, fmt.Errorf(`-judge %q: want "demo", openai:NAME or ollama:NAME`, spec)
	}
	m, err := models.Open(spec, nil)
	if err != nil {
		return nil, fmt.Errorf("-judge: %w", err)
	}
	return m, nil
}

// replayAndScore replays the cases in one mode, writes the traces and the
// report into out/label, and returns the report. When ctx ends the replay
// early, it scores what finished, without the judge, and returns the
// report with ctx's error.
func replayAndScore(ctx context.Context, cases []replay.Case, led *badgerstore.Store, o options, m modelSet, label string, shadow bool) (*health.Report, error) {
	dir := filepath.Join(o.out, label)
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return nil, err
	}
	f, err := os.Create(filepath.Join(dir, "execution_trace.jsonl"))
	if err != nil {
		return nil, err
	}
	defer f.Close()
	// The traces are de-identified on their way to the file, unless -raw.
	red := redact.String
	if o.raw {
		red = redact.None
	}
	traces := cli.RedactTraces(f, red)
	timeout := o.timeout
	if timeout == 0 && m.agent != nil {
		timeout = 5 * time.Minute
	}
	cfg := shop.GuardConfig(led, shadow)
	runs, replayErr := replay.Replay(ctx, cases, newAgentFactory(m.agent), replay.Config{
		Guard:    cfg,
		Label:    label,
		Repeats:  o.repeats,
		Parallel: o.parallel,
		Timeout:  timeout,
		Traces:   traces,
		Progress: o.progress,
	})
	if err := traces.Close(); replayErr == nil {
		replayErr = err
	}
	if replayErr != nil && ctx.Err() == nil {
		return nil, replayErr // the traces could not be written
	}
	// After a Ctrl-C during the replay, what finished is scored, without
	// the judge; a Ctrl-C while the judge works stops its calls, each case
	// left recorded as not judged.
	opts := health.Options{Label: label, Knowledge: knowledge(), Weights: o.weights, CitationRoutes: o.cite, Now: o.now, Redact: red, Floor: o.floor}
	interrupted := ctx.Err() != nil
	sctx := ctx
	if interrupted {
		sctx = context.WithoutCancel(ctx)
	} else {
		if m.judge != nil {
			opts.Judge, opts.JudgeName, opts.JudgePricing = m.judge, o.judge, cfg.Observe.Pricing
		}
		if m.scores != nil {
			opts.Raters = []health.Rater{{Name: "scores:" + filepath.Base(o.scores), Scores: m.scores}}
		}
	}
	rep, err := health.Score(sctx, cases, runs, led, opts)
	if err != nil && !interrupted && ctx.Err() != nil {
		// Ctrl-C while reading the ledger: score what finished, without the judge.
		opts.Judge, opts.Raters, replayErr = nil, nil, ctx.Err()
		rep, err = health.Score(context.WithoutCancel(ctx), cases, runs, led, opts)
	}
	if err != nil {
		return nil, err
	}
	if err := rep.WriteFiles(dir); err != nil {
		return nil, err
	}
	return rep, replayErr
}

// knowledge is the demo's knowledge base, for the fabrication screen.
func knowledge() []health.Document {
	var ds []health.Document
	for _, d := range shop.KnowledgeBase {
		ds = append(ds, health.Document{ID: d.ID, Text: d.Title + "\n" + d.Text})
	}
	return ds
}

func printTable(w io.Writer, c *health.Comparison) {
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
	for _, r := range []*health.Report{b, a} {
		fmt.Fprintf(w, "%s: %s\n", r.Label, health.Headline(r.Total, r.Points))
	}
	for _, r := range []*health.Report{b, a} {
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
	if rc := a.RootCauses; len(rc) > 0 {
		fmt.Fprintf(w, "what to fix first (%s):\n", a.Label)
		for i, r := range rc {
			if i == 3 || r.Failed == 0 {
				break
			}
			fmt.Fprintf(w, "  %s (%d failed, cases %s): %s, %s\n", r.Tag, r.Failed, strings.Join(r.Cases, " "), r.Fix.Kind, r.Fix.Where)
		}
	}
	if c.Flagged {
		fmt.Fprintf(w, "side effect flagged: %v fell by %.0f or more\n", c.SideEffects, health.SideEffectDrop)
	}
}
