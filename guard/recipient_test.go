package guard_test

import (
	"fmt"
	"slices"
	"strings"
	"testing"

	"github.com/agentguard/agentguard/guard"
	"github.com/agentguard/agentguard/guard/rules"
	"github.com/agentguard/agentguard/trace"
)

// TestRecipientRequiredOnSends quotes seed 003's parameter rule,
// "recipient required on sends", for tools the guard has no schema for: a
// send whose arguments cannot name whom it goes to is a warning — recorded
// and scored, never interrupting, since a notification to the user
// themselves needs no recipient. A schema, when there is one, says what is
// required instead. On the corpus no legitimate send is flagged (TestPrecision).
func TestRecipientRequiredOnSends(t *testing.T) {
	for _, tt := range []struct {
		name, tool, args string
		schema           string
		want             bool
	}{
		{name: "e-mail with subject and body only", tool: "send_email", args: `{"subject":"Your invoice","body":"Attached."}`, want: true},
		{name: "text with the message only, zh", tool: "send_sms", args: `{"text":"您的取件码是 4471"}`, want: true},
		{name: "recipient given", tool: "send_email", args: `{"to":"sam@example.com","subject":"Invoice","body":"Attached."}`},
		{name: "a channel names whom", tool: "send_channel_message", args: `{"channel":"general","body":"Standup moved to 10."}`},
		{name: "a user names whom", tool: "send_direct_message", args: `{"recipient":"Alice","body":"Hi"}`},
		{name: "recipient empty", tool: "send_email", args: `{"to":"","subject":"Invoice","body":"Attached."}`, want: true},
		{name: "a read of e-mails", tool: "search_emails", args: `{"query":"invoice"}`},
		{name: "not a send", tool: "update_address", args: `{"address":"9 Lake Road"}`},
		{name: "the schema decides", tool: "send_email", args: `{"subject":"Invoice","body":"Attached."}`,
			schema: `{"type":"object","properties":{"subject":{"type":"string"},"body":{"type":"string"}}}`},
	} {
		t.Run(tt.name, func(t *testing.T) {
			tr := &trace.Trace{ID: "t", UserTurns: []string{"Please send it."}}
			if tt.schema != "" {
				tr.Tools = []trace.ToolSpec{{Name: tt.tool, Parameters: []byte(tt.schema)}}
			}
			tr.Steps = []*trace.Step{
				{Index: 0, Kind: trace.KindModel, Calls: []trace.Call{{ID: "c1", Name: tt.tool, Args: tt.args}}},
				{Index: 1, Kind: trace.KindTool, Name: tt.tool, CallID: "c1", Args: tt.args, Result: `{"ok":true}`},
			}
			var got []trace.Finding
			for _, f := range guard.New(guard.Config{}).Evaluate(tr).Findings {
				if f.Rule == rules.Arguments {
					got = append(got, f)
				}
			}
			if !tt.want {
				if len(got) > 0 {
					t.Fatalf("found %q, want nothing", got[0].Message)
				}
				return
			}
			if len(got) != 1 {
				t.Fatalf("found %d tool-arguments findings, want one warning", len(got))
			}
			f := got[0]
			if f.Verdict != trace.Allow || f.Severity != trace.SeverityWarning || !slices.Contains(f.Tags, "no-recipient") || f.Step != 1 || len(f.Facts) == 0 {
				t.Errorf("got %+v, want a warning on step 1 tagged no-recipient with the call as its fact", f)
			}
		})
	}
}

// TestFindingsNameTheInputMessage: a finding on an imported trace says
// which message of the user's own log it is about, besides the step.
func TestFindingsNameTheInputMessage(t *testing.T) {
	log := `{"id":"c","messages":[{"role":"system","content":"Be brief."},{"role":"user","content":"Mail me the invoice."},` +
		`{"role":"assistant","tool_calls":[{"id":"a","type":"function","function":{"name":"send_email","arguments":"{\"subject\":\"Invoice\",\"body\":\"Attached.\"}"}}]},` +
		`{"role":"tool","tool_call_id":"a","content":"sent"},{"role":"assistant","content":"Done."}]}`
	for tr, err := range trace.ImportOpenAI(strings.NewReader(log), "chat.jsonl") {
		if err != nil {
			t.Fatal(err)
		}
		var got []string
		for _, f := range guard.New(guard.Config{}).Evaluate(tr).Findings {
			got = append(got, fmt.Sprintf("%s step %d %s", f.Rule, f.Step, f.Source))
		}
		if want := []string{"tool-arguments step 1 message 2"}; !slices.Equal(got, want) {
			t.Errorf("findings %q, want %q", got, want)
		}
	}
}
