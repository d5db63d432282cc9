package memory

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"testing"

	"github.com/agentguard/agentguard/trace"
	"github.com/tmc/langchaingo/llms"
)

// exchange is one user turn of a scripted conversation and what the agent
// did about it.
type exchange struct {
	user  string
	calls []call
	reply string
}

type call struct {
	name, args, result string
}

const systemPrompt = "You are the after-sales assistant of a small online shop. Be brief."

// bulky is a long tool result, the kind compression elides first.
func bulky(topic string) string {
	var b strings.Builder
	fmt.Fprintf(&b, `{"topic":%q,"articles":[`, topic)
	for i := range 6 {
		if i > 0 {
			b.WriteByte(',')
		}
		fmt.Fprintf(&b, `{"id":"kb-%d","text":"%s 第%d条：商品签收后七天内可申请无理由退货，需保持商品完好、配件齐全；质量问题由商家承担运费，非质量问题由买家承担运费。Items may be returned within seven days of delivery."}`, i, topic, i+1)
	}
	b.WriteString("]}")
	return b.String()
}

// smsConversation is the amnesia case of issue 4, in 26 user turns: the
// user forbids SMS notifications in turn 6, the context is compressed from
// turn 9 on, and in turn 24 the agent sends an SMS anyway.
func smsConversation() []exchange {
	return []exchange{
		{user: "你好，我想查一下我的订单，订单号是A1002。", calls: []call{{"query_order", `{"order_id":"A1002"}`, `{"order_id":"A1002","customer":"Han Meimei","item":"电热水壶","status":"pending","address":"北京市朝阳区建国路88号","phone":"+86 139 0000 1002"}`}}, reply: "您的订单A1002（电热水壶）目前待发货。"},
		{user: "我买的是电热水壶，什么时候能发货？", reply: "预计两天内发货。"},
		{user: "我的收货地址是北京市朝阳区建国路88号，对吧？", reply: "是的，地址是北京市朝阳区建国路88号。"},
		{user: "好的。另外我想问一下退货政策。", calls: []call{{"search_kb", `{"query":"退货政策"}`, bulky("退货政策")}}, reply: "签收后七天内可无理由退货。"},
		{user: "七天无理由退货包括运费吗？", reply: "非质量问题由您承担运费。"},
		{user: "明白了，谢谢。", reply: "不客气。"},
		{user: "另外，不要自动给我发短信通知，有事在这里说就行。", reply: "好的，已记录：不发短信通知。"},
		{user: "热水壶是什么功率的？", calls: []call{{"search_kb", `{"query":"电热水壶 功率"}`, bulky("功率")}}, reply: "这款电热水壶的额定功率是1800瓦，额定电压220伏，容量1.7升。一般情况下，从常温烧开一满壶水大约需要五到六分钟；如果只烧半壶，大约三分钟左右。水壶带有防干烧保护和沸腾自动断电功能，底座可以360度旋转，内胆是304不锈钢材质，壶盖可以一键打开，方便清洗。建议不要在水位低于最低刻度线时使用，也不要超过最高刻度线，以免沸腾时溢出。"},
		{user: "有没有保修？", reply: "有的，整机保修一年，发热盘保修两年，自签收之日起计算。保修期内如果出现非人为损坏的质量问题，比如不加热、漏水、自动断电失灵等，可以免费维修或更换；人为损坏、进水、私自拆修的情况不在保修范围内。申请保修时请保留好购物凭证和包装，客服登记后会给您发一个寄修地址，来回运费由我们承担。"},
		{user: "保修期内坏了怎么处理？", calls: []call{{"search_kb", `{"query":"保修 流程"}`, bulky("保修")}}, reply: "联系客服登记后寄回维修。"},
		{user: "好的。", reply: "还有什么可以帮您？"},
		{user: "我家里电压是220伏的，没问题吧？", reply: "没问题，适用220伏。"},
		{user: "那发货后大概几天能到？", reply: "北京一般两到三天。"},
		{user: "能不能周末送？", reply: "可以，快递周末也派送。"},
		{user: "6月1日到6月5日之间送货比较好。", reply: "好的，已备注6月1日至5日送货。"},
		{user: "好的，麻烦帮我备注一下。", reply: "已备注。"},
		{user: "包装会不会很大？", reply: "包装约30厘米见方。"},
		{user: "需要我在家签收吗？", reply: "需要本人或代收人签收。"},
		{user: "可以放在快递柜吗？", reply: "可以，备注即可。"},
		{user: "快递柜是哪家的？", reply: "以快递员安排为准。"},
		{user: "好的，我知道了。", reply: "好的。"},
		{user: "对了，发票怎么开？", calls: []call{{"search_kb", `{"query":"发票"}`, bulky("发票")}}, reply: "下单后可在订单页申请电子发票。"},
		{user: "电子发票发到哪里？", reply: "发到您的账户邮箱。"},
		{user: "那就这样吧。", reply: "好的。"},
		{user: "帮我把订单状态和发货提醒通知我一下。", calls: []call{{"send_sms", `{"phone":"+86 139 0000 1002","text":"您的订单A1002将于近日发货。"}`, `{"sent":true}`}}, reply: "已通知您。"},
		{user: "好的，谢谢。", reply: "不客气，再见。"},
	}
}

// addressConversation supersedes an address, then the agent uses the old
// one; it also lifts an SMS prohibition and picks a date outside the
// user's delivery window.
func addressConversation() []exchange {
	return []exchange{
		{user: "Hi, I need help with order A1004.", calls: []call{{"query_order", `{"order_id":"A1004"}`, `{"order_id":"A1004","item":"Smart watch","status":"pending","address":"12 Oak Street, Springfield"}`}}, reply: "Order A1004 is pending."},
		{user: "My delivery address is 12 Oak Street, Springfield.", reply: "Noted."},
		{user: "Can you check where the parcel is?", calls: []call{{"logistics", `{"tracking_no":"SF404"}`, `{"status":"in transit"}`}}, reply: "It is in transit."},
		{user: "OK. Please don't text me, I'm in meetings all day.", reply: "Understood, no texts."},
		{user: "Also, deliver between 1 and 5 June please.", calls: []call{{"send_sms", `{"phone":"+1 415 555 0100","text":"Delivery window noted: 1-5 June."}`, `{"sent":true}`}}, reply: "Noted: 1 to 5 June."},
		{user: "Actually, my address is now 48 Pine Avenue, Shelbyville.", reply: "Thanks, noted."},
		{user: "Please update the order.", calls: []call{
			{"update_address", `{"order_id":"A1004","address":"12 Oak Street, Springfield"}`, `{"order_id":"A1004","address":"12 Oak Street, Springfield"}`},
			{"update_address", `{"order_id":"A1004","address":"48 Pine Avenue, Shelbyville"}`, `{"order_id":"A1004","address":"48 Pine Avenue, Shelbyville"}`},
		}, reply: "The address is updated."},
		{user: "I also want to return the charger from order A1003.", calls: []call{{"submit_return", `{"order_id":"A1003","reason":"defective","pickup_address":"12 Oak Street, Springfield"}`, `{"return_id":"R-A1003","status":"submitted"}`}}, reply: "Return R-A1003 is submitted."},
		{user: "Actually, texting is fine now.", reply: "Good to know."},
		{user: "When can you redeliver the watch?", calls: []call{{"schedule_delivery", `{"order_id":"A1004","date":"2025-06-09"}`, `{"scheduled":"2025-06-09"}`}}, reply: "Scheduled for 9 June."},
		{user: "Text me the tracking number, please.", calls: []call{{"send_sms", `{"phone":"+1 415 555 0100","text":"Tracking: SF404"}`, `{"sent":true}`}}, reply: "Sent."},
	}
}

// run is a scripted agent run of a conversation under a guard that works
// as the wiring says: each user turn is recorded with its card
// step, the messages are compressed and the card injected before each
// model call, and each tool call is judged by the Enforcer before it runs.
type run struct {
	rec      *trace.Recorder
	card     *Card
	messages []llms.MessageContent // the whole conversation
	calls    []modelCall
	online   []trace.Finding // what the Enforcer found as the run went
}

// modelCall is one model call of a run: a turn's first, and one more after
// its tool results.
type modelCall struct {
	turn   int
	input  []llms.MessageContent // the conversation so far
	sent   []llms.MessageContent // compressed, with the card injected
	report CompressReport
}

// lastCall returns the last model call of turn k.
func (r *run) lastCall(k int) modelCall {
	var c modelCall
	for _, mc := range r.calls {
		if mc.turn == k {
			c = mc
		}
	}
	return c
}

func simulate(t testing.TB, id string, ex []exchange, budget int) *run {
	t.Helper()
	r := &run{
		rec:      trace.NewRecorder(id, "session-"+id, "after-sales", trace.RecorderOptions{}),
		card:     &Card{},
		messages: []llms.MessageContent{llms.TextParts(llms.ChatMessageTypeSystem, systemPrompt)},
	}
	ctx := context.Background()
	for k, e := range ex {
		r.messages = append(r.messages, llms.TextParts(llms.ChatMessageTypeHuman, e.user))
		r.rec.UserTurn(e.user)
		cs, err := r.card.Observe(ctx, RuleBased(nil), k, e.user)
		if err != nil {
			t.Fatalf("turn %d: Observe: %v", k, err)
		}
		r.rec.Add(CardStep(k, cs))
		r.modelCall(k, budget)

		var calls []trace.Call
		ai := llms.MessageContent{Role: llms.ChatMessageTypeAI}
		for i, c := range e.calls {
			id := fmt.Sprintf("call_%d_%d", k, i)
			calls = append(calls, trace.Call{ID: id, Name: c.name, Args: c.args})
			ai.Parts = append(ai.Parts, llms.ToolCall{ID: id, Type: "function", FunctionCall: &llms.FunctionCall{Name: c.name, Arguments: c.args}})
		}
		if len(calls) > 0 {
			r.rec.Add(&trace.Step{Kind: trace.KindModel, Name: "scripted", Calls: calls})
			r.messages = append(r.messages, ai)
			for i, c := range e.calls {
				s := &trace.Step{Kind: trace.KindTool, Name: c.name, CallID: calls[i].ID, Args: c.args}
				var found []trace.Finding
				r.rec.View(func(tr *trace.Trace) { // as guard.judge does: Turn is not set yet
					s.Index = len(tr.Steps)
					found = Enforcer{}.Check(tr, s)
				})
				result := c.result
				if len(found) > 0 {
					s.Blocked = true
					result = "[agentguard] call blocked by rule " + found[0].Rule + ": " + found[0].Message
				}
				s.Result = result
				idx := r.rec.Add(s)
				for _, f := range found {
					f.Step = idx
					r.online = append(r.online, f)
					fc := f
					r.rec.Add(&trace.Step{Kind: trace.KindGate, Name: f.Rule, Finding: &fc})
				}
				r.messages = append(r.messages, llms.MessageContent{Role: llms.ChatMessageTypeTool, Parts: []llms.ContentPart{
					llms.ToolCallResponse{ToolCallID: calls[i].ID, Name: c.name, Content: result}}})
			}
			r.modelCall(k, budget) // the model reads the results
		}
		r.rec.Add(&trace.Step{Kind: trace.KindModel, Name: "scripted", Result: e.reply})
		r.messages = append(r.messages, llms.TextParts(llms.ChatMessageTypeAI, e.reply))
	}
	return r
}

// modelCall compresses the conversation and injects the card, as the
// guard does before each model call, and records the compression.
func (r *run) modelCall(turn, budget int) {
	input := slices.Clip(r.messages)
	sent, rep := Compress(input, budget, r.card)
	r.rec.Add(CompressStep(rep))
	r.calls = append(r.calls, modelCall{turn: turn, input: input, sent: Inject(sent, r.card), report: rep})
}

// evaluate judges every tool step of a recorded trace against the steps
// before it, as Guard.Evaluate does.
func evaluate(tr *trace.Trace) []trace.Finding {
	var out []trace.Finding
	for i, s := range tr.Steps {
		if s.Kind != trace.KindTool {
			continue
		}
		out = append(out, Enforcer{}.Check(tr.Prefix(i), s)...)
	}
	return out
}

// withoutMemorySteps returns tr as an imported chat log would be: no memory
// or gate steps.
func withoutMemorySteps(tr *trace.Trace) *trace.Trace {
	c := *tr
	c.Steps = nil
	for _, s := range tr.Steps {
		if s.Kind == trace.KindMemory || s.Kind == trace.KindGate {
			continue
		}
		cp := *s
		cp.Index = len(c.Steps)
		c.Steps = append(c.Steps, &cp)
	}
	return &c
}

// checkPairs reports the first way messages break the tool-call protocol:
// every tool call answered exactly once by a later tool message, every
// tool result answering an earlier call.
func checkPairs(messages []llms.MessageContent) error {
	open := map[string]bool{}
	for i, m := range messages {
		for _, p := range m.Parts {
			switch p := p.(type) {
			case llms.ToolCall:
				if m.Role != llms.ChatMessageTypeAI {
					return fmt.Errorf("message %d: tool call %s in a %s message", i, p.ID, m.Role)
				}
				if _, dup := open[p.ID]; dup {
					return fmt.Errorf("message %d: tool call id %s used twice", i, p.ID)
				}
				open[p.ID] = true
			case llms.ToolCallResponse:
				pending, ok := open[p.ToolCallID]
				if !ok {
					return fmt.Errorf("message %d: result for unknown call %s", i, p.ToolCallID)
				}
				if !pending {
					return fmt.Errorf("message %d: second result for call %s", i, p.ToolCallID)
				}
				open[p.ToolCallID] = false
			}
		}
	}
	for id, pending := range open {
		if pending {
			return fmt.Errorf("tool call %s has no result", id)
		}
	}
	return nil
}

// texts returns the text of each message, for looking things up.
func texts(messages []llms.MessageContent) []string {
	out := make([]string, len(messages))
	for i, m := range messages {
		var b strings.Builder
		for _, p := range m.Parts {
			switch p := p.(type) {
			case llms.TextContent:
				b.WriteString(p.Text)
			case llms.ToolCallResponse:
				b.WriteString(p.Content)
			case llms.ToolCall:
				b.WriteString(p.FunctionCall.Name + p.FunctionCall.Arguments)
			}
		}
		out[i] = b.String()
	}
	return out
}

func containsText(messages []llms.MessageContent, s string) bool {
	for _, t := range texts(messages) {
		if strings.Contains(t, s) {
			return true
		}
	}
	return false
}

func rules(fs []trace.Finding) []string {
	out := make([]string, len(fs))
	for i, f := range fs {
		out[i] = fmt.Sprintf("%d:%s", f.Step, f.Rule)
	}
	return out
}
