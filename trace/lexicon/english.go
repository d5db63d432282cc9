package lexicon

// english is the English vocabulary. The patterns were the guard's and the
// memory card's before they became data; keep them generic phrasings, never
// one test's or one attack's strings.
func english() *Lexicon {
	return &Lexicon{
		WriteVerbs: []string{
			"add", "append", "approve", "assign", "book", "buy", "cancel", "change", "charge", "close", "create",
			"delete", "deposit", "disable", "edit", "enable", "exchange", "grant", "insert", "invite", "issue", "modify",
			"move", "order", "pay", "post", "publish", "purchase", "refund", "remove", "rename", "reply", "reschedule",
			"reserve", "reset", "return", "revoke", "schedule", "send", "set", "share", "submit", "toggle", "transfer",
			"update", "upload", "upsert", "withdraw", "write",
		},
		Absence: []string{`(?i)\b(no|not any|none|zero)\s+(records?|results?|orders?|matches|entries|data|information|reservations?|transactions?)\b|\bcould(n't| not) find any\b|\bdoes(n't| not) exist\b|\bthere (is|are) no\b`},
		Denial:  []string{`(?i)\b(no such|not|cannot|can't|couldn't|could not|unable|doesn't|does not|isn't|is no)\b`},
		ClauseRefs: []string{
			`(?i)\b(?:clause|section|article|rule|paragraph|policy|§)\s*(?:no\.?\s*)?(?P<num>\d+(?:\.\d+)*)`,
		},
		ClaimWords: map[string][]string{
			"send":     {"sent"},
			"update":   {"updated", "changed"},
			"change":   {"changed", "updated"},
			"modify":   {"modified", "changed", "updated"},
			"cancel":   {"cancell?ed"},
			"submit":   {"submitted", "filed"},
			"book":     {"booked", "reserved"},
			"reserve":  {"reserved", "booked"},
			"transfer": {"transferred"},
			"pay":      {"paid"},
			"refund":   {"refunded"},
			"delete":   {"deleted", "removed"},
			"remove":   {"removed", "deleted"},
			"create":   {"created"},
			"schedule": {"scheduled"},
			"return":   {"returned"},
			"issue":    {"issued"},
		},
		ClaimNegation: []string{`(?i)\b(not|n't|never|unable|could not|failed|instead of)\b`},
		EmptyResults: []string{
			"none", "null", "nil", "no results", "no result", "not found", "no records", "no record found",
			"no records found", "0 rows", "0 results",
		},
		InstructionMarkers: []string{
			`(?i)\bignore (all |any )?(the |your )?(previous|prior|above|earlier|original) (instructions|prompts?|tasks?)\b` +
				`|\b(new|updated|additional|important) instructions?\b` +
				`|<\s*/?\s*(information|instructions?|system|important|admin)\s*>` +
				`|\bbefore you (can )?(solve|do|complete|continue|answer|finish|proceed)\b` +
				`|\b(you|assistant|ai|agent|model),? (must|should|need to|have to) (now |first |also |immediately )?(send|transfer|forward|e-?mail|delete|pay|change|update|visit|click|call|invite|share|post|book|create|reply)\b` +
				`|\bplease (do|perform|execute|complete) the following\b` +
				`|\bthis is an? (important |urgent )?message from\b`,
		},
		// At the start of the turn or of any sentence, line or list item in
		// it ("…, I guess you're right. Yes, please proceed"), or an
		// imperative to proceed anywhere.
		Affirmation: []string{
			`(?im)(?:^|[.!?;:。！？；：]\s*|^\s*(?:[-*•]|\d+[.)])\s*)(?:yes|yeah|yep|yup|ok|okay|sure|confirm(?:ed)?|i confirm|go ahead|please do|please proceed|proceed|do it|correct|that's right|that is right|absolutely)\b|\b(?:please (?:go ahead|proceed)|go ahead and)\b`,
		},
		Memory:    englishMemory(),
		Authority: englishAuthority(),
		Time:      englishTime(),
		Replies:   map[Lang]Replies{EN: englishReplies()},
	}
}

func englishMemory() Memory {
	return Memory{
		Channels: []Words{
			{"sms", []string{"sms", "smses", "text", "texts", "texting", "texted", "text message*", "txt", "txts"}},
			{"call", []string{"call", "calls", "calling", "phone call*", "phone me", "phoning", "by phone", "over the phone", "on the phone", "ring me", "give me a ring", "a ring"}},
			{"email", []string{"email*", "e-mail*", "mail me"}},
			{"push", []string{"push", "push notification*", "app notification*"}},
			{"contact", []string{"contact me", "contacting me", "reach out", "reach me", "get in touch", "disturb me", "bother me"}},
		},
		Negation: []string{
			"don't", "dont", "do not", "never", "stop", "quit", "no more", "no longer", "not", "no", "without",
			"can't", "cannot", "won't", "shouldn't", "mustn't", "didn't", "isn't", "aren't", "wasn't", "no-go",
			"hate", "rather not", "not ok", "not okay", "unsubscribe", "opt out", "block", "turn off", "switch off",
		},
		Allow: []string{
			"fine", "ok", "okay", "alright", "all right", "allowed", "good", "feel free", "go ahead", "go ahead and", "can", "may",
			"no problem", "no problems", "wouldn't mind", "don't mind", "do not mind", "no longer mind", "not mind", "no trouble",
			"welcome", "resume", "turn on", "switch on", "unblock", "re-enable",
		},
		ScopeEnd: []string{"so", "but", "then", "instead", "rather", "and", "or", "if", "because", "until", "though", "although"},
		Reminder: []string{"forget", "forgot", "miss", "missing", "missed", "remember", "recall"},
		Report:   []string{"didn't get", "did not get", "didn't receive", "did not receive", "haven't received", "have not received", "haven't got", "never got", "never received", "not received"},
		Dismiss:  []string{"not relevant", "irrelevant", "never mind", "doesn't matter", "does not matter", "just saying", "just kidding"},

		QuestionStart: []string{
			"can", "could", "would", "will", "do", "does", "did", "is", "are", "was", "were", "have", "has",
			"what", "what's", "whats", "why", "how", "when", "where", "which", "who", "should", "may",
		},
		Change:     []string{"new", "instead", "changed", "change", "moved", "moving", "different", "update*", "switch*", "now", "replace*", "not the"},
		Additional: []string{"also", "as well", "too", "second", "2nd", "another", "additional", "extra", "one more", "a copy"},
		Old:        []string{"from", "not", "instead of", "rather than", "old", "previous"},

		AddressWords: []string{"address", "addr", "adress", "addres"},
		AddressKinds: map[string]string{"billing": "billing", "invoice": "billing", "return": "return", "returns": "return"},
		StreetTypes: []string{
			"street", "st", "road", "rd", "avenue", "ave", "av", "lane", "ln", "drive", "dr", "boulevard", "blvd",
			"way", "court", "ct", "place", "pl", "square", "sq", "terrace", "close", "crescent", "parkway", "pkwy",
			"highway", "hwy", "quay", "row", "walk", "gardens", "grove", "mews", "circle", "plaza",
		},
		Units:      []string{"flat", "apt", "apartment", "unit", "suite", "ste", "room", "floor"},
		Directions: []string{"n", "s", "e", "w", "ne", "nw", "se", "sw", "north", "south", "east", "west"},
		AddressStop: []string{
			"please", "pls", "plz", "thanks", "thank", "thx", "instead", "now", "not", "and", "but", "or", "so", "then",
			"too", "also", "as", "is", "are", "was", "the", "a", "an", "to", "from", "for", "it", "that", "that's",
			"this", "i", "i'm", "my", "me", "we", "you", "ok", "okay", "one", "which", "where", "when", "if",
			"because", "by", "on", "in", "at", "with", "asap", "today", "tomorrow", "right", "though", "anymore",
		},

		PhoneCues: []string{"phone", "mobile", "cell", "number", "tel", "reach me", "call me", "text me", "whatsapp"},
		IDKinds: map[string]string{
			"order": "order", "order id": "order", "account": "account", "account id": "account",
			"tracking": "tracking", "tracking number": "tracking", "parcel": "tracking", "shipment": "tracking",
			"user id": "account", "customer id": "account", "member id": "account",
			"reservation": "reservation", "reservation id": "reservation", "booking": "reservation", "confirmation": "reservation",
		},
		IDFiller: []string{"number", "numbr", "nr", "nbr", "no", "no.", "num", "id", "#", "is", "was", "code", "ref", ":"},

		TimeContext: []string{"deliver*", "ship*", "arriv*", "pick up", "pickup", "collect*", "call*", "phone", "visit*", "install*", "available", "home", "schedul*", "technician", "text*", "sms"},
		Away:        []string{"away", "travel*", "out of town", "not home", "not at home", "not available", "unavailable", "on holiday", "on vacation"},
		PastDue:     []string{"should have", "was", "were", "been", "had", "did", "expected", "promised", "waited", "shipped on", "delivered on", "arrived on", "sent on", "dispatched on", "ordered on", "placed on"},
		TimeKeys: []Words{
			{"delivery", []string{"deliver*", "ship*", "arriv*"}},
			{"pickup", []string{"pick up", "pickup", "collect*"}},
			{"visit", []string{"visit*", "install*", "technician"}},
			{"call", []string{"call*", "phone"}},
			{"sms", []string{"text*", "sms", "txt"}},
		},

		Prefer:     []string{"prefer*", "rather", "better", "best", "ideally", "i like", "i'd like"},
		ReplyVerbs: []string{"reply", "answer", "respond", "write", "speak", "talk"},
		Languages:  []string{"english", "chinese", "mandarin", "cantonese", "french", "spanish", "german"},
		TimesOfDay: []string{"morning", "mornings", "afternoon", "afternoons", "evening", "evenings", "weekend", "weekends", "weekday", "weekdays", "night", "nights"},

		NameLeads:      []string{"my name is", "my name's", "i am called", "i'm called", "call me by", "name:"},
		RecipientLeads: []string{"recipient is", "recipient's name is", "recipient should be", "recipient will be", "addressed to"},
		NameStop: []string{"and", "but", "please", "thanks", "i", "my", "so", "from", "not", "now",
			"on", "in", "at", "the", "a", "an", "wrong", "still", "also", "correct", "spelled", "misspelled", "written", "missing"},

		FactLeads: []string{"please remember that", "please remember", "remember that", "please note that", "please note", "note that", "keep in mind that", "keep in mind"},

		Abbreviations: []string{"st", "rd", "ave", "apt", "no", "dr", "mr", "mrs", "ms", "blvd", "ln", "jr", "sr", "e.g", "i.e", "etc", "ste", "fl", "bldg", "mt", "ft"},
	}
}

func englishTime() Time {
	return Time{
		Months: map[string]int{
			"jan": 1, "january": 1, "feb": 2, "february": 2, "mar": 3, "march": 3, "apr": 4, "april": 4, "may": 5,
			"jun": 6, "june": 6, "jul": 7, "july": 7, "aug": 8, "august": 8, "sep": 9, "sept": 9, "september": 9,
			"oct": 10, "october": 10, "nov": 11, "november": 11, "dec": 12, "december": 12,
		},
		Dates: []string{
			`(?i)\b(?P<month>MONTH)\.?\s+(?P<day>\d{1,2})(?:st|nd|rd|th)?\b(?:,?\s+(?P<year>\d{4})\b)?`,
			`(?i)\b(?P<day>\d{1,2})(?:st|nd|rd|th)?\s+(?:of\s+)?(?P<month>MONTH)\b(?:,?\s+(?P<year>\d{4})\b)?`,
		},
		DateRanges: []string{
			// "between 1 and 5 June", "1-5 June"
			`(?i)\b(?P<day>\d{1,2})(?:st|nd|rd|th)?\s*(?:-|–|to|and|until|till|through)\s*(?P<day2>\d{1,2})(?:st|nd|rd|th)?\s+(?:of\s+)?(?P<month>MONTH)\b(?:,?\s+(?P<year>\d{4})\b)?`,
			// "June 1-5", "June 1 to 5"
			`(?i)\b(?P<month>MONTH)\.?\s+(?P<day>\d{1,2})(?:st|nd|rd|th)?\s*(?:-|–|to|and|until|till|through)\s*(?P<day2>\d{1,2})(?:st|nd|rd|th)?\b(?:,?\s+(?P<year>\d{4})\b)?`,
		},
		Clocks: []string{
			`(?i)(?P<hour>\d{1,2})(?::(?P<min>\d{2}))?\s*(?:(?P<am>a\.?m\b\.?)|(?P<pm>p\.?m\b\.?))|(?P<hour>\d{1,2}):(?P<min>\d{2})(?::\d{2})?|\b(?P<word>noon|midnight)\b`,
		},
		ClockWords: map[string]int{"noon": 12, "midnight": 0},
		RangeJoin:  []string{`(?i)^\s*(?:,\s*)?(?:and|to|until|till|through|thru|-|–|—|~|～)\s*(?:the\s+)?$`},
		Bounds: []Bound{
			{Kind: From, Before: `(?i)\b(?:not\s+before|no\s+earlier\s+than)\s+(?:the\s+)?$`},
			{Kind: Until, Before: `(?i)\bbefore\s+(?:the\s+)?$`, Exclusive: true},
			{Kind: Until, Before: `(?i)\b(?:by|until|till|no\s+later\s+than|not\s+after)\s+(?:the\s+)?$`},
			{Kind: From, Before: `(?i)\bafter\s+(?:the\s+)?$`, Exclusive: true},
			{Kind: From, Before: `(?i)\b(?:from|since|starting(?:\s+from)?)\s+(?:the\s+)?$`},
			{Kind: On, Before: `(?i)\b(?:on|for)\s+(?:the\s+)?$`},
		},
	}
}

func englishReplies() Replies {
	return Replies{
		Humanize:      true,
		Refusal:       "I could not find a reliable answer to this, so I will not guess. Let me transfer you to a colleague who can help.",
		Handoff:       "I am handing this conversation to a human colleague, who will continue from here.",
		Clarify:       "Could you tell me a little more about what you need?",
		IntentUnclear: "Sorry, I am not sure what you need. Could you tell me a little more?",

		IntentQuestion: "Do you want to %s?",
		ListSep:        ", ",
		ListLastSep:    " or ",
		EmptyResult:    "I could not find anything for %s. Could you double-check those details for me?",
		Confirm:        "Before I %s (%s), can you confirm that this is what you want? Please answer yes or no.",
		AddressChanged: "Should I use %s, or %s, the address you gave me most recently?",

		NotExecutedRetry:   "call not executed: %s. Correct the call and try again.",
		NotExecutedClarify: "call not executed: the user was asked to clarify first.",
		NotExecutedRefuse:  "call not executed: the request was refused.",
		NotExecutedHandoff: "call not executed: the conversation was handed to a human.",
		Blocked:            "call blocked by rule %s: %s. Do not repeat it.",
		Declined:           "call not executed: a human reviewer declined it (%s).",
		NoReason:           "no reason given",
		AnswerRejected:     "Your last answer was not accepted: %s. Answer again.",
		UnknownTool:        "%q is not a valid tool",
	}
}
