package conteval

import (
	"bytes"
	"context"
	"errors"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/agentguard/agentguard/trace"
)

// TestReviewRoundTrip quotes seed 002's "weekly human check of 20 green
// samples": a round keeps Review green head samples; a person marks one
// wrong; the next round's gate says so and a green verdict turns yellow.
func TestReviewRoundTrip(t *testing.T) {
	traces := many("rv", "order-status", 1000)
	ev := &Evaluator{Review: DefaultReview}
	rep, err := ev.Run(context.Background(), traces, time.Date(2026, 12, 1, 0, 0, 0, 0, time.UTC))
	if err != nil {
		t.Fatal(err)
	}
	items := rep.ReviewItems(DefaultReview)
	if len(items) == 0 || len(items) > DefaultReview {
		t.Fatalf("%d review items, want 1 to %d", len(items), DefaultReview)
	}
	for _, it := range items {
		if len(it.Turns) == 0 || it.OK != nil {
			t.Errorf("item %+v: want the user's turns and no verdict yet", it)
		}
	}
	var file bytes.Buffer
	if err := WriteReview(&file, items); err != nil {
		t.Fatal(err)
	}
	// The person marks the first wrong, the second right, leaves the rest.
	lines := strings.Split(strings.TrimSpace(file.String()), "\n")
	lines[0] = strings.Replace(lines[0], `"ok":null`, `"ok":false,"note":"答非所问 / answers another order"`, 1)
	if len(lines) > 1 {
		lines[1] = strings.Replace(lines[1], `"ok":null`, `"ok":true`, 1)
	}
	hc, err := ReadReview(strings.NewReader(strings.Join(lines, "\n")), "review.jsonl")
	if err != nil {
		t.Fatal(err)
	}
	if hc.Checked != min(2, len(lines)) || len(hc.Wrong) != 1 || hc.Wrong[0] != items[0].TraceID {
		t.Fatalf("human check %+v", hc)
	}
	green := &Report{Verdict: Green, Head: Estimate{Verdict: Green}}
	green.AddHumanCheck(hc)
	if green.Verdict != Yellow || green.Trend.Human == nil || !strings.Contains(green.GateLine(), "a person found 1 of") {
		t.Errorf("after a wrong green sample: verdict %s, gate line %q", green.Verdict, green.GateLine())
	}
	if _, err := ReadReview(strings.NewReader("{\"ok\":true}\nnot json\n"), "r.jsonl"); !errors.Is(err, ErrReview) || !strings.Contains(err.Error(), "r.jsonl:2") {
		t.Errorf("bad lines: err = %v", err)
	}
}

func FuzzReadReview(f *testing.F) {
	f.Add(`{"trace_id":"t1","ok":false,"note":"错了"}` + "\n" + `{"trace_id":"t2","ok":null}`)
	f.Add("{}\n\n[1]")
	f.Fuzz(func(t *testing.T, in string) {
		hc, err := ReadReview(strings.NewReader(in), "fuzz")
		if err == nil && len(hc.Wrong) > hc.Checked {
			t.Fatalf("%d wrong of %d checked", len(hc.Wrong), hc.Checked)
		}
	})
}

func TestDocDomain(t *testing.T) {
	for in, want := range map[string]string{"KB-RET-04": "KB-RET", "policies/returns/7": "policies/returns", "退货政策-3": "退货政策", "KB7": "KB7", "": "(none)", "-7": "-7"} {
		if got := DocDomain(in); got != want {
			t.Errorf("DocDomain(%q) = %q, want %q", in, got, want)
		}
	}
}

// TestCitationDefectsByDomain quotes seed 002: citation defects are
// "grouped by document domain", so that a report says which part of the
// knowledge base answers cite wrongly — most defects first.
func TestCitationDefectsByDomain(t *testing.T) {
	traces := []*trace.Trace{
		tr("t1", "faq", retrieval("KB-RET-01"), answer("Returns take 30 days. [KB-RET-09]")),
		tr("t2", "faq", retrieval("KB-RET-01"), answer("Yes, within 30 days. [KB-RET-07]")),
		tr("t3", "faq", retrieval("POL-ZH-1"), answer("七天无理由退货。[POL-ZH-3]")),
		tr("t4", "faq", retrieval("KB-SHIP-02"), answer("It ships in two days. [KB-SHIP-02]")),
	}
	cfg := testConfig()
	cfg.Sampling.HeadRate = 1
	rep, err := (&Evaluator{Config: cfg}).Run(context.Background(), traces, roundTime)
	if err != nil {
		t.Fatal(err)
	}
	want := []DomainCount{{Domain: "KB-RET", Defects: 2}, {Domain: "POL-ZH", Defects: 1}}
	if !slices.Equal(rep.CitationDomains, want) {
		t.Errorf("citation domains %+v, want %+v", rep.CitationDomains, want)
	}
}
