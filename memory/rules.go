package memory

import (
	"context"
	"fmt"
	"hash/fnv"
	"regexp"
	"strings"
	"unicode"
	"unicode/utf8"
)

// RuleBased returns the extractor that needs no model: patterns for English
// and Chinese that find prohibitions on contact channels and their
// revocation, addresses, phone numbers, names, order, account and tracking
// ids, time ranges, preferences and pinned facts. It is deterministic and
// safe for concurrent use; CardFromTrace runs it over traces that carry no
// card steps.
//
// Channels are normalised: SMS, text, 短信 are "sms"; call, phone call, 电话
// are "call"; email, 邮件 are "email"; contact me, 联系我, 打扰 are
// "contact". A revocation is returned only for a prohibition that is
// active, in current or earlier in the same text. Questions state nothing
// about prohibitions ("can you text me?").
func RuleBased() Extractor { return ruleBased{} }

type ruleBased struct{}

func (ruleBased) Extract(_ context.Context, turn int, text string, current []Constraint) ([]Constraint, error) {
	x := extraction{turn: turn, active: map[slot]string{}}
	for _, c := range current {
		if c.Status == Active {
			x.active[slot{c.Kind, c.Key}] = c.Value
		}
	}
	for _, s := range sentences(text) {
		x.sentence(s)
	}
	return x.out, nil
}

type slot struct {
	kind Kind
	key  string
}

// extraction is the state of one RuleBased.Extract call.
type extraction struct {
	turn   int
	active map[slot]string // values of the active constraints: the card's and those found so far
	out    []Constraint
}

func (x *extraction) add(kind Kind, key, value string, status State) {
	c := normalize(Constraint{Kind: kind, Key: key, Value: value, Status: status, Source: SourceRule}, x.turn)
	if c.Validate() != nil {
		return
	}
	x.out = append(x.out, c)
	if c.Status == Active {
		x.active[slot{c.Kind, c.Key}] = c.Value
	} else {
		delete(x.active, slot{c.Kind, c.Key})
	}
}

func (x *extraction) isActive(kind Kind, key string) bool {
	_, ok := x.active[slot{kind, key}]
	return ok
}

// sentence extracts what one sentence states. Cheap word checks come
// before the patterns, which cost far more.
func (x *extraction) sentence(s sentence) {
	prohibited := false
	if !s.question {
		for _, cl := range clauses(s.text) {
			if x.channelClause(cl) {
				prohibited = true
			}
		}
	}
	lower := strings.ToLower(s.text)
	digits := strings.ContainsAny(s.text, "0123456789")
	if has(lower, "address", "ship", "send", "deliver", "mail", "moved", "地址", "送", "寄", "发到") {
		x.address(s)
	}
	if digits {
		x.phone(s.text)
	}
	if has(lower, "name", "recipient", "我叫", "名字", "收件人", "收货人") {
		x.name(s.text)
	}
	if digits {
		x.ids(s.text)
	}
	if prohibited || s.question {
		return
	}
	x.timeRange(s.text)
	if has(lower, "prefer", "rather", "like", "use", "contact", "reach", "喜欢", "希望", "倾向", "偏好", "最好", "优先", "联系") {
		x.preference(s.text)
	}
	if has(lower, "remember", "note", "mind", "记住", "记一下", "注意") {
		x.fact(s.text)
	}
}

// has reports whether s contains any of words.
func has(s string, words ...string) bool {
	for _, w := range words {
		if strings.Contains(s, w) {
			return true
		}
	}
	return false
}

// Channels.

var channelPatterns = [...]struct{ name, re string }{
	{"sms", `(?:\b(?:sms(?:es)?|texts?|texting|texted|text\s+messages?|txt)\b|短信|短讯)`},
	{"call", `(?:\b(?:(?:phone\s+)?calls?|calling|called|ring(?:ing)?\s+me|phone\s+me)\b|电话|来电|致电)`},
	{"email", `(?:\b(?:e-?mails?|e-?mailing|e-?mailed)\b|邮件|邮箱|电邮)`},
	{"contact", `(?:\b(?:contact(?:ing)?\s+me|reach(?:ing)?\s+out|get\s+in\s+touch|disturb\s+me)\b|联系我|打扰)`},
}

// channelRule holds the compiled patterns of one channel.
type channelRule struct {
	name      string
	word      *regexp.Regexp   // the channel alone, as the whole string
	any       *regexp.Regexp   // the channel anywhere
	neg       []*regexp.Regexp // prohibitions
	negBefore *regexp.Regexp   // English negation before the channel, with the words between in group 1
	revoke    []*regexp.Regexp // revocations
}

var channels = func() []channelRule {
	var rules []channelRule
	for _, p := range channelPatterns {
		ch := p.re
		sub := func(tmpl string) *regexp.Regexp {
			return regexp.MustCompile(strings.ReplaceAll(tmpl, "CH", ch))
		}
		rules = append(rules, channelRule{
			name:      p.name,
			word:      sub(`(?i)^\s*CH\s*$`),
			any:       sub(`(?i)CH`),
			negBefore: sub(`(?i)\b(?:don'?t|do\s+not|dont|never|stop|quit|no\s+more|no\s+longer|not|no|without|any\s+more|can'?t|cannot|won'?t|shouldn'?t|mustn'?t)\s+((?:[\w']+\s+){0,3}?)CH`),
			neg: []*regexp.Regexp{
				sub(`(?i)CH\s+(?:is|are)\s+not\s+(?:ok|okay|fine|allowed|welcome|wanted)`),
				sub(`(?:不要|别|不用|不需要|不必|请勿|勿|禁止|不想|不希望|不许|不准|不能|不可以|不再|拒绝)[^，,。]{0,8}?CH`),
				sub(`(?:取消|关闭|停止|屏蔽)[^，,。]{0,2}?CH|免打扰`),
				sub(`CH[^，,。]{0,4}?(?:不要|别|不用|不需要|不必|勿|免了|算了)`),
			},
			revoke: []*regexp.Regexp{
				sub(`(?i)CH\s+(?:is|are|'s)\s+(?:now\s+|also\s+|actually\s+)?(?:fine|ok|okay|alright|all\s+right|allowed|good|no\s+problem)`),
				sub(`(?i)\b(?:can|may|could)\s+(?:now\s+|also\s+|again\s+|still\s+)?(?:send\s+(?:me\s+)?|give\s+me\s+a\s+)?CH`),
				sub(`(?i)\b(?:feel\s+free\s+to|go\s+ahead\s+and|ok\s+to|okay\s+to|fine\s+to|happy\s+to\s+(?:get|receive))\s+(?:[\w']+\s+){0,2}?CH`),
				sub(`(?i)\b(?:don'?t|do\s+not|no\s+longer)\s+mind\s+(?:[\w']+\s+){0,2}?CH`),
				sub(`(?i)\b(?:resume|re-?enable|turn\s+on|switch\s+on|allow|unblock)\s+(?:[\w']+\s+){0,2}?CH`),
				sub(`可以[^，,。]{0,6}?CH`),
				sub(`CH[^，,。]{0,6}?(?:可以|没关系|没问题|也行|行了|无所谓)`),
				sub(`(?:恢复|重新开启|重新打开|开启|打开|开通)[^，,。]{0,4}?CH`),
			},
		})
	}
	return rules
}()

// channelOf returns the channel that s names as a whole ("Text messages"
// -> "sms"), or "".
func channelOf(s string) string {
	for _, c := range channels {
		if c.word.MatchString(s) {
			return c.name
		}
	}
	return ""
}

// channelsIn returns the channels mentioned in s.
func channelsIn(s string) []string {
	var out []string
	for _, c := range channels {
		if c.any.MatchString(s) {
			out = append(out, c.name)
		}
	}
	return out
}

var (
	// "don't forget to text me", "I don't want to miss your calls": not prohibitions
	reminder = regexp.MustCompile(`(?i)\b(?:forget|forgot|miss|missing|missed)\b|忘|错过|漏`)
	// conjunctions that end the scope of an English negation
	negScopeEnd = map[string]bool{"so": true, "but": true, "then": true, "instead": true, "rather": true, "and": true, "or": true, "if": true, "mind": true, "because": true, "until": true, "problem": true, "matter": true, "worries": true, "worry": true}
)

// channelClause looks for a prohibition or a revocation about a contact
// channel in one clause, and reports whether it found a prohibition.
func (x *extraction) channelClause(cl string) bool {
	if reminder.MatchString(cl) {
		return false
	}
	found := false
	for i := range channels {
		c := &channels[i]
		if !c.any.MatchString(cl) || (found && c.name == "contact") {
			continue // "don't call to contact me" prohibits calls, not contact
		}
		if c.prohibits(cl) {
			value := strings.TrimSpace(cl)
			if w, ok := findWindow(cl); ok {
				value = w.String()
			}
			x.add(KindProhibition, c.name, value, Active)
			if v, ok := x.active[slot{KindPreference, "channel"}]; ok && v == c.name {
				x.add(KindPreference, "channel", v, Revoked) // a channel the user prefers no more
			}
			found = true
			continue
		}
		if c.revokes(cl) && x.isActive(KindProhibition, c.name) {
			x.add(KindProhibition, c.name, strings.TrimSpace(cl), Revoked)
		}
	}
	return found
}

func (c *channelRule) prohibits(cl string) bool {
	for _, re := range c.neg {
		if re.MatchString(cl) {
			return true
		}
	}
	for _, m := range c.negBefore.FindAllStringSubmatch(cl, -1) {
		ok := true
		for _, w := range strings.Fields(strings.ToLower(m[1])) {
			if negScopeEnd[w] {
				ok = false
				break
			}
		}
		if ok {
			return true
		}
	}
	return false
}

func (c *channelRule) revokes(cl string) bool {
	for _, re := range c.revoke {
		for _, loc := range re.FindAllStringIndex(cl, -1) {
			// "不可以发短信", "不能", "别" before the match negate it.
			before := cl[:loc[0]]
			if r, _ := utf8.DecodeLastRuneInString(before); r == '不' || r == '别' || r == '勿' {
				continue
			}
			return true
		}
	}
	return false
}

// Addresses.

var (
	enAddress = regexp.MustCompile(`(?i)(?:\bmy\s+(?:new\s+|current\s+)?(?:(delivery|shipping|home|billing|return|mailing)\s+)?address\s+(?:is\s+now|is|has\s+changed\s+to|changed\s+to|will\s+be|should\s+be)|\b(?:change|update|switch|set)\s+(?:my\s+|the\s+)?(?:(delivery|shipping|billing|return|mailing)\s+)?address\s+(?:from\s+.+?\s+)?to|\b((?:ship|send|deliver|mail))\s+(?:it|them|the\s+\w+|my\s+\w+|everything|all)?\s*(?:instead\s+)?to|\bnew\s+(?:(delivery|shipping|billing|return)\s+)?address\s*(?:is|:)|\bi(?:'ve|\s+have)?\s+moved\s+to)\s*(?:now\s+)?:?\s*(.+)`)
	zhAddress = regexp.MustCompile(`(?:(收货|送货|配送|快递|邮寄|家庭|账单|退货)?地址(?:从[^，,。]+?)?\s*(?:已经)?(?:改成|改为|换成|变成|变更为|更新为|修改为|改到|是|为|:|：)|(改送到|改寄到|送到|寄到|发到|送至|寄至|配送到|送去))\s*(.+)`)
	zhDone    = regexp.MustCompile(`(?:已经|已|没有|没|还没|能不能|能|会|什么时候|何时|几时|哪天)\s*$`)
	enLead    = regexp.MustCompile(`(?i)^(?:me|us|my\s+(?:place|home|house|office|work|flat|apartment))\s+(?:at|in)\s+`)
	enPlace   = regexp.MustCompile(`(?i)^\d+\w*\s+\pL|\b(?:street|st|road|rd|avenue|ave|lane|ln|drive|dr|blvd|boulevard|way|court|ct|place|pl|square|sq|apt|apartment|flat|suite|unit|floor|box|highway|hwy|terrace|close|crescent|plaza|parkway)\b.*\d|\d.*\b(?:street|st|road|rd|avenue|ave|lane|ln|drive|dr|blvd|boulevard|way|court|ct|place|pl|square|sq|apt|apartment|flat|suite|unit|floor|box|highway|hwy|terrace|close|crescent|plaza|parkway)\b`)
	enTail    = regexp.MustCompile(`(?i)(?:[\s,;]+(?:please|pls|thanks|thank\s+you|thx|instead|now|from\s+now\s+on|going\s+forward|for\s+now|then|ok|okay))+\W*$|\s+(?:and|but)\s+(?:please|can|could|you|i|my|also)\b.*$|\.\s+(?:please|thanks|thank|can|could|would|also|i|my|we|it|that|this|is|are)\b.*$`)
	zhTail    = regexp.MustCompile(`(?:吧|吗|呢|啊|哦|了|谢谢|麻烦了|麻烦你|谢啦)+$`)
	zhPlace   = regexp.MustCompile(`[省市区县镇乡村路街道巷弄号楼室栋座层园苑]|大道|小区`)
	hasDigit  = regexp.MustCompile(`\d`)
	pastDue   = regexp.MustCompile(`(?i)\bshould\s+have\b|\b(?:was|were|been|had|did)\b|\bexpected\b|\bpromised\b|\b\w+ed\s+(?:on|for|by)\b|本来|应该已经|说好|已经|过了|送过|到过`)
)

func addressKey(kind string) string {
	switch strings.ToLower(kind) {
	case "billing", "账单":
		return "billing"
	case "return", "退货":
		return "return"
	}
	return "delivery"
}

func (x *extraction) address(s sentence) {
	if m := enAddress.FindStringSubmatch(s.text); m != nil {
		if s.question && m[3] != "" {
			return // "can you ship it to ...?" asks, "my address is ...?" still states
		}
		v := strings.TrimSpace(enLead.ReplaceAllString(m[5], ""))
		if i := strings.IndexAny(v, "，。！？"); i >= 0 {
			v = v[:i]
		}
		for {
			t := enTail.ReplaceAllString(v, "")
			t = strings.TrimRight(t, " ,;:.!?")
			if t == v {
				break
			}
			v = t
		}
		if enPlace.MatchString(v) && utf8.RuneCountInString(v) <= 160 {
			x.add(KindAddress, addressKey(m[1]+m[2]+m[4]), v, Active)
		}
		return
	}
	for _, cl := range clauses(s.text) {
		loc := zhAddress.FindStringSubmatchIndex(cl)
		if loc == nil {
			continue
		}
		m := submatches(cl, loc)
		if m[2] != "" && (s.question || zhDone.MatchString(cl[:loc[0]])) {
			continue // "什么时候能送到…？", "已经送到…了"
		}
		v := strings.TrimSpace(zhTail.ReplaceAllString(strings.TrimSpace(m[3]), ""))
		if zhPlace.MatchString(v) && utf8.RuneCountInString(v) <= 80 {
			x.add(KindAddress, addressKey(m[1]), v, Active)
		}
	}
}

// Phone numbers.

var (
	phoneNum = `(\+?\d[\d\s().-]{5,18}\d)`
	enPhone  = regexp.MustCompile(`(?i)(?:\b(?:call|text|reach|contact|ring)\s+me\s+(?:at|on)|\bmy\s+(?:new\s+)?(?:(?:phone|mobile|cell)(?:\s+number)?|number)\s+(?:is\s+now|is|has\s+changed\s+to|changed\s+to)|\bnew\s+(?:phone\s+|mobile\s+)?number\s*(?:is|:))\s*:?\s*` + phoneNum)
	zhPhone  = regexp.MustCompile(`(?:手机号码?|电话号码?|联系电话|联系方式|手机|号码)\s*(?:已经)?(?:是|改成|改为|换成|变成|更新为|为|:|：)\s*` + phoneNum)
)

func (x *extraction) phone(s string) {
	m := enPhone.FindStringSubmatch(s)
	if m == nil {
		m = zhPhone.FindStringSubmatch(s)
	}
	if m == nil {
		return
	}
	var b strings.Builder
	for i, r := range m[1] {
		if unicode.IsDigit(r) || (r == '+' && i == 0) {
			b.WriteRune(r)
		}
	}
	if n := b.Len(); n >= 7 && n <= 16 {
		x.add(KindPhone, "mobile", b.String(), Active)
	}
}

// Names.

var (
	enName = regexp.MustCompile(`(?i)\b(?:my\s+name\s+is|(recipient)(?:'s\s+name)?\s+(?:is|should\s+be|will\s+be))\s+([\p{L}][\p{L}'.-]*(?:\s+[\p{L}][\p{L}'.-]*){0,3})`)
	zhName = regexp.MustCompile(`(?:我叫|我的名字(?:是|叫)|(收件人|收货人)(?:姓名)?(?:是|改成|改为|换成|写成?|:|：))\s*([\p{Han}·]{2,6}|[A-Za-z][A-Za-z .'-]{1,30}[A-Za-z])`)
)

var enNameStop = map[string]bool{"and": true, "but": true, "please": true, "thanks": true, "i": true, "my": true, "so": true, "from": true, "not": true, "now": true,
	"on": true, "in": true, "at": true, "the": true, "a": true, "an": true, "wrong": true, "still": true, "also": true, "correct": true, "spelled": true, "misspelled": true, "written": true, "missing": true}

func (x *extraction) name(s string) {
	if m := enName.FindStringSubmatch(s); m != nil {
		words := strings.Fields(m[2])
		n := 0
		for n < len(words) && !enNameStop[strings.ToLower(words[n])] {
			n++
		}
		if n > 0 {
			x.add(KindName, nameKey(m[1]), strings.Join(words[:n], " "), Active)
		}
		return
	}
	if m := zhName.FindStringSubmatch(s); m != nil {
		v := strings.TrimSpace(zhTail.ReplaceAllString(m[2], ""))
		if r, _ := utf8.DecodeRuneInString(v); r != '了' && r != '过' && utf8.RuneCountInString(v) >= 2 {
			x.add(KindName, nameKey(m[1]), v, Active)
		}
	}
}

func nameKey(recipient string) string {
	if recipient != "" {
		return "recipient"
	}
	return "name"
}

// Ids.

var (
	enID   = regexp.MustCompile(`(?i)\b(order|account|tracking)\s*(?:number|no\.?|num|id|#)?\s*(?:is\s+)?[:#]?\s*([A-Z0-9][A-Z0-9-]{3,19})\b`)
	zhID   = regexp.MustCompile(`(订单|账号|账户|帐号|会员号|会员卡号|运单|快递单|物流单)(?:号|编号|号码)?\s*(?:是|为)?\s*[:：#]?\s*([A-Za-z0-9][A-Za-z0-9-]{3,19})`)
	bareID = regexp.MustCompile(`\b([A-Z]{1,3}\d{3,12})\b`)
)

var idKinds = map[string]string{
	"order": "order", "订单": "order",
	"account": "account", "账号": "account", "账户": "account", "帐号": "account", "会员号": "account", "会员卡号": "account",
	"tracking": "tracking", "运单": "tracking", "快递单": "tracking", "物流单": "tracking",
}

func (x *extraction) ids(s string) {
	seen := map[string]bool{}
	add := func(kind, id string) {
		if !hasDigit.MatchString(id) || seen[strings.ToLower(id)] {
			return
		}
		seen[strings.ToLower(id)] = true
		x.add(KindID, kind+":"+strings.ToLower(id), id, Active)
	}
	for _, re := range []*regexp.Regexp{enID, zhID} {
		for _, m := range re.FindAllStringSubmatch(s, -1) {
			add(idKinds[strings.ToLower(m[1])], m[2])
		}
	}
	for _, m := range bareID.FindAllStringSubmatch(s, -1) {
		add("order", m[1])
	}
}

// Time ranges.

var (
	timeContext = regexp.MustCompile(`(?i)\b(deliver\w*|ship\w*|arriv\w*|pick\s*up|pickup|collect\w*|call\w*|phone|visit\w*|install\w*|available|home|schedul\w*)\b|送|配送|派送|收货|到货|送达|取件|上门|回收|电话|来电|安装|在家|方便|有空|安排`)
	awayContext = regexp.MustCompile(`(?i)\b(?:away|travel\w*|out\s+of\s+town|not\s+(?:at\s+)?home|not\s+available|unavailable|on\s+holiday|on\s+vacation)\b|不在家|出差|不方便|没空|旅游|旅行`)
	timeKeys    = [...]struct {
		key string
		re  *regexp.Regexp
	}{
		{"delivery", regexp.MustCompile(`(?i)\b(deliver\w*|ship\w*|arriv\w*)\b|送|配送|派送|收货|到货|送达`)},
		{"pickup", regexp.MustCompile(`(?i)\b(pick\s*up|pickup|collect\w*)\b|取件|回收`)},
		{"visit", regexp.MustCompile(`(?i)\b(visit\w*|install\w*)\b|上门|安装`)},
		{"call", regexp.MustCompile(`(?i)\b(call\w*|phone)\b|电话|来电`)},
	}
)

func (x *extraction) timeRange(s string) {
	if !timeContext.MatchString(s) || pastDue.MatchString(s) {
		return
	}
	w, ok := findWindow(s)
	if !ok {
		return
	}
	key := "delivery"
	for _, k := range timeKeys {
		if k.re.MatchString(s) {
			key = k.key
			break
		}
	}
	if awayContext.MatchString(s) {
		// "I'm away 1-5 June": deliveries are prohibited inside the window.
		x.add(KindProhibition, key, w.String(), Active)
		return
	}
	if w.clock() {
		key += " hours"
	}
	x.add(KindTimeRange, key, w.String(), Active)
}

// Preferences.

var (
	enPrefer = regexp.MustCompile(`(?i)\b(?:i(?:'d|\s+would)?\s+(?:prefer|rather\s+(?:have|get|use))|i\s+like\s+\w+\s+better|please\s+use|(?:contact|reach)\s+me\s+(?:by|via|through|on))\s+(.+)`)
	zhPrefer = regexp.MustCompile(`(?:更喜欢|比较喜欢|更希望|倾向于|偏好|最好是|最好用|优先用?)(.+)|(?:请)?(?:用|通过)(.+?)联系我`)
	langPref = regexp.MustCompile(`(?i)\b(english|chinese|mandarin|cantonese)\b|中文|英文|英语|普通话|粤语`)
	timePref = regexp.MustCompile(`(?i)\b(morning|afternoon|evening|weekend|weekday|night)s?\b|上午|下午|晚上|周末|工作日|早上`)
)

func (x *extraction) preference(s string) {
	m := enPrefer.FindStringSubmatch(s)
	if m == nil {
		m = zhPrefer.FindStringSubmatch(s)
		if m != nil && m[1] == "" {
			m[1] = m[2]
		}
	}
	if m == nil {
		return
	}
	v := strings.TrimRight(enTail.ReplaceAllString(zhTail.ReplaceAllString(strings.TrimSpace(m[1]), ""), ""), " ,;:.!?")
	if v == "" {
		return
	}
	switch ch := channelsIn(v); {
	case len(ch) == 1:
		x.add(KindPreference, "channel", ch[0], Active)
		if x.isActive(KindProhibition, ch[0]) {
			x.add(KindProhibition, ch[0], strings.TrimSpace(s), Revoked)
		}
	case langPref.MatchString(v):
		x.add(KindPreference, "language", v, Active)
	case timePref.MatchString(v):
		x.add(KindPreference, "time", v, Active)
	default:
		x.add(KindPreference, "other", v, Active)
	}
}

// Facts.

var (
	enFact = regexp.MustCompile(`(?i)\b(?:please\s+(?:remember|note)|remember\s+that|note\s+that|keep\s+in\s+mind)\s*(?:that\s+)?:?\s*(.{3,})`)
	zhFact = regexp.MustCompile(`(?:请|麻烦)?(?:记住|记一下|请注意)[:：，,]\s*(.{4,})|(?:请|麻烦)?记住(.{4,})`)
)

func (x *extraction) fact(s string) {
	m := enFact.FindStringSubmatch(s)
	if m == nil {
		m = zhFact.FindStringSubmatch(s)
	}
	if m == nil {
		return
	}
	v := strings.TrimSpace(strings.Join(m[1:], "")) // the one group that matched
	x.add(KindFact, factKey(v), v, Active)
}

// factKey names a fact by a digest of its folded text, so that restating it
// does not add a version.
func factKey(v string) string {
	h := fnv.New32a()
	h.Write([]byte(fold(v)))
	return fmt.Sprintf("fact-%08x", h.Sum32())
}

// Splitting text.

type sentence struct {
	text     string
	question bool
}

// abbreviations that do not end a sentence.
var abbrev = map[string]bool{"st": true, "rd": true, "ave": true, "apt": true, "no": true, "dr": true, "mr": true, "mrs": true, "ms": true, "blvd": true, "ln": true, "jr": true, "sr": true, "e.g": true, "i.e": true, "etc": true, "ste": true, "fl": true, "bldg": true, "mt": true, "ft": true}

// sentences splits text at 。！？!?；; and line breaks, and at a period
// followed by a space or the end unless it closes an abbreviation.
func sentences(text string) []sentence {
	var out []sentence
	start := 0
	emit := func(end int, q bool) {
		if t := strings.TrimSpace(text[start:end]); t != "" {
			out = append(out, sentence{t, q})
		}
	}
	for i, r := range text {
		switch r {
		case '\n', '。', '！', '!', '；', ';', '？', '?':
			emit(i, r == '？' || r == '?')
			start = i + utf8.RuneLen(r)
		case '.':
			if i+1 < len(text) && text[i+1] != ' ' && text[i+1] != '\n' {
				continue
			}
			w := text[start:i]
			if j := strings.LastIndexAny(w, " \t(,"); j >= 0 {
				w = w[j+1:]
			}
			if abbrev[strings.ToLower(w)] {
				continue
			}
			emit(i, false)
			start = i + 1
		}
	}
	emit(len(text), false)
	return out
}

// clauses splits a sentence at commas.
func clauses(s string) []string {
	return strings.FieldsFunc(s, func(r rune) bool { return r == ',' || r == '，' || r == '、' })
}

// fold lower-cases s and drops everything but letters and digits, to
// compare values that differ in spacing and punctuation.
func fold(s string) string {
	var b strings.Builder
	b.Grow(len(s))
	for _, r := range s {
		if unicode.IsLetter(r) || unicode.IsDigit(r) {
			b.WriteRune(unicode.ToLower(r))
		}
	}
	return b.String()
}
