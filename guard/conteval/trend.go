package conteval

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"time"
)

// TrendPoint is one round on the trend: one line of the trend file. The
// file is JSON Lines, one TrendPoint object per line, oldest first, so
// that it can be appended to and read with any JSON tool.
type TrendPoint struct {
	Time              time.Time `json:"time"`
	ConfigVersion     string    `json:"config_version"`
	ConfigFingerprint string    `json:"config_fingerprint"`
	// VersionChanged marks the first round under a new config version:
	// the curves before and after it were sampled or gated differently.
	VersionChanged bool `json:"version_changed,omitempty"`
	// ParamsChanged marks a round whose parameters differ from the
	// previous round's (another fingerprint) under the same version: a
	// config edited without a new version.
	ParamsChanged bool `json:"params_changed,omitempty"`
	Traces        int  `json:"traces"`
	Samples       int  `json:"samples"`
	// Head and All are the two curves' points: never merged.
	Head    CurvePoint `json:"head"`
	All     CurvePoint `json:"all"`
	Verdict Light      `json:"verdict"`
	Cost    float64    `json:"cost"`
	// Routes holds each route's pass counts in the round.
	Routes map[string]RouteCounts `json:"routes,omitempty"`
	// Human is the person's check of green samples read in this round,
	// if any: the gate's history keeps how often a person disagreed.
	Human *HumanCheck `json:"human_check,omitempty"`
}

// CurvePoint is a pass rate and its interval (the union of the bootstrap
// and Wilson intervals) on the trend.
type CurvePoint struct {
	N      int     `json:"n"`
	Passes int     `json:"passes"`
	Rate   float64 `json:"rate"`
	Lo     float64 `json:"lo"`
	Hi     float64 `json:"hi"`
}

func curvePoint(e Estimate) CurvePoint {
	iv := e.Interval()
	return CurvePoint{N: e.N, Passes: e.Passes, Rate: e.Rate, Lo: iv.Lo, Hi: iv.Hi}
}

// trendPoint returns the report's trend point, marked against the last
// point of history.
func (r *Report) trendPoint(history []TrendPoint) TrendPoint {
	p := TrendPoint{
		Time: r.Time, ConfigVersion: r.ConfigVersion, ConfigFingerprint: r.ConfigFingerprint,
		Traces: r.Traces, Samples: r.All.N, Head: curvePoint(r.Head), All: curvePoint(r.All),
		Verdict: r.Verdict, Cost: r.Cost.Total, Routes: r.RouteCounts,
	}
	if n := len(history); n > 0 {
		prev := history[n-1]
		p.VersionChanged = prev.ConfigVersion != p.ConfigVersion
		p.ParamsChanged = !p.VersionChanged && prev.ConfigFingerprint != p.ConfigFingerprint
	}
	return p
}

// ReadTrend reads a trend file's points. A line that is not a TrendPoint
// object is an *Error wrapping ErrTrend that names the line; blank lines
// are skipped.
func ReadTrend(r io.Reader) ([]TrendPoint, error) {
	var out []TrendPoint
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 64<<10), 16<<20)
	line := 0
	for sc.Scan() {
		line++
		b := bytes.TrimSpace(sc.Bytes())
		if len(b) == 0 {
			continue
		}
		var p TrendPoint
		if b[0] != '{' {
			return out, &Error{Op: "trend", Line: line, Err: fmt.Errorf("%w: not a JSON object", ErrTrend)}
		}
		if err := json.Unmarshal(b, &p); err != nil {
			return out, &Error{Op: "trend", Line: line, Err: fmt.Errorf("%w: %v", ErrTrend, err)}
		}
		out = append(out, p)
	}
	if err := sc.Err(); err != nil {
		return out, &Error{Op: "trend", Line: line + 1, Err: err}
	}
	return out, nil
}

// LoadTrend reads the trend file at path; a file that does not exist yet
// is an empty trend.
func LoadTrend(path string) ([]TrendPoint, error) {
	f, err := os.Open(path)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, &Error{Op: "trend", Path: path, Err: err}
	}
	defer f.Close()
	points, err := ReadTrend(f)
	if e, ok := err.(*Error); ok {
		e.Path = path
	}
	return points, err
}

// WriteTrendPoint writes p to w as one line, with one Write call.
func WriteTrendPoint(w io.Writer, p TrendPoint) error {
	b, err := json.Marshal(p)
	if err != nil {
		return &Error{Op: "trend", Err: err}
	}
	if _, err := w.Write(append(b, '\n')); err != nil {
		return &Error{Op: "trend", Err: err}
	}
	return nil
}

// AppendTrend appends p to the trend file at path, creating it (mode 0600)
// if needed. The file grows by one line, a few hundred bytes, per round.
func AppendTrend(path string, p TrendPoint) error {
	f, err := os.OpenFile(path, os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o600)
	if err != nil {
		return &Error{Op: "trend", Path: path, Err: err}
	}
	err = WriteTrendPoint(f, p)
	if cerr := f.Close(); err == nil && cerr != nil {
		err = &Error{Op: "trend", Path: path, Err: cerr}
	}
	if e, ok := err.(*Error); ok {
		e.Path = path
	}
	return err
}

// HistoryPoint is one round of a route's pass-rate history.
type HistoryPoint struct {
	Time          time.Time `json:"time"`
	ConfigVersion string    `json:"config_version"`
	// Head counts the route's head samples, All all its samples.
	Head Count `json:"head"`
	All  Count `json:"all"`
}

// routeHistory returns route's points in history, oldest first; rounds
// without samples of the route are left out.
func routeHistory(history []TrendPoint, route string) []HistoryPoint {
	var out []HistoryPoint
	for _, p := range history {
		rc, ok := p.Routes[route]
		if !ok {
			continue
		}
		out = append(out, HistoryPoint{Time: p.Time, ConfigVersion: p.ConfigVersion, Head: rc.Head, All: rc.All})
	}
	return out
}
