package conteval

import (
	"fmt"
	"math"
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/agentguard/agentguard/guard/replay"
	"github.com/agentguard/agentguard/trace"
)

func TestForcedBands(t *testing.T) {
	normal := many("n", "r", 200)
	tests := []struct {
		name  string
		cfg   Sampling
		trace *trace.Trace
		want  Band // the forced bands the trace must hold
	}{
		{"tool error", Sampling{}, tr("x", "r", &trace.Step{Kind: trace.KindTool, Name: "t", Error: "boom"}), BandError},
		{"model error", Sampling{}, tr("x", "r", &trace.Step{Kind: trace.KindModel, Error: "429"}), BandError},
		{"blocked is no error", Sampling{}, tr("x", "r", &trace.Step{Kind: trace.KindTool, Name: "t", Blocked: true}), 0},
		{"low confidence", Sampling{}, tr("x", "r", &trace.Step{Kind: trace.KindModel, Intent: "a", Confidence: 0.59}), BandLowConfidence},
		{"confidence at threshold", Sampling{}, tr("x", "r", &trace.Step{Kind: trace.KindModel, Intent: "a", Confidence: 0.6}), 0},
		{"lowest of several intents", Sampling{}, tr("x", "r",
			&trace.Step{Kind: trace.KindModel, Intent: "a", Confidence: 0.9},
			&trace.Step{Kind: trace.KindModel, Intent: "b", Confidence: 0.3}), BandLowConfidence},
		{"confidence without intent", Sampling{}, tr("x", "r", &trace.Step{Kind: trace.KindModel, Confidence: 0.1}), 0},
		{"custom threshold", Sampling{MinConfidence: 0.8}, tr("x", "r", &trace.Step{Kind: trace.KindModel, Intent: "a", Confidence: 0.7}), BandLowConfidence},
		{"low-confidence band off", Sampling{MinConfidence: -1}, tr("x", "r", &trace.Step{Kind: trace.KindModel, Intent: "a", Confidence: 0.1}), 0},
		{"over cost", Sampling{}, costly("x", "r", 2.5), BandOverCost}, // p99 = 1, threshold 2
		{"under 2 × p99", Sampling{}, costly("x", "r", 1.9), 0},        // 1.9 < 2
		{"cost summed over steps", Sampling{}, tr("x", "r",
			&trace.Step{Kind: trace.KindModel, Cost: 1.2},
			&trace.Step{Kind: trace.KindModel, Cost: 1.2}), BandOverCost},
		{"multiplier", Sampling{CostMultiplier: 3}, costly("x", "r", 2.5), 0},
		{"baseline", Sampling{RouteCost: map[string]float64{"r": 0.5}}, costly("x", "r", 1.5), BandOverCost},
		{"over-cost band off", Sampling{CostMultiplier: -1}, costly("x", "r", 100), 0},
		{"all at once", Sampling{}, tr("x", "r",
			&trace.Step{Kind: trace.KindModel, Intent: "a", Confidence: 0.2, Cost: 3},
			&trace.Step{Kind: trace.KindTool, Name: "t", Error: "boom"}), BandError | BandLowConfidence | BandOverCost},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			in := append(slices.Clone(normal), tt.trace)
			sel := Select(in, tt.cfg)
			var got Band
			for _, s := range sel.Samples {
				if s.Trace.ID == "x" {
					got = s.Bands & Forced
				} else if s.Bands.Has(Forced) {
					t.Errorf("normal trace %s forced: %s", s.Trace.ID, s.Bands)
				}
			}
			if got != tt.want {
				t.Errorf("forced bands = %q, want %q", got, tt.want)
			}
		})
	}
}

func TestRouteCostPercentile(t *testing.T) {
	// 100 traces costing 1..100: p99 by linear interpolation is 99.01.
	var in []*trace.Trace
	for i := 1; i <= 100; i++ {
		in = append(in, costly(fmt.Sprintf("t%03d", i), "r", float64(i)))
	}
	sel := Select(in, Sampling{})
	rc := sel.Routes["r"]
	if rc.Traces != 100 || math.Abs(rc.Percentile-99.01) > 1e-9 || math.Abs(rc.Threshold-198.02) > 1e-9 {
		t.Errorf("route cost = %+v, want 100 traces, p99 99.01, threshold 198.02", rc)
	}
}

func TestHeadBand(t *testing.T) {
	in := many("n", "r", 20_000)
	for _, hash := range []bool{false, true} {
		t.Run(fmt.Sprintf("hash=%v", hash), func(t *testing.T) {
			sel := Select(in, Sampling{HashConsistent: hash, Seed: 9})
			got := sel.Count(BandHead)
			// Binomial(20000, 0.05): mean 1000, sd 30.8.
			if got < 1000-4*31 || got > 1000+4*31 {
				t.Errorf("head took %d of 20000 traces at 5%%, want about 1000", got)
			}
			for _, s := range sel.Samples {
				if s.Bands.Has(BandHead) != (s.Key < DefaultHeadRate) {
					t.Fatalf("trace %s with key %.4f: bands %s", s.Trace.ID, s.Key, s.Bands)
				}
			}
		})
	}
	t.Run("at least one", func(t *testing.T) {
		sel := Select(many("n", "r", 10), Sampling{HeadRate: 1e-9, TailPerRoute: -1})
		if got := sel.Count(BandHead); got != 1 {
			t.Errorf("head took %d traces, want 1", got)
		}
	})
	t.Run("forced traces count too", func(t *testing.T) {
		// Every trace errors: the head still marks its share of them, so
		// the head curve stays an unbiased sample of the whole round.
		var in []*trace.Trace
		for i := range 2000 {
			in = append(in, tr(fmt.Sprint(i), "r", &trace.Step{Kind: trace.KindTool, Error: "x"}))
		}
		sel := Select(in, Sampling{Seed: 1})
		if got := sel.Count(BandHead); got < 60 || got > 140 {
			t.Errorf("head marked %d of 2000 forced traces, want about 100", got)
		}
		if got := len(sel.Samples); got != 2000 {
			t.Errorf("sampled %d traces, want all 2000 (forced)", got)
		}
	})
}

func TestTailBand(t *testing.T) {
	var in []*trace.Trace
	for i := range 100 {
		in = append(in, costly(fmt.Sprintf("a%03d", i), "a", 1+float64(i%10)/100)) // a009, a019, ... cost 1.09
		in = append(in, costly(fmt.Sprintf("b%03d", i), "b", 2))                   // all tie
	}
	// The most expensive trace of route a errors: forced, so not a tail pick.
	in = append(in, tr("a-err", "a", &trace.Step{Kind: trace.KindTool, Error: "x", Cost: 1.5}))
	sel := Select(in, Sampling{HeadRate: 1e-9}) // the head takes one trace only
	tail := ids(sel, BandTail)
	want := map[string]bool{"a009": true, "a019": true, "a029": true, "b000": true, "b001": true, "b002": true}
	if len(tail) != len(want) {
		t.Errorf("tail = %v, want %v", tail, want)
	}
	for id := range want {
		if !tail[id] {
			t.Errorf("tail = %v, want %v", tail, want)
			break
		}
	}
	if sel := Select(in, Sampling{TailPerRoute: -1}); sel.Count(BandTail) != 0 {
		t.Errorf("tail off, still took %d", sel.Count(BandTail))
	}
	if sel := Select(in, Sampling{TailPerRoute: 5}); sel.Count(BandTail) != 10 {
		t.Errorf("tail of 5 per route took %d, want 10", sel.Count(BandTail))
	}
}

func TestDedup(t *testing.T) {
	in := many("n", "r", 50)
	in = append(in, costly("n-00003", "r", 100), nil, in[7]) // a repeated id, a nil, the same pointer again
	sel := Select(in, Sampling{HeadRate: 1})
	if sel.Traces != 50 || sel.Duplicates != 2 {
		t.Errorf("traces %d, duplicates %d; want 50 and 2", sel.Traces, sel.Duplicates)
	}
	seen := map[string]bool{}
	for _, s := range sel.Samples {
		if seen[s.Trace.ID] {
			t.Errorf("trace %s sampled twice", s.Trace.ID)
		}
		seen[s.Trace.ID] = true
		if s.Trace.ID == "n-00003" && s.Cost != 1 {
			t.Errorf("kept the later trace with id n-00003 (cost %v), want the first", s.Cost)
		}
	}
	// A trace in several bands is one sample holding them all.
	in = append(many("m", "r", 200), tr("x", "r", &trace.Step{Kind: trace.KindTool, Error: "e", Cost: 9}))
	sel = Select(in, Sampling{HeadRate: 1})
	for _, s := range sel.Samples {
		if s.Trace.ID == "x" && s.Bands != BandError|BandOverCost|BandHead {
			t.Errorf("trace x holds %s, want error+over-cost+head", s.Bands)
		}
	}
}

func TestSelectDeterministic(t *testing.T) {
	rng := rand.New(rand.NewPCG(5, 5))
	var in []*trace.Trace
	for i := range 5000 {
		route := []string{"a", "b", "c"}[i%3]
		s := &trace.Step{Kind: trace.KindModel, Cost: rng.ExpFloat64(), Intent: "i", Confidence: rng.Float64()*0.5 + 0.5}
		if rng.IntN(50) == 0 {
			s.Error = "e"
		}
		in = append(in, tr(fmt.Sprintf("t%d", i), route, s))
	}
	for _, hash := range []bool{false, true} {
		cfg := Sampling{Seed: 77, HashConsistent: hash}
		a, b := Select(in, cfg), Select(in, cfg)
		if !sameSelection(a, b) {
			t.Errorf("hash=%v: two runs with the same seed differ", hash)
		}
		cfg.Seed = 78
		if c := Select(in, cfg); sameSelection(a, c) {
			t.Errorf("hash=%v: seeds 77 and 78 chose the same head sample", hash)
		}
	}
}

func sameSelection(a, b *Selection) bool {
	return slices.EqualFunc(a.Samples, b.Samples, func(x, y Sample) bool {
		return x.Trace.ID == y.Trace.ID && x.Bands == y.Bands && x.Key == y.Key
	})
}

// TestHeadSubsets: a lower head rate takes a subset of what a higher one
// takes, in both modes; with HashConsistent a trace's fate does not depend
// on the other traces, their number or their order.
func TestHeadSubsets(t *testing.T) {
	in := many("n", "r", 10_000)
	for _, hash := range []bool{false, true} {
		t.Run(fmt.Sprintf("hash=%v", hash), func(t *testing.T) {
			var prev map[string]bool
			for _, rate := range []float64{0.0001, 0.01, 0.02, 0.05, 0.1, 0.5, 1} {
				head := ids(Select(in, Sampling{Seed: 3, HashConsistent: hash, HeadRate: rate}), BandHead)
				for id := range prev {
					if !head[id] {
						t.Fatalf("rate %g: %s was taken at a lower rate but not here", rate, id)
					}
				}
				prev = head
			}
			if len(prev) != len(in) {
				t.Errorf("rate 1 took %d of %d", len(prev), len(in))
			}
		})
	}
	t.Run("independent of the rest", func(t *testing.T) {
		cfg := Sampling{Seed: 3, HashConsistent: true}
		whole := ids(Select(in, cfg), BandHead)
		part := slices.Clone(in[:4000])
		rand.New(rand.NewPCG(1, 1)).Shuffle(len(part), func(i, j int) { part[i], part[j] = part[j], part[i] })
		for id := range ids(Select(part, cfg), BandHead) {
			if !whole[id] {
				t.Fatalf("%s taken from a shuffled part, not from the whole", id)
			}
		}
	})
}

// TestHashKeyStable pins HashKey: it defines which traces every evaluator
// takes, so it must never change. The values were computed independently
// from the documented algorithm (FNV-1a 64 over the seed's little-endian
// bytes and the id, SplitMix64's mixer, top 53 bits).
func TestHashKeyStable(t *testing.T) {
	tests := []struct {
		seed uint64
		id   string
		want float64
	}{
		{0, "", 0.5048676404714686},
		{0, "trace-1", 0.1603518191458756},
		{1, "trace-1", 0.6425775728788693},
		{42, "4N5ZKQ7LPJ3XW2Y6ABCDEFGH", 0.20905296847936428},
	}
	for _, tt := range tests {
		if got := HashKey(tt.seed, tt.id); got != tt.want {
			t.Errorf("HashKey(%d, %q) = %v, want %v", tt.seed, tt.id, got, tt.want)
		}
	}
}

func TestBandText(t *testing.T) {
	for _, b := range []Band{0, BandError, BandHead | BandTail, Forced | BandHead | BandTail} {
		text, _ := b.MarshalText()
		var got Band
		if err := got.UnmarshalText(text); err != nil || got != b {
			t.Errorf("%q round trip: got %v, %v", text, got, err)
		}
	}
	var b Band
	if err := b.UnmarshalText([]byte("error+nope")); err == nil {
		t.Error("unknown band accepted")
	}
	if got := (BandError | BandTail).String(); got != "error+tail" {
		t.Errorf("String = %q", got)
	}
}

// TestDuplicatesRadix checks the radix-sorted path of duplicates (256 ids
// and more) against a map: the first trace with an id is kept, every later
// one is marked, whatever the order.
func TestDuplicatesRadix(t *testing.T) {
	rng := rand.New(rand.NewPCG(9, 9))
	for _, n := range []int{256, 5000, 70_000} {
		traces := make([]*trace.Trace, n)
		for i := range traces {
			if rng.IntN(20) == 0 {
				continue // a nil trace
			}
			traces[i] = &trace.Trace{ID: fmt.Sprintf("id-%d", rng.IntN(n*2/3))} // about a third repeat
		}
		got := duplicates(traces)
		seen := map[string]bool{}
		for i, tr := range traces {
			want := false
			if tr != nil {
				want = seen[tr.ID]
				seen[tr.ID] = true
			}
			if got[i] != want {
				t.Fatalf("n=%d: trace %d (%v): duplicate = %v, want %v", n, i, tr, got[i], want)
			}
		}
	}
}

// TestMerge quotes seed 002: production's red samples are "mixed into the
// golden set every two weeks". They join it once, tagged for review and
// unverified; a case the set already holds, by id or by its turns, is not
// added again.
func TestMerge(t *testing.T) {
	golden := []replay.Case{
		{ID: "N01", Category: replay.Normal, Turns: []string{"Where is A1001?"}, LastVerified: "2026-11-01"},
		{ID: "N02", Category: replay.Normal, Turns: []string{"我的订单 A1002 到哪了？"}, LastVerified: "2026-11-01"},
	}
	red := []replay.Case{
		{ID: "ce-t1", Category: replay.Normal, Turns: []string{"退货要多久？"}, Tags: []string{"ce_grounding"}, LastVerified: "2026-12-01"},
		{ID: "ce-t2", Category: replay.Normal, Turns: []string{"Where is A1001?"}}, // N01's conversation
		{ID: "N02", Category: replay.Normal, Turns: []string{"something else"}},    // N02's id
		{ID: "ce-t1", Category: replay.Normal, Turns: []string{"退货要多久？"}},          // twice in one batch
	}
	merged, added := Merge(golden, red)
	if !slices.Equal(added, []string{"ce-t1"}) || len(merged) != 3 {
		t.Fatalf("added %v, %d cases; want ce-t1 only", added, len(merged))
	}
	c := merged[2]
	if c.LastVerified != "" || !slices.Contains(c.Tags, TagReview) || !slices.Contains(c.Tags, "ce_grounding") {
		t.Errorf("merged case %+v: want unverified, tagged review", c)
	}
	if red[0].LastVerified == "" || len(red[0].Tags) != 1 || golden[0].LastVerified == "" {
		t.Error("Merge modified its inputs")
	}
}
