package replay

import (
	"encoding/json"
	"fmt"
	"strings"

	"github.com/agentguard/agentguard/trace"
)

// TrajectoryMode says how the tool calls of a trace are compared with an
// expected trajectory. The modes follow langchain-ai/agentevals'
// trajectory_match_mode.
type TrajectoryMode string

// Trajectory modes. In each, calls are counted with multiplicity: one actual
// call matches at most one expected call.
const (
	// TrajectoryStrict: the same calls in the same order, nothing more and
	// nothing less. It is the zero value.
	TrajectoryStrict TrajectoryMode = "strict"
	// TrajectoryUnordered: the same calls in any order.
	TrajectoryUnordered TrajectoryMode = "unordered"
	// TrajectorySubset: every actual call is one of the expected calls; the
	// agent used no tool beyond the reference, but may have skipped some.
	TrajectorySubset TrajectoryMode = "subset"
	// TrajectorySuperset: every expected call was made; the agent did at
	// least what the reference did, and may have done more.
	TrajectorySuperset TrajectoryMode = "superset"
)

// ArgMode says how the arguments of an actual call are compared with those
// of an expected call of the same tool, as in agentevals'
// tool_args_match_mode. Arguments are compared as JSON: key order, spacing
// and the spelling of numbers (3, 3.0) do not matter, and blank arguments
// are the empty object. Arguments that are not a JSON object are compared
// as JSON values, or as text when they are not JSON, in every mode but
// ArgsIgnore.
type ArgMode string

// Argument modes. The subset and superset modes look at top-level keys; the
// value of a key must be equal as JSON (a nested object is compared whole).
const (
	// ArgsExact: the arguments are equal. It is the zero value.
	ArgsExact ArgMode = "exact"
	// ArgsIgnore: only the tool name is compared.
	ArgsIgnore ArgMode = "ignore"
	// ArgsSubset: the actual arguments are a subset of the expected ones:
	// every key the agent passed is expected, with the expected value; it
	// may leave expected keys out.
	ArgsSubset ArgMode = "subset"
	// ArgsSuperset: the actual arguments are a superset of the expected
	// ones: every expected key was passed with the expected value; the
	// agent may pass more (say, optional parameters the reference leaves
	// out). Use it to pin only the arguments that matter.
	ArgsSuperset ArgMode = "superset"
)

// TrajectoryMatch compares the tool calls of a trace with an expected
// trajectory. The zero value is a strict match with exact arguments. Unknown
// mode values are treated as the strictest ones, TrajectoryStrict and
// ArgsExact. A TrajectoryMatch is plain data, safe for concurrent use as long
// as Overrides is not modified.
//
// It differs from agentevals' trajectory match in four ways: it compares
// the flat sequence of executed tool calls, not messages (so how calls were
// grouped into model turns does not matter); the argument mode always reads
// "actual compared with expected", where agentevals' subset mode swaps the
// two; calls are paired optimally rather than greedily; and an override is
// a mode, not a list of keys or a function.
type TrajectoryMatch struct {
	// Mode is how the sequences of calls compare. Empty means
	// TrajectoryStrict.
	Mode TrajectoryMode
	// Args is how the arguments of two calls of the same tool compare.
	// Empty means ArgsExact.
	Args ArgMode
	// Overrides sets the argument mode per tool name, replacing Args for
	// that tool (agentevals' tool_args_match_overrides).
	Overrides map[string]ArgMode
	// IncludeBlocked counts tool steps that a verdict kept from running
	// (Step.Blocked) as actual calls. By default only executed calls count:
	// a blocked call is something the agent tried, not something it did.
	IncludeBlocked bool
}

// MatchResult is the outcome of TrajectoryMatch.Match.
type MatchResult struct {
	// Matched reports whether the trace satisfies the mode: strict and
	// unordered need no Missing and no Extra, subset needs no Extra,
	// superset needs no Missing.
	Matched bool
	// Pairs are the expected calls that were matched, in the order of the
	// expected trajectory.
	Pairs []CallPair
	// Missing are the expected calls that no actual call matched, in order.
	// In strict mode, a call made out of order is missing at its expected
	// place and extra at its actual one.
	Missing []MissingCall
	// Extra are the actual calls that matched no expected call, in order.
	Extra []*trace.Step
}

// CallPair is an expected call and the tool step that matched it.
type CallPair struct {
	Want int         // index into the expected trajectory
	Step *trace.Step // the actual call
}

// MissingCall is an expected call that was not made.
type MissingCall struct {
	Want int // index into the expected trajectory
	trace.Call
}

// String summarises the result for people and test failures: the extra
// calls, then the missing ones, even where the mode allows them, as in
//
//	extra send_email {"to":7} (step 4); missing send_email {"to":3} (expected call 2)
//
// or "match" ("no match") when nothing is left over.
func (r MatchResult) String() string {
	var parts []string
	for _, s := range r.Extra {
		parts = append(parts, fmt.Sprintf("extra %s %s (step %d)", s.Name, s.Args, s.Index))
	}
	for _, c := range r.Missing {
		parts = append(parts, fmt.Sprintf("missing %s %s (expected call %d)", c.Name, c.Args, c.Want))
	}
	if len(parts) == 0 {
		if r.Matched {
			return "match"
		}
		return "no match"
	}
	return strings.Join(parts, "; ")
}

// Match compares the tool calls of t with want. The actual calls are the
// KindTool steps of t, in order, leaving out blocked ones unless
// IncludeBlocked is set; calls that ran and failed (Step.Error) count, since
// they were made. Model steps' proposed Calls are not looked at.
//
// Pairing is optimal, not greedy: in the unordered, subset and superset
// modes an actual call is paired with an expected one so that as many
// expected calls as possible are matched (a maximum bipartite matching); in
// strict mode the pairs are a longest common subsequence. Missing and Extra
// are what is left over, so they explain a failed match in every mode.
func (m TrajectoryMatch) Match(t *trace.Trace, want []trace.Call) MatchResult {
	var actual []*trace.Step
	for _, s := range t.Steps {
		if s.Kind == trace.KindTool && (!s.Blocked || m.IncludeBlocked) {
			actual = append(actual, s)
		}
	}
	wantArgs := make([]jsonArgs, len(want))
	for i, c := range want {
		wantArgs[i] = parseArgs(c.Args)
	}
	actualArgs := make([]jsonArgs, len(actual))
	for j, s := range actual {
		actualArgs[j] = parseArgs(s.Args)
	}
	ok := func(i, j int) bool {
		return want[i].Name == actual[j].Name && m.argMode(want[i].Name).match(actualArgs[j], wantArgs[i])
	}

	var pairOf []int // pairOf[i] is the actual call paired with want[i], or -1
	if m.Mode == TrajectoryUnordered || m.Mode == TrajectorySubset || m.Mode == TrajectorySuperset {
		pairOf = bipartite(len(want), len(actual), ok)
	} else {
		pairOf = lcs(len(want), len(actual), ok)
	}

	var r MatchResult
	used := make([]bool, len(actual))
	for i, j := range pairOf {
		if j < 0 {
			r.Missing = append(r.Missing, MissingCall{Want: i, Call: want[i]})
			continue
		}
		used[j] = true
		r.Pairs = append(r.Pairs, CallPair{Want: i, Step: actual[j]})
	}
	for j, s := range actual {
		if !used[j] {
			r.Extra = append(r.Extra, s)
		}
	}
	switch m.Mode {
	case TrajectorySubset:
		r.Matched = len(r.Extra) == 0
	case TrajectorySuperset:
		r.Matched = len(r.Missing) == 0
	default:
		r.Matched = len(r.Extra) == 0 && len(r.Missing) == 0
	}
	return r
}

func (m TrajectoryMatch) argMode(tool string) ArgMode {
	if a, ok := m.Overrides[tool]; ok {
		return a
	}
	return m.Args
}

// bipartite pairs expected calls with actual ones so that as many expected
// calls as possible are matched (Kuhn's augmenting paths; trajectories are
// short).
func bipartite(nWant, nActual int, ok func(i, j int) bool) []int {
	pairOf := make([]int, nWant)
	owner := make([]int, nActual) // owner[j] is the expected call paired with actual j, or -1
	for i := range pairOf {
		pairOf[i] = -1
	}
	for j := range owner {
		owner[j] = -1
	}
	var seen []bool
	var augment func(i int) bool
	augment = func(i int) bool {
		for j := range nActual {
			if seen[j] || !ok(i, j) {
				continue
			}
			seen[j] = true
			if owner[j] < 0 || augment(owner[j]) {
				owner[j], pairOf[i] = i, j
				return true
			}
		}
		return false
	}
	for i := range nWant {
		seen = make([]bool, nActual)
		augment(i)
	}
	return pairOf
}

// lcs pairs expected and actual calls along a longest common subsequence.
func lcs(nWant, nActual int, ok func(i, j int) bool) []int {
	// n[i][j] is the LCS length of want[i:] and actual[j:].
	n := make([][]int, nWant+1)
	for i := range n {
		n[i] = make([]int, nActual+1)
	}
	for i := nWant - 1; i >= 0; i-- {
		for j := nActual - 1; j >= 0; j-- {
			if ok(i, j) {
				// Pairing i with j is always optimal, even for argument
				// modes that are not transitive.
				n[i][j] = n[i+1][j+1] + 1
			} else {
				n[i][j] = max(n[i+1][j], n[i][j+1])
			}
		}
	}
	pairOf := make([]int, nWant)
	for i := range pairOf {
		pairOf[i] = -1
	}
	for i, j := 0, 0; i < nWant && j < nActual; {
		switch {
		case ok(i, j):
			pairOf[i] = j
			i, j = i+1, j+1
		case n[i+1][j] >= n[i][j+1]:
			i++
		default:
			j++
		}
	}
	return pairOf
}

// jsonArgs is a call's arguments, decoded once.
type jsonArgs struct {
	raw   string
	value any  // decoded with UseNumber
	ok    bool // raw is JSON (blank counts as {})
}

func parseArgs(s string) jsonArgs {
	a := jsonArgs{raw: strings.TrimSpace(s)}
	if a.raw == "" {
		a.value, a.ok = map[string]any{}, true
		return a
	}
	dec := json.NewDecoder(strings.NewReader(a.raw))
	dec.UseNumber()
	if dec.Decode(&a.value) == nil && !dec.More() {
		a.ok = true
	}
	return a
}

// match reports whether actual arguments match expected ones in mode m.
func (m ArgMode) match(actual, want jsonArgs) bool {
	if m == ArgsIgnore {
		return true
	}
	if !actual.ok || !want.ok {
		return actual.raw == want.raw
	}
	am, aObj := actual.value.(map[string]any)
	wm, wObj := want.value.(map[string]any)
	if !aObj || !wObj {
		return jsonEqual(actual.value, want.value)
	}
	switch m {
	case ArgsSubset:
		return within(am, wm)
	case ArgsSuperset:
		return within(wm, am)
	}
	return jsonEqual(actual.value, want.value)
}

// within reports whether every key of small is in big with an equal value.
func within(small, big map[string]any) bool {
	for k, v := range small {
		w, ok := big[k]
		if !ok || !jsonEqual(v, w) {
			return false
		}
	}
	return true
}

// jsonEqual compares two values decoded with UseNumber; numbers compare by
// value.
func jsonEqual(a, b any) bool {
	switch x := a.(type) {
	case map[string]any:
		y, ok := b.(map[string]any)
		if !ok || len(x) != len(y) {
			return false
		}
		return within(x, y)
	case []any:
		y, ok := b.([]any)
		if !ok || len(x) != len(y) {
			return false
		}
		for i := range x {
			if !jsonEqual(x[i], y[i]) {
				return false
			}
		}
		return true
	case json.Number:
		y, ok := b.(json.Number)
		if !ok {
			return false
		}
		if x == y {
			return true
		}
		fx, errx := x.Float64()
		fy, erry := y.Float64()
		return errx == nil && erry == nil && fx == fy
	default:
		return a == b // string, bool, nil
	}
}
