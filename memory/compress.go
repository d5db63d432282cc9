package memory

import (
	"fmt"
	"reflect"
	"slices"
	"strings"

	"github.com/agentguard/agentguard/trace"
	"github.com/tmc/langchaingo/llms"
)

// CompressReport says what Compress did, by index into the messages it
// was given. It is the Result of a StepCompress memory step, as JSON.
type CompressReport struct {
	Budget       int `json:"budget"`
	TokensBefore int `json:"tokens_before"` // the messages and the card block, estimated
	TokensAfter  int `json:"tokens_after"`
	Messages     int `json:"messages"` // messages given
	Kept         int `json:"kept"`     // messages returned
	// Elided lists the tool-result messages whose content was replaced by
	// a note of its size.
	Elided []int `json:"elided,omitempty"`
	// Dropped lists the messages left out.
	Dropped []int `json:"dropped,omitempty"`
	// Pinned lists the user messages kept because they state an active
	// constraint.
	Pinned []int `json:"pinned,omitempty"`
	// OverBudget is set when the messages that must stay do not fit.
	OverBudget bool `json:"over_budget,omitempty"`
}

// ElideMin is the size, in estimated tokens, above which Compress may
// replace a tool result by a note of its size.
const ElideMin = 48

// Compress fits messages into budget tokens, counted with
// trace.EstimateTokens (never llms.CountTokens, which goes to the network)
// and including the block that Inject will add for c. Working from the
// oldest message, it
//
//  1. replaces the content of bulky tool results (over ElideMin tokens)
//     with "[agentguard: tool result of N tokens elided]", keeping the
//     ToolCallResponse part so that each call keeps its result;
//  2. drops the oldest messages that need not stay: whole tool exchanges
//     (an assistant message with tool calls together with the tool
//     messages that answer it, never one without the other) and the
//     assistant's small talk (text messages without tool calls), then
//  3. the oldest user messages that state nothing on the card,
//
// stopping as soon as the messages fit. It never touches the system
// messages, the last user message and everything after it (the turn in
// progress; all of the messages when none is from the user), nor a user message that states an active constraint of c: the
// user message whose index among the user messages, counting from 0 and
// skipping the guard's own "[agentguard] " feedback, is the constraint's
// Turn. It never separates a tool call from its result. When what must
// stay does not fit, the report says OverBudget. Once it has dropped
// anything, it also drops what is left before the first kept user message
// (answers to questions that are gone), so that the conversation still
// opens with the user, as some providers require.
//
// A budget of zero or less means no limit. messages is never modified;
// the result shares the unchanged messages with it. Inject the card after
// compressing: the constraints then survive even where their messages are
// dropped. To compress one conversation call after call, use a Compressor.
func Compress(messages []llms.MessageContent, budget int, c *Card) ([]llms.MessageContent, CompressReport) {
	var z Compressor
	return z.Compress(messages, budget, c)
}

// A Compressor compresses one conversation call after call, as Compress
// does, keeping what it estimated and classified of the messages it has
// read, so that a call reads only the messages added since the last: under
// budget, a call costs the same at turn 1,000 as at turn 10. Conversations
// grow by appending; a Compressor checks that the caller's messages are
// the ones it read (each the same parts, by address: no allocation, about
// a nanosecond a message; the last one's parts also by value) and, when
// the caller replaced or changed one or sent fewer, reads all of them
// again. Its results are those of Compress.
//
// The zero value is ready to use. A Compressor is not safe for concurrent
// use.
type Compressor struct {
	read       int                 // messages read
	seen       marks               // the messages read
	last       llms.MessageContent // the last one read, Parts copied
	cost       []int               // messageTokens of each
	total      int                 // sum of cost
	flags      []uint8             // isUser, hasCall, isResult
	bulky      map[int][]bulkyPart
	group      []int          // as classes.group
	users      []int          // index of each user turn
	members    map[int][]int  // the tool messages of each exchange, by the message that heads it
	owner      map[string]int // tool call id → the message that made it
	lastCaller int
	system     bool // a system message was read

	// scratch, reused from call to call
	keep, pinned []bool
}

// bulkyPart is a tool result part over ElideMin tokens.
type bulkyPart struct{ part, tokens int }

const (
	flagUser   = 1 << iota // a user turn: from the user, not the guard's feedback
	flagCall               // has a tool call
	flagResult             // has a tool result
)

// Compress is Compress for the conversation z follows.
func (z *Compressor) Compress(messages []llms.MessageContent, budget int, c *Card) ([]llms.MessageContent, CompressReport) {
	z.update(messages)
	r := CompressReport{Budget: budget, Messages: len(messages), Kept: len(messages)}
	reserve := 0
	if budget > 0 && c != nil {
		if text := c.Text(); text != "" {
			reserve = trace.EstimateTokens(CardBegin+"\n"+text+"\n"+CardEnd) + 2
			if !z.system {
				reserve += messageOverhead
			}
		}
	}
	total := reserve + z.total
	r.TokensBefore, r.TokensAfter = total, total
	if budget <= 0 || total <= budget {
		return slices.Clip(messages), r
	}

	n := len(messages)
	saved := map[int]int{} // what eliding saved, by message
	cv := z.classes(c)
	defer clear(cv.pinned)
	keep := z.keep
	for i := range keep {
		keep[i] = true
	}
	parts := map[int][]llms.ContentPart{} // elided messages' new parts
	fits := func() bool { return total <= budget }

	// 1. Elide bulky tool results.
	for i := 0; i < cv.tail && !fits(); i++ {
		bp := z.bulky[i]
		if len(bp) == 0 || z.flags[i]&flagResult == 0 {
			continue
		}
		np := slices.Clone(messages[i].Parts)
		for _, b := range bp {
			tr := np[b.part].(llms.ToolCallResponse)
			tr.Content = fmt.Sprintf("[agentguard: tool result of %d tokens elided]", b.tokens)
			np[b.part] = tr
			d := b.tokens - trace.EstimateTokens(tr.Content)
			saved[i] += d
			total -= d
		}
		parts[i] = np
		r.Elided = append(r.Elided, i)
	}
	drop := func(i int) {
		keep[i] = false
		total -= z.cost[i] - saved[i]
	}
	// dropGroup drops the tool exchange headed by h, if none of it must stay.
	dropGroup := func(h int) bool {
		members := cv.members[h]
		if h >= cv.tail || cv.pinned[h] || slices.ContainsFunc(members, func(i int) bool { return i >= cv.tail || cv.pinned[i] }) {
			return false
		}
		if keep[h] {
			drop(h)
		}
		for _, i := range members {
			if keep[i] {
				drop(i)
			}
		}
		return true
	}
	smallTalk := func(i int) bool { return z.smallTalk(messages, cv, i) }
	// 2. Drop the oldest tool exchanges and the assistant's small talk.
	for i := 0; i < cv.tail && !fits(); i++ {
		switch {
		case !keep[i]:
		case smallTalk(i) && messages[i].Role != llms.ChatMessageTypeHuman:
			drop(i)
		case cv.group[i] == i && z.flags[i]&(flagCall|flagResult) != 0:
			dropGroup(i)
		}
	}
	// 3. Drop the oldest of the user's turns that state nothing pinned.
	for i := 0; i < cv.tail && !fits(); i++ {
		if keep[i] && smallTalk(i) {
			drop(i)
		}
	}
	r.OverBudget = !fits()
	// Open with the user: what is left before the first kept user message
	// answers a question that was dropped.
	if slices.Contains(keep, false) {
		for i := 0; i < cv.tail; i++ {
			m := messages[i]
			if !keep[i] || m.Role == llms.ChatMessageTypeSystem {
				continue
			}
			if m.Role == llms.ChatMessageTypeHuman {
				break
			}
			if smallTalk(i) {
				drop(i)
				continue
			}
			if cv.group[i] != i || !dropGroup(i) {
				break
			}
		}
	}

	r.Elided = slices.DeleteFunc(r.Elided, func(i int) bool { return !keep[i] })
	kept := 0
	for _, k := range keep {
		if k {
			kept++
		}
	}
	out := make([]llms.MessageContent, 0, kept)
	if kept < n {
		r.Dropped = make([]int, 0, n-kept)
	}
	for i, m := range messages {
		if !keep[i] {
			r.Dropped = append(r.Dropped, i)
			continue
		}
		if np, ok := parts[i]; ok {
			m.Parts = np
		}
		if cv.pinned[i] {
			r.Pinned = append(r.Pinned, i)
		}
		out = append(out, m)
	}
	r.TokensAfter, r.Kept = total, len(out)
	return out, r
}

// update reads the messages added since the last call, or all of them
// when the conversation is not the one read before.
func (z *Compressor) update(messages []llms.MessageContent) {
	if z.read > len(messages) || z.read > 0 && (!z.seen.match(messages) || !sameMessage(messages[z.read-1], z.last)) {
		*z = Compressor{keep: z.keep[:0], pinned: z.pinned[:0]}
	}
	if z.owner == nil {
		z.owner = map[string]int{}
		z.lastCaller = -1
	}
	if add := len(messages) - z.read; add > 0 {
		z.cost, z.flags, z.group = slices.Grow(z.cost, add), slices.Grow(z.flags, add), slices.Grow(z.group, add)
		z.keep, z.pinned = slices.Grow(z.keep, add), slices.Grow(z.pinned, add)
	}
	for i := z.read; i < len(messages); i++ {
		m := messages[i]
		c := messageTokens(m)
		z.cost = append(z.cost, c)
		z.total += c
		var f uint8
		if hasToolCall(m) {
			f |= flagCall
		}
		if isToolResult(m) {
			f |= flagResult
			for j, p := range m.Parts {
				if tr, ok := p.(llms.ToolCallResponse); ok {
					if t := trace.EstimateTokens(tr.Content); t > ElideMin {
						if z.bulky == nil {
							z.bulky = map[int][]bulkyPart{}
						}
						z.bulky[i] = append(z.bulky[i], bulkyPart{j, t})
					}
				}
			}
		}
		g := i
		switch {
		case m.Role == llms.ChatMessageTypeHuman && !isFeedback(m):
			f |= flagUser
			z.users = append(z.users, i)
		case f&flagCall != 0:
			z.lastCaller = i
			for _, p := range m.Parts {
				if tc, ok := p.(llms.ToolCall); ok && tc.ID != "" {
					z.owner[tc.ID] = i
				}
			}
		case f&flagResult != 0:
			g = z.lastCaller
			for _, p := range m.Parts {
				if tr, ok := p.(llms.ToolCallResponse); ok {
					if o, ok := z.owner[tr.ToolCallID]; ok {
						g = o
						break
					}
				}
			}
			if g < 0 {
				g = i // answers no call: a group of its own
			}
		}
		if m.Role == llms.ChatMessageTypeSystem {
			z.system = true
		}
		if g != i {
			if z.members == nil {
				z.members = map[int][]int{}
			}
			z.members[g] = append(z.members[g], i)
		}
		z.flags = append(z.flags, f)
		z.group = append(z.group, g)
		z.keep = append(z.keep, true)
		z.pinned = append(z.pinned, false)
	}
	if len(messages) > z.read {
		z.seen = z.seen.add(messages[z.read:])
		z.last = copyMessage(messages[len(messages)-1])
	}
	z.read = len(messages)
}

// classes returns what Compress knows about the messages read, for card c.
// The caller clears pinned after use.
func (z *Compressor) classes(c *Card) classes {
	cv := classes{group: z.group, pinned: z.pinned, members: z.members}
	if len(z.users) > 0 {
		cv.tail = z.users[len(z.users)-1]
	}
	if c != nil {
		for _, k := range c.Active() {
			if k.Turn >= 0 && k.Turn < len(z.users) {
				cv.pinned[z.users[k.Turn]] = true
			}
		}
	}
	return cv
}

// messageOverhead is what a message costs beyond its parts: role and
// framing.
const messageOverhead = 4

// messageTokens estimates what a message costs a model; the card block of
// a system message is left out, as Inject replaces it.
func messageTokens(m llms.MessageContent) int {
	n := messageOverhead
	for _, p := range m.Parts {
		n += partTokens(p)
	}
	return n
}

func partTokens(p llms.ContentPart) int {
	switch p := p.(type) {
	case llms.TextContent:
		if strings.Contains(p.Text, CardBegin) {
			return trace.EstimateTokens(stripBlocks(p.Text))
		}
		return trace.EstimateTokens(p.Text)
	case llms.ToolCall:
		n := 3
		if p.FunctionCall != nil {
			n += trace.EstimateTokens(p.FunctionCall.Name) + trace.EstimateTokens(p.FunctionCall.Arguments)
		}
		return n
	case llms.ToolCallResponse:
		return 3 + trace.EstimateTokens(p.Content)
	case llms.CachedContent:
		return partTokens(p.ContentPart)
	default: // images and binary data: a low-detail image's price
		return 85
	}
}

// classes is what Compress knows about each message for one call.
type classes struct {
	tail    int           // index of the last user message, 0 if none: it and what follows stay
	pinned  []bool        // user messages that state an active constraint
	group   []int         // the assistant message whose tool calls a tool message answers; i itself otherwise
	members map[int][]int // the tool messages of the exchange each message heads
}

// smallTalk reports whether message i may be dropped as small talk.
func (z *Compressor) smallTalk(messages []llms.MessageContent, cv classes, i int) bool {
	switch messages[i].Role {
	case llms.ChatMessageTypeHuman, llms.ChatMessageTypeAI, llms.ChatMessageTypeGeneric:
	default:
		return false
	}
	return i < cv.tail && !cv.pinned[i] && z.flags[i]&(flagCall|flagResult) == 0
}

// A message replaced since it was read has other parts: marks are the
// messages read, by the address and length of their parts, compact so that
// checking a conversation of thousands of messages costs a microsecond or
// two.
type marks []mark

type mark struct {
	p *llms.ContentPart
	n int
}

func markOf(m llms.MessageContent) mark {
	if len(m.Parts) == 0 {
		return mark{}
	}
	return mark{&m.Parts[0], len(m.Parts)}
}

// add returns k with messages marked after it.
func (k marks) add(messages []llms.MessageContent) marks {
	for _, m := range messages {
		k = append(k, markOf(m))
	}
	return k
}

// match reports whether the first len(k) messages are those marked.
func (k marks) match(messages []llms.MessageContent) bool {
	if len(k) > len(messages) {
		return false
	}
	for i, m := range k {
		if markOf(messages[i]) != m {
			return false
		}
	}
	return true
}

// sameMessage reports whether m is what was read as seen, by value.
func sameMessage(m, seen llms.MessageContent) bool {
	return m.Role == seen.Role && slices.EqualFunc(m.Parts, seen.Parts, samePart)
}

func samePart(p, q llms.ContentPart) bool {
	switch p := p.(type) {
	case llms.TextContent:
		q, ok := q.(llms.TextContent)
		return ok && p == q
	case llms.ToolCallResponse:
		q, ok := q.(llms.ToolCallResponse)
		return ok && p == q
	case llms.ToolCall:
		q, ok := q.(llms.ToolCall)
		return ok && p.ID == q.ID && p.Type == q.Type && (p.FunctionCall == q.FunctionCall ||
			p.FunctionCall != nil && q.FunctionCall != nil && *p.FunctionCall == *q.FunctionCall)
	}
	return reflect.DeepEqual(p, q)
}

// copyMessage returns m with its own Parts, so that a caller changing the
// parts in place is seen to have changed it.
func copyMessage(m llms.MessageContent) llms.MessageContent {
	m.Parts = slices.Clone(m.Parts)
	for i, p := range m.Parts {
		if tc, ok := p.(llms.ToolCall); ok && tc.FunctionCall != nil {
			fc := *tc.FunctionCall
			tc.FunctionCall = &fc
			m.Parts[i] = tc
		}
	}
	return m
}

func hasToolCall(m llms.MessageContent) bool {
	for _, p := range m.Parts {
		if _, ok := p.(llms.ToolCall); ok {
			return true
		}
	}
	return false
}

func isToolResult(m llms.MessageContent) bool {
	for _, p := range m.Parts {
		if _, ok := p.(llms.ToolCallResponse); ok {
			return true
		}
	}
	return false
}

// isFeedback reports whether a user message is the guard's own retry
// feedback, which is not a user turn.
func isFeedback(m llms.MessageContent) bool {
	if len(m.Parts) != 1 {
		return false
	}
	t, ok := m.Parts[0].(llms.TextContent)
	return ok && strings.HasPrefix(t.Text, "[agentguard] ")
}
