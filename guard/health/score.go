package health

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"math"
	"slices"
	"strings"
	"time"

	"github.com/agentguard/agentguard/guard"
	"github.com/agentguard/agentguard/guard/internal/judge"
	"github.com/agentguard/agentguard/guard/replay"
	"github.com/agentguard/agentguard/ledger"
	"github.com/agentguard/agentguard/trace"
	"github.com/tmc/langchaingo/llms"
)

// Dimensions are the five health dimensions, in report order. Do not modify it.
var Dimensions = []trace.Dimension{trace.Accuracy, trace.Coherence, trace.Memory, trace.Stability, trace.Efficiency}

// Weights weigh the dimensions in the total. They are percentages: each at
// least 0, summing to 100. The zero value means DefaultWeights.
type Weights struct {
	Accuracy   float64 `json:"accuracy"`
	Coherence  float64 `json:"coherence"`
	Memory     float64 `json:"memory"`
	Stability  float64 `json:"stability"`
	Efficiency float64 `json:"efficiency"`
}

// DefaultWeights returns accuracy 30, coherence 25, memory 20, stability 15
// and efficiency 10.
func DefaultWeights() Weights { return Weights{30, 25, 20, 15, 10} }

func (w Weights) orDefault() Weights {
	if w == (Weights{}) {
		return DefaultWeights()
	}
	return w
}

// Of returns the weight of dimension d, 0 for an unknown one.
func (w Weights) Of(d trace.Dimension) float64 {
	switch d {
	case trace.Accuracy:
		return w.Accuracy
	case trace.Coherence:
		return w.Coherence
	case trace.Memory:
		return w.Memory
	case trace.Stability:
		return w.Stability
	case trace.Efficiency:
		return w.Efficiency
	}
	return 0
}

// Validate reports an error wrapping ErrWeights unless every weight is a
// finite number of at least 0 and they sum to 100.
func (w Weights) Validate() error {
	sum := 0.0
	for _, d := range Dimensions {
		v := w.Of(d)
		if v < 0 || math.IsNaN(v) || math.IsInf(v, 0) {
			return &Error{Op: "weights", Err: fmt.Errorf("%w: %s weight %v is not a number of at least 0", ErrWeights, d, v)}
		}
		sum += v
	}
	if math.Abs(sum-100) > 1e-9 {
		return &Error{Op: "weights", Err: fmt.Errorf("%w: they sum to %v, not 100", ErrWeights, sum)}
	}
	return nil
}

// Total returns the weighted total of per-dimension scores (1 to 5) on the
// same 1–5 scale, and on a 100-point scale (total × 20). A dimension
// missing from scores counts as 0. With the default weights, scores 4, 4,
// 5, 3, 4 give 4.05 and 81 points.
func (w Weights) Total(scores map[trace.Dimension]float64) (total, points float64) {
	sum := 0.0
	for _, d := range Dimensions {
		sum += w.Of(d) * scores[d]
	}
	return sum / 100, sum / 5
}

// Rubric scores one run in one dimension on the method's anchors, from the
// hits the run had in that dimension (see Score):
//
//	5  clean                      no hit
//	4  one or two minor flaws     up to MinorFlaws minor hits, nothing worse
//	3  recovered by a fallback    an error a guard rail caught, or more minor flaws than MinorFlaws
//	2  structural defect          an error that got through
//	1  unusable                   an error got through and the run gave the user nothing: it
//	                              ended in an error or a timeout, or without an answer
//
// A dimension's score is the mean of its runs' scores, to one decimal, so
// that one failed run in ten costs 0.3 on a clean dimension, not the whole
// band: 9 clean runs and one structural defect give 4.7.
type Rubric struct {
	// MinorFlaws is how many minor hits a run may have and still score 4.
	// Zero means 2 ("one or two minor flaws"); negative is invalid.
	MinorFlaws int `json:"minor_flaws"`
}

// DefaultRubric returns the default anchors.
func DefaultRubric() Rubric { return Rubric{MinorFlaws: 2} }

func (r Rubric) withDefaults() Rubric {
	if r.MinorFlaws == 0 {
		r.MinorFlaws = DefaultRubric().MinorFlaws
	}
	return r
}

func (r Rubric) validate() error {
	if r.MinorFlaws < 0 {
		return &Error{Op: "rubric", Err: fmt.Errorf("%w: minor_flaws %d is negative", ErrRubric, r.MinorFlaws)}
	}
	return nil
}

// RunHits counts one run's hits in one dimension, by outcome, and says
// whether the run gave the user an answer.
type RunHits struct {
	Failed, Recovered, Minor int
	// Answered is false when the run ended in an error or a timeout, or
	// without an answer to its last turn.
	Answered bool
}

// Score returns the run's score on the anchors.
func (r Rubric) Score(h RunHits) int {
	r = r.withDefaults()
	switch {
	case h.Failed > 0 && !h.Answered:
		return 1
	case h.Failed > 0:
		return 2
	case h.Recovered > 0 || h.Minor > r.MinorFlaws:
		return 3
	case h.Minor > 0:
		return 4
	}
	return 5
}

// anchorNames name the anchors, by score minus one.
var anchorNames = [5]string{"unusable", "structural", "recovered", "minor flaws", "clean"}

// meanScore returns the mean of the scores, to one decimal, and the reason:
// "mean of 90 runs: 80 clean, 4 minor flaws, 3 recovered, 3 structural".
// byScore counts the runs by score (index 0 is score 1); rated counts those
// whose score is the raters'.
func meanScore(scores []float64, rated int) (mean float64, byScore [5]int, reason string) {
	if len(scores) == 0 {
		return 5, byScore, "no run exercised it"
	}
	sum := 0.0
	for _, s := range scores {
		sum += s
		byScore[min(4, max(0, int(math.Round(s))-1))]++
	}
	mean = math.Round(10*sum/float64(len(scores))) / 10
	var parts []string
	for i := 4; i >= 0; i-- {
		if byScore[i] > 0 {
			parts = append(parts, fmt.Sprintf("%d %s", byScore[i], anchorNames[i]))
		}
	}
	reason = fmt.Sprintf("mean of %d runs: %s", len(scores), strings.Join(parts, ", "))
	if rated > 0 {
		reason += fmt.Sprintf(" (%d scored by the raters' mean)", rated)
	}
	return mean, byScore, reason
}

// Document is a knowledge-base entry the fabrication screen checks answers
// against: its id may be cited, and a clause number it quotes may be quoted.
type Document struct {
	ID   string `json:"id"`
	Text string `json:"text"`
}

// Options configures Score. The zero value is ready to use.
type Options struct {
	// Label names the replay in the report. Empty means the runs' label.
	Label string
	// Weights weigh the dimensions; zero means DefaultWeights.
	Weights Weights
	// Rubric turns outcome shares into scores; zero means the defaults.
	Rubric Rubric
	// Knowledge is the knowledge base answers may cite. Nil means the
	// documents retrieved in each run's trace.
	Knowledge []Document
	// DriftThreshold is the share of a case's runs that may disagree with
	// the most common outcome (replay.Drift) before the case is screened
	// as drifting. Zero means 0.25 (one run in three is too many);
	// negative means any disagreement.
	DriftThreshold float64
	// AmnesiaLosses is how many constraint losses, over all runs of a
	// case, make it suspected amnesia. Zero means 2.
	AmnesiaLosses int
	// ValidFor is how long a baseline stays valid after its
	// last_verified date. Zero means 90 days.
	ValidFor time.Duration
	// Now is the time of the report. Zero means time.Now().
	Now time.Time
	// Floor is the release floor on the 100-point scale (see CheckFloor):
	// Report.Release says whether the total reaches it. Zero means
	// DefaultFloor, the lowest total of a releasable band.
	Floor float64

	// Judge, when set, gives an opinion on the screened cases: one call per
	// case with a hard-filter hit or a failed hit, reported in
	// Report.Judge. Alone it is a second opinion beside the computed
	// scores, which it does not change; with Raters it is the first of the
	// raters whose mean is the score (see Raters). Nil means no judge. It
	// is called from several goroutines at once.
	Judge llms.Model
	// JudgeName names the judge in the report, "openai:gpt-4o".
	JudgeName string
	// JudgePricing prices the judge's tokens. Zero means its cost is 0.
	JudgePricing guard.Pricing
	// JudgeParallel bounds the judge calls in flight. Zero means 4.
	JudgeParallel int
	// JudgeTimeout bounds one judge call. Zero means one minute; negative,
	// none.
	JudgeTimeout time.Duration
	// Fixes adds fix directions by root-cause tag to Fixes, or overrides
	// them: the report gives each root cause its direction.
	Fixes map[string]Fix
	// CitationRoutes forces citations on retrieval routes: on a case whose
	// route is listed, an answer given after a retrieval returned
	// documents must cite one of them ("[KB-7]"); one that cites none is
	// an accuracy failure tagged "uncited".
	CitationRoutes []string

	// Raters are more independent raters of the screened cases, after
	// Judge: judge models or people's scores. With two raters or more,
	// each screened case gets every rater's score and their mean is its
	// verdict; as the method says, that mean is the quality score: it
	// replaces the rubric's score of the case's screened runs in the
	// dimensions they were screened in (accuracy, coherence, memory), so
	// it enters the total. A gap above MaxGap between them sends the case
	// to review (JudgedCase.Review) and keeps the rubric's scores.
	Raters []Rater

	// Redact, when set, de-identifies the report's files: WriteFiles
	// passes the text of each through it (the CLI passes redact.String
	// unless -raw). The Report itself keeps the text as it was.
	Redact func(string) string
}

// Violations is where Score reads the guard's violations: *badgerstore.Store
// implements it.
type Violations interface {
	Query(ctx context.Context, q ledger.Query) ([]ledger.Entry, error)
}

// Outcome says how a finding ended for the user.
type Outcome string

// Outcomes.
const (
	Failed    Outcome = "failed"    // the error reached the user or the world
	Recovered Outcome = "recovered" // a guard rail caught it
	Minor     Outcome = "minor"     // a minor flaw
)

// Hit is one finding about one run: a screen, a check against the case, or
// a guard violation.
type Hit struct {
	Case    string `json:"case"`
	TraceID string `json:"trace_id"`
	// Turn is the user turn it happened in, -1 when it concerns the run.
	Turn int `json:"turn"`
	// Screen is what found it: "fabrication", "cascade", "amnesia",
	// "drift" (the four hard filters), "citation" (Options.CitationRoutes),
	// "answer", "trajectory", "intent",
	// "budget", "error", "retry" (checks against the case and the run),
	// or "violation" (a guard finding from the ledger).
	Screen    string          `json:"screen"`
	Dimension trace.Dimension `json:"dimension"`
	Outcome   Outcome         `json:"outcome"`
	// Tag is the root-cause tag hits are aggregated by, and Cause the
	// chain that led to it: "empty retrieval → invented clause".
	Tag    string `json:"tag"`
	Cause  string `json:"cause"`
	Detail string `json:"detail,omitempty"`
}

// Rates are the screening rates of a replay.
type Rates struct {
	// Fabrication is the share of runs with an answer that cites a
	// document or quotes a clause the knowledge base does not have.
	Fabrication float64 `json:"fabrication"`
	// Cascade is the share of runs in which a step failed or came back
	// empty and the flow went on.
	Cascade float64 `json:"cascade"`
	// Amnesia is the share of runs of cases with constraints that lost one.
	Amnesia float64 `json:"amnesia"`
	// Drift is the share of cases screened as drifting.
	Drift float64 `json:"drift"`
	// OverRefusal is the share of runs of cases whose baseline answers
	// (replay.Answer.Declines unset) that ended refused or handed off: the
	// cost of caution, read beside Fabrication.
	OverRefusal float64 `json:"over_refusal"`
}

// DimensionScore is the score of one dimension and how it was derived.
type DimensionScore struct {
	Dimension trace.Dimension `json:"dimension"`
	// Score is the mean of the runs' scores on the Rubric's anchors, from
	// 1 to 5, to one decimal.
	Score float64 `json:"score"`
	// ByScore counts the runs by their score: ByScore[0] scored 1
	// (unusable), ByScore[4] scored 5 (clean). The runs are all runs, but
	// for memory the runs of cases with constraints or memory hits.
	ByScore [5]int `json:"runs_by_score"`
	// Rated counts the runs whose score is the raters' mean rather than
	// the rubric's (Options.Raters).
	Rated int `json:"rated,omitempty"`
	// Failed, Recovered and Minor are shares of those runs: with an error
	// that got through; with none but an error a guard rail caught; with
	// only minor findings.
	Failed    float64 `json:"failed"`
	Recovered float64 `json:"recovered"`
	Minor     float64 `json:"minor"`
	Reason    string  `json:"reason"`
}

// Baseline is the age of the golden set's baselines.
type Baseline struct {
	Oldest   string `json:"oldest"` // the oldest last_verified date
	Newest   string `json:"newest"`
	AgeDays  int    `json:"age_days"` // days from Oldest to the report
	ValidFor int    `json:"valid_for_days"`
	Stale    bool   `json:"stale"` // Oldest is older than ValidFor, or a baseline was never verified
	// Unverified counts the cases without a last_verified date.
	Unverified int `json:"unverified,omitempty"`
	// StaleCases are the cases past their validity, oldest first.
	StaleCases []string `json:"stale_cases,omitempty"`
	// Alignment lists the cases whose two baseline tracks disagree
	// (replay.Case.CrossCheck): the agreed elements are the reference, the
	// others wait for the expert and the agent's owner to align them.
	Alignment []Alignment `json:"alignment,omitempty"`
	// Tracked counts the cases with two tracks.
	Tracked int `json:"tracked"`
}

// Alignment is a case whose baseline tracks disagree.
type Alignment struct {
	Case          string   `json:"case"`
	Disagreements []string `json:"disagreements"`
}

// Problem is a case with at least one failed run.
type Problem struct {
	Case     string          `json:"case"`
	Category replay.Category `json:"category"`
	Title    string          `json:"title,omitempty"`
	Screens  []string        `json:"screens"` // what failed, in the order of Hit.Screen's list
	Failed   int             `json:"failed_runs"`
	Runs     int             `json:"runs"`
	Causes   []string        `json:"causes"` // distinct causes of the failures
	Traces   []string        `json:"traces"` // the failed runs' traces
}

// RootCause aggregates hits by tag.
type RootCause struct {
	Tag string `json:"tag"`
	// Dimension is the dimension of its first hit.
	Dimension trace.Dimension `json:"dimension"`
	// Fix is the direction of the fix: which rule, config field or
	// knowledge-base gap (Fixes, Options.Fixes).
	Fix       Fix          `json:"fix"`
	Count     int          `json:"count"`
	Failed    int          `json:"failed"`
	Recovered int          `json:"recovered"`
	Minor     int          `json:"minor"`
	Cases     []string     `json:"cases"`
	Causes    []CauseCount `json:"causes"` // most frequent first
	// Unguarded says, from what the failed runs show, why no guard rail
	// caught them: a wrong intent the classifier was sure of, a turn that
	// asked for several things of which the agent did one. Empty when the
	// runs do not show it.
	Unguarded []string `json:"unguarded,omitempty"`
}

// CauseCount is how often one cause occurred.
type CauseCount struct {
	Cause string `json:"cause"`
	Count int    `json:"count"`
}

// RuleCount aggregates the guard's violations by rule.
type RuleCount struct {
	Rule      string          `json:"rule"`
	Dimension trace.Dimension `json:"dimension"`
	Tags      []string        `json:"tags,omitempty"`
	Enforced  int             `json:"enforced"`
	Shadow    int             `json:"shadow"` // found in shadow mode: not enforced
	Cases     []string        `json:"cases"`
}

// Report is the health of one replay.
type Report struct {
	Label      string           `json:"label"`
	Generated  time.Time        `json:"generated"`
	Metrics    replay.Metrics   `json:"metrics"`
	Rates      Rates            `json:"rates"`
	Dimensions []DimensionScore `json:"dimensions"`
	Weights    Weights          `json:"weights"`
	Total      float64          `json:"total"`  // 1 to 5
	Points     float64          `json:"points"` // 0 to 100
	Band       Band             `json:"band"`
	// Release is the verdict against the floor (Options.Floor): whether
	// the agent may ship, why, and what blocked it.
	Release  Release  `json:"release"`
	Baseline Baseline `json:"baseline"`
	// Shape says how the golden set departs from the method's shape
	// (replay.Shape), one sentence per departure; empty when it does not.
	Shape      []string    `json:"shape,omitempty"`
	Problems   []Problem   `json:"problems"`
	RootCauses []RootCause `json:"root_causes"`
	Violations []RuleCount `json:"violations"`
	Hits       []Hit       `json:"hits"`
	// Judge is the raters' opinion, nil without Options.Judge and
	// Options.Raters.
	Judge *JudgeReport `json:"judge,omitempty"`

	traces map[string]*trace.Trace // of failed runs, for the HTML timelines
	redact func(string) string     // Options.Redact
}

// Score returns a DimensionScore by dimension.
func (r *Report) Score(d trace.Dimension) DimensionScore {
	for _, s := range r.Dimensions {
		if s.Dimension == d {
			return s
		}
	}
	return DimensionScore{Dimension: d}
}

// Score screens and scores the runs of a replay of cases. It reads the
// guard's violations for those runs from v — the entries of the runs'
// trace ids logged while the run went on — or, when v is nil, from the
// gate steps of the runs' traces.
//
// Every run gets hits: the four hard filters (fabrication, cascade,
// amnesia, drift), the checks against its case (answer elements,
// trajectory, intent, tool-call budget), its errors and retries, and every
// guard violation. Each hit counts against a dimension with an outcome:
//
//	accuracy    fabrication, answer elements, the guard's accuracy findings
//	coherence   cascade, trajectory, intent, the guard's coherence findings
//	memory      amnesia (constraint losses), the guard's memory findings
//	stability   drift, agent errors and timeouts (failed), retries (minor), the guard's stability findings
//	efficiency  tool calls over the budget (failed) or over the trajectory (minor), the guard's efficiency findings
//
// Screens and checks fail, except these, which are minor: a constraint
// loss in a case with fewer than Options.AmnesiaLosses, a retry, and more
// tool calls than a strict or unordered trajectory has (within budget).
// Runs of cases not in cases are ignored. A guard finding of
// severity error or critical fails when it was found in shadow mode (the
// agent went on) and is recovered when it was enforced (or its verdict was
// Allow: the guard handled it, as with a recovered tool panic); one of
// severity warning or info is minor.
//
// Each run is scored in each dimension on the Rubric's anchors, from its
// hits there; a dimension's score is the mean over the runs — all runs,
// but for memory the runs of cases with constraints or memory hits; the
// total weighs the five with Options.Weights.
//
// With Options.Judge set, Score then asks the judge about each screened
// case — a case with a hit of a hard filter, or a failed hit — once, and
// records its verdicts, their cost and the judge's view of accuracy,
// coherence and memory in Report.Judge (see JudgeReport and JudgedScore).
// One judge alone changes no score, so that two reports of the same runs
// agree whatever it said; with two raters or more, their mean is the
// score of the runs they agreed on (Options.Raters). A judge call that fails,
// panics or answers with an invalid verdict (ParseRating) is recorded on
// its case and never fails Score; when ctx ends, the cases not yet asked
// are recorded as not judged.
func Score(ctx context.Context, cases []replay.Case, runs []replay.Run, v Violations, opts Options) (*Report, error) {
	weights := opts.Weights.orDefault()
	if err := weights.Validate(); err != nil {
		return nil, err
	}
	rubric := opts.Rubric.withDefaults()
	if err := rubric.validate(); err != nil {
		return nil, err
	}
	if opts.Floor != 0 {
		if err := CheckFloor(opts.Floor); err != nil {
			return nil, err
		}
	}
	raters := opts.raters()
	if err := validateRaters(raters); err != nil {
		return nil, err
	}
	if len(cases) == 0 {
		return nil, &Error{Op: "score", Err: ErrNoCases}
	}
	s := newScorer(cases, runs, opts)
	if len(s.runs) == 0 {
		return nil, &Error{Op: "score", Err: fmt.Errorf("%w: none of the %d runs is of one of the %d cases", ErrNoRuns, len(runs), len(cases))}
	}
	violations, err := s.violations(ctx, v)
	if err != nil {
		return nil, err
	}
	s.screen(violations)

	rep := &Report{Label: s.label, Generated: s.now, Weights: weights, Metrics: replay.Measure(cases, s.runs), traces: map[string]*trace.Trace{}, redact: opts.Redact}
	rep.Rates = s.rates()
	for _, d := range Dimensions {
		rep.Dimensions = append(rep.Dimensions, s.dimension(d, rubric, nil))
	}
	rep.Baseline = baseline(cases, s.now, opts.ValidFor)
	rep.Shape = replay.Shape(cases)
	rep.Hits = s.hits
	rep.Problems = s.problems()
	rep.Violations = ruleCounts(violations, s.caseOf)
	if len(raters) > 0 {
		var rated map[trace.Dimension]map[string]float64
		rep.Judge, rated = s.judge(ctx, rubric, rep.Dimensions, raters)
		for i, ds := range rep.Dimensions {
			if set := rated[ds.Dimension]; len(set) > 0 {
				rep.Dimensions[i] = s.dimension(ds.Dimension, rubric, set)
			}
		}
	}
	scores := map[trace.Dimension]float64{}
	for _, ds := range rep.Dimensions {
		scores[ds.Dimension] = ds.Score
	}
	rep.Total, rep.Points = weights.Total(scores)
	rep.Band = BandOf(rep.Points)
	rep.RootCauses = rootCauses(s.hits, opts.Fixes)
	limits := s.limits()
	for i := range rep.RootCauses {
		rep.RootCauses[i].Unguarded = limits[rep.RootCauses[i].Tag]
	}
	rep.Release = rep.release(opts.Floor)
	for _, h := range s.hits {
		if h.Outcome == Failed || (rep.Judge != nil && slices.Contains(hardFilters, h.Screen)) { // the runs linked to
			if r := s.byTrace[h.TraceID]; r != nil && r.Trace != nil {
				rep.traces[h.TraceID] = r.Trace
			}
		}
	}
	return rep, nil
}

type scorer struct {
	opts    Options
	label   string
	now     time.Time
	cases   []replay.Case
	caseIdx map[string]int
	runs    []replay.Run // runs of known cases, in the given order
	byTrace map[string]*replay.Run
	caseOf  map[string]string // trace id -> case id
	hits    []Hit
	// retrievers are the tools that returned documents in some run.
	retrievers map[string]bool
}

func newScorer(cases []replay.Case, runs []replay.Run, opts Options) *scorer {
	s := &scorer{opts: opts, label: opts.Label, now: opts.Now, cases: cases, caseIdx: map[string]int{},
		byTrace: map[string]*replay.Run{}, caseOf: map[string]string{}, retrievers: map[string]bool{}}
	if s.now.IsZero() {
		s.now = time.Now()
	}
	for i, c := range cases {
		s.caseIdx[c.ID] = i
	}
	for _, r := range runs {
		if _, ok := s.caseIdx[r.Case]; ok {
			s.runs = append(s.runs, r)
		}
	}
	for i := range s.runs {
		r := &s.runs[i]
		s.byTrace[r.TraceID] = r
		s.caseOf[r.TraceID] = r.Case
		if s.label == "" {
			s.label = r.Label
		}
		if r.Trace != nil {
			for _, st := range r.Trace.Steps {
				if ids, _ := docs(st); len(ids) > 0 {
					s.retrievers[st.Name] = true
				}
			}
		}
	}
	return s
}

// violations returns the guard's findings on the runs, from v or the traces.
func (s *scorer) violations(ctx context.Context, v Violations) ([]trace.Violation, error) {
	var out []trace.Violation
	if v == nil {
		for _, r := range s.runs {
			if r.Trace == nil {
				continue
			}
			for _, st := range r.Trace.Steps {
				if st.Kind == trace.KindGate && st.Finding != nil {
					out = append(out, trace.Violation{Time: st.Start, TraceID: r.TraceID, SessionID: r.Trace.SessionID, Finding: *st.Finding})
				}
			}
		}
		return out, nil
	}
	if len(s.runs) == 0 {
		return nil, nil
	}
	since := s.runs[0].Start
	for _, r := range s.runs {
		since = minTime(since, r.Start)
	}
	entries, err := v.Query(ctx, ledger.Query{Since: since.Add(-time.Second)})
	if err != nil {
		return nil, &Error{Op: "score", Err: err}
	}
	for _, e := range entries {
		r := s.byTrace[e.TraceID]
		// Only the entries logged while this run went on: a trace id may
		// be reused by a later replay into the same ledger.
		if r == nil || e.Time.Before(r.Start.Add(-time.Second)) || e.Time.After(r.Start.Add(r.Duration+time.Second)) {
			continue
		}
		out = append(out, e.Violation)
	}
	return out, nil
}

func minTime(a, b time.Time) time.Time {
	if b.Before(a) {
		return b
	}
	return a
}

// screen computes every hit.
func (s *scorer) screen(violations []trace.Violation) {
	kb := s.knowledge()
	byCase := map[string][]int{} // case id -> indexes into s.runs
	for i := range s.runs {
		byCase[s.runs[i].Case] = append(byCase[s.runs[i].Case], i)
	}
	for ci := range s.cases {
		c := &s.cases[ci]
		idx := byCase[c.ID]
		if len(idx) == 0 {
			continue
		}
		runs := make([]replay.Run, len(idx))
		checks := make([]replay.Check, len(idx))
		for j, i := range idx {
			runs[j] = s.runs[i]
			checks[j] = c.Check(&s.runs[i])
		}
		for j := range runs {
			r := &runs[j]
			s.add(fabrication(c, r, kb(r), s.retrievers)...)
			if slices.Contains(s.opts.CitationRoutes, c.Route) {
				s.add(uncited(c, r)...)
			}
			s.add(cascade(c, r)...)
			s.add(caseChecks(c, r, &checks[j])...)
			s.add(runChecks(c, r)...)
		}
		s.add(amnesia(c, runs, checks, s.amnesiaLosses())...)
		s.add(drift(c, runs, s.driftThreshold())...)
	}
	for _, v := range violations {
		h := violationHit(s.caseOf[v.TraceID], v)
		if r := s.byTrace[v.TraceID]; r != nil && r.Trace != nil && v.Step >= 0 && v.Step < len(r.Trace.Steps) {
			h.Turn = r.Trace.Steps[v.Step].Turn
		}
		s.add(h)
	}
}

func (s *scorer) add(hits ...Hit) { s.hits = append(s.hits, hits...) }

func (s *scorer) amnesiaLosses() int {
	if s.opts.AmnesiaLosses > 0 {
		return s.opts.AmnesiaLosses
	}
	return 2
}

func (s *scorer) driftThreshold() float64 {
	switch t := s.opts.DriftThreshold; {
	case t < 0:
		return 0
	case t == 0:
		return 0.25
	default:
		return t
	}
}

// knowledge returns the knowledge base for a run.
func (s *scorer) knowledge() func(r *replay.Run) *knowledgeBase {
	if len(s.opts.Knowledge) > 0 {
		kb := newKnowledgeBase(s.opts.Knowledge)
		return func(*replay.Run) *knowledgeBase { return kb }
	}
	return func(r *replay.Run) *knowledgeBase {
		var ds []Document
		if r.Trace != nil {
			for _, st := range r.Trace.Steps {
				ids, _ := docs(st)
				for _, id := range ids {
					ds = append(ds, Document{ID: id, Text: st.Result})
				}
			}
		}
		return newKnowledgeBase(ds)
	}
}

// rates computes the screening rates.
func (s *scorer) rates() Rates {
	var rt Rates
	runsWith := func(screen string) float64 {
		seen := map[string]bool{}
		for _, h := range s.hits {
			if h.Screen == screen && h.Outcome == Failed {
				seen[h.TraceID] = true
			}
		}
		if len(s.runs) == 0 {
			return 0
		}
		return float64(len(seen)) / float64(len(s.runs))
	}
	rt.Fabrication = runsWith("fabrication")
	rt.Cascade = runsWith("cascade")
	constrained, lost := 0, map[string]bool{}
	for _, r := range s.runs {
		if len(s.cases[s.caseIdx[r.Case]].Constraints) > 0 {
			constrained++
		}
	}
	for _, h := range s.hits {
		if h.Screen == "amnesia" {
			lost[h.TraceID] = true
		}
	}
	if constrained > 0 {
		rt.Amnesia = float64(len(lost)) / float64(constrained)
	}
	cases, drifting := map[string]bool{}, map[string]bool{}
	for _, r := range s.runs {
		cases[r.Case] = true
	}
	for _, h := range s.hits {
		if h.Screen == "drift" {
			drifting[h.Case] = true
		}
	}
	if len(cases) > 0 {
		rt.Drift = float64(len(drifting)) / float64(len(cases))
	}
	answerable, declined := 0, 0
	for _, r := range s.runs {
		if s.cases[s.caseIdx[r.Case]].Reference().Declines {
			continue
		}
		answerable++
		if n := len(r.Turns); n > 0 && (r.Turns[n-1].Status == guard.StatusRefused || r.Turns[n-1].Status == guard.StatusHandoff) {
			declined++
		}
	}
	if answerable > 0 {
		rt.OverRefusal = float64(declined) / float64(answerable)
	}
	return rt
}

// counted reports whether run r counts in dimension d: every run does,
// except in memory, where only the runs of cases with constraints or with
// memory hits count, since a case with nothing to remember says nothing
// about memory.
func (s *scorer) counted(d trace.Dimension, r *replay.Run, exercised map[string]bool) bool {
	return d != trace.Memory || exercised[r.Case] || len(s.cases[s.caseIdx[r.Case]].Constraints) > 0
}

// runHits counts the hits of every run in dimension d, by trace id, and
// returns the cases with a hit in it.
func (s *scorer) runHits(d trace.Dimension) (map[string]*RunHits, map[string]bool) {
	byRun := map[string]*RunHits{}
	exercised := map[string]bool{} // case ids
	for _, h := range s.hits {
		if h.Dimension != d {
			continue
		}
		exercised[h.Case] = true
		rh := byRun[h.TraceID]
		if rh == nil {
			rh = &RunHits{}
			byRun[h.TraceID] = rh
		}
		switch h.Outcome {
		case Failed:
			rh.Failed++
		case Recovered:
			rh.Recovered++
		case Minor:
			rh.Minor++
		}
	}
	return byRun, exercised
}

// dimension scores dimension d: each counted run on the rubric's anchors,
// except the runs set holds by trace id, which take set's score (the
// raters'), and the mean of them all.
func (s *scorer) dimension(d trace.Dimension, rubric Rubric, set map[string]float64) DimensionScore {
	byRun, exercised := s.runHits(d)
	ds := DimensionScore{Dimension: d}
	var scores []float64
	rated := 0
	var f, r, m int
	for i := range s.runs {
		run := &s.runs[i]
		if !s.counted(d, run, exercised) {
			continue
		}
		h := RunHits{}
		if rh := byRun[run.TraceID]; rh != nil {
			h = *rh
		}
		switch {
		case h.Failed > 0:
			f++
		case h.Recovered > 0:
			r++
		case h.Minor > 0:
			m++
		}
		h.Answered = run.Err == "" && !run.TimedOut && strings.TrimSpace(run.Final()) != ""
		score := float64(rubric.Score(h))
		if v, ok := set[run.TraceID]; ok {
			score = v
			rated++
		}
		scores = append(scores, score)
	}
	ds.Score, ds.ByScore, ds.Reason = meanScore(scores, rated)
	ds.Rated = rated
	if n := float64(len(scores)); n > 0 {
		ds.Failed, ds.Recovered, ds.Minor = float64(f)/n, float64(r)/n, float64(m)/n
	}
	return ds
}

// screenOrder orders Problem.Screens.
var screenOrder = []string{"fabrication", "cascade", "amnesia", "drift", "citation", "answer", "trajectory", "intent", "budget", "error", "retry", "violation"}

func (s *scorer) problems() []Problem {
	var out []Problem
	runsOf := map[string]int{}
	for _, r := range s.runs {
		runsOf[r.Case]++
	}
	for _, c := range s.cases {
		var p *Problem
		failedRuns := map[string]bool{}
		for _, h := range s.hits {
			if h.Case != c.ID || h.Outcome != Failed {
				continue
			}
			if p == nil {
				p = &Problem{Case: c.ID, Category: c.Category, Title: c.Title, Runs: runsOf[c.ID]}
			}
			if !slices.Contains(p.Screens, h.Screen) {
				p.Screens = append(p.Screens, h.Screen)
			}
			if !slices.Contains(p.Causes, h.Cause) {
				p.Causes = append(p.Causes, h.Cause)
			}
			if !failedRuns[h.TraceID] {
				failedRuns[h.TraceID] = true
				p.Traces = append(p.Traces, h.TraceID)
			}
		}
		if p == nil {
			continue
		}
		p.Failed = len(failedRuns)
		slices.SortFunc(p.Screens, func(a, b string) int {
			return cmp.Compare(slices.Index(screenOrder, a), slices.Index(screenOrder, b))
		})
		slices.Sort(p.Traces)
		out = append(out, *p)
	}
	return out
}

func rootCauses(hits []Hit, fixes map[string]Fix) []RootCause {
	byTag := map[string]*RootCause{}
	causes := map[string]map[string]int{}
	for _, h := range hits {
		rc := byTag[h.Tag]
		if rc == nil {
			rc = &RootCause{Tag: h.Tag, Dimension: h.Dimension, Fix: fixFor(fixes, h.Tag, h.Dimension)}
			byTag[h.Tag] = rc
			causes[h.Tag] = map[string]int{}
		}
		rc.Count++
		switch h.Outcome {
		case Failed:
			rc.Failed++
		case Recovered:
			rc.Recovered++
		default:
			rc.Minor++
		}
		if !slices.Contains(rc.Cases, h.Case) {
			rc.Cases = append(rc.Cases, h.Case)
		}
		causes[h.Tag][h.Cause]++
	}
	out := make([]RootCause, 0, len(byTag))
	for tag, rc := range byTag {
		for c, n := range causes[tag] {
			rc.Causes = append(rc.Causes, CauseCount{c, n})
		}
		slices.SortFunc(rc.Causes, func(a, b CauseCount) int { return cmp.Or(cmp.Compare(b.Count, a.Count), cmp.Compare(a.Cause, b.Cause)) })
		slices.Sort(rc.Cases)
		out = append(out, *rc)
	}
	slices.SortFunc(out, func(a, b RootCause) int {
		return cmp.Or(cmp.Compare(b.Failed, a.Failed), cmp.Compare(b.Count, a.Count), cmp.Compare(a.Tag, b.Tag))
	})
	return out
}

func ruleCounts(vs []trace.Violation, caseOf map[string]string) []RuleCount {
	by := map[string]*RuleCount{}
	for _, v := range vs {
		rc := by[v.Rule]
		if rc == nil {
			rc = &RuleCount{Rule: v.Rule, Dimension: v.Dimension}
			by[v.Rule] = rc
		}
		if v.Shadow {
			rc.Shadow++
		} else {
			rc.Enforced++
		}
		for _, t := range v.Tags {
			if !slices.Contains(rc.Tags, t) {
				rc.Tags = append(rc.Tags, t)
			}
		}
		if c := caseOf[v.TraceID]; c != "" && !slices.Contains(rc.Cases, c) {
			rc.Cases = append(rc.Cases, c)
		}
	}
	out := make([]RuleCount, 0, len(by))
	for _, rc := range by {
		slices.Sort(rc.Cases)
		out = append(out, *rc)
	}
	slices.SortFunc(out, func(a, b RuleCount) int {
		return cmp.Or(cmp.Compare(b.Enforced+b.Shadow, a.Enforced+a.Shadow), cmp.Compare(a.Rule, b.Rule))
	})
	return out
}

func baseline(cases []replay.Case, now time.Time, validFor time.Duration) Baseline {
	if validFor <= 0 {
		validFor = 90 * 24 * time.Hour
	}
	b := Baseline{ValidFor: int(validFor / (24 * time.Hour))}
	for _, c := range cases {
		if c.LastVerified == "" {
			b.Unverified++
			continue
		}
		if b.Oldest == "" || c.LastVerified < b.Oldest {
			b.Oldest = c.LastVerified
		}
		if c.LastVerified > b.Newest {
			b.Newest = c.LastVerified
		}
	}
	if t, err := time.Parse(replay.DateLayout, b.Oldest); err == nil {
		age := now.Sub(t)
		b.AgeDays = int(age / (24 * time.Hour))
		b.Stale = age > validFor
	}
	b.Stale = b.Stale || b.Unverified > 0
	for _, c := range replay.Stale(cases, now, validFor) {
		b.StaleCases = append(b.StaleCases, c.ID)
	}
	for i := range cases {
		if cases[i].Tracks == nil {
			continue
		}
		b.Tracked++
		if x := cases[i].CrossCheck(); len(x.Disagreements) > 0 {
			a := Alignment{Case: cases[i].ID}
			for _, d := range x.Disagreements {
				a.Disagreements = append(a.Disagreements, d.String())
			}
			b.Alignment = append(b.Alignment, a)
		}
	}
	return b
}

// Sentinel errors, matched with errors.Is.
var (
	// ErrWeights: the weights are negative, not numbers, or do not sum to 100.
	ErrWeights = errors.New("invalid weights")
	// ErrRubric: a rubric threshold is not a share in (0, 1].
	ErrRubric = errors.New("invalid rubric")
	// ErrNoCases: the golden set is empty; a health check of nothing
	// passes nothing.
	ErrNoCases = errors.New("no cases")
	// ErrNoRuns: no run of the golden set's cases finished.
	ErrNoRuns = errors.New("no runs")
	// ErrScores: a person's scores file is malformed (LoadScores).
	ErrScores = errors.New("invalid scores")
	// ErrRater: a Rater sets neither or both of Model and Scores.
	ErrRater = errors.New("invalid rater")
	// ErrReport: a report file is not a report (ReadReport).
	ErrReport = errors.New("invalid report")
	// ErrDimension: a name is not one of the five dimensions.
	ErrDimension = errors.New("invalid dimension")
	// ErrFloor: a release floor is not on the 100-point scale (CheckFloor).
	ErrFloor = errors.New("invalid floor")
	// ErrVerdict: a judge's answer is not a valid verdict (ParseRating).
	// It is the judge protocol's own sentinel, shared with guard/conteval.
	ErrVerdict = judge.ErrVerdict
)

// Error is the error type of package health.
type Error struct {
	Op  string // "weights", "dimensions", "floor", "rubric", "raters", "scores", "cases", "replay", "report", "score", "judge", "write"
	Err error
}

// Error returns "health: OP: ERR".
func (e *Error) Error() string { return "health: " + e.Op + ": " + e.Err.Error() }

// Unwrap returns e.Err.
func (e *Error) Unwrap() error { return e.Err }

// clip cuts s to n runes, marking the cut with "…".
func clip(s string, n int) string {
	s = strings.Join(strings.Fields(s), " ")
	r := []rune(s)
	if len(r) <= n {
		return s
	}
	return string(r[:n-1]) + "…"
}
