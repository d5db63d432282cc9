package health

import (
	"cmp"
	"fmt"
	"math"
	"slices"
	"strconv"
	"strings"

	"github.com/agentguard/agentguard/trace"
)

// Band is a health band: where a total on the 100-point scale falls, and
// with it what the method says to do.
type Band string

// Bands, from the method: a total of 4.05 (81 points) is sub-healthy and
// needs local repair, and so does 3.785 (about 76 points).
const (
	Healthy    Band = "healthy"     // 90 points or more: keep monitoring
	SubHealthy Band = "sub-healthy" // 75 to 90: local repair
	Unhealthy  Band = "unhealthy"   // 60 to 75: structural repair
	Critical   Band = "critical"    // below 60: not releasable
)

// Bands lists the bands from best to worst with the lowest total, on the
// 100-point scale, of each. Do not modify it.
var Bands = []struct {
	Band Band
	From float64
}{{Healthy, 90}, {SubHealthy, 75}, {Unhealthy, 60}, {Critical, 0}}

// BandOf returns the band of a total on the 100-point scale.
func BandOf(points float64) Band {
	for _, b := range Bands {
		if points >= b.From {
			return b.Band
		}
	}
	return Critical
}

// Action is what the method says to do about an agent in band b.
func (b Band) Action() string {
	switch b {
	case Healthy:
		return "keep monitoring"
	case SubHealthy:
		return "local repair"
	case Unhealthy:
		return "structural repair"
	case Critical:
		return "not releasable: rework before release"
	}
	return ""
}

// Label returns the band with its action: "sub-healthy, local repair".
func (b Band) Label() string {
	if a := b.Action(); a != "" {
		return string(b) + ", " + a
	}
	return string(b)
}

// Headline words a total without ambiguity: "4.05 of 5 (81 of 100 points,
// sub-healthy, local repair)".
func Headline(total, points float64) string {
	return fmt.Sprintf("%.2f of 5 (%.0f of 100 points, %s)", total, points, BandOf(points).Label())
}

// WeightsFrom reads weights keyed by dimension name ("accuracy": 30, …), as
// a policy file or a flag gives them. Every dimension must be named
// exactly once, with no other key, and the weights must pass
// Weights.Validate.
func WeightsFrom(m map[string]float64) (Weights, error) {
	var w Weights
	for k, v := range m {
		switch trace.Dimension(k) {
		case trace.Accuracy:
			w.Accuracy = v
		case trace.Coherence:
			w.Coherence = v
		case trace.Memory:
			w.Memory = v
		case trace.Stability:
			w.Stability = v
		case trace.Efficiency:
			w.Efficiency = v
		default:
			return Weights{}, &Error{Op: "weights", Err: fmt.Errorf("%w: unknown dimension %q (want %s)", ErrWeights, k, dimensionNames())}
		}
	}
	for _, d := range Dimensions {
		if _, ok := m[string(d)]; !ok {
			return Weights{}, &Error{Op: "weights", Err: fmt.Errorf("%w: no weight for %s (name all of %s)", ErrWeights, d, dimensionNames())}
		}
	}
	return w, w.Validate()
}

// ParseWeights reads weights written "accuracy=25,coherence=25,memory=20,
// stability=10,efficiency=20", as WeightsFrom reads a map.
func ParseWeights(s string) (Weights, error) {
	m := map[string]float64{}
	for part := range strings.SplitSeq(s, ",") {
		k, v, ok := strings.Cut(strings.TrimSpace(part), "=")
		k = strings.TrimSpace(k)
		f, err := strconv.ParseFloat(strings.TrimSpace(v), 64)
		if !ok || err != nil {
			return Weights{}, &Error{Op: "weights", Err: fmt.Errorf("%w: %q: want dimension=number", ErrWeights, part)}
		}
		if _, dup := m[k]; dup {
			return Weights{}, &Error{Op: "weights", Err: fmt.Errorf("%w: %s given twice", ErrWeights, k)}
		}
		m[k] = f
	}
	return WeightsFrom(m)
}

// ParseDimensions reads a comma-separated list of dimension names, the
// target dimensions of a fix ("accuracy,memory"). Empty means none.
func ParseDimensions(s string) ([]trace.Dimension, error) {
	var out []trace.Dimension
	for part := range strings.SplitSeq(s, ",") {
		d := trace.Dimension(strings.TrimSpace(part))
		if d == "" && strings.TrimSpace(s) == "" {
			return nil, nil
		}
		if !slices.Contains(Dimensions, d) {
			return nil, &Error{Op: "dimensions", Err: fmt.Errorf("%w: unknown dimension %q (want %s)", ErrDimension, part, dimensionNames())}
		}
		if !slices.Contains(out, d) {
			out = append(out, d)
		}
	}
	return out, nil
}

func dimensionNames() string {
	names := make([]string, len(Dimensions))
	for i, d := range Dimensions {
		names[i] = string(d)
	}
	return strings.Join(names, ", ")
}

// CheckFloor validates a release floor on the 100-point scale: a number
// from 0 to 100. A floor from just above 0 to 5 is refused too: it reads as
// the 1–5 scale ("3.5"), which would pass every agent, so the error says
// which 100-point floor was probably meant.
func CheckFloor(floor float64) error {
	switch {
	case math.IsNaN(floor) || floor < 0 || floor > 100:
		return &Error{Op: "floor", Err: fmt.Errorf("%w: %v is not on the 100-point scale (0 to 100)", ErrFloor, floor)}
	case floor > 0 && floor <= 5:
		return &Error{Op: "floor", Err: fmt.Errorf("%w: %v looks like the 1–5 scale; the floor is on the 100-point scale: use %v", ErrFloor, floor, floor*20)}
	}
	return nil
}

// DefaultFloor is the release floor unless one is given: the lowest total,
// on the 100-point scale, of a band the method lets ship. Below it an
// agent is critical, "not releasable", and a release gate fails.
const DefaultFloor = 60.0

// Releasable reports whether the method lets an agent in band b ship: every
// band but critical.
func (b Band) Releasable() bool { return b != Critical && b != "" }

// Release is the release verdict of a report against its floor.
type Release struct {
	// Releasable reports whether the total reaches the floor.
	Releasable bool    `json:"releasable"`
	Floor      float64 `json:"floor"`
	// Why words the verdict: "82 of 100 points ≥ the floor 60:
	// sub-healthy, local repair".
	Why string `json:"why"`
	// Blockers, when the total is below the floor, are what cost the most
	// points, worst first: each dimension's points lost (its weight × how
	// far its score is from 5, over 5), with the root cause that failed
	// most often in it.
	Blockers []string `json:"blockers,omitempty"`
}

// release returns r's verdict against floor (zero means DefaultFloor).
func (r *Report) release(floor float64) Release {
	if floor == 0 {
		floor = DefaultFloor
	}
	rel := Release{Releasable: r.Points >= floor, Floor: floor}
	op := "≥"
	if !rel.Releasable {
		op = "<"
	}
	rel.Why = fmt.Sprintf("%.0f of 100 points %s the floor %g: %s", r.Points, op, floor, r.Band.Label())
	if rel.Releasable {
		return rel
	}
	type loss struct {
		d      trace.Dimension
		points float64
	}
	var losses []loss
	w := r.Weights.orDefault()
	for _, ds := range r.Dimensions {
		if p := w.Of(ds.Dimension) * (5 - ds.Score) / 5; p > 0.05 {
			losses = append(losses, loss{ds.Dimension, p})
		}
	}
	slices.SortStableFunc(losses, func(a, b loss) int { return cmp.Compare(b.points, a.points) })
	for _, l := range losses {
		s := fmt.Sprintf("%s %.1f: %.1f points lost", l.d, r.Score(l.d).Score, l.points)
		for _, rc := range r.RootCauses { // most failed first
			if rc.Dimension == l.d && rc.Failed > 0 {
				s += fmt.Sprintf(", most to %s (%d failed, cases %s)", rc.Tag, rc.Failed, strings.Join(rc.Cases, " "))
				break
			}
		}
		rel.Blockers = append(rel.Blockers, s)
	}
	return rel
}
