/*
Package memory keeps the pinned memory card: the user's constraints
(addresses, dates, prohibitions, preferences) that must survive context
compression and are checked before the agent acts.

The failure it fixes: in turn 6 the user says "不要自动给我发短信通知" (do not
send me SMS notifications); in turn 9 the context is compressed by dropping
the oldest messages; in turn 11 the agent sends an SMS. A bigger context
window does not fix that; structure does. The card holds the constraint
apart from the conversation, every model call sees it, and a rule stops the
tool call that breaks it.

# How it fits

memory sits beside trace, below guard, and imports neither guard nor
ledger (only trace and langchaingo's llms). The guard consults it on every
model call and every tool call:

  - Model call: for each new user turn, [Card.Observe] runs an
    [Extractor] and the guard records the result as a card step
    ([CardStep]); then [Compress] fits the messages into the token budget
    (recorded as a [CompressStep]), and [Inject] puts the card into the
    system message.
  - Tool call: [Enforcer] is a guard rule (its Check method has
    guard.Rule's signature). It reads the trace's card ([CardOf]) and
    stops a call that contradicts it: a prohibited channel or a date
    outside the user's window is blocked; an address that is not the
    card's asks the user which, naming both. The answer is the guard's to
    judge (its memory-answer rule reads the card through
    [Enforcer.CardAt]).

The card is kept in the trace's memo ([CardOf]) and brought up to date
with the card steps recorded since it was last read, so a model call or a
tool call costs what the new turn brings, not the conversation. Because
the card is a function of the trace so far, offline evaluation of a
recorded trace finds exactly what the guard found online. A trace with no
card steps, such as a chat log imported with trace.ImportOpenAI, gets its
card from [RuleBased] run over its user turns.

# Reading a turn

[RuleBased] reads values first: postal addresses by their structure
(house number, street and street type, city and postcode; 省/市/区/路 and
号/栋/室 with a number), e-mail addresses, ids after an id word or shaped
like one, phone numbers, dates and windows, and the contact channels a
clause names. Then the small word lists of the lexicon decide what the
sentence does with each: states, changes, adds ("also send one to ..."),
prohibits, allows (with a window, narrows: "calls are fine after 6pm"), or
only asks. The figures on a labelled set of 160 utterances, and on user
turns of public trajectories labelled afterwards, are printed by
TestLabelledSet and TestCorpusUtterances.

# Constraints and the card

A [Constraint] has a [Kind] (address, phone, email, name, id, time_range,
prohibition, preference, fact), a Key within the kind, a Value, the Turn it
was stated in, a [State] and a Source. Turns count user messages from 0,
as trace.Step.Turn indexes trace.Trace.UserTurns. A later statement on the
same kind and key supersedes the earlier one ("my address is now B"); a
revocation lifts it ("actually, SMS is fine", "可以发短信了"); the card keeps
every version. [Card.Active] lists what holds, [Card.History] everything,
and [Card.Text] renders the card for a system prompt:

	Pinned user constraints (must be respected):
	- prohibition sms: 不要自动给我发短信通知 (turn 6)
	- address delivery: 48 Pine Avenue, Shelbyville (turn 5, replaces "12 Oak Street, Springfield" from turn 1)

[RuleBased] finds constraints without a model, in the words of a lexicon
(package trace/lexicon: English and Chinese by default, extended or
replaced by the caller); [LLMExtractor] asks any llms.Model for them as JSON and validates the
answer; [Combine] runs several and merges what they find.

# JSON

A card marshals to an object with one key, "constraints", an array of
constraint objects in the order they were stated:

	{"constraints":[
	  {"kind":"address","key":"delivery","value":"12 Oak Street, Springfield","turn":1,"status":"superseded","source":"rule","ended":5},
	  {"kind":"address","key":"delivery","value":"48 Pine Avenue, Shelbyville","turn":5,"status":"active","source":"rule"},
	  {"kind":"prohibition","key":"sms","value":"don't text me","turn":6,"status":"revoked","source":"rule","ended":9}]}

A constraint object:

	kind     string  the Kind
	key      string  what it is about, within the kind: "delivery", "sms", "order:a1001"; lower case, at most 64 bytes
	value    string  the address, number, window ("06-01..06-05", "before 09:00"), the user's words...; at most 512 bytes
	turn     int     the user turn it was stated in, from 0
	status   string  "active", "superseded" or "revoked"
	source   string  "rule" or "model"; omitted when unknown
	ended    int     for superseded and revoked constraints, the turn in which they stopped holding; omitted when 0

# Memory steps in traces

Memory events are trace steps of kind trace.KindMemory:

	name      turn            result
	card      the user turn   the JSON array of the constraints extracted from that turn, as Observe returned
	                          them ("[]" when none): new statements "active", revocations "revoked"
	compress  the user turn   the CompressReport as JSON: budget, tokens_before, tokens_after, messages,
	                          kept, elided, dropped (runs of indexes, [[from,to],...], to excluded;
	                          a flat array of indexes in traces recorded before), pinned, over_budget

The guard records one card step per user turn, right after the turn;
CardFromTrace applies them in step order; StepConstraints reads one, decoded
once per trace. It records a compress step for
each model call whose compression differs from the last one recorded on
the trace; each is whole (it does not refer to an earlier one), and as
long as the list of what was kept, not as the conversation.

# Example

	card := &memory.Card{}
	for turn, text := range userTurns { // as each turn arrives
		cs, err := card.Observe(ctx, memory.RuleBased(nil), turn, text)
		if err != nil {
			log.Print(err)
		}
		rec.Add(memory.CardStep(turn, cs))
	}
	msgs, report := memory.Compress(messages, 4000, card)
	rec.Add(memory.CompressStep(report))
	resp, err := model.GenerateContent(ctx, memory.Inject(msgs, card))

	// and, among the guard's rules:
	g := guard.New(guard.Config{Rules: []guard.Rule{memory.Enforcer{}}})

# Performance

Applying a constraint and reading the card cost the same however long the
card is; its text is rendered once per change. Per model call the card
costs one sync of the new card steps and one copy of the message slice
(Inject never modifies the caller's messages): BenchmarkCardPerCall
allocates 17 times per call at turn 10, 100 and 1,000 alike, where
rebuilding the card from the trace, as every call did before, allocated
25, 59 and 337 times. Compress estimates the tokens of every message it
is given. For one conversation called again and again, as a guard does,
an Injector does not copy the messages again (a new card replaces the
system message in place), and a Compressor estimates and classifies each message once
and keeps running sums of what its passes save: under budget a call
reads only the new messages; over budget it finds where each pass stops
by binary search and lists what is kept from indexes by kind, so that it
costs what it keeps, not what the conversation holds (BenchmarkCompressorCall).
Both check by address that the messages read before are still there
(about a nanosecond a message). Check returns at once,
without allocating, for steps that are not tool calls.
*/
package memory
