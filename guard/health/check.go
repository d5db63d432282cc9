package health

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"slices"

	"github.com/agentguard/agentguard/guard/replay"
)

// CheckConfig configures Check. The zero value replays every case three
// times through a default guard and reads the guard's findings from the
// traces.
type CheckConfig struct {
	// Replay configures the replay: the guard every run goes through
	// (Replay.Guard), repeats, parallelism, the time limit of a run, where
	// the traces go.
	Replay replay.Config
	// Score configures the scoring: weights, knowledge base, raters.
	Score Options
	// Violations is where the guard's findings are read. Nil means
	// Replay.Guard.Observe.Ledger when it can be queried (a
	// *badgerstore.Store can), else the gate steps of the traces.
	Violations Violations
	// Tags, when set, replay only the cases with one of these tags: the
	// subset a prompt change touches.
	Tags []string
}

// Check is the health check of your own agent: it reads the golden set in
// the file cases (package guard/replay describes the format), replays it
// through the agents f returns — each run a fresh agent that answers
// through the guard it is given — and scores the runs.
//
// An empty or unreadable file, a malformed line, or a tag subset that
// selects nothing is an error wrapping ErrNoCases or a *replay.Error:
// nothing was checked. The golden set's departures from the method's
// shape and its stale baselines are in the report (Report.Shape,
// Report.Baseline) for the caller to gate on.
func Check(ctx context.Context, cases string, f replay.Factory, cfg CheckConfig) (*Report, error) {
	file, err := os.Open(cases)
	if err != nil {
		return nil, &Error{Op: "cases", Err: err}
	}
	defer file.Close()
	set, err := replay.LoadCases(file, cases)
	if err != nil {
		return nil, &Error{Op: "cases", Err: err}
	}
	if len(set) == 0 {
		return nil, &Error{Op: "cases", Err: fmt.Errorf("%w: %s holds no case", ErrNoCases, cases)}
	}
	if len(cfg.Tags) > 0 {
		set = replay.Tagged(set, cfg.Tags...)
		if len(set) == 0 {
			return nil, &Error{Op: "cases", Err: fmt.Errorf("%w: no case of %s is tagged %v", ErrNoCases, cases, cfg.Tags)}
		}
	}
	runs, err := replay.Replay(ctx, set, f, cfg.Replay)
	if err != nil {
		return nil, &Error{Op: "replay", Err: err}
	}
	v := cfg.Violations
	if q, ok := cfg.Replay.Guard.Observe.Ledger.(Violations); v == nil && ok {
		v = q
	}
	return Score(ctx, set, runs, v, cfg.Score)
}

// ReadReport reads a report.json written by WriteFiles, as the "before" of
// a comparison: a report's, or a comparison's, whose After it returns.
// source names the input in errors.
func ReadReport(r io.Reader, source string) (*Report, error) {
	var v struct {
		Report
		After *Report `json:"after"`
	}
	if err := json.NewDecoder(r).Decode(&v); err != nil {
		return nil, &Error{Op: "report", Err: fmt.Errorf("%s: %w: %v", source, ErrReport, err)}
	}
	rep := v.Report
	if v.After != nil {
		rep = *v.After
	}
	for _, d := range Dimensions {
		if !slices.ContainsFunc(rep.Dimensions, func(s DimensionScore) bool { return s.Dimension == d }) {
			return nil, &Error{Op: "report", Err: fmt.Errorf("%s: %w: no %s score (is it a report.json of one run?)", source, ErrReport, d)}
		}
	}
	return &rep, nil
}
