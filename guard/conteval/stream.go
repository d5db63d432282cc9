package conteval

import (
	"context"
	"hash/maphash"
	"iter"
	"maps"
	"math"
	"math/rand/v2"
	"slices"
	"time"

	"github.com/agentguard/agentguard/trace"
)

// A Round is one round of continuous evaluation over traces fed one at a
// time, in memory that does not grow with their number: Run holds every
// trace of a round at once (a million traces took 6.7 GB), a Round holds
// counts, a bounded set of candidates per route and the samples it keeps.
//
// Each trace is judged as it arrives when it falls in the head or a forced
// band known at once (error, low confidence, privilege): the assertions run
// on it, its outcome is counted, and it is kept only when red (up to
// Evaluator.KeepRed, with its trace, for cases and the ledger). The
// over-cost and tail bands need every cost of a route first: a Round keeps
// each route's costs in a log histogram (1% resolution) and its most
// expensive normal traces as candidates, and judges those at Finish.
//
// What differs from Run, by design:
//
//   - A route's percentile cost comes from the histogram, within 1% of
//     the exact one; over-cost traces beyond the candidates a route keeps
//     are counted in Streamed.OverCostUnsampled, not sampled.
//   - Duplicates are recognised among the traces a round samples (by a
//     64-bit hash of the id), not among the rest.
//   - Report.Samples holds the kept samples: red ones, the tail and
//     over-cost ones, and the head samples the judge may take; every
//     count covers all of them.
//
// A Round is not safe for concurrent use.
type Round struct {
	e          *Evaluator
	cfg        Config
	now        time.Time
	assertions []Assertion
	privileged func(*trace.Trace) bool
	rng        *rand.Rand
	seed       maphash.Seed
	seen       map[uint64]struct{} // ids of the traces sampled so far
	routes     map[string]*routeStream
	tally      *tally
	bands      map[Band]int
	traces     int
	duplicates int
	red        []SampleResult // kept red samples
	headKeep   int
	head       []SampleResult // lowest-key passed head samples, for the judge
	streamed   Streamed
}

// Streamed says what a Round's bounds left out of its report.
type Streamed struct {
	// RedDropped counts red samples judged and counted but not kept (past
	// Evaluator.KeepRed): they make no case and no ledger entry.
	RedDropped int `json:"red_dropped"`
	// OverCostUnsampled counts over-cost traces, read from the routes' cost
	// histograms, beyond the candidates each route keeps.
	OverCostUnsampled int `json:"over_cost_unsampled"`
}

// DefaultKeepRed is the default Evaluator.KeepRed.
const DefaultKeepRed = 1000

// candidatesPerRoute is how many of a route's most expensive normal traces
// a Round keeps for the over-cost and tail bands, besides TailPerRoute.
const candidatesPerRoute = 100

// Start begins a streamed round at time now (see Round).
func (e *Evaluator) Start(now time.Time) (*Round, error) {
	if err := e.Config.Validate(); err != nil {
		return nil, err
	}
	cfg := e.Config.withDefaults()
	cfg.Sampling = cfg.Sampling.withDefaults()
	assertions, names, err := e.assertions(cfg)
	if err != nil {
		return nil, err
	}
	r := &Round{
		e: e, cfg: cfg, now: now, assertions: assertions, privileged: privilege(assertions),
		seed: maphash.MakeSeed(), seen: map[uint64]struct{}{}, routes: map[string]*routeStream{},
		tally: newTally(names), bands: map[Band]int{},
	}
	if !cfg.Sampling.HashConsistent {
		r.rng = rand.New(rand.NewPCG(cfg.Sampling.Seed, streamKeys))
	}
	if e.Judge != nil && cfg.Judge.HeadShare > 0 {
		r.headKeep = cfg.Judge.MaxCalls
	}
	r.headKeep = max(r.headKeep, e.Review)
	return r, nil
}

// RunStream evaluates one round over the traces of seq, as Run does over a
// slice, in bounded memory (see Round). It stops at the first error seq
// yields and returns it.
func (e *Evaluator) RunStream(ctx context.Context, seq iter.Seq2[*trace.Trace, error], now time.Time) (*Report, error) {
	r, err := e.Start(now)
	if err != nil {
		return nil, err
	}
	for t, err := range seq {
		if err != nil {
			return nil, err
		}
		r.Add(t)
	}
	return r.Finish(ctx)
}

// Add feeds one trace to the round. A nil trace is ignored.
func (r *Round) Add(t *trace.Trace) {
	if t == nil {
		return
	}
	sc := r.cfg.Sampling
	s := Sample{Trace: t}
	s.Cost, s.Bands = forcedBands(t, sc.MinConfidence, r.privileged)
	if sc.HashConsistent {
		s.Key = HashKey(sc.Seed, t.ID)
	} else {
		s.Key = r.rng.Float64()
	}
	if s.Key < sc.HeadRate {
		s.Bands |= BandHead
	}
	if s.Bands != 0 {
		id := maphash.String(r.seed, t.ID)
		if _, dup := r.seen[id]; dup {
			r.duplicates++
			return
		}
		r.seen[id] = struct{}{}
	}
	r.traces++
	rs := r.routes[t.Route]
	if rs == nil {
		rs = &routeStream{hist: map[int32]int{}}
		r.routes[t.Route] = rs
	}
	rs.observe(s.Cost)
	if !s.Bands.Has(Forced) {
		rs.offer(candidate{s: s}, r.cfg.Sampling.TailPerRoute+candidatesPerRoute)
	}
	if s.Bands != 0 {
		res := assess(&s, r.assertions)
		r.record(&res, true)
		if !s.Bands.Has(Forced) {
			rs.judged(t, res)
		}
	}
}

// record counts one judged sample and keeps it if it is red, or one of the
// head samples the judge may take. counted is false for a sample whose
// outcome the tally has already (a head sample found over-cost at Finish).
func (r *Round) record(res *SampleResult, counted bool) {
	if counted {
		r.tally.add(res)
	}
	for _, b := range Bands() {
		if res.Bands.Has(b) {
			r.bands[b]++
		}
	}
	switch {
	case !res.Passed && len(r.red) < r.keepRed():
		r.red = append(r.red, *res)
	case !res.Passed:
		r.streamed.RedDropped++
	case res.Bands.Has(BandHead) && r.headKeep > 0:
		i, _ := slices.BinarySearchFunc(r.head, res.Key, func(s SampleResult, k float64) int { return cmpFloat(s.Key, k) })
		if i < r.headKeep {
			r.head = slices.Insert(r.head, i, *res)
			if len(r.head) > r.headKeep {
				r.head = r.head[:r.headKeep]
			}
		}
	}
}

func (r *Round) keepRed() int {
	if r.e.KeepRed > 0 {
		return r.e.KeepRed
	}
	return DefaultKeepRed
}

// Finish closes the round: it judges the over-cost and tail candidates,
// gates the counts and completes the report as Run does (judge, cases,
// ledger).
func (r *Round) Finish(ctx context.Context) (*Report, error) {
	sc := r.cfg.Sampling
	rep := &Report{
		Time: r.now.UTC(), ConfigVersion: r.cfg.Version, ConfigFingerprint: r.e.Config.Fingerprint(),
		Traces: r.traces, Duplicates: r.duplicates, Routes: map[string]RouteCost{},
		Streamed: &r.streamed,
	}
	names := slices.Sorted(maps.Keys(r.routes))
	var extra []SampleResult // tail and over-cost samples that passed
	for _, name := range names {
		rs := r.routes[name]
		rc := RouteCost{Traces: rs.n}
		if base, ok := sc.RouteCost[name]; ok {
			rc.Percentile = base
		} else {
			rc.Percentile = rs.percentile(sc.CostPercentile)
		}
		if sc.CostMultiplier > 0 {
			rc.Threshold = rc.Percentile * sc.CostMultiplier
		}
		rep.Routes[name] = rc
		over, tail := 0, 0
		for _, c := range rs.top { // most expensive first
			var b Band
			switch {
			case rc.Threshold > 0 && c.s.Cost > rc.Threshold:
				b, over = BandOverCost, over+1
			case tail < sc.TailPerRoute:
				b, tail = BandTail, tail+1
			default:
				continue
			}
			if c.res == nil {
				c.s.Bands |= b
				res := assess(&c.s, r.assertions)
				r.record(&res, true)
				if res.Passed {
					extra = append(extra, res)
				}
				continue
			}
			// Judged already, as a head sample: count the new band only.
			r.bands[b]++
			if c.res.Passed {
				res := *c.res
				res.Bands |= b
				extra = append(extra, res)
			}
		}
		if rc.Threshold > 0 {
			r.streamed.OverCostUnsampled += max(0, rs.above(rc.Threshold)-over)
		}
	}
	rep.Bands = map[Band]int{}
	for _, b := range Bands() {
		rep.Bands[b] = r.bands[b]
	}
	rep.Samples = slices.Concat(r.red, extra, r.head)
	r.tally.into(r.cfg, rep)
	return r.e.gate(ctx, r.cfg, rep)
}

func cmpFloat(a, b float64) int {
	switch {
	case a < b:
		return -1
	case a > b:
		return 1
	}
	return 0
}

// routeStream is what a Round keeps of one route: its costs as a log
// histogram, and its most expensive normal traces.
type routeStream struct {
	n    int
	zero int             // costs at or below zero
	hist map[int32]int   // bucket → count; bucket b holds costs in [g^b, g^(b+1))
	top  []*candidate    // most expensive first
	byID map[string]bool // ids in top
}

// candidate is a normal trace kept for the over-cost and tail bands, with
// its outcome when it was judged as a head sample.
type candidate struct {
	s   Sample
	res *SampleResult
}

// logGrowth is the log of the histogram's bucket ratio: costs are kept within 1%.
var logGrowth = math.Log(1.01)

func (rs *routeStream) observe(cost float64) {
	rs.n++
	if cost <= 0 || math.IsNaN(cost) {
		rs.zero++
		return
	}
	rs.hist[int32(math.Floor(math.Log(cost)/logGrowth))]++
}

// percentile returns the q-quantile of the route's costs, as percentile
// does on sorted costs, each cost read as its bucket's geometric middle.
func (rs *routeStream) percentile(q float64) float64 {
	if rs.n == 0 {
		return 0
	}
	h := q * float64(rs.n-1)
	at := func(rank int) float64 {
		if rank < rs.zero {
			return 0
		}
		seen := rs.zero
		for _, b := range slices.Sorted(maps.Keys(rs.hist)) {
			seen += rs.hist[b]
			if rank < seen {
				return math.Exp((float64(b) + 0.5) * logGrowth)
			}
		}
		return 0
	}
	i := int(h)
	lo := at(i)
	if i >= rs.n-1 {
		return lo
	}
	return lo + (h-float64(i))*(at(i+1)-lo)
}

// above counts the costs above x, by bucket.
func (rs *routeStream) above(x float64) int {
	n := 0
	for b, c := range rs.hist {
		if math.Exp(float64(b)*logGrowth) > x {
			n += c
		}
	}
	return n
}

// offer keeps c if it is among the route's k most expensive normal traces
// (ties broken by id, as Select does).
func (rs *routeStream) offer(c candidate, k int) {
	if k <= 0 {
		return
	}
	more := func(a, b *candidate) bool {
		if a.s.Cost != b.s.Cost {
			return a.s.Cost > b.s.Cost
		}
		return a.s.Trace.ID < b.s.Trace.ID
	}
	if len(rs.top) == k && !more(&c, rs.top[k-1]) {
		return
	}
	if rs.byID == nil {
		rs.byID = map[string]bool{}
	}
	if rs.byID[c.s.Trace.ID] {
		return
	}
	i := len(rs.top)
	for i > 0 && more(&c, rs.top[i-1]) {
		i--
	}
	rs.top = slices.Insert(rs.top, i, &c)
	rs.byID[c.s.Trace.ID] = true
	if len(rs.top) > k {
		delete(rs.byID, rs.top[k].s.Trace.ID)
		rs.top[k] = nil
		rs.top = rs.top[:k]
	}
}

// judged records the outcome of a candidate judged on arrival.
func (rs *routeStream) judged(t *trace.Trace, res SampleResult) {
	for _, c := range rs.top {
		if c.s.Trace == t {
			c.res = &res
			return
		}
	}
}
