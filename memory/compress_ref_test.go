package memory

// compress_ref_test.go keeps Compress as it was before Compressor, as the
// reference that Compressor's results are checked against.

import (
	"fmt"
	"slices"

	"github.com/agentguard/agentguard/trace"
	"github.com/tmc/langchaingo/llms"
)

func compressRef(messages []llms.MessageContent, budget int, c *Card) ([]llms.MessageContent, CompressReport) {
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

	cv := classifyRef(messages, c)
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
			r.Dropped = r.Dropped.add(i)
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

// classesRef is what Compress knows about each message.
type classesRef struct {
	tail   int    // index of the last user message, 0 if none: it and what follows stay
	pinned []bool // user messages that state an active constraint
	group  []int  // the assistant message whose tool calls a tool message answers; i itself otherwise
}

func classifyRef(messages []llms.MessageContent, c *Card) classesRef {
	n := len(messages)
	cv := classesRef{pinned: make([]bool, n), group: make([]int, n)} // no user message: all of it is in progress
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
func (cv classesRef) smallTalk(messages []llms.MessageContent, i int) bool {
	m := messages[i]
	switch m.Role {
	case llms.ChatMessageTypeHuman, llms.ChatMessageTypeAI, llms.ChatMessageTypeGeneric:
	default:
		return false
	}
	return i < cv.tail && !cv.pinned[i] && !hasToolCall(m) && !isToolResult(m)
}

// members returns the messages of the tool exchange headed by h.
func (cv classesRef) members(h int) []int {
	out := []int{h}
	for i := h + 1; i < len(cv.group); i++ {
		if cv.group[i] == h {
			out = append(out, i)
		}
	}
	return out
}
