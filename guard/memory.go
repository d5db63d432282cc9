package guard

import (
	"cmp"
	"context"
	"slices"
	"sync"

	"github.com/agentguard/agentguard/memory"
	"github.com/agentguard/agentguard/trace"
	"github.com/tmc/langchaingo/llms"
)

// MemoryOptions configures the pinned memory card (package memory), which
// is on unless Off is set: the constraints the user states are extracted
// from every user turn and recorded as memory steps, the card is merged
// into the first system message of every model call (on a copy), the
// messages are compressed to a token budget without losing a constraint,
// and tool calls that break an active constraint are stopped
// (memory.Enforcer). The card is kept on the trace (memory.CardOf) and
// updated per turn, so a model call costs the same at turn 1,000 as at
// turn 10.
type MemoryOptions struct {
	// Off turns the card off: nothing is extracted, injected, compressed
	// or enforced. Config.Disable with RuleMemory leaves out only the
	// enforcement.
	Off bool `json:"off,omitempty"`
	// Extractor reads constraints from a user turn. Nil means
	// memory.RuleBased(Config.Lexicon); combine it with
	// memory.LLMExtractor for a model's recall:
	// memory.Combine(memory.RuleBased(nil), memory.LLMExtractor(m)).
	Extractor memory.Extractor `json:"-"`
	// Budget is the token budget of what is sent to the model; longer
	// conversations are compressed (memory.Compress). Zero means no
	// compression.
	Budget int `json:"budget,omitempty"`
}

// on reports whether the card is on: m is nil or not Off.
func (m *MemoryOptions) on() bool { return m == nil || !m.Off }

// budget is m's Budget, 0 for nil.
func (m *MemoryOptions) budget() int {
	if m == nil {
		return 0
	}
	return m.Budget
}

// observeTurns records the user turns of messages the trace has not seen,
// each followed, when the card is on, by a memory step holding what the
// card extracted from it, and returns the trace's card (nil when off) and
// the latest new turn's text. The card is the one kept on the trace: each
// call reads only the steps recorded since the last, and the messages
// added since the last (convo).
func (g *Guard) observeTurns(ctx context.Context, rec *trace.Recorder, cv *convo, messages []llms.MessageContent) (*memory.Card, string) {
	on := g.cfg.Memory.on() && !g.cfg.Bypass
	seen := rec.UserTurns()
	cv.mu.Lock()
	cv.read(messages)
	cv.observed = cv.reads
	var turns []string
	if seen < len(cv.users) {
		turns = make([]string, 0, len(cv.users)-seen)
		for _, i := range cv.users[seen:] {
			turns = append(turns, messageText(messages[i]))
		}
	}
	var results []llms.ToolCallResponse
	for _, i := range cv.results[cv.resultsRead:] {
		for _, p := range messages[i].Parts {
			if r, ok := p.(llms.ToolCallResponse); ok {
				results = append(results, r)
			}
		}
	}
	cv.resultsRead = len(cv.results)
	cv.mu.Unlock()
	if len(results) > 0 && !g.cfg.Bypass {
		g.observeResults(rec, results)
	}
	latest := ""
	for _, text := range turns {
		latest = text
		var card *memory.Card
		if on { // the card before the turn: after it, a turn without its card step would be read as an imported log's
			card = traceCard(rec)
		}
		rec.UserTurn(latest)
		if on {
			turn := rec.UserTurns() - 1
			cs, err := card.Extract(ctx, g.extractor, turn, latest)
			if err != nil && g.cfg.Observe.Logger != nil {
				g.cfg.Observe.Logger.LogAttrs(ctx, errorLevel, "agentguard memory extraction failed", attrTrace(rec.ID()), attrError(err))
			}
			step := memory.CardStep(turn, cs)
			step.Start = g.now()
			rec.Add(step)
		}
	}
	if !on {
		return nil, latest
	}
	return traceCard(rec), latest
}

// observeResults records the tool results the caller's messages hold for
// calls the guard saw proposed but not run: with WrapModel alone (the loop
// runs its tools itself, unwrapped), these are the tool steps, so the rules
// judging later steps see what the tools returned. A result is recorded
// once, as a tool step with the proposed call's arguments, after the steps
// recorded so far; a call that a wrapped tool or Run recorded (a tool step
// after the proposal, of the call's id, or of its name and no id) is not
// recorded again. The scan goes back only to the model step that proposed
// the call.
func (g *Guard) observeResults(rec *trace.Recorder, results []llms.ToolCallResponse) {
	var add []*trace.Step
	rec.View(func(t *trace.Trace) {
		for _, r := range results {
			if s := unrecordedResult(t, r); s != nil {
				add = append(add, s)
			}
		}
	})
	for _, s := range add {
		s.Start = g.now()
		rec.Add(s)
	}
}

// unrecordedResult returns the tool step of result r when t holds the
// model step that proposed its call and no tool step for it since; nil
// otherwise.
func unrecordedResult(t *trace.Trace, r llms.ToolCallResponse) *trace.Step {
	if r.ToolCallID == "" {
		return nil
	}
	named := 0 // tool steps of the call's name and no id since the proposal
	for i := len(t.Steps) - 1; i >= 0; i-- {
		s := t.Steps[i]
		switch s.Kind {
		case trace.KindTool:
			if s.CallID == r.ToolCallID {
				return nil
			}
			if s.CallID == "" && s.Name == r.Name {
				named++
			}
		case trace.KindModel:
			j := slices.IndexFunc(s.Calls, func(c trace.Call) bool { return c.ID == r.ToolCallID })
			if j < 0 {
				continue
			}
			// Calls of the same name before this one, answered by steps without
			// an id, account for that many of them.
			before := 0
			for _, c := range s.Calls[:j+1] {
				if c.Name == r.Name {
					before++
				}
			}
			if named >= before {
				return nil
			}
			c := s.Calls[j]
			return &trace.Step{Kind: trace.KindTool, Name: cmp.Or(r.Name, c.Name), CallID: c.ID, Args: c.Args, Result: r.Content}
		}
	}
	return nil
}

// traceCard returns the card kept on rec's trace, brought up to date.
func traceCard(rec *trace.Recorder) *memory.Card {
	var c *memory.Card
	rec.View(func(t *trace.Trace) { c = memory.CardOf(t) })
	return c
}

// withCard returns what is sent to the model, and its token estimate
// (usageTokens): the messages compressed to the memory budget (recorded as
// a memory step when anything changed and the compression is not the one
// recorded last) and the card injected. Without a
// card, or in shadow mode, where the card is still kept and enforced in
// detect-only fashion, it returns messages unchanged. It reads only the
// messages added since the last call, unless it compressed them: then the
// estimate is of what is left.
//
// The caller sends what it returns to the model and then calls
// cv.returned: until then the injector leaves that slice as it is.
func (g *Guard) withCard(rec *trace.Recorder, cv *convo, card *memory.Card, messages []llms.MessageContent) ([]llms.MessageContent, int) {
	cv.mu.Lock()
	defer cv.mu.Unlock()
	if cv.flight > 0 { // another call of the trace reads what the injector returned last
		cv.injector.Detach()
	}
	cv.flight++
	if cv.reads != cv.observed || len(messages) != len(cv.seen) { // another call read since, or a retry added feedback
		cv.read(messages)
	}
	if card == nil || g.cfg.Shadow {
		return messages, cv.tokens // shadow mode observes; it must not help the model
	}
	if b := g.cfg.Memory.budget(); b > 0 {
		sent, rep := cv.compressor.Compress(messages, b, card)
		if (len(rep.Dropped) > 0 || len(rep.Elided) > 0 || rep.OverBudget) && !sameCompression(rep, cv.reported) {
			step := memory.CompressStep(rep)
			step.Start = g.now()
			rec.Add(step)
			cv.reported = rep
		}
		if len(rep.Dropped) > 0 || len(rep.Elided) > 0 {
			if len(sent) == len(cv.sent) && &sent[0] == &cv.sent[0] { // the compressor's last result: nothing changed
				return cv.injected, cv.injectedTokens
			}
			// What is left of each message read is at its index less the
			// messages dropped before it.
			n := cv.tokens
			for _, run := range rep.Dropped {
				n -= cv.cum[run[1]] - cv.cum[run[0]]
			}
			sys := -1
			if cv.sys >= 0 { // system messages are never dropped
				sys = cv.sys - droppedBefore(rep.Dropped, cv.sys)
			}
			k, d := 0, 0 // the runs before i, and the messages in them
			for _, i := range rep.Elided {
				for ; k < len(rep.Dropped) && rep.Dropped[k][0] < i; k++ {
					d += rep.Dropped[k][1] - rep.Dropped[k][0]
				}
				n += usageTokens(sent[i-d]) - (cv.cum[i+1] - cv.cum[i])
			}
			if sys >= 0 { // sent is the compressor's own: inject in place, not into a copy
				if head := memory.Inject(sent[:sys+1], card); len(head) == sys+1 {
					n += injectedTokens(sent[:sys+1], head, sys)
					sent[sys] = head[sys]
					cv.sent, cv.injected, cv.injectedTokens = sent, sent, n
					return sent, n
				}
			}
			injected := memory.Inject(sent, card)
			n += injectedTokens(sent, injected, sys)
			cv.sent, cv.injected, cv.injectedTokens = sent, injected, n
			return injected, n
		}
	}
	var sent []llms.MessageContent
	if cv.changed { // the messages do not extend the injector's last: it starts over
		sent = cv.injector.Inject(messages, card)
	} else { // read checked them (or a run vouched for them)
		sent = cv.injector.Extend(messages, card)
	}
	cv.changed = false
	return sent, cv.tokens + injectedTokens(messages, sent, cv.sys)
}

// returned tells cv that a model call sent what withCard returned has
// returned. After a failed attempt the model may still be reading it (a
// call abandoned at its timeout), so the injector leaves it as it is.
func (cv *convo) returned(failed bool) {
	cv.mu.Lock()
	cv.flight--
	if failed {
		cv.injector.Detach()
	}
	cv.mu.Unlock()
}

// droppedBefore returns how many of the messages in dropped are before
// i, which is not one of them.
func droppedBefore(dropped memory.Runs, i int) int {
	d := 0
	for _, run := range dropped {
		if run[0] > i {
			break
		}
		d += run[1] - run[0]
	}
	return d
}

// sameCompression reports whether two compressions left the same
// messages of the same conversation: a call that compresses as the last
// one did records no step.
func sameCompression(a, b memory.CompressReport) bool {
	return a.Budget == b.Budget && a.TokensBefore == b.TokensBefore && a.TokensAfter == b.TokensAfter &&
		a.Messages == b.Messages && a.Kept == b.Kept && a.OverBudget == b.OverBudget &&
		slices.Equal(a.Dropped, b.Dropped) && slices.Equal(a.Elided, b.Elided) && slices.Equal(a.Pinned, b.Pinned)
}

// injectedTokens is what injecting the card into messages, whose first
// system message is at sys (-1: none), added to their usageTokens. Inject
// changes the first system message only, adds one first, or removes one
// that held only a card.
func injectedTokens(messages, injected []llms.MessageContent, sys int) int {
	switch {
	case len(injected) == len(messages)+1:
		return usageTokens(injected[0])
	case len(injected) == len(messages)-1:
		return -usageTokens(messages[sys])
	case sys >= 0:
		return usageTokens(injected[sys]) - usageTokens(messages[sys])
	}
	return 0
}

// convoKey keys a trace's convo in its memo.
type convoKey struct{}

// convo is what a guard keeps of a trace's conversation between model
// calls, in the trace's memo, so that a call reads only the messages added
// since the last: where the user turns are, the token estimate, and the
// card's compressor and injector. Conversations grow by appending; when
// the caller replaced a message it had sent (checked for each message by
// the address of its parts: no allocation, about a nanosecond a message)
// or sent fewer, convo reads them all again. A message's parts changed in
// place leave the token estimate as it was.
type convo struct {
	mu          sync.Mutex
	seen        []parts              // the messages read, by their parts
	last        *llms.MessageContent // where the messages read last start
	owned       *llms.MessageContent // where a run's own messages start (see vouch)
	changed     bool                 // read started over since the injector's last call
	users       []int                // the user turns among them, by index; the guard's feedback is none
	results     []int                // the tool results among them, by index
	resultsRead int                  // results that observeTurns has read
	cum         []int                // cum[i]: usageTokens of the messages before i; cum[0] is 0
	tokens      int                  // usageTokens of them
	sys         int                  // index of the first system message among them; -1 none
	reads       int                  // calls of read
	observed    int                  // reads when observeTurns read last: withCard need not check again
	compressor  memory.Compressor
	reported    memory.CompressReport // the last compression recorded
	// The compressor's last result, and what was sent for it: a call that
	// gets it again sends the same.
	sent, injected []llms.MessageContent
	injectedTokens int
	injector       memory.Injector
	flight         int                   // model calls sent what withCard returned that have not returned
	runOut         []llms.MessageContent // Result.Messages of the trace's last run (see extend)
}

// conversation returns the convo kept on rec's trace.
func conversation(rec *trace.Recorder) *convo {
	var cv *convo
	rec.View(func(t *trace.Trace) {
		cv = t.Memo(convoKey{}, func() any { return &convo{sys: -1} }).(*convo)
	})
	return cv
}

// read brings cv up to date with messages. Their start is checked against
// the messages read, unless a run vouches for it (see vouch).
func (cv *convo) read(messages []llms.MessageContent) {
	cv.reads++
	vouched := len(messages) >= len(cv.seen) && len(messages) > 0 && &messages[0] == cv.owned && cv.owned == cv.last
	if !vouched && !cv.same(messages) {
		cv.seen, cv.users, cv.cum, cv.tokens, cv.sys = cv.seen[:0], cv.users[:0], cv.cum[:0], 0, -1
		cv.results, cv.resultsRead = cv.results[:0], 0
		cv.changed = true
	}
	cv.last = nil
	if len(messages) > 0 {
		cv.last = &messages[0]
	}
	if len(cv.cum) == 0 {
		cv.cum = append(cv.cum, 0)
	}
	for i := len(cv.seen); i < len(messages); i++ {
		m := messages[i]
		switch {
		case m.Role == llms.ChatMessageTypeHuman && !isGuardFeedback(m):
			cv.users = append(cv.users, i)
		case m.Role == llms.ChatMessageTypeSystem && cv.sys < 0:
			cv.sys = i
		case m.Role == llms.ChatMessageTypeTool:
			cv.results = append(cv.results, i)
		}
		cv.tokens += usageTokens(m)
		cv.cum = append(cv.cum, cv.tokens)
		cv.seen = append(cv.seen, partsOf(m))
	}
}

// vouch tells cv that messages, a run's own, are changed only by the run,
// which appends to them, until it ends (vouch(nil)): reading them again,
// in the same array, needs no check of what was read.
func (cv *convo) vouch(messages []llms.MessageContent) {
	cv.mu.Lock()
	cv.owned = nil
	if len(messages) > 0 {
		cv.owned = &messages[0]
	}
	cv.mu.Unlock()
}

// parts is a message's parts, by address and number: a message replaced,
// or given parts of its own, has other parts.
type parts struct {
	p *llms.ContentPart
	n int
}

func partsOf(m llms.MessageContent) parts {
	if len(m.Parts) == 0 {
		return parts{}
	}
	return parts{&m.Parts[0], len(m.Parts)}
}

// same reports whether messages start with those read. Messages in
// another array than those read last are compared in full. In the same
// array — the caller appended to it — it compares the last sameTail
// messages read and a sample of the rest at positions 0, 1, 3, 7, 15, …,
// so that a turn costs the same at 10,000 messages as at 10: a caller that
// rewrites the history in place (compresses it, drops a turn) moves the
// messages after the change, which the tail and the sample see; one that
// replaces a single old message in place, keeping every other, is not
// noticed.
func (cv *convo) same(messages []llms.MessageContent) bool {
	n := len(cv.seen)
	if n > len(messages) {
		return false
	}
	if n == 0 {
		return true
	}
	if cv.last != &messages[0] {
		for i, p := range cv.seen {
			if partsOf(messages[i]) != p {
				return false
			}
		}
		return true
	}
	for i := max(0, n-sameTail); i < n; i++ {
		if partsOf(messages[i]) != cv.seen[i] {
			return false
		}
	}
	for i := 0; i < n-sameTail; i = 2*i + 1 {
		if partsOf(messages[i]) != cv.seen[i] {
			return false
		}
	}
	return true
}

// sameTail is how many of the latest messages same compares one by one.
const sameTail = 32
