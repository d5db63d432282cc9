package conteval

import (
	"fmt"
	"math"
	"math/rand/v2"
	"testing"
)

// TestWilsonKnownValues checks the Wilson score interval against the values
// published by Newcombe, "Two-sided confidence intervals for the single
// proportion" (Statistics in Medicine 17, 1998), Table I, method 3, and
// against the closed forms at x = 0 and x = n.
func TestWilsonKnownValues(t *testing.T) {
	z2 := 1.959963984540054 * 1.959963984540054
	tests := []struct {
		passes, n int
		lo, hi    float64
	}{
		{81, 263, 0.2553, 0.3662},
		{15, 148, 0.0624, 0.1605},
		{0, 20, 0, 0.1611},
		{1, 29, 0.0061, 0.1718},
		{0, 10, 0, z2 / (10 + z2)},   // upper bound z²/(n+z²)
		{10, 10, 10 / (10 + z2), 1},  // lower bound n/(n+z²)
		{112, 120, 0.87395, 0.96583}, // the seed check
	}
	for _, tt := range tests {
		got := Wilson(tt.passes, tt.n, 0.95)
		if math.Abs(got.Lo-tt.lo) > 5e-5 || math.Abs(got.Hi-tt.hi) > 5e-5 {
			t.Errorf("Wilson(%d, %d) = %v (%.5f, %.5f), want (%.4f, %.4f)", tt.passes, tt.n, got, got.Lo, got.Hi, tt.lo, tt.hi)
		}
	}
	if got := Wilson(0, 0, 0.95); got != (Interval{0, 1}) {
		t.Errorf("Wilson(0, 0) = %v, want [0, 1]", got)
	}
}

// TestBootstrapNearWilson: at large n both intervals are the normal
// interval p ± z·sqrt(p(1-p)/n), so they must agree closely.
func TestBootstrapNearWilson(t *testing.T) {
	tests := []struct{ passes, n int }{
		{95_000, 100_000},
		{9_000, 10_000},
		{500_000, 1_000_000},
		{999_000, 1_000_000},
	}
	for _, tt := range tests {
		b := Bootstrap(tt.passes, tt.n, 20_000, 0.95, rand.New(rand.NewPCG(3, 4)))
		w := Wilson(tt.passes, tt.n, 0.95)
		// The bootstrap's quantiles carry Monte Carlo error of a few
		// percent of the half-width; allow 5% of it, plus one flag.
		tol := 0.05*w.Width()/2 + 1/float64(tt.n)
		if math.Abs(b.Lo-w.Lo) > tol || math.Abs(b.Hi-w.Hi) > tol {
			t.Errorf("%d/%d: bootstrap %v (%.6f, %.6f), Wilson %v (%.6f, %.6f), tolerance %.6f",
				tt.passes, tt.n, b, b.Lo, b.Hi, w, w.Lo, w.Hi, tol)
		}
	}
}

func TestBootstrapSeeded(t *testing.T) {
	g := Gate{Seed: 42, Resamples: 2000}
	a, b := g.Judge(700, 1000), g.Judge(700, 1000)
	if a != b {
		t.Errorf("same seed, different estimates: %v and %v", a, b)
	}
	g.Seed = 43
	if c := g.Judge(700, 1000); c.Bootstrap == a.Bootstrap {
		t.Logf("seeds 42 and 43 gave the same bootstrap interval %v (possible, unlikely)", c.Bootstrap)
	}
}

// TestSeedCheck is the seed check: 120 flags with every 17th
// failing (flags 0, 17, ..., 119: eight failures) pass at 112/120 ≈ 0.933;
// the interval is narrow enough to judge (width under 0.15) and lies
// mostly below the floor of 0.95, so the verdict is red.
func TestSeedCheck(t *testing.T) {
	flags := make([]bool, 120)
	for i := range flags {
		flags[i] = i%17 != 0
	}
	e := Gate{}.JudgeFlags(flags)
	t.Logf("seed check: %v", e)
	if e.Passes != 112 || e.N != 120 {
		t.Fatalf("counted %d/%d, want 112/120", e.Passes, e.N)
	}
	if math.Abs(e.Rate-0.9333) > 1e-4 {
		t.Errorf("rate = %.4f, want 0.9333", e.Rate)
	}
	if math.Abs(e.Wilson.Lo-0.87395) > 5e-5 || math.Abs(e.Wilson.Hi-0.96583) > 5e-5 {
		t.Errorf("Wilson = (%.5f, %.5f), want (0.87395, 0.96583)", e.Wilson.Lo, e.Wilson.Hi)
	}
	// The normal approximation gives 0.933 ± 0.045; the bootstrap's
	// quantiles fall on multiples of 1/120.
	if e.Bootstrap.Lo < 0.88 || e.Bootstrap.Lo > 0.90 || e.Bootstrap.Hi < 0.97 || e.Bootstrap.Hi > 0.98 {
		t.Errorf("bootstrap = %v, want about [0.89, 0.975]", e.Bootstrap)
	}
	if w := e.Interval().Width(); w > DefaultMaxWidth {
		t.Errorf("width = %.3f, want at most %.2f", w, DefaultMaxWidth)
	}
	if e.Verdict != Red {
		t.Errorf("verdict = %s, want red", e.Verdict)
	}
}

// TestGateVerdicts quotes seed 002's gate: the interval first — "too wide
// to judge" before any colour — so 20 of 20 passes is green and 10 of 20
// is too wide to judge, not red.
func TestGateVerdicts(t *testing.T) {
	tests := []struct {
		passes, n int
		gate      Gate
		want      Light
	}{
		// The method's order: the interval's width first, on the bootstrap.
		{112, 120, Gate{}, Red},                            // the seed check: width 0.092, rate and lower bound below
		{20, 20, Gate{}, Green},                            // the method: 20 of 20 is green (bootstrap [1, 1])
		{10, 20, Gate{}, NotEnough},                        // the method: width 0.4, too wide to judge, not red
		{1000, 1000, Gate{}, Green},                        // lower bound 1
		{990, 1000, Gate{}, Green},                         // lower bound 0.984
		{960, 1000, Gate{}, Yellow},                        // rate 0.96 ≥ 0.95, lower bound 0.948
		{940, 1000, Gate{}, Red},                           // both below
		{5, 5, Gate{}, NotEnough},                          // fewer than 20 samples: bootstrap [1, 1] says nothing
		{0, 5, Gate{}, NotEnough},                          // fewer than 20
		{19, 20, Gate{}, Yellow},                           // rate 0.95, bootstrap [0.85, 1] width 0.15
		{0, 0, Gate{}, NotEnough},                          // nothing to judge
		{112, 120, Gate{Floor: 0.9}, Yellow},               // rate 0.933 ≥ 0.9, lower bound 0.883
		{112, 120, Gate{MaxWidth: 0.05}, NotEnough},        // width 0.092 > 0.05
		{100, 120, Gate{MaxWidth: 0.05}, NotEnough},        // too wide, whatever the rate
		{20, 20, Gate{Interval: IntervalUnion}, NotEnough}, // the cautious union: Wilson [0.839, 1]
		{5, 5, Gate{MinSamples: 5}, Green},                 // a gate told to judge five
	}
	for _, tt := range tests {
		t.Run(fmt.Sprintf("%d/%d,floor=%g,width=%g", tt.passes, tt.n, tt.gate.Floor, tt.gate.MaxWidth), func(t *testing.T) {
			e := tt.gate.Judge(tt.passes, tt.n)
			if e.Verdict != tt.want {
				t.Errorf("verdict = %s, want %s (%v)", e.Verdict, tt.want, e)
			}
		})
	}
}
