package memory

import (
	"reflect"
	"slices"
	"strings"
	"testing"

	"github.com/tmc/langchaingo/llms"
)

func sysMsg(s string) llms.MessageContent  { return llms.TextParts(llms.ChatMessageTypeSystem, s) }
func userMsg(s string) llms.MessageContent { return llms.TextParts(llms.ChatMessageTypeHuman, s) }
func aiMsg(s string) llms.MessageContent   { return llms.TextParts(llms.ChatMessageTypeAI, s) }
func callMsg(ids ...string) llms.MessageContent {
	m := llms.MessageContent{Role: llms.ChatMessageTypeAI}
	for _, id := range ids {
		m.Parts = append(m.Parts, llms.ToolCall{ID: id, Type: "function", FunctionCall: &llms.FunctionCall{Name: "search_kb", Arguments: `{"query":"returns"}`}})
	}
	return m
}
func resultMsg(id, content string) llms.MessageContent {
	return llms.MessageContent{Role: llms.ChatMessageTypeTool, Parts: []llms.ContentPart{llms.ToolCallResponse{ToolCallID: id, Name: "search_kb", Content: content}}}
}

func tokensOf(messages []llms.MessageContent) int {
	n := 0
	for _, m := range messages {
		n += messageTokens(m)
	}
	return n
}

func TestCompress(t *testing.T) {
	big := bulky("退货")
	chat := []llms.MessageContent{
		/*0*/ sysMsg(systemPrompt),
		/*1*/ userMsg("Hi there, hope you're well today, I have a question or two."),
		/*2*/ aiMsg("Hello! Of course, how can I help you today?"),
		/*3*/ userMsg("What is your return policy for opened items?"),
		/*4*/ callMsg("c1"),
		/*5*/ resultMsg("c1", big),
		/*6*/ aiMsg("Opened items can be returned within seven days."),
		/*7*/ userMsg("And for electronics bought on sale during the holidays?"),
		/*8*/ callMsg("c2", "c3"),
		/*9*/ resultMsg("c2", big),
		/*10*/ resultMsg("c3", "short"),
		/*11*/ aiMsg("The same rules apply to sale items."),
		/*12*/ userMsg("OK, return my headphones please."),
		/*13*/ callMsg("c4"),
		/*14*/ resultMsg("c4", big),
	}
	full := tokensOf(chat)
	elided := full - 2*(messageTokens(chat[5])-messageTokens(resultMsg("c1", "[agentguard: tool result of 489 tokens elided]")))
	tests := []struct {
		name        string
		budget      int
		card        *Card
		wantDropped []int
		wantElided  []int
		wantPinned  []int
		wantOver    bool
	}{
		{name: "no budget", budget: 0},
		{name: "under budget", budget: full},
		{name: "eliding is enough", budget: full - 100, wantElided: []int{5}},
		{name: "elide all old results", budget: elided, wantElided: []int{5, 9}},
		{name: "then the assistant's small talk and tool exchanges, oldest first", budget: elided - 20, wantElided: []int{9}, wantDropped: []int{2, 4, 5}},
		{name: "the user's turns stay longer", budget: elided - 70, wantDropped: []int{2, 4, 5, 6, 8, 9, 10}},
		{name: "a constraint's message stays", budget: elided - 70, card: observeAll(t, "hi", "Don't text me about the return policy."),
			wantDropped: []int{2, 4, 5, 6, 8, 9, 10}, wantPinned: []int{3}},
		{name: "then the user's turns, oldest first", budget: elided - 140, wantDropped: []int{1, 2, 4, 5, 6, 8, 9, 10, 11}},
		{name: "the turn in progress stays, over budget", budget: 10, wantDropped: []int{1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11}, wantOver: true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			before := deepCopy(chat)
			got, rep := Compress(chat, tt.budget, tt.card)
			if !reflect.DeepEqual(chat, before) {
				t.Fatal("Compress changed its input")
			}
			if !slices.Equal(slices.Collect(rep.Dropped.All()), tt.wantDropped) || !slices.Equal(rep.Elided, tt.wantElided) || !slices.Equal(rep.Pinned, tt.wantPinned) || rep.OverBudget != tt.wantOver {
				t.Errorf("report = %+v\nwant dropped %v, elided %v, pinned %v, over budget %v", rep, tt.wantDropped, tt.wantElided, tt.wantPinned, tt.wantOver)
			}
			if err := checkPairs(got); err != nil {
				t.Error(err)
			}
			if rep.Kept != len(got) || rep.Messages != len(chat) || rep.Kept+rep.Dropped.Len() != rep.Messages {
				t.Errorf("counts: %+v, %d messages out", rep, len(got))
			}
			if reserve := rep.TokensBefore - full; tokensOf(got)+reserve != rep.TokensAfter {
				t.Errorf("TokensAfter = %d, the messages cost %d plus %d for the card", rep.TokensAfter, tokensOf(got), reserve)
			}
			if tt.budget > 0 && !rep.OverBudget && rep.TokensAfter > tt.budget {
				t.Errorf("TokensAfter = %d, over the budget %d", rep.TokensAfter, tt.budget)
			}
			if got[0].Role != llms.ChatMessageTypeSystem || !reflect.DeepEqual(got[len(got)-3:], chat[len(chat)-3:]) {
				t.Errorf("the system message or the turn in progress was touched")
			}
			for _, i := range rep.Elided {
				tr := got[slices.Index(keptIndexes(len(chat), slices.Collect(rep.Dropped.All())), i)].Parts[0].(llms.ToolCallResponse)
				if !strings.HasPrefix(tr.Content, "[agentguard: tool result of ") || tr.ToolCallID == "" || tr.Name != "search_kb" {
					t.Errorf("elided result %d = %+v", i, tr)
				}
			}
		})
	}
}

func keptIndexes(n int, dropped []int) []int {
	var out []int
	for i := range n {
		if !slices.Contains(dropped, i) {
			out = append(out, i)
		}
	}
	return out
}

// TestCompressInvariants compresses the scripted conversations at every
// turn under a range of budgets and checks what must always hold.
func TestCompressInvariants(t *testing.T) {
	for name, ex := range map[string][]exchange{"sms": smsConversation(), "address": addressConversation()} {
		r := simulate(t, name, ex, 0)
		for k := range ex {
			msgs := throughTurn(r.messages, k)
			card := CardFromTrace(r.rec.Trace(), k)
			for budget := 40; budget <= 1600; budget += 60 {
				got, rep := Compress(msgs, budget, card)
				if err := checkPairs(got); err != nil {
					t.Fatalf("%s turn %d budget %d: %v", name, k, budget, err)
				}
				for _, c := range card.Active() {
					if !containsText(got, ex[c.Turn].user) {
						t.Errorf("%s turn %d budget %d: the message of %s %s (turn %d) was dropped", name, k, budget, c.Kind, c.Key, c.Turn)
					}
				}
				if got[0].Role != llms.ChatMessageTypeSystem || !reflect.DeepEqual(got[len(got)-1], msgs[len(msgs)-1]) {
					t.Errorf("%s turn %d budget %d: lost the system or the last user message", name, k, budget)
				}
				if !rep.OverBudget && rep.TokensAfter > budget {
					t.Errorf("%s turn %d budget %d: %d tokens", name, k, budget, rep.TokensAfter)
				}
			}
		}
	}
}

func TestCompressFeedbackIsNotATurn(t *testing.T) {
	card := observeAll(t, "hello", "Don't text me.")
	msgs := []llms.MessageContent{
		sysMsg("S"),
		userMsg("hello there, a long greeting to make this message cost something"),
		userMsg("[agentguard] Your last answer was not accepted: no. Answer again."),
		aiMsg("a long answer that costs a fair number of tokens to keep around"),
		userMsg("Don't text me."),
		aiMsg("ok, a fairly long answer that costs a fair number of tokens too"),
		userMsg("bye"),
	}
	_, rep := Compress(msgs, tokensOf(msgs)-10, card)
	if !slices.Equal(rep.Pinned, []int{4}) {
		t.Errorf("pinned %v, want [4]: the guard's feedback is not user turn 1", rep.Pinned)
	}
}

func TestCompressWithoutUserMessage(t *testing.T) {
	msgs := []llms.MessageContent{sysMsg("S"), callMsg("c1"), resultMsg("c1", bulky("x")), aiMsg("done")}
	got, rep := Compress(msgs, 50, nil)
	if !reflect.DeepEqual(got, msgs) || !rep.OverBudget || rep.Dropped != nil {
		t.Errorf("without a user message everything is the turn in progress: %+v", rep)
	}
}

func TestCompressUnderBudgetDoesNotCopy(t *testing.T) {
	msgs := []llms.MessageContent{sysMsg("S"), userMsg("hi")}
	got, rep := Compress(msgs, 1000, observeAll(t, "Don't text me."))
	if &got[0] != &msgs[0] || cap(got) != len(msgs) || rep.Kept != 2 || rep.Dropped != nil {
		t.Errorf("under budget: %+v", rep)
	}
	// The card block counts: a system message that already holds an old
	// card is counted without it.
	withOld := []llms.MessageContent{sysMsg("S\n\n" + CardBegin + "\n" + strings.Repeat("old ", 500) + "\n" + CardEnd), userMsg("hi")}
	if _, rep := Compress(withOld, 100, nil); rep.TokensBefore != tokensOf(msgs) {
		t.Errorf("old card counted: %d tokens, want %d", rep.TokensBefore, tokensOf(msgs))
	}
}
