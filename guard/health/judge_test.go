package health

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"reflect"
	"regexp"
	"slices"
	"strings"
	"sync/atomic"
	"testing"
	"unicode/utf8"

	"github.com/agentguard/agentguard/guard"
	"github.com/agentguard/agentguard/guard/guardtest"
	"github.com/agentguard/agentguard/guard/replay"
	"github.com/agentguard/agentguard/trace"
	"github.com/tmc/langchaingo/llms"
)

// TestParseRating checks what health adds to the shared parser
// (guard/internal/judge, where the strictness is tested and fuzzed): its
// error type, and the Rating it returns.
func TestParseRating(t *testing.T) {
	tests := []struct {
		name   string
		answer string
		want   Rating
		err    string // "" means valid
	}{
		{"good", `{"score": 4, "reason": " Right answer, terse. "}`, Rating{4, "Right answer, terse."}, ""},
		{"code fence", "```json\n{\"score\": 3, \"reason\": \"Declined.\"}\n```", Rating{3, "Declined."}, ""},
		{"prose", "The answer is fine.", Rating{}, "not a JSON object"},
		{"score 6", `{"score": 6, "reason": "r"}`, Rating{}, "score 6 is not an integer from 1 to 5"},
		{"reason too long", `{"score": 4, "reason": "` + strings.Repeat("é", MaxReason+1) + `"}`, Rating{}, "over 800"},
		{"answer too long", `{"score": 4, "reason": "r"}` + strings.Repeat(" ", MaxRating), Rating{}, "bytes, over 4096"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := ParseRating(tt.answer)
			if tt.err == "" {
				if err != nil || got != tt.want {
					t.Errorf("ParseRating = %+v, %v; want %+v", got, err, tt.want)
				}
				return
			}
			if err == nil || !errors.Is(err, ErrVerdict) || !strings.HasPrefix(err.Error(), "health: judge: invalid verdict: ") || !strings.Contains(err.Error(), tt.err) {
				t.Errorf("ParseRating = %+v, %v; want an ErrVerdict saying %q", got, err, tt.err)
			}
			var e *Error
			if !errors.As(err, &e) || e.Op != "judge" {
				t.Errorf("err %v is not a *health.Error of op judge", err)
			}
		})
	}
}

// caseOf reads the case id from a judge prompt.
var caseOf = regexp.MustCompile(`(?m)^Case (\S+) \(`)

func promptOf(msgs []llms.MessageContent) (system, user string) {
	for _, m := range msgs {
		for _, p := range m.Parts {
			if t, ok := p.(llms.TextContent); ok {
				switch m.Role {
				case llms.ChatMessageTypeSystem:
					system = t.Text
				case llms.ChatMessageTypeHuman:
					user = t.Text
				}
			}
		}
	}
	return system, user
}

// cannedJudge answers each case's prompt with its reply; a case without
// one fails the test: it should not have been judged.
func cannedJudge(t *testing.T, replies map[string]guardtest.Reply) *guardtest.Model {
	return guardtest.Func(func(_ context.Context, msgs []llms.MessageContent, _ llms.CallOptions) (guardtest.Reply, error) {
		_, user := promptOf(msgs)
		m := caseOf.FindStringSubmatch(user)
		if m == nil {
			t.Errorf("prompt without a case line:\n%s", user)
			return guardtest.Reply{}, errors.New("no case")
		}
		r, ok := replies[m[1]]
		if !ok {
			t.Errorf("case %s was judged, but it was not screened", m[1])
		}
		return r, nil
	})
}

var fixtureKB = []Document{{ID: "KB-1", Text: "Returns within 7 days, see clause 2.1."}}

func judgedFixture(t *testing.T, label string, shadow bool, opts Options) (*Report, *Report) {
	t.Helper()
	runs := fixtureRuns(t, label, shadow, nil, true)
	opts.Now, opts.Knowledge = fixtureNow, fixtureKB
	judged, err := Score(context.Background(), fixtureCases(t), runs, nil, opts)
	if err != nil {
		t.Fatal(err)
	}
	plain, err := Score(context.Background(), fixtureCases(t), runs, nil, Options{Now: fixtureNow, Knowledge: fixtureKB})
	if err != nil {
		t.Fatal(err)
	}
	return judged, plain
}

// The canned verdicts of the tests: a good one, a malformed one, one out of
// range, and a failed call.
func fixtureReplies() map[string]guardtest.Reply {
	return map[string]guardtest.Reply{
		"vip":    {Text: `{"score": 2, "reason": "Invents clause 7.3; the knowledge base has no such rule."}`, Usage: &guardtest.Usage{In: 900, Out: 30}},
		"ghost":  guardtest.Text("The answer looks fine to me."),
		"no-sms": guardtest.Text(`{"score": 7, "reason": "Texted the user after being told not to."}`),
		"vague":  {Err: errors.New("judge unavailable")},
	}
}

func TestJudge(t *testing.T) {
	judge := cannedJudge(t, fixtureReplies())
	pricing := guard.Pricing{InputPerMillion: 2.5, OutputPerMillion: 10}
	rep, plain := judgedFixture(t, "unguarded", true, Options{Judge: judge, JudgeName: "canned", JudgePricing: pricing})
	j := rep.Judge
	if j == nil {
		t.Fatal("no judge report")
	}
	if plain.Judge != nil {
		t.Errorf("judge report without a judge: %+v", plain.Judge)
	}

	// Only the screened cases, once each.
	if got := len(judge.Received()); got != 4 || j.Calls != 4 || j.Screened != 4 || j.Cases != 5 {
		t.Errorf("%d calls (report %d), %d screened of %d cases; want 4 calls on 4 screened of 5", got, j.Calls, j.Screened, j.Cases)
	}
	var ids []string
	for _, c := range j.Judged {
		ids = append(ids, c.Case)
	}
	if want := []string{"vip", "ghost", "no-sms", "vague"}; !slices.Equal(ids, want) {
		t.Errorf("judged %v, want %v", ids, want)
	}
	if j.Name != "canned" || j.Errors != 3 || j.Confirmed != 1 || j.Disputed != 0 {
		t.Errorf("name %q, %d errors, %d confirmed, %d disputed; want canned, 3, 1, 0", j.Name, j.Errors, j.Confirmed, j.Disputed)
	}

	byCase := map[string]JudgedCase{}
	for _, c := range j.Judged {
		byCase[c.Case] = c
	}
	tests := []struct {
		id     string
		score  int
		reason string
		err    string
	}{
		{"vip", 2, "Invents clause 7.3; the knowledge base has no such rule.", ""},
		{"ghost", 0, "", "health: judge: invalid verdict: not a JSON object"},
		{"no-sms", 0, "", "health: judge: invalid verdict: score 7 is not an integer from 1 to 5"},
		{"vague", 0, "", "health: judge: judge unavailable"},
	}
	for _, tt := range tests {
		t.Run(tt.id, func(t *testing.T) {
			c := byCase[tt.id]
			if c.Score != tt.score || c.Reason != tt.reason || !strings.HasPrefix(c.Error, tt.err) || (tt.err == "") != (c.Error == "") {
				t.Errorf("verdict %d %q, error %q; want %d %q, error %q…", c.Score, c.Reason, c.Error, tt.score, tt.reason, tt.err)
			}
			if len(c.Runs) == 0 || len(c.Screens) == 0 {
				t.Errorf("no screened runs or screens: %+v", c)
			}
		})
	}

	// Tokens: the provider's counts where reported, estimates elsewhere;
	// the failed call has none.
	vip, ghost, vague := byCase["vip"], byCase["ghost"], byCase["vague"]
	if vip.TokensIn != 900 || vip.TokensOut != 30 || vip.Estimated {
		t.Errorf("vip tokens %d/%d estimated=%v, want 900/30 reported", vip.TokensIn, vip.TokensOut, vip.Estimated)
	}
	if ghost.TokensIn < 200 || ghost.TokensOut != trace.EstimateTokens("The answer looks fine to me.") || !ghost.Estimated {
		t.Errorf("ghost tokens %d/%d estimated=%v, want estimates", ghost.TokensIn, ghost.TokensOut, ghost.Estimated)
	}
	if vague.TokensIn != 0 || vague.Cost != 0 {
		t.Errorf("failed call: %d tokens, cost %v", vague.TokensIn, vague.Cost)
	}
	sumIn, sumOut, sumCost := 0, 0, 0.0
	for _, c := range j.Judged {
		sumIn, sumOut, sumCost = sumIn+c.TokensIn, sumOut+c.TokensOut, sumCost+c.Cost
	}
	if j.TokensIn != sumIn || j.TokensOut != sumOut || j.Cost != sumCost || !j.Estimated {
		t.Errorf("totals %d/%d %v, want the sums %d/%d %v, estimated", j.TokensIn, j.TokensOut, j.Cost, sumIn, sumOut, sumCost)
	}
	if want := (900*2.5 + 30*10) / 1e6; vip.Cost != want {
		t.Errorf("vip cost %v, want %v", vip.Cost, want)
	}

	// The computed report is the same with and without a judge.
	if !reflect.DeepEqual(rep.Dimensions, plain.Dimensions) || rep.Total != plain.Total || rep.Points != plain.Points || rep.Band != plain.Band ||
		!reflect.DeepEqual(rep.Problems, plain.Problems) || !reflect.DeepEqual(rep.Hits, plain.Hits) {
		t.Errorf("the judge changed the computed report:\n%+v\n%+v", rep.Dimensions, plain.Dimensions)
	}
	// Only vip's verdict is valid, and it confirms the failure: the judge's
	// view of accuracy is the computed score.
	for _, d := range j.Dimensions {
		if d.Computed != rep.Score(d.Dimension).Score {
			t.Errorf("%s: computed %v, report says %v", d.Dimension, d.Computed, rep.Score(d.Dimension).Score)
		}
		if d.Judged != d.Computed {
			t.Errorf("%s: judged %v, computed %v; want equal", d.Dimension, d.Judged, d.Computed)
		}
	}
	if got := j.Dimensions[0]; got.Dimension != trace.Accuracy || got.Verdicts != 1 {
		t.Errorf("accuracy %+v, want one verdict", got)
	}

	// Each call at temperature 0 in JSON mode.
	for _, o := range judge.Options() {
		if o.Temperature != 0 || !o.JSONMode {
			t.Errorf("call options %+v, want temperature 0, JSON mode", o)
		}
	}
}

// TestJudgedView checks how verdicts enter the judge's view of the
// dimensions, and that they never enter the computed scores.
func TestJudgedView(t *testing.T) {
	all := func(answer string) map[string]guardtest.Reply {
		m := map[string]guardtest.Reply{}
		for _, id := range []string{"vip", "ghost", "no-sms", "vague"} {
			m[id] = guardtest.Text(answer)
		}
		return m
	}
	type view struct{ accuracy, coherence, memory float64 }
	tests := []struct {
		name    string
		replies map[string]guardtest.Reply
		want    view
	}{
		// Unguarded, computed: accuracy 3.0, coherence 3.8, memory 2.0; the
		// verdict replaces the screened runs' scores, the others stay.
		{"every failure confirmed", all(`{"score": 2, "reason": "r"}`), view{3.0, 3.8, 2.0}},
		{"every failure unusable", all(`{"score": 1, "reason": "r"}`), view{2.3, 3.4, 1.0}},
		{"every case healthy", all(`{"score": 5, "reason": "r"}`), view{5, 5, 5}},
		{"every case minor flaws", all(`{"score": 4, "reason": "r"}`), view{4.3, 4.6, 4}},
		{"every case recovered", all(`{"score": 3, "reason": "r"}`), view{3.7, 4.2, 3}},
		{"no valid verdict", all(`{"score": 0, "reason": "r"}`), view{3.0, 3.8, 2.0}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			rep, plain := judgedFixture(t, "unguarded", true, Options{Judge: cannedJudge(t, tt.replies)})
			if !reflect.DeepEqual(rep.Dimensions, plain.Dimensions) || rep.Total != plain.Total {
				t.Errorf("the judge changed the computed scores")
			}
			got := view{rep.Judge.Dimensions[0].Judged, rep.Judge.Dimensions[1].Judged, rep.Judge.Dimensions[2].Judged}
			if got != tt.want {
				t.Errorf("judge's view %+v, want %+v (computed %.1f %.1f %.1f)", got, tt.want,
					plain.Score(trace.Accuracy).Score, plain.Score(trace.Coherence).Score, plain.Score(trace.Memory).Score)
			}
			for i, d := range rep.Judge.Dimensions {
				if d.Dimension != judged[i] {
					t.Errorf("dimension %d is %s, want %s", i, d.Dimension, judged[i])
				}
			}
		})
	}
}

func TestJudgePrompt(t *testing.T) {
	judge := cannedJudge(t, fixtureReplies())
	if _, _ = judgedFixture(t, "unguarded", true, Options{Judge: judge}); t.Failed() {
		return
	}
	prompts := map[string]string{}
	for _, msgs := range judge.Received() {
		system, user := promptOf(msgs)
		if !strings.Contains(system, `{"score": <integer 1 to 5>, "reason":`) || !strings.Contains(system, "3 errors recovered") {
			t.Errorf("system prompt lacks the answer format or the rubric:\n%s", system)
		}
		prompts[caseOf.FindStringSubmatch(user)[1]] = user
	}
	tests := []struct {
		id   string
		want []string
	}{
		{"vip", []string{
			"Case vip (boundary): Policy the knowledge base lacks\nRuns: 3; screened: 1, 2, 3\n",
			"## Conversation\nUser: Is there VIP compensation?\nAgent: Per clause 7.3 you get ¥50 a day.\n",
			"## Baseline\nThe final answer must say: \"colleague\"\nThe final answer must not say: \"clause\"\n",
			"## Constraints\nNone.\n",
			// No document cited or retrieved: the best lexical match ("clause").
			"## Knowledge-base excerpts\n[KB-1] Returns within 7 days, see clause 2.1.\n",
			"Reply with only the JSON object.",
		}},
		{"no-sms", []string{
			"User: Don't text me.\nAgent: Noted.\nUser: Move order A1 to 9 Lake Road.\nAgent: Order A1 goes to 9 Lake Road; I texted you.\n",
			"The final answer must say: \"9 Lake Road\"\n",
			"## Constraints\n- from user turn 1: the tool send_sms must not run\n",
		}},
		{"vague", []string{
			"Runs: 3; screened: 2\n",
			// The runs answered differently: each answer with its runs.
			"User: Something is off with A1.\nAgent (runs 1, 3): Order A1 has shipped.\nAgent (run 2): I started a return for A1.\n",
			"The final answer must not say: \"return\"\n",
		}},
		{"ghost", []string{"There are no records of order A9.", "## Knowledge-base excerpts\nNone: the knowledge base has nothing on this case.\n"}},
	}
	for _, tt := range tests {
		t.Run(tt.id, func(t *testing.T) {
			p, ok := prompts[tt.id]
			if !ok {
				t.Fatal("not judged")
			}
			for _, w := range tt.want {
				if !strings.Contains(p, w) {
					t.Errorf("prompt lacks %q:\n%s", w, p)
				}
			}
		})
	}
}

func TestExcerpts(t *testing.T) {
	kb := []Document{
		{ID: "KB-RET-01", Text: "Unopened items can be returned within 7 days of delivery."},
		{ID: "KB-WAR-01", Text: "Electronics carry a 12 month warranty covering manufacturing defects."},
		{ID: "KB-SHP-01", Text: "Standard shipping takes 3 to 5 business days."},
		{ID: "KB-WAR-02", Text: "电子产品自签收起享受12个月保修，仅覆盖制造缺陷。"},
		{ID: "KB-LONG", Text: strings.Repeat("warranty terms ", 100)},
	}
	retrieval := func(ids ...string) *trace.Step {
		var parts []string
		for _, id := range ids {
			parts = append(parts, `{"id":"`+id+`"}`)
		}
		return &trace.Step{Kind: trace.KindTool, Name: "search_kb", Result: "[" + strings.Join(parts, ",") + "]"}
	}
	tests := []struct {
		name    string
		kb      []Document
		turns   []string
		answer  string
		steps   []*trace.Step
		want    []string
		unknown []string
	}{
		{"cited first, then retrieved", kb, []string{"Can I return it?"}, "Yes, within 7 days [KB-RET-01].", []*trace.Step{retrieval("KB-SHP-01", "KB-RET-01")},
			[]string{"KB-RET-01", "KB-SHP-01"}, nil},
		{"cited but unknown", kb, []string{"Warranty?"}, "See [KB-9] and [KB-WAR-01].", nil, []string{"KB-WAR-01"}, []string{"KB-9"}},
		{"retrieved but not in the knowledge base is ignored", kb, []string{"zzz"}, "Hmm.", []*trace.Step{retrieval("OTHER-1")}, nil, nil},
		{"lexical, English", kb, []string{"Does the warranty cover manufacturing defects of electronics?"}, "It does.", nil,
			[]string{"KB-WAR-01", "KB-LONG"}, nil},
		{"lexical, Chinese", kb, []string{"保修包括制造缺陷吗？"}, "包括。", nil, []string{"KB-WAR-02"}, nil},
		{"nothing matches", kb, []string{"Hello!"}, "Hi.", nil, nil, nil},
		{"at most four by id", kb, []string{"q"}, "[KB-RET-01] [KB-WAR-01] [KB-SHP-01] [KB-WAR-02] [KB-LONG]", nil,
			[]string{"KB-RET-01", "KB-WAR-01", "KB-SHP-01", "KB-WAR-02"}, nil},
		{"no knowledge base: the retrieved documents", nil, []string{"q"}, "Per [KB-X].", []*trace.Step{retrieval("KB-X")}, []string{"KB-X"}, nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c := replay.Case{ID: "c", Turns: tt.turns}
			r := run("c", []string{tt.answer}, tt.steps...)
			s := newScorer([]replay.Case{c}, []replay.Run{*r}, Options{Knowledge: tt.kb})
			sc := &screenedCase{c: &s.cases[0], runs: []*replay.Run{&s.runs[0]}}
			docs, unknown := s.excerpts(sc)
			var ids []string
			total := 0
			for _, d := range docs {
				ids = append(ids, d.ID)
				n := utf8.RuneCountInString(d.Text)
				if n > maxExcerpt {
					t.Errorf("%s: excerpt of %d characters", d.ID, n)
				}
				total += n
			}
			if total > maxExcerpts {
				t.Errorf("excerpts of %d characters together", total)
			}
			if !slices.Equal(ids, tt.want) || !slices.Equal(unknown, tt.unknown) {
				t.Errorf("excerpts %v, unknown %v; want %v, %v", ids, unknown, tt.want, tt.unknown)
			}
		})
	}
}

func TestConversationBounded(t *testing.T) {
	c := &replay.Case{ID: "long", Category: replay.Boundary}
	r := &replay.Run{Repeat: 1, TraceID: "long-1"}
	for i := range 40 {
		c.Turns = append(c.Turns, strings.Repeat("word ", 100)+"turn "+string(rune('A'+i%26)))
		r.Turns = append(r.Turns, replay.Turn{Answer: strings.Repeat("reply ", 200)})
	}
	r2 := &replay.Run{Repeat: 2, TraceID: "long-2", Turns: r.Turns[:3], Err: "agent panicked: boom\nstack"}
	got := conversation(c, []*replay.Run{r, r2})
	if n := utf8.RuneCountInString(got); n > maxConversation+100 {
		t.Errorf("conversation of %d characters, over %d", n, maxConversation)
	}
	for _, want := range []string{
		"Agent: reply reply", // turn 1: both runs answered alike
		"left out]\n",
		"Agent (run 1): reply", // the last turn, run 1 only
	} {
		if !strings.Contains(got, want) {
			t.Errorf("conversation lacks %q", want)
		}
	}
	if !strings.HasPrefix(got, "User: word word") || !strings.Contains(got, "turn N") {
		t.Errorf("conversation does not keep the first and the last turns:\n%.300s…", got)
	}
	// A run that stopped: its error, once.
	short := conversation(c, []*replay.Run{r2})
	if strings.Count(short, "[no answer: the run ended: agent panicked: boom]") != 1 || strings.Count(short, "User:") != 4 {
		t.Errorf("stopped run:\n%s", short)
	}
}

func TestJudgeFailuresNeverAbort(t *testing.T) {
	cases := fixtureCases(t)
	runs := fixtureRuns(t, "unguarded", true, nil, true)
	var calls atomic.Int32
	tests := []struct {
		name  string
		ctx   func() context.Context
		model llms.Model
		err   string
		calls int
	}{
		{"panic", context.Background, guardtest.Func(func(context.Context, []llms.MessageContent, llms.CallOptions) (guardtest.Reply, error) {
			panic("judge exploded")
		}), "health: judge: judge model panicked: judge exploded", 4},
		{"cancelled", func() context.Context {
			ctx, cancel := context.WithCancel(context.Background())
			cancel()
			return ctx
		}, guardtest.Func(func(context.Context, []llms.MessageContent, llms.CallOptions) (guardtest.Reply, error) {
			calls.Add(1)
			return guardtest.Text(`{"score": 4, "reason": "r"}`), nil
		}), "not judged: context canceled", 0},
		{"no choices", context.Background, noChoices{}, "health: judge: judge model returned no answer", 4},
		{"slow", context.Background, guardtest.Func(func(ctx context.Context, _ []llms.MessageContent, _ llms.CallOptions) (guardtest.Reply, error) {
			<-ctx.Done()
			return guardtest.Reply{}, ctx.Err()
		}), "health: judge: context deadline exceeded", 4},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			rep, err := Score(tt.ctx(), cases, runs, nil, Options{Now: fixtureNow, Judge: tt.model, JudgeTimeout: 20e6, JudgeParallel: 2})
			if err != nil {
				t.Fatalf("Score: %v", err)
			}
			j := rep.Judge
			if j.Calls != tt.calls || j.Errors != 4 || len(j.Judged) != 4 {
				t.Errorf("%d calls, %d errors of %d; want %d calls, 4 errors", j.Calls, j.Errors, len(j.Judged), tt.calls)
			}
			for _, c := range j.Judged {
				if c.Error != tt.err || c.Score != 0 {
					t.Errorf("%s: score %d, error %q; want %q", c.Case, c.Score, c.Error, tt.err)
				}
			}
		})
	}
	if calls.Load() != 0 {
		t.Errorf("the judge was called %d times after ctx ended", calls.Load())
	}
}

type noChoices struct{}

func (noChoices) GenerateContent(context.Context, []llms.MessageContent, ...llms.CallOption) (*llms.ContentResponse, error) {
	return &llms.ContentResponse{}, nil
}

func (noChoices) Call(context.Context, string, ...llms.CallOption) (string, error) { return "", nil }

// TestJudgeGuarded: with the guard enforcing, fewer cases are screened,
// and a case caught by a guard rail alone is not judged.
func TestJudgeGuarded(t *testing.T) {
	judge := cannedJudge(t, map[string]guardtest.Reply{"vague": guardtest.Text(`{"score": 2, "reason": "Started a return nobody asked for."}`)})
	rep, _ := judgedFixture(t, "guarded", false, Options{Judge: judge})
	if got := len(rep.Judge.Judged); got != 1 || rep.Judge.Judged[0].Case != "vague" || rep.Judge.Judged[0].Score != 2 {
		t.Errorf("judged %+v, want vague alone", rep.Judge.Judged)
	}
	if want := []string{"drift", "answer"}; !slices.Equal(rep.Judge.Judged[0].Screens, want) {
		t.Errorf("screens %v, want %v", rep.Judge.Judged[0].Screens, want)
	}
}

func TestJudgeReportGolden(t *testing.T) {
	replies := fixtureReplies()
	replies["vague"] = guardtest.Text("```json\n{\"score\": 4, \"reason\": \"Two of three runs answer well; one starts a return | nobody asked for.\"}\n```")
	unguarded, _ := judgedFixture(t, "unguarded", true, Options{Judge: cannedJudge(t, replies), JudgeName: "canned", JudgePricing: guard.Pricing{InputPerMillion: 2.5, OutputPerMillion: 10}})
	out := t.TempDir()
	if err := unguarded.WriteFiles(out); err != nil {
		t.Fatal(err)
	}
	for _, name := range []string{FileJSON, FileMarkdown, FileHTML} {
		got, err := os.ReadFile(filepath.Join(out, name))
		if err != nil {
			t.Fatal(err)
		}
		path := filepath.Join("testdata", "judge", name)
		if *update {
			if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
				t.Fatal(err)
			}
			if err := os.WriteFile(path, got, 0o644); err != nil {
				t.Fatal(err)
			}
			continue
		}
		want, err := os.ReadFile(path)
		if err != nil {
			t.Fatalf("%v (run go test -update to create it)", err)
		}
		if string(got) != string(want) {
			t.Errorf("%s differs from %s (run go test -update after checking the change)\n%s", name, path, firstDiff(string(got), string(want)))
		}
	}
	html, _ := os.ReadFile(filepath.Join(out, FileHTML))
	for _, c := range unguarded.Judge.Judged {
		for _, id := range c.Runs {
			if !strings.Contains(string(html), `id="`+anchor(id)+`"`) {
				t.Errorf("judged run %s has no timeline to link to", id)
			}
		}
	}
}

// TestJudgeNothingScreened: a replay with no screened case makes no call
// and still says so.
func TestJudgeNothingScreened(t *testing.T) {
	cases := fixtureCases(t)[:1] // "ok"
	judge := cannedJudge(t, nil)
	rep, err := Score(context.Background(), cases, fixtureRuns(t, "guarded", false, nil, true), nil, Options{Now: fixtureNow, Judge: judge})
	if err != nil {
		t.Fatal(err)
	}
	j := rep.Judge
	if j == nil || j.Screened != 0 || j.Cases != 1 || j.Calls != 0 || len(j.Judged) != 0 || len(judge.Received()) != 0 {
		t.Fatalf("judge %+v, want no call", j)
	}
	for _, d := range j.Dimensions {
		if d.Judged != d.Computed || d.Verdicts != 0 {
			t.Errorf("%s: judged %v, computed %v, %d verdicts", d.Dimension, d.Judged, d.Computed, d.Verdicts)
		}
	}
	out := t.TempDir()
	if err := rep.WriteFiles(out); err != nil {
		t.Fatal(err)
	}
	if md, _ := os.ReadFile(filepath.Join(out, FileMarkdown)); !strings.Contains(string(md), "on the 0 screened cases of 1") || !strings.Contains(string(md), "No case was screened.") {
		t.Errorf("report.md:\n%s", md)
	}
}
