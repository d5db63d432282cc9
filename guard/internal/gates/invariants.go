package gates

import (
	"encoding/json"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/agentguard/agentguard/guard/internal/rulekit"
	"github.com/agentguard/agentguard/guard/rules"
	"github.com/agentguard/agentguard/trace"
	"github.com/agentguard/agentguard/trace/lexicon"
)

// Invariant checks one argument value of a tool call, or one field of a
// structured (JSON) answer when tool is "". It returns a non-nil error when
// the value is not acceptable.
type Invariant func(tool, path string, value any) error

// NonNegativeAmounts returns the invariant that rejects negative numbers
// in fields w's Keys.Amount names: an amount, a price, a fee, a total, a
// quantity, a balance.
func NonNegativeAmounts(w *lexicon.Compiled) Invariant {
	return func(_, path string, value any) error {
		f, ok := value.(float64)
		if ok && f < 0 && rulekit.KindOfKey(w, rulekit.LastKey(path))&rulekit.KeyAmount != 0 {
			return fmt.Errorf("%s is negative (%v)", path, f)
		}
		return nil
	}
}

// ValidDates returns the invariant that rejects strings in fields w's
// Keys.Date names (a date, a day, a deadline, *_at, *time) that are
// written with digits, as a date is, and parse as none of the common date
// layouts ("2024-02-30"). Words ("today", "Monday", "明天") are the tool's
// to read: they are no malformed date.
func ValidDates(w *lexicon.Compiled) Invariant {
	return func(_, path string, value any) error {
		s, ok := value.(string)
		if !ok || !strings.ContainsAny(s, "0123456789") || rulekit.KindOfKey(w, rulekit.LastKey(path))&rulekit.KeyDate == 0 {
			return nil
		}
		for _, l := range rulekit.DateLayouts {
			if _, err := time.Parse(l, s); err == nil {
				return nil
			}
		}
		return fmt.Errorf("%s is not a valid date (%q)", path, s)
	}
}

// NewInvariants returns the rule that checks tool arguments, and answers
// on the routes listed in jsonRoutes, against invariants, after
// NonNegativeAmounts and ValidDates of w when defaults is set. On
// jsonRoutes an answer must also parse as JSON. Violations are judged
// Retry: the agent is told what to fix.
func NewInvariants(w *lexicon.Compiled, jsonRoutes []string, invariants []Invariant, defaults bool) rulekit.Func {
	only := defaults && len(invariants) == 0 // keys tell whether a call needs reading
	if defaults {
		invariants = append([]Invariant{NonNegativeAmounts(w), ValidDates(w)}, invariants...)
	}
	// defaultKey reports whether the defaults read a value under key.
	defaultKey := func(key string) bool {
		return rulekit.KindOfKey(w, key)&(rulekit.KeyAmount|rulekit.KeyDate) != 0
	}
	return rulekit.Func{N: rules.Invariant, C: func(t *trace.Trace, s *trace.Step) []trace.Finding {
		var raw, tool string
		switch {
		case s.Kind == trace.KindTool:
			// Arguments with no key the default invariants look at skip
			// decoding.
			if only && !rulekit.AnyKey(s.Args, defaultKey) {
				return nil
			}
			raw, tool = s.Args, s.Name
		case s.Kind == trace.KindModel && s.Result != "" && len(s.Calls) == 0 && s.Intent == "" && !s.Blocked && slices.Contains(jsonRoutes, t.Route):
			raw = stripFence(s.Result)
			var v any
			if err := json.Unmarshal([]byte(raw), &v); err != nil {
				return []trace.Finding{{
					Rule: rules.Invariant, Step: s.Index, Verdict: trace.Retry, Dimension: trace.Accuracy, Severity: trace.SeverityError,
					Message: fmt.Sprintf("the answer must be JSON on route %q: %v", t.Route, err), Evidence: s.Result, Tags: []string{"bad-json-answer"},
					Facts: []trace.Fact{rulekit.AnswerFact(s, s.Result, "not JSON: "+err.Error()), rulekit.PolicyFact("gates.json_routes", t.Route)},
				}}
			}
		default:
			return nil
		}
		var v any
		if json.Unmarshal([]byte(raw), &v) != nil {
			return nil // malformed arguments are the argument rule's to report
		}
		var out []trace.Finding
		rulekit.Walk("", v, func(path string, leaf any) {
			for _, inv := range invariants {
				if err := inv(tool, path, leaf); err != nil {
					fact := rulekit.ArgFact(s, path, fmt.Sprint(leaf))
					if tool == "" {
						fact = rulekit.AnswerFact(s, path+": "+fmt.Sprint(leaf), "")
					}
					fact.Says = err.Error()
					out = append(out, trace.Finding{
						Rule: rules.Invariant, Step: s.Index, Verdict: trace.Retry, Dimension: trace.Accuracy, Severity: trace.SeverityError,
						Message: err.Error(), Evidence: raw, Tags: []string{"invalid-value"}, Facts: []trace.Fact{fact},
					})
				}
			}
		})
		return out
	}}
}

func stripFence(s string) string {
	s = strings.TrimSpace(s)
	if strings.HasPrefix(s, "```") {
		s = strings.TrimPrefix(s, "```json")
		s = strings.TrimPrefix(s, "```")
		s = strings.TrimSuffix(strings.TrimSpace(s), "```")
	}
	return strings.TrimSpace(s)
}
