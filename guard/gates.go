package guard

import (
	"encoding/json"
	"fmt"
	"regexp"
	"slices"
	"strings"

	"github.com/agentguard/agentguard/guard/internal/detect"
	"github.com/agentguard/agentguard/guard/internal/rulekit"
	"github.com/agentguard/agentguard/guard/rules"
	"github.com/agentguard/agentguard/trace"
	"github.com/agentguard/agentguard/trace/lexicon"
	"github.com/agentguard/agentguard/trace/textnorm"
)

// ToolPolicies maps tool names to their policies. A missing tool has the
// zero ToolPolicy.
type ToolPolicies map[string]ToolPolicy

// isRetrieval reports whether step p returned documents: a retrieval step,
// or a tool step of a retrieval tool or that recorded document ids.
func (tp ToolPolicies) isRetrieval(p *trace.Step) bool {
	return p.Kind == trace.KindRetrieval || (p.Kind == trace.KindTool && !p.Blocked && p.Error == "" && (tp[p.Name].Retrieval || len(p.DocIDs) > 0))
}

// docs returns a retrieval step's document ids and scores, read from the
// step's fields or, for recorded traces without them, from its result.
func (tp ToolPolicies) docs(p *trace.Step) ([]string, []float64) {
	if len(p.DocIDs) > 0 || len(p.Scores) > 0 {
		return p.DocIDs, p.Scores
	}
	return detect.Documents(p.Result)
}

// IntentGate stops a flow whose intent was misread. A step that reports an
// intent (Step.Intent, set by Config.Gates.Classifier) outside labels (when labels
// is not empty) or with a confidence below min is judged Clarify, with a
// question offering the top candidate intents in the language of the
// user's turn; so is any tool call proposed after such a step in the same
// turn. min <= 0 means 0.6. This rule asks in the default lexicon's words;
// the guard's own instance uses Config.Lexicon.
func IntentGate(labels []string, min float64) Rule {
	return intentGate(detect.Default(), labels, min)
}

func intentGate(w *lexicon.Compiled, labels []string, min float64) Rule {
	if min <= 0 {
		min = 0.6
	}
	return &intentRule{w: w, labels: labels, min: min}
}

type intentRule struct {
	w      *lexicon.Compiled
	labels []string
	min    float64
}

// hasIntent is the step an intent gate looks for in a turn.
func hasIntent(p *trace.Step) bool { return p.Intent != "" }

func (*intentRule) Name() string { return rules.Intent }

func (r *intentRule) Check(t *trace.Trace, s *trace.Step) []trace.Finding {
	if s.Intent == "" && s.Kind != trace.KindTool {
		return nil
	}
	return r.checkHot(t, s, hotOf(t))
}

func (r *intentRule) checkHot(t *trace.Trace, s *trace.Step, h *hotState) []trace.Finding {
	src := s
	if s.Intent == "" {
		if s.Kind != trace.KindTool {
			return nil
		}
		if src = h.intent.lastOf(t, s.Turn, hasIntent); src == nil {
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
	}}
}

// bad says why the intent step s reports is not to be acted on, or "".
func (r *intentRule) bad(s *trace.Step) string {
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

// EmptyResultGate keeps an empty tool result from becoming an answer or an
// action. When a read tool in this turn returned an empty result
// (ToolPolicy.IsEmpty, default IsEmptyResult) and no later call of that tool
// returned something, a state-changing call, or a final answer that is not a
// question to the user, is judged verdict (Clarify when
// empty: ask the user to confirm the key; Retry: make the agent look again;
// Handoff: pass to a human). An answer that asserts absence ("no records",
// "没有符合条件的记录") is always flagged; so is any other answer, since it
// can only rest on data the agent did not get. This rule reads the default
// lexicon; the guard's own instance uses Config.Lexicon.
func EmptyResultGate(tools ToolPolicies, verdict trace.Verdict) Rule {
	return emptyResultGate(detect.Default(), tools, verdict)
}

func emptyResultGate(w *lexicon.Compiled, tools ToolPolicies, verdict trace.Verdict) Rule {
	if verdict == "" {
		verdict = trace.Clarify
	}
	// step advances the scan of one turn over step p: the last empty
	// result of a read, unless the same tool was asked again and found
	// something.
	step := func(empty, p *trace.Step) *trace.Step {
		if p.Kind != trace.KindTool || p.Blocked || p.Error != "" || stateChangingIn(w, p.Name, tools[p.Name]) {
			return empty // a write's empty reply is an acknowledgement
		}
		var isEmpty bool
		if f := tools[p.Name].IsEmpty; f != nil {
			isEmpty = f(p.Result)
		} else {
			isEmpty = detect.IsEmptyResult(w, p.Result)
		}
		switch {
		case isEmpty:
			return p
		case empty != nil && p.Name == empty.Name:
			return nil // looked again and found something
		}
		return empty
	}
	key := newTurnScanKey() // this rule's own scan in each trace's memo
	return NewRule(rules.EmptyResult, func(t *trace.Trace, s *trace.Step) []trace.Finding {
		write := s.Kind == trace.KindTool && stateChangingIn(w, s.Name, tools[s.Name])
		answer := s.Kind == trace.KindModel && len(s.Calls) == 0 && strings.TrimSpace(s.Result) != "" && !s.Blocked && s.Intent == ""
		if !write && !answer {
			return nil
		}
		// The scan of the latest turn is kept in the trace's memo and
		// advanced over new steps only, so judging a step costs the same
		// at step 10 and step 10,000 of one turn.
		empty := t.Memo(key, newTurnScan).(*turnScan).foldOf(t, s.Turn, step)
		if empty == nil || (answer && rulekit.AsksUser(s.Result)) {
			return nil
		}
		msg := fmt.Sprintf("tool %q returned an empty result and the answer goes on without it", empty.Name)
		tag := "empty-result"
		switch {
		case write:
			msg = fmt.Sprintf("tool %q returned an empty result and the agent goes on to %q", empty.Name, s.Name)
			tag = "write-after-empty"
		case detect.AssertsAbsence(w, s.Result):
			msg = fmt.Sprintf("tool %q returned an empty result and the answer asserts absence", empty.Name)
			tag = "asserted-absence"
		}
		return []trace.Finding{{
			Rule: rules.EmptyResult, Step: s.Index, Verdict: verdict, Dimension: trace.Coherence, Severity: trace.SeverityError,
			Message: msg, Question: confirmQuestion(w, empty, t, s.Turn), Evidence: empty.Args, Tags: []string{"cascade", tag},
		}}
	})
}

// confirmQuestion asks the user, in the language of their turn, to check
// the arguments of a lookup that found nothing.
func confirmQuestion(w *lexicon.Compiled, empty *trace.Step, t *trace.Trace, turn int) string {
	lang := w.LangOf(rulekit.UserTurn(t, turn))
	r := w.Replies(lang)
	return fmt.Sprintf(r.EmptyResult, rulekit.CompactArgs(w, r, lang, empty.Args))
}

// SimilarityGate refuses to generate an answer from weak evidence: when the
// latest retrieval of this turn returned no document, or its best score is
// below the threshold for the trace's route (byRoute, else min), the model
// step is judged Refuse — online before the model is called, so the user
// gets the refusal template instead of a fluent guess. min <= 0 checks only
// for retrievals that returned nothing.
func SimilarityGate(tools ToolPolicies, min float64, byRoute map[string]float64) Rule {
	key := newTurnScanKey()
	return NewRule(rules.Similarity, func(t *trace.Trace, s *trace.Step) []trace.Finding {
		if s.Kind != trace.KindModel || s.Intent != "" {
			return nil
		}
		last := lastInTurn(t, key, s.Turn, tools.isRetrieval)
		if last == nil {
			return nil
		}
		threshold := min
		if r, ok := byRoute[t.Route]; ok {
			threshold = r
		}
		ids, scores := tools.docs(last)
		best := -1.0
		for _, sc := range scores {
			best = max(best, sc)
		}
		var msg string
		switch {
		case len(ids) == 0:
			msg = fmt.Sprintf("retrieval %q returned no document", last.Name)
		case threshold > 0 && best < threshold:
			msg = fmt.Sprintf("best retrieval score %.3f is below %.3f", best, threshold)
		default:
			return nil
		}
		return []trace.Finding{{
			Rule: rules.Similarity, Step: s.Index, Verdict: trace.Refuse, Dimension: trace.Accuracy, Severity: trace.SeverityWarning,
			Message: msg, Evidence: last.Args, Tags: []string{"weak-evidence"},
		}}
	})
}

// Citations returns the sources an answer cites: Step.Citations when set,
// otherwise CitedIDs of its text.
func Citations(s *trace.Step) []string {
	if len(s.Citations) > 0 {
		return s.Citations
	}
	return detect.CitedIDs(s.Result)
}

// Grounding checks an answer against the documents retrieved in this trace:
// every citation must be the id of a retrieved document, and every clause,
// section or rule number the answer quotes ("clause 7.3", "第5条") must
// appear in a retrieved document. A number the user brought up may be
// repeated only to deny it ("I cannot find clause 12"): agreeing with a
// leading question about a clause that does not exist is fabrication too. Either failure
// is a suspected fabrication, judged Retry: the model is asked once more,
// then the answer is refused. A denial is what the lexicon's Denial
// patterns match; this rule reads the default lexicon, the guard's own
// instance Config.Lexicon.
func Grounding(tools ToolPolicies) Rule {
	return grounding(detect.Default(), tools)
}

func grounding(w *lexicon.Compiled, tools ToolPolicies) Rule {
	return NewRule(rules.Grounding, func(t *trace.Trace, s *trace.Step) []trace.Finding {
		if s.Kind != trace.KindModel || s.Result == "" || s.Blocked {
			return nil
		}
		cites := Citations(s)
		refs := detect.ClauseRefs(w, s.Result)
		if len(cites) == 0 && len(refs) == 0 {
			return nil
		}
		var retrieved []string
		var evidence strings.Builder
		for _, p := range t.Steps {
			if tools.isRetrieval(p) {
				ids, _ := tools.docs(p)
				retrieved = append(retrieved, ids...)
				evidence.WriteString(plainText(p.Result))
				evidence.WriteByte('\n')
			}
		}
		var said strings.Builder // what the user said: evidence only for a denial
		for _, u := range t.UserTurns {
			said.WriteString(u)
			said.WriteByte('\n')
		}
		var out []trace.Finding
		for _, c := range cites {
			if !slices.Contains(retrieved, c) {
				out = append(out, trace.Finding{
					Rule: rules.Grounding, Step: s.Index, Verdict: trace.Retry, Dimension: trace.Accuracy, Severity: trace.SeverityCritical,
					Message:  fmt.Sprintf("cites %q, which no retrieval in this trace returned", c),
					Evidence: c, Tags: []string{"fabrication", "bad-citation"},
				})
			}
		}
		known := clauseNumbers(w, evidence.String())
		denies := w.MayMatch(w.Denial, s.Result) && w.Denial.MatchString(s.Result)
		for _, ref := range refs {
			if num := ref.Number; !known[num] && !(denies && clauseNumbers(w, said.String())[num]) {
				out = append(out, trace.Finding{
					Rule: rules.Grounding, Step: s.Index, Verdict: trace.Retry, Dimension: trace.Accuracy, Severity: trace.SeverityCritical,
					Message:  fmt.Sprintf("quotes %q, which appears in no retrieved document", ref.Text),
					Evidence: ref.Text, Tags: []string{"fabrication", "invented-clause"},
				})
			}
		}
		return out
	})
}

// numberedItem matches the numbers of numbered paragraphs and list items
// ("3.1 Returns …", "5) …", "5、…") at the start of a line.
var numberedItem = regexp.MustCompile(`(?m)^\s*(\d+(?:\.\d+)*)[.)、:\s]`)

// clauseNumbers returns the clause numbers text names: in a clause
// reference ("clause 3.1", "第5条") or as the number of a paragraph. A
// number that only appears elsewhere ("within 5 business days") is no
// clause.
func clauseNumbers(w *lexicon.Compiled, text string) map[string]bool {
	text = textnorm.Clauses(text)
	out := map[string]bool{}
	for _, ref := range detect.ClauseRefs(w, text) {
		out[ref.Number] = true
	}
	for _, m := range numberedItem.FindAllStringSubmatch(text, -1) {
		out[strings.TrimSuffix(m[1], ".")] = true
	}
	return out
}

// plainText returns the text a result holds: the string values of a JSON
// result, one a line, so that a document's "\nClause 7." reads as a line
// that starts with a clause; any other result as it is.
func plainText(result string) string {
	var v any
	if json.Unmarshal([]byte(result), &v) != nil {
		return result
	}
	var b strings.Builder
	rulekit.Walk("", v, func(_ string, leaf any) {
		if s, ok := leaf.(string); ok {
			b.WriteString(s)
			b.WriteByte('\n')
		}
	})
	return b.String()
}
