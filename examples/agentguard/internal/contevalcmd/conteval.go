// Package contevalcmd is the verb "agentguard conteval": one round of
// continuous evaluation over a file of production traces, in any format
// trace.Import reads (agentguard trace JSONL, OpenAI chat logs; -format to
// name it), gzipped or not. It samples them by risk band, head and tail,
// runs the property assertions on every sample, and prints the sampled
// counts per band, the per-assertion results (an assertion that applied to
// no sample is a warning), the two pass-rate curves and the gate line with
// the round's cost; it writes the red samples as regression cases for the
// health check and files them in the ledger.
//
//	agentguard conteval -traces FILE [-format NAME] [-config FILE] [-since T]
//	    [-ledger DIR] [-cases FILE] [-trend FILE] [-judge demo] [-report FILE]
//	agentguard conteval merge -into GOLDEN.jsonl CASES.jsonl...
//
// merge appends the regression cases of earlier rounds to the golden set,
// tagged for review and unverified (conteval.Merge).
//
// Exit status: 0 green, 0 with a warning yellow, 1 red, 2 when the round
// could not run or a line of the input could not be read (a usage or input
// error: a broken input passes no gate), 3 not enough samples to judge.
//
// The sample input is a day of the demo agent's traffic:
//
//	agentguard conteval -traces examples/agentguard/internal/contevalcmd/testdata/traces.jsonl.gz \
//	    -config examples/agentguard/internal/contevalcmd/testdata/config.json
package contevalcmd

//go:generate go run ./gen -seed 1 -n 3000 -out testdata/traces.jsonl.gz

import (
	"bufio"
	"compress/flate"
	"compress/gzip"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"iter"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/agentguard/agentguard/examples/agentguard/internal/cli"
	"github.com/agentguard/agentguard/guard/conteval"
	"github.com/agentguard/agentguard/guard/guardtest"
	"github.com/agentguard/agentguard/guard/replay"
	"github.com/agentguard/agentguard/ledger"
	"github.com/agentguard/agentguard/ledger/badgerstore"
	"github.com/agentguard/agentguard/trace"
	"github.com/tmc/langchaingo/llms"
)

// exitFailed is the exit status when the round could not run.
const exitFailed = cli.ExitUsage

var verb = cli.Verb{
	Name:     "conteval",
	Synopsis: "-traces FILE [-format NAME] [-config FILE] [-since T] [-ledger DIR] [-cases FILE] [-trend FILE] [-judge demo] [-report FILE] [-review FILE] [-reviewed FILE]",
	Doc: `Runs one round of continuous evaluation over production traces: samples
them by risk band, runs the property assertions on the samples, and gates
the pass rate. Red samples become regression cases and ledger entries;
"agentguard conteval merge -into golden.jsonl CASES.jsonl..." merges those
cases into the golden set for review.`,
	MaxArgs: 0,
}

// Run is the verb: it runs a round over the traces args name and returns
// the exit status (see package cli).
func Run(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	if len(args) > 0 && args[0] == "merge" {
		return runMerge(args[1:], stdout, stderr)
	}
	return run(ctx, args, stdout, stderr, time.Now())
}

// options are the command's flags.
type options struct {
	traces, format, config, since, ledger, cases, details, trend, judge, report string
	review, reviewed                                                            string
}

// parseFlags parses args; ok is false when the verb must return code.
func parseFlags(args []string, stdout, stderr io.Writer) (o options, code int, ok bool) {
	fs := verb.FlagSet()
	fs.StringVar(&o.traces, "traces", "", "production traces in a format -format names or detected from the first line; gzipped files are read as such; - for stdin (required)")
	fs.StringVar(&o.format, "format", "", "format of -traces, one of "+trace.FormatNames()+" (default: detected from the first line)")
	fs.StringVar(&o.config, "config", "", "versioned config file (JSON); default: the built-in defaults, unversioned")
	fs.StringVar(&o.since, "since", "", "evaluate traces that started at or after T: RFC 3339, YYYY-MM-DD, or a duration before now (24h)")
	fs.StringVar(&o.ledger, "ledger", "", "ledger directory to file red samples in, as violations ce_<assertion>")
	fs.StringVar(&o.cases, "cases", "", "file to write the regression cases to, in the health check's case format")
	fs.StringVar(&o.details, "details", "", "file for the cases' provenance (trace ids, failures, route history); default: beside -cases, .details.jsonl")
	fs.StringVar(&o.trend, "trend", "", "trend file (JSONL): read for history, one line appended per round")
	fs.StringVar(&o.judge, "judge", "", `judge model: "demo" for an offline stand-in that reports usage; default none`)
	fs.StringVar(&o.report, "report", "", "file to write the whole report to, as JSON")
	fs.StringVar(&o.review, "review", "", "file to write 20 green head samples to, for this week's human check (set \"ok\" on each)")
	fs.StringVar(&o.reviewed, "reviewed", "", "a human check a person filled in (an earlier -review file): recorded on the trend; a wrong green sample turns green to yellow")
	if _, code, ok := verb.Parse(fs, args, stdout, stderr); !ok {
		return o, code, false
	}
	if o.traces == "" {
		return o, verb.Fail(stderr, fs, "-traces is required"), false
	}
	if _, ok := trace.LookupFormat(o.format); o.format != "" && !ok {
		return o, verb.Fail(stderr, fs, fmt.Sprintf("-format %q: want one of %s", o.format, trace.FormatNames())), false
	}
	if o.judge != "" && o.judge != "demo" {
		return o, verb.Fail(stderr, fs, fmt.Sprintf(`-judge %q: only "demo" is built in`, o.judge)), false
	}
	if o.details == "" && o.cases != "" {
		o.details = strings.TrimSuffix(o.cases, filepath.Ext(o.cases)) + ".details.jsonl"
	}
	return o, 0, true
}

func run(ctx context.Context, args []string, stdout, stderr io.Writer, now time.Time) int {
	o, code, ok := parseFlags(args, stdout, stderr)
	if !ok {
		return code
	}
	rep, info, err := round(ctx, o, stdout, stderr, now)
	if err != nil {
		verb.Errorf(stderr, "%v", err)
		if errors.Is(err, trace.ErrUnknownFormat) || errors.Is(err, trace.ErrAmbiguousFormat) {
			fmt.Fprintf(stderr, "  (name the format with -format: %s)\n", trace.FormatNames())
		}
		return exitFailed
	}
	if info.bad > 0 { // input problems win over the verdict: a broken input passes no gate
		verb.Errorf(stderr, "%d lines of %s could not be read (the first ones are above); the verdict is not a gate until the input is clean", info.bad, info.name)
		return exitFailed
	}
	return rep.Verdict.ExitCode() // cli.ExitFindings, cli.ExitNotEnough or cli.ExitPassed
}

// round runs the round and prints it.
func round(ctx context.Context, o options, stdout, stderr io.Writer, now time.Time) (_ *conteval.Report, info traceInfo, err error) {
	cfg := conteval.Config{}
	if o.config != "" {
		var err error
		if cfg, err = conteval.LoadConfig(o.config); err != nil {
			return nil, info, err
		}
	}
	var since time.Time
	if o.since != "" {
		if since, err = cli.ParseTime("since", o.since, now); err != nil {
			return nil, info, err
		}
	}
	in, err := cli.OpenInput(ctx, o.traces)
	if err != nil {
		return nil, info, err
	}
	defer in.Close()
	info.name = in.Name
	var history []conteval.TrendPoint
	if o.trend != "" {
		if history, err = conteval.LoadTrend(o.trend); err != nil {
			return nil, info, err
		}
	}
	var human *conteval.HumanCheck
	if o.reviewed != "" {
		f, err := os.Open(o.reviewed)
		if err != nil {
			return nil, info, err
		}
		hc, err := conteval.ReadReview(f, o.reviewed)
		f.Close()
		if err != nil {
			return nil, info, err
		}
		human = &hc
	}
	ev := &conteval.Evaluator{Config: cfg, History: history}
	if o.review != "" {
		ev.Review = conteval.DefaultReview
	}
	if o.judge == "demo" {
		ev.Judge = demoJudge()
	}
	if o.ledger != "" {
		led, err := badgerstore.Open(o.ledger, badgerstore.Options{})
		if err != nil {
			return nil, info, err
		}
		defer func() {
			if cerr := led.Close(); err == nil && cerr != nil {
				err = cerr
			}
		}()
		ev.Ledger = led
	}
	// The traces are read and sampled as a stream: memory does not grow
	// with the number of traces (a million fit in tens of MB).
	rep, runErr := ev.RunStream(ctx, readTraces(in, o.format, since, &info, stderr), now)
	if rep == nil {
		return nil, info, runErr
	}
	if led, ok := ev.Ledger.(ledger.TraceStore); ok && runErr == nil {
		// The red samples' traces go beside their entries, so that "ledger
		// trace" and "ledger cases" find them (the store de-identifies them).
		for _, s := range rep.Red() {
			if s.Trace != nil {
				if err := led.PutTrace(ctx, s.Trace); err != nil {
					return nil, info, err
				}
			}
		}
	}
	if human != nil {
		rep.AddHumanCheck(*human)
	}
	w := bufio.NewWriter(stdout)
	defer w.Flush()
	printReport(w, rep, cfg, o, info)
	if o.review != "" {
		items := rep.ReviewItems(conteval.DefaultReview)
		if err := cli.WriteFile(o.review, func(f io.Writer) error { return conteval.WriteReview(f, items) }); err != nil {
			return nil, info, err
		}
		fmt.Fprintf(w, "human check: %d green head samples in %s; set \"ok\" on each and pass the file as -reviewed next round\n", len(items), o.review)
	}
	if human != nil {
		fmt.Fprintf(w, "human check %s: %d samples checked, %d found wrong\n", human.Source, human.Checked, len(human.Wrong))
	}

	newCases := 0
	if o.cases != "" {
		if newCases, err = saveCases(o.cases, o.details, rep.Cases); err != nil {
			return nil, info, err
		}
	}
	if o.report != "" {
		if err := cli.WriteFile(o.report, func(f io.Writer) error {
			enc := json.NewEncoder(f)
			enc.SetIndent("", "  ")
			enc.SetEscapeHTML(false)
			return enc.Encode(rep)
		}); err != nil {
			return nil, info, err
		}
	}
	if o.trend != "" {
		if err := conteval.AppendTrend(o.trend, rep.Trend); err != nil {
			return nil, info, err
		}
	}
	printLoop(w, rep, o, history, newCases)
	if runErr != nil {
		return nil, info, runErr
	}
	return rep, info, nil
}

// saveCases adds the round's cases to the cases file and the details file,
// keeping the cases they already hold: a case id already there (the same
// trace, from an earlier round) is not written again. It returns how many
// cases were new.
func saveCases(casesPath, detailsPath string, cases []conteval.Case) (int, error) {
	var old []replay.Case
	if f, err := os.Open(casesPath); err == nil {
		old, err = replay.LoadCases(f, casesPath)
		f.Close()
		if err != nil {
			return 0, fmt.Errorf("%s holds cases the health check cannot load; not adding to it: %w", casesPath, err)
		}
	} else if !errors.Is(err, fs.ErrNotExist) {
		return 0, err
	}
	var oldDetails []conteval.Case
	if f, err := os.Open(detailsPath); err == nil {
		oldDetails, err = conteval.ReadCaseDetails(f)
		f.Close()
		if err != nil {
			return 0, err
		}
	} else if !errors.Is(err, fs.ErrNotExist) {
		return 0, err
	}
	have := map[string]bool{}
	for _, c := range old {
		have[c.ID] = true
	}
	var fresh []conteval.Case
	for _, c := range cases {
		if !have[c.Case.ID] {
			have[c.Case.ID] = true
			fresh = append(fresh, c)
		}
	}
	err := cli.WriteFile(casesPath, func(f io.Writer) error {
		for _, c := range old {
			if err := replay.WriteCase(f, c); err != nil {
				return err
			}
		}
		return conteval.WriteCases(f, fresh)
	})
	if err != nil {
		return 0, err
	}
	err = cli.WriteFile(detailsPath, func(f io.Writer) error {
		return conteval.WriteCaseDetails(f, append(oldDetails, fresh...))
	})
	return len(fresh), err
}

// traceInfo describes the input, as readTraces counts it.
type traceInfo struct {
	name               string
	read, skipped, bad int
	first, last        time.Time
}

// readTraces yields the traces of in, gunzipped already, in the format
// named or detected, that started at or after since, and counts what it
// read in info. Lines that are not traces are reported, the first five of
// them, counted and skipped; an input that fails (a corrupt gzip stream, a
// read error, no known format) is yielded as an error and ends it.
func readTraces(in *cli.Input, format string, since time.Time, info *traceInfo, stderr io.Writer) iter.Seq2[*trace.Trace, error] {
	return func(yield func(*trace.Trace, error) bool) {
		for t, err := range trace.Import(in, in.Name, format) {
			if err != nil {
				if isIOError(err) || errors.Is(err, trace.ErrUnknownFormat) || errors.Is(err, trace.ErrAmbiguousFormat) {
					yield(nil, err)
					return
				}
				if info.bad++; info.bad <= 5 {
					verb.Errorf(stderr, "skipped: %v", err)
				}
				continue
			}
			info.read++
			if !since.IsZero() && t.Start.Before(since) {
				info.skipped++
				continue
			}
			if info.first.IsZero() || t.Start.Before(info.first) {
				info.first = t.Start
			}
			if t.Start.After(info.last) {
				info.last = t.Start
			}
			if !yield(t, nil) {
				return
			}
		}
	}
}

// isIOError reports whether a reader's error is its input failing (a
// truncated or corrupt gzip stream, a read error) rather than one bad line,
// which is skipped.
func isIOError(err error) bool {
	var pathErr *fs.PathError
	var corrupt flate.CorruptInputError
	return errors.Is(err, gzip.ErrChecksum) || errors.Is(err, gzip.ErrHeader) || errors.Is(err, io.ErrUnexpectedEOF) ||
		errors.As(err, &corrupt) || errors.As(err, &pathErr)
}

var bandNotes = map[conteval.Band]string{
	conteval.BandPrivilege:     "forced: a tool outside the allow-list ran (any one fails the gate)",
	conteval.BandError:         "forced: a step ended in an error",
	conteval.BandLowConfidence: "forced: intent confidence below %.2f",
	conteval.BandOverCost:      "forced: cost above %g × route p%g",
	conteval.BandHead:          "%g%% of all traces, unbiased; %d of them in no forced band",
	conteval.BandTail:          "the %d most expensive normal traces of each of %d routes",
}

func printReport(w io.Writer, rep *conteval.Report, cfg conteval.Config, o options, info traceInfo) {
	s := cfg.Sampling
	if s.MinConfidence == 0 {
		s.MinConfidence = conteval.DefaultMinConfidence
	}
	if s.CostMultiplier == 0 {
		s.CostMultiplier = conteval.DefaultCostMultiplier
	}
	if s.CostPercentile == 0 {
		s.CostPercentile = conteval.DefaultCostPercentile
	}
	if s.HeadRate == 0 {
		s.HeadRate = conteval.DefaultHeadRate
	}
	if s.TailPerRoute == 0 {
		s.TailPerRoute = conteval.DefaultTailPerRoute
	}
	fmt.Fprintf(w, "conteval: %d traces from %s", rep.Traces, o.traces)
	if !info.first.IsZero() {
		fmt.Fprintf(w, ", %s to %s", info.first.UTC().Format("2006-01-02 15:04"), info.last.UTC().Format("2006-01-02 15:04 MST"))
	}
	if info.skipped > 0 {
		fmt.Fprintf(w, " (%d older left out)", info.skipped)
	}
	if rep.Duplicates > 0 || info.bad > 0 {
		fmt.Fprintf(w, " (%d repeated ids, %d unreadable lines skipped)", rep.Duplicates, info.bad)
	}
	fmt.Fprintf(w, "\nconfig %s (fingerprint %s)\n\n", rep.ConfigVersion, rep.ConfigFingerprint)

	fmt.Fprintf(w, "sampled %d of %d traces (%.1f%%), one sample per trace id; a sample may sit in several bands:\n",
		rep.All.N, rep.Traces, 100*float64(rep.All.N)/float64(max(rep.Traces, 1)))
	for _, b := range conteval.Bands() {
		var note string
		switch b {
		case conteval.BandPrivilege, conteval.BandError:
			note = bandNotes[b]
		case conteval.BandLowConfidence:
			note = fmt.Sprintf(bandNotes[b], s.MinConfidence)
		case conteval.BandOverCost:
			note = fmt.Sprintf(bandNotes[b], s.CostMultiplier, s.CostPercentile*100)
		case conteval.BandHead:
			note = fmt.Sprintf(bandNotes[b], s.HeadRate*100, rep.HeadAdded)
		case conteval.BandTail:
			note = fmt.Sprintf(bandNotes[b], s.TailPerRoute, len(rep.Routes))
		}
		fmt.Fprintf(w, "  %-16s %5d  %s\n", b, rep.Bands[b], note)
	}

	fmt.Fprintf(w, "\nassertions, over all %d samples (head sample in the last column):\n", rep.All.N)
	fmt.Fprintf(w, "  %-26s %7s %6s %9s   %s\n", "assertion", "applied", "failed", "pass rate", "head failed/applied")
	for _, a := range rep.Assertions {
		rate := "-"
		if r, ok := a.Rate(); ok {
			rate = fmt.Sprintf("%.3f", r)
		}
		fmt.Fprintf(w, "  %-26s %7d %6d %9s   %d/%d\n", a.Name, a.Applied, a.Failed, rate, a.HeadFailed, a.HeadApplied)
	}
	if ds := rep.CitationDomains; len(ds) > 0 {
		parts := make([]string, len(ds))
		for i, d := range ds {
			parts[i] = fmt.Sprintf("%s %d", d.Domain, d.Defects)
		}
		fmt.Fprintf(w, "citation defects by document domain: %s\n", strings.Join(parts, ", "))
	}

	fmt.Fprintln(w, "\npass rate, two curves (never merged):")
	fmt.Fprintf(w, "  %-44s %s\n", "head sample (unbiased production level)", estimate(rep.Head))
	fmt.Fprintf(w, "  %-44s %s\n", "all samples (problem density, risk bands in)", estimate(rep.All))

	fmt.Fprintln(w, "\nby route:            all samples        head sample")
	routes := make([]string, 0, len(rep.RouteCounts))
	for r := range rep.RouteCounts {
		routes = append(routes, r)
	}
	slices.Sort(routes)
	for _, r := range routes {
		rc := rep.RouteCounts[r]
		fmt.Fprintf(w, "  %-16s %s   %s\n", r, count(rc.All), count(rc.Head))
	}

	if j := rep.Judge; j != nil {
		fmt.Fprintf(w, "\njudge: %d calls (%d failed, %d left over max_calls), %d+%d tokens, cost %.6f\n", j.Calls, j.Errors, j.Left, j.TokensIn, j.TokensOut, j.Cost)
		fmt.Fprintf(w, "  red samples: %d judged, %d confirmed, %d disputed\n", j.Red, j.Confirmed, j.Disputed)
		fmt.Fprintf(w, "  passing head samples: %d judged, %d failed by the judge (missed by the assertions)\n", j.Head, j.Missed)
	}
	fmt.Fprintln(w)
	for _, warning := range rep.Warnings {
		fmt.Fprintf(w, "warning: %s\n", warning)
	}
	if o.config == "" {
		fmt.Fprintln(w, "warning: no -config: the built-in defaults name no routes, tools or schemas of yours; pass your versioned config")
	}
	fmt.Fprintf(w, "%s\n", rep.GateLine())
	switch rep.Verdict {
	case conteval.Yellow:
		fmt.Fprintln(w, "warning: yellow — the pass rate meets the floor but its interval reaches below it; watch the next rounds")
	case conteval.NotEnough:
		fmt.Fprintln(w, "not enough samples to judge: raise sampling.head_rate or evaluate a longer window")
	}
}

func estimate(e conteval.Estimate) string {
	return fmt.Sprintf("%.3f (%d/%d)  bootstrap %v  Wilson %v", e.Rate, e.Passes, e.N, e.Bootstrap, e.Wilson)
}

func count(c conteval.Count) string {
	if r, ok := c.Rate(); ok {
		return fmt.Sprintf("%.3f (%4d/%4d)", r, c.Passes, c.N)
	}
	return fmt.Sprintf("%-17s", "-")
}

// printLoop says where the red samples went, and shows the trend.
func printLoop(w io.Writer, rep *conteval.Report, o options, history []conteval.TrendPoint, newCases int) {
	fmt.Fprintf(w, "\nred samples: %d", len(rep.Red()))
	if o.cases != "" {
		fmt.Fprintf(w, "; %d regression cases, %d of them new, added to %s (provenance in %s)", len(rep.Cases), newCases, o.cases, o.details)
	} else {
		fmt.Fprintf(w, "; %d regression cases (use -cases FILE to write them)", len(rep.Cases))
	}
	if rep.Uncased > 0 {
		fmt.Fprintf(w, "; %d without a user turn to replay", rep.Uncased)
	}
	fmt.Fprintln(w)
	if o.ledger != "" {
		fmt.Fprintf(w, "ledger %s: %d violations filed, %d already there\n", o.ledger, rep.Filed, rep.AlreadyFiled)
	}
	if o.trend == "" {
		return
	}
	points := append(slices.Clip(history), rep.Trend)
	if len(points) > 8 {
		points = points[len(points)-8:]
	}
	fmt.Fprintf(w, "trend %s (last %d rounds; | marks a new config version, * parameters changed without one):\n", o.trend, len(points))
	for _, p := range points {
		mark := " "
		switch {
		case p.VersionChanged:
			mark = "|"
		case p.ParamsChanged:
			mark = "*"
		}
		fmt.Fprintf(w, "  %s %s %-18s head %.3f [%.3f, %.3f]  all %.3f  %-18s cost %.6f\n",
			mark, p.Time.UTC().Format("2006-01-02 15:04"), p.ConfigVersion, p.Head.Rate, p.Head.Lo, p.Head.Hi, p.All.Rate, p.Verdict, p.Cost)
	}
}

// demoJudge is an offline stand-in for a judge model: it answers as a judge
// must, with one JSON object {"score": 1-5, "reason": "..."}, scoring 2 (a
// structural error, which fails at the default pass score of 4) a run whose
// automatic checks failed or whose guard flagged a step it did not
// enforce, and 5 the others; it reports token usage as a provider would.
func demoJudge() llms.Model {
	return guardtest.Func(func(_ context.Context, msgs []llms.MessageContent, _ llms.CallOptions) (guardtest.Reply, error) {
		var prompt string
		for _, m := range msgs {
			for _, p := range m.Parts {
				if t, ok := p.(llms.TextContent); ok {
					prompt += t.Text
				}
			}
		}
		r := guardtest.Text(`{"score": 5, "reason": "The answers follow from the tool results."}`)
		switch {
		case strings.Contains(prompt, "Automatic checks that failed"):
			r = guardtest.Text(`{"score": 2, "reason": "The run breaks the properties listed."}`)
		case strings.Contains(prompt, ", not enforced:"):
			r = guardtest.Text(`{"score": 2, "reason": "The guard flagged a step in shadow mode and the agent went on."}`)
		}
		r.Usage = &guardtest.Usage{In: trace.EstimateTokens(prompt), Out: trace.EstimateTokens(r.Text)}
		return r, nil
	})
}
