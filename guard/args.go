package guard

import (
	"encoding/json"
	"fmt"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/agentguard/agentguard/guard/internal/detect"
	"github.com/agentguard/agentguard/trace"
	"github.com/agentguard/agentguard/trace/lexicon"
)

// Names of the argument rules, as they appear in findings and in the ledger.
const (
	RuleInvariant    = "value-invariant"
	RuleProvenance   = "argument-provenance"
	RuleInjection    = "injected-argument"
	RuleRelay        = "untrusted-relay"
	RuleConfirmation = "confirmation"
)

func argsMap(args string) (map[string]any, bool) {
	var m map[string]any
	if json.Unmarshal([]byte(args), &m) != nil {
		return nil, false
	}
	return m, true
}

func sortedKeys[V any](m map[string]V) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	return keys
}

// walk calls fn for every leaf of a decoded JSON value, with its dotted path.
func walk(path string, v any, fn func(path string, v any)) {
	switch x := v.(type) {
	case map[string]any:
		for _, k := range sortedKeys(x) {
			p := k
			if path != "" {
				p = path + "." + k
			}
			walk(p, x[k], fn)
		}
	case []any:
		for i, e := range x {
			walk(path+"["+strconv.Itoa(i)+"]", e, fn)
		}
	default:
		fn(path, v)
	}
}

// lastKey is the last name of a dotted path, without array indexes.
func lastKey(path string) string {
	if i := strings.LastIndexByte(path, '.'); i >= 0 {
		path = path[i+1:]
	}
	if i := strings.IndexByte(path, '['); i >= 0 {
		path = path[:i]
	}
	return strings.ToLower(path)
}

// Invariant checks one argument value of a tool call, or one field of a
// structured (JSON) answer when tool is "". It returns a non-nil error when
// the value is not acceptable.
type Invariant func(tool, path string, value any) error

var amountKey = regexp.MustCompile(`(?i)(amount|price|total|refund|fee|cost|balance|quantity|qty|count|sum|payment|金额|价格|数量|费用)`)

// NonNegativeAmounts rejects negative numbers in fields named like an amount,
// price, fee, total, quantity or balance.
func NonNegativeAmounts(_, path string, value any) error {
	f, ok := value.(float64)
	if ok && f < 0 && amountKey.MatchString(lastKey(path)) {
		return fmt.Errorf("%s is negative (%v)", path, f)
	}
	return nil
}

var (
	dateKey     = regexp.MustCompile(`(?i)(date|day|deadline|birthday|_at$|time$|日期)`)
	dateLayouts = []string{time.RFC3339, "2006-01-02", "2006-01-02 15:04", "2006-01-02 15:04:05", "2006-01-02T15:04", "2006-01-02T15:04:05", "2006/01/02", "2006/1/2", "2006年1月2日", "01/02/2006", "Jan 2, 2006", "2 Jan 2006", "January 2, 2006", "15:04", "3pm", "3:04pm", "15:04:05"}
)

// ValidDates rejects strings in date-named fields (date, day, deadline,
// *_at, *time, 日期) that parse as none of the common date layouts.
func ValidDates(_, path string, value any) error {
	s, ok := value.(string)
	if !ok || s == "" || !dateKey.MatchString(lastKey(path)) {
		return nil
	}
	for _, l := range dateLayouts {
		if _, err := time.Parse(l, s); err == nil {
			return nil
		}
	}
	return fmt.Errorf("%s is not a valid date (%q)", path, s)
}

// Invariants checks tool arguments, and answers on the routes listed in
// jsonRoutes, against invariants (default: NonNegativeAmounts and
// ValidDates). On jsonRoutes an answer must also parse as JSON. Violations
// are judged Retry: the agent is told what to fix.
func Invariants(jsonRoutes []string, invariants ...Invariant) Rule {
	defaults := len(invariants) == 0
	if defaults {
		invariants = []Invariant{NonNegativeAmounts, ValidDates}
	}
	return NewRule(RuleInvariant, func(t *trace.Trace, s *trace.Step) []trace.Finding {
		var raw, tool string
		switch {
		case s.Kind == trace.KindTool:
			// Arguments with no key the default invariants look at skip
			// decoding.
			if defaults && !anyKey(s.Args, defaultInvariantKey) {
				return nil
			}
			raw, tool = s.Args, s.Name
		case s.Kind == trace.KindModel && s.Result != "" && len(s.Calls) == 0 && s.Intent == "" && !s.Blocked && slices.Contains(jsonRoutes, t.Route):
			raw = stripFence(s.Result)
			var v any
			if err := json.Unmarshal([]byte(raw), &v); err != nil {
				return []trace.Finding{{
					Rule: RuleInvariant, Step: s.Index, Verdict: trace.Retry, Dimension: trace.Accuracy, Severity: trace.SeverityError,
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
		walk("", v, func(path string, leaf any) {
			for _, inv := range invariants {
				if err := inv(tool, path, leaf); err != nil {
					out = append(out, trace.Finding{
						Rule: RuleInvariant, Step: s.Index, Verdict: trace.Retry, Dimension: trace.Accuracy, Severity: trace.SeverityError,
						Message: err.Error(), Evidence: raw, Tags: []string{"invalid-value"},
					})
				}
			}
		})
		return out
	})
}

// anyKey reports whether some object key in the JSON text s, at any depth,
// satisfies match, scanning without decoding or allocating. A key with
// escapes counts as a match, so that the decoder judges it; text that is
// not JSON has no keys.
func anyKey(s string, match func(key string) bool) bool {
	for i := 0; i < len(s); i++ {
		if s[i] != '"' {
			continue
		}
		end, _, ok := scanString(s, i)
		if !ok {
			return false
		}
		if j := skipWS(s, end); j < len(s) && s[j] == ':' {
			key := s[i+1 : end-1]
			if strings.IndexByte(key, '\\') >= 0 || match(key) {
				return true
			}
		}
		i = end - 1
	}
	return false
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

// Confirmation requires the user's explicit go-ahead before a state-changing
// call of a tool whose policy sets Confirm (or of every state-changing tool,
// when all is true): the user's latest turn must be an affirmation ("yes",
// "go ahead", "确认", "好的"; the lexicon's Affirmation patterns) that
// answers something the agent said after the user's previous turn.
// Otherwise the verdict is Clarify, asking the user, in the language of
// their turn, to confirm that exact call. This rule reads the default
// lexicon; the guard's own instance uses Config.Lexicon.
func Confirmation(tools ToolPolicies, all bool) Rule {
	return confirmation(detect.Default(), tools, all)
}

func confirmation(w *lexicon.Compiled, tools ToolPolicies, all bool) Rule {
	return NewRule(RuleConfirmation, func(t *trace.Trace, s *trace.Step) []trace.Finding {
		if s.Kind != trace.KindTool {
			return nil
		}
		p := tools[s.Name]
		if !(p.Confirm || all) || !stateChangingIn(w, s.Name, p) {
			return nil
		}
		turn := userTurn(t, s.Turn)
		if s.Turn >= 1 && w.Affirmation.MatchString(turn) && agentSpokeIn(t, s.Turn-1) {
			return nil
		}
		lang := w.LangOf(turn)
		r := w.Replies(lang)
		tool, _ := displayName(w, r, lang, s.Name)
		q := fmt.Sprintf(r.Confirm, tool, compactArgs(w, r, lang, s.Args))
		return []trace.Finding{{
			Rule: RuleConfirmation, Step: s.Index, Verdict: trace.Clarify, Dimension: trace.Accuracy, Severity: trace.SeverityWarning,
			Message: fmt.Sprintf("%q changes state and the user has not confirmed it", s.Name), Question: q,
			Evidence: s.Args, Tags: []string{"unconfirmed-write"},
		}}
	})
}

// agentSpokeIn reports whether the agent said something to the user during
// turn: a model step's text, or a question the guard asked for it.
func agentSpokeIn(t *trace.Trace, turn int) bool {
	// Steps are in turn order: read back from the last, over later turns,
	// through turn, no further.
	for i := len(t.Steps) - 1; i >= 0 && t.Steps[i].Turn >= turn; i-- {
		p := t.Steps[i]
		if p.Turn != turn {
			continue
		}
		if (p.Kind == trace.KindModel && p.Result != "" && p.Intent == "") || (p.Kind == trace.KindGate && p.Finding != nil && p.Finding.Verdict == trace.Clarify) {
			return true
		}
	}
	return false
}
