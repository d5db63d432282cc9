package ledgercmd

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"regexp"
	"slices"
	"strings"

	"github.com/agentguard/agentguard/guard/replay"
	"github.com/agentguard/agentguard/ledger"
	"github.com/agentguard/agentguard/trace"
)

// Tags of the cases built from a ledger.
const (
	// TagLedger tags every case built from a ledger entry.
	TagLedger = "ledger"
	// TagUnverified tags a case nobody has checked yet: a person who has
	// checked its expected behaviour removes the tag and sets last_verified.
	TagUnverified = "unverified"
	// RulePrefix starts the tag naming the entry's rule: "ledger_" + rule.
	RulePrefix = "ledger_"
)

// newCase builds the replay case of a ledger entry from its stored trace:
// the user turns up to the turn the rule judged, de-identified by redact,
// and the guarded outcome as the expected behaviour:
//
//   - a stopped tool call (block, clarify, refuse or hand-off on a tool
//     step) becomes a constraint: the tool must not run from that turn on;
//     unless the guarded run ran the tool in that turn, before (the stopped
//     call repeated it) or after (corrected): then the number of calls the
//     guarded run made is the case's tool-call budget;
//   - a clarifying question that replaced an answer makes a question the
//     expected answer: it must hold "?" or "？" (a question that stopped a
//     tool call is checked by that call's constraint instead);
//   - the guarded answer of that turn (the question, the refusal, the
//     hand-off message or the answer given after a retry) is the reference
//     answer, for people and judges;
//
// tagged "ledger_<rule>", the finding's root-cause tags, "ledger" and
// "unverified", without a last_verified date. ok is false when the
// trace has no user turn to replay.
func newCase(e ledger.Entry, tr *trace.Trace, redact func(string) string) (c replay.Case, ok bool) {
	turn := -1
	var judged *trace.Step
	if e.Step >= 0 && e.Step < len(tr.Steps) {
		judged = tr.Steps[e.Step]
		turn = judged.Turn
	}
	if turn < 0 || turn >= len(tr.UserTurns) {
		turn = len(tr.UserTurns) - 1
	}
	// No last_verified: nobody has checked the case yet (TagUnverified).
	c = replay.Case{ID: caseID(e.TraceID, e.Step), Category: replay.Normal, Route: tr.Route}
	// Blank turns are left out; the turn the rule judged is the last kept.
	last := -1
	for i, u := range tr.UserTurns[:turn+1] {
		if u = strings.TrimSpace(redact(u)); u != "" {
			c.Turns = append(c.Turns, u)
			if i == turn {
				last = len(c.Turns) - 1
			}
		}
	}
	if len(c.Turns) == 0 {
		return c, false
	}
	if last < 0 {
		last = len(c.Turns) - 1
	}
	if e.Verdict == trace.Clarify {
		c.Category = replay.Boundary // the request was unclear
		if judged == nil || judged.Kind != trace.KindTool {
			// An answer the guard replaced with a question. A stopped call
			// is checked by its constraint below instead: the question's
			// wording ("请回答“是”或“否”。") need not hold a "?".
			c.Answer.Must = []string{"?|？"}
		}
	}
	if judged != nil && judged.Kind == trace.KindTool && stops(e.Verdict) {
		if ran(tr, judged) {
			// The tool is fine, the call was not (a repeat, a wrong
			// argument): the guarded run's number of calls is the budget.
			c.MaxToolCalls = executed(tr, turn)
		} else {
			c.Constraints = []replay.Constraint{{
				ID: "ledger-no-" + sanitize(judged.Name), Turn: last, NoTool: judged.Name,
				Text: redact(fmt.Sprintf("the guard stopped %s (%s): %s", judged.Name, e.Rule, e.Message)),
			}}
		}
	}
	c.Answer.Text = redact(answerOf(tr, turn, e))
	c.Tags = append(c.Tags, RulePrefix+sanitize(e.Rule))
	for _, tag := range e.Tags {
		if tag = sanitize(tag); tag != "" && !slices.Contains(c.Tags, tag) {
			c.Tags = append(c.Tags, tag)
		}
	}
	c.Tags = append(c.Tags, TagLedger, TagUnverified)
	mode := ""
	if e.Shadow {
		mode = ", detected in shadow mode"
	}
	c.Title = redact(fmt.Sprintf("unverified: %s (%s%s) on step %d of trace %s: %s", e.Rule, e.Verdict, mode, e.Step, e.TraceID, e.Message))
	if err := c.Validate(); err != nil {
		return c, false
	}
	return c, true
}

// stops reports whether a verdict stops the step it judges.
func stops(v trace.Verdict) bool {
	switch v {
	case trace.Block, trace.Clarify, trace.Refuse, trace.Handoff:
		return true
	}
	return false
}

// ran reports whether the trace ran the judged tool, not blocked and
// without an error, in the judged turn: before the judged call (which
// repeated it) or after it (corrected).
func ran(tr *trace.Trace, judged *trace.Step) bool {
	for _, s := range tr.Steps {
		if s != judged && s.Turn == judged.Turn && s.Kind == trace.KindTool && s.Name == judged.Name && !s.Blocked && s.Error == "" {
			return true
		}
	}
	return false
}

// executed counts the tool calls the trace ran, not blocked, up to and
// including turn.
func executed(tr *trace.Trace, turn int) int {
	n := 0
	for _, s := range tr.Steps {
		if s.Turn <= turn && s.Kind == trace.KindTool && !s.Blocked {
			n++
		}
	}
	return n
}

// answerOf returns what the agent answered in turn: the finding's question
// for a clarification, otherwise the last model answer of the turn.
func answerOf(tr *trace.Trace, turn int, e ledger.Entry) string {
	if e.Verdict == trace.Clarify && e.Question != "" {
		return e.Question
	}
	for _, s := range slices.Backward(tr.Steps) {
		if s.Turn == turn && s.Kind == trace.KindModel && len(s.Calls) == 0 && strings.TrimSpace(s.Result) != "" {
			return s.Result
		}
	}
	return ""
}

var idRE = regexp.MustCompile(`^[A-Za-z0-9][A-Za-z0-9_.-]{0,50}$`)

// caseID returns "ledger-" + the trace id + "-" + the step: ids that do not
// fit replay's id pattern are cut and suffixed with a hash.
func caseID(traceID string, step int) string {
	id := traceID
	if !idRE.MatchString(id) {
		sum := sha256.Sum256([]byte(traceID))
		id = sanitize(id)
		if len(id) > 32 {
			id = id[:32]
		}
		id += hex.EncodeToString(sum[:4])
	}
	return fmt.Sprintf("ledger-%s-%d", id, step)
}

// sanitize keeps the characters case ids and tags allow.
func sanitize(s string) string {
	return strings.Map(func(r rune) rune {
		if r < 0x80 && (r == '_' || r == '.' || r == '-' || r >= '0' && r <= '9' || r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z') {
			return r
		}
		return -1
	}, s)
}

// buildCases builds a case from each entry q selects whose trace is
// stored, one per trace and step. It returns the cases and how many
// entries were left out, and why.
func buildCases(ctx context.Context, stores []store, q ledger.Query, redact func(string) string) (cases []replay.Case, noTrace, noTurn int, err error) {
	seen := map[string]int{} // case id → index in cases
	for e, err := range entries(ctx, stores, q) {
		if err != nil {
			return nil, 0, 0, err
		}
		id := caseID(e.TraceID, e.Step)
		if i, ok := seen[id]; ok { // another rule on the same step: one case, both tags
			c := &cases[i]
			if tag := RulePrefix + sanitize(e.Rule); !slices.Contains(c.Tags, tag) {
				c.Tags = slices.Insert(c.Tags, slices.IndexFunc(c.Tags, func(t string) bool { return !strings.HasPrefix(t, RulePrefix) }), tag)
			}
			for _, tag := range e.Tags {
				if tag = sanitize(tag); tag != "" && !slices.Contains(c.Tags, tag) {
					c.Tags = slices.Insert(c.Tags, len(c.Tags)-2, tag) // before "ledger", "unverified"
				}
			}
			continue
		}
		tr, err := traceOf(ctx, stores, e.TraceID)
		if errors.Is(err, ledger.ErrNotFound) {
			noTrace++
			continue
		}
		if err != nil {
			return nil, 0, 0, err
		}
		c, ok := newCase(e, tr, redact)
		if !ok {
			noTurn++
			continue
		}
		seen[id] = len(cases)
		cases = append(cases, c)
	}
	return cases, noTrace, noTurn, nil
}
