package conteval

import (
	"fmt"
	"math"
	"math/rand/v2"
	"slices"
)

// Gate turns a pass count into a verdict, with a confidence interval from
// two methods side by side. The zero value is the default gate: floor 0.95,
// maximum width 0.15, 95% intervals, 10,000 resamples, seed 0. A Gate is a
// plain value, safe for concurrent use.
type Gate struct {
	// Floor is the pass rate the agent must hold. Zero means 0.95.
	Floor float64 `json:"floor,omitempty"`
	// MaxWidth is the widest interval that can support a verdict; a wider
	// one means "not enough samples". Zero means 0.15.
	MaxWidth float64 `json:"max_width,omitempty"`
	// Level is the confidence level of the intervals. Zero means 0.95.
	Level float64 `json:"level,omitempty"`
	// Resamples is the number of bootstrap resamples. Zero means 10,000.
	Resamples int `json:"resamples,omitempty"`
	// Seed seeds the bootstrap: the same counts and seed give the same
	// interval.
	Seed uint64 `json:"seed,omitempty"`
	// Interval is the interval the verdict is taken on: "bootstrap" (the
	// default, as the method gives it) or "union", the union of the
	// bootstrap and Wilson intervals, which stays wide when every flag
	// passed (20 of 20 gives Wilson [0.839, 1]), so a clean round needs
	// more samples to be green.
	Interval string `json:"interval,omitempty"`
	// MinSamples is the fewest flags a verdict is taken on: below it the
	// percentile bootstrap of a clean round collapses to a point (5 of 5
	// gives [1, 1]) and says nothing. Zero means 20.
	MinSamples int `json:"min_samples,omitempty"`
}

// Intervals the verdict may be taken on (Gate.Interval).
const (
	IntervalBootstrap = "bootstrap"
	IntervalUnion     = "union"
)

// DefaultMinSamples is the fewest flags the default gate judges.
const DefaultMinSamples = 20

func (g Gate) withDefaults() Gate {
	if g.Floor == 0 {
		g.Floor = DefaultFloor
	}
	if g.MaxWidth == 0 {
		g.MaxWidth = DefaultMaxWidth
	}
	if g.Level <= 0 || g.Level >= 1 {
		g.Level = DefaultLevel
	}
	if g.Resamples <= 0 {
		g.Resamples = DefaultResamples
	}
	if g.Interval == "" {
		g.Interval = IntervalBootstrap
	}
	if g.MinSamples <= 0 {
		g.MinSamples = DefaultMinSamples
	}
	return g
}

// Light is what the gate makes of a pass rate.
type Light string

// Verdicts.
const (
	// Green: the interval's lower bound is at or above the floor.
	Green Light = "green"
	// Yellow: the pass rate is at or above the floor, its lower bound below.
	Yellow Light = "yellow"
	// Red: the pass rate is below the floor.
	Red Light = "red"
	// NotEnough: fewer flags than the gate's MinSamples, or an interval
	// wider than its MaxWidth: too wide to judge, whatever the rate; add
	// samples before judging.
	NotEnough Light = "not-enough-samples"
)

// ExitCode is a release gate's exit status for v: 0 green or yellow, 1 red,
// 3 not enough samples (2 is left to usage and input errors, as the
// agentguard command does).
func (v Light) ExitCode() int {
	switch v {
	case Red:
		return 1
	case NotEnough:
		return 3
	}
	return 0
}

// Interval is a confidence interval for a rate.
type Interval struct {
	Lo float64 `json:"lo"`
	Hi float64 `json:"hi"`
}

// Width returns Hi - Lo.
func (i Interval) Width() float64 { return i.Hi - i.Lo }

func (i Interval) String() string { return fmt.Sprintf("[%.3f, %.3f]", i.Lo, i.Hi) }

// Estimate is a pass rate with its intervals and the gate's verdict on it.
type Estimate struct {
	N      int     `json:"n"`
	Passes int     `json:"passes"`
	Rate   float64 `json:"rate"` // Passes / N; 0 when N is 0
	// Bootstrap is the percentile bootstrap interval; Wilson the Wilson
	// score interval. Both are [0, 1] when N is 0.
	Bootstrap Interval `json:"bootstrap"`
	Wilson    Interval `json:"wilson"`
	Verdict   Light    `json:"verdict"`
	// The gate's parameters, for reading the estimate alone.
	Level      float64 `json:"level"`
	Floor      float64 `json:"floor"`
	MaxWidth   float64 `json:"max_width"`
	Method     string  `json:"interval"` // Gate.Interval
	MinSamples int     `json:"min_samples"`
}

// Interval returns the interval the verdict is taken on: the bootstrap
// interval, or with Gate.Interval "union" the union of the two, which
// keeps the more cautious bound on each side.
func (e Estimate) Interval() Interval {
	if e.Method == IntervalUnion {
		return Interval{min(e.Bootstrap.Lo, e.Wilson.Lo), max(e.Bootstrap.Hi, e.Wilson.Hi)}
	}
	return e.Bootstrap
}

// String formats e on one line:
// "0.933 (112/120), 95% CI bootstrap [0.892, 0.975], Wilson [0.874, 0.966] → red (floor 0.95)".
func (e Estimate) String() string {
	return fmt.Sprintf("%.3f (%d/%d), %g%% CI bootstrap %v, Wilson %v → %s (%s)",
		e.Rate, e.Passes, e.N, math.Round(e.Level*1000)/10, e.Bootstrap, e.Wilson, e.Verdict, e.Reason())
}

// Reason explains the verdict in a few words.
func (e Estimate) Reason() string {
	iv := e.Interval()
	switch e.Verdict {
	case NotEnough:
		if e.N == 0 {
			return "no samples"
		}
		if e.N < e.MinSamples {
			return fmt.Sprintf("%d samples, fewer than %d: add samples first", e.N, e.MinSamples)
		}
		return fmt.Sprintf("interval width %.3f > %.2f: too wide to judge, add samples first", iv.Width(), e.MaxWidth)
	case Green:
		return fmt.Sprintf("lower bound %.3f ≥ floor %.2f", iv.Lo, e.Floor)
	case Yellow:
		return fmt.Sprintf("rate ≥ floor %.2f, lower bound %.3f below it", e.Floor, iv.Lo)
	case Red:
		return fmt.Sprintf("rate and lower bound below floor %.2f", e.Floor)
	}
	return ""
}

// streamBootstrap is the second word of the bootstrap's PCG state.
const streamBootstrap = 0x626f6f7473747270 // "bootstrp"

// Judge estimates the pass rate of passes out of n flags and judges it, in
// the method's order, the interval's width first:
//
//   - fewer than MinSamples flags → NotEnough;
//   - the interval (the bootstrap's, see Gate.Interval) is wider than
//     MaxWidth → NotEnough: too wide to judge, whatever the rate (10 of 20
//     is not red, it is unknown);
//   - its lower bound is at or above Floor → Green (20 of 20 is green);
//   - the rate is at or above Floor → Yellow;
//   - otherwise → Red.
//
// It takes O(Resamples) time whatever n is.
func (g Gate) Judge(passes, n int) Estimate {
	g = g.withDefaults()
	e := Estimate{N: max(n, 0), Passes: min(max(passes, 0), max(n, 0)), Level: g.Level, Floor: g.Floor, MaxWidth: g.MaxWidth, Method: g.Interval, MinSamples: g.MinSamples}
	if e.N == 0 {
		e.Bootstrap, e.Wilson, e.Verdict = Interval{0, 1}, Interval{0, 1}, NotEnough
		return e
	}
	e.Rate = float64(e.Passes) / float64(e.N)
	e.Bootstrap = Bootstrap(e.Passes, e.N, g.Resamples, g.Level, rand.New(rand.NewPCG(g.Seed, streamBootstrap)))
	e.Wilson = Wilson(e.Passes, e.N, g.Level)
	iv := e.Interval()
	switch {
	case e.N < g.MinSamples, iv.Width() > g.MaxWidth+1e-9: // 1 - 0.85 is 0.15000000000000002
		e.Verdict = NotEnough
	case iv.Lo >= g.Floor:
		e.Verdict = Green
	case e.Rate >= g.Floor:
		e.Verdict = Yellow
	default:
		e.Verdict = Red
	}
	return e
}

// JudgeFlags judges a list of pass (true) and fail (false) flags; see Judge.
func (g Gate) JudgeFlags(flags []bool) Estimate {
	passes := 0
	for _, f := range flags {
		if f {
			passes++
		}
	}
	return g.Judge(passes, len(flags))
}

// Bootstrap returns the percentile bootstrap interval at the given level
// for a pass rate of passes out of n, from resamples resamples drawn with
// rng. Resampling n pass/fail flags with replacement and counting the
// passes is the same as drawing one number from the binomial distribution
// B(n, passes/n), so each resample is one binomial draw: O(resamples) time
// whatever n is. The bounds are the draws of rank ⌈R·α/2⌉ and ⌈R·(1-α/2)⌉
// of R sorted resamples (α = 1 - level), divided by n. n ≤ 0 gives [0, 1].
func Bootstrap(passes, n, resamples int, level float64, rng *rand.Rand) Interval {
	if n <= 0 {
		return Interval{0, 1}
	}
	if level <= 0 || level >= 1 {
		level = DefaultLevel
	}
	resamples = max(resamples, 1)
	p := float64(min(max(passes, 0), n)) / float64(n)
	draws := make([]int, resamples)
	for i := range draws {
		draws[i] = binomial(rng, n, p)
	}
	slices.Sort(draws)
	rank := func(q float64) int {
		return min(max(int(math.Ceil(q*float64(resamples)))-1, 0), resamples-1)
	}
	alpha := 1 - level
	return Interval{float64(draws[rank(alpha/2)]) / float64(n), float64(draws[rank(1-alpha/2)]) / float64(n)}
}

// Wilson returns the Wilson score interval at the given level for a pass
// rate of passes out of n:
//
//	(p + z²/2n ± z·√(p(1-p)/n + z²/4n²)) / (1 + z²/n)
//
// with p = passes/n and z the standard normal quantile of (1+level)/2
// (1.95996 for 95%). n ≤ 0 gives [0, 1].
func Wilson(passes, n int, level float64) Interval {
	if n <= 0 {
		return Interval{0, 1}
	}
	if level <= 0 || level >= 1 {
		level = DefaultLevel
	}
	z := math.Sqrt2 * math.Erfinv(level)
	nf := float64(n)
	p := float64(min(max(passes, 0), n)) / nf
	z2 := z * z
	denom := 1 + z2/nf
	center := (p + z2/(2*nf)) / denom
	half := z / denom * math.Sqrt(p*(1-p)/nf+z2/(4*nf*nf))
	return Interval{max(0, center-half), min(1, center+half)}
}
