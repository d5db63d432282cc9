package claims

import (
	"slices"
	"testing"

	"github.com/agentguard/agentguard/guard/internal/detect"
	"github.com/agentguard/agentguard/guard/internal/rulekit"
	"github.com/agentguard/agentguard/trace"
)

func TestResultSaysFailed(t *testing.T) {
	for _, tc := range []struct {
		result, want string
	}{
		{`{"accepted":false,"reason":"block list"}`, `"accepted": false`},
		{`{"code":1,"msg":"上限","sent":0}`, `"sent": 0`},
		{`{"status":"bounced","detail":"550"}`, `"status": "bounced"`},
		{`{"success":false,"error_msg":"too big"}`, `"success": false`},
		{`{"refund_id":null,"state":"rejected"}`, `"state": "rejected"`},
		{`{"result":"FAIL","message":"expired"}`, `"result": "FAIL"`},
		{`{"ok":false,"msg":"已出库"}`, `"ok": false`},
		{`{"error":{"code":"invalid_number"}}`, `"error": {"code":"invalid_number"}`},
		{`{"errcode":40013,"errmsg":"invalid"}`, `"errcode": 40013`},
		{`{"accepted":[],"rejected":["a@b.example"]}`, `"rejected": ["a@b.example"]`},
		{`{"data":{"status":"failed"}}`, `"status": "failed"`},
		// Success, and anything that is not a JSON object.
		{`{"sid":"SM1","status":"queued"}`, ""},
		{`{"code":0,"msg":"OK"}`, ""},
		{`{"errcode":0,"errmsg":"ok"}`, ""},
		{`{"code":200}`, ""},
		{`{"accepted":["a@b.example"],"rejected":[]}`, ""},
		{`{"refund_id":"re_1","status":"pending"}`, ""},
		{`{"order_id":"1","status":"cancelled"}`, ""},
		{`{"error":null,"status":"SUCCESS"}`, ""},
		{`Error: message not sent`, ""},
		{`[{"status":"failed"}]`, ""},
		{``, ""},
	} {
		if got := resultSaysFailed(&detect.Default().Results, tc.result); got != tc.want {
			t.Errorf("resultSaysFailed(%s) = %q, want %q", tc.result, got, tc.want)
		}
	}
}

func TestToolProfile(t *testing.T) {
	ch := func(names ...string) channelSet {
		var set channelSet
		for _, n := range names {
			for i, c := range vocabOf(detect.Default()).channels {
				if c.Name == n {
					set |= channelSet(1) << i
				}
			}
		}
		return set
	}
	for _, tc := range []struct {
		name, desc, params string
		want               channelSet
	}{
		{"send_sms", "", "", ch("sms")},
		{"sendSMS", "", "", ch("sms")},
		{"send-email", "", "", ch("email")},
		{"place_call", "", "", ch("call")},
		{"push_notification", "", "", ch("push")},
		{"issue_refund", "", "", ch("refund")},
		{"issue_reimbursement", "", "", ch("refund")},
		{"cancel_order", "", "", ch("cancel")},
		{"cancel_reservation", "", "", ch("cancel")}, // a cancellation, not a booking
		{"update_address", "", "", ch("address")},    // an address, not any update
		{"delete_address", "", "", ch("delete")},
		{"book_visit", "", "", ch("booking")},
		{"pay_bill", "", "", ch("payment")},
		{"transfer", "", "", ch("payment")},
		// The description, then the argument keys, when the name says nothing.
		{"notify_customer", "", "", ch("push")},
		{"contact_customer", "Send the customer an e-mail.", "", ch("email")},
		{"contact_customer", "给客户发短信", "", ch("sms")},
		{"reach_out", "", `{"properties":{"phone":{},"body":{}}}`, ch("sms")},
		{"reach_out", "", `{"properties":{"email":{},"body":{}}}`, ch("email")},
		{"frobnicate", "", "", 0},
	} {
		if got := vocabOf(detect.Default()).profileOf(tc.name, tc.desc, []byte(tc.params)).channels; got != tc.want {
			t.Errorf("profileOf(%q, %q) = %b, want %b", tc.name, tc.desc, got, tc.want)
		}
	}
}

// TestUnhappened pins the facts: which effects did not happen, after
// retries, fallbacks, several objects, turns, proposals and look-ups.
func TestUnhappened(t *testing.T) {
	plain := New(rulekit.NewTools(detect.Default(), nil))
	withPolicy := New(rulekit.NewTools(detect.Default(), map[string]rulekit.Tool{"place_call": {Writes: true}}))
	tool := func(turn int, name, args, result, err string) *trace.Step {
		return &trace.Step{Kind: trace.KindTool, Turn: turn, Name: name, Args: args, Result: result, Error: err}
	}
	for _, tc := range []struct {
		name  string
		tools []string
		steps []*trace.Step
		want  []string // tool and outcome of each effect that did not happen
	}{
		{"a failure", nil, []*trace.Step{tool(0, "send_sms", `{"to":"+1 415 555 0134"}`, "", "503")}, []string{"send_sms failed"}},
		{"retried", nil, []*trace.Step{
			tool(0, "send_sms", `{"to":"+1 415 555 0134"}`, "", "503"),
			tool(0, "send_sms", `{"to":"+14155550134"}`, `{"status":"queued"}`, ""),
		}, nil},
		{"another tool of the channel", nil, []*trace.Step{
			tool(0, "send_sms", `{"to":"+14155550134"}`, "", "503"),
			tool(0, "send_text", `{"phone":"4155550134"}`, `{"ok":true}`, ""),
		}, nil},
		{"another channel", nil, []*trace.Step{
			tool(0, "send_sms", `{"to":"+14155550134"}`, "", "503"),
			tool(0, "send_email", `{"to":"sam@x.example"}`, `{"status":"accepted"}`, ""),
		}, []string{"send_sms failed"}},
		{"another order", nil, []*trace.Step{
			tool(0, "issue_refund", `{"order_id":"71150"}`, "", "declined"),
			tool(0, "issue_refund", `{"order_id":"71151"}`, `{"status":"succeeded"}`, ""),
		}, []string{"issue_refund failed"}},
		{"succeeded, then failed a turn later", nil, []*trace.Step{
			tool(0, "send_sms", `{"phone":"13500009999"}`, `{"status":"queued"}`, ""),
			tool(1, "send_sms", `{"phone":"13500009999"}`, "", "rate limited"),
		}, []string{"send_sms failed"}},
		{"failed, then succeeded a turn later", nil, []*trace.Step{
			tool(0, "send_sms", `{"phone":"13500009999"}`, "", "rate limited"),
			tool(1, "send_sms", `{"phone":"13500009999"}`, `{"status":"queued"}`, ""),
		}, nil},
		{"rejected in its result", nil, []*trace.Step{tool(0, "cancel_order", `{"order_id":"1"}`, `{"ok":false}`, "")}, []string{"cancel_order result"}},
		{"blocked", nil, []*trace.Step{{Kind: trace.KindTool, Name: "update_address", Blocked: true, Result: "[agentguard] call blocked"}}, []string{"update_address blocked"}},
		{"a read is no effect", nil, []*trace.Step{tool(0, "get_order", `{"order_id":"1"}`, "", "503")}, nil},
		{"proposed, never ran", nil, []*trace.Step{{Kind: trace.KindModel, Calls: []trace.Call{{ID: "c1", Name: "issue_refund", Args: `{"order_id":"1"}`}}}}, []string{"issue_refund proposed"}},
		{"proposed, then ran", nil, []*trace.Step{
			{Kind: trace.KindModel, Calls: []trace.Call{{ID: "c1", Name: "issue_refund", Args: `{"order_id":"1"}`}}},
			{Kind: trace.KindTool, Name: "issue_refund", CallID: "c1", Args: `{"order_id":"1"}`, Result: `{"status":"succeeded"}`},
		}, nil},
		{"offered, never called", []string{"get_order", "send_sms"}, nil, []string{"send_sms never"}},
		{"named by the policy only", []string{"policy"}, nil, []string{"place_call never"}},
		{"a look-up reports it done", []string{"cancel_order"}, []*trace.Step{tool(0, "get_order", `{"order_id":"1"}`, `{"status":"cancelled_by_airline"}`, "")}, nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			tr := &trace.Trace{UserTurns: []string{"a", "b"}}
			r := plain
			for _, n := range tc.tools {
				if n == "policy" {
					r = withPolicy
					continue
				}
				tr.Tools = append(tr.Tools, trace.ToolSpec{Name: n})
			}
			for i, s := range tc.steps {
				s.Index = i
				tr.Steps = append(tr.Steps, s)
			}
			missed, _, _ := r.unhappened(tr, 1)
			var got []string
			for _, e := range missed {
				got = append(got, e.tool+" "+[]string{"happened", "failed", "blocked", "result", "proposed", "never"}[e.outcome])
			}
			if len(got) != len(tc.want) {
				t.Fatalf("got %q, want %q", got, tc.want)
			}
			for i := range got {
				if got[i] != tc.want[i] {
					t.Errorf("got %q, want %q", got, tc.want)
				}
			}
		})
	}
}

// TestUnhappenedOfferedAgain checks that the channels of the offered tools,
// kept in the trace's memo, follow a new set of tools offered later, also
// one with the same name twice (the first spec counts).
func TestUnhappenedOfferedAgain(t *testing.T) {
	r := New(rulekit.NewTools(detect.Default(), nil))
	tr := &trace.Trace{UserTurns: []string{"a"}}
	never := func() []string {
		missed, _, _ := r.unhappened(tr, 0)
		var got []string
		for _, e := range missed {
			got = append(got, e.tool)
		}
		return got
	}
	for _, tc := range []struct {
		tools []trace.ToolSpec
		want  []string
	}{
		{[]trace.ToolSpec{{Name: "get_order"}, {Name: "send_sms"}}, []string{"send_sms"}},
		{[]trace.ToolSpec{{Name: "get_order"}, {Name: "send_email"}}, []string{"send_email"}},
		{[]trace.ToolSpec{{Name: "send_message", Description: "Sends an e-mail to the customer."}, {Name: "send_message", Description: "Sends a text message (SMS)."}}, []string{"send_message"}},
		{nil, nil},
	} {
		tr.Tools = tc.tools
		if got := never(); !slices.Equal(got, tc.want) {
			t.Errorf("offered %v: never called %q, want %q", tc.tools, got, tc.want)
		}
	}
}

// TestFactsMemo checks that facts derived for one prefix are reused for a
// longer one and that a shorter prefix is derived again correctly.
func TestFactsMemo(t *testing.T) {
	r := New(rulekit.NewTools(detect.Default(), nil))
	tr := &trace.Trace{}
	for i := range 100 {
		s := &trace.Step{Index: i, Kind: trace.KindTool, Name: "send_sms", Args: `{"to":"+14155550134"}`, Result: `{"status":"queued"}`}
		if i == 50 {
			s.Result, s.Error = "", "503"
			s.Args = `{"to":"+14155550199"}`
		}
		tr.Steps = append(tr.Steps, s)
	}
	view := tr.Prefix(len(tr.Steps))
	long := r.facts(view.Prefix(100))
	short := r.facts(view.Prefix(51))
	early := r.facts(view.Prefix(50))
	if len(long.last) != 2 || len(short.last) != 2 || len(early.last) != 1 {
		t.Errorf("effects: %d after 100 steps, %d after 51, %d after 50; want 2, 2, 1", len(long.last), len(short.last), len(early.last))
	}
	if again := r.facts(view.Prefix(100)); again != long {
		t.Error("facts for the same prefix were derived again")
	}
}

// TestPolicyChannel checks that a tool's channel in its policy is what the
// rule reads, over what its name suggests.
func TestPolicyChannel(t *testing.T) {
	r := New(rulekit.NewTools(detect.Default(), map[string]rulekit.Tool{"notify_customer": {Writes: true, Channel: "sms"}}))
	sms, _ := r.v.channelProfile("sms")
	if got := r.profile(&trace.Trace{}, "notify_customer"); got != sms {
		t.Errorf("notify_customer: %b, want the sms channel %b", got.channels, sms.channels)
	}
}
