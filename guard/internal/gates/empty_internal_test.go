package gates

import (
	"strings"
	"testing"

	"github.com/agentguard/agentguard/guard/internal/detect"
	"github.com/agentguard/agentguard/guard/internal/rulekit"
	"github.com/agentguard/agentguard/trace"
)

func toolStep(name, args, result string) *trace.Step {
	return &trace.Step{Kind: trace.KindTool, Name: name, Args: args, Result: result}
}

func answerStep(text string) *trace.Step {
	return &trace.Step{Kind: trace.KindModel, Result: text}
}

// TestEmptyResultJudgesWhatRestsOnTheAbsence: an empty lookup is judged
// only where a step takes the absence as a fact — asserts it, speaks of
// the missing thing as found, or acts on it — and never when another
// result shows the thing exists, when the step creates it, or when the
// step goes on without it.
func TestEmptyResultJudgesWhatRestsOnTheAbsence(t *testing.T) {
	tests := []struct {
		name  string
		turn  string
		steps []*trace.Step // the last is judged
		tag   string        // "" for no finding
	}{
		{"acting on the order the lookup did not find", "Cancel order A9999.", []*trace.Step{
			toolStep("query_order", `{"order_id":"A9999"}`, ""), toolStep("cancel_order", `{"order_id":"A9999"}`, "")}, "write-after-empty"},
		{"取消查不到的订单", "帮我取消订单 A9999。", []*trace.Step{
			toolStep("query_order", `{"order_id":"A9999"}`, "无结果"), toolStep("cancel_order", `{"order_id":"A9999"}`, "")}, "write-after-empty"},
		{"speaking of the missing order as found", "Where is A9?", []*trace.Step{
			toolStep("query_order", `{"order_id":"A9"}`, "null"), answerStep("A9 ships tomorrow.")}, "answer-after-empty"},
		{"说查不到的订单明天发货", "A9 在哪？", []*trace.Step{
			toolStep("query_order", `{"order_id":"A9"}`, "null"), answerStep("订单A9明天发货。")}, "answer-after-empty"},
		{"asserting absence of what the user named", "Where are my orders? My id is u-17.", []*trace.Step{
			toolStep("list_orders", `{"user_id":"u-17"}`, "[]"), answerStep("You have no orders.")}, "asserted-absence"},
		{"断言没有记录", "查一下用户 u-17 的订单", []*trace.Step{
			toolStep("list_orders", `{"user_id":"u-17"}`, "[]"), answerStep("没有符合条件的记录。")}, "asserted-absence"},
		{"the channel exists: it just has no messages", "Add Alice to general and tell me what was said there.", []*trace.Step{
			toolStep("get_channels", `{}`, `["general","random"]`), toolStep("read_channel_messages", `{"channel":"general"}`, "[]"),
			toolStep("add_user_to_channel", `{"user":"Alice","channel":"general"}`, "")}, ""},
		{"an empty channel reported as empty", "What was said in general?", []*trace.Step{
			toolStep("get_channels", `{}`, `["general","random"]`), toolStep("read_channel_messages", `{"channel":"general"}`, "[]"),
			answerStep("There are no messages in general.")}, ""},
		{"creating the file a search did not find", "Make a file plan.docx with my plan.", []*trace.Step{
			toolStep("search_files", `{"filename":"plan.docx"}`, "[]"), toolStep("create_file", `{"filename":"plan.docx","content":"plan"}`, "")}, ""},
		{"a write that does not use the missing key", "Message Bob that the channel is quiet.", []*trace.Step{
			toolStep("read_channel_messages", `{"channel":"quiet-room"}`, "[]"), toolStep("send_direct_message", `{"recipient":"Bob","body":"all quiet"}`, "")}, ""},
		{"an answer about something else", "Where is A9?", []*trace.Step{
			toolStep("query_order", `{"order_id":"A9"}`, ""), answerStep("Our returns window is 30 days.")}, ""},
		{"asking the user", "Where is A9?", []*trace.Step{
			toolStep("query_order", `{"order_id":"A9"}`, ""), answerStep("I found nothing for A9 — could you check the number?")}, ""},
		{"a thought is no key", "Was my flight cancelled?", []*trace.Step{
			toolStep("think", `{"thought":"I checked all reservations of the user and none shows a cancellation by the airline."}`, ""),
			answerStep("I could not find any cancellation by the airline.")}, ""},
		{"a key that is a prefix of another word", "Where is A9?", []*trace.Step{
			toolStep("query_order", `{"order_id":"A9"}`, ""), answerStep("Order A90 has shipped.")}, ""},
	}
	tools := rulekit.NewTools(detect.Default(), nil)
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			tr := &trace.Trace{ID: "t", UserTurns: []string{tt.turn}}
			for i, s := range tt.steps {
				s.Index = i
				tr.Steps = append(tr.Steps, s)
			}
			r := NewEmptyResult(tools, "")
			last := tt.steps[len(tt.steps)-1]
			got := r.Check(tr.Prefix(len(tr.Steps)-1), last)
			switch {
			case tt.tag == "" && len(got) > 0:
				t.Errorf("finding %+v, want none", got[0])
			case tt.tag != "" && len(got) == 0:
				t.Errorf("no finding, want %s", tt.tag)
			case tt.tag != "":
				f := got[0]
				if f.Tags[len(f.Tags)-1] != tt.tag || f.Verdict != trace.Clarify || f.Question == "" {
					t.Errorf("finding %+v, want tag %s, a clarifying question", f, tt.tag)
				}
				if len(f.Facts) != 3 || f.Facts[0].Kind != trace.FactResult || f.Facts[1].Kind != trace.FactAbsent {
					t.Errorf("facts %+v, want the empty result, the missing key and what rests on it", f.Facts)
				}
				if strings.Contains(tt.turn, "帮") || strings.Contains(tt.turn, "查") || strings.Contains(tt.turn, "在哪") {
					if !strings.ContainsAny(f.Question, "请您") {
						t.Errorf("question %q is not in the user's language", f.Question)
					}
				}
			}
		})
	}
}
