package health

import (
	"fmt"
	"math"
	"slices"
	"strings"

	"github.com/agentguard/agentguard/trace"
)

// The side-effect rule: a change that raises the total by at least
// SideEffectGain points (on the 100-point scale) while a dimension it did
// not target falls by at least SideEffectDrop (on the 1–5 scale) is
// flagged.
const (
	SideEffectGain = 8.0
	SideEffectDrop = 2.0
)

// Comparison is a before/after comparison of two reports: unguarded and
// guarded, or two versions of a prompt.
type Comparison struct {
	Before *Report `json:"before"`
	After  *Report `json:"after"`
	// Target are the dimensions the change aimed at; empty means none was
	// named, and every dimension counts for the side-effect rule.
	Target []trace.Dimension `json:"target,omitempty"`
	Deltas []Delta           `json:"deltas"`
	// TotalDelta and PointsDelta are After's total minus Before's, on the
	// 1–5 and the 100-point scale.
	TotalDelta  float64 `json:"total_delta"`
	PointsDelta float64 `json:"points_delta"`
	// SideEffects are the non-target dimensions that fell by
	// SideEffectDrop or more while the total rose by SideEffectGain or
	// more; Flagged reports whether there are any.
	SideEffects []trace.Dimension `json:"side_effects,omitempty"`
	Flagged     bool              `json:"flagged"`
	// Reweighted is set when the two reports weigh the dimensions
	// differently: part of the change in the total is the weights', not
	// the agent's. ReweightedPoints is After's points under Before's
	// weights, and ReweightingDelta the points the new weights alone
	// account for (After.Points − ReweightedPoints).
	Reweighted       bool    `json:"reweighted,omitempty"`
	ReweightedPoints float64 `json:"reweighted_points,omitempty"`
	ReweightingDelta float64 `json:"reweighting_delta,omitempty"`
}

// Delta is the change of one dimension's score.
type Delta struct {
	Dimension trace.Dimension `json:"dimension"`
	Before    float64         `json:"before"`
	After     float64         `json:"after"`
	Change    float64         `json:"change"`
}

// Compare compares two reports of the same golden set. target names the
// dimensions the change aimed at; the others are watched for side effects.
func Compare(before, after *Report, target ...trace.Dimension) *Comparison {
	c := &Comparison{Before: before, After: after, Target: target,
		TotalDelta: after.Total - before.Total, PointsDelta: after.Points - before.Points}
	for _, d := range Dimensions {
		b, a := before.Score(d).Score, after.Score(d).Score
		c.Deltas = append(c.Deltas, Delta{Dimension: d, Before: b, After: a, Change: math.Round(10*(a-b)) / 10})
		if c.PointsDelta >= SideEffectGain-1e-9 && b-a >= SideEffectDrop-1e-9 && !slices.Contains(target, d) {
			c.SideEffects = append(c.SideEffects, d)
		}
	}
	c.Flagged = len(c.SideEffects) > 0
	if bw, aw := before.Weights.orDefault(), after.Weights.orDefault(); bw != aw {
		scores := map[trace.Dimension]float64{}
		for _, d := range Dimensions {
			scores[d] = after.Score(d).Score
		}
		_, c.ReweightedPoints = bw.Total(scores)
		c.Reweighted, c.ReweightingDelta = true, after.Points-c.ReweightedPoints
	}
	return c
}

// Warnings words what makes the comparison less than like for like: "the
// weights differ (accuracy 30 → 50, …): 3.2 of the +5.0 points are the
// new weights', +1.8 the agent's".
func (c *Comparison) Warnings() []string {
	var out []string
	if c.Reweighted {
		bw, aw := c.Before.Weights.orDefault(), c.After.Weights.orDefault()
		var changed []string
		for _, d := range Dimensions {
			if b, a := bw.Of(d), aw.Of(d); b != a {
				changed = append(changed, fmt.Sprintf("%s %g → %g", d, b, a))
			}
		}
		out = append(out, fmt.Sprintf("the weights differ (%s): %+.1f of the %+.1f points are the new weights', %+.1f the agent's",
			strings.Join(changed, ", "), c.ReweightingDelta, c.PointsDelta, c.PointsDelta-c.ReweightingDelta))
	}
	return out
}
