// Package healthcmd is the verb "agentguard health", the offline health check of the demo
// customer-service agent, built on health.Command (the same command a
// user's program gets from health.Main for its own agent): it replays the
// 30-case golden set through the guard twice — once in shadow mode
// ("unguarded": every rule detects, none enforces) and once enforcing
// ("guarded") — scores both on five dimensions, compares them, and writes
// the reports. By default it needs no network and no API key.
//
//	agentguard health [-out DIR] [-repeats N] [-floor F] [-cases FILE] [-tags T,...]
//	                  [-weights D=W,...] [-policy FILE] [-targets D,...] [-baseline REPORT.json] [-strict]
//	                  [-parallel N] [-model SPEC] [-judge SPEC] [-scores FILE]... [-cite ROUTES] [-timeout D] [-raw]
//
// DIR receives unguarded/ and guarded/, each with execution_trace.jsonl
// and report.{json,md,html}, the shared ledger/, and the comparison as
// report.{json,md,html}. The command prints the five-dimension table
// before and after, the verdict (releasable or not, why, and below the
// floor what cost the points) and the path of report.html.
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
	"context"
	_ "embed"
	"errors"
	"flag"
	"fmt"
	"io"
	"strings"
	"time"

	"github.com/agentguard/agentguard/examples/agentguard/internal/cli"
	"github.com/agentguard/agentguard/examples/agentguard/internal/models"
	"github.com/agentguard/agentguard/examples/agentguard/internal/shop"
	"github.com/agentguard/agentguard/guard"
	"github.com/agentguard/agentguard/guard/health"
	"github.com/agentguard/agentguard/guard/replay"
	"github.com/agentguard/agentguard/ledger/badgerstore"
	"github.com/tmc/langchaingo/llms"
)

//go:embed testdata/golden.jsonl
var goldenSet []byte

// errBelowFloor is returned when the guarded total is below the floor.
var errBelowFloor = health.ErrBelowFloor

// options are the demo's own flags and, for tests, the command's flags
// they set (see args).
type options struct {
	out      string
	repeats  int
	floor    float64
	cases    string
	model    string        // the agent's model (models.Open); "" means the scripted one
	judge    string        // the judge: "", "demo", or a model as for model
	timeout  time.Duration // of one run; 0 means 1m with the scripted model, 5m with a real one
	now      time.Time
	progress io.Writer
}

// args returns the command's flags o sets, for tests that call run.
func (o options) args() []string {
	var a []string
	add := func(name, value string) { a = append(a, "-"+name, value) }
	if o.out != "" {
		add("out", o.out)
	}
	add("repeats", fmt.Sprint(o.repeats))
	if o.floor != 0 {
		add("floor", fmt.Sprint(o.floor))
	}
	if o.cases != "" {
		add("cases", o.cases)
	}
	if o.timeout != 0 {
		add("timeout", o.timeout.String())
	}
	return a
}

var verb = cli.Verb{
	Name:     "health",
	Synopsis: "[-out DIR] [-repeats N] [-floor F] [-cases FILE] [-tags T,...] [-weights D=W,...] [-policy FILE] [-targets D,...] [-baseline REPORT.json] [-strict] [-parallel N] [-model SPEC] [-judge SPEC] [-scores FILE]... [-cite ROUTES] [-timeout D] [-raw]",
	Doc: `Replays the golden set through the demo agent twice, its guard rails only
watching ("unguarded") and enforcing ("guarded"), scores both on five
dimensions, prints the comparison and the verdict and writes the reports
into DIR. With -baseline, compares this guarded run with an earlier report
instead. Exit status 1 when the guarded total is below -floor (0 to 100;
the default, 60, is the lowest band the method lets ship), when the
side-effect rule flags a dimension outside -targets, or, with -strict,
when the golden set breaks the method's shape or a baseline is stale.
"agentguard health init -tools TOOLS.json -o golden.jsonl" writes a
starter golden set for your own agent's tools, which gets this command
from health.Main (package guard/health).`,
	MaxArgs: 0,
}

// Run is the verb: it parses args, runs the health check, and returns the
// exit status (see package cli).
func Run(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	if len(args) > 0 && args[0] == "init" {
		return health.Init(args[1:], stdout, stderr)
	}
	var o options
	fs := verb.FlagSet()
	cmd := command(&o)
	cmd.Flags(fs)
	fs.StringVar(&o.model, "model", "", "agent's "+models.FlagHelp)
	fs.StringVar(&o.judge, "judge", "", `judge of the screened cases: "" for none, "demo" for the offline scripted judge, or a model as for -model`)
	if _, code, ok := verb.Parse(fs, args, stdout, stderr); !ok {
		return code
	}
	cmd.Progress = cli.Progress(stderr)
	err := execute(ctx, cmd, &o, stdout)
	switch code := health.ExitCode(err); {
	case code == health.ExitUsage && errors.Is(err, health.ErrUsage):
		return verb.Fail(stderr, fs, strings.TrimPrefix(err.Error(), health.ErrUsage.Error()+": "))
	case err != nil:
		verb.Errorf(stderr, "%v", err)
		return code
	}
	return cli.ExitPassed
}

// run runs the health check with o, as Run does after parsing.
func run(ctx context.Context, o options, w io.Writer) error {
	cmd := command(&o)
	fs := flag.NewFlagSet("health", flag.ContinueOnError)
	fs.SetOutput(io.Discard)
	cmd.Flags(fs)
	if err := fs.Parse(o.args()); err != nil {
		return err
	}
	cmd.Progress = o.progress
	return execute(ctx, cmd, &o, w)
}

// command is health.Command for the demo agent: its golden set, guard,
// knowledge base and judge; the agent's model is read from o at Execute.
func command(o *options) *health.Command {
	return &health.Command{
		Cases:     goldenSet,
		CasesName: "testdata/golden.jsonl",
		Guard:     func(shadow bool) guard.Config { return shop.GuardConfig(nil, shadow) },
		Knowledge: knowledge(),
		OpenLedger: func(dir string) (health.Ledger, error) {
			return badgerstore.Open(dir, badgerstore.Options{})
		},
		Raters: func(cases []replay.Case) ([]health.Rater, error) {
			judge, err := judgeModel(o.judge, cases)
			if judge == nil || err != nil {
				return nil, err
			}
			return []health.Rater{{Name: o.judge, Model: judge, Pricing: shop.GuardConfig(nil, false).Observe.Pricing}}, nil
		},
	}
}

// execute reads the demo's flags into cmd and runs it.
func execute(ctx context.Context, cmd *health.Command, o *options, w io.Writer) error {
	agent, err := agentModel(o.model)
	if err != nil {
		return err
	}
	cmd.Agent, cmd.Now = newAgentFactory(agent), o.now
	if agent != nil {
		cmd.Timeout = 5 * time.Minute
	}
	return cmd.Execute(ctx, w)
}

// loadCases reads the embedded golden set.
func loadCases() ([]replay.Case, error) {
	return replay.LoadCases(strings.NewReader(string(goldenSet)), "testdata/golden.jsonl")
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

// knowledge is the demo's knowledge base, for the fabrication screen.
func knowledge() []health.Document {
	var ds []health.Document
	for _, d := range shop.KnowledgeBase {
		ds = append(ds, health.Document{ID: d.ID, Text: d.Title + "\n" + d.Text})
	}
	return ds
}
