package claims

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/agentguard/agentguard/guard/internal/detect"
	"github.com/agentguard/agentguard/trace/lexicon"
)

// resultSaysFailedDecoded is what resultSaysFailed must return: the
// result decoded into a map of raw values, and each wrapped payload too.
func resultSaysFailedDecoded(rf *lexicon.Results, result string) string {
	s := strings.TrimSpace(result)
	if len(s) < 2 || s[0] != '{' {
		return ""
	}
	var m map[string]json.RawMessage
	if json.Unmarshal([]byte(s), &m) != nil {
		return ""
	}
	if why := objectSaysFailed(rf, decodedFailFields(rf, m)); why != "" {
		return why
	}
	for _, k := range payloadKeys {
		var inner map[string]json.RawMessage
		if raw, ok := m[k]; ok && len(raw) > 0 && raw[0] == '{' && json.Unmarshal(raw, &inner) == nil {
			if why := objectSaysFailed(rf, decodedFailFields(rf, inner)); why != "" {
				return why
			}
		}
	}
	return ""
}

// decodedFailFields decodes the fields of raw failKey picks.
func decodedFailFields(rf *lexicon.Results, raw map[string]json.RawMessage) map[string]any {
	m := make(map[string]any, 4)
	for k, r := range raw {
		if failKey(rf, strings.ToLower(k)) {
			var v any
			if json.Unmarshal(r, &v) == nil {
				m[k] = v
			}
		}
	}
	return m
}

// failTexts are results, failed and not, wrapped and not, in the shapes
// the reader must read as the decoding does.
var failTexts = []string{
	`{"status":"failed","status":"sent"}`,
	`{"status":"sent","status":"failed"}`,
	`{"Status":"Failed","id":"m-1"}`,
	`{"st\u0061tus":"bounced"}`,
	`{"data":{"ok":false},"data":"none"}`,
	`{"data":"none","data":{"ok":false}}`,
	`{"result":{"errcode":40013}}`,
	`{"response":{"accepted":[],"rejected":["张三@例子.中国"]}}`,
	`{"data":{"data":{"ok":false}}}`,
	`{"ok":false} {"ok":true}`,
	`{"ok":false} x`,
	`{"ok":false}  `,
	`{"ok":false,}`,
	`{"error":{"code":"余额不足","detail":[1,2,3]},"amount":12.5}`,
	`{"errors":[],"sent":true}`,
	`{"code":404,"message":"未找到订单"}`,
	`{"items":[{"status":"failed"}],"status":"ok"}`,
	`{"msg":"\xff\xfe","success":0}`,
	`{"result":"FAIL","result":{"ok":false}}`,
	`null`,
	`{}`,
}

func TestResultSaysFailedReadsAsDecoded(t *testing.T) {
	rf := &detect.Default().Results
	for _, s := range failTexts {
		if got, want := resultSaysFailed(rf, s), resultSaysFailedDecoded(rf, s); got != want {
			t.Errorf("resultSaysFailed(%s) = %q; decoding says %q", s, got, want)
		}
	}
}

func FuzzResultSaysFailed(f *testing.F) {
	for _, s := range failTexts {
		f.Add(s)
	}
	rf := &detect.Default().Results
	f.Fuzz(func(t *testing.T, s string) {
		if got, want := resultSaysFailed(rf, s), resultSaysFailedDecoded(rf, s); got != want {
			t.Errorf("resultSaysFailed(%q) = %q; decoding says %q", s, got, want)
		}
	})
}

// BenchmarkResultSaysFailed measures the reader against decoding
// ("decoded"), on a write's successful result.
func BenchmarkResultSaysFailed(b *testing.B) {
	rf := &detect.Default().Results
	result := `{"message_id":"msg-A1002","to":"c-A1002@example.com","status":"sent","queued_at":"2026-12-07T10:00:00Z","data":{"thread":"t-9","labels":["invoice","发票"]}}`
	for _, c := range []struct {
		name string
		fn   func(*lexicon.Results, string) string
	}{{"reader", resultSaysFailed}, {"decoded", resultSaysFailedDecoded}} {
		b.Run(c.name, func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				c.fn(rf, result)
			}
		})
	}
}

// alsoOfFolded is what alsoOf must return: every key looked for in the
// arguments in either case, then the arguments decoded.
func alsoOfFolded(v *vocab, args string) channelSet {
	if len(v.also) == 0 || !strings.HasPrefix(strings.TrimSpace(args), "{") {
		return 0
	}
	maybe := false
	for k := range v.also {
		if containsFold(args, k) {
			maybe = true
		}
	}
	if !maybe {
		return 0
	}
	var m map[string]json.RawMessage
	if json.Unmarshal([]byte(args), &m) != nil {
		return 0
	}
	var set channelSet
	for k := range m {
		set |= v.also[strings.ToLower(k)]
	}
	return set
}

func FuzzAlsoOf(f *testing.F) {
	for _, s := range []string{
		`{"reservation_id":"ZFA04Y","payment_id":"credit_card_7815826"}`,
		`{"Payment_Method_ID":"gift_card_1"}`,
		`{"order_id":"#W2378156","payment_method":"paypal_3"}`,
		`{"备注":"payment_id 在这里","金额":12}`,
		`{"pAyment_id":1}`, `{"amount":10}`, `[]`,
	} {
		f.Add(s)
	}
	v := vocabOf(detect.Default())
	f.Fuzz(func(t *testing.T, args string) {
		if got, want := v.alsoOf(args), alsoOfFolded(v, args); got != want {
			t.Errorf("alsoOf(%q) = %b; matched in either case, %b", args, got, want)
		}
	})
}
