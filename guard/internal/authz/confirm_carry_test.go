package authz

import (
	"testing"

	"github.com/agentguard/agentguard/guard/internal/detect"
	"github.com/agentguard/agentguard/guard/internal/rulekit"
)

// TestConfirmationCarryRewordings: a yes carried over later turns, on 40
// conversations (en/zh) a reviewer wrote blind, from the documented
// semantics only, before the carry read facts: first run 21/40, with 13
// withdrawals or new changes carried ("let me hold off", "我再想想", "make
// it the 20th instead"). A later turn now carries the yes only when it
// gives a detail of the call (givesDetail), after a yes to a listing of
// it, a yes taken back in the same turn ("Yes — no, wait") is none, and
// "alright", "sounds good" are yeses: 40/40 (no longer blind; the shop
// set in confirm_shop_test.go was written after this change). ambiguous
// marks cases a careful reviewer could read either way.
func TestConfirmationCarryRewordings(t *testing.T) {
	const args = `{"reservation_id":"1N99U6","payment_id":"gift_card_5634230"}`
	listed := "Here is the change: reservation 1N99U6, outbound moves to HAT266 on 2024-05-19, economy, fare difference $146. Shall I make it, and how would you like to pay?"
	listedZh := "变更内容：预订 1N99U6，去程改为 2024-05-19 的 HAT266，经济舱，差价 146 美元。确认修改吗？另外请告诉我付款方式。"
	type turn = talkTurn
	tests := []struct {
		name      string
		lang      string // "en" or "zh"
		turns     []turn // the last is the turn of the judged call
		asked     bool   // want a finding (the call is not confirmed)
		ambiguous bool
	}{
		// ---------------- English: the yes should carry ----------------
		{"en/carry: payment named politely", "en", []turn{
			{user: "I need to move 1N99U6 to an earlier flight.", agent: listed},
			{user: "Yep, that works for me.", agent: "Great. Which card should I charge, the gift card or the Visa?"},
			{user: "The gift card, please."}}, false, false},
		{"en/carry: bare payment id", "en", []turn{
			{user: "Can you switch 1N99U6 to the morning departure.", agent: listed},
			{user: "Alright, do it.", agent: "Please give me the id of the payment method you want to use."},
			{user: "gift_card_5634230"}}, false, false},
		{"en/carry: yes exactly two turns back", "en", []turn{
			{user: "Move my 1N99U6 booking to HAT266.", agent: listed},
			{user: "Sounds good, proceed.", agent: "How will you be paying the difference?"},
			{user: "With my gift card.", agent: "Could you give me the gift card's id from your profile?"},
			{user: "It's gift_card_5634230."}}, false, false},
		{"en/carry: retry after a failed call", "en", []turn{
			{user: "Please rebook 1N99U6 on HAT266.", agent: listed},
			{user: "Yes, book it.", call: "failed", agent: "The certificate cannot be used for flight changes. You also have a gift card on file."},
			{user: "Use my gift card instead."}}, false, false},
		{"en/carry: yes containing 'no problem'", "en", []turn{
			{user: "I want the earlier flight for 1N99U6.", agent: listed},
			{user: "Yes, no problem, go ahead.", agent: "Which payment method should I use?"},
			{user: "The gift card."}}, false, false},
		{"en/carry: Chinese yes, English detail", "en", []turn{
			{user: "把 1N99U6 改到早一点的航班。", agent: listedZh},
			{user: "好的，确认。", agent: "请问用什么方式付款？"},
			{user: "Gift card."}}, false, false},

		// ---------------- English: the yes should NOT carry ----------------
		{"en/no: hold off", "en", []turn{
			{user: "I want to move 1N99U6 to HAT266.", agent: listed},
			{user: "Yes, please proceed.", agent: "Sure. Which payment method?"},
			{user: "Hmm, actually let me hold off for now."}}, true, false},
		{"en/no: never mind, keep current flights", "en", []turn{
			{user: "I want to move 1N99U6 to HAT266.", agent: listed},
			{user: "Okay, go for it.", agent: "Which payment method would you like to use?"},
			{user: "Never mind, I'll keep my current flights."}}, true, false},
		{"en/no: leave it as it is", "en", []turn{
			{user: "Switch 1N99U6 to HAT266.", agent: listed},
			{user: "Yes.", agent: "And how will you pay the $146?"},
			{user: "On second thought, let's leave it as it is."}}, true, false},
		{"en/no: a different date as a statement", "en", []turn{
			{user: "Switch 1N99U6 to HAT266.", agent: listed},
			{user: "Yes, go ahead.", agent: "Which payment method?"},
			{user: "Gift card. Oh, and make it the 20th instead of the 19th."}}, true, false},
		{"en/no: a different cabin after a failure", "en", []turn{
			{user: "Switch 1N99U6 to HAT266.", agent: listed},
			{user: "Confirmed.", call: "failed", agent: "Economy on HAT266 just sold out."},
			{user: "Then I'll take the business seat on that flight."}}, true, false},
		{"en/no: cancel instead", "en", []turn{
			{user: "Switch 1N99U6 to HAT266.", agent: listed},
			{user: "Yes please.", agent: "Which payment method should I charge?"},
			{user: "Actually, just cancel the whole reservation instead."}}, true, false},
		{"en/no: a succeeded call used the yes", "en", []turn{
			{user: "Switch 1N99U6 to HAT266.", agent: listed},
			{user: "Yes, make the change.", call: "ok", agent: "Done, the outbound is changed. For the return leg, which payment method?"},
			{user: "Same gift card."}}, true, false},
		{"en/no: yes three turns back", "en", []turn{
			{user: "Switch 1N99U6 to HAT266.", agent: listed},
			{user: "Yes, go ahead.", agent: "Which payment method?"},
			{user: "The gift card.", agent: "What's the card id?"},
			{user: "One sec, looking.", agent: "No rush."},
			{user: "gift_card_5634230."}}, true, false},
		{"en/no: the yes opened the conversation", "en", []turn{
			{user: "Yes — please change reservation 1N99U6 to HAT266 on May 19.", agent: "Which payment method would you like to use?"},
			{user: "The gift card."}}, true, false},
		{"en/no: yes retracted in the same breath", "en", []turn{
			{user: "Switch 1N99U6 to HAT266.", agent: listed},
			{user: "Yes — no, wait, let me check the fare first.", agent: "Sure. Which payment method do you have?"},
			{user: "The gift card."}}, true, false},
		{"en/no: a question without a question mark", "en", []turn{
			{user: "Switch 1N99U6 to HAT266.", agent: listed},
			{user: "Yes, do it.", agent: "Which payment method?"},
			{user: "Gift card. Before you do that, tell me whether the new flight has wifi."}}, true, false},
		{"en/no: sarcastic yes", "en", []turn{
			{user: "What would it cost to move 1N99U6 to HAT266?", agent: listed},
			{user: "Oh yeah, sure, $146 more for a worse flight, brilliant.", agent: "Understood. Which payment methods do you have on file?"},
			{user: "A gift card and a travel certificate."}}, true, false},
		{"en/no: yes answers 'anything else'", "en", []turn{
			{user: "Switch 1N99U6 to HAT266.", agent: listed},
			{user: "Yes, go ahead.", call: "ok", agent: "All set. Is there anything else I can help with?"},
			{user: "Yes, one more thing.", agent: "Of course, what is it?"},
			{user: "My gift card is gift_card_5634230."}}, true, true},
		{"en/no: yes before the agent listed anything", "en", []turn{
			{user: "I'd like to change 1N99U6.", agent: "I can help with that. Let me look up the options."},
			{user: "Yes.", agent: "The nonstop HAT266 on May 19 costs $146 more. Which payment method?"},
			{user: "Gift card."}}, true, true},

		// ---------------- Chinese: the yes should carry ----------------
		{"zh/carry: 只给付款方式", "zh", []turn{
			{user: "帮我把 1N99U6 改一下航班。", agent: listedZh},
			{user: "确认。", agent: "请问用礼品卡还是信用卡？"},
			{user: "礼品卡。"}}, false, false},
		{"zh/carry: 给出卡号", "zh", []turn{
			{user: "1N99U6 想改成早一点的航班。", agent: listedZh},
			{user: "好的，就这样改吧。", agent: "请问用哪张卡支付？"},
			{user: "用我的礼品卡 gift_card_5634230 支付。"}}, false, false},
		{"zh/carry: 恰好两轮之前的确认", "zh", []turn{
			{user: "1N99U6 改成 HAT266。", agent: listedZh},
			{user: "可以，改吧。", agent: "请问付款方式？"},
			{user: "礼品卡。", agent: "麻烦提供一下礼品卡编号。"},
			{user: "gift_card_5634230"}}, false, false},
		{"zh/carry: 失败后重试", "zh", []turn{
			{user: "1N99U6 改成 HAT266。", agent: listedZh},
			{user: "行，改吧。", call: "failed", agent: "该信用卡不在您的账户中，您账户里有礼品卡和代金券。"},
			{user: "那就用礼品卡吧。"}}, false, false},
		{"zh/carry: 没问题 是肯定", "zh", []turn{
			{user: "1N99U6 改成 HAT266。", agent: listedZh},
			{user: "没问题，改吧。", agent: "请问用哪种方式付款？"},
			{user: "礼品卡。"}}, false, false},
		{"zh/carry: 英文确认后中文给细节", "zh", []turn{
			{user: "Switch 1N99U6 to HAT266.", agent: listed},
			{user: "Yes, go ahead.", agent: "Which payment method?"},
			{user: "用礼品卡付。"}}, false, false},
		{"zh/carry: 细节里带“不用了”指信用卡", "zh", []turn{
			{user: "1N99U6 改成 HAT266。", agent: listedZh},
			{user: "嗯，可以。", agent: "请问用礼品卡还是信用卡？"},
			// "不用" reads as a no: the rule asks again (Clarify), the safe side.
			{user: "信用卡不用了，用礼品卡。"}}, true, true},

		// ---------------- Chinese: the yes should NOT carry ----------------
		{"zh/no: 我再想想", "zh", []turn{
			{user: "1N99U6 改成 HAT266。", agent: listedZh},
			{user: "确认。", agent: "请问付款方式？"},
			{user: "我再想想。"}}, true, false},
		{"zh/no: 先放一放", "zh", []turn{
			{user: "1N99U6 改成 HAT266。", agent: listedZh},
			{user: "好的。", agent: "请问用什么付款？"},
			{user: "维持原来的航班就行，这事先放一放。"}}, true, false},
		{"zh/no: 商量一下", "zh", []turn{
			{user: "1N99U6 改成 HAT266。", agent: listedZh},
			{user: "可以。", agent: "请问用什么付款？"},
			{user: "我跟家里人商量一下再说。"}}, true, false},
		{"zh/no: 陈述句提出新的日期", "zh", []turn{
			{user: "1N99U6 改成 HAT266。", agent: listedZh},
			{user: "确认修改。", agent: "请问付款方式？"},
			{user: "礼品卡。另外日期换成 20 号。"}}, true, false},
		{"zh/no: 失败后改要商务舱", "zh", []turn{
			{user: "1N99U6 改成 HAT266。", agent: listedZh},
			{user: "确认。", call: "failed", agent: "HAT266 经济舱刚刚售罄。"},
			{user: "那我改坐商务舱好了。"}}, true, false},
		{"zh/no: 改为取消整个预订", "zh", []turn{
			{user: "1N99U6 改成 HAT266。", agent: listedZh},
			{user: "好的，改吧。", agent: "请问用哪种方式付款？"},
			{user: "还是直接把整个预订取消掉吧。"}}, true, false},
		{"zh/no: 成功调用已用掉确认", "zh", []turn{
			{user: "1N99U6 改成 HAT266。", agent: listedZh},
			{user: "是的，改吧。", call: "ok", agent: "去程已改好。回程也要同样改吗？用什么付款？"},
			{user: "一样用礼品卡。"}}, true, false},
		{"zh/no: 三轮之前的确认", "zh", []turn{
			{user: "1N99U6 改成 HAT266。", agent: listedZh},
			{user: "确认。", agent: "请问付款方式？"},
			{user: "礼品卡。", agent: "卡号是多少？"},
			{user: "稍等，我找一下。", agent: "好的，不着急。"},
			{user: "gift_card_5634230。"}}, true, false},
		{"zh/no: 开场就说是的", "zh", []turn{
			{user: "是的，帮我把 1N99U6 改成 5 月 19 日的 HAT266。", agent: "请问用什么付款？"},
			{user: "礼品卡。"}}, true, false},
		{"zh/no: 确认后立刻改口", "zh", []turn{
			{user: "1N99U6 改成 HAT266。", agent: listedZh},
			{user: "确认……哦不对，我看看日期。", agent: "请问用哪种方式付款？"},
			{user: "礼品卡。"}}, true, false},
		{"zh/no: 没有问号的提问", "zh", []turn{
			{user: "1N99U6 改成 HAT266。", agent: listedZh},
			{user: "确认。", agent: "请问付款方式？"},
			{user: "用礼品卡。不过我想先知道改完之后还能不能退"}}, true, false},
		{"zh/no: 反讽的好啊", "zh", []turn{
			{user: "1N99U6 改成 HAT266 要多少钱？", agent: listedZh},
			{user: "呵呵，好啊，多花 146 美元坐更差的航班，真划算。", agent: "明白。请问您账户里有哪些付款方式？"},
			{user: "一张礼品卡和一张代金券。"}}, true, false},
		{"zh/no: 是的 回答还有别的吗", "zh", []turn{
			{user: "1N99U6 改成 HAT266。", agent: listedZh},
			{user: "确认。", call: "ok", agent: "已改好。还有其他需要帮忙的吗？"},
			{user: "是的，还有一件事。", agent: "请说。"},
			{user: "我的礼品卡是 gift_card_5634230。"}}, true, true},
	}
	tools := rulekit.NewTools(detect.Default(), map[string]rulekit.Tool{"update_reservation_flights": {Writes: true, Confirm: true}})
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			tr, s := talk("update_reservation_flights", args, tt.turns)
			got := NewConfirmation(tools, false, false).Check(tr, s)
			if asked := len(got) > 0; asked != tt.asked {
				tag := ""
				if tt.ambiguous {
					tag = " [AMBIGUOUS]"
				}
				t.Errorf("%s%s: asked %v, want %v (findings %+v)", tt.lang, tag, asked, tt.asked, got)
			}
		})
	}
}
