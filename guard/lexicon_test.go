package guard_test

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"testing"

	"github.com/agentguard/agentguard/guard"
	"github.com/agentguard/agentguard/guard/guardtest"
	"github.com/agentguard/agentguard/guard/internal/testkit"
	"github.com/agentguard/agentguard/guard/rules"
	"github.com/agentguard/agentguard/memory"
	"github.com/agentguard/agentguard/trace"
	"github.com/agentguard/agentguard/trace/lexicon"
	"github.com/tmc/langchaingo/llms"
	"github.com/tmc/langchaingo/tools"
)

// TestRepliesInTheUsersLanguage drives each kind of reply the guard writes
// — refusal, handoff, clarifying question, observations for calls that did
// not run — with an English and a Chinese turn: each comes whole from the
// lexicon's replies in the turn's language, unless Config.Answers sets it.
func TestRepliesInTheUsersLanguage(t *testing.T) {
	c := lexicon.Default().Compiled()
	handoff := guard.NewRule("handoff-all", func(_ *trace.Trace, s *trace.Step) []trace.Finding {
		if s.Kind == trace.KindModel && s.Result != "" {
			return []trace.Finding{{Rule: "handoff-all", Verdict: trace.Handoff, Message: "always"}}
		}
		return nil
	})
	retrieval := guard.Config{Tools: map[string]guard.ToolPolicy{"search_kb": {Retrieval: true}}}
	for _, lang := range []lexicon.Lang{lexicon.EN, lexicon.ZH} {
		r := c.Replies(lang)
		turn := map[lexicon.Lang]string{lexicon.EN: "Can you help me with my order?", lexicon.ZH: "能帮我处理一下订单吗？"}[lang]
		confirmTool := map[lexicon.Lang]string{lexicon.EN: "send email", lexicon.ZH: "send_email"}[lang]
		for _, tc := range []struct {
			name            string
			cfg             guard.Config
			tools           []tools.Tool
			script          []guardtest.Reply
			wantStatus      guard.RunStatus
			wantAnswer      string
			wantObservation string // the first tool result the model saw, when set
		}{
			{
				name: "refusal", cfg: retrieval, tools: []tools.Tool{fixed("search_kb", "[]")},
				script:     []guardtest.Reply{guardtest.ToolCall("search_kb", `{"q":"x"}`), guardtest.Text("Guessing.")},
				wantStatus: guard.StatusRefused, wantAnswer: r.Refusal,
			},
			{
				name: "refusal set by the user", tools: []tools.Tool{fixed("search_kb", "[]")},
				cfg:        guard.Config{Tools: retrieval.Tools, Answers: guard.Answers{RefusalTemplate: "Custom refusal."}},
				script:     []guardtest.Reply{guardtest.ToolCall("search_kb", `{"q":"x"}`), guardtest.Text("Guessing.")},
				wantStatus: guard.StatusRefused, wantAnswer: "Custom refusal.",
			},
			{
				name: "handoff", cfg: guard.Config{Rules: []guard.Rule{handoff}},
				script:     []guardtest.Reply{guardtest.Text("Sure.")},
				wantStatus: guard.StatusHandoff, wantAnswer: r.Handoff,
			},
			{
				name: "confirmation question", cfg: guard.Config{Gates: guard.Gates{ConfirmWrites: true}},
				tools:           []tools.Tool{fixed("send_email", "sent")},
				script:          []guardtest.Reply{guardtest.ToolCall("send_email", `{"to":"bob@example.com"}`)},
				wantStatus:      guard.StatusClarify,
				wantAnswer:      fmt.Sprintf(r.Confirm, confirmTool, "to bob@example.com"),
				wantObservation: "[agentguard] " + r.NotExecutedClarify,
			},
			{
				name: "blocked call", tools: []tools.Tool{fixed("lookup", "ok")},
				script:          []guardtest.Reply{guardtest.ToolCall("nope", `{}`), guardtest.Text("Done.")},
				wantStatus:      guard.StatusDone,
				wantAnswer:      "Done.",
				wantObservation: "[agentguard] " + fmt.Sprintf(r.Blocked, rules.AllowList, `tool "nope" is not on the allow-list`),
			},
		} {
			t.Run(string(lang)+"/"+tc.name, func(t *testing.T) {
				g := guard.New(tc.cfg)
				res, err := g.Run(context.Background(), guardtest.Script(tc.script...), tc.tools,
					[]llms.MessageContent{llms.TextParts(llms.ChatMessageTypeHuman, turn)})
				if err != nil {
					t.Fatal(err)
				}
				if res.Status != tc.wantStatus || res.Answer != tc.wantAnswer {
					t.Errorf("Run = %s %q, want %s %q", res.Status, res.Answer, tc.wantStatus, tc.wantAnswer)
				}
				if tc.wantObservation == "" {
					return
				}
				for _, m := range res.Messages {
					for _, p := range m.Parts {
						if tr, ok := p.(llms.ToolCallResponse); ok {
							if tr.Content != tc.wantObservation {
								t.Errorf("observation = %q, want %q", tr.Content, tc.wantObservation)
							}
							return
						}
					}
				}
				t.Error("no tool result")
			})
		}
	}
}

// TestLexiconWriteVerb adds a write verb: a tool named with it needs
// confirmation like any other state-changing tool, and the default
// lexicon is left alone.
func TestLexiconWriteVerb(t *testing.T) {
	lx := lexicon.Default()
	lx.WriteVerbs = append(lx.WriteVerbs, "ship")
	for _, tc := range []struct {
		name string
		lx   *lexicon.Lexicon
		want guard.RunStatus
	}{
		{"default lexicon: a read", nil, guard.StatusDone},
		{"ship is a write verb", lx, guard.StatusClarify},
	} {
		t.Run(tc.name, func(t *testing.T) {
			g := guard.New(guard.Config{Lexicon: tc.lx, Gates: guard.Gates{ConfirmWrites: true}})
			res, err := g.Run(context.Background(),
				guardtest.Script(guardtest.ToolCall("ship_order", `{"order_id":"A1"}`), guardtest.Text("Shipped.")),
				[]tools.Tool{fixed("ship_order", "ok")},
				[]llms.MessageContent{llms.TextParts(llms.ChatMessageTypeHuman, "Ship A1 please")})
			if err != nil {
				t.Fatal(err)
			}
			if res.Status != tc.want {
				t.Errorf("status = %s (%q), want %s", res.Status, res.Answer, tc.want)
			}
		})
	}
}

// TestDefaultAnswersAreTheEnglishLexicon keeps the exported constants and
// the English replies one text.
func TestDefaultAnswersAreTheEnglishLexicon(t *testing.T) {
	r := lexicon.English().Compiled().Replies(lexicon.EN)
	if r.Refusal != testkit.Refusal || r.Handoff != testkit.Handoff {
		t.Errorf("English replies %q / %q differ from DefaultRefusal / DefaultHandoff", r.Refusal, r.Handoff)
	}
}

func TestNewPanicsOnABadLexicon(t *testing.T) {
	lx := lexicon.Default()
	lx.Denial = []string{"(unclosed"}
	defer func() {
		if r := recover(); r == nil || !strings.Contains(fmt.Sprint(r), "Denial") {
			t.Errorf("New recovered %v, want a panic naming Denial", r)
		}
	}()
	guard.New(guard.Config{Lexicon: lx})
}

// TestLexiconReachesTheMemoryCard teaches the card a channel through
// Config.Lexicon: the user's ban on it is extracted and enforced.
func TestLexiconReachesTheMemoryCard(t *testing.T) {
	lx := lexicon.Default()
	lx.Memory.Channels = append(lx.Memory.Channels, lexicon.Words{Name: "wechat", Words: []string{"wechat", "微信"}})
	for _, tc := range []struct {
		name string
		lx   *lexicon.Lexicon
		want []string
	}{
		{"default lexicon", nil, nil},
		// The blocked send is followed by "Done.": a false claim, asked again.
		{"wechat taught", lx, []string{memory.RuleProhibition + "@block", rules.FalseClaim + "@retry"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			g := guard.New(guard.Config{Lexicon: tc.lx, Memory: &guard.MemoryOptions{}})
			res, err := g.Run(context.Background(),
				guardtest.Script(guardtest.ToolCall("send_wechat", `{"text":"Your order shipped"}`), guardtest.Text("Done."), guardtest.Text("好的，不发微信，有消息我在这里告诉您。")),
				[]tools.Tool{fixed("send_wechat", "ok")},
				[]llms.MessageContent{llms.TextParts(llms.ChatMessageTypeHuman, "别发微信给我，有事在这里说。")})
			if err != nil {
				t.Fatal(err)
			}
			if got := ruleVerdicts(res.Findings); !slices.Equal(got, tc.want) {
				t.Errorf("findings = %v, want %v", got, tc.want)
			}
		})
	}
}

// TestLexiconAuthority teaches the authorization rule a word through
// Config.Lexicon: a user who says "nuke order 5" asked for the cancel.
func TestLexiconAuthority(t *testing.T) {
	taught := lexicon.Default()
	taught.Authority.Destructive["cancel"] = append(taught.Authority.Destructive["cancel"], "nuke")
	tr := &trace.Trace{UserTurns: []string{"Just nuke order 5, I found it cheaper."}, Steps: []*trace.Step{
		{Index: 0, Kind: trace.KindTool, Name: "cancel_order", Args: `{"order_id":"5"}`},
	}}
	for _, tc := range []struct {
		name string
		lx   *lexicon.Lexicon
		want []string
	}{
		{"default lexicon", nil, []string{rules.Authorization + "@block"}},
		{"nuke taught", taught, nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := ruleVerdicts(guard.New(guard.Config{Lexicon: tc.lx}).Evaluate(tr).Findings); !slices.Equal(got, tc.want) {
				t.Errorf("findings = %v, want %v", got, tc.want)
			}
		})
	}
}
