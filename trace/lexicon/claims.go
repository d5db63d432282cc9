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
