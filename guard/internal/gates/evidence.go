package gates

import (
	"encoding/json"
	"fmt"
	"regexp"
	"slices"
	"strconv"
	"strings"

	"github.com/agentguard/agentguard/guard/internal/detect"
	"github.com/agentguard/agentguard/guard/internal/rulekit"
	"github.com/agentguard/agentguard/guard/rules"
	"github.com/agentguard/agentguard/trace"
	"github.com/agentguard/agentguard/trace/lexicon"
	"github.com/agentguard/agentguard/trace/textnorm"
)

// NewSimilarity returns the rule that refuses to generate an answer from weak evidence: when the
// latest retrieval of this turn returned no document, or its best score is
// below the threshold for the trace's route (byRoute, else min), the model
// step is judged Refuse — online before the model is called, so the user
// gets the refusal template instead of a fluent guess. min <= 0 checks only
// for retrievals that returned nothing.
func NewSimilarity(tools *rulekit.Tools, min float64, byRoute map[string]float64) rulekit.ScopedFunc {
	key := rulekit.NewScanKey()
	isRetrieval := func(p *trace.Step) bool { return IsRetrieval(tools, p) }
	return rulekit.Answers(rules.Similarity, func(t *trace.Trace, s *trace.Step) []trace.Finding {
		if s.Kind != trace.KindModel || s.Intent != "" {
			return nil
		}
		last := rulekit.LastInTurn(t, key, s.Turn, isRetrieval)
		if last == nil {
			return nil
		}
		threshold := min
		if r, ok := byRoute[t.Route]; ok {
			threshold = r
		}
		ids, scores := Docs(last)
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
			Facts: []trace.Fact{
				rulekit.ResultFact(last, "", last.Result, msg),
				rulekit.PolicyFact("gates.min_similarity", strconv.FormatFloat(threshold, 'g', -1, 64)),
			},
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

// NewGrounding returns the rule that checks an answer against the documents retrieved in this trace:
// every citation must be the id of a retrieved document, and every clause,
// section or rule number the answer quotes ("clause 7.3", "第5条") must
// appear in a retrieved document. A number the user brought up may be
// repeated only to deny it ("I cannot find clause 12"): agreeing with a
// leading question about a clause that does not exist is fabrication too. Either failure
// is a suspected fabrication, judged Retry: the model is asked once more,
// then the answer is refused. A denial is what the lexicon's Denial
// patterns match.
func NewGrounding(tools *rulekit.Tools) rulekit.ScopedFunc {
	w := tools.Words()
	return rulekit.Answers(rules.Grounding, func(t *trace.Trace, s *trace.Step) []trace.Finding {
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
			if IsRetrieval(tools, p) {
				ids, _ := Docs(p)
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
					Facts: []trace.Fact{
						rulekit.AnswerFact(s, c, "cited"),
						rulekit.AbsentFact(c, strings.Join(retrieved, ", "), "among the documents retrieved in this trace"),
					},
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
					Facts: []trace.Fact{
						rulekit.AnswerFact(s, ref.Text, "quoted"),
						rulekit.AbsentFact("number "+num, strings.Join(retrieved, ", "), "in the documents retrieved in this trace"),
					},
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

// IsRetrieval reports whether step p returned documents: a retrieval step,
// or a tool step of a retrieval tool or that recorded document ids.
func IsRetrieval(tools *rulekit.Tools, p *trace.Step) bool {
	return p.Kind == trace.KindRetrieval || (p.Kind == trace.KindTool && !p.Blocked && p.Error == "" && (len(p.DocIDs) > 0 || tools.Of(p.Name).Retrieval))
}

// Docs returns a retrieval step's document ids and scores, read from the
// step's fields or, for recorded traces without them, from its result.
func Docs(p *trace.Step) ([]string, []float64) {
	if len(p.DocIDs) > 0 || len(p.Scores) > 0 {
		return p.DocIDs, p.Scores
	}
	return detect.Documents(p.Result)
}
