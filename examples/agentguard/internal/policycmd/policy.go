// Package policycmd is the policy verb of the agentguard command: "policy
// test" runs the unit tests a policy file holds (package guard/policy,
// "tests" in policy.md), as opa test runs a Rego policy's.
package policycmd

import (
	"context"
	"fmt"
	"io"

	"github.com/agentguard/agentguard/examples/agentguard/internal/cli"
	"github.com/agentguard/agentguard/guard/policy"
)

var testVerb = cli.Verb{
	Name:     "policy test",
	Synopsis: "[-v] FILE...",
	Doc: `Loads each policy file and runs the tests it holds: each test's
conversation through a guard with the file's checks, the checks that fire
compared with the ones the test wants. Prints a line per failed test (every
test with -v) and a summary; exits 1 when a test fails, 2 when a file does
not load or holds no test.`,
	MinArgs: 1,
	MaxArgs: -1,
	ArgName: "FILE",
}

// Run is the verb: "policy test FILE...".
func Run(_ context.Context, args []string, stdout, stderr io.Writer) int {
	if len(args) == 0 || args[0] != "test" {
		if len(args) > 0 && (args[0] == "-h" || args[0] == "-help" || args[0] == "--help") {
			fmt.Fprintln(stdout, "usage: agentguard policy test [-v] FILE...")
			return cli.ExitPassed
		}
		fmt.Fprintln(stderr, "agentguard policy: want a subcommand: test\nusage: agentguard policy test [-v] FILE...")
		return cli.ExitUsage
	}
	fs := testVerb.FlagSet()
	verbose := fs.Bool("v", false, "print every test, not only the failed ones")
	files, code, ok := testVerb.Parse(fs, args[1:], stdout, stderr)
	if !ok {
		return code
	}
	passed, failed := 0, 0
	for _, name := range files {
		p, err := policy.Open(name)
		if err != nil {
			testVerb.Errorf(stderr, "%v", err)
			return cli.ExitUsage
		}
		rs := p.RunTests()
		if len(rs) == 0 {
			testVerb.Errorf(stderr, "%s holds no test (see \"tests\" in guard/policy/policy.md)", name)
			return cli.ExitUsage
		}
		for _, r := range rs {
			if r.Passed() {
				passed++
			} else {
				failed++
			}
			if *verbose || !r.Passed() {
				fmt.Fprintln(stdout, r)
			}
		}
	}
	status := "ok"
	if failed > 0 {
		status = "FAIL"
	}
	fmt.Fprintf(stdout, "%s: %d passed, %d failed, in %d files\n", status, passed, failed, len(files))
	if failed > 0 {
		return cli.ExitFindings
	}
	return cli.ExitPassed
}
