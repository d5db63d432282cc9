package policy_test

import (
	"slices"
	"testing"

	"github.com/agentguard/agentguard/trace"
)

// conversationPolicy says, from τ's policy texts, what only the
// conversation shows: "list the action detail and obtain explicit user
// confirmation (yes) to proceed", "you should only make one tool call at a
// time", "ask if the user wants to buy the travel insurance".
const conversationPolicy = `
checks:
  - name: listed-then-confirmed
    when: tool == 'cancel_pending_order'
    require: listed([args.order_id, args.reason]) && confirmed()
  - name: one-call-at-a-time
    require: size(batch) == 1 && batch[0].text == ''
  - name: user-asked
    when: tool == 'return_delivered_order_items'
    require: requested()
  - name: insurance-offered
    when: tool == 'book_reservation'
    require: messages.exists(m, m.role == 'agent' && m.turn < size(user) - 1 && m.text.lowerAscii().contains('insurance'))
`

// chat builds a trace: user turns, each followed by what the agent said,
// then the model's proposal of calls and the tool steps that run them.
func chat(turns []string, said []string, calls ...trace.Call) *trace.Trace {
	tr := &trace.Trace{ID: "t", UserTurns: turns}
	for i := range turns {
		if i < len(said) && said[i] != "" {
			tr.Steps = append(tr.Steps, &trace.Step{Kind: trace.KindModel, Turn: i, Result: said[i]})
		}
	}
	last := len(turns) - 1
	tr.Steps = append(tr.Steps, &trace.Step{Kind: trace.KindModel, Turn: last, Calls: calls})
	for _, c := range calls {
		tr.Steps = append(tr.Steps, &trace.Step{Kind: trace.KindTool, Turn: last, Name: c.Name, CallID: c.ID, Args: c.Args})
	}
	numbered(tr.Steps...)
	return tr
}

func TestConversationChecks(t *testing.T) {
	p := checkPolicy(t, conversationPolicy)
	cancel := trace.Call{ID: "c1", Name: "cancel_pending_order", Args: `{"order_id":"#W2378156","reason":"no longer needed"}`}
	listing := "To confirm: cancel order #W2378156, reason: no longer needed. Shall I proceed?"
	for _, tt := range []struct {
		name string
		tr   *trace.Trace
		want []string
	}{
		{"listed, then yes", chat([]string{"Cancel my order please.", "Yes."}, []string{listing}, cancel), nil},
		{"listed, then the request", chat([]string{"Cancel my order please.", "Please cancel it."}, []string{listing}, cancel), nil},
		{"listed, then 好的", chat([]string{"请取消订单。", "好的"}, []string{"确认一下：取消订单 #W2378156，原因：no longer needed。可以吗？"}, cancel), nil},
		{"never listed", chat([]string{"Cancel order #W2378156, I no longer need it."}, nil, cancel), []string{"1:listed-then-confirmed"}},
		{"listed without the reason", chat([]string{"Cancel my order please.", "Yes."}, []string{"Cancel order #W2378156?"}, cancel), []string{"2:listed-then-confirmed"}},
		{"two calls in one message", chat([]string{"Where are #W1 and #W2?"}, nil,
			trace.Call{ID: "a", Name: "get_order_details", Args: `{"order_id":"#W1"}`}, trace.Call{ID: "b", Name: "get_order_details", Args: `{"order_id":"#W2"}`}),
			[]string{"1:one-call-at-a-time", "2:one-call-at-a-time"}},
		{"a call and an answer in one message", func() *trace.Trace {
			tr := chat([]string{"Where is #W1?"}, nil, trace.Call{ID: "a", Name: "get_order_details", Args: `{"order_id":"#W1"}`})
			tr.Steps[0].Result = "Let me check that for you."
			return tr
		}(), []string{"1:one-call-at-a-time"}},
		{"a return the user asked for", chat([]string{"I'd like to return the lamp from order #W1."}, nil,
			trace.Call{ID: "r", Name: "return_delivered_order_items", Args: `{"order_id":"#W1"}`}), nil},
		{"一个用户要求的退货", chat([]string{"我要退掉订单 #W1 里的台灯。"}, nil,
			trace.Call{ID: "r", Name: "return_delivered_order_items", Args: `{"order_id":"#W1"}`}), nil},
		{"a return the user only asked about", chat([]string{"Can I still return the lamp from #W1?"}, nil,
			trace.Call{ID: "r", Name: "return_delivered_order_items", Args: `{"order_id":"#W1"}`}), []string{"1:user-asked"}},
		{"insurance offered before", chat([]string{"Book the 9am flight.", "No insurance, thanks."}, []string{"Would you like travel insurance for $30?"},
			trace.Call{ID: "c", Name: "book_reservation", Args: `{"flight":"HAT001"}`}), nil},
		{"insurance never offered", chat([]string{"Book the 9am flight."}, nil,
			trace.Call{ID: "c", Name: "book_reservation", Args: `{"flight":"HAT001"}`}), []string{"1:insurance-offered"}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			if got := fired(checksOnly(p), tt.tr); !slices.Equal(got, tt.want) {
				t.Errorf("fired %v, want %v", got, tt.want)
			}
		})
	}
}
