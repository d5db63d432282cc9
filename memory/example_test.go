package memory_test

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"slices"
	"strings"

	"github.com/agentguard/agentguard/memory"
	"github.com/agentguard/agentguard/trace"
	"github.com/agentguard/agentguard/trace/lexicon"
	"github.com/tmc/langchaingo/llms"
)

func ExampleCard_Observe() {
	card := &memory.Card{}
	for turn, text := range []string{
		"My delivery address is 12 Oak Street, Springfield.",
		"Please don't text me, I'm in meetings all day.",
		"Actually, my address is now 48 Pine Avenue, Shelbyville.",
	} {
		cs, _ := card.Observe(context.Background(), memory.RuleBased(nil), turn, text)
		fmt.Printf("turn %d: %d constraint(s)\n", turn, len(cs))
	}
	fmt.Println(card.Text())
	// Output:
	// turn 0: 1 constraint(s)
	// turn 1: 1 constraint(s)
	// turn 2: 1 constraint(s)
	// Pinned user constraints (must be respected):
	// - prohibition sms: Please don't text me (turn 1)
	// - address delivery: 48 Pine Avenue, Shelbyville (turn 2, replaces "12 Oak Street, Springfield" from turn 0)
}

func ExampleRuleBased() {
	current := []memory.Constraint{{Kind: memory.KindProhibition, Key: "sms", Value: "不要发短信", Turn: 6, Status: memory.Active}}
	cs, _ := memory.RuleBased(nil).Extract(context.Background(), 11,
		"可以发短信了。地址改成上海市浦东新区世纪大道100号，6月1日到6月5日之间送货。", current)
	for _, c := range cs {
		fmt.Printf("%s %s %q %s\n", c.Kind, c.Key, c.Value, c.Status)
	}
	// Output:
	// prohibition sms "可以发短信了" revoked
	// address delivery "上海市浦东新区世纪大道100号" active
	// time_range delivery "06-01..06-05" active
}

// jsonModel is a stand-in for any llms.Model: it answers with fixed JSON.
type jsonModel string

func (m jsonModel) GenerateContent(context.Context, []llms.MessageContent, ...llms.CallOption) (*llms.ContentResponse, error) {
	return &llms.ContentResponse{Choices: []*llms.ContentChoice{{Content: string(m)}}}, nil
}

func (m jsonModel) Call(ctx context.Context, prompt string, options ...llms.CallOption) (string, error) {
	return llms.GenerateFromSinglePrompt(ctx, m, prompt, options...)
}

func ExampleLLMExtractor() {
	model := jsonModel(`{"constraints":[
		{"kind":"preference","key":"channel","value":"email","status":"active","quote":"write to me"},
		{"kind":"prohibition","key":"call","value":"","status":"active","quote":"I never said this"}]}`)
	ex := memory.Combine(memory.RuleBased(nil), memory.LLMExtractor(model, llms.WithJSONMode()))
	card := &memory.Card{}
	cs, err := card.Observe(context.Background(), ex, 0, "Don't text me; write to me instead.")
	for _, c := range cs {
		fmt.Printf("%s %s=%s (%s)\n", c.Kind, c.Key, c.Value, c.Source)
	}
	fmt.Println(err)
	// Output:
	// prohibition sms=Don't text me (rule)
	// preference channel=email (model)
	// memory: extract: unusable model output: 1 of 2 constraints rejected: item 1: quote "I never said this" is not in the user's message
}

func ExampleInject() {
	card := &memory.Card{}
	card.Observe(context.Background(), nil, 0, "不要自动给我发短信通知")
	msgs := []llms.MessageContent{
		llms.TextParts(llms.ChatMessageTypeSystem, "You are a helpful shop assistant."),
		llms.TextParts(llms.ChatMessageTypeHuman, "不要自动给我发短信通知"),
	}
	sent := memory.Inject(memory.Inject(msgs, card), card) // injecting twice changes nothing
	fmt.Println(sent[0].Parts[0].(llms.TextContent).Text)
	fmt.Println(len(msgs[0].Parts[0].(llms.TextContent).Text)) // the caller's messages are untouched
	// Output:
	// You are a helpful shop assistant.
	//
	// [agentguard memory card]
	// Pinned user constraints (must be respected):
	// - prohibition sms: 不要自动给我发短信通知 (turn 0)
	// [end of memory card]
	// 33
}

func ExampleCompress() {
	card := &memory.Card{}
	msgs := []llms.MessageContent{llms.TextParts(llms.ChatMessageTypeSystem, "You are a helpful shop assistant.")}
	for turn, text := range []string{"Hello!", "Please don't call me.", "How long does shipping take?", "And returns?", "Thanks, bye."} {
		card.Observe(context.Background(), nil, turn, text)
		msgs = append(msgs,
			llms.TextParts(llms.ChatMessageTypeHuman, text),
			llms.TextParts(llms.ChatMessageTypeAI, strings.Repeat("A long and detailed answer. ", 8)))
	}
	msgs = append(msgs, llms.TextParts(llms.ChatMessageTypeHuman, "One more thing."))
	kept, report := memory.Compress(msgs, 90, card)
	fmt.Printf("%d -> %d messages, %d -> %d tokens\n", report.Messages, report.Kept, report.TokensBefore, report.TokensAfter)
	fmt.Println("dropped", slices.Collect(report.Dropped.All()), "pinned", report.Pinned)
	b, _ := json.Marshal(report.Dropped)
	fmt.Println("recorded as", string(b))
	fmt.Println(kept[1].Parts[0])
	// Output:
	// 12 -> 5 messages, 399 -> 82 tokens
	// dropped [1 2 4 5 6 8 10] pinned [3]
	// recorded as [[1,3],[4,7],[8,9],[10,11]]
	// Please don't call me.
}

func ExampleEnforcer() {
	// The guard records each user turn and its card step, then judges each
	// proposed tool call with the Enforcer among its rules.
	rec := trace.NewRecorder("run-1", "session-9", "after-sales", trace.RecorderOptions{})
	card := &memory.Card{}
	for turn, text := range []string{"Where is order A1002?", "另外，不要自动给我发短信通知。", "好的，通知我一下发货情况。"} {
		rec.UserTurn(text)
		cs, _ := card.Observe(context.Background(), memory.RuleBased(nil), turn, text)
		rec.Add(memory.CardStep(turn, cs))
	}
	call := &trace.Step{Kind: trace.KindTool, Name: "send_sms", Args: `{"phone":"+86 139 0000 1002","text":"已发货"}`}
	for _, f := range (memory.Enforcer{}).Check(rec.Trace(), call) {
		fmt.Println(f.Rule, f.Verdict, f.Dimension)
		fmt.Println(f.Message)
	}
	// Output:
	// memory-prohibition block memory
	// send_sms would contact the user by sms, which the user prohibited in turn 1: "不要自动给我发短信通知"
}

func ExampleCardFromTrace() {
	// A chat log carries no card steps: the card comes from its user turns.
	log := `{"id":"chat-7","messages":[
		{"role":"user","content":"My address is 12 Oak Street, Springfield."},
		{"role":"assistant","content":"Noted."},
		{"role":"user","content":"My address is now 48 Pine Avenue, Shelbyville."},
		{"role":"assistant","content":null,"tool_calls":[{"id":"c1","type":"function","function":{"name":"update_address","arguments":"{\"address\":\"12 Oak Street, Springfield\"}"}}]},
		{"role":"tool","tool_call_id":"c1","content":"ok"}]}`
	for tr, err := range trace.ImportOpenAI(strings.NewReader(strings.ReplaceAll(log, "\n", "")), "chat.jsonl") {
		if err != nil {
			fmt.Fprintln(os.Stderr, err)
			continue
		}
		fmt.Println(memory.CardFromTrace(tr, len(tr.UserTurns)-1).Text())
		for i, s := range tr.Steps {
			for _, f := range (memory.Enforcer{}).Check(tr.Prefix(i), s) {
				fmt.Printf("step %d: %s\n", f.Step, f.Message)
			}
		}
	}
	// Output:
	// Pinned user constraints (must be respected):
	// - address delivery: 48 Pine Avenue, Shelbyville (turn 1, replaces "12 Oak Street, Springfield" from turn 0)
	// step 2: update_address uses address "12 Oak Street, Springfield", which the user replaced in turn 1 by "48 Pine Avenue, Shelbyville"
}

// A custom lexicon teaches the extractor a contact channel it did not
// know: WeChat, prohibited in the user's words.
func ExampleRuleBased_lexicon() {
	lx := lexicon.Default()
	lx.Memory.Channels = append(lx.Memory.Channels, lexicon.Words{Name: "wechat", Words: []string{"wechat", "微信"}})
	ex := memory.RuleBased(lx)
	for _, text := range []string{"Please don't WeChat me.", "别发微信给我"} {
		cs, _ := ex.Extract(context.Background(), 0, text, nil)
		for _, c := range cs {
			fmt.Println(c.Kind, c.Key)
		}
	}
	// Output:
	// prohibition wechat
	// prohibition wechat
}

func ExampleRuns() {
	var now, before memory.CompressReport
	json.Unmarshal([]byte(`{"messages":12,"kept":7,"dropped":[[1,3],[4,6],[8,9]]}`), &now)
	// A report recorded before Runs lists every index.
	json.Unmarshal([]byte(`{"messages":12,"kept":7,"dropped":[1,2,4,5,8]}`), &before)
	fmt.Println(now.Dropped, now.Dropped.Len(), now.Dropped.Contains(5), now.Dropped.Contains(6))
	fmt.Println(before.Dropped, slices.Collect(before.Dropped.All()))
	// Output:
	// [[1 3] [4 6] [8 9]] 5 true false
	// [[1 3] [4 6] [8 9]] [1 2 4 5 8]
}
