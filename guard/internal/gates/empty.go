package gates

import (
	"fmt"
	"strings"

	"github.com/agentguard/agentguard/guard/internal/detect"
	"github.com/agentguard/agentguard/guard/internal/rulekit"
	"github.com/agentguard/agentguard/guard/rules"
	"github.com/agentguard/agentguard/trace"
	"github.com/agentguard/agentguard/trace/lexicon"
)

// NewEmptyResult returns the rule that keeps an empty tool result from becoming an answer or an
// action. When a read tool in this turn returned an empty result
// (ToolPolicy.IsEmpty, default IsEmptyResult) and no later call of that tool
// returned something, a state-changing call, or a final answer that is not a
// question to the user, is judged verdict (Clarify when
// empty: ask the user to confirm the key; Retry: make the agent look again;
// Handoff: pass to a human). An answer that asserts absence ("no records",
// "没有符合条件的记录") is always flagged; so is any other answer, since it
// can only rest on data the agent did not get. It judges the calls of
// tools that write, and answers.
func NewEmptyResult(tools *rulekit.Tools, verdict trace.Verdict) *EmptyResult {
	if verdict == "" {
		verdict = trace.Clarify
	}
	return &EmptyResult{tools: tools, verdict: verdict, key: rulekit.NewScanKey()}
}

// EmptyResult is the empty-result rule.
type EmptyResult struct {
	tools   *rulekit.Tools
	verdict trace.Verdict
	key     rulekit.ScanKey // the rule's own scan in each trace's memo
}

// Name returns rules.EmptyResult.
func (r *EmptyResult) Name() string { return rules.EmptyResult }

// ToolOnly is false: the rule judges answers too.
func (r *EmptyResult) ToolOnly() bool { return false }

// JudgesTool reports whether the tool writes: only a write is judged.
func (r *EmptyResult) JudgesTool(_ string, t rulekit.Tool) bool { return t.Writes }

// step advances the scan of one turn over step p: the last empty result of
// a read, unless the same tool was asked again and found something.
func (r *EmptyResult) step(empty, p *trace.Step) *trace.Step {
	if p.Kind != trace.KindTool || p.Blocked || p.Error != "" {
		return empty
	}
	tool := r.tools.Of(p.Name)
	if tool.Writes {
		return empty // a write's empty reply is an acknowledgement
	}
	var isEmpty bool
	if tool.IsEmpty != nil {
		isEmpty = tool.IsEmpty(p.Result)
	} else {
		isEmpty = detect.IsEmptyResult(r.tools.Words(), p.Result)
	}
	switch {
	case isEmpty:
		return p
	case empty != nil && p.Name == empty.Name:
		return nil // looked again and found something
	}
	return empty
}

// Check judges a write or an answer.
func (r *EmptyResult) Check(t *trace.Trace, s *trace.Step) []trace.Finding {
	w := r.tools.Words()
	write := s.Kind == trace.KindTool && r.tools.Writes(s.Name)
	answer := s.Kind == trace.KindModel && len(s.Calls) == 0 && strings.TrimSpace(s.Result) != "" && !s.Blocked && s.Intent == ""
	if !write && !answer {
		return nil
	}
	// The scan of the latest turn is kept in the trace's memo and advanced
	// over new steps only, so judging a step costs the same at step 10 and
	// step 10,000 of one turn.
	empty := rulekit.ScanOf(t, r.key).FoldOf(t, s.Turn, r.step)
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
		Rule: rules.EmptyResult, Step: s.Index, Verdict: r.verdict, Dimension: trace.Coherence, Severity: trace.SeverityError,
		Message: msg, Question: confirmQuestion(w, empty, t, s.Turn), Evidence: empty.Args, Tags: []string{"cascade", tag},
	}}
}

// confirmQuestion asks the user, in the language of their turn, to check
// the arguments of a lookup that found nothing.
func confirmQuestion(w *lexicon.Compiled, empty *trace.Step, t *trace.Trace, turn int) string {
	lang := w.LangOf(rulekit.UserTurn(t, turn))
	r := w.Replies(lang)
	return fmt.Sprintf(r.EmptyResult, rulekit.CompactArgs(w, r, lang, empty.Args))
}
