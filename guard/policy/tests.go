package policy

import (
	"encoding/json"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/agentguard/agentguard/guard"
	"github.com/agentguard/agentguard/guard/rules"
	"github.com/agentguard/agentguard/trace"
)

// Test is one unit test of a policy's checks, written in the file under
// tests (as opa test runs a Rego policy's): a few lines of conversation and
// the checks that must fire on it.
type Test struct {
	Name string
	Line int // where the test starts in the file
	now  time.Time
	tr   *trace.Trace
	want []string
}

// TestResult is what running one Test gave. Want and Got list the checks
// that fire, sorted: "name" for a finding, "name?" for one that could not
// be established (a warning tagged not-established).
type TestResult struct {
	Name      string
	File      string
	Line      int
	Want, Got []string
}

// Passed reports whether the checks that fired are the ones the test wants.
func (r TestResult) Passed() bool { return slices.Equal(r.Want, r.Got) }

// String is the result as a line: "ok  NAME" or "FAIL NAME (file:line):
// want [...], got [...]".
func (r TestResult) String() string {
	if r.Passed() {
		return "ok   " + r.Name
	}
	return fmt.Sprintf("FAIL %s (%s:%d): want %v, got %v", r.Name, r.File, r.Line, r.Want, r.Got)
}

// Tests returns the file's tests, in file order.
func (p *Policy) Tests() []Test { return slices.Clone(p.tests) }

// RunTests runs the file's tests: each conversation through a guard with
// the file's settings and only its checks (the built-in rules have tests
// of their own), evaluated offline as a recorded trace is, and the checks
// that fired compared with what the test wants.
func (p *Policy) RunTests() []TestResult {
	out := make([]TestResult, 0, len(p.tests))
	for _, t := range p.tests {
		cfg := p.WithNow(t.now).Config()
		cfg.Disable = append(cfg.Disable, rules.Builtin()...)
		checks := p.Checks()
		var got []string
		for _, f := range guard.New(cfg).Evaluate(t.tr).Findings {
			if !slices.Contains(checks, f.Rule) {
				continue
			}
			name := f.Rule
			if slices.Contains(f.Tags, "not-established") {
				name += "?"
			}
			got = append(got, name)
		}
		slices.Sort(got)
		out = append(out, TestResult{Name: t.Name, File: p.name, Line: t.Line, Want: t.want, Got: got})
	}
	return out
}

// tests checks and builds the file's tests: a name, unique; a
// conversation of user turns, agent messages and tool calls, each entry
// exactly one of them; want naming the file's checks.
func (f *policyFile) tests(d *decoder, checks *checksRule) ([]Test, error) {
	var names []string
	if checks != nil {
		for _, c := range checks.all {
			names = append(names, c.name)
		}
	}
	var out []Test
	for i, pt := range f.Tests {
		path := fmt.Sprintf("tests[%d]", i)
		switch {
		case strings.TrimSpace(pt.Name) == "":
			return nil, d.at(path, "a test needs a name")
		case slices.ContainsFunc(out, func(t Test) bool { return t.Name == pt.Name }):
			return nil, d.at(path+".name", "test %q is already defined", pt.Name)
		case len(pt.Conversation) == 0:
			return nil, d.at(path, "test %q needs a conversation", pt.Name)
		}
		t := Test{Name: pt.Name, want: []string{}}
		if n := d.pos[path]; n != nil {
			t.Line = n.Line
		}
		if pt.Now != "" {
			at, err := parseTime(pt.Now)
			if err != nil {
				return nil, d.at(path+".now", "%q is not a time (want RFC 3339, or a time with no zone)", pt.Now)
			}
			t.now = at
		}
		for j, w := range pt.Want {
			if !slices.Contains(names, strings.TrimSuffix(w, "?")) {
				return nil, d.at(fmt.Sprintf("%s.want[%d]", path, j), "%q is not a check of this file (want one of %s, with ? for not established)", w, strings.Join(names, ", "))
			}
			t.want = append(t.want, w)
		}
		slices.Sort(t.want)
		tr, err := testTrace(d, path, pt)
		if err != nil {
			return nil, err
		}
		t.tr = tr
		out = append(out, t)
	}
	return out, nil
}

// testTrace builds a test's trace: a user entry is a user turn, an agent
// entry what the agent said, a tool entry a model step proposing the call
// (or, together, the call before it's) and the tool step that ran it, with
// its result (JSON unless a string) or error.
func testTrace(d *decoder, path string, pt policyTest) (*trace.Trace, error) {
	tr := &trace.Trace{ID: pt.Name, Steps: []*trace.Step{}}
	add := func(s *trace.Step) {
		s.Index, s.Turn = len(tr.Steps), len(tr.UserTurns)-1
		tr.Steps = append(tr.Steps, s)
	}
	var proposer *trace.Step // the model step of the last call, for together
	for j, e := range pt.Conversation {
		at := fmt.Sprintf("%s.conversation[%d]", path, j)
		kinds := 0
		for _, set := range []bool{e.User != "", e.Agent != "", e.Tool != ""} {
			if set {
				kinds++
			}
		}
		if kinds != 1 {
			return nil, d.at(at, "want exactly one of user, agent and tool")
		}
		if e.Tool == "" && (e.Args != nil || e.Result != nil || e.Error != "" || e.Together) {
			return nil, d.at(at, "args, result, error and together go with a tool")
		}
		switch {
		case e.User != "":
			tr.UserTurns = append(tr.UserTurns, e.User)
			proposer = nil
		case e.Agent != "":
			add(&trace.Step{Kind: trace.KindModel, Result: e.Agent})
			proposer = nil
		default:
			args := "{}"
			if e.Args != nil {
				b, err := json.Marshal(e.Args)
				if err != nil {
					return nil, d.at(at+".args", "%v", err)
				}
				args = string(b)
			}
			result, ok := e.Result.(string)
			if !ok && e.Result != nil {
				b, err := json.Marshal(e.Result)
				if err != nil {
					return nil, d.at(at+".result", "%v", err)
				}
				result = string(b)
			}
			id := fmt.Sprintf("call_%d", j)
			call := trace.Call{ID: id, Name: e.Tool, Args: args}
			if e.Together {
				if proposer == nil {
					return nil, d.at(at+".together", "no call before it to go with")
				}
				proposer.Calls = append(proposer.Calls, call)
			} else {
				proposer = &trace.Step{Kind: trace.KindModel, Calls: []trace.Call{call}}
				add(proposer)
			}
			add(&trace.Step{Kind: trace.KindTool, Name: e.Tool, CallID: id, Args: args, Result: result, Error: e.Error})
			continue
		}
	}
	return tr, nil
}
