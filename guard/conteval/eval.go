package conteval

import (
	"cmp"
	"context"
	"fmt"
	"iter"
	"math"
	"runtime"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/agentguard/agentguard/guard/internal/judge"
	"github.com/agentguard/agentguard/ledger"
	"github.com/agentguard/agentguard/trace"
	"github.com/tmc/langchaingo/llms"
)

// RulePrefix starts the ledger rule, and the regression case tag, of every
// assertion failure: "ce_" + the assertion's name.
const RulePrefix = "ce_"

// Ledger is where the evaluator files red samples, one violation per
// failed assertion. Entries lets it skip violations filed by an earlier
// round, so that evaluating a trace twice files it once. *badgerstore.Store
// implements it.
type Ledger interface {
	Append(ctx context.Context, v trace.Violation) (uint64, error)
	Entries(ctx context.Context, q ledger.Query) iter.Seq2[ledger.Entry, error]
}

// Evaluator runs rounds of continuous evaluation over production traces:
// sample (Select), assert (Assertions) on every sample, gate (Gate) the
// head sample's pass rate, optionally judge some samples with a model, and
// close the loop by turning red samples into regression cases and ledger
// violations.
//
// Set the fields before the first Run and do not change them while a Run
// is in progress; Run is then safe for concurrent use. The zero Evaluator
// runs the default configuration and assertions, with no judge and no
// ledger.
type Evaluator struct {
	// Config is the round's configuration; the zero value means defaults.
	Config Config
	// Assertions run on every sample. Nil means Defaults(Config.Assertions).
	// Names must be unique and not empty.
	Assertions []Assertion
	// Judge, when set, scores every red sample and a share of the head
	// sample (Config.Judge), and its cost is counted. Its verdicts are
	// reported beside the assertions', never merged into the pass rates.
	Judge llms.Model
	// JudgeTimeout bounds one judge call. Zero means one minute; negative,
	// no bound but the context's.
	JudgeTimeout time.Duration
	// Ledger, when set, receives one violation per failed assertion of
	// each red sample, with the rule "ce_" + the assertion's name.
	Ledger Ledger
	// History holds earlier rounds, oldest first (see ReadTrend). It gives
	// regression cases their route's recent pass rates and the new round's
	// trend point its version-change mark.
	History []TrendPoint
	// KeepRed bounds the red samples a streamed round (see Round) keeps
	// with their traces, for cases and the ledger; the rest are counted.
	// Zero means DefaultKeepRed.
	KeepRed int
	// Review is how many green head samples a round keeps, with their
	// traces, for a person's check (Report.ReviewItems): the method asks
	// for 20 a week. Zero means none beyond what the judge takes.
	Review int
}

// AssertionResult is one assertion's outcome on one sample.
type AssertionResult struct {
	Name    string  `json:"name"`
	Outcome Outcome `json:"outcome"`
}

// SampleResult is what the round found about one sample.
type SampleResult struct {
	TraceID   string  `json:"trace_id"`
	SessionID string  `json:"session_id,omitempty"`
	Route     string  `json:"route,omitempty"`
	Bands     Band    `json:"bands"`
	Cost      float64 `json:"cost"`
	Key       float64 `json:"key"`
	// Passed is false when an assertion failed: the sample is red.
	Passed bool `json:"passed"`
	// Results holds one outcome per assertion, in the evaluator's order.
	Results []AssertionResult `json:"assertions"`
	// Judge is the judge model's score, when it scored this sample.
	Judge *JudgeResult `json:"judge,omitempty"`
	// Trace is the sampled trace.
	Trace *trace.Trace `json:"-"`
}

// Failed returns the outcomes of the assertions that failed.
func (s *SampleResult) Failed() []AssertionResult {
	var out []AssertionResult
	for _, r := range s.Results {
		if r.Outcome.Status == Fail {
			out = append(out, r)
		}
	}
	return out
}

// AssertionStats counts one assertion's outcomes over a round.
type AssertionStats struct {
	Name string `json:"name"`
	// Applied counts the samples it applied to (not skipped), Failed those
	// it failed, over all samples; HeadApplied and HeadFailed over the head
	// sample only.
	Applied     int `json:"applied"`
	Failed      int `json:"failed"`
	Skipped     int `json:"skipped"`
	HeadApplied int `json:"head_applied"`
	HeadFailed  int `json:"head_failed"`
}

// Rate returns the share of applied samples that passed, and false when
// the assertion applied to none.
func (a AssertionStats) Rate() (float64, bool) {
	if a.Applied == 0 {
		return 0, false
	}
	return float64(a.Applied-a.Failed) / float64(a.Applied), true
}

// Count is a number of passes out of a number of samples.
type Count struct {
	N      int `json:"n"`
	Passes int `json:"passes"`
}

// Rate returns Passes/N, and false when N is 0.
func (c Count) Rate() (float64, bool) {
	if c.N == 0 {
		return 0, false
	}
	return float64(c.Passes) / float64(c.N), true
}

func (c *Count) add(pass bool) {
	c.N++
	if pass {
		c.Passes++
	}
}

// RouteCounts are one route's pass counts in a round: over its head
// samples and over all its samples.
type RouteCounts struct {
	Head Count `json:"head"`
	All  Count `json:"all"`
}

// JudgeStats sums up the judge model's work in a round.
type JudgeStats struct {
	// Calls counts the calls made; Errors those that failed or gave no
	// verdict; Left counts candidates not judged because of MaxCalls.
	Calls  int `json:"calls"`
	Errors int `json:"errors"`
	Left   int `json:"left"`
	// Red counts the red samples judged: Confirmed those the judge failed
	// too (a score below the pass score), Disputed those it passed (a
	// false alarm of the assertions, or of the judge).
	Red       int `json:"red"`
	Confirmed int `json:"confirmed"`
	Disputed  int `json:"disputed"`
	// Head counts the passing head samples judged; Missed those the judge
	// failed: failures the assertions do not catch.
	Head   int `json:"head"`
	Missed int `json:"missed"`
	// Tokens and cost of all calls.
	TokensIn  int     `json:"tokens_in"`
	TokensOut int     `json:"tokens_out"`
	Cost      float64 `json:"cost"`
}

// RoundCost is what a round cost: samples × the cost of each, plus the
// judge's calls.
type RoundCost struct {
	Samples    int     `json:"samples"`
	PerSample  float64 `json:"per_sample"`
	JudgeCalls int     `json:"judge_calls"`
	Judge      float64 `json:"judge"`
	Total      float64 `json:"total"`
}

// Report is the outcome of one round.
type Report struct {
	Time              time.Time `json:"time"`
	ConfigVersion     string    `json:"config_version"`
	ConfigFingerprint string    `json:"config_fingerprint"`
	// Traces counts the traces considered, Duplicates those left out for a
	// repeated id.
	Traces     int `json:"traces"`
	Duplicates int `json:"duplicates"`
	// Bands counts the samples holding each single band; a sample taken
	// for several reasons counts under each. HeadAdded counts the head
	// samples in no forced band: those the head sampler added.
	Bands     map[Band]int `json:"bands"`
	HeadAdded int          `json:"head_added"`
	// Routes is the over-cost band's view of each route.
	Routes map[string]RouteCost `json:"routes"`
	// Samples holds every sample's results, in input order. A streamed
	// round (see Round) keeps only some: its red samples up to KeepRed,
	// the tail and over-cost ones and the head samples its judge may take;
	// the counts (All, Head, Assertions, Cost) cover every sample.
	Samples []SampleResult `json:"samples"`
	// Assertions counts each assertion's outcomes, in the evaluator's order.
	Assertions []AssertionStats `json:"assertion_stats"`
	// Head is the pass rate over the head sample only: the unbiased
	// production level, the one the gate's verdict is taken on. All is the
	// pass rate over every sample: the density of problems, risk bands
	// included, for ranking work. They are never merged; All's Verdict
	// is what the gate would say of it, for reading only.
	Head Estimate `json:"head"`
	All  Estimate `json:"all"`
	// RouteCounts are the pass counts of each route.
	RouteCounts map[string]RouteCounts `json:"route_counts"`
	// CitationDomains counts the citation defects (citations-retrieved
	// failures) by the domain of the cited document (DocDomain), most
	// first: which part of the knowledge base answers cite wrongly.
	CitationDomains []DomainCount `json:"citation_domains,omitempty"`
	// Verdict is Head.Verdict, or Red when Privilege is not zero.
	Verdict Light `json:"verdict"`
	// Privilege counts the traces in which a tool outside the allow-list
	// ran (BandPrivilege). Each is sampled and red, and one is enough to
	// make the verdict Red, whatever the pass rate: a privilege violation
	// blocks a release by itself.
	Privilege int `json:"privilege"`
	// Warnings say what makes the round's verdict less than it seems: an
	// assertion that applied to no sample (its config is probably missing,
	// so it checked nothing). A command prints them.
	Warnings []string  `json:"warnings,omitempty"`
	Cost     RoundCost `json:"cost"`
	// Judge is set when the evaluator had a judge model.
	Judge *JudgeStats `json:"judge,omitempty"`
	// Cases are the regression cases made from red samples, one per red
	// sample; Uncased counts the red samples that could not become a case
	// (no user turn to replay).
	Cases   []Case `json:"cases"`
	Uncased int    `json:"uncased"`
	// Filed counts the violations appended to the ledger; AlreadyFiled
	// those skipped because an earlier round filed them.
	Filed        int `json:"filed"`
	AlreadyFiled int `json:"already_filed"`
	// Human is a person's check of an earlier round's green samples
	// (AddHumanCheck), nil when none was read.
	Human *HumanCheck `json:"human_check,omitempty"`
	// Trend is this round's trend point, marked against History.
	Trend TrendPoint `json:"trend"`
	// Streamed is set on a report made by a Round: what its bounds left
	// out.
	Streamed *Streamed `json:"streamed,omitempty"`
}

// Red returns the samples that failed an assertion.
func (r *Report) Red() []*SampleResult {
	var out []*SampleResult
	for i := range r.Samples {
		if !r.Samples[i].Passed {
			out = append(out, &r.Samples[i])
		}
	}
	return out
}

// GateLine is the one-line summary of the round: the head pass rate with
// both intervals, the verdict, and the round's cost and config version.
func (r *Report) GateLine() string {
	h := r.Head
	c := r.Cost
	reason := h.Reason()
	if hc := r.Human; hc != nil && len(hc.Wrong) > 0 {
		reason = fmt.Sprintf("a person found %d of %d green samples wrong; %s", len(hc.Wrong), hc.Checked, reason)
	}
	if r.Privilege > 0 {
		reason = fmt.Sprintf("%d traces ran a tool outside the allow-list; %s", r.Privilege, reason)
	}
	return fmt.Sprintf("gate: %s %.3f (%d/%d), %g%% CI bootstrap %v Wilson %v → %s (%s) · cost %.6f = %d samples × %.6f + %d judge calls %.6f · config %s",
		"head pass rate", h.Rate, h.Passes, h.N, math.Round(h.Level*1000)/10, h.Bootstrap, h.Wilson, verdictWord(r.Verdict), reason,
		c.Total, c.Samples, c.PerSample, c.JudgeCalls, c.Judge, r.ConfigVersion)
}

// privilege returns the predicate that forces a trace into BandPrivilege:
// the allow-list assertion among assertions fails on it. Nil when there is
// no such assertion.
func privilege(assertions []Assertion) func(*trace.Trace) bool {
	for _, a := range assertions {
		if a.Name() == NameAllowedTools {
			return func(t *trace.Trace) bool {
				o := a.Check(t)
				return o.status() == Fail
			}
		}
	}
	return nil
}

// warnings lists the assertions that applied to no sample.
func warnings(stats []AssertionStats) []string {
	var out []string
	for _, st := range stats {
		if st.Applied == 0 {
			out = append(out, fmt.Sprintf("assertion %q applied to no sample: it checked nothing this round (is its config missing?)", st.Name))
		}
	}
	return out
}

func verdictWord(v Light) string {
	switch v {
	case Green:
		return "GREEN"
	case Yellow:
		return "YELLOW"
	case Red:
		return "RED"
	}
	return "NOT ENOUGH SAMPLES"
}

// Run evaluates one round over traces at time now: it samples them,
// runs every assertion on every sample (in parallel across samples), gates
// the head sample's pass rate, judges red samples and a share of the head
// sample when a judge is set, makes a regression case of each red sample
// and files its failures in the ledger. A judge call that fails is
// recorded on the sample and does not stop the round; a ledger error does,
// after the report is complete, and is returned with it. Cancelling ctx
// stops judge calls and ledger appends.
func (e *Evaluator) Run(ctx context.Context, traces []*trace.Trace, now time.Time) (*Report, error) {
	if err := e.Config.Validate(); err != nil {
		return nil, err
	}
	cfg := e.Config.withDefaults()
	assertions, names, err := e.assertions(cfg)
	if err != nil {
		return nil, err
	}

	sel := selectRound(traces, cfg.Sampling, privilege(assertions))
	rep := &Report{
		Time: now.UTC(), ConfigVersion: cfg.Version, ConfigFingerprint: e.Config.Fingerprint(),
		Traces: sel.Traces, Duplicates: sel.Duplicates, Routes: sel.Routes,
		Bands: map[Band]int{}, RouteCounts: map[string]RouteCounts{},
		Samples: make([]SampleResult, len(sel.Samples)),
	}
	for _, b := range Bands() {
		rep.Bands[b] = sel.Count(b)
	}
	check(sel.Samples, rep.Samples, assertions)
	t := newTally(names)
	for i := range rep.Samples {
		t.add(&rep.Samples[i])
	}
	t.into(cfg, rep)
	return e.gate(ctx, cfg, rep)
}

// assertions returns the round's assertions and their names, which must
// be set and distinct.
func (e *Evaluator) assertions(cfg Config) ([]Assertion, []string, error) {
	assertions := e.Assertions
	if assertions == nil {
		assertions = Defaults(cfg.Assertions)
	}
	names := make([]string, len(assertions))
	for i, a := range assertions {
		names[i] = a.Name()
		if names[i] == "" || slices.Contains(names[:i], names[i]) {
			return nil, nil, &Error{Op: "run", Err: fmt.Errorf("%w: assertion %d has an empty or repeated name %q", ErrConfig, i, names[i])}
		}
	}
	return assertions, names, nil
}

// tally counts samples as they are judged: per assertion, on the head and
// on every sample, per route. It keeps counts only, so a stream of any
// length costs it the same.
type tally struct {
	stats     []AssertionStats
	head, all Count
	routes    map[string]RouteCounts
	headAdded int
	citations map[string]int // citation defects by document domain
}

func newTally(names []string) *tally {
	t := &tally{stats: make([]AssertionStats, len(names)), routes: map[string]RouteCounts{}}
	for i := range t.stats {
		t.stats[i].Name = names[i]
	}
	return t
}

func (t *tally) add(s *SampleResult) {
	inHead := s.Bands.Has(BandHead)
	if inHead && !s.Bands.Has(Forced) {
		t.headAdded++
	}
	for j, r := range s.Results {
		st := &t.stats[j]
		switch r.Outcome.Status {
		case Skip:
			st.Skipped++
			continue
		case Fail:
			st.Failed++
			if inHead {
				st.HeadFailed++
			}
			if r.Name == NameCitationsRetrieved {
				if t.citations == nil {
					t.citations = map[string]int{}
				}
				t.citations[DocDomain(r.Outcome.Finding.Evidence)]++
			}
		}
		st.Applied++
		if inHead {
			st.HeadApplied++
		}
	}
	t.all.add(s.Passed)
	rc := t.routes[s.Route]
	rc.All.add(s.Passed)
	if inHead {
		t.head.add(s.Passed)
		rc.Head.add(s.Passed)
	}
	t.routes[s.Route] = rc
}

// into writes the counts into rep, gated by cfg.
func (t *tally) into(cfg Config, rep *Report) {
	rep.Assertions, rep.RouteCounts, rep.HeadAdded = t.stats, t.routes, t.headAdded
	for d, n := range t.citations {
		rep.CitationDomains = append(rep.CitationDomains, DomainCount{Domain: d, Defects: n})
	}
	slices.SortFunc(rep.CitationDomains, func(a, b DomainCount) int {
		return cmp.Or(cmp.Compare(b.Defects, a.Defects), strings.Compare(a.Domain, b.Domain))
	})
	rep.Head = cfg.Gate.Judge(t.head.Passes, t.head.N)
	rep.All = cfg.Gate.Judge(t.all.Passes, t.all.N)
}

// gate sets the verdict, the privilege count and the warnings of a report
// whose counts are in, then finishes it.
func (e *Evaluator) gate(ctx context.Context, cfg Config, rep *Report) (*Report, error) {
	rep.Verdict = rep.Head.Verdict
	rep.Privilege = rep.Bands[BandPrivilege]
	if rep.Privilege > 0 {
		rep.Verdict = Red
	}
	rep.Warnings = warnings(rep.Assertions)
	return rep, e.finish(ctx, cfg, rep)
}

// finish completes a report whose samples and counts are in: the judge,
// the cost, the trend point, the regression cases and the ledger.
func (e *Evaluator) finish(ctx context.Context, cfg Config, rep *Report) error {
	if e.Judge != nil {
		rep.Judge = e.judge(ctx, cfg, rep)
	}
	rep.Cost = RoundCost{Samples: rep.All.N, PerSample: cfg.CostPerSample} // every sample judged, kept or not
	if rep.Judge != nil {
		rep.Cost.JudgeCalls, rep.Cost.Judge = rep.Judge.Calls, rep.Judge.Cost
	}
	rep.Cost.Total = float64(rep.Cost.Samples)*rep.Cost.PerSample + rep.Cost.Judge

	rep.Trend = rep.trendPoint(e.History)
	history := append(slices.Clip(e.History), rep.Trend)
	if len(history) > cfg.HistoryRounds {
		history = history[len(history)-cfg.HistoryRounds:]
	}
	for _, s := range rep.Red() {
		if c, ok := newCase(s, rep, refusalTexts(cfg.Assertions), routeHistory(history, s.Route)); ok {
			rep.Cases = append(rep.Cases, c)
		} else {
			rep.Uncased++
		}
	}
	if e.Ledger != nil {
		return e.file(ctx, rep)
	}
	return nil
}

// check runs the assertions on every sample, spreading the samples over
// the available CPUs; results[i] belongs to samples[i].
func check(samples []Sample, results []SampleResult, assertions []Assertion) {
	one := func(i int) { results[i] = assess(&samples[i], assertions) }
	workers := min(runtime.GOMAXPROCS(0), len(samples)/64+1)
	if workers <= 1 {
		for i := range samples {
			one(i)
		}
		return
	}
	var wg sync.WaitGroup
	chunk := (len(samples) + workers - 1) / workers
	for lo := 0; lo < len(samples); lo += chunk {
		hi := min(lo+chunk, len(samples))
		wg.Go(func() {
			for i := lo; i < hi; i++ {
				one(i)
			}
		})
	}
	wg.Wait()
}

// assess runs the assertions on one sample.
func assess(s *Sample, assertions []Assertion) SampleResult {
	r := SampleResult{
		TraceID: s.Trace.ID, SessionID: s.Trace.SessionID, Route: s.Trace.Route,
		Bands: s.Bands, Cost: s.Cost, Key: s.Key, Passed: true, Trace: s.Trace,
		Results: make([]AssertionResult, len(assertions)),
	}
	for j, a := range assertions {
		o := a.Check(s.Trace)
		o.Status = o.status()
		if o.Status == Fail {
			r.Passed = false
			o.Finding.Rule = RulePrefix + a.Name()
		}
		r.Results[j] = AssertionResult{Name: a.Name(), Outcome: o}
	}
	return r
}

// judge scores the red samples, then the head samples whose key is below
// HeadRate × HeadShare (at least one), up to MaxCalls calls.
func (e *Evaluator) judge(ctx context.Context, cfg Config, rep *Report) *JudgeStats {
	st := &JudgeStats{}
	var red, head []*SampleResult
	for i := range rep.Samples {
		s := &rep.Samples[i]
		if !s.Passed {
			red = append(red, s)
		}
	}
	if share := cfg.Judge.HeadShare; share > 0 {
		var candidates []*SampleResult
		for i := range rep.Samples {
			if s := &rep.Samples[i]; s.Bands.Has(BandHead) && s.Passed {
				candidates = append(candidates, s)
			}
		}
		slices.SortFunc(candidates, func(a, b *SampleResult) int {
			return byKey(&Sample{Key: a.Key, Trace: a.Trace}, &Sample{Key: b.Key, Trace: b.Trace})
		})
		cut := cfg.Sampling.HeadRate * share
		for i, s := range candidates {
			if i == 0 || s.Key < cut {
				head = append(head, s)
			}
		}
	}
	opts := judge.Options{Timeout: e.JudgeTimeout, Cost: cfg.Judge.Pricing().Cost}
	calls := 0
	for _, s := range append(red, head...) {
		if calls == cfg.Judge.MaxCalls || ctx.Err() != nil {
			st.Left++
			continue
		}
		calls++
		jr := judgeSample(ctx, e.Judge, opts, cfg.Judge.PassScore, s.Trace, s.Failed())
		s.Judge = &jr
		st.Calls++
		st.TokensIn += jr.TokensIn
		st.TokensOut += jr.TokensOut
		st.Cost += jr.Cost
		if jr.Err != "" {
			st.Errors++
			continue
		}
		if !s.Passed {
			st.Red++
			if jr.Pass {
				st.Disputed++
			} else {
				st.Confirmed++
			}
		} else {
			st.Head++
			if !jr.Pass {
				st.Missed++
			}
		}
	}
	return st
}

// file appends the failures of red samples to the ledger, skipping those
// an earlier round filed (same trace id and rule).
func (e *Evaluator) file(ctx context.Context, rep *Report) error {
	filed := map[string]map[string]bool{} // rule -> trace ids already in the ledger
	for _, s := range rep.Red() {
		for _, f := range s.Failed() {
			rule := f.Outcome.Finding.Rule
			if filed[rule] == nil {
				filed[rule] = map[string]bool{}
				for entry, err := range e.Ledger.Entries(ctx, ledger.Query{Rule: rule}) {
					if err != nil {
						return &Error{Op: "ledger", Err: err}
					}
					filed[rule][entry.TraceID] = true
				}
			}
			if filed[rule][s.TraceID] {
				rep.AlreadyFiled++
				continue
			}
			v := trace.Violation{Time: rep.Time, TraceID: s.TraceID, SessionID: s.SessionID, Finding: f.Outcome.Finding}
			if _, err := e.Ledger.Append(ctx, v); err != nil {
				return &Error{Op: "ledger", Err: err}
			}
			filed[rule][s.TraceID] = true
			rep.Filed++
		}
	}
	return nil
}

// DomainCount is how many citation defects cite documents of one domain.
type DomainCount struct {
	Domain  string `json:"domain"`
	Defects int    `json:"defects"`
}

// DocDomain returns the domain of a document id: the id without its last
// part, the parts split at '-', '_', '/', ':' or '.' ("KB-RET-04" is in
// "KB-RET", "policies/returns/7" in "policies/returns"); an id of one part
// is its own domain, and "" is "(none)".
func DocDomain(id string) string {
	id = strings.TrimSpace(id)
	if id == "" {
		return "(none)"
	}
	if i := strings.LastIndexAny(id, "-_/:."); i > 0 {
		return id[:i]
	}
	return id
}
