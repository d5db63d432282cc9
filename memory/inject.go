package memory

import (
	"slices"
	"strings"

	"github.com/tmc/langchaingo/llms"
)

// The lines that fence the card's block in a system message.
const (
	CardBegin = "[agentguard memory card]"
	CardEnd   = "[end of memory card]"
)

// Inject returns messages with the card's text in the first system
// message: appended to its last text part after a blank line (Anthropic
// joins system messages without a separator), or, when there is no system
// message, in a new one put first. The block is fenced by CardBegin and
// CardEnd, and a block already there is replaced, so injecting again — the
// same card or a newer one — never duplicates it; an empty or nil card
// removes it.
//
// messages is never modified: not the slice, nor its backing array, nor
// any message's Parts. The result shares the unchanged messages with it.
// When there is nothing to do, Inject returns messages itself, clipped to
// its length so that appending to the result copies.
func Inject(messages []llms.MessageContent, c *Card) []llms.MessageContent {
	var text string
	if c != nil {
		text = c.Text()
	}
	si := slices.IndexFunc(messages, func(m llms.MessageContent) bool { return m.Role == llms.ChatMessageTypeSystem })
	if text == "" && (si < 0 || !hasBlock(messages[si])) {
		return slices.Clip(messages)
	}
	block := CardBegin + "\n" + text + "\n" + CardEnd
	if si < 0 {
		out := make([]llms.MessageContent, 0, len(messages)+1)
		out = append(out, llms.TextParts(llms.ChatMessageTypeSystem, block))
		return append(out, messages...)
	}
	// Rebuild the system message's parts without old blocks, then add the
	// new block to its last text part.
	parts := make([]llms.ContentPart, 0, len(messages[si].Parts)+1)
	for _, p := range messages[si].Parts {
		if t, ok := p.(llms.TextContent); ok && strings.Contains(t.Text, CardBegin) {
			t.Text = stripBlocks(t.Text)
			if t.Text == "" {
				continue
			}
			p = t
		}
		parts = append(parts, p)
	}
	if text != "" {
		last := len(parts) - 1
		if t, ok := lastText(parts); ok && t.Text != "" {
			parts[last] = llms.TextContent{Text: t.Text + "\n\n" + block}
		} else {
			parts = append(parts, llms.TextContent{Text: block})
		}
	}
	if len(parts) == 0 { // the message held only a card: drop it
		return slices.Delete(slices.Clone(messages), si, si+1)
	}
	out := slices.Clone(messages)
	out[si].Parts = parts
	return out
}

func lastText(parts []llms.ContentPart) (llms.TextContent, bool) {
	if len(parts) == 0 {
		return llms.TextContent{}, false
	}
	t, ok := parts[len(parts)-1].(llms.TextContent)
	return t, ok
}

func hasBlock(m llms.MessageContent) bool {
	for _, p := range m.Parts {
		if t, ok := p.(llms.TextContent); ok && strings.Contains(t.Text, CardBegin) {
			return true
		}
	}
	return false
}

// stripBlocks removes every card block from s, with the blank line before
// it. A block without its end line runs to the end of s.
func stripBlocks(s string) string {
	for {
		i := strings.Index(s, CardBegin)
		if i < 0 {
			return s
		}
		end := len(s)
		if j := strings.Index(s[i:], CardEnd); j >= 0 {
			end = i + j + len(CardEnd)
		}
		s = strings.TrimRight(s[:i], "\n") + s[end:]
	}
}

// An Injector injects cards into one conversation call after call, as
// Inject does, without copying the whole conversation on every call: it
// keeps the messages it returned last, with the card in the first system
// message, and appends to them the messages added since. It copies them
// again only when the injected system message changes (a new card, a new
// system prompt), and never changes a message of a slice it returned, so
// a model that keeps each call's messages still has each call's own.
// Before reusing what it kept it checks, message by message, that the
// caller's messages are the ones it read (the same parts, by address: no
// allocation, about a nanosecond a message); when the caller replaced one,
// or sent fewer, it starts over. Its results are
// those of Inject. A conversation without a system message gets one first,
// holding the card, kept the same way; one whose system message holds only
// a card goes to Inject.
//
// The zero value is ready to use. An Injector is not safe for concurrent
// use.
type Injector struct {
	sys  int                   // index of the first system message in out
	lead int                   // 1 when out starts with a system message of the card's own
	seen marks                 // the messages read
	out  []llms.MessageContent // the messages read, with the card in out[sys]; nil when none kept
}

// Inject is Inject for the conversation j follows.
func (j *Injector) Inject(messages []llms.MessageContent, c *Card) []llms.MessageContent {
	read := len(j.out) - j.lead
	if len(j.out) == 0 || !j.seen.match(messages) {
		j.out, read, j.lead = nil, 0, 0
		j.sys = slices.IndexFunc(messages, func(m llms.MessageContent) bool { return m.Role == llms.ChatMessageTypeSystem })
	}
	if j.sys < 0 {
		return j.injectFirst(messages, c, read)
	}
	head := Inject(messages[:j.sys+1], c)
	if len(head) != j.sys+1 { // the system message held only a card
		j.out = nil
		return Inject(messages, c)
	}
	if &head[0] == &messages[0] { // nothing to do
		j.out = nil
		return slices.Clip(messages)
	}
	if read == 0 || !sameMessage(j.out[j.sys], head[j.sys]) {
		j.out = append(make([]llms.MessageContent, 0, len(messages)+len(messages)/2+8), messages...)
		j.out[j.sys] = head[j.sys]
		j.seen = j.seen[:0].add(messages)
	} else {
		j.out = append(j.out, messages[read:]...)
		j.seen = j.seen.add(messages[read:])
	}
	return j.out[:len(j.out):len(j.out)]
}

// injectFirst is Inject for a conversation without a system message: the
// card goes into one of its own, put first. What it returned last is kept
// and appended to while the card's text stays the same.
func (j *Injector) injectFirst(messages []llms.MessageContent, c *Card, read int) []llms.MessageContent {
	var text string
	if c != nil {
		text = c.Text()
	}
	if text == "" {
		j.out, j.lead = nil, 0
		return slices.Clip(messages)
	}
	block := CardBegin + "\n" + text + "\n" + CardEnd
	if len(j.out) == 0 || j.lead != 1 || !isText(j.out[0], block) {
		j.out = make([]llms.MessageContent, 0, len(messages)+len(messages)/2+8)
		j.out = append(j.out, llms.TextParts(llms.ChatMessageTypeSystem, block))
		j.out = append(j.out, messages...)
		j.lead = 1
		j.seen = j.seen[:0].add(messages)
	} else {
		if slices.ContainsFunc(messages[read:], func(m llms.MessageContent) bool { return m.Role == llms.ChatMessageTypeSystem }) {
			j.out, j.lead = nil, 0 // a system message came: the card goes into it
			return j.Inject(messages, c)
		}
		j.out = append(j.out, messages[read:]...)
		j.seen = j.seen.add(messages[read:])
	}
	return j.out[:len(j.out):len(j.out)]
}

// isText reports whether m holds one part, the text s.
func isText(m llms.MessageContent, s string) bool {
	if len(m.Parts) != 1 {
		return false
	}
	t, ok := m.Parts[0].(llms.TextContent)
	return ok && t.Text == s
}
