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
	// Glossary gives, for words a call's arguments spell in English
	// ("gift card" in gift_card_5634230), the words users write for them
	// in this language ("礼品卡"): a user who answers "用礼品卡" names the
	// call's payment method.
	Glossary map[string][]string
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
		Glossary:         mergeLists(a.Glossary, b.Glossary),
	}
}
