package guard

import (
	"fmt"
	"regexp"
	"strings"

	"github.com/agentguard/agentguard/guard/internal/detect"
	"github.com/agentguard/agentguard/trace"
)

// RuleFalseClaim names findings about answers that claim an action that
// did not happen.
const RuleFalseClaim = "false-claim"

// claimWords are how an answer says a write verb's action is done, in
// English and Chinese.
var claimWords = map[string]string{
	"send":     `sent|已(经)?发送|发送了|已发`,
	"update":   `updated|changed|已(经)?(修改|更新|更改)|改好了`,
	"change":   `changed|updated|已(经)?(修改|更改)`,
	"modify":   `modified|changed|updated|已(经)?(修改|更改)`,
	"cancel":   `cancell?ed|已(经)?取消`,
	"submit":   `submitted|filed|已(经)?提交`,
	"book":     `booked|reserved|已(经)?(预订|预定)`,
	"reserve":  `reserved|booked|已(经)?(预订|预定)`,
	"transfer": `transferred|已(经)?转(账|给)`,
	"pay":      `paid|已(经)?支付|已付`,
	"refund":   `refunded|已(经)?退款`,
	"delete":   `deleted|removed|已(经)?删除`,
	"remove":   `removed|deleted|已(经)?(移除|删除)`,
	"create":   `created|已(经)?创建`,
	"schedule": `scheduled|已(经)?(安排|预约)`,
	"return":   `returned|已(经)?退货`,
	"issue":    `issued|已(经)?(发放|开具)`,
}

var (
	claimPatterns = func() map[string]*regexp.Regexp {
		m := make(map[string]*regexp.Regexp, len(claimWords))
		for verb, words := range claimWords {
			alts := strings.Split(words, "|")
			for i, w := range alts {
				if w != "" && w[0] < 0x80 {
					alts[i] = `\b` + w + `\b` // English words stand alone; Chinese has no spaces
				}
			}
			m[verb] = regexp.MustCompile(`(?i)` + strings.Join(alts, "|"))
		}
		return m
	}()
	negated  = regexp.MustCompile(`(?i)\b(not|n't|never|unable|could not|failed|instead of)\b|未|没有|无法|不能|失败`)
	sentence = regexp.MustCompile(`[^.!?。！？\n]+`)
)

// FalseClaims flags a final answer that claims an action whose call did not
// happen in this turn — "I sent you a confirmation by SMS" after send_sms
// was blocked or failed, with no later successful call of that tool. The
// verdict is Retry: the agent is asked to answer truthfully.
func FalseClaims(tools ToolPolicies) Rule {
	return NewRule(RuleFalseClaim, func(t *trace.Trace, s *trace.Step) []trace.Finding {
		if s.Kind != trace.KindModel || len(s.Calls) > 0 || s.Result == "" || s.Blocked || s.Intent != "" {
			return nil
		}
		failed := map[string]*trace.Step{} // tool name -> last failed call
		for _, p := range sameTurn(t, s.Turn) {
			if p.Kind != trace.KindTool || !stateChanging(p.Name, tools[p.Name]) {
				continue
			}
			if p.Blocked || p.Error != "" {
				failed[p.Name] = p
			} else {
				delete(failed, p.Name)
			}
		}
		var out []trace.Finding
		for name, p := range failed {
			re := claimPatterns[detect.VerbOf(name)]
			if re == nil {
				continue
			}
			for _, sent := range sentence.FindAllString(s.Result, -1) {
				if re.MatchString(sent) && !negated.MatchString(sent) {
					what := "was blocked"
					if !p.Blocked {
						what = "failed"
					}
					out = append(out, trace.Finding{
						Rule: RuleFalseClaim, Step: s.Index, Verdict: trace.Retry, Dimension: trace.Accuracy, Severity: trace.SeverityError,
						Message:  fmt.Sprintf("the answer claims %q happened, but the call %s", name, what),
						Evidence: strings.TrimSpace(sent), Tags: []string{"false-claim"},
					})
					break
				}
			}
		}
		return out
	})
}
