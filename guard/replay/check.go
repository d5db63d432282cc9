package replay

import (
	"encoding/json"
	"fmt"
	"slices"
	"strings"
	"time"
	"unicode"

	"github.com/agentguard/agentguard/guard"
	"github.com/agentguard/agentguard/trace"
)

// Check is how one run measures up to its case: computed from the run's
// answers and trace, never judged.
type Check struct {
	// Missing are the Answer.Must elements the final answer lacks, and
	// Forbidden the Answer.MustNot elements it has.
	Missing   []string `json:"missing,omitempty"`
	Forbidden []string `json:"forbidden,omitempty"`
	// Intent is the intent recorded for the case's IntentTurn, "" when
	// none was; IntentOK is false only when one was recorded and it is not
	// Case.Intent.
	Intent   string `json:"intent,omitempty"`
	IntentOK bool   `json:"intent_ok"`
	// TrajectoryOK reports whether the tool calls match Case.Trajectory
	// (true without one); TrajectoryDiff says how they differ.
	TrajectoryOK   bool   `json:"trajectory_ok"`
	TrajectoryDiff string `json:"trajectory_diff,omitempty"`
	// Losses are the constraint breaks, in trace order.
	Losses []Loss `json:"losses,omitempty"`
	// ToolCalls counts the tool calls that ran: a call the guard blocked
	// never ran, and does not count against the case's budget
	// (Case.Budget), which Budget holds.
	ToolCalls int `json:"tool_calls"`
	Budget    int `json:"budget,omitempty"`
}

// Loss is one break of a constraint.
type Loss struct {
	Constraint string `json:"constraint"`
	Turn       int    `json:"turn"` // the user turn it happened in
	Step       int    `json:"step"` // the tool step, or -1 for an answer
	What       string `json:"what"`
}

// AnswerOK reports whether the final answer has every Must element and no
// MustNot element.
func (k *Check) AnswerOK() bool { return len(k.Missing) == 0 && len(k.Forbidden) == 0 }

// Budget returns the run's tool-call budget: MaxToolCalls, or twice the
// length of the expected trajectory; 0 means no budget.
func (c *Case) Budget() int {
	if c.MaxToolCalls > 0 {
		return c.MaxToolCalls
	}
	if c.Trajectory != nil {
		return 2 * len(c.Trajectory.Calls)
	}
	return 0
}

// Check measures r against c.
func (c *Case) Check(r *Run) Check {
	k := Check{IntentOK: true, TrajectoryOK: true, Budget: c.Budget()}
	final := r.Final()
	ref := c.Reference()
	for _, e := range ref.Must {
		if !Contains(final, e) {
			k.Missing = append(k.Missing, e)
		}
	}
	for _, e := range ref.MustNot {
		if Contains(final, e) {
			k.Forbidden = append(k.Forbidden, e)
		}
	}
	t := r.Trace
	if t == nil {
		t = &trace.Trace{}
	}
	k.ToolCalls = toolCalls(r)
	if c.Intent != "" {
		turn := c.IntentTurn
		if turn < 0 {
			turn += len(c.Turns)
		}
		for _, s := range t.Steps {
			if s.Kind == trace.KindModel && s.Intent != "" && s.Turn == turn {
				k.Intent = s.Intent
			}
		}
		k.IntentOK = k.Intent == "" || k.Intent == c.Intent
	}
	if tj := c.Trajectory; tj != nil {
		want := make([]trace.Call, len(tj.Calls))
		for i, call := range tj.Calls {
			want[i] = trace.Call{Name: call.Name, Args: string(call.Args)}
		}
		m := TrajectoryMatch{Mode: tj.Match, Args: tj.Args, Overrides: tj.Overrides}.Match(t, want)
		k.TrajectoryOK = m.Matched
		if !m.Matched {
			k.TrajectoryDiff = m.String()
		}
	}
	k.Losses = c.losses(r, t)
	return k
}

// losses finds the breaks of c's constraints in r.
func (c *Case) losses(r *Run, t *trace.Trace) []Loss {
	var out []Loss
	for _, k := range c.Constraints {
		for _, s := range t.Steps {
			if s.Kind != trace.KindTool || s.Blocked || s.Turn < k.Turn {
				continue
			}
			switch {
			case k.NoTool != "" && s.Name == k.NoTool:
				out = append(out, Loss{Constraint: k.ID, Turn: s.Turn, Step: s.Index, What: fmt.Sprintf("%s ran", s.Name)})
			case k.Tool != "" && s.Name == k.Tool:
				if v := s.ArgString(k.Arg); !Contains(v, k.Value) {
					out = append(out, Loss{Constraint: k.ID, Turn: s.Turn, Step: s.Index, What: fmt.Sprintf("%s %s=%q, not %q", s.Name, k.Arg, v, k.Value)})
				}
			}
		}
		for i, turn := range r.Turns {
			if i < k.Turn {
				continue
			}
			for _, e := range k.AnswerNot {
				if Contains(turn.Answer, e) {
					out = append(out, Loss{Constraint: k.ID, Turn: i, Step: -1, What: fmt.Sprintf("answer says %q", e)})
				}
			}
		}
	}
	slices.SortStableFunc(out, func(a, b Loss) int {
		if a.Turn != b.Turn {
			return a.Turn - b.Turn
		}
		return a.Step - b.Step
	})
	return out
}

// Contains reports whether text contains the key element e: one of its
// "|"-separated alternatives, compared without regard to case or runs of
// white space.
func Contains(text, e string) bool {
	t := fold(text)
	for _, alt := range strings.Split(e, "|") {
		if a := fold(alt); a != "" && strings.Contains(t, a) {
			return true
		}
	}
	return false
}

// fold lower-cases s and turns runs of white space into one space.
func fold(s string) string {
	return strings.Join(strings.FieldsFunc(strings.ToLower(s), unicode.IsSpace), " ")
}

// Signature identifies a run's outcome for drift: the case's key elements
// (Must, then MustNot) found in the final answer, or, for a case without
// any, the final answer with digits and white space folded. A run that
// ended in an error has the signature "error".
func (c *Case) Signature(r *Run) string {
	if r.Err != "" {
		return "error"
	}
	final := r.Final()
	ref := c.Reference()
	if len(ref.Must)+len(ref.MustNot) == 0 {
		return strings.Map(func(r rune) rune {
			if unicode.IsDigit(r) {
				return '0'
			}
			return r
		}, fold(final))
	}
	var found []string
	for _, e := range slices.Concat(ref.Must, ref.MustNot) {
		if Contains(final, e) {
			found = append(found, e)
		}
	}
	b, _ := json.Marshal(found)
	return string(b)
}

// Drift returns the share of c's runs (those in runs with Run.Case equal
// to c.ID) whose signature differs from the most common one: 0 when all
// agree or there are fewer than two runs, 2/3 when three runs all differ.
func Drift(c *Case, runs []Run) float64 {
	counts := map[string]int{}
	n, top := 0, 0
	for i := range runs {
		if runs[i].Case != c.ID {
			continue
		}
		n++
		sig := c.Signature(&runs[i])
		counts[sig]++
		top = max(top, counts[sig])
	}
	if n < 2 {
		return 0
	}
	return 1 - float64(top)/float64(n)
}

// Metrics are the objective measures of a replay: computed from the runs'
// traces and answers, not judged.
type Metrics struct {
	Cases int `json:"cases"`
	Runs  int `json:"runs"`
	// MeanDuration is the mean wall time of a run.
	MeanDuration time.Duration `json:"mean_duration_ns"`
	// MeanTokens is the mean of a run's prompt and completion tokens.
	MeanTokens float64 `json:"mean_tokens"`
	// MeanToolCalls is the mean number of tool calls that ran in a run
	// (blocked ones never ran).
	MeanToolCalls float64 `json:"mean_tool_calls"`
	// NoOutputRate is the share of user turns that got no answer: the run
	// ended before them, or the answer was blank; a turn handed to a person
	// (StatusHandoff) is an outcome, not a missing answer.
	NoOutputRate float64 `json:"no_output_rate"`
	// TimeoutRate is the share of external calls — tool calls that ran and
	// model calls — that timed out (guard.ErrTimeout), a run that timed out
	// counting as one more timed-out call.
	TimeoutRate float64 `json:"timeout_rate"`
	// RetryRate is the share of runs in which a call was made again: a
	// model call that failed and was retried, or an answer the guard sent
	// back (an enforced Retry verdict). These are the guard's own retries,
	// never counted as timeouts.
	RetryRate float64 `json:"retry_rate"`
	// DriftRate is the share of cases run at least twice whose key answer
	// elements differ across their runs (Drift > 0).
	DriftRate float64 `json:"drift_rate"`
	// ReportsDropped is the findings and traces the runs' guards dropped
	// from their report queues (Run.ReportsDropped): when it is not zero the
	// ledger misses some of the runs' violations.
	ReportsDropped uint64 `json:"reports_dropped"`
}

// Measure computes the metrics of runs, the runs of cases.
func Measure(cases []Case, runs []Run) Metrics {
	m := Metrics{Cases: len(cases), Runs: len(runs)}
	turnsOf := map[string]int{}
	for _, c := range cases {
		turnsOf[c.ID] = len(c.Turns)
	}
	var dur time.Duration
	var toks, calls, turns, silent, retried, external, timedOut int
	for i := range runs {
		r := &runs[i]
		dur += r.Duration
		toks += tokens(r)
		calls += toolCalls(r)
		n := max(turnsOf[r.Case], len(r.Turns))
		turns += n
		silent += n - len(r.Turns)
		for _, t := range r.Turns {
			if strings.TrimSpace(t.Answer) == "" && t.Status != guard.StatusHandoff { // a deterministic hand-off is an outcome
				silent++
			}
		}
		if Retried(r) {
			retried++
		}
		e, to := externalCalls(r)
		external += e
		timedOut += to
		if r.TimedOut {
			external++
			timedOut++
		}
		m.ReportsDropped += r.ReportsDropped
	}
	if len(runs) > 0 {
		n := float64(len(runs))
		m.MeanDuration = dur / time.Duration(len(runs))
		m.MeanTokens = float64(toks) / n
		m.MeanToolCalls = float64(calls) / n
		m.RetryRate = float64(retried) / n
	}
	if external > 0 {
		m.TimeoutRate = float64(timedOut) / float64(external)
	}
	if turns > 0 {
		m.NoOutputRate = float64(silent) / float64(turns)
	}
	multi, drifting := 0, 0
	perCase := map[string]int{}
	for i := range runs {
		perCase[runs[i].Case]++
	}
	for i := range cases {
		if perCase[cases[i].ID] < 2 {
			continue
		}
		multi++
		if Drift(&cases[i], runs) > 0 {
			drifting++
		}
	}
	if multi > 0 {
		m.DriftRate = float64(drifting) / float64(multi)
	}
	return m
}

// tokens returns the prompt and completion tokens of r's model steps.
func tokens(r *Run) int {
	n := 0
	if r.Trace != nil {
		for _, s := range r.Trace.Steps {
			if s.Kind == trace.KindModel {
				n += s.TokensIn + s.TokensOut
			}
		}
	}
	return n
}

// timeoutText is what guard.ErrTimeout says, as recorded in a step's error.
const timeoutText = "call timed out"

// externalCalls counts r's external calls — tool calls that ran, and model
// calls other than the intent classifier's — and those of them that timed
// out.
func externalCalls(r *Run) (calls, timedOut int) {
	if r.Trace == nil {
		return 0, 0
	}
	for _, s := range r.Trace.Steps {
		switch {
		case s.Kind == trace.KindTool && !s.Blocked, s.Kind == trace.KindModel && s.Intent == "":
			calls++
			if strings.Contains(s.Error, timeoutText) {
				timedOut++
			}
		}
	}
	return calls, timedOut
}

// toolCalls returns the number of tool calls r made, blocked ones included.
func toolCalls(r *Run) int {
	n := 0
	if r.Trace != nil {
		for _, s := range r.Trace.Steps {
			if s.Kind == trace.KindTool && !s.Blocked { // a blocked call never ran
				n++
			}
		}
	}
	return n
}

// Retried reports whether r made a call again: a model call that failed and
// was retried, or an answer the guard sent back with an enforced Retry.
func Retried(r *Run) bool {
	if r.Trace == nil {
		return false
	}
	steps := r.Trace.Steps
	for i, s := range steps {
		switch {
		case s.Kind == trace.KindGate && s.Finding != nil && s.Finding.Verdict == trace.Retry && !s.Finding.Shadow:
			return true
		case s.Kind == trace.KindModel && s.Error != "":
			for _, p := range steps[i+1:] {
				if p.Kind == trace.KindModel {
					return true
				}
			}
		}
	}
	return false
}
