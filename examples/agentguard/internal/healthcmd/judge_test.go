package healthcmd

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/agentguard/agentguard/guard"
	"github.com/agentguard/agentguard/guard/health"
	"github.com/agentguard/agentguard/guard/replay"
	"github.com/agentguard/agentguard/trace"
	"github.com/agentguard/agentguard/trace/lexicon"
	"github.com/tmc/langchaingo/llms"
)

// TestRunJudgeDemo runs the health check with -judge demo, one repeat:
// the judge sees the screened cases only, and its section is in every
// report.
func TestRunJudgeDemo(t *testing.T) {
	out := t.TempDir()
	var w bytes.Buffer
	if err := run(context.Background(), options{out: out, repeats: 1, judge: "demo"}, &w); err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"raters of unguarded: ", "raters of guarded: ", " 0 errors, "} {
		if !strings.Contains(w.String(), want) {
			t.Errorf("output lacks %q:\n%s", want, w.String())
		}
	}
	b, err := os.ReadFile(filepath.Join(out, "report.json"))
	if err != nil {
		t.Fatal(err)
	}
	var cmp health.Comparison
	if err := json.Unmarshal(b, &cmp); err != nil {
		t.Fatal(err)
	}
	for _, rep := range []*health.Report{cmp.Before, cmp.After} {
		t.Run(rep.Label, func(t *testing.T) {
			j := rep.Judge
			if j == nil {
				t.Fatal("no judge section")
			}
			// The screened cases: a hard-filter hit or a failed one.
			var screened []string
			for _, h := range rep.Hits {
				hard := slices.Contains([]string{"fabrication", "cascade", "amnesia", "drift"}, h.Screen)
				if (hard || h.Outcome == health.Failed) && !slices.Contains(screened, h.Case) {
					screened = append(screened, h.Case)
				}
			}
			var judged []string
			for _, c := range j.Judged {
				judged = append(judged, c.Case)
				if c.Score < 1 || c.Score > 5 || c.Reason == "" || c.Error != "" || !c.Estimated {
					t.Errorf("%s: verdict %d %q, error %q", c.Case, c.Score, c.Reason, c.Error)
				}
			}
			slices.Sort(screened)
			slices.Sort(judged)
			if !slices.Equal(judged, screened) || len(judged) == 0 || len(judged) >= j.Cases {
				t.Errorf("judged %v, want the screened cases %v, not all %d", judged, screened, j.Cases)
			}
			if j.Calls != len(judged) || j.Errors != 0 || j.TokensIn == 0 || !(j.Cost > 0) || j.Name != "demo" {
				t.Errorf("judge %q: %d calls, %d errors, %d tokens in, cost %v", j.Name, j.Calls, j.Errors, j.TokensIn, j.Cost)
			}
			if j.Confirmed+j.Disputed == 0 {
				t.Errorf("no verdict confirms or disputes a screen")
			}
			for _, name := range []string{filepath.Join(rep.Label, health.FileMarkdown), health.FileMarkdown} {
				md, _ := os.ReadFile(filepath.Join(out, name))
				if !bytes.Contains(md, []byte("## Judge: "+rep.Label)) || !bytes.Contains(md, []byte(j.Judged[0].Reason)) {
					t.Errorf("%s lacks the judge section of %s", name, rep.Label)
				}
			}
			html, _ := os.ReadFile(filepath.Join(out, health.FileHTML))
			if !bytes.Contains(html, []byte("<h2>Judge: "+rep.Label+"</h2>")) {
				t.Errorf("report.html lacks the judge section of %s", rep.Label)
			}
		})
	}
}

// TestRunFlagErrors checks that bad -model, -judge and -timeout values stop
// the run before it writes anything, with an error that is not the floor's
// (exit status 2).
func TestRunFlagErrors(t *testing.T) {
	t.Setenv("OPENAI_API_KEY", "")
	tests := []struct {
		name string
		o    options
		want string
	}{
		{"model without a name", options{model: "openai"}, `-model "openai": want PROVIDER:NAME`},
		{"model of an unknown provider", options{model: "gemini:pro"}, `unknown provider "gemini"`},
		{"model without its API key", options{model: "openai:gpt-4o"}, "missing the OpenAI API key"},
		{"judge misspelt", options{judge: "dmeo"}, `-judge "dmeo": want "demo", openai:NAME or ollama:NAME`},
		{"judge without a name", options{judge: "ollama:"}, `-judge "ollama:": want`},
		{"judge of an unknown provider", options{judge: "gemini:pro"}, `-judge "gemini:pro": want`},
		{"judge without its API key", options{judge: "openai:gpt-4o"}, "-judge: models: openai: missing the OpenAI API key"},
		{"negative timeout", options{timeout: -1}, "-timeout -1ns: want a positive duration"},
		{"no repeats", options{repeats: 0}, "-repeats 0"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			out := t.TempDir()
			tt.o.out = out
			if tt.o.repeats == 0 && tt.name != "no repeats" {
				tt.o.repeats = 1
			}
			var w bytes.Buffer
			err := run(context.Background(), tt.o, &w)
			if err == nil || !strings.Contains(err.Error(), tt.want) || errors.Is(err, errBelowFloor) {
				t.Fatalf("err = %v, want %q", err, tt.want)
			}
			if entries, _ := os.ReadDir(out); len(entries) > 0 || w.Len() > 0 {
				t.Errorf("wrote %d files and %q before failing", len(entries), w.String())
			}
		})
	}
}

// TestRunRealModels runs -model and -judge through langchaingo's real
// OpenAI client against a local server: the agent's answers come from the
// server, with the demo's tools offered; the judge's verdict and token
// counts too.
func TestRunRealModels(t *testing.T) {
	const answer = "Your order A1001 is out for delivery."
	var mu sync.Mutex
	var agentCalls, judgeCalls int
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		var req struct {
			Model          string                                     `json:"model"`
			Tools          []struct{ Function struct{ Name string } } `json:"tools"`
			ResponseFormat *struct{ Type string }                     `json:"response_format"`
		}
		if err := json.Unmarshal(body, &req); err != nil || r.URL.Path != "/v1/chat/completions" {
			http.Error(w, "bad request", http.StatusBadRequest)
			return
		}
		content, in, out := answer, 50, 10
		mu.Lock()
		switch req.Model {
		case "judge-model":
			judgeCalls++
			if req.ResponseFormat == nil || req.ResponseFormat.Type != "json_object" {
				t.Errorf("judge request without JSON mode: %s", body)
			}
			content, in, out = `{"score": 2, "reason": "Claims the parcel is out for delivery without looking the order up."}`, 700, 20
		case "agent-model":
			agentCalls++
			var names []string
			for _, tl := range req.Tools {
				names = append(names, tl.Function.Name)
			}
			if !slices.Contains(names, "query_order") || !slices.Contains(names, "search_kb") {
				t.Errorf("agent request offers tools %v, want the demo's", names)
			}
		default:
			t.Errorf("request for model %q", req.Model)
		}
		mu.Unlock()
		resp := map[string]any{"id": "x", "object": "chat.completion", "created": 1, "model": req.Model,
			"choices": []any{map[string]any{"index": 0, "message": map[string]any{"role": "assistant", "content": content}, "finish_reason": "stop"}},
			"usage":   map[string]any{"prompt_tokens": in, "completion_tokens": out, "total_tokens": in + out}}
		w.Header().Set("Content-Type", "application/json")
		json.NewEncoder(w).Encode(resp)
	}))
	defer srv.Close()
	t.Setenv("OPENAI_API_KEY", "test")
	t.Setenv("OPENAI_BASE_URL", srv.URL+"/v1")

	line, _, _ := bytes.Cut(goldenSet, []byte("\n")) // N01: order status, two tool calls expected
	cases := filepath.Join(t.TempDir(), "one.jsonl")
	if err := os.WriteFile(cases, line, 0o600); err != nil {
		t.Fatal(err)
	}
	out := t.TempDir()
	err := run(context.Background(), options{out: out, repeats: 1, cases: cases, model: "openai:agent-model", judge: "openai:judge-model"}, &bytes.Buffer{})
	if err != nil {
		t.Fatal(err)
	}
	if agentCalls != 2 || judgeCalls != 2 {
		t.Errorf("%d agent calls, %d judge calls; want 2 and 2 (one per replay)", agentCalls, judgeCalls)
	}

	f, err := os.Open(filepath.Join(out, "unguarded", "execution_trace.jsonl"))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	for tr, err := range trace.NewReader(f).All() {
		if err != nil {
			t.Fatal(err)
		}
		if r, _ := replay.RunFromTrace(tr); r.Final() != answer {
			t.Errorf("unguarded answer %q, want the server's %q", r.Final(), answer)
		}
	}

	b, _ := os.ReadFile(filepath.Join(out, "guarded", health.FileJSON))
	var rep health.Report
	if err := json.Unmarshal(b, &rep); err != nil {
		t.Fatal(err)
	}
	if rep.Judge == nil || len(rep.Judge.Judged) != 1 {
		t.Fatalf("judge %+v, want one judged case", rep.Judge)
	}
	c, price := rep.Judge.Judged[0], guard.Pricing{InputPerMillion: 2.5, OutputPerMillion: 10}
	if c.Case != "N01" || c.Score != 2 || !strings.HasPrefix(c.Reason, "Claims the parcel") || c.TokensIn != 700 || c.TokensOut != 20 || c.Estimated ||
		c.Cost != (700*price.InputPerMillion+20*price.OutputPerMillion)/1e6 || rep.Judge.Name != "openai:judge-model" {
		t.Errorf("verdict %+v (judge %q)", c, rep.Judge.Name)
	}
}

// TestDemoJudge scores prompts laid out as package health lays them out.
func TestDemoJudge(t *testing.T) {
	cases := []replay.Case{{
		ID: "c", Category: replay.Normal, Turns: []string{"Don't text me.", "Where is A1001?"},
		Answer:      replay.Answer{Must: []string{"out for delivery|派送中"}, MustNot: []string{"no records"}},
		Constraints: []replay.Constraint{{ID: "k", Turn: 0, AnswerNot: []string{"SMS"}}},
	}}
	prompt := func(caseID string, answers ...string) string {
		return "Case " + caseID + " (normal): t\nRuns: 2; screened: 2\n\n## Conversation\nUser: Don't text me.\nAgent: Noted.\nUser: Where is A1001?\n" +
			strings.Join(answers, "\n") + "\n\n## Baseline\nThe final answer must say: \"out for delivery\"\n\n## Constraints\nNone.\n\n" +
			"## Knowledge-base excerpts\n[KB-SHP-01] Standard shipping takes 3 to 5 business days.\n\nReply with only the JSON object."
	}
	tests := []struct {
		name   string
		prompt string
		score  int
		reason string
	}{
		{"healthy", prompt("c", "Agent: A1001 is out for delivery."), 4, "The answers keep the baseline"},
		{"unknown citation", prompt("c", "Agent (run 1): Out for delivery, see [KB-9]."), 1, "In run 1, the agent cites [KB-9]"},
		{"known citation", prompt("c", "Agent: Out for delivery [KB-SHP-01]."), 4, "The answers keep"},
		{"must not", prompt("c", "Agent (runs 1, 2): There are no records of A1001."), 1, `In runs 1, 2, the agent tells the user "no records"`},
		{"constraint", prompt("c", "Agent: Out for delivery; I sent you an SMS."), 1, `The agent says "SMS" after the user ruled it out in turn 1.`},
		{"missing", prompt("c", "Agent (run 1): It is on its way.", "Agent (run 2): A1001 is out for delivery."), 2, `In run 1, the final answer lacks "out for delivery"`},
		{"declined", prompt("c", "Agent: "+lexicon.Default().Replies[lexicon.EN].Refusal), 3, "The agent declines or hands over"},
		{"run ended", prompt("c", "Agent (run 1): [no answer: the run ended: boom]", "Agent (run 2): Out for delivery."), 4, "The answers keep"},
	}
	judge := demoJudge(cases)
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := llms.GenerateFromSinglePrompt(context.Background(), judge, tt.prompt)
			if err != nil {
				t.Fatal(err)
			}
			v, err := health.ParseRating(got)
			if err != nil || v.Score != tt.score || !strings.HasPrefix(v.Reason, tt.reason) {
				t.Errorf("verdict %s (%v), want %d %q…", got, err, tt.score, tt.reason)
			}
		})
	}
	got, _ := llms.GenerateFromSinglePrompt(context.Background(), judge, prompt("other", "Agent: hi"))
	if _, err := health.ParseRating(got); !errors.Is(err, health.ErrVerdict) {
		t.Errorf("unknown case: %q is a verdict", got)
	}
}
