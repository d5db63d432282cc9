// Package cli holds what every verb of the agentguard command shares: the
// exit statuses, flag parsing with the command's conventions, the standard
// input, and progress reporting.
package cli

import (
	"bufio"
	"cmp"
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"time"
)

// Exit statuses, the same for every verb.
const (
	ExitPassed    = 0 // the check passed, or the verb did what was asked
	ExitFindings  = 1 // findings, or a failed gate
	ExitUsage     = 2 // a usage or input error: nothing was judged
	ExitNotEnough = 3 // too few samples to judge (conteval)
)

// Verb describes one verb for its flag set and usage text.
type Verb struct {
	Name     string // "health"
	Synopsis string // the argument part of the usage line: "[-out DIR] FILE..."
	Doc      string // what the verb does, a few lines
	// MinArgs and MaxArgs bound the positional arguments; MaxArgs -1 means
	// no limit.
	MinArgs, MaxArgs int
	// ArgName names the positional arguments in "missing ..." ("FILE").
	ArgName string
}

// FlagSet returns an empty flag set for v whose output is discarded: Parse
// prints problems and usage itself.
func (v Verb) FlagSet() *flag.FlagSet {
	fs := flag.NewFlagSet("agentguard "+v.Name, flag.ContinueOnError)
	fs.SetOutput(io.Discard)
	return fs
}

// Usage writes the verb's usage: the synopsis, the doc and the flags.
func (v Verb) Usage(w io.Writer, fs *flag.FlagSet) {
	fmt.Fprintf(w, "usage: agentguard %s %s\n", v.Name, v.Synopsis)
	if v.Doc != "" {
		fmt.Fprintf(w, "\n%s\n", strings.TrimSpace(v.Doc))
	}
	has := false
	fs.VisitAll(func(*flag.Flag) { has = true })
	if has {
		fmt.Fprintln(w, "\nflags:")
		fs.SetOutput(w)
		fs.PrintDefaults()
		fs.SetOutput(io.Discard)
	}
	fmt.Fprintln(w, "\nexit status: 0 passed, 1 findings or a failed gate, 2 usage or input error, 3 not enough samples")
}

// Parse parses args into fs, flags and positional arguments in any order
// ("--" ends the flags), and returns the positional arguments. ok is false
// when the verb must stop and return code: after -h (usage on stdout, 0)
// or a usage error (message and usage on stderr, 2).
func (v Verb) Parse(fs *flag.FlagSet, args []string, stdout, stderr io.Writer) (pos []string, code int, ok bool) {
	for {
		err := fs.Parse(args)
		if errors.Is(err, flag.ErrHelp) {
			v.Usage(stdout, fs)
			return nil, ExitPassed, false
		}
		if err != nil {
			return nil, v.Fail(stderr, fs, err.Error()), false
		}
		rest := fs.Args()
		if len(rest) == 0 {
			break
		}
		if len(args) > len(rest) && args[len(args)-len(rest)-1] == "--" {
			pos = append(pos, rest...)
			break
		}
		pos = append(pos, rest[0])
		args = rest[1:]
	}
	switch {
	case len(pos) < v.MinArgs:
		return nil, v.Fail(stderr, fs, "missing "+cmp.Or(v.ArgName, "argument")), false
	case v.MaxArgs >= 0 && len(pos) > v.MaxArgs:
		return nil, v.Fail(stderr, fs, fmt.Sprintf("unexpected argument %q", pos[v.MaxArgs])), false
	}
	return pos, 0, true
}

// Fail prints a usage error, the synopsis and where to find the usage on
// stderr, and returns ExitUsage.
func (v Verb) Fail(stderr io.Writer, fs *flag.FlagSet, msg string) int {
	fmt.Fprintf(stderr, "agentguard %s: %s\nusage: agentguard %s %s\n(\"agentguard %s -h\" for more)\n", v.Name, msg, v.Name, v.Synopsis, v.Name)
	return ExitUsage
}

// Errorf prints an error, prefixed with the verb's name, on stderr.
func (v Verb) Errorf(stderr io.Writer, format string, a ...any) {
	fmt.Fprintf(stderr, "agentguard %s: %s\n", v.Name, fmt.Sprintf(format, a...))
}

type stdinKey struct{}

// WithStdin returns a context whose Stdin is r, for running a verb
// in-process on an input of one's own.
func WithStdin(ctx context.Context, r io.Reader) context.Context {
	return context.WithValue(ctx, stdinKey{}, r)
}

// Stdin returns the reader WithStdin put in ctx, or os.Stdin.
func Stdin(ctx context.Context) io.Reader {
	if r, ok := ctx.Value(stdinKey{}).(io.Reader); ok {
		return r
	}
	return os.Stdin
}

// IsTerminal reports whether w is a terminal.
func IsTerminal(w io.Writer) bool {
	f, ok := w.(*os.File)
	if !ok {
		return false
	}
	fi, err := f.Stat()
	return err == nil && fi.Mode()&os.ModeCharDevice != 0
}

// ParseTime reads a time flag: an RFC 3339 time, a date (YYYY-MM-DD, UTC),
// or a duration before now ("24h").
func ParseTime(flagName, s string, now time.Time) (time.Time, error) {
	if t, err := time.Parse(time.RFC3339, s); err == nil {
		return t, nil
	}
	if t, err := time.Parse(time.DateOnly, s); err == nil {
		return t, nil
	}
	if d, err := time.ParseDuration(s); err == nil && d >= 0 {
		return now.Add(-d), nil
	}
	return time.Time{}, fmt.Errorf("-%s %q: want an RFC 3339 time, YYYY-MM-DD or a duration such as 24h", flagName, s)
}

// WriteFile writes a file through a temporary file in the same directory,
// renamed into place: a failed write leaves no temporary file and the old
// file as it was.
func WriteFile(path string, write func(io.Writer) error) error {
	f, err := os.CreateTemp(filepath.Dir(path), "."+filepath.Base(path)+".*")
	if err != nil {
		return err
	}
	bw := bufio.NewWriter(f)
	err = write(bw)
	if ferr := bw.Flush(); err == nil {
		err = ferr
	}
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err == nil {
		err = os.Rename(f.Name(), path)
	}
	if err != nil {
		os.Remove(f.Name())
	}
	return err
}
