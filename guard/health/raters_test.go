package health

import (
	"errors"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/agentguard/agentguard/guard/guardtest"
	"github.com/agentguard/agentguard/guard/replay"
	"github.com/agentguard/agentguard/trace"
)

// TestTwoRaters quotes seed 000: "two blind raters, averaged; a gap above
// one point sends the case to review". A judge model and a person rate the
// screened cases independently; their mean is the verdict and a gap above
// 1 sends the case to review.
func TestTwoRaters(t *testing.T) {
	model := cannedJudge(t, map[string]guardtest.Reply{
		"vip":    guardtest.Text(`{"score": 1, "reason": "Invents clause 7.3."}`),
		"ghost":  guardtest.Text(`{"score": 2, "reason": "Asserts absence after an empty lookup."}`),
		"no-sms": guardtest.Text(`{"score": 4, "reason": "Only a wording slip."}`),
		"vague":  guardtest.Text(`{"score": 3, "reason": "Asked back."}`),
	})
	person, err := LoadScores(strings.NewReader(`{"case":"vip","score":2,"reason":"编造了第7.3条"}
{"case":"ghost","score":2}

{"case":"no-sms","score":1,"reason":"Sent the SMS the user forbade."}
`), "li.jsonl")
	if err != nil {
		t.Fatal(err)
	}
	rep, _ := judgedFixture(t, "unguarded", true, Options{Raters: []Rater{{Name: "model", Model: model}, {Name: "li", Scores: person}}})
	j := rep.Judge
	if j == nil || len(j.Raters) != 2 || j.Raters[0] != "model" || j.Raters[1] != "li" {
		t.Fatalf("judge report %+v, want two raters named", j)
	}
	tests := map[string]struct {
		score  int
		mean   float64
		gap    float64
		review bool
	}{
		"vip":    {2, 1.5, 1, false}, // 1 and 2: within a point
		"ghost":  {2, 2, 0, false},   // agree
		"no-sms": {3, 2.5, 3, true},  // 4 and 1: review
		"vague":  {3, 3, 0, true},    // the person did not score it: one opinion only
	}
	for _, c := range j.Judged {
		want, ok := tests[c.Case]
		if !ok {
			t.Errorf("unexpected case %s", c.Case)
			continue
		}
		if c.Score != want.score || c.Mean != want.mean || c.Gap != want.gap || c.Review != want.review || len(c.Ratings) != 2 {
			t.Errorf("%s: score %d mean %v gap %v review %v (%d ratings); want %+v", c.Case, c.Score, c.Mean, c.Gap, c.Review, len(c.Ratings), want)
		}
	}
	if j.Review != 2 || j.Calls != 4 || j.Errors != 0 {
		t.Errorf("review %d, calls %d, errors %d; want 2, 4 (the model only), 0", j.Review, j.Calls, j.Errors)
	}

	// The method: "two blind raters are averaged and that is the quality
	// score; a gap above one point sends the case to review". The runs of
	// vip (mean 1.5) and ghost (2) take the raters' mean; no-sms and vague,
	// in review, keep the rubric's scores.
	plain, _ := judgedFixture(t, "unguarded", true, Options{})
	acc, was := rep.Score(trace.Accuracy), plain.Score(trace.Accuracy)
	if acc.Rated == 0 || acc.Score >= was.Score || !strings.Contains(acc.Reason, "scored by the raters' mean") {
		t.Errorf("accuracy %+v, want some runs rated and a score below the rubric's %v", acc, was.Score)
	}
	if rep.Total >= plain.Total {
		t.Errorf("total %v with raters, %v without: want the raters' lower scores in it", rep.Total, plain.Total)
	}
	// One rater alone is a second opinion, never the score.
	alone, _ := judgedFixture(t, "unguarded", true, Options{Judge: model})
	if !reflect.DeepEqual(alone.Dimensions, plain.Dimensions) || alone.Total != plain.Total {
		t.Errorf("one judge changed the scores: %+v, want %+v", alone.Dimensions, plain.Dimensions)
	}
}

func TestLoadScores(t *testing.T) {
	_, err := LoadScores(strings.NewReader(`{"case":"a","score":3}
{"case":"b","score":6}
{"case":"a","score":2}
{"case":"c","score":2.5}
{"case":"d"}
{"case":"e","score":2,"comment":"x"}
not json`), "p.jsonl")
	for _, want := range []string{"p.jsonl:2: invalid scores: case b: score 6", "p.jsonl:3: invalid scores: case a is scored twice", "p.jsonl:4:", "p.jsonl:5: invalid scores: case d: missing", "p.jsonl:6:", "p.jsonl:7:"} {
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("err = %v, want it to say %q", err, want)
		}
	}
	if !errors.Is(err, ErrScores) {
		t.Errorf("err = %v, want ErrScores", err)
	}
}

func TestRaterValidated(t *testing.T) {
	_, _, err := scoreFixtureErr(t, Options{Raters: []Rater{{Name: "nobody"}}})
	if !errors.Is(err, ErrRater) {
		t.Errorf("err = %v, want ErrRater", err)
	}
}

func scoreFixtureErr(t *testing.T, opts Options) (*Report, *Report, error) {
	t.Helper()
	runs := fixtureRuns(t, "unguarded", true, nil, true)
	opts.Now, opts.Knowledge = fixtureNow, fixtureKB
	rep, err := Score(t.Context(), fixtureCases(t), runs, nil, opts)
	return rep, nil, err
}

// TestCheckInputs: an unreadable, empty or malformed golden set, or a tag
// subset that selects nothing, is an error and nothing is replayed.
func TestCheckInputs(t *testing.T) {
	dir := t.TempDir()
	write := func(name, text string) string {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
		return p
	}
	called := false
	f := func(*replay.Case, int) (replay.Agent, error) {
		called = true
		return nil, errors.New("not reached")
	}
	good := `{"id":"N01","category":"normal","turns":["hi"],"answer":{},"tags":["en"],"last_verified":"2026-11-20"}` + "\n"
	for _, tt := range []struct {
		name, path string
		tags       []string
		want       error
		says       string
	}{
		{"missing", filepath.Join(dir, "nope.jsonl"), nil, os.ErrNotExist, "nope.jsonl"},
		{"empty", write("empty.jsonl", "\n\n"), nil, ErrNoCases, "holds no case"},
		{"malformed", write("bad.jsonl", good+`{"id":"B01","category":"odd","turns":["x"],"answer":{},"last_verified":"2026-11-20"}`+"\n"), nil, replay.ErrInvalid, "bad.jsonl:2"},
		{"no tag", write("good.jsonl", good), []string{"zh"}, ErrNoCases, "tagged [zh]"},
	} {
		_, err := Check(t.Context(), tt.path, f, CheckConfig{Tags: tt.tags})
		if !errors.Is(err, tt.want) || !strings.Contains(err.Error(), tt.says) {
			t.Errorf("%s: err = %v, want %v saying %q", tt.name, err, tt.want, tt.says)
		}
	}
	if called {
		t.Error("an agent was made for a check that had no cases")
	}
}

func TestReadReport(t *testing.T) {
	if _, err := ReadReport(strings.NewReader(`{"label":"x","dimensions":[{"dimension":"accuracy","score":4}]}`), "r.json"); !errors.Is(err, ErrReport) || !strings.Contains(err.Error(), "no coherence score") {
		t.Errorf("partial report: err = %v", err)
	}
	if _, err := ReadReport(strings.NewReader(`not json`), "r.json"); !errors.Is(err, ErrReport) {
		t.Errorf("not json: err = %v", err)
	}
}

// FuzzLoadScores: any input gives scores from 1 to 5 or errors, never a
// panic.
func FuzzLoadScores(f *testing.F) {
	f.Add(`{"case":"B05","score":2,"reason":"编造了第7.3条"}` + "\n" + `{"case":"A01","score":5}`)
	f.Add(`{"case":"x","score":2.5}`)
	f.Add("\n\n{")
	f.Fuzz(func(t *testing.T, in string) {
		scores, _ := LoadScores(strings.NewReader(in), "fuzz")
		for id, r := range scores {
			if id == "" || r.Score < 1 || r.Score > 5 {
				t.Errorf("case %q score %d", id, r.Score)
			}
		}
	})
}

// FuzzParseWeights: weights that parse are valid.
func FuzzParseWeights(f *testing.F) {
	f.Add("accuracy=25,coherence=25,memory=20,stability=10,efficiency=20")
	f.Add("accuracy=1e2,coherence=0,memory=0,stability=0,efficiency=0")
	f.Add("accuracy=NaN,coherence=25")
	f.Fuzz(func(t *testing.T, in string) {
		w, err := ParseWeights(in)
		if err == nil && w.Validate() != nil {
			t.Errorf("ParseWeights(%q) = %+v, which is not valid", in, w)
		}
	})
}
