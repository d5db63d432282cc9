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
		AddressCues:    []string{"address", "ship", "send", "deliver", "mail", "moved"},
		NameCues:       []string{"name", "recipient"},
		PreferenceCues: []string{"prefer", "rather", "like", "use", "contact", "reach"},
		FactCues:       []string{"remember", "note", "mind"},

		Channels: []Term{
			{"sms", []string{`\b(?:sms(?:es)?|texts?|texting|texted|text\s+messages?|txt)\b`}},
			{"call", []string{`\b(?:(?:phone\s+)?calls?|calling|called|ring(?:ing)?\s+me|phone\s+me)\b`}},
			{"email", []string{`\b(?:e-?mails?|e-?mailing|e-?mailed)\b`}},
			{"contact", []string{`\b(?:contact(?:ing)?\s+me|reach(?:ing)?\s+out|get\s+in\s+touch|disturb\s+me)\b`}},
		},
		Prohibit: []string{`(?i)CH\s+(?:is|are)\s+not\s+(?:ok|okay|fine|allowed|welcome|wanted)`},
		NegationBefore: []string{
			`(?i)\b(?:don'?t|do\s+not|dont|never|stop|quit|no\s+more|no\s+longer|not|no|without|any\s+more|can'?t|cannot|won'?t|shouldn'?t|mustn'?t)\s+(?P<between>(?:[\w']+\s+){0,3}?)CH`,
		},
		ScopeEnd: []string{"so", "but", "then", "instead", "rather", "and", "or", "if", "mind", "because", "until", "problem", "matter", "worries", "worry"},
		Revoke: []string{
			`(?i)CH\s+(?:is|are|'s)\s+(?:now\s+|also\s+|actually\s+)?(?:fine|ok|okay|alright|all\s+right|allowed|good|no\s+problem)`,
			`(?i)\b(?:can|may|could)\s+(?:now\s+|also\s+|again\s+|still\s+)?(?:send\s+(?:me\s+)?|give\s+me\s+a\s+)?CH`,
			`(?i)\b(?:feel\s+free\s+to|go\s+ahead\s+and|ok\s+to|okay\s+to|fine\s+to|happy\s+to\s+(?:get|receive))\s+(?:[\w']+\s+){0,2}?CH`,
			`(?i)\b(?:don'?t|do\s+not|no\s+longer)\s+mind\s+(?:[\w']+\s+){0,2}?CH`,
			`(?i)\b(?:resume|re-?enable|turn\s+on|switch\s+on|allow|unblock)\s+(?:[\w']+\s+){0,2}?CH`,
		},
		// "don't forget to text me", "I don't want to miss your calls"
		Reminder: []string{`(?i)\b(?:forget|forgot|miss|missing|missed)\b`},

		Address: []string{
			`(?i)(?:\bmy\s+(?:new\s+|current\s+)?(?:(?P<kind>delivery|shipping|home|billing|return|mailing)\s+)?address\s+(?:is\s+now|is|has\s+changed\s+to|changed\s+to|will\s+be|should\s+be)` +
				`|\b(?:change|update|switch|set)\s+(?:my\s+|the\s+)?(?:(?P<kind>delivery|shipping|billing|return|mailing)\s+)?address\s+(?:from\s+.+?\s+)?to` +
				`|\b(?P<verb>ship|send|deliver|mail)\s+(?:it|them|the\s+\w+|my\s+\w+|everything|all)?\s*(?:instead\s+)?to` +
				`|\bnew\s+(?:(?P<kind>delivery|shipping|billing|return)\s+)?address\s*(?:is|:)` +
				`|\bi(?:'ve|\s+have)?\s+moved\s+to)\s*(?:now\s+)?:?\s*(?P<value>.+)`,
		},
		AddressKinds: map[string]string{"billing": "billing", "return": "return"},
		AddressLead:  []string{`(?i)^(?:me|us|my\s+(?:place|home|house|office|work|flat|apartment))\s+(?:at|in)\s+`},
		Place: []string{
			`(?i)^\d+\w*\s+\pL|\b(?:street|st|road|rd|avenue|ave|lane|ln|drive|dr|blvd|boulevard|way|court|ct|place|pl|square|sq|apt|apartment|flat|suite|unit|floor|box|highway|hwy|terrace|close|crescent|plaza|parkway)\b.*\d|\d.*\b(?:street|st|road|rd|avenue|ave|lane|ln|drive|dr|blvd|boulevard|way|court|ct|place|pl|square|sq|apt|apartment|flat|suite|unit|floor|box|highway|hwy|terrace|close|crescent|plaza|parkway)\b`,
		},
		Tail: []string{
			`(?i)(?:[\s,;]+(?:please|pls|thanks|thank\s+you|thx|instead|now|from\s+now\s+on|going\s+forward|for\s+now|then|ok|okay))+\W*$|\s+(?:and|but)\s+(?:please|can|could|you|i|my|also)\b.*$|\.\s+(?:please|thanks|thank|can|could|would|also|i|my|we|it|that|this|is|are)\b.*$`,
		},

		PhoneLeads: []string{
			`(?i)\b(?:call|text|reach|contact|ring)\s+me\s+(?:at|on)|\bmy\s+(?:new\s+)?(?:(?:phone|mobile|cell)(?:\s+number)?|number)\s+(?:is\s+now|is|has\s+changed\s+to|changed\s+to)|\bnew\s+(?:phone\s+|mobile\s+)?number\s*(?:is|:)`,
		},

		Names: []string{
			`(?i)\b(?:my\s+name\s+is|(?P<recipient>recipient)(?:'s\s+name)?\s+(?:is|should\s+be|will\s+be))\s+(?P<value>[\p{L}][\p{L}'.-]*(?:\s+[\p{L}][\p{L}'.-]*){0,3})`,
		},
		NameStop: []string{"and", "but", "please", "thanks", "i", "my", "so", "from", "not", "now",
			"on", "in", "at", "the", "a", "an", "wrong", "still", "also", "correct", "spelled", "misspelled", "written", "missing"},

		IDs:     []string{`(?i)\b(?P<kind>order|account|tracking)\s*(?:number|no\.?|num|id|#)?\s*(?:is\s+)?[:#]?\s*(?P<value>[A-Z0-9][A-Z0-9-]{3,19})\b`},
		IDKinds: map[string]string{"order": "order", "account": "account", "tracking": "tracking"},

		TimeContext: []string{`(?i)\b(deliver\w*|ship\w*|arriv\w*|pick\s*up|pickup|collect\w*|call\w*|phone|visit\w*|install\w*|available|home|schedul\w*)\b`},
		Away:        []string{`(?i)\b(?:away|travel\w*|out\s+of\s+town|not\s+(?:at\s+)?home|not\s+available|unavailable|on\s+holiday|on\s+vacation)\b`},
		PastDue:     []string{`(?i)\bshould\s+have\b|\b(?:was|were|been|had|did)\b|\bexpected\b|\bpromised\b|\b\w+ed\s+(?:on|for|by)\b`},
		TimeKeys: []Term{
			{"delivery", []string{`(?i)\b(deliver\w*|ship\w*|arriv\w*)\b`}},
			{"pickup", []string{`(?i)\b(pick\s*up|pickup|collect\w*)\b`}},
			{"visit", []string{`(?i)\b(visit\w*|install\w*)\b`}},
			{"call", []string{`(?i)\b(call\w*|phone)\b`}},
		},

		Prefer:         []string{`(?i)\b(?:i(?:'d|\s+would)?\s+(?:prefer|rather\s+(?:have|get|use))|i\s+like\s+\w+\s+better|please\s+use|(?:contact|reach)\s+me\s+(?:by|via|through|on))\s+(?P<value>.+)`},
		PreferLanguage: []string{`(?i)\b(english|chinese|mandarin|cantonese)\b`},
		PreferTime:     []string{`(?i)\b(morning|afternoon|evening|weekend|weekday|night)s?\b`},

		Facts: []string{`(?i)\b(?:please\s+(?:remember|note)|remember\s+that|note\s+that|keep\s+in\s+mind)\s*(?:that\s+)?:?\s*(?P<value>.{3,})`},

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
