package shop

import (
	"context"
	"encoding/json"
	"fmt"
	"hash/fnv"
	"regexp"
	"strings"

	"github.com/agentguard/agentguard/guard/guardtest"
	"github.com/tmc/langchaingo/llms"
)

// Model returns the demo agent's model: a deterministic stand-in for an LLM
// that reads the conversation and answers with tool calls and text the way
// a real model would, including the failure modes agentguard exists for:
//
//   - it quotes a policy clause that does not exist when retrieval comes
//     back empty or off-topic, and agrees with a clause the user asserts;
//   - it takes an empty lookup as "there are no records", and goes on with
//     a write after one;
//   - it polls a parcel that never moves in a loop;
//   - it calls a tool it was not given (cancel_order) when asked to cancel,
//     even when told not to;
//   - it texts the phone of the wrong order, and picks the wrong fact when
//     one sentence holds several;
//   - it forgets: it acts on the user's latest request alone, so what the
//     user stated in earlier turns — "don't text me", "my new address is
//     ..." — is lost (a bare "yes" confirms the request before it); tool
//     results stay in its context. Like the stand-in it is, it does not
//     read system prompts, pinned memory card included: only the guard's
//     enforcement stops it.
//
// Model is ModelSeed(0).
func Model() *guardtest.Model { return ModelSeed(0) }

// ModelSeed returns the demo model sampling with seed: where a request is
// ambiguous ("order A1003 has an issue"), it picks an interpretation the
// way an LLM at a non-zero temperature does — the same one for the same
// seed and request, different ones across seeds. Everything else is as
// Model describes.
func ModelSeed(seed uint64) *guardtest.Model {
	return guardtest.Func(func(_ context.Context, messages []llms.MessageContent, _ llms.CallOptions) (guardtest.Reply, error) {
		return reply(seed, messages)
	})
}

var orderID = regexp.MustCompile(`\bA\d{4}\b`)

// turn is what the model sees since the user's last request.
type turn struct {
	user      string
	prev      string   // the request before user
	confirmed bool     // the user just said yes to the request
	feedback  string   // the guard's feedback on the last answer
	results   []result // tool results since the request
	earlier   []result // tool results of earlier requests
	noSMS     bool     // the request forbids text messages
	moved     string   // the new address the request gives
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

var (
	// smsBan finds a prohibition on text messages.
	smsBan = regexp.MustCompile(`(?i)\b(?:do not|don't|dont|never|no more|stop)\b[^.!?。！？]{0,30}\b(?:texts?|sms|text messages?)\b|不要[^。！？]{0,8}短信|别[^。！？]{0,6}短信`)
	// movedTo finds a new address the user states.
	movedTo = regexp.MustCompile(`(?i)\bmy new address is (?:now )?(.+?)\s*[.!。！]?\s*$|我的新地址是\s*(.+?)\s*[。！]?\s*$`)
	// addressRef is a request that points at an address given earlier.
	addressRef = regexp.MustCompile(`(?i)^(?:my new address|the new address|the address i (?:gave|told) you|我的新地址|新地址)$`)
	// correction replaces the value of the previous request.
	correction = regexp.MustCompile(`(?i)\buse (.+?) instead\b|还是改成\s*(.+?)\s*吧?[。.!！]?$`)
)

func read(messages []llms.MessageContent) turn {
	var t turn
	var requests []string // the user's requests, oldest first
	for _, m := range messages {
		for _, p := range m.Parts {
			switch p := p.(type) {
			case llms.TextContent:
				switch {
				case m.Role != llms.ChatMessageTypeHuman:
				case strings.HasPrefix(p.Text, "[agentguard]"):
					t.feedback = p.Text
				case confirmation.MatchString(p.Text) && len(requests) > 0:
					t = turn{user: requests[len(requests)-1], confirmed: true, earlier: t.earlier}
					if len(requests) > 1 {
						t.prev = requests[len(requests)-2]
					}
				default:
					earlier := append(t.earlier, t.results...)
					t = turn{user: p.Text, earlier: earlier}
					if len(requests) > 0 {
						t.prev = requests[len(requests)-1]
					}
					requests = append(requests, p.Text)
				}
			case llms.ToolCallResponse:
				t.results = append(t.results, result{p.Name, p.Content})
			}
		}
	}
	// What the user stated is read from the request alone: the failure
	// mode of forgetting what was said before.
	t.noSMS = smsBan.MatchString(t.user)
	t.moved = firstGroup(movedTo, t.user)
	return t
}

// firstGroup returns the first non-empty submatch of re in s, or "".
func firstGroup(re *regexp.Regexp, s string) string {
	m := re.FindStringSubmatch(s)
	for i := 1; i < len(m); i++ {
		if m[i] != "" {
			return m[i]
		}
	}
	return ""
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

// sample picks one of n interpretations of text for seed.
func sample(seed uint64, text string, n int) int {
	h := fnv.New64a()
	h.Write([]byte(text))
	return int((h.Sum64() ^ (seed * 0x9E3779B97F4A7C15)) % uint64(n))
}

func reply(seed uint64, messages []llms.MessageContent) (guardtest.Reply, error) {
	t := read(messages)
	id := orderID.FindString(t.user)
	if m := correction.FindStringSubmatch(t.user); m != nil && has(t.prev, "address", "地址") {
		// "Use X instead": the previous request, with the new value.
		return addressFlow(t, orderID.FindString(t.prev), m[1]+m[2])
	}
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
		if id == "" && t.moved != "" {
			return guardtest.Text("Thanks, I have noted your new address. Which order should it apply to?"), nil
		}
		return addressFlow(t, id, "")
	case id != "" && has(t.user, "return", "退货", "退"):
		return returnFlow(t, id)
	case id != "" && has(t.user, "issue", "有问题", "不对劲"):
		// Ambiguous: a problem with the delivery, or with the item?
		if sample(seed, t.user, 2) == 0 {
			return trackFlow(t, id)
		}
		return returnFlow(t, id)
	case has(t.user, "policy", "compensation", "warranty", "refund", "政策", "赔偿", "保修", "退款", "退货", "price protection", "price-match", "guarantee", "价保", "发票", "invoice"):
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

var (
	// clauseClaim is a clause number the user asserts, and confirming is
	// what they ask for.
	clauseClaim = regexp.MustCompile(`(?i)\b(?:clause|section|article)\s*\d+(?:\.\d+)*|第\s*\d+\s*条`)
	leading     = regexp.MustCompile(`(?i)(?:,\s*)?(?:right|isn't it|doesn't it|correct|true)\s*\?\s*$|[，,]?\s*(?:对吧|是不是|对不对|没错吧)\s*[？?]?\s*$`)
)

// topics are the subjects the model reads a question and a document for.
var topics = []string{"compensation", "赔偿", "price", "价保", "invoice", "发票", "warranty", "保修", "return", "退货", "refund", "退款", "shipping", "发货", "address", "地址"}

// onTopic is the model's reading of a retrieved document: it answers the
// question when it is about a subject the question is about, or, for a
// question on no known subject, when its retrieval score is high enough.
func onTopic(question string, d Doc) bool {
	asked := false
	for _, w := range topics {
		if has(question, w) {
			asked = true
			if has(d.Title+" "+d.Text, w) {
				return true
			}
		}
	}
	return !asked && d.Score >= 1.9
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
		return guardtest.Text(invent(t.user, "")), nil
	}
	top := docs[0]
	switch {
	case clauseClaim.MatchString(t.user) && leading.MatchString(t.user) && t.feedback == "":
		// The failure mode: it agrees with the clause the user asserts.
		claim := strings.TrimSpace(leading.ReplaceAllString(t.user, ""))
		if isChinese(t.user) {
			return guardtest.Text(fmt.Sprintf("是的，%s。[%s]", strings.TrimRight(claim, "，,。"), top.ID)), nil
		}
		return guardtest.Text(fmt.Sprintf("Yes, that's right: %s. [%s]", strings.TrimRight(claim, ",. "), top.ID)), nil
	case !onTopic(t.user, top) && t.feedback == "":
		// Off-topic documents: the model answers from what it imagines.
		return guardtest.Text(invent(t.user, top.ID)), nil
	case !onTopic(t.user, top):
		return guardtest.Text("I could not find this in our after-sales rules, so a colleague will get back to you on it."), nil
	case has(t.user, "accidental") && t.feedback == "":
		// The failure mode: a confident detail that no document holds.
		return guardtest.Text(fmt.Sprintf("Per section 4.2 of the warranty, accidental damage is covered once per year. [%s]", top.ID)), nil
	}
	return guardtest.Text(fmt.Sprintf("%s [%s]", top.Text, top.ID)), nil
}

// invent is what the model makes up when no document answers the
// question: a plausible rule with a clause number, citing cite if set.
func invent(question, cite string) string {
	var s string
	switch {
	case has(question, "price", "价保", "guarantee"):
		s = "Yes. Under section 2.4 of our price protection policy, we refund the difference if the price drops within 30 days of purchase."
	case has(question, "发票", "invoice"):
		s = "可以。根据《发票管理规定》第3条，订单签收后30天内可申请开具增值税专用发票。"
	default:
		s = "According to clause 7.3 of our VIP service policy, you are entitled to ¥50 compensation for every day of delay."
	}
	if cite != "" {
		s += " [" + cite + "]"
	}
	return s
}

func isChinese(s string) bool {
	for _, r := range s {
		if r >= 0x4e00 && r <= 0x9fff {
			return true
		}
	}
	return false
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

// addressFlow changes the address of order id to addr, or to the address
// the request names when addr is "".
func addressFlow(t turn, id, addr string) (guardtest.Reply, error) {
	if id == "" {
		return guardtest.Text("Which order should the new address apply to?"), nil
	}
	if addr == "" {
		m := newAddress.FindStringSubmatch(t.user)
		if m == nil {
			return guardtest.Text("What is the new address?"), nil
		}
		addr = m[1]
	}
	o, ok := t.last("query_order")
	if !ok {
		return call("query_order", map[string]string{"order_id": id}), nil
	}
	if addressRef.MatchString(addr) {
		switch a := recentAddress(t, id); {
		case t.moved != "":
			addr = t.moved
		case a != "":
			// The failure mode: the new address the user gave earlier is
			// forgotten, and the model takes the address it last saw.
			addr = a
		default:
			return guardtest.Text("Could you tell me the new address again?"), nil
		}
	}
	u, ok := t.last("update_address")
	if !ok {
		return call("update_address", map[string]string{"order_id": id, "address": addr}), nil
	}
	if blocked(u) || strings.HasPrefix(u, "error:") {
		return guardtest.Text("I could not change the address of " + id + " right now; a colleague will follow up with you."), nil
	}
	done := "Done: order " + id + " will be delivered to " + addr + "."
	if t.noSMS {
		return guardtest.Text(done), nil
	}
	if _, ok := t.last("send_sms"); !ok {
		var order Order
		_ = json.Unmarshal([]byte(o), &order)
		return call("send_sms", map[string]string{"phone": order.Phone, "text": "Your delivery address for " + id + " is now " + addr}), nil
	}
	if t.feedback != "" {
		return guardtest.Text(done), nil // told its claim was false, it drops it
	}
	// The failure mode: it reports the text message as sent, blocked or not.
	return guardtest.Text(done + " I sent you a confirmation by SMS."), nil
}

// recentAddress returns the address of the latest order looked up that is
// not order id, or "".
func recentAddress(t turn, id string) string {
	all := append(append([]result(nil), t.earlier...), t.results...)
	for i := len(all) - 1; i >= 0; i-- {
		var o Order
		if all[i].name == "query_order" && json.Unmarshal([]byte(all[i].content), &o) == nil && o.ID != id && o.Address != "" {
			return o.Address
		}
	}
	return ""
}
