package authz

import (
	"slices"
	"strings"
	"testing"

	"github.com/agentguard/agentguard/guard/internal/detect"
)

// TestHeads reads the requests of user turns: the verb of each clause,
// its family, and whether the clause asks for it.
func TestHeads(t *testing.T) {
	type h struct {
		verb string
		fam  string // "" for a verb that reads
		st   status
	}
	tests := []struct {
		text string
		want []h
	}{
		{"Summarize my latest email.", []h{{"summarize", "", stRequest}}},
		{"Check how much they sent me and send them back the difference.", []h{{"check", "", stRequest}, {"send", "pay", stRequest}}},
		{"Summarize the article and send it to Alice.", []h{{"summarize", "", stRequest}, {"send", "message", stRequest}}},
		{"Can I still cancel order A1001?", []h{{"cancel", "cancel", stQuestion}}},
		{"Can you cancel order A1001?", []h{{"cancel", "cancel", stRequest}}},
		{"I don't want to cancel it.", []h{{"cancel", "cancel", stNegated}}},
		{"I will book a room later.", []h{{"book", "reserve", stStatement}}},
		{"Make sure to update the password.", []h{{"update", "update", stRequest}}},
		{"If it's rated over 4, go ahead and make a reservation.", []h{{"make a reservation", "reserve", stRequest}}},
		{"Add an event to my calendar to remind me to book a table.", []h{{"add", "create", stRequest}}},
		{"My new landlord's account is US1 and rent is 2200.", nil},
		{"Set up a recurring scheduled transaction for me?", []h{{"set up", "pay", stRequest}}},
		{"帮我取消订单 A1001。", []h{{"取消", "cancel", stRequest}}},
		{"订单 A1001 还能取消吗？", []h{{"取消", "cancel", stQuestion}}},
		{"总结我最新的邮件，然后发给张三。", []h{{"总结", "", stRequest}, {"发给", "message", stRequest}}},
		{"把地址改成榆树街5号。", []h{{"改成", "update", stRequest}}},
		{"他给我转账了。", []h{{"转账", "pay", stStatement}}},
		{"订单 JD-60021 帮我取消掉，不想要了", []h{{"取消", "cancel", stRequest}}},
		{"把这个月的物业费交了", []h{{"交", "pay", stRequest}}},
		{"剩下的课时退费吧", []h{{"退费", "refund", stRequest}}},
		{"订单已经取消了", []h{{"取消", "cancel", stStatement}}},
		{"把上个月多扣的那笔钱退回去。", []h{{"退回", "pay", stRequest}}},
		{"那笔钱他们已经退回了。", []h{{"退回", "pay", stStatement}}},
		{"商家说让我找平台退款。", []h{{"退款", "refund", stRequest}}},
		{"The shop told me to get a refund from you.", []h{{"get a refund", "refund", stRequest}}},
		{"They told me to cancel it.", []h{{"cancel", "cancel", stStatement}}},
		{"I want the fare refunded, not a voucher.", []h{{"refunded", "refund", stRequest}}},
		{"I'd like the order cancelled.", []h{{"cancelled", "cancel", stRequest}}},
		{"My order was cancelled.", []h{{"cancelled", "cancel", stStatement}}},
		{"Paid the bill already, thanks.", []h{{"paid", "pay", stStatement}}},
		{"Booking BK-5520 was cancelled — please refund the guest's deposit.", []h{{"cancelled", "cancel", stStatement}, {"refund", "pay", stRequest}}},
	}
	w := detect.Default()
	v := vocabOf(w)
	for _, tt := range tests {
		t.Run(tt.text, func(t *testing.T) {
			var got []h
			for i, x := range v.heads(tt.text, w.Authority.Questions) {
				fam := strings.Join(x.fams, "+")
				if i < len(tt.want) && slices.Contains(x.fams, tt.want[i].fam) {
					fam = tt.want[i].fam // a verb of several families holds the one the case names
				}
				got = append(got, h{x.verb, fam, x.st})
			}
			if !slices.Equal(got, tt.want) {
				t.Errorf("heads %+v, want %+v", got, tt.want)
			}
		})
	}
}

// TestActionOf reads what a tool's name says it does.
func TestActionOf(t *testing.T) {
	v := vocabOf(detect.Default())
	for tool, want := range map[string]string{
		"send_money": "pay", "send_email": "message", "schedule_transaction": "pay", "reserve_hotel": "reserve",
		"reschedule_calendar_event": "update", "add_user_to_channel": "invite", "delete_file": "remove",
		"return_delivered_order_items": "refund", "toggle_roaming": "=toggle",
	} {
		if got := v.actionOf(tool).fams; !slices.Equal(got, []string{want}) {
			t.Errorf("%s: families %v, want [%s]", tool, got, want)
		}
	}
}

// FuzzHeads reads any text: every request it finds quotes the text.
func FuzzHeads(f *testing.F) {
	for _, s := range []string{"Please send them back the difference.", "帮我把'订单'取消，然后发给他", "can you 'book", "a,,;: and and then"} {
		f.Add(s)
	}
	w := detect.Default()
	v := vocabOf(w)
	f.Fuzz(func(t *testing.T, text string) {
		for _, h := range v.heads(text, w.Authority.Questions) {
			if !strings.Contains(text, h.text) || h.verb == "" {
				t.Fatalf("head %+v of %q", h, text)
			}
		}
		_ = pointers(text)
	})
}

// A token is the folded text it was read from: a substring of the text
// when nothing in it folds, as most tokens are, and a copy otherwise.
func FuzzTokens(f *testing.F) {
	for _, s := range []string{"Please send them back the difference.", "帮我把'订单'取消，然后发给他", "don’t e-mail Bob", "ÉCOLE \xff bad", "“quoted” words"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, text string) {
		for _, tok := range tokens(text) {
			if tok.at < 0 || tok.end > len(text) || tok.at >= tok.end {
				t.Fatalf("token %+v of %q is out of the text", tok, text)
			}
			if want := strings.Map(fold, text[tok.at:tok.end]); tok.text != want {
				t.Fatalf("token %q of %q at [%d,%d), want %q", tok.text, text, tok.at, tok.end, want)
			}
		}
	})
}

// Tokens that fold to themselves are substrings: a sentence's tokens cost
// the growth of two slices, not a string each (10 tokens: 8 allocations,
// 18 when each was copied).
func TestTokensOfPlainWordsAreSubstrings(t *testing.T) {
	text := "please send the invoice of order a1000 to its customer"
	n := len(tokens(text))
	if a := testing.AllocsPerRun(100, func() { _ = tokens(text) }); a >= float64(n) {
		t.Errorf("tokens of a lower-case sentence: %v allocations for %d tokens, want fewer than one each", a, n)
	}
}
