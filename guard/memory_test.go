package guard_test

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"testing"

	"github.com/agentguard/agentguard/guard"
	"github.com/agentguard/agentguard/guard/guardtest"
	"github.com/agentguard/agentguard/guard/rules"
	"github.com/agentguard/agentguard/memory"
	"github.com/agentguard/agentguard/trace"
	"github.com/tmc/langchaingo/llms"
	"github.com/tmc/langchaingo/tools"
)

// TestMemoryCardSurvivesCompression is the amnesia case end to end: the
// user forbids SMS in turn 6, small talk follows until the conversation is
// far over the token budget and compressed, and in turn 25 the agent
// decides to text the user anyway. The card is injected into every call,
// the prohibition survives compression, send_sms is stopped, and Evaluate
// finds the same over the recorded trace.
func TestMemoryCardSurvivesCompression(t *testing.T) {
	const budget = 400
	turns := make([]string, 26)
	for i := range turns {
		turns[i] = fmt.Sprintf("第%d轮：我想再确认一下订单 A1002 的配送进度，顺便问问包装和发票的事情。", i)
	}
	turns[6] = "另外，不要自动给我发短信通知。"
	turns[25] = "好的，那就这样吧，有进展告诉我。"

	sms := guardtest.NewTool("send_sms", "Send a text message", nil)
	model := guardtest.Func(func(_ context.Context, msgs []llms.MessageContent, _ llms.CallOptions) (guardtest.Reply, error) {
		last := msgs[len(msgs)-1]
		if last.Role == llms.ChatMessageTypeTool {
			return guardtest.Text("好的，我会通过其他方式通知您。"), nil
		}
		if strings.Contains(messageText(last), "有进展告诉我") {
			return guardtest.ToolCall("send_sms", `{"phone":"13900001002","text":"订单 A1002 已发货"}`), nil
		}
		return guardtest.Text("好的，订单 A1002 正在配送中。"), nil
	})
	g := guard.New(guard.Config{Memory: &guard.MemoryOptions{Budget: budget}, Disable: []string{rules.Provenance}})
	ctx, rec := g.StartTrace(context.Background(), "s", "")
	var msgs []llms.MessageContent
	var findings []trace.Finding
	for _, turn := range turns {
		msgs = append(msgs, llms.TextParts(llms.ChatMessageTypeHuman, turn))
		res, err := g.Run(ctx, model, []tools.Tool{sms}, msgs)
		if err != nil {
			t.Fatal(err)
		}
		checkPairs(t, res.Messages)
		findings = append(findings, res.Findings...)
		msgs = res.Messages
	}
	if n := len(sms.Inputs()); n != 0 {
		t.Errorf("send_sms ran %d times despite the prohibition", n)
	}
	if got, want := ruleVerdicts(findings), []string{memory.RuleProhibition + "@block"}; !slices.Equal(got, want) {
		t.Fatalf("findings = %v, want %v", got, want)
	}
	if !strings.Contains(findings[0].Message, "turn 6") {
		t.Errorf("finding does not name the turn: %q", findings[0].Message)
	}
	// What the model saw last: compressed under the budget, with the card.
	sent := model.Received()[len(model.Received())-1]
	if sent[0].Role != llms.ChatMessageTypeSystem || !strings.Contains(messageText(sent[0]), memory.CardBegin) || !strings.Contains(messageText(sent[0]), "sms") {
		t.Errorf("first message sent is not the card: %+v", sent[0])
	}
	if len(sent) >= len(msgs) {
		t.Errorf("sent %d messages of %d: nothing was compressed", len(sent), len(msgs))
	}
	tr := rec.Trace()
	var cards, compressions int
	for _, s := range tr.Steps {
		if s.Kind == trace.KindMemory && s.Name == memory.StepCard {
			cards++
		}
		if s.Kind == trace.KindMemory && s.Name == memory.StepCompress {
			compressions++
		}
	}
	if cards != len(turns) || compressions == 0 {
		t.Errorf("memory steps: %d card (want %d), %d compress (want some)", cards, len(turns), compressions)
	}
	if got := ruleVerdicts(g.Evaluate(tr).Findings); !slices.Equal(got, ruleVerdicts(findings)) {
		t.Errorf("offline findings = %v, online %v", got, ruleVerdicts(findings))
	}
}

func TestMemoryCardAddressSuperseded(t *testing.T) {
	update := guardtest.NewTool("update_address", "", nil)
	for _, tc := range []struct {
		name      string
		address   string
		wantRules []string
	}{
		// The stale address asks the user which address to use, naming both:
		// the run stops there, before the model could claim the update.
		{"old address", "1 Century Ave, Shanghai", []string{memory.RuleStaleAddress + "@clarify"}},
		{"new address", "8 Huaihai Rd, Shanghai", nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			g := guard.New(guard.Config{Memory: &guard.MemoryOptions{}})
			model := guardtest.Script(
				guardtest.Text("Noted."),
				guardtest.Text("Noted."),
				guardtest.ToolCall("update_address", `{"order_id":"A1002","address":"`+tc.address+`"}`),
				guardtest.Text("Done."),
				guardtest.Text("I could not update the address of order A1002."),
			)
			ctx, rec := g.StartTrace(context.Background(), "s", "")
			var msgs []llms.MessageContent
			var findings []trace.Finding
			for _, turn := range []string{"My address is 1 Century Ave, Shanghai.", "My address is now 8 Huaihai Rd, Shanghai.", "Please update the address of order A1002."} {
				msgs = append(msgs, llms.TextParts(llms.ChatMessageTypeHuman, turn))
				res, err := g.Run(ctx, model, []tools.Tool{update}, msgs)
				if err != nil {
					t.Fatal(err)
				}
				findings = append(findings, res.Findings...)
				msgs = res.Messages
				if tc.wantRules != nil && res.Status == guard.StatusClarify &&
					!(strings.Contains(res.Answer, "1 Century Ave, Shanghai") && strings.Contains(res.Answer, "8 Huaihai Rd, Shanghai")) {
					t.Errorf("question %q does not name both addresses", res.Answer)
				}
			}
			if got := ruleVerdicts(findings); !slices.Equal(got, tc.wantRules) {
				t.Errorf("findings = %v, want %v", got, tc.wantRules)
			}
			if got := ruleVerdicts(g.Evaluate(rec.Trace()).Findings); !slices.Equal(got, tc.wantRules) {
				t.Errorf("offline findings = %v, want %v", got, tc.wantRules)
			}
		})
	}
}

func messageText(m llms.MessageContent) string {
	var b strings.Builder
	for _, p := range m.Parts {
		if t, ok := p.(llms.TextContent); ok {
			b.WriteString(t.Text)
		}
	}
	return b.String()
}
