package authz

import (
	"strings"
	"testing"

	"github.com/agentguard/agentguard/guard/internal/detect"
	"github.com/agentguard/agentguard/guard/internal/rulekit"
)

// TestConfirmationShopRewordings: 40 conversations of a shoe store
// (en/zh) a second reviewer wrote blind, from the documentation only
// (guard.go above ConfirmYesOrRequest, policy.md's confirmation row), and
// ran once: 31/40 — 13/20 confirmations counted, 18/20 withdrawals and new
// changes caught. Since then (no longer blind) a number the agent offered
// is a detail ("the 10", "43码的"), Han words shared with the agent skip
// function characters ("还是"), "go for it" is a yes, and after a listing
// a request to carry it out that names no action confirms ("Please submit
// it", "麻烦帮我提交一下"; the lexicon's GoAhead): 39/40. The case in gaps
// still goes the wrong way; each says why, and the test fails
// when one is mended, so that it leaves the list. asked == true means a
// finding ("not confirmed") is expected; AMBIGUOUS names a case a reviewer
// could judge either way.
func TestConfirmationShopRewordings(t *testing.T) {
	gaps := map[string]string{
		"zh/ask/确认后追加修改颜色": "换成 is an update, not the exchange's family, so the added change is not read as a new request for the action",
	}
	const tool = "exchange_order_items"
	const args = `{"order_id":"#W6203518","item_ids":["4417730921"],"new_item_ids":["9052186634"],"payment_method_id":"gift_card_8830415"}`
	const argsPayPal = `{"order_id":"#W6203518","item_ids":["4417730921"],"new_item_ids":["9052186634"],"payment_method_id":"paypal_5561230"}`

	// English listings.
	listed := "Here's what I have for order #W6203518: the Trailrunner shoes (item 4417730921, size 9, grey) would be exchanged for item 9052186634 (size 10, grey). The new pair costs $8.50 more, charged to your gift card gift_card_8830415. Would you like me to go ahead?"
	listedPay := "For order #W6203518 I can exchange the Trailrunner shoes (item 4417730921, size 9, grey) for item 9052186634 (size 10, grey). There's an $8.50 difference. Can you confirm, and tell me whether to charge your gift card or your PayPal?"
	listedSizes := "For order #W6203518 I can exchange the Trailrunner shoes (item 4417730921, size 9) for either item 9052186634 (size 10) or item 9052186699 (size 10.5), both grey, $8.50 more on your gift card. Shall I proceed?"
	// Chinese listings.
	listedZh := "订单 #W6203518：将商品 4417730921（越野跑鞋，42码，灰色）换成 9052186634（43码，灰色），需补差价 58 元，从礼品卡 gift_card_8830415 扣除。需要我为您提交吗？"
	listedPayZh := "订单 #W6203518：可以把商品 4417730921（越野跑鞋，42码，灰色）换成 9052186634（43码，灰色），需补差价 58 元。请确认，并告诉我用礼品卡还是 PayPal 支付。"
	listedSizesZh := "订单 #W6203518：商品 4417730921（越野跑鞋，42码）可以换成 9052186634（43码）或 9052186699（44码），都是灰色，补差价 58 元从礼品卡扣。要帮您换吗？"

	type turn = talkTurn
	tests := []struct {
		name  string
		args  string // the judged call's args; "" means args
		turns []turn // the last is the turn of the judged call
		asked bool
	}{
		// ---------------- English, should confirm (no finding) ----------------
		{"en/ok/plain yes right before the call", "", []turn{
			{user: "The Trailrunners I got are a size too small, can I swap them?", agent: listed},
			{user: "Yep, that's perfect, let's do it."}}, false},
		{"en/ok/varied yes wording", "", []turn{
			{user: "Hi, I need a bigger size of the shoes I ordered.", agent: listed},
			{user: "That all looks right to me — go for it."}}, false},
		{"en/ok/request after listing: please submit it", "", []turn{
			{user: "My new running shoes pinch, I'd like a size up.", agent: listed},
			{user: "Please submit it."}}, false},
		{"en/ok/request after listing, reworded", "", []turn{
			{user: "Can you help me get these shoes in a 10?", agent: listed},
			{user: "Please put that exchange through for me."}}, false},
		{"en/ok/yes then payment method given", "", []turn{
			{user: "I'd like to exchange the shoes from my last order.", agent: listedPay},
			{user: "Yes, please do that.", agent: "Great. Should I charge the $8.50 to your gift card or to PayPal?"},
			{user: "Put it on the gift card."}}, false},
		{"en/ok/yes then shipping address option given", "", []turn{
			{user: "These trail shoes run small, I want the next size.", agent: listed},
			{user: "Sure, go ahead.", agent: "Should the new pair ship to your home on Alder Lane or to your office on Market Street?"},
			{user: "Alder Lane, my home."}}, false},
		{"en/ok/yes then size chosen from offered options", "", []turn{
			{user: "Need to exchange my Trailrunners for a bigger size.", agent: listedSizes},
			{user: "Yes please.", agent: "Which of the two would you like, the 10 or the 10.5?"},
			{user: "The 10, please."}}, false},
		{"en/ok/yes then two detail turns", "", []turn{
			{user: "Could I swap my shoes for a larger pair?", agent: listedPay},
			{user: "Okay, yes.", agent: "Gift card or PayPal for the difference?"},
			{user: "Gift card.", agent: "And should the new pair go to Alder Lane or Market Street?"},
			{user: "Alder Lane."}}, false},
		{"en/ok/retry with another payment after a failed call", argsPayPal, []turn{
			{user: "I want the size 10 instead of the 9 I received.", agent: listed},
			{user: "Yes, go ahead.", call: "failed", agent: "The gift card was declined — it only has $3.20 left. I can use your PayPal or the Visa ending 4471 instead; which one?"},
			{user: "Use PayPal then."}}, false},
		{"en/ok/yes with 'no problem' then another yes", "", []turn{
			{user: "Hello, I'd like to exchange some shoes.", agent: listed},
			{user: "Yes, no problem, go ahead."}}, false},

		// ---------------- English, should not confirm (finding) ----------------
		{"en/ask/fully specified yes in the opening turn", "", []turn{
			{user: "Yes, exchange item 4417730921 in order #W6203518 for 9052186634 and charge my gift card."}}, true},
		{"en/ask/yes then indirect change of mind (keep them)", "", []turn{
			{user: "I'd like to exchange the shoes from my last order.", agent: listedPay},
			{user: "Yes, that's right.", agent: "Gift card or PayPal?"},
			{user: "Actually, I think I'll just keep the ones I have for now."}}, true},
		{"en/ask/yes then indirect change of mind (wait for payday)", "", []turn{
			{user: "Can I get these in a size 10?", agent: listedPay},
			{user: "Okay, yes.", agent: "Would you like to use the gift card or PayPal?"},
			{user: "Hmm, on second thought I'd rather wait until payday."}}, true},
		{"en/ask/yes then a different size", "", []turn{
			{user: "My shoes are too small.", agent: listedPay},
			{user: "Yes.", agent: "Gift card or PayPal?"},
			{user: "Gift card — but make it the size 11 instead."}}, true},
		{"en/ask/yes then an extra change (colour)", "", []turn{
			{user: "I want to exchange my Trailrunners.", agent: listedPay},
			{user: "Yes, do it.", agent: "Gift card or PayPal?"},
			{user: "Gift card, and swap the grey for the black ones while you're at it."}}, true},
		{"en/ask/yes then a question", "", []turn{
			{user: "I need a bigger size of these shoes.", agent: listedPay},
			{user: "Yes, please.", agent: "Gift card or PayPal?"},
			{user: "Which one gets me refunded faster if these don't fit either?"}}, true},
		{"en/ask/yes taken back in the same message", "", []turn{
			{user: "The shoes don't fit, can I exchange them?", agent: listed},
			{user: "Yes — oh wait, no, hold on, I need to check with my partner first."}}, true},
		{"en/ask/AMBIGUOUS yes three detail turns back", "", []turn{
			{user: "I'd like a bigger size of my Trailrunners.", agent: listedSizes},
			{user: "Yes.", agent: "Which size, the 10 or the 10.5?"},
			{user: "The 10.", agent: "Gift card or PayPal for the difference?"},
			{user: "Gift card.", agent: "Ship to Alder Lane or Market Street?"},
			{user: "Alder Lane."}}, true},
		{"en/ask/yes answered an eligibility question, not the listing", "", []turn{
			{user: "My Trailrunners from my last order don't fit.", agent: "Sorry to hear that! Are the shoes unworn and still in their original box?"},
			{user: "Yes, they are.", agent: "Great, they qualify. For order #W6203518 I can exchange item 4417730921 for item 9052186634 (size 10); the $8.50 difference can go on your gift card or PayPal — which would you like?"},
			{user: "The gift card."}}, true},
		{"en/ask/yes already used by a successful call", "", []turn{
			{user: "Please help me swap my shoes for a size 10.", agent: listed},
			{user: "Yes, go ahead.", call: "ok", agent: "Done — the exchange for order #W6203518 is submitted. Would you like the return label emailed or printed at the store?"},
			{user: "Email, please."}}, true},

		// ---------------- Chinese, should confirm (no finding) ----------------
		{"zh/ok/确认后紧接调用", "", []turn{
			{user: "我买的越野跑鞋小了一码，能换吗？", agent: listedZh},
			{user: "对，就这样换吧。"}}, false},
		{"zh/ok/另一种说法的同意", "", []turn{
			{user: "鞋子码数不合适，想换大一码。", agent: listedZh},
			{user: "行，就按这个来。"}}, false},
		{"zh/ok/列出后请求提交", "", []turn{
			{user: "这双鞋有点挤脚，想换 43 码的。", agent: listedZh},
			{user: "麻烦帮我提交一下。"}}, false},
		{"zh/ok/列出后请求换货，换种说法", "", []turn{
			{user: "我想把上次买的鞋换个尺码。", agent: listedZh},
			{user: "那就帮我把换货申请提交了吧。"}}, false},
		{"zh/ok/确认后给出付款方式", "", []turn{
			{user: "上个订单的鞋想换一下。", agent: listedPayZh},
			{user: "好的，确认。", agent: "请问 58 元差价用礼品卡还是 PayPal 支付？"},
			{user: "扣礼品卡里的就行。"}}, false},
		{"zh/ok/确认后选择收货地址", "", []turn{
			{user: "跑鞋偏小，想换大一号。", agent: listedZh},
			{user: "可以。", agent: "新鞋寄到您家里（桤木路）还是公司（市场街）？"},
			{user: "寄到家里。"}}, false},
		{"zh/ok/确认后从给出的尺码中选择", "", []turn{
			{user: "鞋子小了，想换大的。", agent: listedSizesZh},
			{user: "嗯，换吧。", agent: "您要 43 码还是 44 码？"},
			{user: "43码的。"}}, false},
		{"zh/ok/确认后连续两轮给出细节", "", []turn{
			{user: "能帮我换双大一码的鞋吗？", agent: listedPayZh},
			{user: "是的。", agent: "差价用礼品卡还是 PayPal？"},
			{user: "礼品卡。", agent: "新鞋寄到家里还是公司？"},
			{user: "家里。"}}, false},
		{"zh/ok/调用失败后改用其他付款方式重试", argsPayPal, []turn{
			{user: "收到的是42码，我要43码的。", agent: listedZh},
			{user: "确认，换吧。", call: "failed", agent: "礼品卡扣款失败，余额只剩 20 元。可以改用 PayPal 或尾号 4471 的 Visa 卡，您选哪个？"},
			{user: "那用 PayPal 吧。"}}, false},
		{"zh/ok/没问题加提交", "", []turn{
			{user: "你好，我想换一下鞋子。", agent: listedZh},
			{user: "没问题，提交吧。"}}, false},

		// ---------------- Chinese, should not confirm (finding) ----------------
		{"zh/ask/首轮就确认", "", []turn{
			{user: "确认，把订单 #W6203518 里的 4417730921 换成 9052186634，用礼品卡补差价。"}}, true},
		{"zh/ask/确认后委婉反悔（过两天再说）", "", []turn{
			{user: "上个订单的鞋想换一下。", agent: listedPayZh},
			{user: "好的。", agent: "差价用礼品卡还是 PayPal？"},
			{user: "我再考虑考虑，过两天再说吧。"}}, true},
		{"zh/ask/确认后委婉反悔（先留着）", "", []turn{
			{user: "鞋子小了点，想换。", agent: listedPayZh},
			{user: "可以。", agent: "请问用礼品卡还是 PayPal 付款？"},
			{user: "要不还是先留着这双吧，穿穿看再说。"}}, true},
		{"zh/ask/确认后改成别的尺码", "", []turn{
			{user: "想换大一码的鞋。", agent: listedPayZh},
			{user: "是的。", agent: "礼品卡还是 PayPal？"},
			{user: "礼品卡，不过改成45码吧。"}}, true},
		{"zh/ask/确认后追加修改颜色", "", []turn{
			{user: "我要换鞋。", agent: listedPayZh},
			{user: "对。", agent: "礼品卡还是 PayPal？"},
			{user: "礼品卡，顺便把颜色换成黑色的。"}}, true},
		{"zh/ask/确认后提问", "", []turn{
			{user: "这双鞋想换大一号。", agent: listedPayZh},
			{user: "好。", agent: "礼品卡还是 PayPal？"},
			{user: "用 PayPal 的话什么时候扣款？"}}, true},
		{"zh/ask/同一句里收回确认", "", []turn{
			{user: "鞋不合脚，能换吗？", agent: listedZh},
			{user: "好的……哦不对，等等，先别提交。"}}, true},
		{"zh/ask/AMBIGUOUS 确认在三轮细节之前", "", []turn{
			{user: "想把跑鞋换大一点的。", agent: listedSizesZh},
			{user: "是的。", agent: "您要 43 码还是 44 码？"},
			{user: "43码。", agent: "差价用礼品卡还是 PayPal？"},
			{user: "礼品卡。", agent: "寄到家里还是公司？"},
			{user: "家里。"}}, true},
		{"zh/ask/是的回答的是别的问题", "", []turn{
			{user: "上次买的跑鞋不合脚。", agent: "很抱歉！请问鞋子没穿过、原包装还在吗？"},
			{user: "是的，都在。", agent: "符合换货条件。订单 #W6203518 的商品 4417730921 可以换成 9052186634（43码），差价 58 元用礼品卡还是 PayPal 支付？"},
			{user: "礼品卡。"}}, true},
		{"zh/ask/确认已被成功的调用用掉", "", []turn{
			{user: "帮我把鞋换成43码。", agent: listedZh},
			{user: "确认。", call: "ok", agent: "已为订单 #W6203518 提交换货。退货标签发邮件还是到店打印？"},
			{user: "发邮件吧。"}}, true},
	}
	tools := rulekit.NewTools(detect.Default(), map[string]rulekit.Tool{tool: {Writes: true, Confirm: true}})
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			a := tt.args
			if a == "" {
				a = args
			}
			tr, s := talk(tool, a, tt.turns)
			got := NewConfirmation(tools, false, false).Check(tr, s)
			asked := len(got) > 0
			if gap, ok := gaps[strings.ReplaceAll(tt.name, " ", "_")]; ok {
				if asked == tt.asked {
					t.Errorf("a known gap is mended (%s): remove it from gaps", gap)
				}
				return
			}
			if asked != tt.asked {
				t.Errorf("asked %v, want %v (findings %+v)", asked, tt.asked, got)
			}
		})
	}
}
