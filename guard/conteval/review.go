package conteval

import (
	"bufio"
	"bytes"
	"cmp"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"slices"
	"strings"
	"time"
)

// DefaultReview is how many green samples the method asks a person to
// check each week (Evaluator.Review).
const DefaultReview = 20

// ReviewItem is one green sample for a person's check: what the user said
// and what the agent answered, with room for the person's verdict. A
// review file is JSON Lines, one item a line; the person sets "ok" to true
// (the sample is right) or false (it is wrong, whatever the assertions
// said) and may add a note.
type ReviewItem struct {
	TraceID string    `json:"trace_id"`
	Route   string    `json:"route,omitempty"`
	Start   time.Time `json:"start"`
	Turns   []string  `json:"turns"`
	Answers []string  `json:"answers"`
	// OK is the person's verdict; null until they have checked the sample.
	OK   *bool  `json:"ok"`
	Note string `json:"note,omitempty"`
}

// ReviewItems returns up to n green head samples of the round for a
// person's check, the lowest head keys first: a uniform sample of what the
// gate passed, the same for the same round. A round keeps
// Evaluator.Review of them with their traces.
func (r *Report) ReviewItems(n int) []ReviewItem {
	var green []*SampleResult
	for i := range r.Samples {
		s := &r.Samples[i]
		if s.Passed && s.Bands.Has(BandHead) && s.Trace != nil {
			green = append(green, s)
		}
	}
	slices.SortStableFunc(green, func(a, b *SampleResult) int { return cmp.Compare(a.Key, b.Key) })
	var out []ReviewItem
	for _, s := range green[:min(n, len(green))] {
		it := ReviewItem{TraceID: s.TraceID, Route: s.Route, Start: s.Trace.Start}
		for _, u := range s.Trace.UserTurns {
			if u = strings.TrimSpace(u); u != "" {
				it.Turns = append(it.Turns, u)
			}
		}
		for _, st := range s.Trace.Steps {
			if isAnswer(st) && !st.Blocked {
				it.Answers = append(it.Answers, st.Result)
			}
		}
		out = append(out, it)
	}
	return out
}

// WriteReview writes items as a review file.
func WriteReview(w io.Writer, items []ReviewItem) error {
	enc := json.NewEncoder(w)
	enc.SetEscapeHTML(false)
	for _, it := range items {
		if err := enc.Encode(it); err != nil {
			return err
		}
	}
	return nil
}

// HumanCheck is what a person found checking green samples.
type HumanCheck struct {
	// Source names the review file.
	Source string `json:"source"`
	// Checked counts the samples the person gave a verdict; Wrong holds
	// the trace ids of those they found wrong: problems the assertions
	// missed.
	Checked int      `json:"checked"`
	Wrong   []string `json:"wrong,omitempty"`
}

// ErrReview: a review file has a line that is not a review item.
var ErrReview = errors.New("invalid review")

// ReadReview reads a review file a person filled in: the items with a
// verdict ("ok": true or false) count, those still null are skipped. A
// line that is not an item, or an item without a trace id, is an error
// naming source and line.
func ReadReview(r io.Reader, source string) (HumanCheck, error) {
	hc := HumanCheck{Source: source}
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 0, 64<<10), 16<<20)
	var errs []error
	line := 0
	for sc.Scan() {
		line++
		b := bytes.TrimSpace(sc.Bytes())
		if len(b) == 0 {
			continue
		}
		var it ReviewItem
		if err := json.Unmarshal(b, &it); err != nil || it.TraceID == "" {
			if err == nil {
				err = errors.New("no trace_id")
			}
			errs = append(errs, fmt.Errorf("%s:%d: %w: %v", source, line, ErrReview, err))
			continue
		}
		if it.OK == nil {
			continue
		}
		hc.Checked++
		if !*it.OK {
			hc.Wrong = append(hc.Wrong, it.TraceID)
		}
	}
	if err := sc.Err(); err != nil {
		errs = append(errs, fmt.Errorf("%s: %w", source, err))
	}
	return hc, errors.Join(errs...)
}

// AddHumanCheck records a person's check of green samples on the report
// and its trend point. When the person found a green sample wrong, the
// assertions miss what a person sees: a green verdict becomes yellow, and
// the gate line says why.
func (r *Report) AddHumanCheck(hc HumanCheck) {
	r.Human = &hc
	r.Trend.Human = &hc
	if len(hc.Wrong) > 0 && r.Verdict == Green {
		r.Verdict, r.Trend.Verdict = Yellow, Yellow
	}
}
