package conteval

import (
	"math"
	"math/rand/v2"
)

// binomial draws from the binomial distribution B(n, p): the number of
// successes in n independent trials of probability p. It is exact, up to
// floating-point rounding, for every n and p, and takes O(1) expected time
// for large n, so a bootstrap of R resamples of n flags costs O(R) instead
// of O(R·n).
//
// Method (the one numpy uses): with r = min(p, 1-p), drawing B(n, r) and
// returning n minus the draw when p > 1/2,
//
//   - n·r ≤ 30: inversion — walk the cumulative distribution from 0 with
//     the ratio pmf(k)/pmf(k-1) = (n-k+1)/k · r/(1-r); expected cost O(n·r).
//   - n·r > 30: BTPE, the triangle–parallelogram–exponential rejection
//     sampler of Kachitvichyanukul and Schmeiser ("Binomial random variate
//     generation", CACM 31(2), 1988): a hat of a triangle over the mode,
//     two parallelograms and two exponential tails, accepted by an exact
//     recursive ratio near the mode and by Stirling-bounded squeezes
//     further out. About 1.2 pairs of uniforms per draw.
//
// A normal approximation with continuity correction would be simpler but
// is biased in the tails exactly where a pass rate near 1 lives (n·(1-p)
// small), which is why it is not used. The tests check mean, variance and
// the whole distribution against the exact probabilities.
func binomial(rng *rand.Rand, n int, p float64) int {
	switch {
	case n <= 0 || p <= 0:
		return 0
	case p >= 1:
		return n
	}
	r := min(p, 1-p)
	var x int
	if float64(n)*r <= 30 {
		x = binomialInversion(rng, n, r)
	} else {
		x = binomialBTPE(rng, n, r)
	}
	if p > 0.5 {
		return n - x
	}
	return x
}

// binomialInversion draws B(n, p) for p ≤ 1/2 and n·p ≤ 30.
func binomialInversion(rng *rand.Rand, n int, p float64) int {
	q := 1 - p
	q0 := math.Exp(float64(n) * math.Log(q)) // pmf(0)
	np := float64(n) * p
	// Past bound the remaining mass is negligible; restarting there keeps
	// rounding in the running subtraction from walking off to n.
	bound := int(min(float64(n), np+10*math.Sqrt(np*q+1)))
	for {
		u := rng.Float64()
		pk := q0
		for k := 0; k <= bound; k++ {
			if u <= pk {
				return k
			}
			u -= pk
			pk *= float64(n-k) / float64(k+1) * p / q
		}
	}
}

// binomialBTPE draws B(n, p) for p ≤ 1/2 and n·p > 30; see binomial.
func binomialBTPE(rng *rand.Rand, n int, p float64) int {
	fn := float64(n)
	q := 1 - p
	npq := fn * p * q
	fm := fn*p + p // the mode lies at floor(fm)
	m := math.Floor(fm)
	// Triangle: half-width p1 around xm.
	p1 := math.Floor(2.195*math.Sqrt(npq)-4.6*q) + 0.5
	xm := m + 0.5
	xl, xr := xm-p1, xm+p1
	c := 0.134 + 20.5/(15.3+m)
	// Exponential tails: rates laml (left) and lamr (right).
	a := (fm - xl) / (fm - xl*p)
	laml := a * (1 + a/2)
	a = (xr - fm) / (xr * q)
	lamr := a * (1 + a/2)
	// Cumulative areas of the regions.
	p2 := p1 * (1 + 2*c)
	p3 := p2 + c/laml
	p4 := p3 + c/lamr

	for {
		u := rng.Float64() * p4
		v := rng.Float64()
		var y float64
		switch {
		case u <= p1: // triangle: accepted at once
			return int(math.Floor(xm - p1*v + u))
		case u <= p2: // parallelograms
			x := xl + (u-p1)/c
			v = v*c + 1 - math.Abs(m-x+0.5)/p1
			if v > 1 {
				continue
			}
			y = math.Floor(x)
		case u <= p3: // left exponential tail
			y = math.Floor(xl + math.Log(v)/laml)
			if y < 0 || v == 0 {
				continue
			}
			v *= (u - p2) * laml
		default: // right exponential tail
			y = math.Floor(xr - math.Log(v)/lamr)
			if y > fn || v == 0 {
				continue
			}
			v *= (u - p3) * lamr
		}

		k := math.Abs(y - m)
		if k <= 20 || k >= npq/2-1 {
			// Near the mode, or a wide distribution's far tail: the exact
			// ratio f(y)/f(m).
			if v <= pmfRatio(fn, p, q, m, y) {
				return int(y)
			}
			continue
		}

		// Squeeze on log(f(y)/f(m)), then the final test with Stirling's
		// series for the factorials.
		rho := (k / npq) * ((k*(k/3+0.625)+1.0/6)/npq + 0.5)
		t := -k * k / (2 * npq)
		logV := math.Log(v)
		if logV < t-rho {
			return int(y)
		}
		if logV > t+rho {
			continue
		}
		if logV <= stirlingLogRatio(fn, p, q, m, y) {
			return int(y)
		}
	}
}

// pmfRatio returns f(y)/f(m), the ratio of the probabilities of y and m
// under B(n, p) for fn = n and q = 1-p, by the recursion f(i)/f(i-1) =
// ((n+1)·p/q)/i - p/q: exact up to rounding, and cheap for y near m.
func pmfRatio(fn, p, q, m, y float64) float64 {
	s := p / q
	aa := s * (fn + 1)
	f := 1.0
	if m < y {
		for i := m + 1; i <= y; i++ {
			f *= aa/i - s
		}
	} else if m > y {
		for i := y + 1; i <= m; i++ {
			f /= aa/i - s
		}
	}
	return f
}

// stirlingLogRatio returns log(f(y)/f(m)) for B(n, p), fn = n and q =
// 1-p, with the factorials from Stirling's series: BTPE's final acceptance
// bound, for y far from m.
func stirlingLogRatio(fn, p, q, m, y float64) float64 {
	xm := m + 0.5
	x1 := y + 1
	f1 := m + 1
	z := fn + 1 - m
	w := fn - y + 1
	return xm*math.Log(f1/x1) + (fn-m+0.5)*math.Log(z/w) + (y-m)*math.Log(w*p/(x1*q)) +
		stirlingTail(f1) + stirlingTail(z) + stirlingTail(x1) + stirlingTail(w)
}

// stirlingTail is the correction term of Stirling's series used by BTPE's
// final acceptance test: 1/(12x) - 1/(360x³) + 1/(1260x⁵) - 1/(1680x⁷) +
// 1/(1188x⁹), over the common denominator 166320. (The published algorithm
// and some ports print 13680 for 166320/12 = 13860.)
func stirlingTail(x float64) float64 {
	x2 := x * x
	return (13860 - (462-(132-(99-140/x2)/x2)/x2)/x2) / x / 166320
}
