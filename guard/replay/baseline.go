package replay

import (
	"fmt"
	"slices"
	"strings"
	"time"
)

// Tracks are the two tracks of a case's baseline answer, each in the form
// of an Answer: Expert, written by a domain expert from the rules, and
// Agent, the agent's best undisturbed run. CrossCheck compares them: the
// elements both have become the reference, the others are flagged for
// alignment.
type Tracks struct {
	Expert Answer `json:"expert"`
	Agent  Answer `json:"agent"`
}

// CrossCheck is the comparison of a case's two baseline tracks.
type CrossCheck struct {
	// Agreed holds the elements both tracks give the same way (must in
	// both, or must_not in both), compared without regard to case, runs of
	// white space or the order of "|" alternatives; its Text is the
	// expert's.
	Agreed Answer `json:"agreed"`
	// Disagreements are the elements only one track gives, or that the
	// tracks give opposite ways, in track order: expert's first.
	Disagreements []Disagreement `json:"disagreements,omitempty"`
}

// Disagreement is one element the two tracks do not agree on.
type Disagreement struct {
	Element string `json:"element"`
	// Expert and Agent say how each track gives it: "must", "must_not",
	// or "" when the track does not have it.
	Expert string `json:"expert"`
	Agent  string `json:"agent"`
}

// String words d: `"30 days": expert must, agent none`.
func (d Disagreement) String() string {
	word := func(s string) string {
		if s == "" {
			return "none"
		}
		return s
	}
	return fmt.Sprintf("%q: expert %s, agent %s", d.Element, word(d.Expert), word(d.Agent))
}

// CrossCheck compares c's two tracks; a case without tracks has nothing to
// cross-check and returns its Answer as agreed.
func (c *Case) CrossCheck() CrossCheck {
	if c.Tracks == nil {
		return CrossCheck{Agreed: c.Answer}
	}
	e, a := c.Tracks.Expert, c.Tracks.Agent
	out := CrossCheck{Agreed: Answer{Text: e.Text, Declines: e.Declines && a.Declines}}
	way := func(t Answer, el string) string {
		switch {
		case slices.ContainsFunc(t.Must, func(x string) bool { return sameElement(x, el) }):
			return "must"
		case slices.ContainsFunc(t.MustNot, func(x string) bool { return sameElement(x, el) }):
			return "must_not"
		}
		return ""
	}
	var seen []string
	for _, el := range slices.Concat(e.Must, e.MustNot, a.Must, a.MustNot) {
		if slices.ContainsFunc(seen, func(x string) bool { return sameElement(x, el) }) {
			continue
		}
		seen = append(seen, el)
		we, wa := way(e, el), way(a, el)
		switch {
		case we == wa && we == "must":
			out.Agreed.Must = append(out.Agreed.Must, el)
		case we == wa && we == "must_not":
			out.Agreed.MustNot = append(out.Agreed.MustNot, el)
		default:
			out.Disagreements = append(out.Disagreements, Disagreement{Element: el, Expert: we, Agent: wa})
		}
	}
	return out
}

// sameElement reports whether two key elements are the same: the same
// alternatives, compared as Contains compares text.
func sameElement(a, b string) bool {
	alts := func(e string) []string {
		var out []string
		for alt := range strings.SplitSeq(e, "|") {
			out = append(out, fold(alt))
		}
		slices.Sort(out)
		return slices.Compact(out)
	}
	return slices.Equal(alts(a), alts(b))
}

// Reference returns the baseline answer runs are checked against: Answer,
// with, when the case has two tracks, the elements they agree on added.
func (c *Case) Reference() Answer {
	if c.Tracks == nil {
		return c.Answer
	}
	agreed := c.CrossCheck().Agreed
	ref := c.Answer
	ref.Must = slices.Concat(c.Answer.Must, agreed.Must)
	ref.MustNot = slices.Concat(c.Answer.MustNot, agreed.MustNot)
	if ref.Text == "" {
		ref.Text = agreed.Text
	}
	ref.Declines = ref.Declines || agreed.Declines
	return ref
}

// Stale returns the cases whose baseline was never verified (no
// last_verified) or was last verified more than validFor before now (zero
// validFor means 90 days), never-verified and then oldest first: the cases
// to verify before a run is trusted.
func Stale(cases []Case, now time.Time, validFor time.Duration) []Case {
	if validFor <= 0 {
		validFor = 90 * 24 * time.Hour
	}
	var out []Case
	for _, c := range cases {
		t, err := time.Parse(DateLayout, c.LastVerified)
		if c.LastVerified == "" || (err == nil && now.Sub(t) > validFor) {
			out = append(out, c)
		}
	}
	slices.SortStableFunc(out, func(a, b Case) int { return strings.Compare(a.LastVerified, b.LastVerified) })
	return out
}

// The shape the method asks of a golden set: PerCategory cases of each
// category and at least one conversation of LongTurns user turns or more.
const (
	PerCategory = 10
	LongTurns   = 15
)

// Shape returns how a golden set departs from the method's shape — 10
// normal, 10 boundary and 10 adversarial cases, and a conversation of 15
// turns or more — one sentence per departure, or nil. A set that departs
// still runs; it measures less than the method intends.
func Shape(cases []Case) []string {
	count := map[Category]int{}
	longest := 0
	for _, c := range cases {
		count[c.Category]++
		longest = max(longest, len(c.Turns))
	}
	var out []string
	for _, cat := range []Category{Normal, Boundary, Adversarial} {
		if n := count[cat]; n != PerCategory {
			out = append(out, fmt.Sprintf("%d %s cases, the method asks for %d", n, cat, PerCategory))
		}
	}
	if longest < LongTurns {
		out = append(out, fmt.Sprintf("the longest conversation has %d turns, the method asks for one of %d or more", longest, LongTurns))
	}
	return out
}

// Tagged returns the cases with at least one of tags, in order: the subset
// to rerun when a prompt changes.
func Tagged(cases []Case, tags ...string) []Case {
	var out []Case
	for _, c := range cases {
		if slices.ContainsFunc(c.Tags, func(t string) bool { return slices.Contains(tags, t) }) {
			out = append(out, c)
		}
	}
	return out
}
