package gates

import (
	"fmt"
	"slices"
	"strings"

	"github.com/agentguard/agentguard/guard/internal/rulekit"
	"github.com/agentguard/agentguard/guard/rules"
	"github.com/agentguard/agentguard/trace"
	"github.com/agentguard/agentguard/trace/lexicon"
)

// NewIntent returns the rule that stops a flow whose intent was misread. A step that reports an
// intent (Step.Intent, set by Config.Gates.Classifier) outside labels (when labels
// is not empty) or with a confidence below min is judged Clarify, with a
// question offering the top candidate intents in the language of the
// user's turn (w's replies); so is any tool call proposed after such a
// step in the same turn. min <= 0 means 0.6.
func NewIntent(w *lexicon.Compiled, labels []string, min float64) *Intent {
	if min <= 0 {
		min = 0.6
	}
	return &Intent{w: w, labels: labels, min: min}
}

// Intent is the intent-confidence rule.
type Intent struct {
	w      *lexicon.Compiled
	labels []string
	min    float64
}

// Name returns rules.Intent.
func (*Intent) Name() string { return rules.Intent }

// Index brings t's hot state, which scans for intents, up to date
// (rulekit.Indexer).
func (r *Intent) Index(t *trace.Trace) { rulekit.HotOf(t) }

// Check judges a step.
func (r *Intent) Check(t *trace.Trace, s *trace.Step) []trace.Finding {
	if s.Intent == "" && s.Kind != trace.KindTool {
		return nil
	}
	return r.CheckHot(t, s, rulekit.HotOf(t))
}

// CheckHot is Check with t's hot state (rulekit.HotRule).
func (r *Intent) CheckHot(t *trace.Trace, s *trace.Step, h *rulekit.Hot) []trace.Finding {
	src := s
	if s.Intent == "" {
		if s.Kind != trace.KindTool {
			return nil
		}
		if src = h.Intent.LastOf(t, s.Turn, rulekit.HasIntent); src == nil {
			return nil
		}
	}
	why := r.bad(src)
	if why == "" {
		return nil
	}
	user := rulekit.UserTurn(t, s.Turn)
	candidates := append([]string{src.Intent}, src.Alternatives...)
	if len(r.labels) > 0 {
		candidates = slices.DeleteFunc(candidates, func(c string) bool { return !slices.Contains(r.labels, c) })
	}
	return []trace.Finding{{
		Rule: rules.Intent, Step: s.Index, Verdict: trace.Clarify, Dimension: trace.Coherence, Severity: trace.SeverityWarning,
		Message: why, Question: clarifyingQuestion(r.w, candidates, user), Evidence: src.Intent, Tags: []string{"low-confidence-intent"},
		Facts: []trace.Fact{
			{Kind: trace.FactResult, Step: src.Index, Where: "intent", Text: src.Intent, Says: why},
			rulekit.UserFact(t, s.Turn, "the turn the intent was read from"),
		},
	}}
}

// bad says why the intent step s reports is not to be acted on, or "".
func (r *Intent) bad(s *trace.Step) string {
	switch {
	case s.Intent == "":
		return ""
	case len(r.labels) > 0 && !slices.Contains(r.labels, s.Intent):
		return fmt.Sprintf("intent %q is not one this agent serves", s.Intent)
	case s.Confidence < r.min:
		return fmt.Sprintf("intent %q has confidence %.2f, below %.2f", s.Intent, s.Confidence, r.min)
	}
	return ""
}

// clarifyingQuestion offers up to three candidate intents, in the language
// of the user's turn: each by the name that language gives it, and one it
// cannot name is left out (see displayName); with none left, it asks what
// the user needs.
func clarifyingQuestion(w *lexicon.Compiled, candidates []string, user string) string {
	lang := w.LangOf(user)
	r := w.Replies(lang)
	var opts []string
	for _, c := range candidates {
		name, ok := rulekit.DisplayName(w, r, lang, c)
		if ok && name != "" && !slices.Contains(opts, name) && len(opts) < 3 {
			opts = append(opts, name)
		}
	}
	if len(opts) == 0 {
		return r.IntentUnclear
	}
	list := opts[0]
	if n := len(opts); n > 1 {
		list = strings.Join(opts[:n-1], r.ListSep) + r.ListLastSep + opts[n-1]
	}
	return fmt.Sprintf(r.IntentQuestion, list)
}
