package claims

import (
	"bufio"
	"encoding/json"
	"os"
	"strings"
	"testing"

	"github.com/agentguard/agentguard/guard/internal/detect"
	"github.com/agentguard/agentguard/guard/internal/rulekit"
	"github.com/agentguard/agentguard/guard/rules"
	"github.com/agentguard/agentguard/memory"
	"github.com/agentguard/agentguard/trace"
)

// cardAnswer is one case of testdata/card_answers.jsonl: the user's turns,
// the agent's answer in the last of them, and what the memory-answer rule
// must find: "retry" (told), "warn" (offered), "clarify" (a replaced
// address), or "" nothing. card_answers.jsonl was written before the rule,
// from rewordings of seed case C ("don't text me", then an answer that
// assumes texting), in English and Chinese; the clean ones are answers
// that look like them. card_answers_heldout.jsonl was written by someone
// who had not read the rule or the first file; its first run found 48 of
// 55 (17 of 20 told, 4 of 6 offered, 6 of 6 addresses, 2 false flags of
// 23), and the fixes since (a noun as a verb, "text you"; someone else's
// call only when it reached the user; "不接受" as a ban word) leave the two
// known misses.
type cardAnswer struct {
	Name   string   `json:"name"`
	User   []string `json:"user"`
	Answer string   `json:"answer"`
	Want   string   `json:"want"`
	// KnownMiss says why the rule misses a case it should find: the
	// test asserts the miss, so that a fix shows.
	KnownMiss string `json:"known_miss,omitempty"`
}

func readCardAnswers(t *testing.T, file string) []cardAnswer {
	t.Helper()
	f, err := os.Open(file)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	var out []cardAnswer
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		var c cardAnswer
		if err := json.Unmarshal(sc.Bytes(), &c); err != nil {
			t.Fatalf("%s: %v", sc.Text(), err)
		}
		out = append(out, c)
	}
	return out
}

// cardTrace is a trace of c's user turns with the answer as the last step,
// in the last turn.
func cardTrace(c cardAnswer) (*trace.Trace, *trace.Step) {
	tr := &trace.Trace{ID: c.Name, UserTurns: c.User}
	for i := range c.User[:len(c.User)-1] {
		tr.Steps = append(tr.Steps, &trace.Step{Index: i, Kind: trace.KindModel, Turn: i, Result: "OK."})
	}
	s := &trace.Step{Index: len(tr.Steps), Kind: trace.KindModel, Turn: len(c.User) - 1, Result: c.Answer}
	tr.Steps = append(tr.Steps, s)
	return tr, s
}

func TestCardAnswers(t *testing.T) {
	for _, file := range []string{"testdata/card_answers.jsonl", "testdata/card_answers_heldout.jsonl"} {
		t.Run(strings.TrimSuffix(strings.TrimPrefix(file, "testdata/"), ".jsonl"), func(t *testing.T) { testCardAnswers(t, file) })
	}
}

func testCardAnswers(t *testing.T, file string) {
	r := NewCardAnswers(rulekit.NewTools(detect.Default(), nil), memory.Enforcer{})
	for _, c := range readCardAnswers(t, file) {
		t.Run(c.Name, func(t *testing.T) {
			tr, s := cardTrace(c)
			got := r.Check(tr, s)
			if c.KnownMiss != "" {
				if len(got) > 0 {
					t.Fatalf("found %s, which was a known miss (%s): drop known_miss", got[0].Verdict, c.KnownMiss)
				}
				t.Logf("known miss: %s", c.KnownMiss)
				return
			}
			if c.Want == "" {
				if len(got) > 0 {
					t.Fatalf("found %s %q in %q, want nothing", got[0].Verdict, got[0].Message, c.Answer)
				}
				return
			}
			if len(got) != 1 {
				t.Fatalf("found %d findings in %q, want one %s: %+v", len(got), c.Answer, c.Want, got)
			}
			f := got[0]
			want := map[string]trace.Verdict{"retry": trace.Retry, "warn": trace.Allow, "clarify": trace.Clarify}[c.Want]
			if f.Verdict != want || f.Rule != rules.MemoryAnswer || f.Dimension != trace.Memory || f.Step != s.Index {
				t.Errorf("got %s %s %s step %d, want %s %s memory step %d", f.Rule, f.Verdict, f.Dimension, f.Step, rules.MemoryAnswer, want, s.Index)
			}
			// The evidence a reviewer needs: the answer's sentence and the
			// card's constraint, with the turn that set it.
			var answer, card bool
			for _, x := range f.Facts {
				answer = answer || x.Kind == trace.FactAnswer && x.Step == s.Index && strings.Contains(c.Answer, x.Text)
				card = card || x.Kind == trace.FactCard && x.Turn >= 0 && x.Turn < len(c.User)
			}
			if !answer || !card {
				t.Errorf("facts %+v: want the answer's sentence and the card's constraint", f.Facts)
			}
		})
	}
}

// TestCardAnswersReadTheCardOfTheirTurn: a ban the user gives after the
// answer does not make the answer break it.
func TestCardAnswersReadTheCardOfTheirTurn(t *testing.T) {
	r := NewCardAnswers(rulekit.NewTools(detect.Default(), nil), memory.Enforcer{})
	tr := &trace.Trace{UserTurns: []string{"Where is my parcel?", "Please don't text me from now on."}}
	s := &trace.Step{Index: 0, Kind: trace.KindModel, Turn: 0, Result: "I'll text you the tracking number."}
	tr.Steps = []*trace.Step{s, {Index: 1, Kind: trace.KindModel, Turn: 1, Result: "Noted."}}
	if got := r.Check(tr.Prefix(0), s); len(got) > 0 {
		t.Errorf("an answer of turn 0 judged against a ban of turn 1: %+v", got)
	}
	late := &trace.Step{Index: 2, Kind: trace.KindModel, Turn: 1, Result: "I'll text you the tracking number."}
	if got := r.Check(tr, late); len(got) != 1 {
		t.Errorf("the same answer after the ban: %d findings, want 1", len(got))
	}
}

// TestCardAnswersSkipOtherSteps: tool steps, answers that call tools, and
// an empty card cost nothing.
func TestCardAnswersSkipOtherSteps(t *testing.T) {
	r := NewCardAnswers(rulekit.NewTools(detect.Default(), nil), memory.Enforcer{})
	tr := &trace.Trace{UserTurns: []string{"Please don't text me."}}
	for _, s := range []*trace.Step{
		{Kind: trace.KindTool, Name: "send_sms", Result: "I'll text you"},
		{Kind: trace.KindModel, Result: "I'll text you", Calls: []trace.Call{{Name: "send_sms"}}},
	} {
		if got := r.Check(tr, s); got != nil {
			t.Errorf("%+v: got %v", s, got)
		}
	}
	clean := &trace.Trace{UserTurns: []string{"Where is my order?"}}
	s := &trace.Step{Kind: trace.KindModel, Result: "I'll text you the tracking number."}
	clean.Steps = []*trace.Step{s}
	if n := testing.AllocsPerRun(100, func() { r.Check(clean, s) }); n > 0 {
		t.Errorf("an answer beside an empty card allocates %v times", n)
	}
}
