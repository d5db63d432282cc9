package memory

import (
	"fmt"
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
// dropped.
func Compress(messages []llms.MessageContent, budget int, c *Card) ([]llms.MessageContent, CompressReport) {
	r := CompressReport{Budget: budget, Messages: len(messages), Kept: len(messages)}
	reserve := 0
	if budget > 0 && c != nil {
		if text := c.Text(); text != "" {
			reserve = trace.EstimateTokens(CardBegin+"\n"+text+"\n"+CardEnd) + 2
			if !slices.ContainsFunc(messages, func(m llms.MessageContent) bool { return m.Role == llms.ChatMessageTypeSystem }) {
				reserve += messageOverhead
			}
		}
	}
	total := reserve
	if budget <= 0 {
		for i := range messages {
			total += messageTokens(messages[i])
		}
		r.TokensBefore, r.TokensAfter = total, total
		return slices.Clip(messages), r
	}
	n := len(messages)
	cost := make([]int, n)
	for i := range messages {
		cost[i] = messageTokens(messages[i])
		total += cost[i]
	}
	r.TokensBefore, r.TokensAfter = total, total
	if total <= budget {
		return slices.Clip(messages), r
	}

	cv := classify(messages, c)
	keep := make([]bool, n)
	for i := range keep {
		keep[i] = true
	}
	parts := map[int][]llms.ContentPart{} // elided messages' new parts
	fits := func() bool { return total <= budget }

	// 1. Elide bulky tool results.
	for i := 0; i < cv.tail && !fits(); i++ {
		m := messages[i]
		if !isToolResult(m) {
			continue
		}
		var np []llms.ContentPart
		for j, p := range m.Parts {
			tr, ok := p.(llms.ToolCallResponse)
			if !ok {
				continue
			}
			if t := trace.EstimateTokens(tr.Content); t > ElideMin {
				if np == nil {
					np = slices.Clone(m.Parts)
				}
				tr.Content = fmt.Sprintf("[agentguard: tool result of %d tokens elided]", t)
				np[j] = tr
				saved := t - trace.EstimateTokens(tr.Content)
				cost[i] -= saved
				total -= saved
			}
		}
		if np != nil {
			parts[i] = np
			r.Elided = append(r.Elided, i)
		}
	}
	drop := func(i int) {
		keep[i] = false
		total -= cost[i]
	}
	// dropGroup drops the tool exchange headed by h, if none of it must stay.
	dropGroup := func(h int) bool {
		members := cv.members(h)
		if slices.ContainsFunc(members, func(i int) bool { return i >= cv.tail || cv.pinned[i] }) {
			return false
		}
		for _, i := range members {
			if keep[i] {
				drop(i)
			}
		}
		return true
	}
	// 2. Drop the oldest tool exchanges and the assistant's small talk.
	for i := 0; i < cv.tail && !fits(); i++ {
		switch {
		case !keep[i]:
		case cv.smallTalk(messages, i) && messages[i].Role != llms.ChatMessageTypeHuman:
			drop(i)
		case cv.group[i] == i && (hasToolCall(messages[i]) || isToolResult(messages[i])):
			dropGroup(i)
		}
	}
	// 3. Drop the oldest of the user's turns that state nothing pinned.
	for i := 0; i < cv.tail && !fits(); i++ {
		if keep[i] && cv.smallTalk(messages, i) {
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
			if cv.smallTalk(messages, i) {
				drop(i)
				continue
			}
			if cv.group[i] != i || !dropGroup(i) {
				break
			}
		}
	}

	r.Elided = slices.DeleteFunc(r.Elided, func(i int) bool { return !keep[i] })
	out := make([]llms.MessageContent, 0, n)
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

// classes is what Compress knows about each message.
type classes struct {
	tail   int    // index of the last user message, 0 if none: it and what follows stay
	pinned []bool // user messages that state an active constraint
	group  []int  // the assistant message whose tool calls a tool message answers; i itself otherwise
}

func classify(messages []llms.MessageContent, c *Card) classes {
	n := len(messages)
	cv := classes{pinned: make([]bool, n), group: make([]int, n)} // no user message: all of it is in progress
	turns := map[int]bool{}
	if c != nil {
		for _, k := range c.Active() {
			turns[k.Turn] = true
		}
	}
	owner := map[string]int{}
	lastCaller := -1
	turn := 0
	for i, m := range messages {
		cv.group[i] = i
		switch {
		case m.Role == llms.ChatMessageTypeHuman && !isFeedback(m):
			cv.pinned[i] = turns[turn]
			cv.tail = i
			turn++
		case hasToolCall(m):
			lastCaller = i
			for _, p := range m.Parts {
				if tc, ok := p.(llms.ToolCall); ok && tc.ID != "" {
					owner[tc.ID] = i
				}
			}
		case isToolResult(m):
			cv.group[i] = lastCaller
			for _, p := range m.Parts {
				if tr, ok := p.(llms.ToolCallResponse); ok {
					if o, ok := owner[tr.ToolCallID]; ok {
						cv.group[i] = o
						break
					}
				}
			}
			if cv.group[i] < 0 {
				cv.group[i] = i // answers no call: a group of its own
			}
		}
	}
	return cv
}

// smallTalk reports whether message i may be dropped as small talk.
func (cv classes) smallTalk(messages []llms.MessageContent, i int) bool {
	m := messages[i]
	switch m.Role {
	case llms.ChatMessageTypeHuman, llms.ChatMessageTypeAI, llms.ChatMessageTypeGeneric:
	default:
		return false
	}
	return i < cv.tail && !cv.pinned[i] && !hasToolCall(m) && !isToolResult(m)
}

// members returns the messages of the tool exchange headed by h.
func (cv classes) members(h int) []int {
	out := []int{h}
	for i := h + 1; i < len(cv.group); i++ {
		if cv.group[i] == h {
			out = append(out, i)
		}
	}
	return out
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
