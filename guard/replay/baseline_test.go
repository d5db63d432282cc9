package replay

import (
	"bytes"
	"slices"
	"strings"
	"testing"
	"time"
)

// A two-track case as a golden set holds it: the expert's baseline from the
// rules, the agent's best undisturbed run, in Chinese and English.
const tracked = `{"id":"N07","category":"normal","turns":["我拆封的耳机能退吗？"],"answer":{},` +
	`"tracks":{"expert":{"must":["7天|7 days","质量问题|defective"],"must_not":["无理由"],"text":"拆封电子产品仅在7天内且有质量问题时可退。"},` +
	`"agent":{"must":["7 days|7天","15%"],"must_not":["无理由","30 days"]}},"last_verified":"2026-11-20"}`

func TestCrossCheck(t *testing.T) {
	cases, err := LoadCases(strings.NewReader(tracked), "tracked.jsonl")
	if err != nil {
		t.Fatal(err)
	}
	c := &cases[0]
	x := c.CrossCheck()
	if want := []string{"7天|7 days"}; !slices.Equal(x.Agreed.Must, want) {
		t.Errorf("agreed must = %q, want %q (alternatives in any order are one element)", x.Agreed.Must, want)
	}
	if want := []string{"无理由"}; !slices.Equal(x.Agreed.MustNot, want) {
		t.Errorf("agreed must_not = %q, want %q", x.Agreed.MustNot, want)
	}
	var got []string
	for _, d := range x.Disagreements {
		got = append(got, d.String())
	}
	want := []string{`"质量问题|defective": expert must, agent none`, `"15%": expert none, agent must`, `"30 days": expert none, agent must_not`}
	if !slices.Equal(got, want) {
		t.Errorf("disagreements =\n%q\nwant\n%q", got, want)
	}
	// The agreed elements are what runs are checked against.
	ref := c.Reference()
	if !slices.Equal(ref.Must, x.Agreed.Must) || !slices.Equal(ref.MustNot, x.Agreed.MustNot) || ref.Text == "" {
		t.Errorf("Reference = %+v", ref)
	}
	r := answered("N07", 1, "未拆封商品支持无理由退货；拆封的7天内可退。")
	if k := c.Check(&r); !slices.Equal(k.Forbidden, []string{"无理由"}) || len(k.Missing) != 0 {
		t.Errorf("Check = %+v, want only 无理由 forbidden", k)
	}
	// Round trip: WriteCase writes the tracks back.
	var b bytes.Buffer
	if err := WriteCase(&b, *c); err != nil || !strings.Contains(b.String(), `"tracks":{"expert"`) {
		t.Errorf("WriteCase = %s, %v", b.String(), err)
	}
	// Opposite ways are a disagreement, not an agreement.
	c2 := Case{Tracks: &Tracks{Expert: Answer{Must: []string{"refund"}}, Agent: Answer{MustNot: []string{"Refund"}}}}
	if x := c2.CrossCheck(); len(x.Agreed.Must)+len(x.Agreed.MustNot) != 0 || len(x.Disagreements) != 1 || x.Disagreements[0].Expert != "must" || x.Disagreements[0].Agent != "must_not" {
		t.Errorf("opposite ways: %+v", x)
	}
	// A case without tracks is its own reference.
	c3 := Case{Answer: Answer{Must: []string{"A1001"}}}
	if x := c3.CrossCheck(); len(x.Disagreements) != 0 || !slices.Equal(c3.Reference().Must, []string{"A1001"}) {
		t.Errorf("no tracks: %+v", x)
	}
}

func TestTracksValidated(t *testing.T) {
	bad := strings.Replace(tracked, `"15%"`, `"15%|"`, 1)
	if _, err := LoadCases(strings.NewReader(bad), "bad.jsonl"); err == nil || !strings.Contains(err.Error(), "tracks.agent.must[1]") {
		t.Errorf("err = %v, want the empty alternative of tracks.agent.must[1]", err)
	}
}

func TestStale(t *testing.T) {
	now := time.Date(2026, 12, 1, 0, 0, 0, 0, time.UTC)
	cases := []Case{{ID: "new", LastVerified: "2026-11-20"}, {ID: "old", LastVerified: "2026-01-05"}, {ID: "older", LastVerified: "2025-06-01"}, {ID: "edge", LastVerified: "2026-09-02"}}
	var got []string
	for _, c := range Stale(cases, now, 0) {
		got = append(got, c.ID)
	}
	if want := []string{"older", "old"}; !slices.Equal(got, want) {
		t.Errorf("Stale = %v, want %v (90 days: 2026-09-02 is exactly 90 days old, still valid)", got, want)
	}
	if got := Stale(cases, now, 400*24*time.Hour); len(got) != 1 || got[0].ID != "older" {
		t.Errorf("Stale(400 days) = %v", got)
	}
}

func TestShape(t *testing.T) {
	var cases []Case
	for _, cat := range []Category{Normal, Boundary, Adversarial} {
		for range PerCategory {
			cases = append(cases, Case{Category: cat, Turns: []string{"hi"}})
		}
	}
	cases[0].Turns = make([]string, LongTurns)
	if got := Shape(cases); got != nil {
		t.Errorf("Shape of the method's set = %q", got)
	}
	got := Shape(cases[1:3])
	want := []string{
		"2 normal cases, the method asks for 10",
		"0 boundary cases, the method asks for 10",
		"0 adversarial cases, the method asks for 10",
		"the longest conversation has 1 turns, the method asks for one of 15 or more",
	}
	if !slices.Equal(got, want) {
		t.Errorf("Shape =\n%q\nwant\n%q", got, want)
	}
}

func TestTagged(t *testing.T) {
	cases := []Case{{ID: "a", Tags: []string{"en", "returns"}}, {ID: "b", Tags: []string{"zh"}}, {ID: "c"}, {ID: "d", Tags: []string{"returns"}}}
	var got []string
	for _, c := range Tagged(cases, "returns", "memory") {
		got = append(got, c.ID)
	}
	if want := []string{"a", "d"}; !slices.Equal(got, want) {
		t.Errorf("Tagged = %v, want %v", got, want)
	}
}
