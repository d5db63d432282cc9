package origins

import (
	"slices"
	"testing"

	"github.com/agentguard/agentguard/guard/internal/rulekit"
	"github.com/agentguard/agentguard/memory"
	"github.com/agentguard/agentguard/trace"
	"github.com/agentguard/agentguard/trace/lexicon"
)

// TestCardStepGivesItsValues holds that a card step is indexed as the
// values of its constraints — what the user gave — and not as the JSON
// around them: an argument that is one of the card's own words (a state,
// a kind, a key, a turn number) is not traced to the user. A card step
// that does not decode still gives what it holds.
func TestCardStepGivesItsValues(t *testing.T) {
	cs := []memory.Constraint{
		{Kind: memory.KindAddress, Key: "delivery", Value: "上海市南京东路 100 号", Turn: 3, Status: memory.Active, Source: memory.SourceRule},
		{Kind: memory.KindEmail, Key: "email", Value: "li.wei@example.cn", Turn: 3, Status: memory.Active, Source: memory.SourceRule},
		{Kind: memory.KindProhibition, Key: "sms", Turn: 3, Status: memory.Active, Source: memory.SourceRule},
	}
	tools := rulekit.NewTools(lexicon.Default().Compiled(), nil)
	turns := []string{"你好", "查一下订单", "谢谢", "以后寄到新地址，邮件发 li.wei@example.cn，别发短信", "号码是 +86 138 0013 8000"}
	fromTheCard := func(step *trace.Step, v string) bool {
		ix := indexOf(&trace.Trace{UserTurns: turns, Steps: []*trace.Step{step}}, tools)
		return slices.ContainsFunc(ix.lookup(v), func(o int32) bool { return ix.origins[o].kind == fromCard })
	}
	card := memory.CardStep(3, cs)
	for _, v := range []string{"上海市南京东路 100 号", "li.wei@example.cn"} {
		if !fromTheCard(card, v) {
			t.Errorf("%q: not traced to the card", v)
		}
	}
	for _, v := range []string{"active", "delivery", "address", "prohibition", "sms", "rule", "status", "3"} {
		if fromTheCard(card, v) {
			t.Errorf("%q, a word of the card's own, is traced to the card", v)
		}
	}
	truncated := memory.CardStep(4, []memory.Constraint{{Kind: memory.KindPhone, Key: "mobile", Value: "+8613800138000", Turn: 4, Status: memory.Active, Source: memory.SourceRule}})
	truncated.Result = truncated.Result[:len(truncated.Result)-20]
	if !fromTheCard(truncated, "+8613800138000") {
		t.Errorf("%q: a truncated card step does not give it", "+8613800138000")
	}
}
