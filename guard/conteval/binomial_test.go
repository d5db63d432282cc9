package conteval

import (
	"fmt"
	"math"
	"math/rand/v2"
	"testing"
)

// binomialPMF returns the exact probabilities of B(n, p), from log-gamma.
func binomialPMF(n int, p float64) []float64 {
	out := make([]float64, n+1)
	ln, _ := math.Lgamma(float64(n + 1))
	for k := range out {
		lk, _ := math.Lgamma(float64(k + 1))
		lnk, _ := math.Lgamma(float64(n - k + 1))
		out[k] = math.Exp(ln - lk - lnk + float64(k)*math.Log(p) + float64(n-k)*math.Log1p(-p))
	}
	return out
}

// TestBinomialMoments checks the mean and variance of many draws against
// n·p and n·p·(1-p), on both methods and both sides of p = 1/2.
func TestBinomialMoments(t *testing.T) {
	tests := []struct {
		n      int
		p      float64
		method string
	}{
		{20, 0.3, "inversion"},
		{50, 0.99, "inversion (1-p)"},
		{1000, 0.02, "inversion"},
		{100, 0.4, "BTPE"},
		{120, 0.9333, "BTPE (1-p)"},
		{2000, 0.97, "BTPE (1-p)"},
		{1_000_000, 0.95, "BTPE (1-p)"},
		{1_000_000, 0.5, "BTPE"},
	}
	const draws = 200_000
	for _, tt := range tests {
		t.Run(fmt.Sprintf("n=%d,p=%g,%s", tt.n, tt.p, tt.method), func(t *testing.T) {
			rng := rand.New(rand.NewPCG(1, 2))
			var sum, sum2 float64
			for range draws {
				x := binomial(rng, tt.n, tt.p)
				if x < 0 || x > tt.n {
					t.Fatalf("draw %d outside [0, %d]", x, tt.n)
				}
				f := float64(x)
				sum += f
				sum2 += f * f
			}
			mean := sum / draws
			variance := sum2/draws - mean*mean
			wantMean := float64(tt.n) * tt.p
			wantVar := wantMean * (1 - tt.p)
			// The mean of the draws has standard error sqrt(var/draws);
			// the sample variance about var·sqrt(2/draws).
			if d := math.Abs(mean - wantMean); d > 5*math.Sqrt(wantVar/draws) {
				t.Errorf("mean = %.4f, want %.4f (off by %.2g)", mean, wantMean, d)
			}
			if r := math.Abs(variance/wantVar - 1); r > 6*math.Sqrt(2.0/draws)+0.005 {
				t.Errorf("variance = %.4f, want %.4f (relative error %.3f)", variance, wantVar, r)
			}
		})
	}
}

// TestBinomialDistribution compares the histogram of many draws with the
// exact probabilities by Pearson's chi-square, on bins with at least 20
// expected draws (the thin tails pooled into the end bins).
func TestBinomialDistribution(t *testing.T) {
	tests := []struct {
		n int
		p float64
	}{
		{20, 0.3},     // inversion
		{100, 0.4},    // BTPE, near the mode (recursion)
		{3000, 0.5},   // BTPE, far from the mode (squeezes, Stirling)
		{2000, 0.97},  // BTPE for 1-p
		{120, 0.9333}, // the seed check's resampling distribution
	}
	const draws = 400_000
	for _, tt := range tests {
		t.Run(fmt.Sprintf("n=%d,p=%g", tt.n, tt.p), func(t *testing.T) {
			pmf := binomialPMF(tt.n, tt.p)
			rng := rand.New(rand.NewPCG(7, 11))
			hist := make([]int, tt.n+1)
			for range draws {
				hist[binomial(rng, tt.n, tt.p)]++
			}
			// Pool into bins of at least 20 expected draws.
			var chi2 float64
			bins := 0
			var exp, obs float64
			for k := 0; k <= tt.n; k++ {
				exp += pmf[k] * draws
				obs += float64(hist[k])
				if exp >= 20 && (k == tt.n || remaining(pmf, k+1)*draws >= 20) {
					chi2 += (obs - exp) * (obs - exp) / exp
					bins++
					exp, obs = 0, 0
				}
			}
			if exp > 0 { // leftover tail
				chi2 += (obs - exp) * (obs - exp) / exp
				bins++
			}
			df := float64(bins - 1)
			// P(chi2 > df + 5·sqrt(2·df)) is far below 1e-4 for these df.
			if limit := df + 5*math.Sqrt(2*df); chi2 > limit {
				t.Errorf("chi-square = %.1f over %d bins, want below %.1f", chi2, bins, limit)
			}
		})
	}
}

func remaining(pmf []float64, from int) float64 {
	var s float64
	for _, v := range pmf[from:] {
		s += v
	}
	return s
}

func TestBinomialEdges(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 1))
	tests := []struct {
		n    int
		p    float64
		want int
	}{
		{0, 0.5, 0},
		{-3, 0.5, 0},
		{10, 0, 0},
		{10, -0.1, 0},
		{10, 1, 10},
		{10, 1.5, 10},
		{1_000_000, 1, 1_000_000},
	}
	for _, tt := range tests {
		if got := binomial(rng, tt.n, tt.p); got != tt.want {
			t.Errorf("binomial(%d, %g) = %d, want %d", tt.n, tt.p, got, tt.want)
		}
	}
}
