package contevalcmd

import (
	"bytes"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"

	"github.com/agentguard/agentguard/examples/agentguard/internal/cli"
	"github.com/agentguard/agentguard/guard/conteval"
	"github.com/agentguard/agentguard/guard/replay"
)

var mergeVerb = cli.Verb{
	Name:     "conteval merge",
	Synopsis: "-into GOLDEN.jsonl CASES.jsonl...",
	Doc: `Merges the regression cases of continuous evaluation (the -cases files
of earlier rounds) into the golden set, as the method asks every two weeks:
each case the set does not hold yet, by id or by its turns, is appended,
tagged "review" and without a last_verified date, so that it stays stale
(and "health -strict" refuses the set) until a person has checked its
baseline. The golden set is rewritten in place, all or nothing.`,
	MinArgs: 1, MaxArgs: -1, ArgName: "CASES.jsonl",
}

// runMerge is "agentguard conteval merge".
func runMerge(args []string, stdout, stderr io.Writer) int {
	fs := mergeVerb.FlagSet()
	into := fs.String("into", "", "the golden set to merge into (required; created when missing)")
	files, code, ok := mergeVerb.Parse(fs, args, stdout, stderr)
	if !ok {
		return code
	}
	if *into == "" {
		return mergeVerb.Fail(stderr, fs, "missing -into")
	}
	golden, err := readCases(*into, true)
	if err != nil {
		mergeVerb.Errorf(stderr, "%v", err)
		return cli.ExitUsage
	}
	var red []replay.Case
	for _, name := range files {
		cs, err := readCases(name, false)
		if err != nil {
			mergeVerb.Errorf(stderr, "%v", err)
			return cli.ExitUsage
		}
		red = append(red, cs...)
	}
	merged, added := conteval.Merge(golden, red)
	if len(added) > 0 {
		var b bytes.Buffer
		for _, c := range merged {
			if err := replay.WriteCase(&b, c); err != nil {
				mergeVerb.Errorf(stderr, "%v", err)
				return cli.ExitUsage
			}
		}
		if err := writeAtomic(*into, b.Bytes()); err != nil {
			mergeVerb.Errorf(stderr, "%v", err)
			return cli.ExitUsage
		}
	}
	fmt.Fprintf(stdout, "merged %d of %d regression cases into %s (%d already there)", len(added), len(red), *into, len(red)-len(added))
	if len(added) > 0 {
		fmt.Fprintf(stdout, ": %s, tagged review and unverified until a person checks them", strings.Join(added, " "))
	}
	fmt.Fprintln(stdout)
	return cli.ExitPassed
}

// readCases reads a golden set; a missing file is an empty set when
// mayMiss.
func readCases(name string, mayMiss bool) ([]replay.Case, error) {
	f, err := os.Open(name)
	if mayMiss && os.IsNotExist(err) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	defer f.Close()
	return replay.LoadCases(f, name)
}

// writeAtomic writes data to name through a temporary file in its
// directory, renamed over it.
func writeAtomic(name string, data []byte) error {
	tmp, err := os.CreateTemp(filepath.Dir(name), ".merge-*")
	if err != nil {
		return err
	}
	defer os.Remove(tmp.Name())
	if _, err := tmp.Write(data); err != nil {
		tmp.Close()
		return err
	}
	if err := tmp.Sync(); err != nil {
		tmp.Close()
		return err
	}
	if err := tmp.Close(); err != nil {
		return err
	}
	if err := os.Chmod(tmp.Name(), 0o644); err != nil {
		return err
	}
	return os.Rename(tmp.Name(), name)
}
