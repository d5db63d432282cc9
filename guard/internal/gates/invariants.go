package gates

import (
	"encoding/json"
	"fmt"
	"regexp"
	"slices"
	"strings"
	"time"

	"github.com/agentguard/agentguard/guard/internal/rulekit"
	"github.com/agentguard/agentguard/guard/rules"
	"github.com/agentguard/agentguard/trace"
)

// Invariant checks one argument value of a tool call, or one field of a
// structured (JSON) answer when tool is "". It returns a non-nil error when
// the value is not acceptable.
type Invariant func(tool, path string, value any) error

var amountKey = regexp.MustCompile(`(?i)(amount|price|total|refund|fee|cost|balance|quantity|qty|count|sum|payment|金额|价格|数量|费用)`)

// NonNegativeAmounts rejects negative numbers in fields named like an amount,
// price, fee, total, quantity or balance.
func NonNegativeAmounts(_, path string, value any) error {
	f, ok := value.(float64)
	if ok && f < 0 && amountKey.MatchString(rulekit.LastKey(path)) {
		return fmt.Errorf("%s is negative (%v)", path, f)
	}
	return nil
}

// ValidDates rejects strings in date-named fields (date, day, deadline,
// *_at, *time, 日期) that parse as none of the common date layouts.
func ValidDates(_, path string, value any) error {
	s, ok := value.(string)
	if !ok || s == "" || !rulekit.DateKey.MatchString(rulekit.LastKey(path)) {
		return nil
	}
	for _, l := range rulekit.DateLayouts {
		if _, err := time.Parse(l, s); err == nil {
			return nil
		}
	}
	return fmt.Errorf("%s is not a valid date (%q)", path, s)
}

// NewInvariants returns the rule that checks tool arguments, and answers
// on the routes listed in jsonRoutes, against invariants, after
// NonNegativeAmounts and ValidDates when defaults is set. On jsonRoutes an
// answer must also parse as JSON. Violations are judged Retry: the agent
// is told what to fix.
func NewInvariants(jsonRoutes []string, invariants []Invariant, defaults bool) rulekit.Func {
	only := defaults && len(invariants) == 0 // keys tell whether a call needs reading
	if defaults {
		invariants = append([]Invariant{NonNegativeAmounts, ValidDates}, invariants...)
	}
	return rulekit.Func{N: rules.Invariant, C: func(t *trace.Trace, s *trace.Step) []trace.Finding {
		var raw, tool string
		switch {
		case s.Kind == trace.KindTool:
			// Arguments with no key the default invariants look at skip
			// decoding.
			if only && !rulekit.AnyKey(s.Args, defaultInvariantKey) {
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
					out = append(out, trace.Finding{
						Rule: rules.Invariant, Step: s.Index, Verdict: trace.Retry, Dimension: trace.Accuracy, Severity: trace.SeverityError,
						Message: err.Error(), Evidence: raw, Tags: []string{"invalid-value"},
					})
				}
			}
		})
		return out
	}}
}

// The words in keys that the default invariants check: amountKey and
// dateKey without the regexp engine, indexed by their first letter.
var (
	invariantWords = func() (byFirst [26][]string) {
		for _, w := range []string{"amount", "price", "total", "refund", "fee", "cost", "balance", "quantity", "qty", "count", "sum", "payment", "date", "day", "deadline", "birthday"} {
			byFirst[w[0]-'a'] = append(byFirst[w[0]-'a'], w)
		}
		return byFirst
	}()
	invariantWordsZH = []string{"金额", "价格", "数量", "费用", "日期"}
)

// defaultInvariantKey reports whether amountKey or dateKey matches key,
// without allocating.
func defaultInvariantKey(key string) bool {
	nonASCII := false
	for i := 0; i < len(key); i++ {
		c := key[i] | 0x20 // lower case, for letters
		if key[i] >= 0x80 {
			nonASCII = true
		}
		if c < 'a' || c > 'z' {
			continue
		}
		for _, w := range invariantWords[c-'a'] {
			if hasPrefixFold(key[i:], w) {
				return true
			}
		}
	}
	if nonASCII {
		for _, w := range invariantWordsZH {
			if strings.Contains(key, w) {
				return true
			}
		}
	}
	return len(key) >= 3 && hasPrefixFold(key[len(key)-3:], "_at") || len(key) >= 4 && hasPrefixFold(key[len(key)-4:], "time")
}

// hasPrefixFold reports whether s starts with the lower-case ASCII word w,
// ignoring ASCII case.
func hasPrefixFold(s, w string) bool {
	if len(s) < len(w) {
		return false
	}
	for j := 0; j < len(w); j++ {
		if c := s[j]; c != w[j] && c|0x20 != w[j] {
			return false
		}
	}
	return true
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
