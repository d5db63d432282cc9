package lexicon

// Authority is the vocabulary of who asked for what: the words the rules
// that judge a call's values by their origins, and the writes the user
// asked for, read in the user's own turns and in tool names — never in
// third-party text, which is judged by where its values came from.
type Authority struct {
	// Objects group the words for one kind of thing a write acts on, in
	// tool names and in what users write, by family name: "pay" holds pay,
	// bill, money, 付款. A write is one the user asked for when a word of
	// its tool's name, or of that word's family, appears in a user turn.
	Objects map[string][]string
	// Generic are tool-name words that name no object: update_user_info
	// acts on nothing a user would name.
	Generic []string
	// Destructive group, by family, the words for writes that cannot be
	// taken back, as users write them ("cancel", "kill", "取消");
	// DestructiveNames the words that mark them in tool names, narrower
	// (transfer_to_human_agents moves no money).
	Destructive, DestructiveNames map[string][]string
	// Yes and No are the words of a go-ahead and of a refusal; a turn
	// that holds a Yes word and no No word says yes.
	Yes, No []string
	// Questions are the marks of a question besides ? and ？: 吗, 是否.
	Questions []string
	// Requests turn a question into a polite request to the agent: "could
	// you", "please", "帮我".
	Requests []string
	// ContentKinds group, by kind, the words for third-party content a
	// user refers to by name ("this e-mail", "the voicemail", "那个网页"),
	// in tool names and in what users write.
	ContentKinds map[string][]string
	// Determiners come before a noun that refers to one thing in
	// particular: "the", "this", "这封".
	Determiners []string
	// TaskWords are what users write when they hand the task itself to
	// content they point at: "follow the instructions", "按照".
	TaskWords []string
	// NameSuffixes are words a company's name may drop when people write
	// it: "Corp", "Ltd", "公司".
	NameSuffixes []string
	// QueryKeys are argument keys of a search rather than a pointer:
	// searching the inbox for a name does not point at what comes back.
	QueryKeys []string
	// ValueKinds group, by kind (email, phone, url, account), the words a
	// user names a kind of value with: "her e-mail on her website" lets the
	// page supply an e-mail address, not a link to visit. The kinds are
	// the ones the rules can tell from a value's shape.
	ValueKinds map[string][]string
}

func englishAuthority() Authority {
	return Authority{
		Objects: map[string][]string{
			"pay":      {"pay", "payment", "bill", "transfer", "money", "refund", "rent", "transaction"},
			"message":  {"send", "message", "messages", "dm", "text", "sms", "email", "e-mail", "mail", "reply", "forward", "tell"},
			"web":      {"webpage", "website", "page", "site", "blog", "post"},
			"calendar": {"calendar", "event", "meeting", "appointment", "reminder"},
			"lodging":  {"hotel", "stay", "room", "accommodation", "lodging"},
			"car":      {"car", "rental", "rent"},
			"food":     {"restaurant", "dinner", "lunch", "breakfast", "table", "eat"},
			"file":     {"file", "document", "doc", "folder"},
			"secret":   {"password", "passcode"},
			"remove":   {"cancel", "delete", "remove"},
		},
		Generic: []string{"user", "info", "information", "details", "data", "to", "for", "of", "by", "in", "on", "new", "all", "item", "items", "my"},
		Destructive: map[string][]string{
			"cancel":   {"cancel", "cancellation", "kill", "call off", "scrap"},
			"remove":   {"delete", "remove", "erase", "wipe", "get rid of"},
			"refund":   {"refund", "return", "money back"},
			"pay":      {"pay", "payment", "transfer", "money", "send money", "wire", "refund", "reimburse"},
			"exchange": {"exchange", "swap"},
		},
		DestructiveNames: map[string][]string{
			"cancel":   {"cancel"},
			"remove":   {"delete", "remove", "erase", "wipe"},
			"refund":   {"refund", "return"},
			"pay":      {"pay", "payment", "money", "wire", "reimburse", "funds"},
			"exchange": {"exchange", "swap"},
		},
		Yes:          []string{"yes", "yeah", "yep", "yup", "sure", "ok", "okay", "go ahead", "please do", "do it", "proceed", "confirm", "confirmed", "absolutely"},
		No:           []string{"no", "not", "don't", "do not", "never", "cancel that", "hold on", "wait"},
		Requests:     []string{"could you", "can you", "would you", "will you", "please"},
		ContentKinds: map[string][]string{"email": {"email", "e-mail", "mail", "inbox"}, "voicemail": {"voicemail", "transcript"}, "web": {"webpage", "page", "website", "site"}, "file": {"file", "document", "attachment", "pdf"}},
		Determiners:  []string{"this", "that", "the", "a", "an", "my", "their", "his", "her", "its", "these", "those"},
		TaskWords:    []string{"instructions", "instruction", "tasks", "todo", "to-do", "follow", "checklist"},
		NameSuffixes: []string{"corp", "co", "inc", "ltd", "llc", "gmbh", "labs", "lab", "limited", "company", "group", "bio"},
		QueryKeys:    []string{"q", "query", "search", "keyword", "keywords", "filter", "term", "terms", "text", "prompt"},
		ValueKinds: map[string][]string{
			"email":   {"email", "e-mail", "mail address", "address"},
			"phone":   {"phone", "number", "cell", "mobile", "call back"},
			"url":     {"link", "url", "address"},
			"account": {"account", "iban", "bank details", "number"},
		},
	}
}

func chineseAuthority() Authority {
	return Authority{
		Objects: map[string][]string{
			"pay":      {"付", "钱", "费", "付款", "支付", "转账", "缴费", "退款", "房租"},
			"message":  {"发送", "回复", "转发", "短信", "邮件", "消息", "通知"},
			"web":      {"网站", "网页"},
			"calendar": {"日程", "会议", "提醒"},
			"lodging":  {"酒店", "住"},
			"car":      {"租车"},
			"food":     {"餐厅", "饭店"},
			"file":     {"文件", "文档"},
			"secret":   {"密码"},
			"remove":   {"取消", "删除"},
		},
		Destructive: map[string][]string{
			"cancel":   {"取消", "退订", "不要了"},
			"remove":   {"删", "清除"},
			"refund":   {"退款", "退货", "退钱", "退"},
			"pay":      {"付", "支付", "转账", "汇款", "交"},
			"exchange": {"换货", "更换", "换"},
		},
		Yes:          []string{"好的", "好", "可以", "确认", "确定", "行", "嗯", "是的", "没问题", "同意"},
		No:           []string{"不要", "别", "不用", "不行", "算了", "等等"},
		Questions:    []string{"吗", "是否", "能不能", "可不可以"},
		Requests:     []string{"帮我", "帮忙", "麻烦", "请你", "请帮"},
		ContentKinds: map[string][]string{"email": {"邮件", "来信"}, "voicemail": {"留言", "语音"}, "web": {"网页", "页面", "网站"}, "file": {"文件", "附件", "文档"}},
		Determiners:  []string{"这", "那", "这封", "那封", "这个", "那个"},
		TaskWords:    []string{"按照", "照着", "任务", "待办", "要求做"},
		NameSuffixes: []string{"有限", "公司"},
		ValueKinds: map[string][]string{
			"email":   {"邮箱", "邮件地址", "地址"},
			"phone":   {"电话", "手机", "号码"},
			"url":     {"链接", "网址", "地址"},
			"account": {"账户", "账号", "卡号", "号码"},
		},
	}
}

func mergeAuthority(a, b Authority) Authority {
	return Authority{
		Objects:          mergeLists(a.Objects, b.Objects),
		Generic:          union(a.Generic, b.Generic),
		Destructive:      mergeLists(a.Destructive, b.Destructive),
		DestructiveNames: mergeLists(a.DestructiveNames, b.DestructiveNames),
		Yes:              union(a.Yes, b.Yes),
		No:               union(a.No, b.No),
		Questions:        union(a.Questions, b.Questions),
		Requests:         union(a.Requests, b.Requests),
		ContentKinds:     mergeLists(a.ContentKinds, b.ContentKinds),
		Determiners:      union(a.Determiners, b.Determiners),
		TaskWords:        union(a.TaskWords, b.TaskWords),
		NameSuffixes:     union(a.NameSuffixes, b.NameSuffixes),
		QueryKeys:        union(a.QueryKeys, b.QueryKeys),
		ValueKinds:       mergeLists(a.ValueKinds, b.ValueKinds),
	}
}
