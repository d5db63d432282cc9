package shop

import (
	"context"
	"encoding/json"
	"fmt"
	"regexp"
	"strings"

	"github.com/agentguard/agentguard/guard/guardtest"
	"github.com/tmc/langchaingo/llms"
)

// Model returns the demo agent's model: a deterministic stand-in for an LLM
// that reads the conversation and answers with tool calls and text the way
// a real model would, including the failure modes agentguard exists for:
// it quotes a policy clause that does not exist when retrieval comes back
// empty, it polls a parcel that never moves in a loop, and it calls a tool
// it was not given (cancel_order) when asked to cancel.
func Model() *guardtest.Model { return guardtest.Func(reply) }

var orderID = regexp.MustCompile(`\bA\d{4}\b`)

// turn is what the model sees since the user's last request.
type turn struct {
	user      string
	confirmed bool     // the user just said yes to the request
	feedback  string   // the guard's feedback on the last answer
	results   []result // tool results since the request
	earlier   []result // tool results of earlier requests
}

var confirmation = regexp.MustCompile(`^\s*(yes|yes please|go ahead|是的|确认|好的)[。.!！]?\s*$`)

type result struct{ name, content string }

func (t turn) last(name string) (string, bool) {
	for i := len(t.results) - 1; i >= 0; i-- {
		if t.results[i].name == name {
			return t.results[i].content, true
		}
	}
	return "", false
}

func (t turn) count(name string) int {
	n := 0
	for _, r := range t.results {
		if r.name == name {
			n++
		}
	}
	return n
}

func read(messages []llms.MessageContent) turn {
	var t turn
	var previous string // the user's request before a bare "yes"
	for _, m := range messages {
		for _, p := range m.Parts {
			switch p := p.(type) {
			case llms.TextContent:
				switch {
				case m.Role != llms.ChatMessageTypeHuman:
				case strings.HasPrefix(p.Text, "[agentguard]"):
					t.feedback = p.Text
				case confirmation.MatchString(p.Text) && previous != "":
					t = turn{user: previous, confirmed: true, earlier: t.earlier}
				default:
					earlier := append(t.earlier, t.results...)
					t = turn{user: p.Text, earlier: earlier}
					previous = p.Text
				}
			case llms.ToolCallResponse:
				t.results = append(t.results, result{p.Name, p.Content})
			}
		}
	}
	return t
}

func call(name string, a map[string]string) guardtest.Reply {
	b, _ := json.Marshal(a)
	return guardtest.ToolCall(name, string(b))
}

func has(s string, words ...string) bool {
	s = strings.ToLower(s)
	for _, w := range words {
		if strings.Contains(s, w) {
			return true
		}
	}
	return false
}

func blocked(content string) bool { return strings.HasPrefix(content, "[agentguard]") }

func reply(_ context.Context, messages []llms.MessageContent, _ llms.CallOptions) (guardtest.Reply, error) {
	t := read(messages)
	id := orderID.FindString(t.user)
	switch {
	case has(t.user, "cancel", "取消"):
		if id == "" {
			return guardtest.Text("Which order would you like to cancel?"), nil
		}
		if _, ok := t.last("cancel_order"); !ok {
			return call("cancel_order", map[string]string{"order_id": id}), nil // not a tool it was given
		}
		return guardtest.Text("I cannot cancel orders myself. I have passed your request for " + id + " to a colleague."), nil
	case has(t.user, "address", "地址"):
		return addressFlow(t, id)
	case id != "" && has(t.user, "return", "退货", "退"):
		return returnFlow(t, id)
	case has(t.user, "policy", "compensation", "warranty", "refund", "政策", "赔偿", "保修", "退款", "退货"):
		return policyFlow(t)
	case has(t.user, "where", "track", "到哪", "物流", "status", "text me"):
		if id == "" {
			return guardtest.Text("Could you give me your order number? It looks like A1234."), nil
		}
		return trackFlow(t, id)
	}
	return guardtest.Text("How can I help you with your order today?"), nil
}

func trackFlow(t turn, id string) (guardtest.Reply, error) {
	o, ok := t.last("query_order")
	if !ok {
		return call("query_order", map[string]string{"order_id": id}), nil
	}
	var order Order
	if json.Unmarshal([]byte(o), &order) != nil || order.ID == "" {
		// The failure mode: an empty lookup taken as "there is nothing".
		return guardtest.Text("There are no records of order " + id + " in our system."), nil
	}
	if has(t.user, "text me", "sms", "短信") {
		return smsFlow(t, id, order)
	}
	if order.TrackingNo == "" {
		return guardtest.Text(fmt.Sprintf("Order %s (%s) is %s and has not shipped yet.", id, order.Item, order.Status)), nil
	}
	l, ok := t.last("logistics")
	switch {
	case !ok:
		return call("logistics", map[string]string{"tracking_no": order.TrackingNo}), nil
	case blocked(l) || strings.HasPrefix(l, "error:"):
		return guardtest.Text(fmt.Sprintf("Order %s has shipped (tracking %s), but I cannot get a tracking update right now. Please check again later.", id, order.TrackingNo)), nil
	case strings.Contains(l, "no new scan") && t.count("logistics") < 5:
		// The failure mode: poll again and again, hoping for news.
		return call("logistics", map[string]string{"tracking_no": order.TrackingNo}), nil
	}
	var track struct{ Status, LastScan string }
	_ = json.Unmarshal([]byte(l), &struct {
		Status   *string `json:"status"`
		LastScan *string `json:"last_scan"`
	}{&track.Status, &track.LastScan})
	return guardtest.Text(fmt.Sprintf("Order %s (%s) is %s; last scan: %s.", id, order.Item, track.Status, track.LastScan)), nil
}

// smsFlow texts the customer an order's tracking number, to the phone of
// the first order looked up in the conversation: the failure mode of an
// entity mixed up across steps.
func smsFlow(t turn, id string, order Order) (guardtest.Reply, error) {
	if r, ok := t.last("send_sms"); ok {
		if blocked(r) {
			return guardtest.Text("I could not send the text message; please check the phone number on your account."), nil
		}
		return guardtest.Text("I sent the tracking number of " + id + " to your phone."), nil
	}
	phone := order.Phone
	for _, r := range append(t.earlier, t.results...) {
		var o Order
		if r.name == "query_order" && json.Unmarshal([]byte(r.content), &o) == nil && o.Phone != "" {
			phone = o.Phone
			break
		}
	}
	return call("send_sms", map[string]string{"phone": phone, "text": fmt.Sprintf("Order %s: tracking number %s", id, order.TrackingNo)}), nil
}

func policyFlow(t turn) (guardtest.Reply, error) {
	r, ok := t.last("search_kb")
	if !ok {
		return call("search_kb", map[string]string{"query": t.user}), nil
	}
	var docs []Doc
	_ = json.Unmarshal([]byte(r), &docs)
	if len(docs) == 0 {
		// The failure mode: retrieval came back empty and the model answers anyway.
		return guardtest.Text("According to clause 7.3 of our VIP service policy, you are entitled to ¥50 compensation for every day of delay."), nil
	}
	if has(t.user, "accidental") && t.feedback == "" {
		// The failure mode: a confident detail that no document holds.
		return guardtest.Text(fmt.Sprintf("Per section 4.2 of the warranty, accidental damage is covered once per year. [%s]", docs[0].ID)), nil
	}
	return guardtest.Text(fmt.Sprintf("%s [%s]", docs[0].Text, docs[0].ID)), nil
}

func returnFlow(t turn, id string) (guardtest.Reply, error) {
	if _, ok := t.last("query_order"); !ok {
		return call("query_order", map[string]string{"order_id": id}), nil
	}
	r, ok := t.last("submit_return")
	if !ok {
		return call("submit_return", map[string]string{"order_id": id, "reason": "defective"}), nil
	}
	if blocked(r) || strings.HasPrefix(r, "error:") {
		return guardtest.Text("I could not submit the return for " + id + ": " + r), nil
	}
	return guardtest.Text("Your return for " + id + " is submitted. The refund reaches your original payment method within 5 business days of receipt."), nil
}

var newAddress = regexp.MustCompile(`(?i)(?:\bto\b|改成|改为|换成)\s*[:：]?\s*(.+?)[。.!！]?$`)

func addressFlow(t turn, id string) (guardtest.Reply, error) {
	if id == "" {
		return guardtest.Text("Which order should the new address apply to?"), nil
	}
	m := newAddress.FindStringSubmatch(t.user)
	if m == nil {
		return guardtest.Text("What is the new address?"), nil
	}
	o, ok := t.last("query_order")
	if !ok {
		return call("query_order", map[string]string{"order_id": id}), nil
	}
	u, ok := t.last("update_address")
	if !ok {
		return call("update_address", map[string]string{"order_id": id, "address": m[1]}), nil
	}
	if blocked(u) || strings.HasPrefix(u, "error:") {
		return guardtest.Text("I could not change the address of " + id + " right now; a colleague will follow up with you."), nil
	}
	if _, ok := t.last("send_sms"); !ok {
		var order Order
		_ = json.Unmarshal([]byte(o), &order)
		return call("send_sms", map[string]string{"phone": order.Phone, "text": "Your delivery address for " + id + " is now " + m[1]}), nil
	}
	return guardtest.Text("Done: order " + id + " will be delivered to " + m[1] + ". I sent you a confirmation by SMS."), nil
}
