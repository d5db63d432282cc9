// Command agentguard runs agentguard's offline jobs on the demo agent and
// on your own recorded traces: one command, one verb per job.
//
//	agentguard health    the five-dimension health check (the main job)
//	agentguard demo      the demo customer-service agent, step by step
//	agentguard evaluate  score recorded traces or chat logs with the rules
//	agentguard conteval  one round of continuous evaluation
//	agentguard memory    the memory card on one conversation
//	agentguard ledger    lessons, entries, traces, regression cases and
//	                     exports of error ledgers
//	agentguard policy    policy test: the unit tests a policy file holds
//
// Install it from a checkout with "go install ./examples/agentguard" (or,
// once the module is reachable under its path,
// "go install github.com/agentguard/agentguard/examples/agentguard@VERSION"),
// or run it in place with "go run ./examples/agentguard VERB".
// "agentguard VERB -h" prints a verb's usage.
//
// The loop the command closes: the demo (or your agent) logs violations
// into a ledger and its traces beside them; "ledger lessons" aggregates
// them; "ledger trace" fetches the trace behind an example; "ledger cases"
// turns the entries into regression cases; "health -cases" replays them.
//
// # Conventions
//
// Every verb prints its usage and exits 0 on -h, rejects arguments it does
// not take, reads its inputs in any format trace.Import detects (gzipped
// or not), de-identifies what it writes to disk unless -raw, writes
// results on the standard output and progress and problems on the
// standard error, leaves no temporary directory behind when it fails, and
// exits with
//
//	0  passed (or done)
//	1  findings, or a failed gate
//	2  a usage or input error: nothing was judged
//	3  not enough samples to judge
package main

import (
	"context"
	"fmt"
	"io"
	"os"
	"os/signal"

	"github.com/agentguard/agentguard/examples/agentguard/internal/cli"
	"github.com/agentguard/agentguard/examples/agentguard/internal/contevalcmd"
	"github.com/agentguard/agentguard/examples/agentguard/internal/democmd"
	"github.com/agentguard/agentguard/examples/agentguard/internal/evaluatecmd"
	"github.com/agentguard/agentguard/examples/agentguard/internal/healthcmd"
	"github.com/agentguard/agentguard/examples/agentguard/internal/ledgercmd"
	"github.com/agentguard/agentguard/examples/agentguard/internal/memorycmd"
	"github.com/agentguard/agentguard/examples/agentguard/internal/policycmd"
)

// verb is one verb of the command.
type verb struct {
	name, summary string
	run           func(ctx context.Context, args []string, stdout, stderr io.Writer) int
}

var verbs = []verb{
	{"health", "the five-dimension health check of the demo agent (the main job)", healthcmd.Run},
	{"demo", "the demo customer-service agent, every step and violation", democmd.Run},
	{"evaluate", "score recorded traces or chat logs with agentguard's rules", evaluatecmd.Run},
	{"conteval", "one round of continuous evaluation over production traces", contevalcmd.Run},
	{"memory", "the memory card on one conversation", memorycmd.Run},
	{"ledger", "lessons, entries, traces, regression cases and exports of error ledgers", ledgercmd.Run},
	{"policy", "policy test: run the unit tests a policy file holds", policycmd.Run},
}

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt)
	code := run(ctx, os.Args[1:], os.Stdout, os.Stderr)
	stop()
	os.Exit(code)
}

// run dispatches args to a verb and returns the exit status.
func run(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	if len(args) == 0 {
		fmt.Fprintln(stderr, "agentguard: missing verb")
		usage(stderr)
		return cli.ExitUsage
	}
	name := args[0]
	switch name {
	case "-h", "-help", "--help":
		usage(stdout)
		return cli.ExitPassed
	case "help":
		if len(args) == 1 {
			usage(stdout)
			return cli.ExitPassed
		}
		if len(args) > 2 {
			fmt.Fprintf(stderr, "agentguard help: unexpected argument %q\n", args[2])
			return cli.ExitUsage
		}
		name, args = args[1], []string{args[1], "-h"}
	}
	for _, v := range verbs {
		if v.name == name {
			return v.run(ctx, args[1:], stdout, stderr)
		}
	}
	fmt.Fprintf(stderr, "agentguard: unknown verb %q\n", name)
	usage(stderr)
	return cli.ExitUsage
}

func usage(w io.Writer) {
	fmt.Fprintln(w, "usage: agentguard VERB [flags] [arguments]")
	fmt.Fprintln(w, "\nverbs:")
	for _, v := range verbs {
		fmt.Fprintf(w, "  %-9s %s\n", v.name, v.summary)
	}
	fmt.Fprintln(w, "\n\"agentguard VERB -h\" prints a verb's usage.")
	fmt.Fprintln(w, "exit status: 0 passed, 1 findings or a failed gate, 2 usage or input error, 3 not enough samples")
}
