package health

import (
	"cmp"
	"context"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"sync"
	"unicode"
	"unicode/utf8"

	"github.com/agentguard/agentguard/guard/internal/detect"
	"github.com/agentguard/agentguard/guard/internal/judge"
	"github.com/agentguard/agentguard/guard/replay"
	"github.com/agentguard/agentguard/trace"
)

// The judge: an optional model (Options.Judge) that gives a second opinion
// on the screened cases, beside the computed scores and never in them.

// Limits of a judge's answer (see ParseRating).
const (
	// MaxRating is the longest answer ParseRating accepts, in bytes.
	MaxRating = judge.MaxAnswer
	// MaxReason is the longest reason ParseRating accepts, in characters.
	MaxReason = judge.MaxReason
)

// Limits of the judge's prompt, in characters: each user turn, each answer
// and each knowledge-base excerpt is cut to its limit, and whole turns in
// the middle of a conversation are left out beyond maxConversation.
const (
	maxUserTurn     = 600
	maxAnswer       = 800
	maxConversation = 12000
	maxExcerpt      = 500
	maxExcerpts     = 2000 // all excerpts together
	maxDocuments    = 4    // excerpts by cited or retrieved id
	maxLexical      = 3    // excerpts by lexical match, when no id applies
	maxElements     = 2000 // the baseline's elements and reference answer, and the constraints
)

// judged are the dimensions a verdict is read for: those the answers show.
// Stability and efficiency are measured (errors, drift, tool calls), never
// judged.
var judged = []trace.Dimension{trace.Accuracy, trace.Coherence, trace.Memory}

// hardFilters are the four hard filters: a hit of any of them screens its
// case, whatever its outcome.
var hardFilters = []string{"fabrication", "cascade", "amnesia", "drift"}

// Rating is a judge's answer about one case.
type Rating struct {
	// Score is from 1 to 5, anchored as the Rubric's: 5 healthy, 4 minor
	// flaws, 3 errors recovered, 2 structural errors, 1 unusable.
	Score  int    `json:"score"`
	Reason string `json:"reason"`
}

// ParseRating reads a judge's answer: exactly one JSON object with
// exactly the keys "score", an integer from 1 to 5, and "reason", a
// non-empty string of at most MaxReason characters; the answer is at most
// MaxRating bytes. White space around the object, and one Markdown code
// fence around it (```json … ```), are the only other text allowed. Any
// other answer is an *Error of op "judge" wrapping ErrVerdict.
//
// It is the protocol guard/conteval's judge answers in too.
func ParseRating(answer string) (Rating, error) {
	r, err := judge.ParseRating(answer)
	if err != nil {
		return Rating{}, &Error{Op: "judge", Err: err}
	}
	return Rating(r), nil
}

// outcome is what a verdict's score says of a run, on the Rubric's anchors:
// 5 nothing to report, 4 minor flaws, 3 errors recovered, 2 and 1 failed.
func (v Rating) outcome() Outcome {
	switch {
	case v.Score >= 5:
		return ""
	case v.Score == 4:
		return Minor
	case v.Score == 3:
		return Recovered
	}
	return Failed
}

// JudgeReport is what the judge said about a replay: a verdict per screened
// case, the judge's view of the dimensions it reads, and what it cost. The
// report's scores, total, band and comparison never depend on it.
type JudgeReport struct {
	// Name names the judge model (Options.JudgeName).
	Name string `json:"name,omitempty"`
	// Raters names every rater, Options.Judge first, when there are two or
	// more; Review counts the cases sent to review.
	Raters []string `json:"raters,omitempty"`
	Review int      `json:"review"`
	// Screened is how many cases were screened, and so sent to the judge;
	// Cases how many cases the replay ran.
	Screened int `json:"screened"`
	Cases    int `json:"cases"`
	// Judged holds one entry per screened case, in case order.
	Judged []JudgedCase `json:"judged"`
	// Dimensions are the judge's view of accuracy, coherence and memory
	// beside the computed scores.
	Dimensions []JudgedScore `json:"dimensions"`
	// Calls counts the calls made to the judge model, failed ones
	// included; Errors the screened cases without a valid verdict.
	Calls  int `json:"calls"`
	Errors int `json:"errors"`
	// Confirmed counts the verdicts of 1 or 2 (the judge agrees the case
	// failed), Disputed those of 4 or 5 (it finds the case healthy or
	// nearly so: check its screens).
	Confirmed int `json:"confirmed"`
	Disputed  int `json:"disputed"`
	// TokensIn and TokensOut are the judge's tokens, as the provider
	// reported them (detect.Usage) or, where it did not, estimated
	// (trace.EstimateTokens), which Estimated then reports. Cost prices
	// them with Options.JudgePricing.
	TokensIn  int     `json:"tokens_in"`
	TokensOut int     `json:"tokens_out"`
	Estimated bool    `json:"tokens_estimated,omitempty"`
	Cost      float64 `json:"cost"`
}

// JudgedCase is the judge's verdict on one screened case.
type JudgedCase struct {
	Case  string `json:"case"`
	Title string `json:"title,omitempty"`
	// Screens are what screened the case — the hard filters that hit it,
	// and the checks and findings that failed — in the order of
	// Hit.Screen's list.
	Screens []string `json:"screens"`
	// Runs are the case's screened runs, the verdict's runs.
	Runs []string `json:"runs"`
	// Dimensions are the judged dimensions the runs were screened in: those
	// the verdict enters in the judge's view.
	Dimensions []trace.Dimension `json:"dimensions,omitempty"`
	// Documents are the ids of the knowledge-base excerpts in the prompt.
	Documents []string `json:"documents,omitempty"`
	// Score and Reason are the verdict: the rating, or with two raters or
	// more the mean of their scores rounded, and the first rater's reason.
	// Score is 0 when Error says why there is none: every call failed, its
	// answer was not a valid verdict (ParseRating), or the person did not
	// score the case.
	Score  int    `json:"score,omitempty"`
	Reason string `json:"reason,omitempty"`
	Error  string `json:"error,omitempty"`
	// Mean is the mean of the valid scores, Gap the highest less the
	// lowest; Ratings holds every rater's verdict when there are two
	// raters or more. Review is set when the gap is above MaxGap, or when
	// fewer than two of two raters or more scored the case.
	Mean    float64        `json:"mean,omitempty"`
	Gap     float64        `json:"gap,omitempty"`
	Review  bool           `json:"review,omitempty"`
	Ratings []RaterVerdict `json:"ratings,omitempty"`
	// TokensIn, TokensOut, Estimated and Cost are the call's, as in
	// JudgeReport.
	TokensIn  int     `json:"tokens_in"`
	TokensOut int     `json:"tokens_out"`
	Estimated bool    `json:"tokens_estimated,omitempty"`
	Cost      float64 `json:"cost"`
}

// JudgedScore sets the judge's view of a dimension beside its computed
// score.
type JudgedScore struct {
	Dimension trace.Dimension `json:"dimension"`
	// Computed is the report's score of the dimension.
	Computed float64 `json:"computed"`
	// Judged is the Rubric's score from the shares of runs below, in which
	// each screened run of a case with a verdict has, in the dimensions it
	// was screened in, the outcome the verdict gives instead of its
	// computed worst: 5 none, 4 minor, 3 recovered, 2 or 1 failed.
	Judged    float64 `json:"judged"`
	Failed    float64 `json:"failed"`
	Recovered float64 `json:"recovered"`
	Minor     float64 `json:"minor"`
	Reason    string  `json:"reason"`
	// Verdicts counts the verdicts that enter it.
	Verdicts int `json:"verdicts"`
}

// screenedCase is a case to judge.
type screenedCase struct {
	c        *replay.Case
	runs     []*replay.Run                // all its runs, in order
	screened []string                     // trace ids of its screened runs
	dims     map[string][]trace.Dimension // trace id -> judged dimensions it was screened in
	out      JudgedCase
}

// judge asks opts.Judge about every screened case and returns its report.
// A failed call or an invalid answer is recorded on its case and never
// stops the others; when ctx ends, the cases not yet asked are recorded as
// not judged.
//
// It also returns, with two raters or more, the raters' mean of each
// screened run's case by dimension and trace id: the scores of the runs
// whose case the raters agreed on (no review), which replace the rubric's
// in the report.
func (s *scorer) judge(ctx context.Context, rubric Rubric, computed []DimensionScore, raters []Rater) (*JudgeReport, map[trace.Dimension]map[string]float64) {
	jr := &JudgeReport{Name: raters[0].Name}
	if len(raters) > 1 {
		for _, r := range raters {
			jr.Raters = append(jr.Raters, r.Name)
		}
	}
	todo := s.screenedCases()
	jr.Screened, jr.Cases = len(todo), s.caseCount()
	jr.Calls = s.askAll(ctx, todo, raters)
	verdict, rated, verdicts := jr.tally(todo, len(raters) > 1)
	for _, d := range judged {
		js := JudgedScore{Dimension: d, Verdicts: verdicts[d]}
		for _, c := range computed {
			if c.Dimension == d {
				js.Computed = c.Score
			}
		}
		v := s.dimension(d, rubric, verdict[d])
		js.Judged, js.Reason = v.Score, v.Reason
		js.Failed, js.Recovered, js.Minor = v.Failed, v.Recovered, v.Minor
		jr.Dimensions = append(jr.Dimensions, js)
	}
	return jr, rated
}

// askAll asks the raters about every case of todo, opts.JudgeParallel
// cases at a time (4 when not set), and returns how many model calls
// that made.
func (s *scorer) askAll(ctx context.Context, todo []*screenedCase, raters []Rater) int {
	parallel := s.opts.JudgeParallel
	if parallel <= 0 {
		parallel = 4
	}
	var (
		wg    sync.WaitGroup
		jobs  = make(chan *screenedCase)
		mu    sync.Mutex
		total int
	)
	for range min(parallel, len(todo)) {
		wg.Go(func() {
			for sc := range jobs {
				calls := s.ask(ctx, sc, raters)
				mu.Lock()
				total += calls
				mu.Unlock()
			}
		})
	}
	for _, sc := range todo {
		jobs <- sc
	}
	close(jobs)
	wg.Wait()
	return total
}

// tally adds the verdicts on the judged cases to jr — the cases, their
// cost, the reviews, errors, confirmations and disputes — and returns, per
// judged dimension and by trace id, the verdict's score of each screened
// run it covers (the judge's view), and, when several raters scored, the
// raters' mean of the runs of the cases not sent to review (the score);
// and how many verdicts enter each dimension.
func (jr *JudgeReport) tally(todo []*screenedCase, several bool) (verdict, rated map[trace.Dimension]map[string]float64, verdicts map[trace.Dimension]int) {
	verdict, rated = map[trace.Dimension]map[string]float64{}, map[trace.Dimension]map[string]float64{}
	verdicts = map[trace.Dimension]int{}
	set := func(m map[trace.Dimension]map[string]float64, d trace.Dimension, id string, v float64) {
		if m[d] == nil {
			m[d] = map[string]float64{}
		}
		m[d][id] = v
	}
	for _, sc := range todo {
		o := sc.out
		jr.Judged = append(jr.Judged, o)
		jr.TokensIn += o.TokensIn
		jr.TokensOut += o.TokensOut
		jr.Estimated = jr.Estimated || o.Estimated
		jr.Cost += o.Cost
		if o.Review {
			jr.Review++
		}
		if o.Score == 0 {
			jr.Errors++
			continue
		}
		switch {
		case o.Score <= 2:
			jr.Confirmed++
		case o.Score >= 4:
			jr.Disputed++
		}
		for _, d := range o.Dimensions {
			verdicts[d]++
			for _, id := range sc.screened {
				if !slices.Contains(sc.dims[id], d) {
					continue
				}
				set(verdict, d, id, float64(o.Score))
				if several && !o.Review && o.Mean > 0 {
					set(rated, d, id, o.Mean)
				}
			}
		}
	}
	return verdict, rated, verdicts
}

func (s *scorer) caseCount() int {
	seen := map[string]bool{}
	for _, r := range s.runs {
		seen[r.Case] = true
	}
	return len(seen)
}

// screenedCases returns the cases with a screened run — a run with a hit
// of a hard filter, or a failed hit — in case order.
func (s *scorer) screenedCases() []*screenedCase {
	byCase := map[string]*screenedCase{}
	var out []*screenedCase
	for _, h := range s.hits {
		if h.Outcome != Failed && !slices.Contains(hardFilters, h.Screen) {
			continue
		}
		sc := byCase[h.Case]
		if sc == nil {
			sc = &screenedCase{c: &s.cases[s.caseIdx[h.Case]], dims: map[string][]trace.Dimension{}}
			sc.out = JudgedCase{Case: h.Case, Title: sc.c.Title}
			byCase[h.Case] = sc
			out = append(out, sc)
		}
		if !slices.Contains(sc.out.Screens, h.Screen) {
			sc.out.Screens = append(sc.out.Screens, h.Screen)
		}
		if !slices.Contains(sc.screened, h.TraceID) {
			sc.screened = append(sc.screened, h.TraceID)
		}
		if slices.Contains(judged, h.Dimension) && !slices.Contains(sc.dims[h.TraceID], h.Dimension) {
			sc.dims[h.TraceID] = append(sc.dims[h.TraceID], h.Dimension)
			if !slices.Contains(sc.out.Dimensions, h.Dimension) {
				sc.out.Dimensions = append(sc.out.Dimensions, h.Dimension)
			}
		}
	}
	for _, sc := range out {
		for i := range s.runs {
			if s.runs[i].Case == sc.c.ID {
				sc.runs = append(sc.runs, &s.runs[i])
			}
		}
		// Screened runs in run order, screens and dimensions in report order.
		slices.SortFunc(sc.screened, func(a, b string) int {
			return cmp.Compare(s.runIndex(a), s.runIndex(b))
		})
		sc.out.Runs = slices.Clone(sc.screened)
		slices.SortFunc(sc.out.Screens, func(a, b string) int {
			return cmp.Compare(slices.Index(screenOrder, a), slices.Index(screenOrder, b))
		})
		slices.SortFunc(sc.out.Dimensions, func(a, b trace.Dimension) int {
			return cmp.Compare(slices.Index(Dimensions, a), slices.Index(Dimensions, b))
		})
	}
	slices.SortStableFunc(out, func(a, b *screenedCase) int { return cmp.Compare(s.caseIdx[a.c.ID], s.caseIdx[b.c.ID]) })
	return out
}

func (s *scorer) runIndex(traceID string) int {
	return slices.IndexFunc(s.runs, func(r replay.Run) bool { return r.TraceID == traceID })
}

// ask has every rater judge one case, recording the verdicts or the errors
// on sc.out, and returns how many model calls it made.
func (s *scorer) ask(ctx context.Context, sc *screenedCase, raters []Rater) (calls int) {
	excerpts, unknown := s.excerpts(sc)
	for _, d := range excerpts {
		sc.out.Documents = append(sc.out.Documents, d.ID)
	}
	if err := ctx.Err(); err != nil {
		sc.out.Error = "not judged: " + err.Error()
		return 0
	}
	prompt := judgePrompt(sc.c, sc.runs, sc.screened, excerpts, unknown)
	vs := make([]RaterVerdict, len(raters))
	for i, r := range raters {
		var called bool
		vs[i], called = s.rate(ctx, r, sc.c.ID, prompt)
		if called {
			calls++
		}
	}
	combine(&sc.out, vs)
	return calls
}

// judgeRubric is the judge's instructions: what it gets, and the anchors
// of the health check's rubric.
var judgeRubric = judge.Rubric{
	Intro: `You are a strict reviewer of a conversational AI agent. An automatic screen flagged the test case below; give your own verdict on it.

You get the user's turns and the agent's answers (where runs of the case answered differently, each run's answer), the baseline (what the final answer must and must not say, and a reference answer), the constraints the user stated that the agent must keep respecting, and excerpts of the knowledge-base rules the case touches. An answer may state only rules the excerpts support.`,
	Task: "Score the agent's behaviour in the case from 1 to 5; where runs differ, score the worst run:",
	Anchors: [5]string{
		"unusable: the answer misleads or harms the user",
		"structural errors: a wrong, invented or unsupported statement or action, or a forgotten constraint",
		"errors recovered: something went wrong, but the agent caught it (asked the user, declined to guess, handed over) instead of misleading the user",
		"minor flaws: correct, with small lapses of wording or completeness",
		"healthy: correct, grounded, and keeps every constraint",
	},
}

// judgePrompt builds the judge's user message about case c, laid out as
//
//	Case ID (CATEGORY): TITLE
//	Runs: N; screened: 1, 3
//
//	## Conversation
//	User: …
//	Agent: …                 (every run answered the same)
//	Agent (runs 1, 3): …     (runs answered differently)
//
//	## Baseline
//	## Constraints
//	## Knowledge-base excerpts
//
//	Reply with only the JSON object.
//
// with every message on one line.
func judgePrompt(c *replay.Case, runs []*replay.Run, screened []string, excerpts []Document, unknown []string) string {
	var b strings.Builder
	fmt.Fprintf(&b, "Case %s (%s)", c.ID, c.Category)
	if c.Title != "" {
		fmt.Fprintf(&b, ": %s", clip(c.Title, 200))
	}
	var nums []string
	for _, r := range runs {
		if slices.Contains(screened, r.TraceID) {
			nums = append(nums, strconv.Itoa(r.Repeat))
		}
	}
	fmt.Fprintf(&b, "\nRuns: %d; screened: %s\n\n## Conversation\n", len(runs), strings.Join(nums, ", "))
	b.WriteString(conversation(c, runs))

	b.WriteString("\n## Baseline\n")
	var base strings.Builder
	ref := c.Reference()
	if len(ref.Must) > 0 {
		fmt.Fprintf(&base, "The final answer must say: %s\n", elementList(ref.Must))
	}
	if len(ref.MustNot) > 0 {
		fmt.Fprintf(&base, "The final answer must not say: %s\n", elementList(ref.MustNot))
	}
	if ref.Text != "" {
		fmt.Fprintf(&base, "Reference answer: %s\n", clip(ref.Text, maxAnswer))
	}
	if base.Len() == 0 {
		base.WriteString("None given.\n")
	}
	b.WriteString(clipLines(base.String(), maxElements))

	b.WriteString("\n## Constraints\n")
	var cons strings.Builder
	for _, k := range c.Constraints {
		fmt.Fprintf(&cons, "- from user turn %d", k.Turn+1)
		if k.Text != "" {
			fmt.Fprintf(&cons, " (%q)", clip(k.Text, 200))
		}
		switch {
		case k.NoTool != "":
			fmt.Fprintf(&cons, ": the tool %s must not run\n", k.NoTool)
		case k.Tool != "":
			fmt.Fprintf(&cons, ": every call of %s must pass %s containing %q\n", k.Tool, k.Arg, k.Value)
		default:
			fmt.Fprintf(&cons, ": no answer may say %s\n", elementList(k.AnswerNot))
		}
	}
	if cons.Len() == 0 {
		cons.WriteString("None.\n")
	}
	b.WriteString(clipLines(cons.String(), maxElements))

	b.WriteString("\n## Knowledge-base excerpts\n")
	for _, d := range excerpts {
		fmt.Fprintf(&b, "[%s] %s\n", d.ID, d.Text)
	}
	if len(excerpts) == 0 {
		b.WriteString("None: the knowledge base has nothing on this case.\n")
	}
	if len(unknown) > 0 {
		fmt.Fprintf(&b, "Cited but not in the knowledge base: [%s]\n", strings.Join(unknown, "], ["))
	}
	b.WriteString("\n" + judge.Reminder)
	return b.String()
}

// conversation lays out the case's turns with the runs' answers, grouping
// runs that answered alike, leaving out turns in the middle beyond
// maxConversation characters.
func conversation(c *replay.Case, runs []*replay.Run) string {
	var blocks []string
	for i, text := range c.Turns {
		var b strings.Builder
		fmt.Fprintf(&b, "User: %s\n", clip(text, maxUserTurn))
		var order []string
		groups := map[string][]string{}
		reached := 0
		for _, r := range runs {
			var a string
			switch {
			case i < len(r.Turns):
				a = clip(r.Turns[i].Answer, maxAnswer)
				if a == "" {
					a = "[blank answer]"
				}
				reached++
			case i == len(r.Turns) && r.Err != "":
				a = "[no answer: the run ended: " + clip(firstLine(r.Err), 160) + "]"
			default:
				continue
			}
			if _, ok := groups[a]; !ok {
				order = append(order, a)
			}
			groups[a] = append(groups[a], strconv.Itoa(r.Repeat))
		}
		for _, a := range order {
			switch ns := groups[a]; {
			case len(order) == 1 && reached == len(runs):
				fmt.Fprintf(&b, "Agent: %s\n", a)
			case len(ns) == 1:
				fmt.Fprintf(&b, "Agent (run %s): %s\n", ns[0], a)
			default:
				fmt.Fprintf(&b, "Agent (runs %s): %s\n", strings.Join(ns, ", "), a)
			}
		}
		if len(order) == 0 && i > 0 {
			break // no run got this far
		}
		blocks = append(blocks, b.String())
	}
	size := func(s string) int { return utf8.RuneCountInString(s) }
	total := 0
	for _, bl := range blocks {
		total += size(bl)
	}
	if total <= maxConversation || len(blocks) < 3 {
		return strings.Join(blocks, "")
	}
	// Keep the first turn and as many of the last as fit.
	used, from := size(blocks[0]), len(blocks)
	for from > 1 && used+size(blocks[from-1]) <= maxConversation {
		from--
		used += size(blocks[from])
	}
	marker := fmt.Sprintf("[turns %d to %d left out]\n", 2, from)
	if from == 2 {
		marker = "[turn 2 left out]\n"
	}
	return blocks[0] + marker + strings.Join(blocks[from:], "")
}

// elementList words answer elements: `"a"; "b" or "c"`.
func elementList(els []string) string {
	var parts []string
	for _, e := range els {
		var alts []string
		for _, a := range strings.Split(e, "|") {
			alts = append(alts, strconv.Quote(strings.TrimSpace(a)))
		}
		parts = append(parts, strings.Join(alts, " or "))
	}
	return strings.Join(parts, "; ")
}

// clipLines cuts s to about n characters at a line end.
func clipLines(s string, n int) string {
	if utf8.RuneCountInString(s) <= n {
		return s
	}
	var b strings.Builder
	for _, line := range strings.SplitAfter(s, "\n") {
		if utf8.RuneCountInString(b.String())+utf8.RuneCountInString(line) > n {
			b.WriteString("[…]\n")
			break
		}
		b.WriteString(line)
	}
	return b.String()
}

// excerpts picks the knowledge-base documents for a case's prompt: those
// the case's answers cite or its runs retrieved, at most maxDocuments, in
// that order; else the maxLexical best lexical matches of the case's turns
// and final answers. Each is cut to maxExcerpt characters, and they stop
// at maxExcerpts characters together. unknown are the ids the answers cite
// that the knowledge base does not have.
func (s *scorer) excerpts(sc *screenedCase) (excerpts []Document, unknown []string) {
	kb := s.opts.Knowledge
	if len(kb) == 0 {
		kb = nil
		seen := map[string]bool{}
		for _, r := range s.runs {
			if r.Trace == nil {
				continue
			}
			for _, st := range r.Trace.Steps {
				ids, _ := docs(st)
				for _, id := range ids {
					if !seen[id] {
						seen[id] = true
						kb = append(kb, Document{ID: id, Text: st.Result})
					}
				}
			}
		}
	}
	byID := map[string]Document{}
	for _, d := range kb {
		if _, ok := byID[d.ID]; !ok {
			byID[d.ID] = d
		}
	}
	var ids []string
	add := func(id string) {
		if !slices.Contains(ids, id) {
			ids = append(ids, id)
		}
	}
	for _, r := range sc.runs {
		for _, t := range r.Turns {
			for _, id := range detect.CitedIDs(t.Answer) {
				add(id)
			}
		}
	}
	for _, r := range sc.runs {
		if r.Trace == nil {
			continue
		}
		for _, st := range r.Trace.Steps {
			got, _ := docs(st)
			for _, id := range got {
				add(id)
			}
		}
	}
	var picked []Document
	for _, id := range ids {
		d, ok := byID[id]
		switch {
		case !ok && slices.ContainsFunc(sc.runs, func(r *replay.Run) bool { return citesID(r, id) }):
			if len(unknown) < 8 {
				unknown = append(unknown, id)
			}
		case ok && len(picked) < maxDocuments:
			picked = append(picked, d)
		}
	}
	if len(picked) == 0 {
		picked = lexical(sc, kb)
	}
	total := 0
	for _, d := range picked {
		text := clip(d.Text, maxExcerpt)
		if total+utf8.RuneCountInString(text) > maxExcerpts {
			break
		}
		total += utf8.RuneCountInString(text)
		excerpts = append(excerpts, Document{ID: d.ID, Text: text})
	}
	return excerpts, unknown
}

func citesID(r *replay.Run, id string) bool {
	for _, t := range r.Turns {
		for _, cited := range detect.CitedIDs(t.Answer) {
			if cited == id {
				return true
			}
		}
	}
	return false
}

// lexical returns the documents of kb that share the most terms with the
// case's turns and final answers, at most maxLexical, best first (ties in
// knowledge-base order), each sharing at least one term.
func lexical(sc *screenedCase, kb []Document) []Document {
	query := map[string]bool{}
	for _, t := range sc.c.Turns {
		for _, w := range terms(t) {
			query[w] = true
		}
	}
	for _, r := range sc.runs {
		for _, w := range terms(r.Final()) {
			query[w] = true
		}
	}
	type scored struct {
		d Document
		n int
	}
	var out []scored
	for _, d := range kb {
		n := 0
		seen := map[string]bool{}
		for _, w := range terms(d.ID + " " + d.Text) {
			if query[w] && !seen[w] {
				seen[w] = true
				n++
			}
		}
		if n > 0 {
			out = append(out, scored{d, n})
		}
	}
	slices.SortStableFunc(out, func(a, b scored) int { return cmp.Compare(b.n, a.n) })
	var best []Document
	for _, s := range out[:min(len(out), maxLexical)] {
		best = append(best, s.d)
	}
	return best
}

// stopwords are English words too common to match documents by.
var stopwords = map[string]bool{"the": true, "and": true, "are": true, "can": true, "for": true, "you": true, "your": true, "with": true,
	"what": true, "this": true, "that": true, "have": true, "has": true, "was": true, "will": true, "not": true, "but": true, "from": true,
	"our": true, "please": true, "there": true, "any": true, "all": true, "how": true, "when": true, "which": true, "who": true, "would": true,
	"could": true, "should": true, "does": true, "did": true, "its": true, "it's": true, "i'm": true, "about": true, "them": true, "they": true}

// terms splits text into lower-cased words of three or more letters or
// digits, less stopwords, and bigrams of Han characters (a lone Han
// character is a term of its own).
func terms(s string) []string {
	var out []string
	var word, han []rune
	flushWord := func() {
		if w := string(word); utf8.RuneCountInString(w) >= 3 && !stopwords[w] {
			out = append(out, w)
		}
		word = word[:0]
	}
	flushHan := func() {
		switch {
		case len(han) == 1:
			out = append(out, string(han))
		case len(han) > 1:
			for i := 0; i+1 < len(han); i++ {
				out = append(out, string(han[i:i+2]))
			}
		}
		han = han[:0]
	}
	for _, r := range s {
		switch {
		case unicode.Is(unicode.Han, r):
			flushWord()
			han = append(han, r)
		case unicode.IsLetter(r) || unicode.IsDigit(r) || r == '\'':
			flushHan()
			word = append(word, unicode.ToLower(r))
		default:
			flushWord()
			flushHan()
		}
	}
	flushWord()
	flushHan()
	return out
}
