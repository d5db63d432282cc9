package healthtest

import (
	"bytes"
	"cmp"
	"context"
	"flag"
	"fmt"
	"os"
	"strings"
	"testing"

	"github.com/agentguard/agentguard/guard"
	"github.com/agentguard/agentguard/guard/health"
	"github.com/agentguard/agentguard/guard/replay"
	"github.com/agentguard/agentguard/trace"
)

// Options configures Run. The zero value runs each case once through a
// default guard.
type Options struct {
	// Guard is the guard every run goes through (its ledger is not
	// needed: the findings are read from the traces).
	Guard guard.Config
	// Repeats is how often each case runs. Zero means 1.
	Repeats int
	// Score configures the screens: the knowledge base, citation routes.
	Score health.Options
	// Update rewrites the baselines of the golden set from the runs
	// instead of checking them. False means the -update flag of the test
	// binary, when the test package defines one.
	Update bool
}

// Run runs each golden case of the file cases as a subtest of t, named by
// its id, through the agents f returns: the case fails with one error per
// hit that got through — a hard filter (fabrication, cascade, amnesia,
// drift), an answer element, the trajectory, the intent, the tool-call
// budget, an agent error, a guard finding the guard did not enforce — and
// logs the hits a guard rail caught and the minor ones.
//
// With Options.Update (or -update), Run rewrites the baselines instead:
// each case's trajectory becomes the calls its first run made (keeping the
// case's match and argument modes) and its answer text the run's final
// answer; must and must-not elements, constraints and last_verified stay
// a person's to write. Review the diff before committing it.
//
// A file that cannot be read, or holds a malformed line or no case, fails
// t at once.
func Run(t *testing.T, cases string, f replay.Factory, opts Options) {
	t.Helper()
	data, err := os.ReadFile(cases)
	if err != nil {
		t.Fatalf("healthtest: %v", err)
	}
	set, err := replay.LoadCases(bytes.NewReader(data), cases)
	if err != nil {
		t.Fatalf("healthtest: %v", err)
	}
	if len(set) == 0 {
		t.Fatalf("healthtest: %s holds no case", cases)
	}
	update := opts.Update || updateFlag()
	repeats := opts.Repeats
	if repeats <= 0 {
		repeats = 1
	}
	changed := false
	for i := range set {
		c := &set[i]
		t.Run(c.ID, func(t *testing.T) {
			runs, err := replay.Replay(t.Context(), []replay.Case{*c}, f, replay.Config{Guard: opts.Guard, Label: "test", Repeats: repeats, Parallel: 1})
			if err != nil {
				t.Fatalf("replay: %v", err)
			}
			if update {
				if rebaseline(c, &runs[0]) {
					changed = true
					t.Logf("baseline of %s updated from its run", c.ID)
				}
				return
			}
			check(t, c, runs, opts.Score)
		})
	}
	if update && changed {
		if err := writeCases(cases, set); err != nil {
			t.Fatalf("healthtest: -update: %v", err)
		}
	}
}

// updateFlag reports whether the test binary has an -update flag set.
func updateFlag() bool {
	f := flag.Lookup("update")
	if f == nil {
		return false
	}
	g, ok := f.Value.(flag.Getter)
	if !ok {
		return false
	}
	b, ok := g.Get().(bool)
	return ok && b
}

// check fails t with each hit of the case's runs that got through.
func check(t *testing.T, c *replay.Case, runs []replay.Run, opts health.Options) {
	t.Helper()
	opts.Floor = 0
	rep, err := health.Score(context.WithoutCancel(t.Context()), []replay.Case{*c}, runs, nil, opts)
	if err != nil {
		t.Fatalf("score: %v", err)
	}
	for _, h := range rep.Hits {
		msg := fmt.Sprintf("%s (%s, %s): %s", h.Screen, h.Dimension, h.Tag, h.Cause)
		if h.Detail != "" {
			msg += ": " + h.Detail
		}
		if repeats := len(runs); repeats > 1 {
			msg = h.TraceID + ": " + msg
		}
		switch h.Outcome {
		case health.Failed:
			t.Error(msg)
		default:
			t.Logf("%s, %s", h.Outcome, msg)
		}
	}
}

// rebaseline sets c's trajectory to the calls run made and its answer text
// to run's final answer, and reports whether c changed.
func rebaseline(c *replay.Case, run *replay.Run) bool {
	before := fmt.Sprintf("%+v %q", c.Trajectory, c.Answer.Text)
	var calls []replay.Call
	if run.Trace != nil {
		for _, s := range run.Trace.Steps {
			if s.Kind == trace.KindTool && !s.Blocked {
				calls = append(calls, replay.Call{Name: s.Name, Args: []byte(cmp.Or(strings.TrimSpace(s.Args), "{}"))})
			}
		}
	}
	if c.Trajectory == nil {
		c.Trajectory = &replay.Trajectory{}
	}
	c.Trajectory.Calls = calls
	c.Answer.Text = run.Final()
	return fmt.Sprintf("%+v %q", c.Trajectory, c.Answer.Text) != before
}

// writeCases rewrites the golden set file with cases, one a line, through
// a temporary file renamed over it, so that a failure leaves the file as
// it was.
func writeCases(name string, cases []replay.Case) error {
	var b bytes.Buffer
	for _, c := range cases {
		if err := replay.WriteCase(&b, c); err != nil {
			return err
		}
	}
	fi, err := os.Stat(name)
	if err != nil {
		return err
	}
	tmp := name + ".update"
	if err := os.WriteFile(tmp, b.Bytes(), fi.Mode().Perm()); err != nil {
		return err
	}
	if err := os.Rename(tmp, name); err != nil {
		os.Remove(tmp)
		return err
	}
	return nil
}
