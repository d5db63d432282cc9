package authz

import (
	"testing"

	"github.com/agentguard/agentguard/guard/internal/detect"
	"github.com/agentguard/agentguard/guard/internal/rulekit"
	"github.com/agentguard/agentguard/trace"
)

// conversation returns a trace of the user's turns, the agent answering
// each but the last, and a call of tool in the last turn.
func conversation(tool, args string, turns ...string) (*trace.Trace, *trace.Step) {
	t := &trace.Trace{ID: "t", UserTurns: turns}
	for i := range turns[:len(turns)-1] {
		t.Steps = append(t.Steps, &trace.Step{Index: len(t.Steps), Kind: trace.KindModel, Turn: i, Result: "Shall I go ahead? / 要继续吗？"})
	}
	s := trace.Step{Index: len(t.Steps), Kind: trace.KindTool, Turn: len(turns) - 1, Name: tool, Args: args}
	return t, &s
}

func TestAuthorization(t *testing.T) {
	tests := []struct {
		name       string
		autonomous bool
		tool       string
		turns      []string
		blocked    bool
	}{
		{"a request names the action", false, "cancel_order", []string{"Please cancel order A1001."}, false},
		{"a question about the action is not a request", false, "cancel_order", []string{"Can I still cancel order A1001?"}, true},
		{"a request in Chinese", false, "cancel_order", []string{"帮我取消订单 A1001。"}, false},
		{"a question in Chinese", false, "cancel_order", []string{"订单 A1001 还能取消吗？"}, true},
		{"a yes after the agent proposed it", false, "cancel_order", []string{"Can I still cancel order A1001?", "Yes, please go ahead."}, false},
		{"是的, after the agent proposed it", false, "cancel_order", []string{"订单 A1001 还能取消吗？", "是的，请继续。"}, false},
		{"a summary asked, a delete made", false, "delete_file", []string{"Summarise the files in my drive."}, true},
		{"a write that can be undone needs no request", false, "update_address", []string{"Where is order A1001?"}, false},
		{"the task names the write", true, "reserve_hotel", []string{"Book a room at the Riverside hotel for Friday."}, false},
		{"the task names another write", true, "reserve_hotel", []string{"Summarise my inbox."}, true},
		{"任务提到了酒店", true, "reserve_hotel", []string{"帮我预订周五河畔酒店的房间。"}, false},
	}
	tools := rulekit.NewTools(detect.Default(), nil)
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := NewAuthorization(tools, tt.autonomous)
			tr, s := conversation(tt.tool, `{"id":"A1001"}`, tt.turns...)
			if !r.JudgesTool(tt.tool, tools.Of(tt.tool)) {
				t.Fatalf("%s is not judged: the lexicon does not read it as a write", tt.tool)
			}
			r.Index(tr)
			got := r.Check(tr, s)
			if blocked := len(got) > 0 && got[0].Verdict == trace.Block; blocked != tt.blocked {
				t.Errorf("turns %q, call %s: findings %+v, want blocked %v", tt.turns, tt.tool, got, tt.blocked)
			}
			for _, f := range got {
				if f.Evidence == "" || f.Message == "" {
					t.Errorf("finding without message or evidence: %+v", f)
				}
			}
		})
	}
}

func TestConfirmation(t *testing.T) {
	tests := []struct {
		name  string
		turns []string
		asked bool // Clarify: the user is asked to confirm
	}{
		{"no yes yet", []string{"Change my address to 5 Elm St."}, true},
		{"a yes after the agent spoke", []string{"Change my address to 5 Elm St.", "Yes, go ahead."}, false},
		{"确认, after the agent spoke", []string{"把地址改成榆树街5号。", "确认"}, false},
		{"a no after the agent spoke", []string{"Change my address to 5 Elm St.", "No, wait."}, true},
	}
	tools := rulekit.NewTools(detect.Default(), map[string]rulekit.Tool{"update_address": {Writes: true, Confirm: true}})
	r := NewConfirmation(tools, false)
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			tr, s := conversation("update_address", `{"address":"5 Elm St."}`, tt.turns...)
			got := r.Check(tr, s)
			if asked := len(got) > 0 && got[0].Verdict == trace.Clarify; asked != tt.asked {
				t.Errorf("turns %q: findings %+v, want asked %v", tt.turns, got, tt.asked)
			}
			if len(got) > 0 && got[0].Question == "" {
				t.Errorf("a Clarify without the question to ask: %+v", got[0])
			}
		})
	}
	if NewConfirmation(tools, false).JudgesTool("get_order", tools.Of("get_order")) {
		t.Error("a read is judged for confirmation")
	}
}
