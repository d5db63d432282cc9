// Package evaluatecmd is the verb "agentguard evaluate": it judges recorded agent traces offline with agentguard's
// rules and prints a trajectory score per trace, so that a set of recorded
// runs can gate a release.
//
//	agentguard evaluate [-format agentguard|openai] [-policy FILE] [-profile conversational|autonomous] FILE...
//
// Each FILE holds one trace per line: agentguard's JSONL (the default; see
// package trace) or, with -format openai, OpenAI-style chat logs
// ({"id", "messages", "tools"}; see trace.ImportOpenAI), whose "id" is the
// trace id and whose "tools" list is the allow-list. FILE "-" is the
// standard input. -policy names a policy file (see guard.LoadPolicy) that
// sets thresholds, the allow-list, which tools change state or read
// untrusted content, confirmations and schemas; without it the guard has its
// default rules. An allow-list in the policy replaces the traces' own.
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
	"context"
	"encoding/json"
	"fmt"
	"io"
	"iter"
	"os"

	"github.com/agentguard/agentguard/examples/agentguard/internal/cli"
	"github.com/agentguard/agentguard/guard"
	"github.com/agentguard/agentguard/trace"
)

var verb = cli.Verb{
	Name:     "evaluate",
	Synopsis: "[-format agentguard|openai] [-policy FILE] [-profile conversational|autonomous] FILE...",
	Doc: `Judges recorded traces with agentguard's rules and prints one JSON line per
trace (score, passed, violations) and a summary line. FILE "-" is the
standard input.`,
	MinArgs: 1,
	MaxArgs: -1,
	ArgName: "FILE",
}

// Run is the verb: it evaluates the files named in args and returns the
// exit status (see package cli). "-" reads cli.Stdin(ctx).
func Run(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	return run(args, cli.Stdin(ctx), stdout, stderr)
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
}

type violation struct {
	Step      int             `json:"step"`
	Rule      string          `json:"rule"`
	Dimension trace.Dimension `json:"dimension"`
	Severity  trace.Severity  `json:"severity"`
	Message   string          `json:"message"`
}

// summary is the last line.
type summary struct {
	Traces     int            `json:"traces"`
	Passed     int            `json:"passed"`
	Failed     int            `json:"failed"`
	Errors     int            `json:"errors"`     // lines and files that could not be read
	Violations map[string]int `json:"violations"` // by rule
}

// run is the command: it reads the files named in args (stdin for "-"),
// writes results to stdout and problems to stderr, and returns the exit
// status.
func run(args []string, stdin io.Reader, stdout, stderr io.Writer) int {
	fs := verb.FlagSet()
	format := fs.String("format", "agentguard", "input format: agentguard (trace JSONL) or openai (chat logs)")
	policy := fs.String("policy", "", "policy `FILE` (JSON) configuring the guard; default: the default rules")
	profile := fs.String("profile", "", "who authorizes writes: conversational (the default: the user, turn by turn) or autonomous (the user's task); overrides the policy's")
	files, code, ok := verb.Parse(fs, args, stdout, stderr)
	if !ok {
		return code
	}
	if *format != "agentguard" && *format != "openai" {
		return verb.Fail(stderr, fs, fmt.Sprintf("unknown format %q (want agentguard or openai)", *format))
	}

	var cfg guard.Config
	if *policy != "" {
		var err error
		if cfg, err = loadPolicy(*policy); err != nil {
			fmt.Fprintf(stderr, "agentguard evaluate: %s: %v\n", *policy, err)
			return exitBadInput
		}
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
	sum := summary{Violations: map[string]int{}}
	each := func(in io.Reader, name string) error {
		for t, err := range traces(in, name, *format) {
			if err != nil {
				fmt.Fprintln(stderr, err) // a *trace.ParseError: "trace: FILE:LINE: ..."
				sum.Errors++
				continue
			}
			rep := g.Evaluate(t)
			res := result{TraceID: t.ID, Score: rep.Score, Passed: rep.Passed, Violations: []violation{}}
			for _, f := range rep.Findings {
				if f.Verdict == trace.Allow {
					continue
				}
				res.Violations = append(res.Violations, violation{Step: f.Step, Rule: f.Rule, Dimension: f.Dimension, Severity: f.Severity, Message: f.Message})
				sum.Violations[f.Rule]++
			}
			if err := enc.Encode(res); err != nil {
				return err
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
		var err error
		if name == "-" {
			err = each(stdin, name)
		} else {
			var f *os.File
			if f, err = os.Open(name); err != nil {
				fmt.Fprintf(stderr, "agentguard evaluate: %v\n", err)
				sum.Errors++
				continue
			}
			err = each(f, name)
			f.Close()
		}
		if err != nil { // writing the results failed
			fmt.Fprintf(stderr, "agentguard evaluate: %v\n", err)
			return exitBadInput
		}
	}
	if err := enc.Encode(struct {
		Summary summary `json:"summary"`
	}{sum}); err != nil {
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

func loadPolicy(name string) (guard.Config, error) {
	f, err := os.Open(name)
	if err != nil {
		return guard.Config{}, err
	}
	defer f.Close()
	return guard.LoadPolicy(f)
}

// traces reads the traces of one input in the given format.
func traces(r io.Reader, name, format string) iter.Seq2[*trace.Trace, error] {
	if format == "openai" {
		return trace.ImportOpenAI(r, name)
	}
	tr := trace.NewReader(r)
	tr.Source = name
	return tr.All()
}
