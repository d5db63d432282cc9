package gates

import (
	"fmt"
	"strings"
	"unicode"
	"unicode/utf8"

	"github.com/agentguard/agentguard/guard/internal/detect"
	"github.com/agentguard/agentguard/guard/internal/origins"
	"github.com/agentguard/agentguard/guard/internal/rulekit"
	"github.com/agentguard/agentguard/guard/rules"
	"github.com/agentguard/agentguard/trace"
	"github.com/agentguard/agentguard/trace/lexicon"
)

// NewEmptyResult returns the rule that keeps an empty tool result from
// being taken as a fact. A lookup that found nothing ([], {}, null, or one
// of Config.Lexicon's EmptyResults such as "no results"; ToolPolicy.IsEmpty
// decides for a tool that sets it) may mean the key was wrong — a misread
// order number, a file name the agent guessed — so what rests on the
// absence is judged verdict (Clarify by default: ask the user to confirm
// the key; Retry: make the agent look again; Handoff: pass to a human):
//
//   - an answer that asserts absence ("no records", "没有符合条件的记录")
//     of something the lookup was keyed by, which no other tool result
//     holds;
//   - an answer that states things about such a key, as if the lookup had
//     found it;
//   - a write that acts on such a key (cancels, sends to, updates it);
//     a write that creates it (Config.Lexicon's CreateVerbs) does not.
//
// A key another result holds names something that exists (the channel is
// listed, it just has no messages), so its empty result is a fact, and a
// step that goes on without using the key does not rest on the absence:
// neither is judged; nor is the result of a tool whose policy sets EmptyOK
// (a "think" tool that returns nothing). Asking the user is never judged.
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
	unseen := r.unseenKeys(t, empty)
	if len(unseen) == 0 {
		return nil // everything the lookup was keyed by exists: its empty result is a fact
	}
	var (
		msg, tag string
		fact     trace.Fact
	)
	switch {
	case write:
		key, path, ok := r.actsOn(t, s, unseen)
		if !ok {
			return nil
		}
		msg = fmt.Sprintf("tool %q found nothing for %q, and %q acts on it", empty.Name, key, s.Name)
		tag, fact = "write-after-empty", rulekit.ArgFact(s, path, key)
	case detect.AssertsAbsence(w, s.Result):
		msg = fmt.Sprintf("tool %q found nothing for %q, and the answer asserts absence without asking whether the key is right", empty.Name, unseen[0])
		tag, fact = "asserted-absence", rulekit.AnswerFact(s, s.Result, "asserts absence")
	default:
		key, ok := mentions(s.Result, unseen)
		if !ok {
			return nil // the answer goes on about something else
		}
		msg = fmt.Sprintf("tool %q found nothing for %q, and the answer speaks of it as found", empty.Name, key)
		tag, fact = "answer-after-empty", rulekit.AnswerFact(s, s.Result, "speaks of "+key)
	}
	return []trace.Finding{{
		Rule: rules.EmptyResult, Step: s.Index, Verdict: r.verdict, Dimension: trace.Coherence, Severity: trace.SeverityError,
		Message: msg, Question: confirmQuestion(w, empty, t, s.Turn), Evidence: empty.Args, Tags: []string{"cascade", tag},
		Facts: []trace.Fact{
			rulekit.ResultFact(empty, "", empty.Result, "found nothing for "+rulekit.Clip(empty.Args, 80)),
			rulekit.AbsentFact(unseen[0], "", "no other tool result holds it"),
			fact,
		},
	}}
}

// unseenKeys returns the values the empty lookup was keyed by — its
// string arguments short enough to be a key, not a sentence — that no
// other tool result of t holds.
func (r *EmptyResult) unseenKeys(t *trace.Trace, empty *trace.Step) []string {
	args, ok := rulekit.DecodedArgs(t, empty)
	if !ok {
		return nil
	}
	var out []string
	rulekit.Walk("", args, func(_ string, leaf any) {
		v, ok := rulekit.LeafString(leaf)
		if v = strings.TrimSpace(v); !ok || len(v) < 2 || len(v) > maxKey || strings.Count(v, " ") >= 4 {
			return
		}
		if !origins.HeldByResult(t, r.tools, v, empty.Index) {
			out = append(out, v)
		}
	})
	return out
}

// maxKey is the longest argument read as a lookup's key, in bytes.
const maxKey = 80

// actsOn reports the key of unseen that an argument of the write s
// carries, and its path, unless s creates: making what a lookup did not
// find is what the lookup is for.
func (r *EmptyResult) actsOn(t *trace.Trace, s *trace.Step, unseen []string) (key, path string, ok bool) {
	if r.tools.Words().CreateVerbs[detect.VerbOf(s.Name)] {
		return "", "", false
	}
	args, decoded := rulekit.DecodedArgs(t, s)
	if !decoded {
		return "", "", false
	}
	rulekit.Walk("", args, func(p string, leaf any) {
		v, isString := rulekit.LeafString(leaf)
		if ok || !isString {
			return
		}
		for _, k := range unseen {
			if strings.EqualFold(strings.TrimSpace(v), k) {
				key, path, ok = k, p, true
				return
			}
		}
	})
	return key, path, ok
}

// mentions reports the first key of unseen that the answer names as a
// word of its own (A9 in "A9 ships", not in "A90").
func mentions(answer string, unseen []string) (string, bool) {
	l := strings.ToLower(answer)
	for _, k := range unseen {
		kl := strings.ToLower(k)
		for i := 0; ; {
			j := strings.Index(l[i:], kl)
			if j < 0 {
				break
			}
			at, end := i+j, i+j+len(kl)
			before, _ := utf8.DecodeLastRuneInString(l[:at])
			after, _ := utf8.DecodeRuneInString(l[end:])
			if !wordRune(before) && !wordRune(after) {
				return k, true
			}
			i = at + 1
		}
	}
	return "", false
}

// wordRune reports whether r continues a word: a letter or a digit, but
// not a Chinese character (Chinese puts no space between words: 订单A9已发货)
// and not utf8.RuneError (the edge of the text).
func wordRune(r rune) bool {
	return r != utf8.RuneError && !unicode.Is(unicode.Han, r) && (unicode.IsLetter(r) || unicode.IsDigit(r))
}

// confirmQuestion asks the user, in the language of their turn, to check
// the arguments of a lookup that found nothing.
func confirmQuestion(w *lexicon.Compiled, empty *trace.Step, t *trace.Trace, turn int) string {
	lang := w.LangOf(rulekit.UserTurn(t, turn))
	r := w.Replies(lang)
	return fmt.Sprintf(r.EmptyResult, rulekit.CompactArgs(w, r, lang, empty.Args))
}
