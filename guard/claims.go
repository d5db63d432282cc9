package guard

import (
	"fmt"
	"math/bits"
	"regexp"
	"slices"
	"strings"
	"unicode"
	"unicode/utf8"

	"github.com/agentguard/agentguard/trace"
)

// RuleFalseClaim names findings about answers that claim an action that
// did not happen.
const RuleFalseClaim = "false-claim"

// FalseClaims flags a final answer that tells the user an action happened
// when the trace shows it did not. It judges by facts, not by wording:
//
//   - The effects that did not happen come from the trace's structure (see
//     effects.go): a state-changing call (tools says which, or the verb its
//     name starts with) that failed (Step.Error), was blocked, returned a
//     JSON result saying it did not happen ({"accepted":false},
//     "status":"bounced"), was proposed by the model and never ran, or, for
//     a tool the agent was offered (Trace.Tools) or tools names, was never
//     called. A later call on the same channel that happened — a retry,
//     another tool — makes it happen.
//   - What a claim of such an effect looks like comes from the tool itself:
//     its channels (text message, e-mail, phone call, notification,
//     refund, cancellation, address change, ...) are read from its name,
//     then its description, then its argument keys, and an answer claims a
//     channel when one clause names it with a completion marker ("I've
//     texted you", "you'll get an e-mail shortly", "退款已原路退回",
//     "短信发过去了"), not negated ("couldn't", "没", "失败") and not an
//     offer, question, attempt or condition ("shall I text you?",
//     "要不要我发短信"). The words are data: claimVocabulary.
//
// The verdict is Retry: the agent is asked to answer truthfully. The rule
// reads only the trace before the answer, so it finds the same online and
// offline; what it derives from the steps is kept in the trace's memo, so
// judging an answer does not cost more as the trace grows.
func FalseClaims(tools ToolPolicies) Rule {
	r := &falseClaims{tools: tools, profiles: make(map[string]toolProfile, len(tools))}
	for name, tp := range tools {
		r.named = append(r.named, name)
		r.profiles[name] = profileOf(name, "", nil)
		if p, ok := channelProfile(tp.Channel); ok {
			r.profiles[name] = p // the policy says, over what the name suggests
		}
	}
	slices.Sort(r.named)
	return r
}

type falseClaims struct {
	tools    ToolPolicies
	named    []string               // the policy's tool names, sorted
	profiles map[string]toolProfile // their channels, by name alone
}

func (r *falseClaims) Name() string { return RuleFalseClaim }

func (r *falseClaims) Check(t *trace.Trace, s *trace.Step) []trace.Finding {
	if s.Kind != trace.KindModel || len(s.Calls) > 0 || s.Result == "" || s.Blocked || s.Intent != "" {
		return nil
	}
	missed, now, ever := r.unhappened(t, s.Turn)
	if len(missed) == 0 {
		return nil // the common case: nothing to contradict, the answer is not read
	}
	if ch, ok := neverCalledOnly(missed); ok && !mayClaim(s.Result, ch) {
		// A tool never called is contradicted only by a clause that
		// claims its channel by a term: an answer with no such term
		// anywhere need not be read clause by clause.
		return nil
	}
	claims := readClaims(s.Result)
	if len(claims) == 0 {
		return nil
	}
	var out []trace.Finding
	var reported []string
	for _, e := range missed {
		if slices.Contains(reported, e.tool) {
			continue
		}
		for _, c := range claims {
			if !c.contradicts(e, s.Turn, now, ever) {
				continue
			}
			reported = append(reported, e.tool)
			out = append(out, trace.Finding{
				Rule: RuleFalseClaim, Step: s.Index, Verdict: trace.Retry, Dimension: trace.Accuracy, Severity: trace.SeverityError,
				Message:  fmt.Sprintf("the answer claims %q happened, but %s", e.tool, e.what()),
				Evidence: clip(c.sentence, maxEvidence), Tags: []string{"false-claim"},
			})
			break
		}
	}
	return out
}

// neverCalledOnly returns the channels of missed when every effect in it
// is a tool never called.
func neverCalledOnly(missed []effect) (channelSet, bool) {
	var ch channelSet
	for _, e := range missed {
		if e.outcome != neverCalled {
			return 0, false
		}
		ch |= e.channels
	}
	return ch, true
}

// mayClaim reports whether answer holds a term that claims one of
// channels (a noun or a did word of claimVocabulary): what every claim
// contradicting a tool never called has. A term in a clause of the answer
// is a term of the whole answer normalised, so no claim is missed.
func mayClaim(answer string, channels channelSet) bool {
	found := false
	claimIndex.each(normaliseAnswer(answer), func(k, _, _ int) bool {
		t := claimTerms[k]
		found = (t.kind == kindNoun || t.kind == kindDid) && t.chans&channels != 0
		return !found
	})
	return found
}

// maxEvidence bounds a finding's evidence, in bytes.
const maxEvidence = 300

// clip cuts s to at most n bytes at a rune boundary, marking the cut.
func clip(s string, n int) string {
	if len(s) <= n {
		return s
	}
	for n > 0 && !utf8.RuneStart(s[n]) {
		n--
	}
	return s[:n] + "…"
}

// what says how an effect did not happen, for a finding's message.
func (e effect) what() string {
	switch e.outcome {
	case failed:
		return "the call failed: " + e.reason
	case blocked:
		if e.reason != "" {
			return "the call was blocked: " + e.reason
		}
		return "the call was blocked"
	case resultFailed:
		return "its result says it did not: " + e.reason
	case notRun:
		return "the call was proposed and never ran"
	default:
		return "it was never called"
	}
}

// claim is one clause of an answer that says something happened.
type claim struct {
	sentence string // the sentence it is in, as written: the evidence
	clause   string // the clause, normalised
	// terms holds, for each term of the clause that claims a channel
	// ("texted", "短信…已发送"), the channels it claims: more than one for
	// a word several channels share ("message", "手机").
	terms []channelSet
	sent  bool // "sent it to you", and no messaging channel named
	bare  bool // "Done." and no channel named
	// done is set when the clause holds a completion marker; ownDone holds
	// the channels whose own markers it holds ("will now go to"). With the
	// recipient or address of a call named, either makes a claim of it.
	done    bool
	ownDone channelSet
	// personal is set when the clause speaks to the user or for the agent
	// (claimLexicon.Person).
	personal bool
}

// contradicts reports whether c claims effect e, which did not happen, in
// an answer in turn. now and ever are the channels some effect reached in
// this turn and in the whole trace.
func (c claim) contradicts(e effect, turn int, now, ever channelSet) bool {
	reached := ever
	if e.outcome != neverCalled && e.turn == turn {
		reached = now // next to a failure in this turn, a claim is about this turn
	}
	for _, ch := range c.terms {
		switch {
		case ch&e.channels == 0:
		case e.outcome == neverCalled && (bits.OnesCount32(uint32(ch)) > 1 || !c.personal || pastFact(c.clause)):
			// "a message": not enough to say which tool was never called;
			// "refunds take 14 days": a policy, not a claim; "your order
			// was paid by gift card": a fact about the past, not an action
			// of this conversation
		case ch&reached == 0 || mentionsTarget(c.clause, e.targets):
			// No effect of the claimed channel happened, or the clause names
			// what this one acted on.
			return true
		}
	}
	if e.outcome == neverCalled {
		return false
	}
	// "The notes are on their way to team-atlas", "your parcel will now go
	// to 22 Baker Lane": the clause names where the call was to take effect.
	if (c.done || c.ownDone&e.channels != 0) && mentionsTarget(c.clause, e.dest) {
		return true
	}
	if e.turn != turn {
		return false
	}
	switch {
	case c.sent && e.channels&messaging != 0:
		return now&messaging == 0
	case c.bare && len(c.terms) == 0:
		return now == 0
	}
	return false
}

// mentionsTarget reports whether a clause names one of a call's targets
// (normalised as by normTarget): the order id, the phone number, the
// e-mail address or its local part, the start of a postal address.
func mentionsTarget(clause string, targets []string) bool {
	if len(targets) == 0 {
		return false
	}
	norm := normTarget(clause)
	for _, tg := range targets {
		if strings.Contains(norm, tg) {
			return true
		}
	}
	return false
}

// channelSet is a set of claimVocabulary.Channels, by index.
type channelSet uint32

// messaging is the set of channels that carry a message to someone;
// absentChannels those that may be claimed when no call was made.
var messaging, absentChannels channelSet

// claimWords are the words of one kind in English and Chinese. English
// words match whole words, case-insensitively, and a trailing * any
// ending; Chinese words match anywhere.
type claimWords struct{ En, Zh []string }

// claimChannel is one kind of effect a tool can have and how an answer
// names it.
type claimChannel struct {
	Name string
	// Rank decides between channels a tool's name gives: the highest wins
	// (cancel_reservation is a cancellation, update_address an address
	// change).
	Rank int
	// Messaging channels carry a message: "sent it to you" claims them.
	Messaging bool
	// Absent channels are claimed falsely when no tool of theirs was called
	// at all, though one was offered or named by the policy. Channels
	// whose state answers often read back from a look-up ("your
	// appointment is booked", "the address is …") are not.
	Absent bool
	// Tool are stems of the words of a tool's name or description that
	// give the channel: "sms" in send_sms, "reimburs" in issue_reimbursement.
	Tool []string
	// Keys are argument keys that give the channel when name and
	// description do not.
	Keys []string
	// Noun names the channel in an answer; with a completion marker it is
	// a claim.
	Noun claimWords
	// Did says on its own that the effect happened: "texted", "refunded".
	Did claimWords
	// Verb are Chinese verbs that, with 了 or 过, complete a Noun: 发 in
	// "发了短信".
	Verb claimWords
	// Done, when set, replaces the general completion markers for this
	// channel: an address is claimed by "updated", not by "has been".
	Done claimWords
}

// claimLexicon is the language data of the false-claim rule.
type claimLexicon struct {
	Channels []claimChannel
	// Done are completion markers: with a channel's Noun in one clause, a
	// claim that the effect happened.
	Done claimWords
	// Weak are Chinese completion particles (了, 过) that make a claim only
	// next to a verb of the channel, or right after its Noun (退款了).
	Weak claimWords
	// Place are Chinese locative particles that may stand between a Noun
	// and a Weak particle: 邮箱里了, 手机上了.
	Place claimWords
	// Sent claims a message went out without naming how: a claim of the
	// turn's messages.
	Sent claimWords
	// Bare says it is done with no object ("Done!", "搞定"), in a short
	// clause: a claim of the turn's effects.
	Bare claimWords
	// Negation marks a clause that says something did not happen; it also
	// takes back what earlier clauses of its sentence claimed ("I've sent
	// the text, but it bounced").
	Negation claimWords
	// Hedge marks a clause that is an offer, a question or an attempt, not
	// a claim ("shall I", "要不要", "尝试").
	Hedge claimWords
	// Condition marks a clause, and the rest of its sentence, as what will
	// happen if something else does ("once the gateway is back, you'll get
	// a text", "如果…").
	Condition claimWords
	// Aside marks a clause that speaks to the user, not about the effect;
	// its negation does not take back an earlier claim ("please don't
	// share the code").
	Aside claimWords
	// Person marks a clause addressed to the user or told by the agent.
	// A claim of an effect no tool was called for at all must have one:
	// "refunds go back within 14 days" states a policy, "you'll get your
	// refund" makes a claim.
	Person claimWords
	// UserDid, right before a Did word, makes it the user's action: "the
	// card you paid with", "您已支付". ForUser, right before that, makes
	// the user whom the agent acted for: "帮您撤销了".
	UserDid, ForUser claimWords
	// Courtesy are set phrases that hold a negation and negate nothing
	// ("no problem", "没关系"); they are ignored.
	Courtesy claimWords
	// Breaks start a new clause.
	Breaks claimWords
	// Neutral are phrases that hold a channel's word and name something
	// else: "return address", "退货地址".
	Neutral claimWords
}

// claimVocabulary is every word the false-claim rule reads, in English and
// Chinese: how tools and answers name a channel, and the markers of
// completion, negation, hedging. It is data, not code, and belongs in the
// lexicon.
var claimVocabulary = claimLexicon{
	Channels: []claimChannel{
		{
			Name: "sms", Rank: 2, Absent: true, Messaging: true,
			Tool: []string{"sms", "text", "txt", "mms"},
			Keys: []string{"phone", "mobile", "msisdn", "cell"},
			Noun: claimWords{
				En: []string{"sms", "sms message", "text", "texts", "text message", "text messages", "txt", "message", "messages", "phone", "your phone", "your mobile", "your cell"},
				Zh: []string{"短信", "短消息", "手机短信", "消息", "手机", "通知"},
			},
			Did:  claimWords{En: []string{"texted", "sms'd", "sms-ed", "messaged", "pinged", "notified"}},
			Verb: claimWords{Zh: []string{"发", "发送", "推送", "传", "给"}},
		},
		{
			Name: "email", Rank: 2, Absent: true, Messaging: true,
			Tool: []string{"email", "mail", "smtp"},
			Keys: []string{"email", "cc", "bcc", "subject"},
			Noun: claimWords{
				En: []string{"email", "emails", "e-mail", "e-mails", "email address", "mail", "inbox", "mailbox", "spam folder", "junk folder", "message", "messages"},
				Zh: []string{"邮件", "电子邮件", "邮箱", "电邮", "收件箱", "邮箱地址", "垃圾邮件", "消息", "通知"},
			},
			Did: claimWords{
				En: []string{"emailed", "e-mailed", "mailed", "cc'd", "cced", "bcc'd", "in your inbox", "to your inbox", "notified"},
			},
			Verb: claimWords{Zh: []string{"发", "发送", "寄", "转发", "抄送", "给"}},
		},
		{
			Name: "chat", Rank: 2, Absent: true, Messaging: true,
			Tool: []string{"message", "chat", "whatsapp", "wechat", "slack", "dm", "telegram", "im"},
			Keys: []string{"chat", "channel"},
			Noun: claimWords{
				En: []string{"message", "messages", "dm", "whatsapp", "wechat", "slack", "chat"},
				Zh: []string{"消息", "微信", "私信", "留言"},
			},
			Did:  claimWords{En: []string{"messaged", "dm'd", "dmed", "pinged"}},
			Verb: claimWords{Zh: []string{"发", "发送", "推送", "转发", "给"}},
		},
		{
			Name: "call", Rank: 2, Absent: true,
			Tool: []string{"call", "phone", "dial", "voice", "ring"},
			Noun: claimWords{
				En: []string{"call", "phone call", "voicemail", "voice message", "phone", "your phone", "your mobile"},
				Zh: []string{"电话", "致电", "来电", "回电", "语音", "通话", "手机", "通知"},
			},
			Did: claimWords{
				En: []string{"called", "phoned", "rang", "rung", "contacted", "notified", "spoke to", "spoke with", "spoken to", "spoken with", "talked to", "talked with", "got through to", "got hold of", "left a voicemail", "left a message"},
				Zh: []string{"打过电话", "打了电话", "通过电话", "联系上", "联系过", "联系了", "已联系", "已致电", "致电了", "回电了"},
			},
			Verb: claimWords{Zh: []string{"打", "拨", "联系", "通知"}},
			// A call is made, not sent: "sent a recap of the call" is no claim of one.
			Done: claimWords{
				En: []string{"made", "placed", "put through", "got through", "went through", "connected", "you'll get", "you will get",
					"you'll receive", "you will receive", "expect", "should ring", "will ring", "has been", "have been", "already",
					"successfully", "completed", "done", "scheduled", "arranged", "set up"},
				Zh: []string{"已", "成功", "完成", "打过", "打了", "拨过", "拨了", "接通", "会接到", "将接到", "安排了", "过了"},
			},
		},
		{
			Name: "push", Rank: 2, Absent: true, Messaging: true,
			Tool: []string{"push", "notif", "remind", "alert"},
			Keys: []string{"device", "device_token"},
			Noun: claimWords{
				En: []string{"notification", "notifications", "push", "push notification", "reminder", "reminders", "alert", "alerts", "phone", "your phone", "your app"},
				Zh: []string{"推送", "通知", "提醒", "推送通知", "消息提醒", "手机"},
			},
			Did: claimWords{
				En: []string{"notified", "reminded", "pinged", "will remind you", "'ll remind you", "will ping you", "'ll ping you", "will notify you", "'ll notify you", "will alert you", "'ll alert you"},
				Zh: []string{"会提醒", "将提醒", "到时提醒", "准时提醒", "会通知您", "会推送"},
			},
			Verb: claimWords{Zh: []string{"设", "设置", "设好", "定", "安排", "推送", "发"}},
		},
		{
			Name: "refund", Rank: 2, Absent: true,
			Tool: []string{"refund", "reimburs", "credit", "chargeback", "repay", "payback"},
			Keys: []string{"refund_amount"},
			Noun: claimWords{
				En: []string{"refund*", "money back", "reimbursement*", "store credit", "your money", "the money"},
				Zh: []string{"退款", "退钱", "退费", "退回", "退还", "返还", "原路", "报销", "款项"},
			},
			Did: claimWords{
				En: []string{"refunded", "reimbursed", "credited", "paid back", "paid you back", "back to your card", "back on your card",
					"back to your account", "back into your account", "back in your account", "back to the original", "back to you"},
				Zh: []string{"已退", "原路退回", "原路返回", "退给您了", "退到", "到账"},
			},
			Verb: claimWords{Zh: []string{"退", "返", "打", "打款"}},
		},
		{
			// A hand-off to a person: transfer_to_human_agents moves a
			// conversation, not money.
			Name: "handoff", Rank: 3,
			Tool: []string{"human", "handoff", "escalat"},
			Noun: claimWords{
				En: []string{"human agent", "human colleague", "a person", "live agent", "representative"},
				Zh: []string{"人工", "人工客服", "专员"},
			},
			Did: claimWords{
				En: []string{"transferred you", "connected you", "handed you over", "escalated"},
				Zh: []string{"已转人工", "已为您转接", "转接给"},
			},
		},
		{
			Name: "payment", Rank: 2, Absent: true,
			Tool: []string{"pay", "transfer", "wire", "remit", "payout"},
			Keys: []string{"iban", "payee", "beneficiary"},
			Noun: claimWords{
				En: []string{"payment", "payments", "transfer", "wire", "your money", "the money"},
				Zh: []string{"付款", "支付", "转账", "汇款", "打款"},
			},
			Did: claimWords{
				En: []string{"paid", "transferred", "wired", "remitted"},
				Zh: []string{"已付", "已支付", "已转", "转过去了", "付过了", "到账"},
			},
			Verb: claimWords{Zh: []string{"付", "转", "汇", "打"}},
		},
		{
			Name: "cancel", Rank: 2, Absent: true,
			Tool: []string{"cancel", "void", "revoke", "unsubscrib", "terminat"},
			Noun: claimWords{
				En: []string{"cancel", "cancellation", "cancelation"},
				Zh: []string{"取消", "撤销", "作废", "退订"},
			},
			Did: claimWords{
				En: []string{"cancelled", "canceled", "voided", "revoked", "unsubscribed", "terminated", "called off"},
				Zh: []string{"已取消", "取消了", "已撤销", "撤销了", "已退订", "取消好了", "取消成功"},
			},
		},
		{
			Name: "delete", Rank: 2, Absent: true,
			Tool: []string{"delet", "remov", "eras", "purg", "destroy", "wipe"},
			Noun: claimWords{En: []string{"deletion"}, Zh: []string{"删除", "删掉", "移除", "注销"}},
			Did: claimWords{
				En: []string{"deleted", "removed", "erased", "wiped", "purged", "closed your account"},
				Zh: []string{"已删除", "删掉了", "删除了", "已移除", "已注销", "注销了"},
			},
		},
		{
			Name: "address", Rank: 1,
			Tool: []string{"address", "addr"},
			Keys: []string{"address", "addr", "street", "postcode", "zip"},
			Noun: claimWords{
				En: []string{"address", "shipping address", "delivery address", "new address"},
				Zh: []string{"地址", "收货地址", "配送地址", "新地址", "收件地址"},
			},
			Did: claimWords{En: []string{"redirected", "rerouted"}},
			Done: claimWords{
				En: []string{"updated", "changed", "switched", "corrected", "amended", "modified", "is now", "will now", "now goes", "now go", "now be", "now ship*"},
				Zh: []string{"已改", "已修改", "已更改", "已更新", "改好", "改成了", "改过来了", "换成了", "更新为", "修改为", "改为", "改成"},
			},
		},
		{
			Name: "booking", Rank: 1,
			Tool: []string{"book", "reserv", "schedul", "appoint"},
			Noun: claimWords{
				En: []string{"booking", "reservation", "appointment", "visit"},
				Zh: []string{"预订", "预约", "预定", "订位"},
			},
			Did: claimWords{
				En: []string{"booked", "reserved", "scheduled"},
				Zh: []string{"已预订", "已预约", "已预定", "订好了", "约好了", "预约好了", "预订好了"},
			},
		},
		{
			Name: "share", Rank: 1,
			Tool: []string{"share", "grant"},
			Noun: claimWords{En: []string{"access"}, Zh: []string{"共享", "分享", "权限"}},
			Did:  claimWords{En: []string{"shared", "granted"}, Zh: []string{"已共享", "已分享", "共享了", "分享了", "已授权"}},
		},
		{
			Name: "update", Rank: 0,
			Tool: []string{"update", "chang", "modif", "edit", "set", "amend"},
			Did: claimWords{
				En: []string{"updated", "changed", "modified", "edited", "amended"},
				Zh: []string{"已修改", "已更新", "已更改", "改好了", "修改好了", "更新好了"},
			},
		},
		{
			Name: "submit", Rank: 0,
			Tool: []string{"submit", "file", "creat", "open", "lodg", "regist", "issue"},
			Did: claimWords{
				En: []string{"submitted", "filed", "created", "lodged", "registered", "logged", "issued"},
				Zh: []string{"已提交", "已创建", "已登记", "提交了", "创建了", "已开具", "已发放"},
			},
		},
	},
	Done: claimWords{
		En: []string{
			"sent", "done", "delivered", "dispatched", "queued", "scheduled", "processed", "issued", "submitted",
			"completed", "confirmed", "arranged", "placed", "initiated", "approved", "set up", "is set", "are set",
			"all set", "went through", "gone through", "on its way", "on their way", "on the way",
			"you'll get", "you will get", "you'll receive", "you will receive", "you should get", "you should receive",
			"you should see", "you'll see", "you will see", "you'll find", "you will find", "you should find",
			"you can expect", "expect it", "should arrive", "will arrive", "should be there", "will be there",
			"should be in", "will be in", "should land", "will land", "should show", "will show", "will appear",
			"should appear", "will be back", "should be back", "check your", "look out for", "keep an eye on",
			"forwarded", "has been", "have been", "'s been", "is now", "are now", "business days", "working days",
			"successfully", "updated", "changed", "taken care of", "already", "just now", "went out", "went to",
			"you'll have", "you will have", "there'll be", "there will be",
		},
		Zh: []string{
			"已", "成功", "完成", "好了", "搞定", "办好", "查收", "会收到", "将收到", "能收到", "即将收到",
			"发出", "送达", "到账", "将于", "将在", "预计", "即将", "工作日", "会有", "将有",
		},
	},
	Weak:  claimWords{Zh: []string{"了", "过"}},
	Place: claimWords{Zh: []string{"里", "上", "中"}},
	Sent: claimWords{
		En: []string{"sent you", "sent it", "sent them", "sent this", "sent that", "sent over", "sent across", "sent to you",
			"sent to your", "sent off", "forwarded", "passed on", "passed along"},
		Zh: []string{"发给您了", "发送给您了", "发您了", "已发送", "已发给", "已发到", "已经发", "发过去了", "发出去了", "已推送", "已转发", "转发了"},
	},
	Bare: claimWords{
		En: []string{"done", "all done", "all set", "taken care of", "sorted", "completed", "complete", "finished", "sent", "all sent",
			"went through", "gone through", "success", "successfully", "good to go", "you're set", "handled"},
		Zh: []string{"搞定", "办好了", "弄好了", "发好了", "处理好了", "处理完", "办理好", "已为您办理", "已为您处理", "已帮您办理",
			"已帮您处理", "操作成功", "已完成", "完成了", "成功了", "好了"},
	},
	Negation: claimWords{
		En: []string{
			"not", "never", "unable", "failed", "fail", "fails", "failing", "failure", "unsuccessful", "error", "errors",
			"errored", "bounced", "bounce", "rejected", "declined", "denied", "blocked", "refused", "undeliverable",
			"undelivered", "no longer", "couldn't", "wasn't", "weren't", "hasn't", "haven't", "hadn't", "didn't",
			"doesn't", "isn't", "aren't", "can't", "cannot", "won't", "wouldn't", "problem", "problems", "trouble",
			"no luck", "is down", "was down", "are down", "unavailable", "timed out", "outage", "nothing went",
		},
		Zh: []string{
			"没", "未", "无法", "不能", "不了", "不成功", "失败", "出错", "错误", "异常", "故障", "被拒", "拒绝", "驳回",
			"退信", "不到", "不上", "不出", "尚未", "还没", "无效", "失效", "超时", "不成", "不可以", "不行", "暂停",
			"上限", "过期", "出了问题", "出了点问题", "出问题", "不回", "不进", "不通", "不掉", "不去", "不来",
		},
	},
	Hedge: claimWords{
		En: []string{
			"can i", "could i", "shall i", "should i", "may i", "want me to", "would you like", "do you want",
			"would you prefer", "i can", "i could", "we can", "we could", "happy to", "let me know", "try", "tried",
			"trying", "attempt", "attempted", "attempting", "whether", "would", "going to", "about to", "retry",
			"retrying", "can be", "could be", "may be", "might be", "can still", "eligible", "possible",
		},
		Zh: []string{
			"吗", "是否", "要不要", "需要我", "要我", "我可以", "我能", "我们可以", "能否", "可否", "尝试", "试着",
			"试试", "再试", "重试", "打算", "是不是", "呢", "还可以", "还能", "可以申请", "是否可以",
		},
	},
	Condition: claimWords{
		En: []string{"if", "once", "as soon as", "unless", "when it", "when the", "when you", "after it", "after the"},
		Zh: []string{"如果", "若", "假如", "一旦", "等到", "恢复后", "之后再", "的话"},
	},
	Aside: claimWords{
		En: []string{"please", "feel free", "don't", "do not"},
		Zh: []string{"请勿", "请不要", "请您", "请注意", "请放心", "请记得", "麻烦您", "随时", "如有", "不要", "别忘", "别担心", "千万别"},
	},
	Person: claimWords{
		En: []string{"i", "i've", "i'll", "i'm", "i'd", "me", "my", "we've", "we'll", "we have", "you", "you'll", "you've",
			"you're", "you'd", "your", "yours"},
		Zh: []string{"您", "你", "我"},
	},
	UserDid: claimWords{
		En: []string{"you", "you've", "you have", "you had", "you'd", "you already", "you just"},
		Zh: []string{"您", "你", "您已", "你已", "您已经", "你已经"},
	},
	ForUser: claimWords{
		Zh: []string{"帮", "为", "给", "替", "向"},
	},
	Courtesy: claimWords{
		En: []string{"no problem", "not a problem", "no worries", "not at all", "no trouble"},
		Zh: []string{"没问题", "没关系", "不客气", "不用客气", "不用谢", "不好意思"},
	},
	Breaks: claimWords{
		En: []string{"but", "however", "although", "though", "whereas", "instead"},
		Zh: []string{"但是", "但", "不过", "可是", "然而", "只是", "所以", "因此", "而是"},
	},
	Neutral: claimWords{
		En: []string{"return address", "pickup address", "store address", "web address", "ip address", "full text", "text of",
			"phone number", "payment method", "original payment"},
		Zh: []string{"退货地址", "寄回地址", "取件地址", "门店地址", "原文", "温馨提醒", "手机号", "电话号码", "支付渠道", "支付方式",
			"付款方式", "原支付"},
	},
}

// Compiled forms of claimVocabulary.
var (
	claimTerms []channelTerm // longest first
	claimIndex *termIndex    // claimTerms' words, in the same order
	// clauseWords finds the lists a clause is read with (the sets below)
	// in one pass.
	clauseWords                                           *termSets
	breakWords, courtesyWords, userDidWords, forUserWords []lexTerm // short lists, scanned
	channelDone                                           []bool    // per channel: it has a Done list of its own (setChannelDone+i)
)

// The lists of clauseWords.
const (
	setNeg = iota
	setHedge
	setAside
	setCondition
	setPerson
	setDone
	setSent
	setBare
	setWeak
	setChannelDone // then one per channel
)

// termSets finds which of several lists of terms a text holds, in one pass
// of one termIndex over all their terms: a term matches or not whatever
// list it is in, so the lists found are those each list's own termIndex
// would find.
type termSets struct {
	ix   *termIndex
	list []int // per term of ix: its list
}

func newTermSets(lists ...[]lexTerm) *termSets {
	x := &termSets{}
	var all []lexTerm
	for l, terms := range lists {
		all = append(all, terms...)
		for range terms {
			x.list = append(x.list, l)
		}
	}
	x.ix = newTermIndex(all)
	return x
}

// in returns the lists with a term in s, list l as bit l.
func (x *termSets) in(s string) uint64 {
	var found uint64
	x.ix.each(s, func(k, _, _ int) bool {
		found |= 1 << x.list[k]
		return true
	})
	return found
}

type lexTerm struct {
	text   string
	prefix bool // a trailing *: any ending
	latin  bool // matches whole words
}

type termKind uint8

const (
	kindNoun termKind = iota
	kindDid
	kindVerb
	kindNeutral
)

type channelTerm struct {
	lexTerm
	kind  termKind
	chans channelSet
}

func init() {
	v := &claimVocabulary
	if len(v.Channels) > 32 {
		panic("guard: claimVocabulary has more channels than a channelSet holds")
	}
	index := map[string]int{} // text and kind -> claimTerms index
	add := func(text string, kind termKind, ch channelSet) {
		key := string(rune('0'+kind)) + text
		if i, ok := index[key]; ok {
			claimTerms[i].chans |= ch
			return
		}
		index[key] = len(claimTerms)
		claimTerms = append(claimTerms, channelTerm{lexTerm: compileTerm(text), kind: kind, chans: ch})
	}
	both := func(w claimWords) []string { return slices.Concat(w.En, w.Zh) }
	channelDone = make([]bool, len(v.Channels))
	var done [][]lexTerm
	for i, ch := range v.Channels {
		bit := channelSet(1) << i
		if ch.Messaging {
			messaging |= bit
		}
		if ch.Absent {
			absentChannels |= bit
		}
		for _, w := range both(ch.Noun) {
			add(w, kindNoun, bit)
		}
		for _, w := range both(ch.Did) {
			add(w, kindDid, bit)
		}
		for _, w := range both(ch.Verb) {
			add(w, kindVerb, bit)
		}
		channelDone[i] = len(ch.Done.En)+len(ch.Done.Zh) > 0
		done = append(done, compileTerms(ch.Done))
	}
	for _, w := range both(v.Neutral) {
		add(w, kindNeutral, 0)
	}
	slices.SortStableFunc(claimTerms, func(a, b channelTerm) int { return len(b.text) - len(a.text) })
	lex := make([]lexTerm, len(claimTerms))
	for i, t := range claimTerms {
		lex[i] = t.lexTerm
	}
	claimIndex = newTermIndex(lex)
	if setChannelDone+len(v.Channels) > 64 {
		panic("guard: claimVocabulary has more lists than clauseWords holds")
	}
	clauseWords = newTermSets(slices.Concat([][]lexTerm{
		setNeg: compileTerms(v.Negation), setHedge: compileTerms(v.Hedge), setAside: compileTerms(v.Aside),
		setCondition: compileTerms(v.Condition), setPerson: compileTerms(v.Person), setDone: compileTerms(v.Done),
		setSent: compileTerms(v.Sent), setBare: compileTerms(v.Bare), setWeak: compileTerms(v.Weak),
	}, done)...)
	breakWords, courtesyWords = compileTerms(v.Breaks), compileTerms(v.Courtesy)
	userDidWords, forUserWords = compileTerms(v.UserDid), compileTerms(v.ForUser)
}

func compileTerms(w claimWords) []lexTerm {
	var out []lexTerm
	for _, s := range slices.Concat(w.En, w.Zh) {
		out = append(out, compileTerm(s))
	}
	return out
}

func compileTerm(s string) lexTerm {
	t := lexTerm{text: strings.ToLower(s)}
	if strings.HasSuffix(t.text, "*") {
		t.text, t.prefix = strings.TrimSuffix(t.text, "*"), true
	}
	t.latin = t.text != "" && t.text[0] < utf8.RuneSelf
	return t
}

// find returns the byte offsets of the first match of t in s at or after
// from, or -1.
func (t lexTerm) find(s string, from int) (int, int) {
	for from <= len(s) {
		i := strings.Index(s[from:], t.text)
		if i < 0 {
			return -1, -1
		}
		i += from
		end := i + len(t.text)
		if !t.latin {
			return i, end
		}
		if t.prefix {
			for end < len(s) && isWordByte(s[end]) {
				end++
			}
		}
		// A term that starts with an apostrophe ('ll) is a word's ending.
		if (i == 0 || !isWordByte(s[i-1]) || t.text[0] == '\'') && (end == len(s) || !isWordByte(s[end]) || possessive(s[end:])) {
			return i, end
		}
		from = i + 1
	}
	return -1, -1
}

// termIndex finds the terms of one list in a normalised clause without
// trying each: English terms by their first word, Chinese ones by their
// first rune; the few whose first word is not a whole word (refund*, 'll)
// are scanned.
type termIndex struct {
	terms  []lexTerm
	byWord map[string][]int
	shapes [256]uint64 // per first byte, the lengths of byWord's keys (bit min(n, 63)): most words need no lookup
	byRune map[rune][]int
	scan   []int
}

// mayHold reports whether word could be a key of byWord.
func (x *termIndex) mayHold(word string) bool {
	return word != "" && x.shapes[word[0]]&(1<<min(len(word), 63)) != 0
}

func newTermIndex(terms []lexTerm) *termIndex {
	x := &termIndex{terms: terms, byWord: map[string][]int{}, byRune: map[rune][]int{}}
	for k, t := range terms {
		switch {
		case t.text == "":
		case !t.latin:
			r, _ := utf8.DecodeRuneInString(t.text)
			x.byRune[r] = append(x.byRune[r], k)
		default:
			w := firstWord(t.text)
			if w == "" || t.prefix && len(w) == len(t.text) {
				x.scan = append(x.scan, k)
			} else {
				x.byWord[w] = append(x.byWord[w], k)
				x.shapes[w[0]] |= 1 << min(len(w), 63)
			}
		}
	}
	return x
}

// firstWord returns the word s starts with, as clauses are split into
// words (isWordByte: "you'll" is one word); "" if s starts with no word or
// with an apostrophe ('ll).
func firstWord(s string) string {
	if s == "" || s[0] == '\'' || !isWordByte(s[0]) {
		return ""
	}
	n := 1
	for n < len(s) && isWordByte(s[n]) {
		n++
	}
	return s[:n]
}

// each calls fn with every match of a term of x in s: the term's index and
// the match's byte offsets. It stops when fn returns false.
func (x *termIndex) each(s string, fn func(k, i, j int) bool) {
	for p := 0; p < len(s); {
		c := s[p]
		if c >= utf8.RuneSelf {
			r, n := utf8.DecodeRuneInString(s[p:])
			for _, k := range x.byRune[r] {
				if t := x.terms[k].text; strings.HasPrefix(s[p:], t) && !fn(k, p, p+len(t)) {
					return
				}
			}
			p += n
			continue
		}
		if !isWordByte(c) || p > 0 && isWordByte(s[p-1]) {
			p++
			continue
		}
		q := p
		for q < len(s) && isWordByte(s[q]) {
			q++
		}
		word := s[p:q]
		try := func(ks []int) bool {
			for _, k := range ks {
				if j, ok := x.terms[k].at(s, p); ok && !fn(k, p, j) {
					return false
				}
			}
			return true
		}
		if x.mayHold(word) && !try(x.byWord[word]) {
			return
		}
		if base, ok := strings.CutSuffix(word, "'s"); ok && x.mayHold(base) && !try(x.byWord[base]) {
			return
		}
		p = q
	}
	for _, k := range x.scan {
		for from := 0; ; {
			i, j := x.terms[k].find(s, from)
			if i < 0 {
				break
			}
			if !fn(k, i, j) {
				return
			}
			from = j
		}
	}
}

// at reports whether the English term t matches s at word start i, and
// where the match ends.
func (t lexTerm) at(s string, i int) (int, bool) {
	if !strings.HasPrefix(s[i:], t.text) {
		return 0, false
	}
	end := i + len(t.text)
	if t.prefix {
		for end < len(s) && isWordByte(s[end]) {
			end++
		}
	}
	return end, end == len(s) || !isWordByte(s[end]) || possessive(s[end:])
}

// possessive reports whether s starts with the 's that may follow a
// noun: "your money's on its way".
func possessive(s string) bool {
	return strings.HasPrefix(s, "'s") && (len(s) == 2 || !isWordByte(s[2]))
}

// isWordByte reports whether b continues an English word. Bytes of
// non-ASCII runes do not: Chinese next to an English word is a boundary.
func isWordByte(b byte) bool {
	return b >= 'a' && b <= 'z' || b >= 'A' && b <= 'Z' || b >= '0' && b <= '9' || b == '\''
}

// readClaims returns the clauses of answer that claim something happened.
func readClaims(answer string) []claim {
	var out []claim
	for _, sent := range sentences(answer) {
		norm := normaliseAnswer(sent)
		clauses := splitClauses(norm)
		// A negated clause takes back what the clauses before it in the
		// sentence claimed, unless it speaks to the user (an aside, a
		// hedge): "I've sent the text, but it bounced". What comes after
		// it stands: "The text bounced, so I've e-mailed you".
		start := len(out)
		conditional := false
		for _, cl := range clauses {
			cl = dropCourtesy(cl)
			sets := clauseWords.in(cl)
			conditional = conditional || sets&(1<<setCondition) != 0
			neg := sets&(1<<setNeg) != 0
			aside := conditional || sets&(1<<setHedge|1<<setAside) != 0 || endsQuestion(cl)
			if neg && !aside {
				out = out[:start]
			}
			if neg || aside {
				continue
			}
			if c, ok := readClause(cl, sets); ok {
				c.sentence = strings.TrimSpace(sent)
				out = append(out, c)
			}
		}
	}
	return out
}

// byUser reports whether the text before a Did word makes the user its
// actor.
func byUser(before string) bool {
	for _, t := range userDidWords {
		if rest, ok := cutWordSuffix(before, t); ok {
			return !endsWithAny(rest, forUserWords)
		}
	}
	return false
}

// cutWordSuffix returns s, less trailing spaces, without t at its end, if
// it ends with t as a whole word.
func cutWordSuffix(s string, t lexTerm) (string, bool) {
	s = strings.TrimRight(s, " ")
	if !strings.HasSuffix(s, t.text) {
		return s, false
	}
	rest := s[:len(s)-len(t.text)]
	if t.latin && rest != "" && isWordByte(rest[len(rest)-1]) {
		return s, false
	}
	return rest, true
}

// endsWithAny reports whether s, less trailing spaces, ends with one of
// terms, as a whole word.
func endsWithAny(s string, terms []lexTerm) bool {
	for _, t := range terms {
		if _, ok := cutWordSuffix(s, t); ok {
			return true
		}
	}
	return false
}

// dropCourtesy blanks out the courtesy phrases of a clause.
func dropCourtesy(cl string) string {
	for _, t := range courtesyWords {
		for {
			i, j := t.find(cl, 0)
			if i < 0 {
				break
			}
			cl = cl[:i] + strings.Repeat(" ", j-i) + cl[j:]
		}
	}
	return cl
}

// readClause reads one normalised clause that is neither negated nor
// hedged; sets are the lists of clauseWords it holds.
func readClause(cl string, sets uint64) (claim, bool) {
	type span struct{ i, j int }
	var taken []span
	free := func(i, j int) bool {
		for _, s := range taken {
			if i < s.j && s.i < j && (i != s.i || j != s.j) { // the same word may serve several channels
				return false
			}
		}
		return true
	}
	var mention, verb, nounThenWeak channelSet
	type found struct {
		chans channelSet
		did   bool
	}
	var terms []found
	type match struct{ k, i, j int }
	var matches []match
	claimIndex.each(cl, func(k, i, j int) bool {
		matches = append(matches, match{k, i, j})
		return true
	})
	// Longest terms first, as claimTerms is ordered: "email address" takes
	// its words before "address" can.
	slices.SortFunc(matches, func(a, b match) int {
		if a.k != b.k {
			return a.k - b.k
		}
		return a.i - b.i
	})
	for _, m := range matches {
		t, i, j := claimTerms[m.k], m.i, m.j
		if !free(i, j) {
			continue
		}
		taken = append(taken, span{i, j})
		switch t.kind {
		case kindNoun:
			mention |= t.chans
			terms = append(terms, found{t.chans, false})
			// 退款了, 邮箱里了, 手机上了
			rest := cl[j:]
			if w := startsWith(rest, claimVocabulary.Place.Zh); w != "" {
				rest = rest[len(w):]
			}
			if startsWith(rest, claimVocabulary.Weak.Zh) != "" {
				nounThenWeak |= t.chans
			}
		case kindDid:
			mention |= t.chans
			if !byUser(cl[:i]) {
				terms = append(terms, found{t.chans, true})
			}
		case kindVerb:
			verb |= t.chans
		}
	}
	has := func(set int) bool { return sets&(1<<set) != 0 }
	c := claim{clause: cl, personal: has(setPerson)}
	strong := has(setDone)
	c.sent = mention&messaging == 0 && has(setSent)
	c.bare = mention == 0 && has(setBare) && shortClause(cl)
	c.done = strong || c.sent
	for i, done := range channelDone {
		if done && has(setChannelDone+i) {
			c.ownDone |= channelSet(1) << i
		}
	}
	// The channels whose mention this clause completes.
	weak := has(setWeak)
	var complete channelSet
	for i := range claimVocabulary.Channels {
		bit := channelSet(1) << i
		switch {
		case mention&bit == 0:
		case channelDone[i]:
			complete |= c.ownDone & bit
		case strong:
			complete |= bit
		case weak && (verb|nounThenWeak)&bit != 0:
			complete |= bit
		}
	}
	for _, f := range terms {
		if f.did {
			c.terms = append(c.terms, f.chans)
		} else if ch := f.chans & complete; ch != 0 {
			c.terms = append(c.terms, ch)
		}
	}
	return c, len(c.terms) > 0 || c.sent || c.bare || c.done || c.ownDone != 0
}

// startsWith returns the word of words that s starts with, or "".
func startsWith(s string, words []string) string {
	for _, w := range words {
		if strings.HasPrefix(s, w) {
			return w
		}
	}
	return ""
}

// shortClause reports whether a clause is short enough for a bare "done"
// to be about the turn's action: six English words, or twelve runes.
func shortClause(cl string) bool {
	if utf8.RuneCountInString(cl) <= 12 {
		return true
	}
	return len(strings.Fields(cl)) <= 6 && !strings.ContainsFunc(cl, func(r rune) bool { return r >= 0x2E80 })
}

func endsQuestion(cl string) bool {
	cl = strings.TrimRightFunc(cl, func(r rune) bool { return unicode.IsSpace(r) || r == '"' || r == '”' || r == ')' })
	return strings.HasSuffix(cl, "?") || strings.HasSuffix(cl, "？")
}

// sentences splits text at sentence ends: . followed by a space or the
// end (not in 89.99 or jamie.r@outlook.com), ! ? 。！？ and new lines. The
// end mark stays with its sentence.
func sentences(text string) []string {
	var out []string
	start := 0
	for i, r := range text {
		end := false
		switch r {
		case '!', '?', '。', '！', '？', '\n', '…':
			end = true
		case '.':
			next, _ := utf8.DecodeRuneInString(text[i+1:])
			end = i+1 == len(text) || unicode.IsSpace(next)
		}
		if end {
			j := i + utf8.RuneLen(r)
			if s := strings.TrimSpace(text[start:j]); s != "" {
				out = append(out, s)
			}
			start = j
		}
	}
	if s := strings.TrimSpace(text[start:]); s != "" {
		out = append(out, s)
	}
	return out
}

// normaliseAnswer lower-cases s, writes every apostrophe as ' and folds
// runs of white space into one space.
func normaliseAnswer(s string) string {
	var b strings.Builder
	b.Grow(len(s))
	space := false
	for _, r := range s {
		// strings.ToLower(s) lowers rune by rune with unicode.ToLower,
		// as here, without a copy of s.
		if r < utf8.RuneSelf {
			if 'A' <= r && r <= 'Z' {
				r += 'a' - 'A'
			}
		} else {
			r = unicode.ToLower(r)
		}
		switch {
		case r == '’' || r == '‘' || r == '`' || r == '´' || r == '＇':
			r = '\''
		case unicode.IsSpace(r):
			space = true
			continue
		}
		if space && b.Len() > 0 {
			b.WriteByte(' ')
		}
		space = false
		b.WriteRune(r)
	}
	return b.String()
}

// splitClauses splits a normalised sentence into clauses: at commas and
// semicolons (not in 1,280), colons before a space, dashes between spaces,
// and before the words of claimVocabulary.Breaks.
func splitClauses(s string) []string {
	var parts []string
	start := 0
	cut := func(i, next int) {
		if p := strings.TrimSpace(s[start:i]); p != "" {
			parts = append(parts, p)
		}
		start = next
	}
	for i, r := range s {
		n := i + utf8.RuneLen(r)
		next, _ := utf8.DecodeRuneInString(s[n:])
		switch r {
		case '，', '；', '：', ';', '—', '–':
			cut(i, n)
		case ',', ':':
			if n == len(s) || next == ' ' {
				cut(i, n)
			}
		case '-':
			if i > 0 && s[i-1] == ' ' && next == ' ' {
				cut(i, n)
			}
		}
	}
	cut(len(s), len(s))
	var out []string
	for _, p := range parts {
		out = append(out, splitBreaks(p)...)
	}
	return out
}

// splitBreaks splits a clause before each break word.
func splitBreaks(p string) []string {
	var cuts []int
	for _, b := range breakWords {
		for from := 0; ; {
			i, j := b.find(p, from)
			if i < 0 {
				break
			}
			if i > 0 {
				cuts = append(cuts, i)
			}
			from = j
		}
	}
	if len(cuts) == 0 {
		return []string{p}
	}
	slices.Sort(cuts)
	var out []string
	start := 0
	for _, c := range cuts {
		if s := strings.TrimSpace(p[start:c]); s != "" {
			out = append(out, s)
		}
		start = c
	}
	if s := strings.TrimSpace(p[start:]); s != "" {
		out = append(out, s)
	}
	return out
}

// pastFact matches a clause in the simple past passive with no perfect
// aspect ("the flight was canceled", "your order was paid via gift card"):
// it states what the records say happened before, where "has been
// refunded" or "I've cancelled" claim an action of this conversation. A
// call never made can only be claimed in the second form.
var (
	simplePastPassive = regexp.MustCompile(`\b(?:was|were)\s+(?:\w+\s+)?\w+(?:ed|en|id|ue)\b`)
	perfectAspect     = regexp.MustCompile(`\b(?:has|have|had|i|we)\b|'ve\b|'s been\b`)
)

func pastFact(clause string) bool {
	return simplePastPassive.MatchString(clause) && !perfectAspect.MatchString(clause)
}
