package conteval

import (
	"cmp"
	"encoding/binary"
	"fmt"
	"hash/maphash"
	"math/rand/v2"
	"slices"
	"strings"

	"github.com/agentguard/agentguard/trace"
)

// Band is a reason a trace was sampled. A Band value is a set: a sample
// taken for several reasons holds all of them.
type Band uint8

// The bands. The first three are forced: every trace in them is sampled.
const (
	// BandError: a step of the trace ended in an error.
	BandError Band = 1 << iota
	// BandLowConfidence: an intent step (Step.Intent set) has a Confidence
	// below Sampling.MinConfidence.
	BandLowConfidence
	// BandOverCost: the trace cost more than its route's percentile cost
	// times Sampling.CostMultiplier.
	BandOverCost
	// BandHead: taken by the head sampler, an unbiased share of all traces.
	BandHead
	// BandTail: one of its route's Sampling.TailPerRoute most expensive
	// normal traces.
	BandTail
	// BandPrivilege: a tool outside the allow-list ran (the allow-list
	// assertion failed on the trace). Such a trace is always sampled,
	// whatever the rates, and fails the round's gate by itself (see
	// Report.Privilege).
	BandPrivilege
)

// Forced holds the forced bands.
const Forced = BandError | BandLowConfidence | BandOverCost | BandPrivilege

var bandNames = []struct {
	b    Band
	name string
}{
	{BandPrivilege, "privilege"},
	{BandError, "error"},
	{BandLowConfidence, "low-confidence"},
	{BandOverCost, "over-cost"},
	{BandHead, "head"},
	{BandTail, "tail"},
}

// Bands returns the single bands, forced ones first.
func Bands() []Band {
	out := make([]Band, len(bandNames))
	for i, bn := range bandNames {
		out[i] = bn.b
	}
	return out
}

// Has reports whether b holds any of the bands in x.
func (b Band) Has(x Band) bool { return b&x != 0 }

// String names the bands of b joined by "+", as "error+head"; "" when b
// holds none.
func (b Band) String() string {
	var names []string
	for _, bn := range bandNames {
		if b.Has(bn.b) {
			names = append(names, bn.name)
		}
	}
	return strings.Join(names, "+")
}

// MarshalText returns b.String().
func (b Band) MarshalText() ([]byte, error) { return []byte(b.String()), nil }

// UnmarshalText parses what MarshalText writes.
func (b *Band) UnmarshalText(text []byte) error {
	*b = 0
	if len(text) == 0 {
		return nil
	}
	for name := range strings.SplitSeq(string(text), "+") {
		i := slices.IndexFunc(bandNames, func(bn struct {
			b    Band
			name string
		}) bool {
			return bn.name == name
		})
		if i < 0 {
			return fmt.Errorf("unknown band %q", name)
		}
		*b |= bandNames[i].b
	}
	return nil
}

// Sample is one sampled trace.
type Sample struct {
	Trace *trace.Trace
	// Bands are the reasons it was taken.
	Bands Band
	// Cost is the trace's cost: the sum of its steps' Cost.
	Cost float64
	// Key is the head sampler's key for the trace, uniform in [0, 1): the
	// head sampler takes the traces whose Key is below Sampling.HeadRate.
	Key float64
}

// RouteCost is how the over-cost band judged one route.
type RouteCost struct {
	// Traces counts the route's traces in the round.
	Traces int `json:"traces"`
	// Percentile is the route's Sampling.CostPercentile cost: computed
	// from the round's traces, or taken from Sampling.RouteCost.
	Percentile float64 `json:"percentile"`
	// Threshold is Percentile × Sampling.CostMultiplier: a trace costing
	// more is forced. Zero means the band could not fire on the route.
	Threshold float64 `json:"threshold"`
}

// Selection is the outcome of Select.
type Selection struct {
	// Samples are the sampled traces, one per trace id, in input order.
	Samples []Sample
	// Traces counts the traces considered: the input, less nil traces and
	// repeated ids.
	Traces int
	// Duplicates counts the traces left out because an earlier trace had
	// the same id.
	Duplicates int
	// Routes describes the over-cost band's view of each route; the route
	// "" gathers traces without one.
	Routes map[string]RouteCost
}

// Count returns how many samples hold any of the bands in b. A sample
// taken for several reasons counts under each.
func (s *Selection) Count(b Band) int {
	n := 0
	for i := range s.Samples {
		if s.Samples[i].Bands.Has(b) {
			n++
		}
	}
	return n
}

// Cost returns what a trace cost: the sum of its steps' Cost.
func Cost(t *trace.Trace) float64 {
	var c float64
	for _, s := range t.Steps {
		c += s.Cost
	}
	return c
}

// HashKey returns the head sampler's key for a trace id when
// Sampling.HashConsistent is set: a uniform number in [0, 1) that depends
// only on seed and id. It is FNV-1a (64 bits) over the seed's eight
// little-endian bytes and then the id's bytes, finished with SplitMix64's
// mixer, its top 53 bits scaled to [0, 1). The function is part of the
// format: changing it would change every subset.
func HashKey(seed uint64, id string) float64 {
	const offset, prime = 14695981039346656037, 1099511628211
	h := uint64(offset)
	var sb [8]byte
	binary.LittleEndian.PutUint64(sb[:], seed)
	for _, c := range sb {
		h = (h ^ uint64(c)) * prime
	}
	for i := 0; i < len(id); i++ {
		h = (h ^ uint64(id[i])) * prime
	}
	h = (h ^ (h >> 30)) * 0xbf58476d1ce4e5b9
	h = (h ^ (h >> 27)) * 0x94d049bb133111eb
	h ^= h >> 31
	return float64(h>>11) / (1 << 53)
}

// streamKeys is the second word of the PCG state for head keys, so that
// they never coincide with the bootstrap's stream for the same seed.
const streamKeys = 0x6865616473616d70 // "headsamp"

// Select chooses the traces of one round, in three steps:
//
//  1. Forced bands: every trace with an error (BandError), an intent
//     confidence below MinConfidence (BandLowConfidence), or a cost above
//     its route's CostPercentile cost × CostMultiplier (BandOverCost).
//  2. Head: every trace whose key is below HeadRate (BandHead), and at least
//     the trace with the smallest key. Keys are uniform in [0, 1): drawn in
//     input order from a PCG generator seeded with Seed, or, with
//     HashConsistent, HashKey(Seed, id). The head sampler looks at every
//     trace, forced or not, so the head sample is an unbiased sample of
//     the whole round; it adds to the sample only the normal traces it
//     takes. A lower HeadRate takes a subset of what a higher one takes.
//  3. Tail: per route, the TailPerRoute most expensive normal traces —
//     those in no forced band — ties broken by id (BandTail).
//
// Traces are deduplicated by id: the first trace with an id is used, later
// ones are counted in Duplicates; a trace chosen for several reasons is one
// sample holding all its bands. The result depends only on the traces, in
// their order, and cfg: the same input gives the same selection.
func Select(traces []*trace.Trace, cfg Sampling) *Selection {
	return selectRound(traces, cfg, nil)
}

// selectRound is Select with privileged, when not nil, forcing the traces
// it reports into BandPrivilege.
func selectRound(traces []*trace.Trace, cfg Sampling, privileged func(*trace.Trace) bool) *Selection {
	cfg = cfg.withDefaults()
	sel := &Selection{Routes: map[string]RouteCost{}}
	infos, routeNames, routeCosts, dups := sampleInfos(traces, cfg, privileged)
	sel.Duplicates = dups
	sel.Traces = len(infos)
	if len(infos) == 0 {
		return sel
	}
	thresholds := overCostThresholds(routeNames, routeCosts, cfg, sel.Routes)
	markOverCostAndHead(infos, thresholds, cfg.HeadRate)
	if n := cfg.TailPerRoute; n > 0 {
		markTail(infos, traces, len(routeNames), n)
	}
	for i := range infos {
		if in := &infos[i]; in.bands != 0 {
			sel.Samples = append(sel.Samples, Sample{Trace: traces[in.idx], Bands: in.bands, Cost: in.cost, Key: in.key})
		}
	}
	return sel
}

// sampleInfo is what the sampler keeps of a trace; it holds no pointers,
// so a million of them cost the garbage collector nothing.
type sampleInfo struct {
	cost  float64
	key   float64
	idx   int32 // into traces
	route int32
	bands Band
}

// sampleInfos returns what the sampler keeps of each trace of the round,
// in input order — its cost, head key, route and forced bands — leaving
// out nil traces and repeated ids; the routes in the order they first
// appear, with the costs of their traces; and how many traces repeated an
// earlier id.
func sampleInfos(traces []*trace.Trace, cfg Sampling, privileged func(*trace.Trace) bool) ([]sampleInfo, []string, [][]float64, int) {
	infos := make([]sampleInfo, 0, len(traces))
	var routeNames []string
	var routeCosts [][]float64
	dups := 0
	dup := duplicates(traces)
	routeIndex := map[string]int32{}
	var rng *rand.Rand
	if !cfg.HashConsistent {
		rng = rand.New(rand.NewPCG(cfg.Seed, streamKeys))
	}
	for i, t := range traces {
		if t == nil {
			continue
		}
		if dup[i] {
			dups++
			continue
		}
		in := sampleInfo{idx: int32(i)}
		in.cost, in.bands = forcedBands(t, cfg.MinConfidence, privileged)
		r, ok := routeIndex[t.Route]
		if !ok {
			r = int32(len(routeNames))
			routeIndex[t.Route] = r
			routeNames = append(routeNames, t.Route)
			routeCosts = append(routeCosts, nil)
		}
		in.route = r
		routeCosts[r] = append(routeCosts[r], in.cost)
		if cfg.HashConsistent {
			in.key = HashKey(cfg.Seed, t.ID)
		} else {
			in.key = rng.Float64()
		}
		infos = append(infos, in)
	}
	return infos, routeNames, routeCosts, dups
}

// overCostThresholds returns each route's over-cost threshold, and records
// how the band judged the route in routes, by name: its percentile cost
// from cfg.RouteCost or from routeCosts, which it sorts and then lets go.
func overCostThresholds(routeNames []string, routeCosts [][]float64, cfg Sampling, routes map[string]RouteCost) []float64 {
	thresholds := make([]float64, len(routeNames))
	for r, name := range routeNames {
		rc := RouteCost{Traces: len(routeCosts[r])}
		if base, ok := cfg.RouteCost[name]; ok {
			rc.Percentile = base
		} else {
			slices.Sort(routeCosts[r])
			rc.Percentile = percentile(routeCosts[r], cfg.CostPercentile)
		}
		if cfg.CostMultiplier > 0 {
			rc.Threshold = rc.Percentile * cfg.CostMultiplier
		}
		thresholds[r] = rc.Threshold
		routes[name] = rc
		routeCosts[r] = nil
	}
	return thresholds
}

// markOverCostAndHead adds BandOverCost to the traces that cost more than
// their route's threshold, and BandHead to those whose key is below
// headRate or, when there is none, to the one with the smallest key.
func markOverCostAndHead(infos []sampleInfo, thresholds []float64, headRate float64) {
	minKey, head := 0, 0
	for i := range infos {
		in := &infos[i]
		if th := thresholds[in.route]; th > 0 && in.cost > th {
			in.bands |= BandOverCost
		}
		if in.key < headRate {
			in.bands |= BandHead
			head++
		}
		if in.key < infos[minKey].key {
			minKey = i
		}
	}
	if head == 0 {
		infos[minKey].bands |= BandHead
	}
}

// markTail adds BandTail to the n most expensive normal traces of each of
// the round's routes, ties broken by id.
func markTail(infos []sampleInfo, traces []*trace.Trace, routes, n int) {
	tops := make([][]int, routes)
	more := func(a, b int) bool { // a is more expensive than b
		x, y := &infos[a], &infos[b]
		if x.cost != y.cost {
			return x.cost > y.cost
		}
		return traces[x.idx].ID < traces[y.idx].ID
	}
	for i := range infos {
		if infos[i].bands.Has(Forced) {
			continue
		}
		top := tops[infos[i].route]
		if len(top) == n && !more(i, top[n-1]) {
			continue
		}
		if len(top) < n {
			top = append(top, i)
		} else {
			top[n-1] = i
		}
		for j := len(top) - 1; j > 0 && more(top[j], top[j-1]); j-- {
			top[j], top[j-1] = top[j-1], top[j]
		}
		tops[infos[i].route] = top
	}
	for _, top := range tops {
		for _, i := range top {
			infos[i].bands |= BandTail
		}
	}
}

// duplicates marks the traces whose id an earlier trace has. It sorts
// 64-bit hashes of the ids with a stable radix sort — four passes of 16
// bits, about five times faster than a map of a million ids — so that
// equal ids end up next to each other, earliest first; within a run of
// equal hashes the ids themselves are compared.
func duplicates(traces []*trace.Trace) []bool {
	n := len(traces)
	dup := make([]bool, n)
	if n < 2 {
		return dup
	}
	seed := maphash.MakeSeed()
	keys, idx := make([]uint64, 0, n), make([]int32, 0, n)
	for i, t := range traces {
		if t != nil {
			keys = append(keys, maphash.String(seed, t.ID))
			idx = append(idx, int32(i))
		}
	}
	if len(keys) < 256 {
		seen := make(map[string]bool, len(keys))
		for _, i := range idx {
			dup[i] = seen[traces[i].ID]
			seen[traces[i].ID] = true
		}
		return dup
	}
	keys2, idx2 := make([]uint64, len(keys)), make([]int32, len(keys))
	count := make([]int, 1<<16+1)
	for shift := 0; shift < 64; shift += 16 {
		clear(count)
		for _, k := range keys {
			count[(k>>shift)&0xffff+1]++
		}
		for d := 1; d < len(count); d++ {
			count[d] += count[d-1]
		}
		for j, k := range keys {
			d := (k >> shift) & 0xffff
			keys2[count[d]], idx2[count[d]] = k, idx[j]
			count[d]++
		}
		keys, keys2, idx, idx2 = keys2, keys, idx2, idx
	}
	for lo := 0; lo < len(keys); {
		hi := lo + 1
		for hi < len(keys) && keys[hi] == keys[lo] {
			hi++
		}
		for k := lo + 1; k < hi; k++ { // a run of equal hashes, in input order
			for j := lo; j < k; j++ {
				if !dup[idx[j]] && traces[idx[j]].ID == traces[idx[k]].ID {
					dup[idx[k]] = true
					break
				}
			}
		}
		lo = hi
	}
	return dup
}

// percentile returns the q-quantile of sorted values by linear
// interpolation between the closest ranks (R's type 7, numpy's default).
func percentile(sorted []float64, q float64) float64 {
	n := len(sorted)
	if n == 0 {
		return 0
	}
	h := q * float64(n-1)
	i := int(h)
	if i >= n-1 {
		return sorted[n-1]
	}
	return sorted[i] + (h-float64(i))*(sorted[i+1]-sorted[i])
}

// byKey orders samples by head key, then id: the order in which the judge
// takes head samples.
func byKey(a, b *Sample) int {
	return cmp.Or(cmp.Compare(a.Key, b.Key), cmp.Compare(a.Trace.ID, b.Trace.ID))
}

// forcedBands returns what a trace cost and the forced bands it sits in:
// a step that ended in an error, an intent below minConfidence (0: none), a
// tool outside the allow-list (privileged, when not nil). Run and a
// streamed Round classify a trace with it alike.
func forcedBands(t *trace.Trace, minConfidence float64, privileged func(*trace.Trace) bool) (cost float64, bands Band) {
	minConf := 2.0
	for _, s := range t.Steps {
		cost += s.Cost
		if s.Error != "" {
			bands |= BandError
		}
		if s.Intent != "" && s.Confidence < minConf {
			minConf = s.Confidence
		}
	}
	if minConfidence > 0 && minConf < minConfidence {
		bands |= BandLowConfidence
	}
	if privileged != nil && privileged(t) {
		bands |= BandPrivilege
	}
	return cost, bands
}
