package lexicon

// chinese is the Chinese vocabulary. It has no write verbs: tool names are
// English identifiers, whatever language the user speaks.
func chinese() *Lexicon {
	return &Lexicon{
		Absence:    []string{`没有(找到|符合|相关|任何|记录|结果|订单)|不存在|查无|无记录|未找到`},
		Denial:     []string{`没有|不存在|找不到|无法|并无`},
		ClauseRefs: []string{`第\s*(?P<num>\d+(?:\.\d+)*)\s*[条款章节项]`},
		ClaimWords: map[string][]string{
			"send":     {`已(经)?发送`, `发送了`, `已发`},
			"update":   {`已(经)?(修改|更新|更改)`, `改好了`},
			"change":   {`已(经)?(修改|更改)`},
			"modify":   {`已(经)?(修改|更改)`},
			"cancel":   {`已(经)?取消`},
			"submit":   {`已(经)?提交`},
			"book":     {`已(经)?(预订|预定)`},
			"reserve":  {`已(经)?(预订|预定)`},
			"transfer": {`已(经)?转(账|给)`},
			"pay":      {`已(经)?支付`, `已付`},
			"refund":   {`已(经)?退款`},
			"delete":   {`已(经)?删除`},
			"remove":   {`已(经)?(移除|删除)`},
			"create":   {`已(经)?创建`},
			"schedule": {`已(经)?(安排|预约)`},
			"return":   {`已(经)?退货`},
			"issue":    {`已(经)?(发放|开具)`},
		},
		ClaimNegation:      []string{`未|没有|无法|不能|失败`},
		EmptyResults:       []string{"无结果", "未找到", "没有找到", "查无结果", "无记录", "没有记录"},
		InstructionMarkers: []string{`忽略(之前|以上|前面|先前)的(指令|指示|要求)|(请|你必须)(立即|马上|先)(转账|发送|转发|删除|支付)`},
		Affirmation:        []string{`(?m)(?:^|[。！？；\s])(?:是的|是|好的|好|确认|确定|可以|对|没问题|行|同意)`},
		Memory:             chineseMemory(),
		Authority:          chineseAuthority(),
		Time:               chineseTime(),
		Replies:            map[Lang]Replies{ZH: chineseReplies()},
	}
}

func chineseMemory() Memory {
	return Memory{
		Channels: []Words{
			{"sms", []string{"短信", "短讯"}},
			{"call", []string{"电话", "来电", "致电", "打给我"}},
			{"email", []string{"邮件", "电邮", "邮箱"}},
			{"push", []string{"推送", "消息推送", "app推送"}},
			{"contact", []string{"联系我", "打扰"}},
		},
		Negation: []string{
			"不要", "别", "不用", "不需要", "不必", "请勿", "勿", "禁止", "不想", "不希望", "不许", "不准", "不能",
			"不可以", "不行", "不再", "拒绝", "拒收", "取消", "关闭", "关掉", "关了", "停止", "屏蔽", "免了", "算了",
			"不方便", "没必要", "免打扰",
		},
		Allow:    []string{"可以", "没关系", "没问题", "也行", "都行", "行吧", "无所谓", "恢复", "开启", "打开", "开通", "没事"},
		ScopeEnd: []string{"但", "但是", "不过", "而是", "所以", "并", "然后"},
		Reminder: []string{"忘", "错过", "漏", "记得"},
		Report:   []string{"没收到", "没有收到", "没接到", "收不到", "打过", "发过"},
		Dismiss:  []string{"无关", "随便说说", "不重要"},

		QuestionMark: []string{"吗", "是不是", "能不能", "可不可以", "会不会", "有没有", "哪", "什么", "怎么", "几", "多少", "为什么", "如何"},
		Change:       []string{"新", "换", "改", "变", "搬", "现在", "不是"},
		Additional:   []string{"再加", "加一个", "另一个", "另一份", "也要", "也寄", "也送", "第二", "还有一份"},
		Old:          []string{"从", "不是", "原来", "旧", "之前的"},

		AddressWords:  []string{"地址", "住址"},
		AddressKinds:  map[string]string{"账单": "billing", "发票": "billing", "退货": "return", "退回": "return"},
		PlaceMarks:    []string{"省", "市", "区", "县", "镇", "乡", "村", "路", "街", "道", "巷", "弄", "胡同", "大道", "大街", "小区", "花园", "大厦", "广场", "园区"},
		BuildingMarks: []string{"号", "栋", "幢", "座", "楼", "层", "室", "单元", "门"},
		AddressLead:   []string{"是", "为", "到", "至", "寄", "送", "住", "在", "址", "往", "去", "改成", "换成", "变成", "写", "填", "：", ":"},
		AddressTail:   []string{"吧", "呢", "啊", "哈", "了", "谢谢", "麻烦", "就", "寄", "送", "吗", "的", "哦", "嘛", "这", "那", "给", "对"},

		PhoneCues: []string{"手机", "电话", "号码", "联系方式", "打我"},
		IDKinds: map[string]string{
			"订单": "order",
			"账号": "account", "账户": "account", "帐号": "account", "会员号": "account", "会员卡号": "account",
			"运单": "tracking", "快递单": "tracking", "物流单": "tracking", "单号": "tracking",
			"预订": "reservation", "预约号": "reservation",
		},
		IDFiller: []string{"号", "号码", "编号", "是", "为", "：", "#"},

		TimeContext: []string{"送", "配送", "派送", "收货", "到货", "送达", "取件", "上门", "回收", "电话", "来电", "安装", "在家", "方便", "有空", "安排", "短信"},
		Away:        []string{"不在家", "出差", "不方便", "没空", "旅游", "旅行"},
		PastDue:     []string{"本来", "应该已经", "说好", "已经", "过了", "送过", "到过"},
		TimeKeys: []Words{
			{"delivery", []string{"送", "配送", "派送", "收货", "到货", "送达"}},
			{"pickup", []string{"取件", "回收"}},
			{"visit", []string{"上门", "安装"}},
			{"call", []string{"电话", "来电"}},
			{"sms", []string{"短信"}},
		},

		Prefer:     []string{"更喜欢", "比较喜欢", "喜欢", "更希望", "倾向", "偏好", "最好", "优先", "尽量"},
		ReplyVerbs: []string{"回复", "回答", "说", "交流"},
		Languages:  []string{"中文", "英文", "英语", "普通话", "粤语"},
		TimesOfDay: []string{"上午", "下午", "晚上", "周末", "工作日", "早上", "中午"},

		NameLeads:      []string{"我叫", "我的名字是", "我的名字叫"},
		RecipientLeads: []string{"收件人是", "收件人改成", "收件人改为", "收件人写", "收件人：", "收货人是", "收货人改成", "收货人："},
		NameNotFirst:   "了过我你他她",

		FactLeads: []string{"请记住", "记住", "记一下", "请注意"},
	}
}

func chineseTime() Time {
	return Time{
		Dates: []string{`(?:(?P<year>\d{4})\s*年\s*)?(?P<month>\d{1,2})\s*月\s*(?P<day>\d{1,2})\s*[日号號]?`},
		// "6月1日到5日", "6月1日至6月5日", "6月1-5日"
		DateRanges: []string{`(?:(?P<year>\d{4})\s*年\s*)?(?P<month>\d{1,2})\s*月\s*(?P<day>\d{1,2})\s*[日号號]?\s*(?:到|至|-|–|—|~|～)\s*(?:(?P<month2>\d{1,2})\s*月\s*)?(?P<day2>\d{1,2})\s*[日号號]`},
		Clocks:     []string{`(?P<period>早上|早晨|上午|中午|下午|傍晚|晚上|夜里|凌晨)?\s*(?P<hour>\d{1,2}|[零一二两三四五六七八九十]{1,3})\s*[点點时時](?:\s*(?P<min>\d{1,2})\s*分|(?P<half>半))?`},
		DayPeriods: map[string]int{"下午": 12, "傍晚": 12, "晚上": 12, "夜里": 12, "中午": 11},
		Numerals:   map[string]int{"零": 0, "一": 1, "二": 2, "两": 2, "三": 3, "四": 4, "五": 5, "六": 6, "七": 7, "八": 8, "九": 9, "十": 10},
		RangeJoin:  []string{`^\s*(?:,\s*)?(?:到|至|和|-|–|—|~|～)\s*$`},
		Bounds: []Bound{
			{Kind: Until, After: `^\s*(?:之前|以前|前)`, Exclusive: true},
			{Kind: Until, After: `^\s*(?:为止|截止)`},
			{Kind: From, After: `^\s*(?:之后|以后|后)`, Exclusive: true},
			{Kind: From, After: `^\s*(?:起|开始)`},
			{Kind: On, After: `^\s*(?:送|配送|送货|派送|上门|到货|送达)`},
		},
	}
}

func chineseReplies() Replies {
	return Replies{
		Scripts:       []string{"Han"},
		Refusal:       "抱歉，我没有找到可靠的答案，不便妄加猜测。我将为您转接能够帮忙的同事。",
		Handoff:       "我将把这段对话转交给人工同事，由他们继续为您服务。",
		Clarify:       "能再具体说明一下您的需求吗？",
		IntentUnclear: "抱歉，我没有完全理解您的需求，能再具体说明一下吗？",

		IntentQuestion: "请问您是想%s？",
		ListSep:        "，还是",
		ListLastSep:    "，还是",
		EmptyResult:    "我用 %s 没有查到结果。请您确认一下信息是否正确？",
		Confirm:        "在执行 %s（%s）之前，请您确认这是您想要的操作。请回答“是”或“否”。",
		AddressChanged: "请确认使用哪个地址：%s，还是您最近提供的 %s？",

		NotExecutedRetry:   "调用未执行：%s。请修正调用后重试。",
		NotExecutedClarify: "调用未执行：已先请用户澄清。",
		NotExecutedRefuse:  "调用未执行：该请求已被拒绝。",
		NotExecutedHandoff: "调用未执行：对话已转交人工处理。",
		Blocked:            "调用被规则 %s 拦截：%s。请勿重复该调用。",
		Declined:           "调用未执行：人工审核员拒绝了该调用（%s）。",
		NoReason:           "未说明原因",
		AnswerRejected:     "你的上一个回答未被接受：%s。请重新回答。",
		UnknownTool:        "%q 不是可用的工具",
	}
}
