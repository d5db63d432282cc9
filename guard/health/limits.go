package health

import (
	"encoding/json"
	"fmt"
	"slices"
	"strings"

	"github.com/agentguard/agentguard/guard/replay"
	"github.com/agentguard/agentguard/trace"
)

// maxLimits bounds the explanations a root cause keeps.
const maxLimits = 3

// limits says, for the failed hits of each root-cause tag, why no guard
// rail caught them, from what the runs show: a wrong intent the classifier
// was sure of, a turn that asked for several things of which the agent did
// one. It returns up to maxLimits distinct sentences per tag.
func (s *scorer) limits() map[string][]string {
	out := map[string][]string{}
	add := func(tag, why string) {
		if why != "" && !slices.Contains(out[tag], why) && len(out[tag]) < maxLimits {
			out[tag] = append(out[tag], why)
		}
	}
	for _, h := range s.hits {
		if h.Outcome != Failed {
			continue
		}
		r := s.byTrace[h.TraceID]
		if r == nil || r.Trace == nil {
			continue
		}
		c := &s.cases[s.caseIdx[h.Case]]
		switch h.Screen {
		case "intent":
			add(h.Tag, sureIntent(c, r))
		case "trajectory", "answer":
			add(h.Tag, unservedRequest(c, r))
		}
	}
	return out
}

// sureIntent explains a wrong intent the guard let through: the classifier
// gave it with a confidence the intent gate does not question, and no gate
// judged the step.
func sureIntent(c *replay.Case, r *replay.Run) string {
	turn := c.IntentTurn
	if turn < 0 {
		turn += len(c.Turns)
	}
	for i, st := range r.Trace.Steps {
		if st.Kind != trace.KindModel || st.Intent == "" || st.Turn != turn || st.Intent == c.Intent {
			continue
		}
		judged := false
		for _, g := range r.Trace.Steps[i+1:] {
			if g.Kind == trace.KindGate && g.Finding != nil && g.Finding.Step == st.Index && g.Finding.Dimension == trace.Coherence {
				judged = true
			}
		}
		if judged {
			return ""
		}
		return fmt.Sprintf("%s: the classifier read %q as %s at confidence %.2f, where the case wants %s; the intent gate asks back only when the classifier is unsure, so a wrong reading it is sure of gets through — the classifier needs the fix",
			c.ID, clip(c.Turns[turn], 60), st.Intent, st.Confidence, c.Intent)
	}
	return ""
}

// unservedRequest explains a missing expected call whose argument values
// the user gave in the same turn as a call that ran: the turn asked for
// several things and the agent did only some, which no guard rail checks.
func unservedRequest(c *replay.Case, r *replay.Run) string {
	if c.Trajectory == nil {
		return ""
	}
	var ran []*trace.Step
	for _, st := range r.Trace.Steps {
		if st.Kind == trace.KindTool && !st.Blocked {
			ran = append(ran, st)
		}
	}
	for _, want := range c.Trajectory.Calls {
		if slices.ContainsFunc(ran, func(st *trace.Step) bool { return st.Name == want.Name && sameValues(want.Args, st.Args) }) {
			continue // made
		}
		vals := values(want.Args)
		if len(vals) == 0 {
			continue
		}
		for ti, turn := range c.Turns {
			if !containsAll(turn, vals) {
				continue
			}
			for _, st := range ran {
				if st.Name == want.Name && sameValues(want.Args, st.Args) {
					continue
				}
				other := values(json.RawMessage(st.Args))
				if len(other) == 0 || !containsAll(turn, other) || slices.Equal(other, vals) {
					continue
				}
				if st.Name == want.Name {
					return fmt.Sprintf("%s: turn %d names both %s and %s (%q); the agent called %s with %s, the case wants %s: the value came from the user's own turn, so provenance lets it through — no guard rail can tell which value the user meant; the prompt or the extraction needs the fix",
						c.ID, ti, strings.Join(other, ", "), strings.Join(vals, ", "), clip(turn, 60), st.Name, strings.Join(other, ", "), strings.Join(vals, ", "))
				}
				return fmt.Sprintf("%s: turn %d asks for several things (%q); the agent did %s(%s) and not %s(%s): no guard rail checks that every request of a turn was served — split the requests in the prompt or the planner",
					c.ID, ti, clip(turn, 60), st.Name, strings.Join(other, ", "), want.Name, strings.Join(vals, ", "))
			}
		}
	}
	return ""
}

// values returns the string values of a JSON object's top level.
func values(args json.RawMessage) []string {
	var m map[string]any
	if json.Unmarshal(args, &m) != nil {
		return nil
	}
	var out []string
	for _, v := range m {
		if s, ok := v.(string); ok && strings.TrimSpace(s) != "" {
			out = append(out, s)
		}
	}
	slices.Sort(out)
	return out
}

func sameValues(want json.RawMessage, got string) bool {
	w := values(want)
	return len(w) == 0 || containsAll(got, w)
}

func containsAll(text string, vals []string) bool {
	for _, v := range vals {
		if !replay.Contains(text, v) {
			return false
		}
	}
	return true
}
