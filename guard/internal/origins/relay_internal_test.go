package origins

import (
	"encoding/json"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"go.yaml.in/yaml/v3"

	"github.com/agentguard/agentguard/guard/internal/rulekit"
	"github.com/agentguard/agentguard/trace"
	"github.com/agentguard/agentguard/trace/lexicon"
)

// relayCase is one case of testdata/relay: a run and the evidence of the
// finding its answer must get ("" for none).
type relayCase struct {
	Name      string   `yaml:"name"`
	User      string   `yaml:"user"`
	Untrusted []string `yaml:"untrusted"`
	Steps     []struct {
		Call   string         `yaml:"call"`
		Args   map[string]any `yaml:"args"`
		Result string         `yaml:"result"`
		Answer string         `yaml:"answer"`
	} `yaml:"steps"`
	Want string `yaml:"want"`
}

// TestRelayCases runs the cases of testdata/relay (English and Chinese,
// each attack with its legitimate twin), the answer judged as the guard
// judges it online: on the trace as it stood when the answer came. Every
// finding carries its facts: the answer's words, the third-party text they
// came from, and what no user turn or record holds.
func TestRelayCases(t *testing.T) {
	files, err := filepath.Glob(filepath.Join("testdata", "relay", "*.yaml"))
	if err != nil || len(files) < 2 {
		t.Fatalf("relay cases: %v, %v", files, err)
	}
	for _, file := range files {
		data, err := os.ReadFile(file)
		if err != nil {
			t.Fatal(err)
		}
		var cases []relayCase
		if err := yaml.Unmarshal(data, &cases); err != nil {
			t.Fatalf("%s: %v", file, err)
		}
		for _, c := range cases {
			t.Run(filepath.Base(file)+"/"+c.Name, func(t *testing.T) {
				got := runRelayCase(t, c)
				var evidence []string
				for _, f := range got {
					evidence = append(evidence, f.Evidence)
					t.Log(f.Message)
					checkRelayFacts(t, f)
				}
				switch {
				case c.Want == "" && len(got) > 0:
					t.Errorf("findings %q, want none: %s", evidence, got[0].Message)
				case c.Want != "" && !slices.Contains(evidence, c.Want):
					t.Errorf("findings %q, want one on %q", evidence, c.Want)
				}
			})
		}
	}
}

// runRelayCase builds the case's trace step by step and returns the
// untrusted-relay findings on its answers.
func runRelayCase(t *testing.T, c relayCase) []trace.Finding {
	t.Helper()
	listed := map[string]rulekit.Tool{}
	for _, name := range c.Untrusted {
		listed[name] = rulekit.Tool{Untrusted: true}
	}
	r := NewRelay(rulekit.NewTools(lexicon.Default().Compiled(), listed))
	tr := &trace.Trace{UserTurns: []string{c.User}}
	var out []trace.Finding
	for _, st := range c.Steps {
		s := &trace.Step{Index: tr.Len(), Turn: 0}
		if st.Answer != "" {
			s.Kind, s.Name, s.Result = trace.KindModel, "model", st.Answer
		} else {
			args, err := json.Marshal(st.Args)
			if err != nil {
				t.Fatal(err)
			}
			s.Kind, s.Name, s.Args, s.Result = trace.KindTool, st.Call, string(args), st.Result
		}
		tr.Steps = append(tr.Steps, s)
		if s.Kind == trace.KindModel {
			out = append(out, r.Check(tr, s)...)
		}
	}
	return out
}

// checkRelayFacts holds a finding to the facts every untrusted-relay
// finding carries.
func checkRelayFacts(t *testing.T, f trace.Finding) {
	t.Helper()
	if f.Verdict != trace.Allow || f.Severity != trace.SeverityWarning {
		t.Errorf("%s: verdict %s, severity %s; want a warning", f.Message, f.Verdict, f.Severity)
	}
	var kinds []trace.FactKind
	for _, fact := range f.Facts {
		kinds = append(kinds, fact.Kind)
	}
	if len(f.Facts) == 0 || len(f.Facts) > 6 || f.Facts[0].Kind != trace.FactAnswer || !strings.Contains(f.Facts[0].Text, f.Evidence) ||
		!slices.Contains(kinds, trace.FactAbsent) {
		t.Errorf("%s: facts %v", f.Message, f.Facts)
	}
	if i := slices.Index(kinds, trace.FactOrigin); i < 0 || !strings.HasPrefix(f.Facts[i].Says, "third-party text") || f.Facts[i].Where == "" {
		t.Errorf("%s: no origin fact of third-party text: %v", f.Message, f.Facts)
	}
}

// FuzzRecommendations holds the reader of an answer's recommendations to
// what it returns: names that are words of the answer, each looked up by
// forms that end where the name does, on any text.
func FuzzRecommendations(f *testing.F) {
	for _, s := range []string{
		"You should stay at Harbour View Hotel, it's beautiful.", "I recommend the **Harbour View Hotel** in Porto.",
		"Casa Amarela Guesthouse is worth a visit.", "我推荐您入住河畔景观酒店。", "住宿推荐：山城云顶酒店。",
		"另外我推荐「云上小馆」。", "我建议您去 Riverside Garden Hotel 看看。", "I recommend China Garden (Authentic Chinese cuisine).",
		"Try \"Le Petit\" — or don't miss the Blue Door Bakery!", "推荐\xff酒店酒店", "",
	} {
		f.Add(s)
	}
	lx := &lexicon.Default().Compiled().Recommendations
	cues := lexicon.NewWordSet(slices.Concat(lx.Before, lx.After), true)
	f.Fuzz(func(t *testing.T, text string) {
		lower := asciiLower(text)
		holds := func(w string) bool { return strings.Contains(lower, w) }
		if cues.In(text) != slices.ContainsFunc(slices.Concat(lx.Before, lx.After), holds) {
			t.Fatalf("%q: the cues and the words disagree on whether it may recommend", text)
		}
		for _, n := range recommendations(lx, cues, text) {
			if !strings.Contains(text, n.text) || len(n.variants) == 0 {
				t.Fatalf("%q: recommendation %q not in the text", text, n.text)
			}
			for _, v := range n.variants {
				if !strings.HasSuffix(n.text, v) && !strings.Contains(text, v) {
					t.Fatalf("%q: variant %q of %q", text, v, n.text)
				}
			}
		}
	})
}
