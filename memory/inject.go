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
// Inject does, without copying the conversation: it keeps the messages it
// returned last, with the card in the first system message, and appends
// to them the messages added since. When the injected system message
// changes (a new card, a new system prompt) it replaces that one message
// in what it kept, so a call costs what was added since the last, however
// long the conversation. The slice it returned last therefore changes at
// that message on the next call: a caller that still reads it (a model
// call in flight, a copy kept) calls Detach first, and the next change is
// made in a copy. Before reusing what it kept it checks, message by
// message, that the caller's messages are the ones it read (the same
// parts, by address: no allocation, about a nanosecond a message); when
// the caller replaced one, or sent fewer, it starts over. It never
// changes the caller's messages. Its results are those of Inject. A
// conversation without a system message gets one first, holding the card,
// kept the same way; one whose system message holds only a card goes to
// Inject.
//
// The zero value is ready to use. An Injector is not safe for concurrent
// use.
type Injector struct {
	sys  int                   // index of the first system message in out
	lead int                   // 1 when out starts with a system message of the card's own
	seen marks                 // the messages read
	out  []llms.MessageContent // the messages read, with the card in out[sys]; nil when none kept
	// shared: a slice returned may still be read, so out[sys] (out[0] with
	// lead) is not to be changed in place.
	shared bool
}

// Detach leaves every slice j returned as it is: the next change of the
// injected system message is made in a copy of the conversation.
func (j *Injector) Detach() { j.shared = true }

// keep makes out hold messages, as read, with sysMsg at index at.
func (j *Injector) keep(messages []llms.MessageContent, at int, sysMsg llms.MessageContent, lead int) {
	j.out = make([]llms.MessageContent, 0, len(messages)+lead+len(messages)/2+8)
	if lead == 1 {
		j.out = append(j.out, sysMsg)
	}
	j.out = append(j.out, messages...)
	j.out[at] = sysMsg
	j.lead, j.shared = lead, false
	j.seen = j.seen[:0].add(messages)
}

// swap puts sysMsg at index at of out, in place unless a slice returned
// may still be read.
func (j *Injector) swap(at int, sysMsg llms.MessageContent) {
	if j.shared {
		j.out = append(make([]llms.MessageContent, 0, cap(j.out)), j.out...)
		j.shared = false
	}
	j.out[at] = sysMsg
}

// Inject is Inject for the conversation j follows.
func (j *Injector) Inject(messages []llms.MessageContent, c *Card) []llms.MessageContent {
	if !j.seen.match(messages) {
		j.out = nil
	}
	return j.inject(messages, c)
}

// Extend is Inject for messages that extend, unchanged, those of j's last
// call — the caller appended to them and replaced none — without checking
// them, so that a call costs what was added however long the
// conversation. It is for a caller that checked them itself or appended
// them: given messages that do not extend the last call's, its result is
// undefined.
func (j *Injector) Extend(messages []llms.MessageContent, c *Card) []llms.MessageContent {
	if len(messages) < len(j.seen) {
		j.out = nil
	}
	return j.inject(messages, c)
}

func (j *Injector) inject(messages []llms.MessageContent, c *Card) []llms.MessageContent {
	read := len(j.out) - j.lead
	if len(j.out) == 0 {
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
	switch {
	case read == 0:
		j.keep(messages, j.sys, head[j.sys], 0)
		return j.out[:len(j.out):len(j.out)]
	case !sameMessage(j.out[j.sys], head[j.sys]):
		j.swap(j.sys, head[j.sys])
	}
	j.out = append(j.out, messages[read:]...)
	j.seen = j.seen.add(messages[read:])
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
	if len(j.out) == 0 || j.lead != 1 {
		j.keep(messages, 0, llms.TextParts(llms.ChatMessageTypeSystem, block), 1)
		return j.out[:len(j.out):len(j.out)]
	}
	if slices.ContainsFunc(messages[read:], func(m llms.MessageContent) bool { return m.Role == llms.ChatMessageTypeSystem }) {
		j.out, j.lead = nil, 0 // a system message came: the card goes into it
		return j.inject(messages, c)
	}
	if !isText(j.out[0], block) {
		j.swap(0, llms.TextParts(llms.ChatMessageTypeSystem, block))
	}
	j.out = append(j.out, messages[read:]...)
	j.seen = j.seen.add(messages[read:])
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
