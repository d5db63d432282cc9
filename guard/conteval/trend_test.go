package conteval

import (
	"bytes"
	"context"
	"errors"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"time"
)

func TestTrendRoundTrip(t *testing.T) {
	path := filepath.Join(t.TempDir(), "trend.jsonl")
	if got, err := LoadTrend(path); got != nil || err != nil {
		t.Fatalf("missing trend file: %v, %v", got, err)
	}
	traces := population(800, 8)
	var written []TrendPoint
	for i, version := range []string{"v1", "v1", "v2"} {
		cfg := testConfig()
		cfg.Version = version
		history, err := LoadTrend(path)
		if err != nil {
			t.Fatal(err)
		}
		rep, err := (&Evaluator{Config: cfg, History: history}).Run(context.Background(), traces, roundTime.Add(time.Duration(i)*time.Hour))
		if err != nil {
			t.Fatal(err)
		}
		if err := AppendTrend(path, rep.Trend); err != nil {
			t.Fatal(err)
		}
		written = append(written, rep.Trend)
	}
	got, err := LoadTrend(path)
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(got, written) {
		t.Errorf("trend read back differs:\n%+v\n%+v", got, written)
	}
	marks := []bool{got[0].VersionChanged, got[1].VersionChanged, got[2].VersionChanged}
	if !reflect.DeepEqual(marks, []bool{false, false, true}) {
		t.Errorf("version changes marked %v, want [false false true]", marks)
	}
	if len(got[0].Routes) != 2 || got[0].Head.N == 0 || got[0].All.N < got[0].Head.N {
		t.Errorf("point %+v", got[0])
	}
}

func TestReadTrendErrors(t *testing.T) {
	tests := []struct{ text, want string }{
		{"{\"time\":\"2025-06-01T00:00:00Z\"}\n\nnot json\n", "line 3"},
		{`{"head":{"n":"x"}}`, "line 1"},
		{`[]`, "not a JSON object"},
	}
	for _, tt := range tests {
		_, err := ReadTrend(strings.NewReader(tt.text))
		if !errors.Is(err, ErrTrend) || !strings.Contains(err.Error(), tt.want) {
			t.Errorf("ReadTrend(%q) = %v, want ErrTrend at %s", tt.text, err, tt.want)
		}
	}
}

func FuzzReadTrend(f *testing.F) {
	var buf bytes.Buffer
	WriteTrendPoint(&buf, TrendPoint{Time: roundTime, ConfigVersion: "v", Routes: map[string]RouteCounts{"r": {All: Count{3, 2}}}})
	f.Add(buf.Bytes())
	f.Add([]byte("{}\n{\"verdict\":\"red\"}"))
	f.Fuzz(func(t *testing.T, data []byte) {
		points, err := ReadTrend(bytes.NewReader(data))
		if err != nil && !errors.Is(err, ErrTrend) {
			var e *Error
			if !errors.As(err, &e) {
				t.Fatalf("error %v is not an *Error", err)
			}
		}
		for _, p := range points {
			var out bytes.Buffer
			if err := WriteTrendPoint(&out, p); err != nil {
				t.Fatal(err)
			}
		}
	})
}
