package lexicon

// Claims is the vocabulary of the false-claim rule: how tools and answers
// name a kind of effect (a channel: a text message, an e-mail, a refund, a
// cancellation), and the markers that make a clause of an answer a claim
// that the effect happened, or take the claim back.
//
// Words are plain text, not patterns, matched in lower case. A word in
// Latin script matches whole words, and a final "*" any ending ("refund*":
// "refunded"); a word that starts with an apostrophe ("'ll") is the ending
// of the word before it. Words in other scripts match anywhere.
type Claims struct {
	// Channels are the kinds of effect, in the order they are tried. Merge
	// joins the words of channels of the same name.
	Channels []ClaimChannel
	// Done are completion markers: with a channel's Noun in one clause, a
	// claim that the effect happened ("has been", "you'll receive", "已").
	Done []string
	// Weak are completion particles (了, 过) that make a claim only next to
	// a Verb of the channel, or right after its Noun (退款了).
	Weak []string
	// Place are locative particles that may stand between a Noun and a
	// Weak particle: 邮箱里了, 手机上了.
	Place []string
	// Sent claims a message went out without naming how ("sent it over"):
	// a claim of the turn's messaging channels.
	Sent []string
	// Bare says it is done with no object ("Done!", "搞定"), in a short
	// clause: a claim of the turn's effects.
	Bare []string
	// Negation marks a clause that says something did not happen; it also
	// takes back what earlier clauses of its sentence claimed ("I've sent
	// the text, but it bounced").
	Negation []string
	// Hedge marks a clause that is an offer, a question or an attempt, not
	// a claim ("shall I", "要不要", "尝试").
	Hedge []string
	// Condition marks a clause, and the rest of its sentence, as what will
	// happen if something else does ("once the gateway is back", "如果").
	Condition []string
	// Aside marks a clause that speaks to the user, not about the effect;
	// its negation does not take back an earlier claim ("please don't
	// share the code").
	Aside []string
	// Person marks a clause addressed to the user or told by the agent. A
	// claim of an effect no tool was called for at all must have one:
	// "refunds go back within 14 days" states a policy, "you'll get your
	// refund" makes a claim.
	Person []string
	// UserDid, right before a Did word, makes it the user's action: "the
	// card you paid with", "您已支付". ForUser, right before that, makes
	// the user whom the agent acted for: "帮您撤销了".
	UserDid, ForUser []string
	// Courtesy are set phrases that hold a negation and negate nothing
	// ("no problem", "没关系"); they are ignored.
	Courtesy []string
	// Breaks start a new clause: "but", "但是".
	Breaks []string
	// Neutral are phrases that hold a channel's word and name something
	// else: "return address", "退货地址".
	Neutral []string

	// Who did it. A claim is the agent's own: its actor is the agent ("I've
	// sent", "已为您申请"), or it has none ("your refund has been
	// processed"); a clause whose actor is the user or someone else claims
	// nothing of the agent's. The lists below find the actor of a Did or
	// Done word from the words around it.

	// Agent are subjects that make the agent the actor: in English, of the
	// verb right after them, Aux words aside ("I've sent", "we have
	// refunded"); in scripts without spaces, of a claim anywhere in its
	// clause with no Future word (我, 为您, 帮您). A claim in that form of an
	// effect no tool was called for at all is a first-person claim: complete
	// evidence.
	Agent []string
	// Aux are words that may stand between a subject and its verb: "have",
	// "just", "successfully".
	Aux []string
	// Passive are the auxiliaries of the passive voice ("has been", "was"):
	// right before a Did word they make the subject the thing acted on.
	Passive []string
	// ThirdParty are subjects and objects that name someone else ("he",
	// "they", "who", "him"): "the employees who sent them" claims nothing of
	// the agent's.
	ThirdParty []string
	// Possessive, before the word right before a Did word, makes that word
	// someone else: "your colleague transferred".
	Possessive []string
	// Source, after a Did or Done word in its sentence, names its actor
	// when an e-mail address, a ThirdParty word or a Possessive and a word
	// follows: "sent from security@…", "paid by your landlord".
	Source []string
	// Reported marks what follows in its sentence as what a document, a
	// message or someone says: "the note says the rent was paid".
	Reported []string
	// Instruction marks a sentence as telling the user how to do something
	// ("here's how to return your items"), and, when it ends with a colon,
	// the list items that follow it.
	Instruction []string
	// Future marks a clause as what will happen. An English one claims an
	// effect no tool was called for only as a delivery to the user ("you'll
	// get a text"): "a refund will be issued" states a policy.
	Future []string

	// What the user asked for. A claim of an effect no tool was called for
	// that is not first-person is weak evidence (a warning), and only when
	// the user asked for the effect: a user sentence with a Request word
	// (or that starts with the channel's word) holds one of the channel's
	// words, not followed by a Copula word ("my email is …" asks for
	// nothing).
	Request, Copula []string
}

// ClaimChannel is one kind of effect a tool can have, and how an answer
// names it.
type ClaimChannel struct {
	// Name is the channel's name, which ToolPolicy.Channel may give a tool:
	// "sms", "email", "refund", ...
	Name string
	// Rank decides between channels a tool's name gives: the highest wins
	// (cancel_reservation is a cancellation, update_address an address
	// change).
	Rank int
	// Messaging channels carry a message: "sent it to you" claims them.
	Messaging bool
	// Absent channels are claimed falsely when no tool of theirs was called
	// at all, though one was offered. Channels whose state answers often
	// read back from a look-up ("your appointment is booked") are not.
	Absent bool
	// Tool are stems of the words of a tool's name or description that
	// give the channel: "sms" in send_sms, "reimburs" in
	// issue_reimbursement.
	Tool []string
	// Keys are argument keys that give the channel when name and
	// description do not.
	Keys []string
	// Also are argument keys with which a call that happened, of whatever
	// channel, had this channel's effect too: a flight change called with
	// a payment_method_id paid or refunded the difference.
	Also []string
	// Noun names the channel in an answer; with a completion marker it is
	// a claim.
	Noun []string
	// Did says on its own that the effect happened: "texted", "refunded".
	Did []string
	// Verb are verbs that, with a Weak particle, complete a Noun: 发 in
	// "发了短信".
	Verb []string
	// Done, when set, replaces the general completion markers for this
	// channel: an address is claimed by "updated", not by "has been".
	Done []string
}

// Results is how a tool's JSON result says, in its structure, that the
// call did not happen: a flag that is false or 0, a status holding a
// failure word, an error field that is not empty, a code that is neither 0
// nor 2xx, or nothing accepted and something rejected. Keys and words are
// matched in lower case.
type Results struct {
	// Flags are keys whose false or 0 means the call did not happen:
	// "accepted", "success", "sent".
	Flags []string
	// Status are keys holding a status word: "status", "state".
	Status []string
	// Failures are status words that mean the call did not happen:
	// "failed", "bounced", "失败".
	Failures []string
	// Errors are keys whose non-empty value is an error.
	Errors []string
	// Codes are keys holding a numeric code.
	Codes []string
}

func mergeClaims(a, b Claims) Claims {
	chans := make([]ClaimChannel, 0, len(a.Channels)+len(b.Channels))
	for _, c := range a.Channels {
		chans = append(chans, mergeChannel(ClaimChannel{}, c))
	}
	for _, c := range b.Channels {
		i := -1
		for k := range chans {
			if chans[k].Name == c.Name {
				i = k
				break
			}
		}
		if i < 0 {
			chans = append(chans, mergeChannel(ClaimChannel{}, c))
			continue
		}
		chans[i] = mergeChannel(chans[i], c)
	}
	if len(chans) == 0 {
		chans = nil
	}
	return Claims{
		Channels:  chans,
		Done:      union(a.Done, b.Done),
		Weak:      union(a.Weak, b.Weak),
		Place:     union(a.Place, b.Place),
		Sent:      union(a.Sent, b.Sent),
		Bare:      union(a.Bare, b.Bare),
		Negation:  union(a.Negation, b.Negation),
		Hedge:     union(a.Hedge, b.Hedge),
		Condition: union(a.Condition, b.Condition),
		Aside:     union(a.Aside, b.Aside),
		Person:    union(a.Person, b.Person),
		UserDid:   union(a.UserDid, b.UserDid),
		ForUser:   union(a.ForUser, b.ForUser),
		Courtesy:  union(a.Courtesy, b.Courtesy),
		Breaks:    union(a.Breaks, b.Breaks),
		Neutral:   union(a.Neutral, b.Neutral),

		Agent:       union(a.Agent, b.Agent),
		Aux:         union(a.Aux, b.Aux),
		Passive:     union(a.Passive, b.Passive),
		ThirdParty:  union(a.ThirdParty, b.ThirdParty),
		Possessive:  union(a.Possessive, b.Possessive),
		Source:      union(a.Source, b.Source),
		Reported:    union(a.Reported, b.Reported),
		Instruction: union(a.Instruction, b.Instruction),
		Future:      union(a.Future, b.Future),
		Request:     union(a.Request, b.Request),
		Copula:      union(a.Copula, b.Copula),
	}
}

// mergeChannel joins the words of two channels of one name; the rank and
// flags are the first one's where it sets them.
func mergeChannel(a, b ClaimChannel) ClaimChannel {
	out := ClaimChannel{
		Name:      b.Name,
		Rank:      a.Rank,
		Messaging: a.Messaging || b.Messaging,
		Absent:    a.Absent || b.Absent,
		Tool:      union(a.Tool, b.Tool),
		Keys:      union(a.Keys, b.Keys),
		Also:      union(a.Also, b.Also),
		Noun:      union(a.Noun, b.Noun),
		Did:       union(a.Did, b.Did),
		Verb:      union(a.Verb, b.Verb),
		Done:      union(a.Done, b.Done),
	}
	if a.Name != "" {
		out.Name = a.Name
	}
	if out.Rank == 0 {
		out.Rank = b.Rank
	}
	return out
}

func mergeResults(a, b Results) Results {
	return Results{
		Flags:    union(a.Flags, b.Flags),
		Status:   union(a.Status, b.Status),
		Failures: union(a.Failures, b.Failures),
		Errors:   union(a.Errors, b.Errors),
		Codes:    union(a.Codes, b.Codes),
	}
}
