package lexicon

// Actions is the vocabulary of what a user asks the agent to do, read by the
// write-authorization rule: the verbs of requests by the family of action
// they ask for, the words that make a clause a request to the agent or keep
// it from being one, and the kinds of thing an action acts on. A write is
// authorized by a request for its action, not by a word of its topic:
// "summarise my latest email" asks to summarise, and authorizes no send.
//
// Words are plain, in lower case, and may be phrases ("set up", "make a
// reservation"). Words of scripts written with spaces match whole words;
// words of other scripts ("帮我", "预订") match anywhere. They are read in
// the user's own turns (and, for an agent given a task, in the content the
// user handed the task to), never in other third-party text.
type Actions struct {
	// Verbs group, by family of action, the verbs a request asks for the
	// action with, which also name it in tool names: "message": send,
	// email, reply; "pay": pay, transfer, send; "reserve": book, reserve,
	// make a reservation. A verb may belong to several families ("send"
	// a message or money); Marks decide between them.
	Verbs map[string][]string
	// Participles group, by family, the forms of the verbs after an
	// object that a request wants done: "I want the fare refunded", "I'd
	// like the order cancelled". They ask only after a marker; anywhere
	// else they tell what was done ("my order was cancelled").
	Participles map[string][]string
	// Marks group, by family, the words that, beside a verb of several
	// families, pick this one: "pay": money, amount, difference;
	// "message": email, message. A verb with no mark beside it keeps all
	// its families.
	Marks map[string][]string
	// Reads are the verbs of requests that only read, look up or answer:
	// summarise, check, find, recommend, tell me, 总结, 推荐. A clause whose
	// verb is one asks for no write, whatever it names after it.
	Reads []string
	// Things group, by kind, the words for what an action acts on, in tool
	// names and in requests: "lodging": hotel, room; "calendar": event,
	// meeting. A request for an action of a write's family that names only
	// things of other kinds asks for another object.
	Things map[string][]string
	// Markers make the verb after them a request to the agent: please, can
	// you, i want you to, i'd like to, make sure to, 帮我, 请, 我想.
	Markers []string
	// Fillers are words a request may start with that change nothing:
	// also, then, just, now, 也, 先.
	Fillers []string
	// Fronting start a phrase that may come before the verb of a request:
	// a preposition ("to each user write…"), 把 ("把地址改成…").
	Fronting []string
	// Towards are the fronting words that say where an action goes ("to
	// the channel", "via email", "给他"): the thing after one is part of
	// what the action acts on.
	Towards []string
	// Subjects are words that, before the verb and not part of a marker,
	// make the clause a statement or a question rather than a request:
	// subject pronouns and question words (i, it, how, whether, 我, 他).
	Subjects []string
	// Auxiliaries do the same before the verb (will, can, did, 会); right
	// after a verb they make it a noun ("rent is 2200").
	Auxiliaries []string
	// Negations, before the verb, make the clause no request: not, don't,
	// never, 不要, 别.
	Negations []string
	// Joins start a new clause inside a sentence: and, then, 然后.
	Joins []string
	// Several are words that make a request ask for more than one action:
	// each, every, all, both, them, 每, 所有.
	Several []string
}

func mergeActions(a, b Actions) Actions {
	return Actions{
		Verbs:       mergeLists(a.Verbs, b.Verbs),
		Participles: mergeLists(a.Participles, b.Participles),
		Marks:       mergeLists(a.Marks, b.Marks),
		Reads:       union(a.Reads, b.Reads),
		Things:      mergeLists(a.Things, b.Things),
		Markers:     union(a.Markers, b.Markers),
		Fillers:     union(a.Fillers, b.Fillers),
		Fronting:    union(a.Fronting, b.Fronting),
		Towards:     union(a.Towards, b.Towards),
		Subjects:    union(a.Subjects, b.Subjects),
		Auxiliaries: union(a.Auxiliaries, b.Auxiliaries),
		Negations:   union(a.Negations, b.Negations),
		Joins:       union(a.Joins, b.Joins),
		Several:     union(a.Several, b.Several),
	}
}
