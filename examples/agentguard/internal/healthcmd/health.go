// Package healthcmd is the verb "agentguard health", the offline health check of the demo
// customer-service agent: it replays the 30-case golden set through the
// guard twice — once in shadow mode ("unguarded": every rule detects, none
// enforces) and once enforcing ("guarded") — scores both on five
// dimensions, compares them, and writes the reports. By default it needs
// no network and no API key.
//
//	agentguard health [-out DIR] [-repeats N] [-floor F] [-cases FILE] [-parallel N]
//	                  [-model SPEC] [-judge SPEC] [-timeout D]
//
// DIR receives unguarded/ and guarded/, each with execution_trace.jsonl
// and report.{json,md,html}, the shared ledger/, and the comparison as
// report.{json,md,html}. The command prints the five-dimension table
// before and after and the path of report.html, and exits with status 1
// when the guarded total falls below the floor (on the 100-point scale),
// so that the same command can gate a release; status 2 means it could not
// run — a bad flag among them — or was interrupted (Ctrl-C keeps and
// scores the runs that finished, without the judge).
//
// The default floor, 50, sits between the demo's two totals: the guarded
// agent clears it, the same agent with its guard rails only watching does
// not, so a change that disables a guard rail fails the check.
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
	"github.com/agentguard/agentguard/guard/replay"
	"github.com/agentguard/agentguard/ledger/badgerstore"
	"github.com/agentguard/agentguard/trace"
	"github.com/tmc/langchaingo/llms"
)

//go:embed testdata/golden.jsonl
var goldenSet []byte

// errBelowFloor is returned when the guarded total is below the floor.
var errBelowFloor = errors.New("guarded total below the floor")

type options struct {
	out      string
	repeats  int
	parallel int
	floor    float64
	cases    string        // golden set file; "" means the embedded one
	model    string        // the agent's model (models.Open); "" means the scripted one
	judge    string        // the judge: "", "demo", or a model as for model
	timeout  time.Duration // of one run; 0 means 1m with the scripted model, 5m with a real one
	progress io.Writer
}

var verb = cli.Verb{
	Name:     "health",
	Synopsis: "[-out DIR] [-repeats N] [-floor F] [-cases FILE] [-parallel N] [-model SPEC] [-judge SPEC] [-timeout D]",
	Doc: `Replays the golden set through the demo agent twice, its guard rails only
watching ("unguarded") and enforcing ("guarded"), scores both on five
dimensions, prints the comparison and writes the reports into DIR.
Exit status 1 when the guarded total is below -floor.`,
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
	fs.Float64Var(&o.floor, "floor", 50, "lowest acceptable guarded total, on the 100-point scale")
	fs.StringVar(&o.cases, "cases", "", "golden set, JSONL (default: the demo's 30 cases)")
	fs.StringVar(&o.model, "model", "", "agent's "+models.FlagHelp)
	fs.StringVar(&o.judge, "judge", "", `judge of the screened cases: "" for none, "demo" for the offline scripted judge, or a model as for -model`)
	fs.DurationVar(&o.timeout, "timeout", 0, "time limit of one run (default 1m with the scripted model, 5m with -model)")
	if _, code, ok := verb.Parse(fs, args, stdout, stderr); !ok {
		return code
	}
	if cli.IsTerminal(stderr) {
		o.progress = stderr
	}
	err := run(ctx, o, stdout)
	switch {
	case errors.Is(err, errBelowFloor):
		verb.Errorf(stderr, "%v", err)
		return cli.ExitFindings
	case err != nil:
		verb.Errorf(stderr, "%v", err)
		return cli.ExitUsage
	}
	return cli.ExitPassed
}

func run(ctx context.Context, o options, w io.Writer) error {
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
	judge, err := judgeModel(o.judge, cases)
	if err != nil {
		return err
	}
	m := modelSet{agent: agent, judge: judge}
	if o.out == "" {
		if o.out, err = os.MkdirTemp("", "agentguard-health-"); err != nil {
			return err
		}
	}
	led, err := badgerstore.Open(filepath.Join(o.out, "ledger"), badgerstore.Options{})
	if err != nil {
		return err
	}
	defer led.Close()

	var reports []*health.Report
	var interrupted error
	for _, mode := range []struct {
		label  string
		shadow bool
	}{{"unguarded", true}, {"guarded", false}} {
		rep, err := replayAndScore(ctx, cases, led, o, m, mode.label, mode.shadow)
		if rep == nil {
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
	cmp := health.Compare(reports[0], reports[1], trace.Accuracy, trace.Coherence, trace.Memory)
	if err := cmp.WriteFiles(o.out); err != nil {
		return err
	}
	printTable(w, cmp)
	fmt.Fprintf(w, "report: %s\n", filepath.Join(o.out, health.FileHTML))
	if interrupted != nil {
		return interrupted
	}
	if g := reports[1].Points; g < o.floor {
		return fmt.Errorf("%w: %.1f < %.1f", errBelowFloor, g, o.floor)
	}
	return nil
}

func loadCases(name string) ([]replay.Case, error) {
	if name == "" {
		return replay.LoadCases(bytes.NewReader(goldenSet), "testdata/golden.jsonl")
	}
	f, err := os.Open(name)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	return replay.LoadCases(f, name)
}

// modelSet holds the agent's model, nil for the scripted one, and the
// judge, nil for none.
type modelSet struct{ agent, judge llms.Model }

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
		Traces:   f,
		Progress: o.progress,
	})
	if replayErr != nil && ctx.Err() == nil {
		return nil, replayErr // the traces could not be written
	}
	// After a Ctrl-C during the replay, what finished is scored, without
	// the judge; a Ctrl-C while the judge works stops its calls, each case
	// left recorded as not judged.
	opts := health.Options{Label: label, Knowledge: knowledge()}
	interrupted := ctx.Err() != nil
	sctx := ctx
	if interrupted {
		sctx = context.WithoutCancel(ctx)
	} else if m.judge != nil {
		opts.Judge, opts.JudgeName, opts.JudgePricing = m.judge, o.judge, cfg.Observe.Pricing
	}
	rep, err := health.Score(sctx, cases, runs, led, opts)
	if err != nil && !interrupted && ctx.Err() != nil {
		// Ctrl-C while reading the ledger: score what finished, without the judge.
		opts.Judge, replayErr = nil, ctx.Err()
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
	fmt.Fprintf(w, "%-12s %10s %10s %8s\n", "dimension", b.Label, a.Label, "change")
	for _, d := range c.Deltas {
		fmt.Fprintf(w, "%-12s %10.1f %10.1f %+8.1f\n", d.Dimension, d.Before, d.After, d.Change)
	}
	fmt.Fprintf(w, "%-12s %10s %10s %+8.1f\n", "total", fmt.Sprintf("%.2f/%.0f", b.Total, b.Points), fmt.Sprintf("%.2f/%.0f", a.Total, a.Points), c.PointsDelta)
	fmt.Fprintf(w, "%-12s %10s %10s\n", "band", b.Band, a.Band)
	rate := func(name string, x, y float64) {
		fmt.Fprintf(w, "%-12s %9.1f%% %9.1f%% %+7.1f\n", name, 100*x, 100*y, 100*(y-x))
	}
	rate("fabrication", b.Rates.Fabrication, a.Rates.Fabrication)
	rate("cascade", b.Rates.Cascade, a.Rates.Cascade)
	rate("amnesia", b.Rates.Amnesia, a.Rates.Amnesia)
	rate("drift", b.Metrics.DriftRate, a.Metrics.DriftRate)
	for _, r := range []*health.Report{b, a} {
		if j := r.Judge; j != nil {
			fmt.Fprintf(w, "judge %s: %d of %d cases screened and judged: %d confirmed, %d disputed, %d errors; %d calls, %d tokens, cost %.4f\n",
				r.Label, j.Screened, j.Cases, j.Confirmed, j.Disputed, j.Errors, j.Calls, j.TokensIn+j.TokensOut, j.Cost)
		}
	}
	if c.Flagged {
		fmt.Fprintf(w, "side effect flagged: %v fell by %.0f or more\n", c.SideEffects, health.SideEffectDrop)
	}
}
