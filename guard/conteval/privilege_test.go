package conteval

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"testing"

	"github.com/agentguard/agentguard/trace"
)

// A call outside the allow-list is sampled every time and makes the round
// red by itself, whatever the sampling rate and however green the pass
// rate: in the demo traffic one such trace of 26 was sampled and
// the verdict was yellow.
func TestPrivilegeViolationFailsTheGateAlone(t *testing.T) {
	for _, rate := range []float64{1e-9, 0.05, 1} {
		t.Run(fmt.Sprint(rate), func(t *testing.T) {
			traces := population(3000, 7)
			off := 0
			for _, tr := range traces {
				if slices.ContainsFunc(tr.Steps, func(s *trace.Step) bool { return s.Name == "issue_voucher" }) {
					off++
				}
			}
			if off == 0 {
				t.Fatal("the population has no call off the allow-list")
			}
			cfg := testConfig()
			cfg.Sampling.HeadRate = rate
			rep, err := (&Evaluator{Config: cfg}).Run(context.Background(), traces, roundTime)
			if err != nil {
				t.Fatal(err)
			}
			sampled := 0
			for _, s := range rep.Samples {
				if s.Bands.Has(BandPrivilege) {
					sampled++
					if s.Passed {
						t.Errorf("sample %s ran a tool off the allow-list and passed", s.TraceID)
					}
				}
			}
			if sampled != off || rep.Privilege != off {
				t.Errorf("%d privilege samples, Privilege %d; want all %d traces", sampled, rep.Privilege, off)
			}
			if rep.Verdict != Red || rep.Verdict.ExitCode() != 1 {
				t.Errorf("verdict %s (exit %d), want red (exit 1); head alone says %s", rep.Verdict, rep.Verdict.ExitCode(), rep.Head.Verdict)
			}
			if !strings.Contains(rep.GateLine(), "outside the allow-list") {
				t.Errorf("gate line does not say why: %s", rep.GateLine())
			}
		})
	}
}

// One clean round stays as it was: no privilege band, the head's verdict.
func TestNoPrivilegeViolationKeepsTheHeadVerdict(t *testing.T) {
	cfg := testConfig()
	cfg.Assertions.AllowedTools = append(cfg.Assertions.AllowedTools, "issue_voucher")
	rep, err := (&Evaluator{Config: cfg}).Run(context.Background(), population(3000, 7), roundTime)
	if err != nil {
		t.Fatal(err)
	}
	if rep.Privilege != 0 || rep.Verdict != rep.Head.Verdict {
		t.Errorf("privilege %d, verdict %s, head %s", rep.Privilege, rep.Verdict, rep.Head.Verdict)
	}
}

// An assertion that applied to no sample is a warning in the report: the
// README's command once ran without the shipped config, and three of five
// assertions checked nothing behind a green verdict.
func TestAssertionThatAppliedToNothingIsAWarning(t *testing.T) {
	traces := population(1000, 3)
	tests := []struct {
		name string
		cfg  Config
		want []string // assertion names warned about
	}{
		// The population has no amounts, citations or refusals.
		{"test config", testConfig(), []string{NameNonNegativeAmounts, NameCitationsRetrieved, NameRefusalWithoutEvidence}},
		// Without json_routes no answer is held to JSON either.
		{"no config", Config{Sampling: Sampling{Seed: 1}}, []string{NameJSONAnswer, NameNonNegativeAmounts, NameCitationsRetrieved, NameRefusalWithoutEvidence}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			rep, err := (&Evaluator{Config: tt.cfg}).Run(context.Background(), traces, roundTime)
			if err != nil {
				t.Fatal(err)
			}
			var got []string
			for _, w := range rep.Warnings {
				for _, st := range rep.Assertions {
					if strings.Contains(w, fmt.Sprintf("%q", st.Name)) {
						got = append(got, st.Name)
					}
				}
			}
			slices.Sort(got)
			want := slices.Sorted(slices.Values(tt.want))
			if !slices.Equal(got, want) {
				t.Errorf("warnings about %v, want %v\n%s", got, want, strings.Join(rep.Warnings, "\n"))
			}
		})
	}
}
