// Command rewordgen writes the reworded AgentDojo injection set: the
// injected runs of an AgentDojo corpus file, once per wording of package
// reword (guard/internal/reword), one file each, <out>/<wording>.jsonl. From
// the repository root:
//
//	go run ./guard/internal/reword/rewordgen -corpus ../shared/corpus/agentdojo.jsonl -out guard/testdata/reworded
//
// It prints what it found (runs, passages, encodings, instruction-marker
// matches per wording) to stderr and exits 1, writing nothing, when a
// rewording breaks the table's rules, a goal has no rewording, or an
// injected passage cannot be located; with -skip such a run is left out
// and listed instead (the runs of seven more models, which the tests
// generate at test time, need it):
//
//	go run ./guard/internal/reword/rewordgen -skip -corpus ../shared/corpus/agentdojo_models.jsonl -out /tmp/reworded-models
//
// The output is deterministic.
//
// It lives under guard/ because Go lets only code under guard/ import
// guard/internal/reword; the package does the work, this is its flag
// parsing and file writing.
package main

import (
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/agentguard/agentguard/guard/internal/reword"
)

func main() {
	corpus := flag.String("corpus", "../shared/corpus/agentdojo.jsonl", "the AgentDojo corpus (JSONL)")
	out := flag.String("out", "guard/testdata/reworded", "directory the wording files are written to")
	only := flag.String("wordings", "", "comma-separated wordings to write (default: all of "+strings.Join(reword.Wordings(), ",")+")")
	skip := flag.Bool("skip", false, "leave out, and list, runs whose passages cannot all be located instead of failing")
	flag.Parse()
	if flag.NArg() > 0 {
		fmt.Fprintf(os.Stderr, "rewordgen: unexpected argument %q\n", flag.Arg(0))
		os.Exit(2)
	}
	if err := run(*corpus, *out, *only, *skip); err != nil {
		fmt.Fprintln(os.Stderr, "rewordgen:", err)
		os.Exit(1)
	}
}

func run(corpus, out, only string, skip bool) error {
	f, err := os.Open(corpus)
	if err != nil {
		return err
	}
	defer f.Close()
	opt := reword.Options{Skip: skip}
	if only != "" {
		opt.Wordings = strings.Split(only, ",")
	}
	set, err := reword.Generate(f, opt)
	if set != nil {
		set.Summary.Print(os.Stderr)
	}
	if err != nil {
		return err
	}
	if err := os.MkdirAll(out, 0o755); err != nil {
		return err
	}
	for _, w := range reword.Wordings() {
		data, ok := set.Files[w]
		if !ok {
			continue
		}
		name := filepath.Join(out, w+".jsonl")
		if err := os.WriteFile(name, data, 0o644); err != nil {
			return err
		}
		fmt.Fprintf(os.Stderr, "wrote %s (%d bytes)\n", name, len(data))
	}
	return nil
}
