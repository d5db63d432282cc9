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
    guard.Rule's signature). It rebuilds the card from the trace with
    [CardFromTrace] and blocks a call that contradicts it: a prohibited
    channel, a superseded address, a date outside the user's window.

Because the card the Enforcer uses is a pure function of the trace so far,
offline evaluation of a recorded trace finds exactly what the guard found
online. A trace with no card steps, such as a chat log imported with
trace.ImportOpenAI, gets its card from [RuleBased] run over its user turns.

# Constraints and the card

A [Constraint] has a [Kind] (address, phone, name, id, time_range,
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
	                          kept, elided, dropped, pinned, over_budget

The guard records one card step per user turn, right after the turn;
CardFromTrace applies them in step order.

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

BenchmarkMemory200Turns measures a 200-turn conversation (about 600
messages, 100 KB of text, half of it Chinese) on 2 vCPUs: RuleBased takes
some 30 to 50 µs per user turn; Compress costs little beyond estimating
the tokens of every message (about 0.5 ms here), so one model call adds
about 1 ms; Enforcer rebuilds the card from the trace on every tool call,
one JSON decode per card step, about 0.3 to 0.5 ms at turn 200, and about
6 ms for an imported log without card steps, where it runs RuleBased over
every user turn. Check returns at once, without allocating, for steps that
are not tool calls.
*/
package memory
