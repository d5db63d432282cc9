package health

import (
	"fmt"
	"regexp"
	"slices"
	"strings"

	"github.com/agentguard/agentguard/guard"
	"github.com/agentguard/agentguard/guard/internal/detect"
	"github.com/agentguard/agentguard/guard/replay"
	"github.com/agentguard/agentguard/trace"
)

// The screens: the four hard filters (fabrication, cascade, amnesia,
// drift), then the checks of a run against its case and of the run itself,
// then the guard's violations. Each returns hits; none judges, all read the
// answers and the trace.

// acknowledges matches an answer that tells the user a step failed.
var acknowledges = regexp.MustCompile(`(?i)\b(cannot|can't|could not|couldn't|unable|not able|unavailable|not available|try again|check again|later|no reliable)\b|无法|暂时|稍后|失败|未能|没有查到`)

// knowledgeBase is what answers may cite and quote.
type knowledgeBase struct {
	ids     map[string]bool
	clauses map[string]bool // clause numbers the documents quote
}

func newKnowledgeBase(ds []Document) *knowledgeBase {
	kb := &knowledgeBase{ids: map[string]bool{}, clauses: map[string]bool{}}
	for _, d := range ds {
		kb.ids[d.ID] = true
		for _, ref := range detect.ClauseRefs(detect.Default(), d.Text) {
			kb.clauses[ref.Number] = true
		}
	}
	return kb
}

// docs returns the document ids a step returned: a retrieval's, or a tool
// result that reads as documents (detect.Documents).
func docs(s *trace.Step) ([]string, bool) {
	if s.Blocked || s.Error != "" || (s.Kind != trace.KindTool && s.Kind != trace.KindRetrieval) {
		return nil, false
	}
	if len(s.DocIDs) > 0 {
		return s.DocIDs, true
	}
	ids, _ := detect.Documents(s.Result)
	ids = slices.DeleteFunc(ids, func(id string) bool { return id == "" })
	return ids, len(ids) > 0
}

// turnSteps returns the steps of t recorded in user turn i.
func turnSteps(t *trace.Trace, i int) []*trace.Step {
	if t == nil {
		return nil
	}
	var out []*trace.Step
	for _, s := range t.Steps {
		if s.Turn == i {
			out = append(out, s)
		}
	}
	return out
}

// fabrication screens the answers of r for citations of documents and
// quotes of clauses that the knowledge base does not have.
func fabrication(c *replay.Case, r *replay.Run, kb *knowledgeBase, retrievers map[string]bool) []Hit {
	var out []Hit
	for i, turn := range r.Turns {
		trigger := retrievalTrigger(turnSteps(r.Trace, i), retrievers)
		for _, id := range detect.CitedIDs(turn.Answer) {
			if !kb.ids[id] {
				out = append(out, Hit{Case: c.ID, TraceID: r.TraceID, Turn: i, Screen: "fabrication", Dimension: trace.Accuracy, Outcome: Failed,
					Tag: "bad-citation", Cause: trigger + " → cites an unknown document", Detail: "[" + id + "]"})
			}
		}
		for _, ref := range detect.ClauseRefs(detect.Default(), turn.Answer) {
			num := ref.Number
			if kb.clauses[num] {
				continue
			}
			cause := trigger + " → invented clause"
			if i < len(c.Turns) && quotesClause(c.Turns[i], num) {
				cause = "user-asserted clause → agreed"
			}
			out = append(out, Hit{Case: c.ID, TraceID: r.TraceID, Turn: i, Screen: "fabrication", Dimension: trace.Accuracy, Outcome: Failed,
				Tag: "invented-clause", Cause: cause, Detail: ref.Text})
		}
	}
	return out
}

// uncited screens the answers of r, on a route that forces citations, for
// an answer given after a retrieval returned documents in its turn that
// cites none of them.
func uncited(c *replay.Case, r *replay.Run) []Hit {
	var out []Hit
	for i, turn := range r.Turns {
		var retrieved []string
		for _, st := range turnSteps(r.Trace, i) {
			ids, _ := docs(st)
			retrieved = append(retrieved, ids...)
		}
		if len(retrieved) == 0 || strings.TrimSpace(turn.Answer) == "" || (turn.Status != "" && turn.Status != guard.StatusDone) {
			continue
		}
		if slices.ContainsFunc(detect.CitedIDs(turn.Answer), func(id string) bool { return slices.Contains(retrieved, id) }) {
			continue
		}
		out = append(out, Hit{Case: c.ID, TraceID: r.TraceID, Turn: i, Screen: "citation", Dimension: trace.Accuracy, Outcome: Failed,
			Tag: "uncited", Cause: "retrieved documents → answer cites none", Detail: "retrieved " + strings.Join(retrieved, ", ")})
	}
	return out
}

func quotesClause(text, num string) bool {
	return slices.ContainsFunc(detect.ClauseRefs(detect.Default(), text), func(ref detect.ClauseRef) bool { return ref.Number == num })
}

// retrievalTrigger names what the last retrieval of a turn returned. A
// tool counts as a retrieval when it returned documents in some run; when
// the turn has none, an empty tool result in it is named instead.
func retrievalTrigger(steps []*trace.Step, retrievers map[string]bool) string {
	empty := ""
	for _, s := range slices.Backward(steps) {
		if s.Blocked || (s.Kind != trace.KindTool && s.Kind != trace.KindRetrieval) {
			continue
		}
		if s.Kind == trace.KindRetrieval || retrievers[s.Name] {
			if ids, _ := docs(s); len(ids) > 0 {
				return "retrieved documents"
			}
			return "empty retrieval"
		}
		if empty == "" && s.Error == "" && detect.IsEmptyResult(detect.Default(), s.Result) {
			empty = "empty " + s.Name
		}
	}
	if empty != "" {
		return empty
	}
	return "no retrieval"
}

// cascade screens r for steps that failed or came back empty while the
// flow went on: a state-changing call ran after them in the same turn, or
// the turn's answer was a final one that neither asks the user nor says
// the step failed (one asserting absence always counts).
func cascade(c *replay.Case, r *replay.Run) []Hit {
	var out []Hit
	for i, turn := range r.Turns {
		steps := turnSteps(r.Trace, i)
		for j, p := range steps {
			if p.Kind != trace.KindTool || p.Blocked {
				continue
			}
			what := "empty"
			if p.Error != "" {
				what = "failed"
			} else if !detect.IsEmptyResult(detect.Default(), p.Result) {
				continue
			}
			trigger := what + " " + p.Name
			recovered := false
			var wrote *trace.Step
			for _, q := range steps[j+1:] {
				if q.Kind != trace.KindTool || q.Blocked {
					continue
				}
				if q.Name == p.Name && q.Error == "" && !detect.IsEmptyResult(detect.Default(), q.Result) {
					recovered = true
				}
				if wrote == nil && q.Name != p.Name && detect.IsWriteVerb(detect.Default(), q.Name) {
					wrote = q
				}
			}
			hit := Hit{Case: c.ID, TraceID: r.TraceID, Turn: i, Screen: "cascade", Dimension: trace.Coherence, Outcome: Failed}
			switch a := strings.TrimSpace(turn.Answer); {
			case wrote != nil:
				hit.Tag, hit.Cause, hit.Detail = "write-after-failure", trigger+" → "+wrote.Name+" ran", wrote.Name+" "+wrote.Args
			case recovered || (turn.Status != "" && turn.Status != guard.StatusDone):
				continue
			case detect.AssertsAbsence(detect.Default(), a):
				hit.Tag, hit.Cause, hit.Detail = "asserted-absence", trigger+" → asserted absence", clip(a, 120)
			case strings.HasSuffix(a, "?") || strings.HasSuffix(a, "？") || acknowledges.MatchString(a):
				continue
			default:
				hit.Tag, hit.Cause, hit.Detail = what+"-result", trigger+" → answer went on", clip(a, 120)
			}
			out = append(out, hit)
			break // one cascade per turn
		}
	}
	return out
}

// caseChecks turns the checks of r against its case into hits.
func caseChecks(c *replay.Case, r *replay.Run, k *replay.Check) []Hit {
	var out []Hit
	last := len(r.Turns) - 1
	hit := func(screen string, d trace.Dimension, o Outcome, tag, cause, detail string) {
		out = append(out, Hit{Case: c.ID, TraceID: r.TraceID, Turn: last, Screen: screen, Dimension: d, Outcome: o, Tag: tag, Cause: cause, Detail: detail})
	}
	for _, e := range k.Missing {
		hit("answer", trace.Accuracy, Failed, "wrong-answer", fmt.Sprintf("answer lacks %q", e), clip(r.Final(), 160))
	}
	for _, e := range k.Forbidden {
		hit("answer", trace.Accuracy, Failed, "wrong-answer", fmt.Sprintf("answer says %q", e), clip(r.Final(), 160))
	}
	if !k.TrajectoryOK {
		hit("trajectory", trace.Coherence, Failed, "trajectory", "tool calls differ from the expected trajectory", clip(k.TrajectoryDiff, 240))
	}
	if !k.IntentOK {
		hit("intent", trace.Coherence, Failed, "intent", fmt.Sprintf("intent %s read as %s", c.Intent, k.Intent), "")
	}
	switch {
	case k.Budget > 0 && k.ToolCalls > k.Budget:
		hit("budget", trace.Efficiency, Failed, "over-budget", fmt.Sprintf("%d tool calls, budget %d", k.ToolCalls, k.Budget), "")
	case c.Trajectory != nil && k.ToolCalls > len(c.Trajectory.Calls) && (c.Trajectory.Match == "" || c.Trajectory.Match == replay.TrajectoryStrict || c.Trajectory.Match == replay.TrajectoryUnordered):
		hit("budget", trace.Efficiency, Minor, "over-budget", fmt.Sprintf("%d tool calls, %d expected", k.ToolCalls, len(c.Trajectory.Calls)), "")
	}
	return out
}

// runChecks reports r's errors and retries.
func runChecks(c *replay.Case, r *replay.Run) []Hit {
	var out []Hit
	switch {
	case r.TimedOut:
		out = append(out, Hit{Case: c.ID, TraceID: r.TraceID, Turn: len(r.Turns), Screen: "error", Dimension: trace.Stability, Outcome: Failed, Tag: "timeout", Cause: "run timed out", Detail: clip(r.Err, 160)})
	case r.Err != "":
		out = append(out, Hit{Case: c.ID, TraceID: r.TraceID, Turn: len(r.Turns), Screen: "error", Dimension: trace.Stability, Outcome: Failed, Tag: "agent-error", Cause: "agent error ended the run", Detail: clip(firstLine(r.Err), 160)})
	}
	for i, t := range r.Turns {
		if strings.TrimSpace(t.Answer) == "" && t.Status != guard.StatusPaused && t.Status != guard.StatusHandoff {
			out = append(out, Hit{Case: c.ID, TraceID: r.TraceID, Turn: i, Screen: "error", Dimension: trace.Stability, Outcome: Failed, Tag: "no-output", Cause: "blank answer"})
		}
	}
	if replay.Retried(r) {
		out = append(out, Hit{Case: c.ID, TraceID: r.TraceID, Turn: -1, Screen: "retry", Dimension: trace.Stability, Outcome: Minor, Tag: "retry", Cause: "a call was made again"})
	}
	return out
}

func firstLine(s string) string {
	first, _, _ := strings.Cut(s, "\n")
	return first
}

// amnesia screens a case's runs for lost constraints: each loss fails its
// run when the case lost them minLosses times or more over all its runs,
// and is minor otherwise.
func amnesia(c *replay.Case, runs []replay.Run, checks []replay.Check, minLosses int) []Hit {
	total := 0
	for _, k := range checks {
		total += len(k.Losses)
	}
	if total == 0 {
		return nil
	}
	outcome := Minor
	if total >= minLosses {
		outcome = Failed
	}
	turnOf := map[string]int{}
	for _, k := range c.Constraints {
		turnOf[k.ID] = k.Turn
	}
	var out []Hit
	for j, k := range checks {
		for _, l := range k.Losses {
			out = append(out, Hit{Case: c.ID, TraceID: runs[j].TraceID, Turn: l.Turn, Screen: "amnesia", Dimension: trace.Memory, Outcome: outcome,
				Tag: "amnesia", Cause: fmt.Sprintf("constraint %q of turn %d forgotten", l.Constraint, turnOf[l.Constraint]), Detail: l.What})
		}
	}
	return out
}

// drift screens a case whose runs disagree beyond threshold: the runs that
// differ from the most common outcome fail.
func drift(c *replay.Case, runs []replay.Run, threshold float64) []Hit {
	d := replay.Drift(c, runs)
	if d == 0 || d <= threshold {
		return nil
	}
	counts := map[string]int{}
	sigs := make([]string, len(runs))
	for i := range runs {
		sigs[i] = c.Signature(&runs[i])
		counts[sigs[i]]++
	}
	top := ""
	for _, s := range sigs { // the first of the most common, for a stable choice
		if counts[s] > counts[top] {
			top = s
		}
	}
	var out []Hit
	for i := range runs {
		if sigs[i] == top {
			continue
		}
		out = append(out, Hit{Case: c.ID, TraceID: runs[i].TraceID, Turn: len(runs[i].Turns) - 1, Screen: "drift", Dimension: trace.Stability, Outcome: Failed,
			Tag: "drift", Cause: fmt.Sprintf("%d outcomes in %d runs", len(counts), len(runs)), Detail: fmt.Sprintf("key elements %s, most runs %s", sigs[i], top)})
	}
	return out
}

// violationHit turns a guard finding into a hit, tagged with its last (most
// specific) tag: findings of severity error
// or critical fail when the guard did not enforce them (shadow mode) and
// are recovered when it did; lesser ones are minor.
func violationHit(caseID string, v trace.Violation) Hit {
	tag := v.Rule
	if len(v.Tags) > 0 {
		tag = v.Tags[len(v.Tags)-1] // the most specific
	}
	d := v.Dimension
	if d == "" {
		d = trace.Accuracy
	}
	h := Hit{Case: caseID, TraceID: v.TraceID, Turn: -1, Screen: "violation", Dimension: d, Tag: tag, Detail: clip(v.Message, 200)}
	serious := v.Severity == trace.SeverityError || v.Severity == trace.SeverityCritical
	switch {
	case !serious:
		h.Outcome = Minor
	case v.Shadow:
		h.Outcome = Failed
	default:
		h.Outcome = Recovered
	}
	mode := "enforced"
	if v.Shadow {
		mode = "not enforced"
	}
	h.Cause = fmt.Sprintf("%s: %s, %s", v.Rule, v.Verdict, mode)
	return h
}
