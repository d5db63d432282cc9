// Package evaluatecmd is the verb "agentguard evaluate": it judges recorded agent traces offline with agentguard's
// rules and prints a trajectory score per trace, so that a set of recorded
// runs can gate a release.
//
//	agentguard evaluate [-format NAME] [-policy FILE] [-now TIME] [-profile conversational|autonomous] FILE...
//
// Each FILE holds recorded runs in a format trace.Import reads, detected
// from its first line unless -format names it: agentguard's trace JSONL,
// OpenAI-style chat logs one conversation per line ({"id", "messages",
// "tools"}; see trace.ImportOpenAI), whose "id" is the trace id and whose
// "tools" list is the allow-list, or OpenAI chat messages one per line (the
// file one conversation). A gzipped file is read as such; FILE "-" is the
// standard input. -policy names a policy file, YAML or JSON (see
// guard/policy.md), that sets thresholds, the allow-list, which tools change
// state or read untrusted content, confirmations, schemas and the domain's
// checks; without it the guard has its default rules. An allow-list in the
// policy replaces the traces' own. The checks read "now" as each step's
// recorded time, the policy's "now", or -now (RFC 3339 or a date), which
// overrides both: for traces recorded in a simulated world.
//
// For each trace it prints one JSON line,
//
//	{"trace_id":"t1","score":80,"passed":true,"violations":[{"step":3,"rule":"argument-provenance",
//	 "dimension":"accuracy","severity":"critical","message":"..."}]}
//
// with the findings whose verdict is not allow, in step order; the score is
// 100 minus 20 per violation, floored at 0, and a trace passes at 80 (see
// guard.Report). A last line sums up:
//
//	{"summary":{"traces":3,"passed":2,"failed":1,"errors":0,"violations":{"argument-provenance":1}}}
//
// Traces are judged on every CPU the Go runtime may use (GOMAXPROCS) while
// the next ones are read; the output is in the input's order, the same as
// judging one at a time. A trace whose judgement panics is reported as an
// error, like a line that cannot be read.
//
// A line that cannot be read is reported on the standard error with its
// file and line number ("trace: runs.jsonl:7: ...") and counted in errors,
// as is a file that cannot be opened; the rest of the input is still
// evaluated.
//
// The exit status is 0 when every trace passed, 1 when a trace failed, and
// 2 on a usage error, an unreadable policy or file, a bad line, or no trace
// at all: input problems win over failures, so that a broken input never
// passes a gate.
package evaluatecmd

import (
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"slices"
	"strconv"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/agentguard/agentguard/examples/agentguard/internal/cli"
	"github.com/agentguard/agentguard/guard"
	guardpolicy "github.com/agentguard/agentguard/guard/policy"
	"github.com/agentguard/agentguard/guard/rules"
	"github.com/agentguard/agentguard/trace"
)

var verb = cli.Verb{
	Name:     "evaluate",
	Synopsis: "[-format NAME] [-policy FILE] [-now TIME] [-profile conversational|autonomous] FILE...",
	Doc: `Judges recorded traces with agentguard's rules and prints one JSON line per
trace (score, passed, violations) and a summary line; on a terminal, a table
(trace, score, findings, the worst finding), unless -json. The format of each
FILE is detected from its first line unless -format names it. FILE "-" is
the standard input.

Rules on by default, by the names findings carry and a policy's disable
list takes: ` + strings.Join(rules.Builtin(), ", ") + `.
Off unless a policy turns them on: ` + rules.ToolFailure + ` (gates.dead_ends) and
the policy's own checks (` + rules.PolicyChecks + `, each finding under its check's name).`,
	MinArgs: 1,
	MaxArgs: -1,
	ArgName: "FILE",
}

// Run is the verb: it evaluates the files named in args and returns the
// exit status (see package cli). "-" reads cli.Stdin(ctx).
func Run(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	return run(ctx, args, stdout, stderr)
}

// Exit statuses.
const (
	exitPassed   = cli.ExitPassed
	exitFailed   = cli.ExitFindings
	exitBadInput = cli.ExitUsage
)

// result is the line printed for one trace.
type result struct {
	TraceID    string      `json:"trace_id"`
	Score      int         `json:"score"`
	Passed     bool        `json:"passed"`
	Violations []violation `json:"violations"`
	// Warnings are the findings recorded but not enforced (verdict allow).
	Warnings []violation `json:"warnings,omitempty"`
}

type violation struct {
	Step int `json:"step"`
	// Source is where the step is in the input: "message 7" of a chat log.
	Source    string          `json:"source,omitempty"`
	Rule      string          `json:"rule"`
	Verdict   trace.Verdict   `json:"verdict"`
	Dimension trace.Dimension `json:"dimension"`
	Severity  trace.Severity  `json:"severity"`
	Message   string          `json:"message"`
	Facts     []trace.Fact    `json:"facts,omitempty"`
}

// maxErrorLines is how many unreadable traces of one file are printed
// before the rest are only counted: the wrong -format on a large file
// says so in a few lines, not one per line of the file.
const maxErrorLines = 5

// summary is the last line.
type summary struct {
	Traces     int            `json:"traces"`
	Passed     int            `json:"passed"`
	Failed     int            `json:"failed"`
	Errors     int            `json:"errors"`     // lines and files that could not be read
	Violations map[string]int `json:"violations"` // by rule
}

// run is the verb: it reads the files named in args (cli.Stdin for "-"),
// writes results to stdout and problems to stderr, and returns the exit
// status.
func run(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	fs := verb.FlagSet()
	format := fs.String("format", "", "input format, one of "+trace.FormatNames()+" (default: detected from the first line)")
	policy := fs.String("policy", "", "policy `FILE` (YAML or JSON, see guard/policy.md) configuring the guard; default: the default rules")
	now := fs.String("now", "", "the `TIME` the policy's checks read as now (RFC 3339 or 2006-01-02); default: each step's recorded time")
	profile := fs.String("profile", "", "who authorizes writes: conversational (the default: the user, turn by turn) or autonomous (the user's task); overrides the policy's")
	explain := fs.Bool("explain", false, "print each trace as text, for a reviewer: what the import understood (user turns, tools, each step: its role, calls, result, failure, input message) and every finding, warnings included, with the facts it rests on")
	jsonOut := fs.Bool("json", false, "print JSON lines even on a terminal (they are the output whenever stdout is not a terminal)")
	files, code, ok := verb.Parse(fs, args, stdout, stderr)
	if !ok {
		return code
	}
	if _, ok := trace.LookupFormat(*format); *format != "" && !ok {
		return verb.Fail(stderr, fs, fmt.Sprintf("-format %q: want one of %s", *format, trace.FormatNames()))
	}

	var at time.Time
	if *now != "" {
		var err error
		if at, err = cli.ParseTime("now", *now, time.Now()); err != nil {
			return verb.Fail(stderr, fs, err.Error())
		}
	}
	var cfg guard.Config
	if *policy != "" {
		p, err := guardpolicy.Open(*policy)
		if err != nil {
			fmt.Fprintf(stderr, "agentguard evaluate: %v\n", err)
			return exitBadInput
		}
		cfg = p.WithNow(at).Config()
	} else if *now != "" {
		return verb.Fail(stderr, fs, "-now needs -policy: only a policy's checks read the clock")
	}
	switch p := guard.Profile(*profile); p {
	case "":
	case guard.ProfileConversational, guard.ProfileAutonomous:
		cfg.Gates.Profile = p
	default:
		return verb.Fail(stderr, fs, fmt.Sprintf("unknown profile %q (want conversational or autonomous)", *profile))
	}
	g := guard.New(cfg)

	enc := json.NewEncoder(stdout)
	enc.SetEscapeHTML(false)
	var table *tabwriter.Writer // a terminal gets a table, as go test prints text unless -json
	if !*explain && !*jsonOut && isTerminal(stdout) {
		table = tabwriter.NewWriter(stdout, 0, 0, 2, ' ', 0)
		fmt.Fprintln(table, "TRACE\tSCORE\tRESULT\tFINDINGS\tWORST FINDING")
	}
	sum := summary{Violations: map[string]int{}}
	each := func(in io.Reader, name string) error {
		shown := 0 // error lines printed for this file
		defer func() {
			if shown > maxErrorLines {
				fmt.Fprintf(stderr, "agentguard evaluate: %s: %d unreadable traces in all (%d shown)\n", name, shown, maxErrorLines)
			}
		}()
		for j, err := range evaluated(trace.Import(in, name, *format), g, parallelism()) {
			if err != nil {
				if shown++; shown <= maxErrorLines {
					fmt.Fprintln(stderr, err) // a *trace.ParseError: "trace: FILE:LINE: ..."
					if errors.Is(err, trace.ErrUnknownFormat) || errors.Is(err, trace.ErrAmbiguousFormat) {
						fmt.Fprintf(stderr, "  (name the format with -format: %s)\n", trace.FormatNames())
					}
				}
				sum.Errors++
				continue
			}
			t, rep := j.trace, j.report
			res := result{TraceID: t.ID, Score: rep.Score, Passed: rep.Passed, Violations: []violation{}}
			for _, f := range rep.Findings {
				v := violation{Step: f.Step, Source: f.Source, Rule: f.Rule, Verdict: f.Verdict, Dimension: f.Dimension, Severity: f.Severity, Message: f.Message, Facts: f.Facts}
				if f.Verdict == trace.Allow {
					res.Warnings = append(res.Warnings, v)
					continue
				}
				res.Violations = append(res.Violations, v)
				sum.Violations[f.Rule]++
			}
			switch {
			case *explain:
				if err := explainTrace(stdout, t, rep); err != nil {
					return err
				}
			case table != nil:
				tableRow(table, res)
			default:
				if err := enc.Encode(res); err != nil {
					return err
				}
			}
			sum.Traces++
			if rep.Passed {
				sum.Passed++
			} else {
				sum.Failed++
			}
		}
		return nil
	}
	for _, name := range files {
		in, err := cli.OpenInput(ctx, name)
		if err != nil {
			verb.Errorf(stderr, "%v", err)
			sum.Errors++
			continue
		}
		err = each(in, in.Name)
		in.Close()
		if err != nil { // writing the results failed
			verb.Errorf(stderr, "%v", err)
			return exitBadInput
		}
	}
	var err error
	if table != nil {
		err = table.Flush()
	}
	if *explain || table != nil {
		if err == nil {
			_, err = fmt.Fprintf(stdout, "%d traces: %d passed, %d failed, %d unreadable\n", sum.Traces, sum.Passed, sum.Failed, sum.Errors)
		}
	} else {
		err = enc.Encode(struct {
			Summary summary `json:"summary"`
		}{sum})
	}
	if err != nil {
		fmt.Fprintf(stderr, "agentguard evaluate: %v\n", err)
		return exitBadInput
	}
	switch {
	case sum.Errors > 0:
		return exitBadInput
	case sum.Traces == 0:
		fmt.Fprintln(stderr, "agentguard evaluate: no trace in the input")
		return exitBadInput
	case sum.Failed > 0:
		return exitFailed
	}
	return exitPassed
}

// explainTrace writes one trace's verdict and each of its findings as a
// reviewer reads them: what was decided on which step, and the facts it
// rests on.
// isTerminal reports whether w is a terminal: results are then a table.
var isTerminal = func(w io.Writer) bool {
	f, ok := w.(*os.File)
	if !ok {
		return false
	}
	st, err := f.Stat()
	return err == nil && st.Mode()&os.ModeCharDevice != 0
}

// tableRow writes a trace's row: its score, whether it passed, how many
// findings (warnings included), and the worst of them with its evidence.
func tableRow(w io.Writer, res result) {
	verdict := "passed"
	if !res.Passed {
		verdict = "failed"
	}
	worst := "-"
	all := append(slices.Clone(res.Violations), res.Warnings...)
	if len(all) > 0 {
		v := slices.MinFunc(all, func(a, b violation) int { return cmp.Compare(severityRank(b.Severity), severityRank(a.Severity)) })
		worst = fmt.Sprintf("step %d %s (%s): %s", v.Step, v.Rule, v.Verdict, v.Message)
		if v.Source != "" {
			worst = fmt.Sprintf("%s, step %d %s (%s): %s", v.Source, v.Step, v.Rule, v.Verdict, v.Message)
		}
		if r := []rune(worst); len(r) > 100 {
			worst = string(r[:99]) + "…"
		}
	}
	fmt.Fprintf(w, "%s\t%d\t%s\t%d\t%s\n", res.TraceID, res.Score, verdict, len(all), strings.ReplaceAll(worst, "\t", " "))
}

// severityRank orders severities, the worst highest.
func severityRank(s trace.Severity) int {
	return slices.Index([]trace.Severity{trace.SeverityInfo, trace.SeverityWarning, trace.SeverityError, trace.SeverityCritical}, s)
}

func explainTrace(w io.Writer, t *trace.Trace, rep guard.Report) error {
	verdict := "passed"
	if !rep.Passed {
		verdict = "failed"
	}
	var b strings.Builder
	fmt.Fprintf(&b, "trace %s: score %d, %s, findings: %d\n", t.ID, rep.Score, verdict, len(rep.Findings))
	understood(&b, t)
	for _, f := range rep.Findings {
		for line := range strings.Lines(f.Explain()) {
			b.WriteString("  " + line)
		}
		b.WriteString("\n")
	}
	_, err := io.WriteString(w, b.String())
	return err
}

// understood writes what the import made of a trace: its user turns and
// tools, then a line per step (gate steps, which only record decisions,
// are left out): kind, name, the calls a model step proposed, a tool's
// arguments and result, the failure, and the input message it came from.
func understood(b *strings.Builder, t *trace.Trace) {
	counts := map[trace.Kind]int{}
	failed := 0
	for _, s := range t.Steps {
		counts[s.Kind]++
		if s.Error != "" {
			failed++
		}
	}
	fmt.Fprintf(b, "  read: user turns %d, tools offered %d, model steps %d, tool steps %d, failed %d\n",
		len(t.UserTurns), len(t.Tools), counts[trace.KindModel], counts[trace.KindTool], failed)
	for _, s := range t.Steps {
		if s.Kind == trace.KindGate {
			continue
		}
		fmt.Fprintf(b, "    step %d %s", s.Index, s.Kind)
		if s.Name != "" {
			b.WriteString(" " + s.Name)
		}
		if s.CallID != "" {
			fmt.Fprintf(b, " (%s)", s.CallID)
		}
		switch {
		case s.Error != "":
			fmt.Fprintf(b, ": failed: %s", clip(firstLine(s.Error)))
		case s.Kind == trace.KindTool:
			fmt.Fprintf(b, " %s -> %s", clip(s.Args), clip(s.Result))
		case s.Kind == trace.KindRetrieval:
			fmt.Fprintf(b, " %s -> %d documents %v", clip(s.Args), len(s.DocIDs), s.DocIDs)
		case s.Kind == trace.KindModel && len(s.Calls) > 0:
			names := make([]string, len(s.Calls))
			for i, c := range s.Calls {
				names[i] = c.Name
			}
			fmt.Fprintf(b, " proposes %s", strings.Join(names, ", "))
		case s.Result != "":
			fmt.Fprintf(b, ": %s", clip(s.Result))
		}
		if s.Blocked {
			b.WriteString(" [blocked]")
		}
		if s.Source != "" {
			fmt.Fprintf(b, " [%s]", s.Source)
		}
		b.WriteString("\n")
	}
}

// clip quotes s on one line, cut to 60 runes.
func clip(s string) string {
	s, _ = trace.Truncate(strings.Join(strings.Fields(s), " "), 60)
	return strconv.Quote(s)
}

// firstLine is the first line of s.
func firstLine(s string) string {
	line, _, _ := strings.Cut(s, "\n")
	return line
}
