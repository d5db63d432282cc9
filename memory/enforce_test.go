package memory

import (
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/agentguard/agentguard/trace"
	"github.com/tmc/langchaingo/llms"
)

// throughTurn returns the messages up to and including user turn k.
func throughTurn(messages []llms.MessageContent, k int) []llms.MessageContent {
	n := -1
	for i, m := range messages {
		if m.Role == llms.ChatMessageTypeHuman {
			n++
			if n == k {
				return messages[: i+1 : i+1]
			}
		}
	}
	return messages
}

func TestSMS26Turns(t *testing.T) {
	const budget = 800
	ex := smsConversation()
	if len(ex) < 26 {
		t.Fatalf("the conversation has %d user turns, want at least 26", len(ex))
	}
	r := simulate(t, "sms-26", ex, budget)
	const prohibition = "不要自动给我发短信通知"

	t.Run("the prohibition is on the card from turn 6", func(t *testing.T) {
		var got []Constraint
		for _, c := range r.card.Active() {
			if c.Kind == KindProhibition {
				got = append(got, c)
			}
		}
		want := []Constraint{{Kind: KindProhibition, Key: "sms", Value: "不要自动给我发短信通知", Turn: 6, Status: Active, Source: SourceRule}}
		if !slices.Equal(got, want) {
			t.Errorf("prohibitions = %+v, want %+v", got, want)
		}
	})

	t.Run("naive compression at turn 9 drops the prohibition", func(t *testing.T) {
		at9 := r.lastCall(9).input
		if !containsText(at9, prohibition) {
			t.Fatal("turn 6 is not in the conversation at turn 9")
		}
		naive, rep := Compress(at9, 300, nil) // no card: nothing is pinned, and at 300 tokens user turns go too
		if len(rep.Dropped) == 0 {
			t.Fatalf("nothing dropped at turn 9 under budget %d (%d tokens): the budget is not small", budget, rep.TokensBefore)
		}
		if containsText(naive, prohibition) {
			t.Errorf("without the card, compression kept turn 6; the test no longer shows the failure: %+v", rep)
		}
	})

	t.Run("compression with the card keeps it and injects the card", func(t *testing.T) {
		c := r.lastCall(9)
		if len(c.report.Dropped) == 0 {
			t.Fatalf("report at turn 9 = %+v, want dropped messages", c.report)
		}
		if !containsText(c.sent, prohibition) {
			t.Errorf("turn 6 was dropped at turn 9: %+v", c.report)
		}
		sys := texts(c.sent)[0]
		if !strings.Contains(sys, "- prohibition sms: "+prohibition+" (turn 6)") {
			t.Errorf("system message at turn 9 = %q, want the SMS prohibition", sys)
		}
	})

	t.Run("every model call is valid and within budget", func(t *testing.T) {
		for _, c := range r.calls {
			if err := checkPairs(c.sent); err != nil {
				t.Errorf("turn %d: %v", c.turn, err)
			}
			if c.report.OverBudget || c.report.TokensAfter > budget {
				t.Errorf("turn %d: %d tokens after compression, budget %d (over budget: %v)", c.turn, c.report.TokensAfter, budget, c.report.OverBudget)
			}
			if c.turn >= 6 && !containsText(c.sent, "prohibition sms") {
				t.Errorf("turn %d: the card does not carry the prohibition", c.turn)
			}
		}
	})

	t.Run("the enforcer stops send_sms in turn 24", func(t *testing.T) {
		if len(r.online) != 1 {
			t.Fatalf("online findings = %v, want one", rules(r.online))
		}
		f := r.online[0]
		tr := r.rec.Trace()
		s := tr.Steps[f.Step]
		if s.Name != "send_sms" || s.Turn != 24 || !s.Blocked {
			t.Errorf("finding on step %+v, want the blocked send_sms of turn 24", s)
		}
		if f.Rule != RuleProhibition || f.Verdict != trace.Block || f.Dimension != trace.Memory || f.Severity != trace.SeverityError {
			t.Errorf("finding = %+v", f)
		}
		if want := "send_sms would contact the user by sms, which the user prohibited in turn 6: \"" + prohibition + "\""; f.Message != want {
			t.Errorf("message = %q, want %q", f.Message, want)
		}
	})

	t.Run("offline evaluation finds the same", func(t *testing.T) {
		got := evaluate(r.rec.Trace())
		if !slices.EqualFunc(got, r.online, findingsEqual) {
			t.Errorf("offline = %v, online = %v", rules(got), rules(r.online))
		}
	})

	t.Run("an imported log without card steps finds the same", func(t *testing.T) {
		tr := withoutMemorySteps(r.rec.Trace())
		got := evaluate(tr)
		if len(got) != 1 || got[0].Message != r.online[0].Message || tr.Steps[got[0].Step].Name != "send_sms" {
			t.Errorf("offline over the imported log = %+v, want the send_sms prohibition", got)
		}
	})
}

func findingsEqual(a, b trace.Finding) bool {
	return a.Rule == b.Rule && a.Step == b.Step && a.Message == b.Message && a.Verdict == b.Verdict
}

func TestAddressConversation(t *testing.T) {
	r := simulate(t, "address", addressConversation(), 0)
	tr := r.rec.Trace()
	var got []string
	for _, f := range r.online {
		s := tr.Steps[f.Step]
		got = append(got, f.Rule+" "+s.Name+" turn "+strconv.Itoa(s.Turn))
	}
	want := []string{
		"memory-prohibition send_sms turn 4",
		"memory-stale-address update_address turn 6", // the old address; the new one passes
		"memory-stale-address submit_return turn 7",
		"memory-time-range schedule_delivery turn 9",
		// turn 10: send_sms after "texting is fine now" passes
	}
	if !slices.Equal(got, want) {
		t.Errorf("findings =\n%s\nwant\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
	if off := evaluate(tr); !slices.EqualFunc(off, r.online, findingsEqual) {
		t.Errorf("offline = %v, online = %v", rules(off), rules(r.online))
	}
	for _, f := range r.online {
		if f.Rule == RuleStaleAddress && f.Message != `update_address uses address "12 Oak Street, Springfield", which the user replaced in turn 5 by "48 Pine Avenue, Shelbyville"` &&
			f.Message != `submit_return uses address "12 Oak Street, Springfield", which the user replaced in turn 5 by "48 Pine Avenue, Shelbyville"` {
			t.Errorf("stale-address message = %q", f.Message)
		}
	}
}

func TestEnforcer(t *testing.T) {
	type check struct {
		tool, args string
		want       string // "rule: message fragment", "" for no finding
	}
	tests := []struct {
		name   string
		turns  []string
		checks []check
	}{
		{"sms prohibited in Chinese", []string{"你好", "不要自动给我发短信通知"}, []check{
			{"send_sms", `{"phone":"13900001002","text":"hi"}`, `memory-prohibition: prohibited in turn 1: "不要自动给我发短信通知"`},
			{"sendSMS", `{}`, "memory-prohibition: by sms"},
			{"send_email", `{"to":"a@b.c"}`, ""},
			{"query_order", `{"order_id":"A1001"}`, ""},
		}},
		{"sms prohibition lifted in Chinese", []string{"别给我发短信", "现在可以发短信了"}, []check{
			{"send_sms", `{"text":"hi"}`, ""},
		}},
		{"sms prohibition lifted in English", []string{"Please don't text me.", "Actually, SMS is fine now."}, []check{
			{"send_sms", `{"text":"hi"}`, ""},
		}},
		{"prohibited again after lifting", []string{"Don't text me.", "Texting is fine now.", "Stop texting me!"}, []check{
			{"send_sms", `{"text":"hi"}`, "memory-prohibition: prohibited in turn 2"},
		}},
		{"channel from the arguments", []string{"No emails, please."}, []check{
			{"notify_customer", `{"channel":"email","body":"hi"}`, "memory-prohibition: by email"},
			{"notify_customer", `{"channel":"sms","body":"hi"}`, ""},
		}},
		{"contact covers every channel", []string{"请不要打扰我"}, []check{
			{"call_customer", `{"phone":"1"}`, "memory-prohibition: by call"},
			{"send_email", `{}`, "memory-prohibition: by email"},
		}},
		{"a prohibition with a window", []string{"No calls before 9am."}, []check{
			{"call_customer", `{"time":"08:30"}`, "memory-prohibition: at 08:30, and the user prohibited call before 09:00 in turn 0"},
			{"call_customer", `{"time":"2025-06-02T10:00:00+08:00"}`, ""},
			{"call_customer", `{"phone":"1"}`, ""}, // no time: nothing to judge
		}},
		{"address superseded", []string{"My address is 12 Oak Street, Springfield.", "My address is now 48 Pine Avenue, Shelbyville."}, []check{
			{"update_address", `{"order_id":"A1004","address":"12 Oak Street, Springfield"}`, `memory-stale-address: which the user replaced in turn 1 by "48 Pine Avenue, Shelbyville"`},
			{"update_address", `{"address":"12 Oak St"}`, "memory-stale-address: replaced in turn 1"},
			{"update_address", `{"order_id":"A1004","address":"48 Pine Avenue, Shelbyville"}`, ""},
			{"update_address", `{"address":"48 Pine Ave., Shelbyville"}`, ""},
			{"submit_return", `{"order":{"pickup_address":"9 Elm Road, Ogdenville"}}`, `memory-stale-address: is not the user's current delivery address "48 Pine Avenue, Shelbyville" (stated in turn 1)`},
			{"update_profile", `{"email_address":"a@b.c"}`, ""},
			{"modify_user_address", `{"address1":"48 Pine Avenue","address2":"Suite 394","city":"Shelbyville"}`, ""}, // the second line is no address of its own
			{"modify_user_address", `{"address_line_2":"Apt 5"}`, ""},
		}},
		{"address superseded in Chinese", []string{"我的地址是北京市朝阳区建国路88号", "地址改成上海市浦东新区世纪大道100号"}, []check{
			{"update_address", `{"地址":"北京市朝阳区建国路88号"}`, "memory-stale-address: replaced in turn 1"},
			{"update_address", `{"delivery_address":"上海市浦东新区世纪大道100号"}`, ""},
		}},
		{"no address on the card", []string{"hello"}, []check{
			{"update_address", `{"address":"1 Main St"}`, ""},
		}},
		{"delivery window", []string{"Deliver between 1 and 5 June please."}, []check{
			{"schedule_delivery", `{"date":"2025-06-09"}`, "memory-time-range: schedule_delivery for 2025-06-09 is outside the delivery window 06-01..06-05 the user gave in turn 0"},
			{"schedule_delivery", `{"date":"2025-06-03"}`, ""},
			{"reschedule", `{"when":"June 7"}`, "memory-time-range: outside the delivery window"},
			{"send_sms", `{"date":"2025-06-09"}`, ""}, // not a delivery
		}},
		{"delivery window in Chinese", []string{"6月1日到6月5日之间送货"}, []check{
			{"update_order", `{"delivery_date":"6月7日"}`, "memory-time-range: 6月7日"},
			{"update_order", `{"delivery_date":"6月5日"}`, ""},
		}},
		{"away: deliveries prohibited", []string{"I'm away from June 10 to June 14, so don't deliver then."}, []check{
			{"schedule_delivery", `{"date":"June 12"}`, "memory-prohibition: schedule_delivery is a delivery at June 12"},
			{"schedule_delivery", `{"date":"June 15"}`, ""},
		}},
		{"raw string arguments", []string{"不要打电话"}, []check{
			{"call_customer", `13900001002`, "memory-prohibition: by call"},
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			tr := &trace.Trace{ID: tt.name, UserTurns: tt.turns}
			for _, c := range tt.checks {
				s := &trace.Step{Index: 0, Kind: trace.KindTool, Name: c.tool, Args: c.args, Turn: len(tt.turns) - 1}
				got := (Enforcer{}).Check(tr, s)
				for _, f := range got {
					if len(f.Facts) < 2 || f.Facts[len(f.Facts)-1].Kind != trace.FactCard && f.Facts[1].Kind != trace.FactCard {
						t.Errorf("%s %s: facts %+v, want the call and the card's constraint", c.tool, c.args, f.Facts)
					}
				}
				if c.want == "" {
					if len(got) != 0 {
						t.Errorf("%s %s: findings %+v, want none", c.tool, c.args, got)
					}
					continue
				}
				rule, frag, _ := strings.Cut(c.want, ": ")
				if len(got) != 1 || got[0].Rule != rule || !strings.Contains(got[0].Message, frag) {
					t.Errorf("%s %s: findings %+v, want one %s with %q", c.tool, c.args, got, rule, frag)
					continue
				}
				want := trace.Block
				if rule == RuleStaleAddress {
					// An address that is not the card's asks the user which, naming both.
					want = trace.Clarify
					if got[0].Question == "" {
						t.Errorf("%s: no question", c.tool)
					}
				}
				if got[0].Verdict != want || got[0].Dimension != trace.Memory || got[0].Evidence != c.args {
					t.Errorf("%s: finding %+v", c.tool, got[0])
				}
			}
		})
	}
}

func TestEnforcerCard(t *testing.T) {
	sms := Constraint{Kind: KindProhibition, Key: "sms", Value: "no SMS", Turn: 0, Status: Active, Source: SourceModel}
	send := &trace.Step{Index: 3, Kind: trace.KindTool, Name: "send_sms", Turn: 1}
	tests := []struct {
		name  string
		trace *trace.Trace
		want  int
	}{
		{"card steps are the card", &trace.Trace{UserTurns: []string{"hi", "ok"}, Steps: []*trace.Step{
			CardStep(0, []Constraint{sms}), CardStep(1, nil)}}, 1},
		{"card steps override the user turns", &trace.Trace{UserTurns: []string{"don't text me", "ok"}, Steps: []*trace.Step{
			CardStep(0, nil), CardStep(1, nil)}}, 0},
		{"a later revocation step lifts it", &trace.Trace{UserTurns: []string{"a", "b"}, Steps: []*trace.Step{
			CardStep(0, []Constraint{sms}), CardStep(1, []Constraint{{Kind: KindProhibition, Key: "sms", Turn: 1, Status: Revoked}})}}, 0},
		{"an undecodable step is skipped", &trace.Trace{UserTurns: []string{"a"}, Steps: []*trace.Step{
			CardStep(0, []Constraint{sms}), {Kind: trace.KindMemory, Name: StepCard, Turn: 0, Result: `[{"kind":"prohibition","key":"sms","turn":0,"status":"revoked"}…[truncated]`, Truncated: true}}}, 1},
		{"a step with an invalid constraint is skipped", &trace.Trace{UserTurns: []string{"a"}, Steps: []*trace.Step{
			CardStep(0, []Constraint{sms}), {Kind: trace.KindMemory, Name: StepCard, Turn: 0, Result: `[{"kind":"prohibition","key":"sms","turn":0,"status":"revoked"},{"kind":"mood","key":"x","turn":0,"status":"active"}]`}}}, 1},
		{"a constraint stated after the step does not count", &trace.Trace{UserTurns: []string{"hello", "hi", "don't text me"}}, 0},
		{"user turns up to the step's turn count", &trace.Trace{UserTurns: []string{"hello", "don't text me", "bye"}}, 1},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			for i, s := range tt.trace.Steps {
				s.Index = i
			}
			if got := (Enforcer{}).Check(tt.trace, send); len(got) != tt.want {
				t.Errorf("findings = %+v, want %d", got, tt.want)
			}
		})
	}
}

func TestEnforcerChannels(t *testing.T) {
	tr := &trace.Trace{UserTurns: []string{"不要给我发邮件"}}
	s := &trace.Step{Kind: trace.KindTool, Name: "notify", Args: `{"to":"me"}`}
	if got := (Enforcer{}).Check(tr, s); len(got) != 0 {
		t.Errorf("without Channels: %+v, want none", got)
	}
	e := Enforcer{Channels: map[string]string{"notify": "email"}}
	if got := e.Check(tr, s); len(got) != 1 || got[0].Rule != RuleProhibition {
		t.Errorf("with Channels: %+v, want a prohibition", got)
	}
}

func TestEnforcerSkipsOtherStepsWithoutAllocating(t *testing.T) {
	tr := &trace.Trace{UserTurns: []string{"don't text me"}, Steps: []*trace.Step{CardStep(0, []Constraint{{Kind: KindProhibition, Key: "sms", Status: Active}})}}
	s := &trace.Step{Kind: trace.KindModel, Calls: []trace.Call{{Name: "send_sms"}}}
	var got []trace.Finding
	if n := testing.AllocsPerRun(100, func() { got = (Enforcer{}).Check(tr, s) }); n != 0 || got != nil {
		t.Errorf("model step: %v findings, %v allocations; want none", got, n)
	}
}

func FuzzCheck(f *testing.F) {
	f.Add("不要自动给我发短信通知", `[{"kind":"prohibition","key":"sms","value":"x","turn":0,"status":"active"}]`, "send_sms", `{"phone":"1"}`)
	f.Add("My address is now 48 Pine Avenue.", `[]`, "update_address", `{"address":"12 Oak St","date":"2025-06-09T10:00:00+08:00"}`)
	f.Add("Deliver between 1 and 5 June.", `[{"kind":"time_range","key":"delivery","value":"12-28..01-03","turn":0,"status":"active"}]`, "schedule_delivery", `{"date":["June 7",{"time":"25:99"}]}`)
	f.Add("", `[{"kind":"address","key":"delivery","value":"","turn":0,"status":"active"}]`, "", `"raw"`)
	f.Fuzz(func(t *testing.T, turn, cardStep, tool, args string) {
		for _, tr := range []*trace.Trace{
			{UserTurns: []string{turn}},
			{UserTurns: []string{turn}, Steps: []*trace.Step{{Kind: trace.KindMemory, Name: StepCard, Result: cardStep}}},
		} {
			s := &trace.Step{Index: len(tr.Steps), Kind: trace.KindTool, Name: tool, Args: args}
			for _, f := range (Enforcer{}).Check(tr, s) {
				want := trace.Block
				if f.Rule == RuleStaleAddress {
					want = trace.Clarify
				}
				if f.Verdict != want || f.Dimension != trace.Memory || f.Message == "" || f.Step != s.Index || (want == trace.Clarify && f.Question == "") {
					t.Errorf("finding %+v", f)
				}
			}
		}
	})
}

// TestEnforcerAsksWhichAddress: a write to an address that is not the
// card's current one asks the user, naming both, in the user's language;
// an address the user added beside the first is no mismatch.
func TestEnforcerAsksWhichAddress(t *testing.T) {
	for _, tc := range []struct {
		turns []string
		args  string
		want  []string // in the question; none: no finding
	}{
		{[]string{"My address is 12 Oak Street, Springfield.", "Oh and the delivery spot is different now — 221 Baker Street, London NW1 6XE."},
			`{"address":"12 Oak Street, Springfield"}`, []string{"12 Oak Street, Springfield", "221 Baker Street, London NW1 6XE", "Should I use"}},
		{[]string{"我的收货地址是北京市朝阳区建国路88号。", "地址得换，我搬家了，以后寄广州市天河区体育西路 8 号"},
			`{"address":"北京市朝阳区建国路88号"}`, []string{"北京市朝阳区建国路88号", "广州市天河区体育西路 8 号", "请确认"}},
		{[]string{"My address is 12 Oak Street, Springfield.", "Also send a second copy to my office at 400 Market Street, Springfield."},
			`{"address":"400 Market Street, Springfield"}`, nil},
		{[]string{"My address is 12 Oak Street, Springfield.", "Also send a second copy to my office at 400 Market Street, Springfield."},
			`{"address":"12 Oak Street, Springfield"}`, nil},
	} {
		tr := &trace.Trace{UserTurns: tc.turns}
		got := (Enforcer{}).Check(tr, &trace.Step{Kind: trace.KindTool, Name: "update_address", Args: tc.args, Turn: len(tc.turns) - 1})
		if tc.want == nil {
			if len(got) != 0 {
				t.Errorf("%s: findings %+v, want none", tc.args, got)
			}
			continue
		}
		if len(got) != 1 || got[0].Verdict != trace.Clarify || got[0].Rule != RuleStaleAddress {
			t.Errorf("%s: findings %+v, want one clarify", tc.args, got)
			continue
		}
		for _, w := range tc.want {
			if !strings.Contains(got[0].Question, w) {
				t.Errorf("question %q does not hold %q", got[0].Question, w)
			}
		}
	}
}

// TestEnforcerChannelOfATool: a ban reaches a tool by its declared
// channel, a channel word of its name, or its description.
func TestEnforcerChannelOfATool(t *testing.T) {
	for _, tc := range []struct {
		turn, tool, desc string
		channels         map[string]string
		blocked          bool
	}{
		{"消息推送那些就不必了", "send_push", "", nil, true},
		{"消息推送那些就不必了", "notify_user", "Sends a push notification to the user's phone.", nil, true},
		{"消息推送那些就不必了", "notify_user", "Writes a note on the order.", nil, false},
		{"SMS isn't an option for me, my work phone blocks them.", "notify_user", "", map[string]string{"notify_user": "sms"}, true},
		{"SMS isn't an option for me, my work phone blocks them.", "notify_user", "Sends a text message.", nil, true},
		{"I'd rather you didn't phone me.", "schedule_callback", "", nil, true},
		{"I'd rather you didn't phone me.", "send_email", "", nil, false},
	} {
		tr := &trace.Trace{UserTurns: []string{tc.turn}, Tools: []trace.ToolSpec{{Name: tc.tool, Description: tc.desc}}}
		got := (Enforcer{Channels: tc.channels}).Check(tr, &trace.Step{Kind: trace.KindTool, Name: tc.tool, Args: `{"text":"Your order shipped"}`})
		if blocked := len(got) == 1 && got[0].Rule == RuleProhibition && got[0].Verdict == trace.Block; blocked != tc.blocked {
			t.Errorf("%q then %s (%q): findings %+v, want blocked %v", tc.turn, tc.tool, tc.desc, got, tc.blocked)
		}
	}
}

// TestEnforcerNarrowedBan: "calls are fine after 6pm" lifts the ban and
// leaves the window: a call inside it runs, one outside is blocked; "a
// short call tomorrow is fine after all" lifts it.
func TestEnforcerNarrowedBan(t *testing.T) {
	for _, tc := range []struct {
		turns   []string
		args    string
		blocked bool
	}{
		{[]string{"Please don't call me."}, `{"time":"19:00"}`, true},
		{[]string{"Please don't call me.", "Calls are fine after 6pm."}, `{"time":"19:00"}`, false},
		{[]string{"Please don't call me.", "Calls are fine after 6pm."}, `{"time":"10:00"}`, true},
		{[]string{"Please don't call me.", "a short call tomorrow is fine after all"}, `{"time":"10:00"}`, false},
		{[]string{"别给我打电话。", "下午3点以后可以打电话。"}, `{"time":"2025-06-09 16:00"}`, false},
		{[]string{"别给我打电话。", "下午3点以后可以打电话。"}, `{"time":"2025-06-09 09:00"}`, true},
	} {
		tr := &trace.Trace{UserTurns: tc.turns}
		got := (Enforcer{}).Check(tr, &trace.Step{Kind: trace.KindTool, Name: "call_customer", Args: tc.args, Turn: len(tc.turns) - 1})
		if blocked := len(got) > 0; blocked != tc.blocked {
			t.Errorf("%q, call at %s: findings %+v, want blocked %v", tc.turns, tc.args, got, tc.blocked)
		}
	}
}
