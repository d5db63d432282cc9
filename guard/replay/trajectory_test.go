package replay_test

import (
	"fmt"
	"slices"
	"testing"

	"github.com/agentguard/agentguard/guard/replay"
	"github.com/agentguard/agentguard/trace"
)

// toolTrace builds a trace of a model step and then one tool step per call;
// a name starting with "!" makes a blocked step.
func toolTrace(calls ...trace.Call) *trace.Trace {
	t := &trace.Trace{ID: "t"}
	t.Steps = append(t.Steps, &trace.Step{Index: 0, Kind: trace.KindModel, Result: "thinking"})
	for _, c := range calls {
		s := &trace.Step{Index: len(t.Steps), Kind: trace.KindTool, Name: c.Name, Args: c.Args}
		if c.Name[0] == '!' {
			s.Name, s.Blocked = c.Name[1:], true
		}
		t.Steps = append(t.Steps, s)
	}
	return t
}

func call(name, args string) trace.Call { return trace.Call{Name: name, Args: args} }

func TestTrajectoryMatch(t *testing.T) {
	search := call("search", `{"q":"shoes","limit":10}`)
	searchSame := call("search", `{ "limit": 10.0, "q": "shoes" }`) // same JSON, other spelling
	searchLess := call("search", `{"q":"shoes"}`)
	searchOther := call("search", `{"q":"boots","limit":10}`)
	buy := call("buy", `{"sku":"S1","qty":1}`)
	mail := call("send_email", `{"to":"a@example.com","body":"hi"}`)
	mailOther := call("send_email", `{"to":"a@example.com","body":"hello there"}`)

	for _, tc := range []struct {
		name        string
		match       replay.TrajectoryMatch
		actual      []trace.Call
		want        []trace.Call
		wantMatched bool
		wantMissing []int // indexes into want
		wantExtra   []int // step indexes
	}{
		{name: "strict equal", actual: []trace.Call{search, buy}, want: []trace.Call{search, buy}, wantMatched: true},
		{name: "strict JSON-equal arguments", actual: []trace.Call{searchSame, buy}, want: []trace.Call{search, buy}, wantMatched: true},
		{name: "strict wrong order", actual: []trace.Call{buy, search}, want: []trace.Call{search, buy}, wantMissing: []int{0}, wantExtra: []int{2}},
		{name: "strict extra call", actual: []trace.Call{search, mail, buy}, want: []trace.Call{search, buy}, wantExtra: []int{2}},
		{name: "strict missing call", actual: []trace.Call{search}, want: []trace.Call{search, buy}, wantMissing: []int{1}},
		{name: "strict other arguments", actual: []trace.Call{searchOther, buy}, want: []trace.Call{search, buy}, wantMissing: []int{0}, wantExtra: []int{1}},
		{name: "strict both empty", wantMatched: true},
		{name: "strict blank arguments are {}", actual: []trace.Call{call("now", "")}, want: []trace.Call{call("now", "{}")}, wantMatched: true},
		{name: "strict non-JSON arguments as text", actual: []trace.Call{call("echo", "hi")}, want: []trace.Call{call("echo", "hi")}, wantMatched: true},

		{name: "unordered any order", match: replay.TrajectoryMatch{Mode: replay.TrajectoryUnordered}, actual: []trace.Call{buy, search}, want: []trace.Call{search, buy}, wantMatched: true},
		{name: "unordered counts calls", match: replay.TrajectoryMatch{Mode: replay.TrajectoryUnordered}, actual: []trace.Call{search, search}, want: []trace.Call{search}, wantExtra: []int{2}},
		{name: "unordered missing", match: replay.TrajectoryMatch{Mode: replay.TrajectoryUnordered}, actual: []trace.Call{buy}, want: []trace.Call{search, buy}, wantMissing: []int{0}},

		{name: "subset fewer calls", match: replay.TrajectoryMatch{Mode: replay.TrajectorySubset}, actual: []trace.Call{buy}, want: []trace.Call{search, buy}, wantMatched: true, wantMissing: []int{0}},
		{name: "subset tool beyond reference", match: replay.TrajectoryMatch{Mode: replay.TrajectorySubset}, actual: []trace.Call{search, mail}, want: []trace.Call{search, buy}, wantMissing: []int{1}, wantExtra: []int{2}},
		{name: "subset repeated call", match: replay.TrajectoryMatch{Mode: replay.TrajectorySubset}, actual: []trace.Call{search, search}, want: []trace.Call{search, buy}, wantMissing: []int{1}, wantExtra: []int{2}},

		{name: "superset more calls", match: replay.TrajectoryMatch{Mode: replay.TrajectorySuperset}, actual: []trace.Call{mail, buy, search}, want: []trace.Call{search, buy}, wantMatched: true, wantExtra: []int{1}},
		{name: "superset missing", match: replay.TrajectoryMatch{Mode: replay.TrajectorySuperset}, actual: []trace.Call{search, mail}, want: []trace.Call{search, buy}, wantMissing: []int{1}, wantExtra: []int{2}},

		{name: "args ignore", match: replay.TrajectoryMatch{Args: replay.ArgsIgnore}, actual: []trace.Call{searchOther, mailOther}, want: []trace.Call{search, mail}, wantMatched: true},
		{name: "args superset: pinned keys only", match: replay.TrajectoryMatch{Args: replay.ArgsSuperset}, actual: []trace.Call{search}, want: []trace.Call{searchLess}, wantMatched: true},
		{name: "args superset: pinned value differs", match: replay.TrajectoryMatch{Args: replay.ArgsSuperset}, actual: []trace.Call{searchOther}, want: []trace.Call{searchLess}, wantMissing: []int{0}, wantExtra: []int{1}},
		{name: "args superset: expected key absent", match: replay.TrajectoryMatch{Args: replay.ArgsSuperset}, actual: []trace.Call{searchLess}, want: []trace.Call{search}, wantMissing: []int{0}, wantExtra: []int{1}},
		{name: "args subset: fewer keys", match: replay.TrajectoryMatch{Args: replay.ArgsSubset}, actual: []trace.Call{searchLess}, want: []trace.Call{search}, wantMatched: true},
		{name: "args subset: key beyond reference", match: replay.TrajectoryMatch{Args: replay.ArgsSubset}, actual: []trace.Call{search}, want: []trace.Call{searchLess}, wantMissing: []int{0}, wantExtra: []int{1}},
		{name: "args subset: nested values compare whole", match: replay.TrajectoryMatch{Args: replay.ArgsSubset},
			actual: []trace.Call{call("book", `{"flights":[{"n":"HAT1"}]}`)}, want: []trace.Call{call("book", `{"flights":[{"n":"HAT1","date":"05-20"}]}`)},
			wantMissing: []int{0}, wantExtra: []int{1}},

		{name: "override per tool", match: replay.TrajectoryMatch{Overrides: map[string]replay.ArgMode{"send_email": replay.ArgsIgnore}},
			actual: []trace.Call{search, mailOther}, want: []trace.Call{search, mail}, wantMatched: true},
		{name: "override leaves other tools exact", match: replay.TrajectoryMatch{Overrides: map[string]replay.ArgMode{"send_email": replay.ArgsIgnore}},
			actual: []trace.Call{searchOther, mailOther}, want: []trace.Call{search, mail}, wantMissing: []int{0}, wantExtra: []int{1}},

		{name: "blocked calls do not count", actual: []trace.Call{search, call("!send_email", mail.Args), buy}, want: []trace.Call{search, buy}, wantMatched: true},
		{name: "blocked calls count on request", match: replay.TrajectoryMatch{IncludeBlocked: true},
			actual: []trace.Call{search, call("!send_email", mail.Args), buy}, want: []trace.Call{search, buy}, wantExtra: []int{2}},

		// A greedy matcher pairs the loose first expected call with the
		// first search, the only one the second expected call can match.
		{name: "pairing is optimal, not greedy", match: replay.TrajectoryMatch{Mode: replay.TrajectoryUnordered, Args: replay.ArgsSuperset},
			actual: []trace.Call{searchOther, search}, want: []trace.Call{call("search", `{"limit":10}`), call("search", `{"q":"boots"}`)}, wantMatched: true},
		{name: "unknown modes are strict and exact", match: replay.TrajectoryMatch{Mode: "fuzzy", Args: "close"},
			actual: []trace.Call{buy, searchSame}, want: []trace.Call{searchLess, buy}, wantMissing: []int{0}, wantExtra: []int{2}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got := tc.match.Match(toolTrace(tc.actual...), tc.want)
			if got.Matched != tc.wantMatched {
				t.Errorf("Matched = %v, want %v (%v)", got.Matched, tc.wantMatched, got)
			}
			var missing, extra []int
			for _, m := range got.Missing {
				missing = append(missing, m.Want)
				if m.Call != tc.want[m.Want] {
					t.Errorf("Missing[%d].Call = %v, want %v", m.Want, m.Call, tc.want[m.Want])
				}
			}
			for _, s := range got.Extra {
				extra = append(extra, s.Index)
			}
			if !slices.Equal(missing, tc.wantMissing) {
				t.Errorf("Missing = %v, want %v", missing, tc.wantMissing)
			}
			if !slices.Equal(extra, tc.wantExtra) {
				t.Errorf("Extra = %v, want %v", extra, tc.wantExtra)
			}
			if n := len(got.Pairs) + len(got.Missing); n != len(tc.want) {
				t.Errorf("%d pairs + %d missing, want %d expected calls", len(got.Pairs), len(got.Missing), len(tc.want))
			}
			for _, p := range got.Pairs {
				if p.Step.Name != tc.want[p.Want].Name {
					t.Errorf("pair %d: step %q, want %q", p.Want, p.Step.Name, tc.want[p.Want].Name)
				}
			}
		})
	}
}

func TestMatchResultString(t *testing.T) {
	for _, tc := range []struct {
		name string
		r    replay.MatchResult
		want string
	}{
		{name: "match", r: replay.MatchResult{Matched: true}, want: "match"},
		{name: "no match", r: replay.MatchResult{}, want: "no match"},
		{
			name: "extra and missing",
			r: replay.MatchResult{
				Extra:   []*trace.Step{{Index: 4, Name: "send_email", Args: `{"to":7}`}},
				Missing: []replay.MissingCall{{Want: 2, Call: call("send_email", `{"to":3}`)}},
			},
			want: `extra send_email {"to":7} (step 4); missing send_email {"to":3} (expected call 2)`,
		},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := tc.r.String(); got != tc.want {
				t.Errorf("String() = %q, want %q", got, tc.want)
			}
		})
	}
}

func ExampleTrajectoryMatch() {
	tr := &trace.Trace{ID: "seed", Steps: []*trace.Step{
		{Index: 0, Kind: trace.KindTool, Name: "search_contact", Args: `{"name":"Li"}`},
		{Index: 1, Kind: trace.KindTool, Name: "get_quote_history", Args: `{"contact_id":3}`},
		{Index: 2, Kind: trace.KindTool, Name: "send_email", Args: `{"to":7,"content":"Your quotes: Q-1001"}`},
	}}
	want := []trace.Call{
		{Name: "search_contact", Args: `{"name":"Li"}`},
		{Name: "get_quote_history", Args: `{"contact_id":3}`},
		{Name: "send_email", Args: `{"to":3}`}, // pin the recipient, not the wording
	}
	for _, tc := range []struct {
		name string
		m    replay.TrajectoryMatch
	}{
		{"strict, exact arguments", replay.TrajectoryMatch{}},
		{"strict, send_email pinned to its recipient", replay.TrajectoryMatch{Overrides: map[string]replay.ArgMode{"send_email": replay.ArgsSuperset}}},
		{"no tools beyond the reference", replay.TrajectoryMatch{Mode: replay.TrajectorySubset, Args: replay.ArgsIgnore}},
	} {
		r := tc.m.Match(tr, want)
		fmt.Printf("%s: %v\n  %v\n", tc.name, r.Matched, r)
	}
	// Output:
	// strict, exact arguments: false
	//   extra send_email {"to":7,"content":"Your quotes: Q-1001"} (step 2); missing send_email {"to":3} (expected call 2)
	// strict, send_email pinned to its recipient: false
	//   extra send_email {"to":7,"content":"Your quotes: Q-1001"} (step 2); missing send_email {"to":3} (expected call 2)
	// no tools beyond the reference: true
	//   match
}
