package shop

import (
	"context"
	"encoding/json"
	"fmt"
	"sync"

	"github.com/agentguard/agentguard/guard/guardtest"
	"github.com/tmc/langchaingo/tools"
)

// Order is a row of the demo shop's order table.
type Order struct {
	ID         string `json:"order_id"`
	Customer   string `json:"customer"`
	Item       string `json:"item"`
	Status     string `json:"status"` // pending, shipped, delivered
	TrackingNo string `json:"tracking_no,omitempty"`
	Address    string `json:"address"`
	Phone      string `json:"phone"`
}

// Shop is the demo shop's state: orders, returns and sent messages. Its
// tools are safe for concurrent use.
type Shop struct {
	mu      sync.Mutex
	orders  map[string]*Order
	Returns []string
	SMS     []string
}

// New returns a shop with a few fixed orders.
func New() *Shop {
	s := &Shop{orders: map[string]*Order{}}
	for _, o := range []Order{
		{ID: "A1001", Customer: "Li Lei", Item: "Noise-cancelling headphones", Status: "shipped", TrackingNo: "SF1001", Address: "1 Century Ave, Shanghai", Phone: "+86 138 0000 1001"},
		{ID: "A1002", Customer: "Han Meimei", Item: "电热水壶", Status: "pending", Address: "北京市朝阳区建国路 88 号", Phone: "+86 139 0000 1002"},
		{ID: "A1003", Customer: "Zhang Wei", Item: "USB-C charger", Status: "delivered", TrackingNo: "SF1003", Address: "9 Nanjing Rd, Shanghai", Phone: "+86 137 0000 1003"},
		{ID: "A1004", Customer: "Wang Fang", Item: "Smart watch", Status: "shipped", TrackingNo: "SF404", Address: "3 Tianfu Sq, Chengdu", Phone: "+86 136 0000 1004"},
		{ID: "A1005", Customer: "Chen Jie", Item: "Bluetooth speaker", Status: "shipped", TrackingNo: "SF0000", Address: "5 Xihu Rd, Hangzhou", Phone: "+86 135 0000 1005"},
		{ID: "A1006", Customer: "Olivia Chen", Item: "Desk lamp", Status: "pending", Address: "12 Oak Street, Springfield", Phone: "+1 555 010 1006"},
		{ID: "A1007", Customer: "赵磊", Item: "蓝牙耳机", Status: "delivered", TrackingNo: "SF1007", Address: "广州市天河区体育西路 1 号", Phone: "+86 133 0000 1007"},
	} {
		s.orders[o.ID] = &o
	}
	return s
}

func obj(props map[string]any, required ...string) map[string]any {
	return map[string]any{"type": "object", "properties": props, "required": required}
}

var str = map[string]any{"type": "string"}

// Tools returns the six tools the demo agent is given.
func (s *Shop) Tools() []tools.Tool {
	return []tools.Tool{
		guardtest.NewTool("query_order", "Look up an order by its id.", s.queryOrder).
			WithParameters(obj(map[string]any{"order_id": str}, "order_id")),
		guardtest.NewTool("logistics", "Track a parcel by tracking number.", s.logistics).
			WithParameters(obj(map[string]any{"tracking_no": str}, "tracking_no")),
		guardtest.NewTool("search_kb", "Search the after-sales knowledge base.", searchKB).
			WithParameters(obj(map[string]any{"query": str}, "query")),
		guardtest.NewTool("submit_return", "Submit a return for a delivered order.", s.submitReturn).
			WithParameters(obj(map[string]any{"order_id": str, "reason": map[string]any{"type": "string", "enum": []string{"defective", "wrong_item", "no_longer_needed"}}}, "order_id", "reason")),
		guardtest.NewTool("update_address", "Change the delivery address of a pending order.", s.updateAddress).
			WithParameters(obj(map[string]any{"order_id": str, "address": str}, "order_id", "address")),
		guardtest.NewTool("send_sms", "Send a text message to a phone number.", s.sendSMS).
			WithParameters(obj(map[string]any{"phone": str, "text": str}, "phone", "text")),
	}
}

func args(input string) (map[string]string, error) {
	var m map[string]string
	if err := json.Unmarshal([]byte(input), &m); err != nil {
		return nil, fmt.Errorf("bad arguments: %v", err)
	}
	return m, nil
}

func (s *Shop) queryOrder(_ context.Context, input string) (string, error) {
	a, err := args(input)
	if err != nil {
		return "", err
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	o, ok := s.orders[a["order_id"]]
	if !ok {
		return "[]", nil // the order system answers "no rows", not an error
	}
	b, _ := json.Marshal(o)
	return string(b), nil
}

func (s *Shop) logistics(_ context.Context, input string) (string, error) {
	a, err := args(input)
	if err != nil {
		return "", err
	}
	switch a["tracking_no"] {
	case "SF0000":
		var scans []string
		return scans[3], nil // a bug in the carrier client: the guard recovers the panic
	case "SF404":
		return `{"tracking_no":"SF404","status":"in transit","last_scan":"no new scan in 48h"}`, nil
	case "":
		return "", fmt.Errorf("tracking_no is empty")
	}
	return fmt.Sprintf(`{"tracking_no":%q,"status":"out for delivery","last_scan":"Shanghai hub, 08:12"}`, a["tracking_no"]), nil
}

func searchKB(_ context.Context, input string) (string, error) {
	a, err := args(input)
	if err != nil {
		return "", err
	}
	b, _ := json.Marshal(Search(a["query"], 3))
	if string(b) == "null" {
		return "[]", nil
	}
	return string(b), nil
}

// withOrder decodes a tool's arguments and runs fn on the order they name,
// under the shop's lock.
func (s *Shop) withOrder(input string, fn func(o *Order, a map[string]string) (string, error)) (string, error) {
	a, err := args(input)
	if err != nil {
		return "", err
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	o, ok := s.orders[a["order_id"]]
	if !ok {
		return "", fmt.Errorf("order %q not found", a["order_id"])
	}
	return fn(o, a)
}

func (s *Shop) submitReturn(_ context.Context, input string) (string, error) {
	return s.withOrder(input, func(o *Order, _ map[string]string) (string, error) {
		if o.Status != "delivered" {
			return "", fmt.Errorf("order %s is %s, not delivered", o.ID, o.Status)
		}
		s.Returns = append(s.Returns, o.ID)
		return fmt.Sprintf(`{"return_id":"R-%s","status":"submitted"}`, o.ID), nil
	})
}

func (s *Shop) updateAddress(_ context.Context, input string) (string, error) {
	return s.withOrder(input, func(o *Order, a map[string]string) (string, error) {
		if o.Status != "pending" {
			return "", fmt.Errorf("order %s has shipped; the address cannot change", o.ID)
		}
		o.Address = a["address"]
		return fmt.Sprintf(`{"order_id":%q,"address":%q}`, o.ID, o.Address), nil
	})
}

func (s *Shop) sendSMS(_ context.Context, input string) (string, error) {
	a, err := args(input)
	if err != nil {
		return "", err
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	s.SMS = append(s.SMS, a["phone"]+": "+a["text"])
	return `{"sent":true}`, nil
}
