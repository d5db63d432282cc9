package trace

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"iter"
	"strconv"
	"strings"

	"github.com/go-json-experiment/json/jsontext"
)

// ImportOpenAI reads OpenAI-style chat logs, one JSON object per line, and
// yields one Trace per conversation; the package documentation gives the
// mapping. source names the input in errors and in the ids of conversations
// that have none; it may be empty.
//
// A line that cannot be imported yields (nil, err) with err a *ParseError
// naming the line, and the iteration goes on with the next line, so that one
// bad line loses nothing else; stop ranging to stop at the first error. An
// I/O error is yielded last. Blank lines are skipped and lines longer than
// DefaultMaxLine are errors.
//
// The sequence reads r as it goes and is single-use: ranging over it again
// continues after the last line read.
func ImportOpenAI(r io.Reader, source string) iter.Seq2[*Trace, error] {
	return importLines(r, source, "openai", importChat)
}

// importLines reads r one JSON object per line and yields the trace parse
// makes of each (checked as the JSONL reader checks one, checkRanges), or a
// *ParseError naming the line, and goes on with the next line; an I/O
// error ends it. parse gets the line and "source:line" to name traces
// that have no id; source defaults to fallback.
func importLines(r io.Reader, source, fallback string, parse func(line []byte, at string) (*Trace, error)) iter.Seq2[*Trace, error] {
	lr := &lineReader{br: bufio.NewReaderSize(r, 64<<10), source: source}
	if source == "" {
		source = fallback
	}
	return func(yield func(*Trace, error) bool) {
		for {
			line, err := lr.next()
			if err == io.EOF {
				return
			}
			if err != nil {
				if !yield(nil, err) || lr.err != nil {
					return
				}
				continue
			}
			t, err := parse(line, source+":"+strconv.Itoa(lr.line))
			if err == nil {
				err = checkRanges(t) // a negative token count or cost, as the JSONL reader refuses
			}
			if err != nil {
				t, err = nil, lr.errorf(err)
			}
			if !yield(t, err) {
				return
			}
		}
	}
}

// The OpenAI chat shapes, as far as the importer reads them.
type (
	chatLog struct {
		ID        json.RawMessage            `json:"id"`
		SessionID string                     `json:"session_id"`
		Route     string                     `json:"route"`
		Model     string                     `json:"model"`
		Metadata  map[string]json.RawMessage `json:"metadata"`
		Messages  *[]chatMessage             `json:"messages"`
		Tools     []chatTool                 `json:"tools"`
		Functions []chatFunction             `json:"functions"` // legacy tools
	}
	chatMessage struct {
		Role         string          `json:"role"`
		Content      json.RawMessage `json:"content"`
		Refusal      string          `json:"refusal"`
		Name         string          `json:"name"`
		ToolCalls    []chatToolCall  `json:"tool_calls"`
		FunctionCall *chatCall       `json:"function_call"` // legacy tool call
		ToolCallID   string          `json:"tool_call_id"`
	}
	chatPart struct {
		Type    string  `json:"type"`
		Text    *string `json:"text"`
		Refusal *string `json:"refusal"`
	}
	chatToolCall struct {
		ID       string   `json:"id"`
		Type     string   `json:"type"`
		Function chatCall `json:"function"`
	}
	chatCall struct {
		Name      string          `json:"name"`
		Arguments json.RawMessage `json:"arguments"`
	}
	chatTool struct {
		Type         string        `json:"type"`
		Function     *chatFunction `json:"function"`
		chatFunction               // the flat form, without "function"
	}
	chatFunction struct {
		Name        string          `json:"name"`
		Description string          `json:"description"`
		Parameters  json.RawMessage `json:"parameters"`
	}
)

// unmatchedResult is the Error of a tool step made from a tool message that
// answers no call.
const unmatchedResult = "unmatched tool result"

// importChat turns one chat log line into a Trace; defaultID is its id when
// the line has none.
func importChat(line []byte, defaultID string) (*Trace, error) {
	if line[0] != '{' {
		return nil, errors.New("not a JSON object")
	}
	var l chatLog
	if err := unmarshal(line, &l); err != nil {
		return nil, jsonError(err)
	}
	if err := UniqueKeys(line); err != nil {
		return nil, err
	}
	if l.Messages == nil {
		return nil, errors.New(`no "messages" key`)
	}
	t := &Trace{SessionID: l.SessionID, Route: l.Route, Steps: []*Step{}}
	var err error
	if t.ID, err = scalarText(l.ID); err != nil {
		return nil, fmt.Errorf("id: %w", err)
	}
	if t.ID == "" {
		t.ID = defaultID
	}
	if t.Meta, err = chatMeta(l.Metadata); err != nil {
		return nil, err
	}
	if t.Tools, err = chatTools(l.Tools, l.Functions); err != nil {
		return nil, err
	}
	if err := chatMessages(newConversation(t), l.Model, *l.Messages); err != nil {
		return nil, err
	}
	return t, nil
}

// chatMeta returns the line's metadata values that are not null, as text,
// with room for the system prompt; nil when there are none.
func chatMeta(metadata map[string]json.RawMessage) (map[string]string, error) {
	var meta map[string]string
	for k, v := range metadata {
		if string(v) == "null" {
			continue
		}
		if meta == nil {
			meta = make(map[string]string, len(metadata)+1)
		}
		var err error
		if meta[k], err = jsonText(v); err != nil {
			return nil, fmt.Errorf("metadata %q: %w", k, err)
		}
	}
	return meta, nil
}

// chatTools returns the line's tools, then its legacy functions, as
// ToolSpecs.
func chatTools(tools []chatTool, functions []chatFunction) ([]ToolSpec, error) {
	var specs []ToolSpec
	for i, tool := range tools {
		f := tool.Function
		if f == nil {
			f = &tool.chatFunction
		}
		spec, err := f.spec()
		if err != nil {
			return nil, fmt.Errorf("tool %d: %w", i, err)
		}
		specs = append(specs, spec)
	}
	for i, f := range functions {
		spec, err := f.spec()
		if err != nil {
			return nil, fmt.Errorf("function %d: %w", i, err)
		}
		specs = append(specs, spec)
	}
	return specs, nil
}

// chatMessages adds the messages to c's trace: user turns, model steps of
// model with a tool step per call, tool results to the calls they answer,
// and the system and developer messages, joined, as Meta["system"].
func chatMessages(c *conversation, model string, msgs []chatMessage) error {
	var system []string
	for i, m := range msgs {
		text, refusal, err := m.text()
		if err != nil {
			return fmt.Errorf("message %d: %w", i, err)
		}
		switch m.Role {
		case "system", "developer":
			system = append(system, text)
		case "user":
			c.user(text)
		case "assistant":
			calls, err := m.calls()
			if err != nil {
				return fmt.Errorf("message %d: %w", i, err)
			}
			c.model(&Step{Name: model, Result: text, Refusal: refusal, Calls: calls, Source: messageSource(i)})
		case "tool", "function":
			c.resultAt(m.ToolCallID, m.Name, text, FailedToolText(text), messageSource(i))
		default:
			return fmt.Errorf("message %d: unknown role %q", i, m.Role)
		}
	}
	if system != nil {
		if c.t.Meta == nil {
			c.t.Meta = make(map[string]string, 1)
		}
		c.t.Meta["system"] = strings.Join(system, "\n\n")
	}
	return nil
}

// messageSource is Step.Source for the input's message i.
func messageSource(i int) string { return "message " + strconv.Itoa(i) }

// FailedToolText reports whether a tool's content, in a log with no field
// for failure, says its call failed: agents write the failure into the
// content, as τ-bench and LangChain's ToolException do ("Error: order not
// found"), or as a JSON object whose only key is "error". The chat-log
// readers make such a result the step's Error, so rules and policy
// lookups see a failed call, not a record.
func FailedToolText(text string) bool {
	t := strings.TrimSpace(text)
	if len(t) >= 6 && strings.EqualFold(t[:6], "error:") {
		return true
	}
	if !strings.HasPrefix(t, "{") {
		return false
	}
	// Read as encoding/json reads it into a map: a later duplicate of a
	// key replaces the earlier, invalid UTF-8 is let through, and anything
	// but one object is no failure. A token at a time, so that a large
	// record costs no allocation.
	dec := jsontext.NewDecoder(strings.NewReader(t), jsontext.AllowDuplicateNames(true), jsontext.AllowInvalidUTF8(true))
	if _, err := dec.ReadToken(); err != nil {
		return false
	}
	failed := false
	for dec.PeekKind() == '"' {
		name, err := dec.ReadToken()
		if err != nil || name.String() != "error" {
			return false // invalid, or a second key: a record with an "error" field is a record
		}
		v, err := dec.ReadValue()
		if err != nil {
			return false
		}
		switch string(v) {
		case "null", "false", `""`, "{}", "[]":
			failed = false
		default:
			failed = true
		}
	}
	if _, err := dec.ReadToken(); err != nil { // the closing brace
		return false
	}
	if _, err := dec.ReadToken(); err != io.EOF { // nothing after it
		return false
	}
	return failed
}

// pendingCalls holds the tool steps of a conversation, to match tool
// messages with the calls they answer in constant time.
type pendingCalls struct {
	steps    []*Step
	answered []bool
	oldest   int              // no unanswered step before it
	byID     map[string][]int // unanswered steps by CallID, oldest first
}

func (p *pendingCalls) push(s *Step) {
	if s.CallID != "" {
		if p.byID == nil {
			p.byID = make(map[string][]int)
		}
		p.byID[s.CallID] = append(p.byID[s.CallID], len(p.steps))
	}
	p.steps = append(p.steps, s)
	p.answered = append(p.answered, false)
}

// answer marks as answered, and returns, the oldest unanswered step with
// the given CallID, or the oldest of all when id is empty; nil if none.
func (p *pendingCalls) answer(id string) *Step {
	j := -1
	if id == "" {
		for p.oldest < len(p.steps) && p.answered[p.oldest] {
			p.oldest++
		}
		if p.oldest < len(p.steps) {
			j = p.oldest
		}
	} else {
		q := p.byID[id]
		for len(q) > 0 && p.answered[q[0]] {
			q = q[1:]
		}
		if len(q) > 0 {
			j, q = q[0], q[1:]
			p.byID[id] = q
		}
	}
	if j < 0 {
		return nil
	}
	p.answered[j] = true
	return p.steps[j]
}

// text returns the message's text: its content string, or the text of its
// content parts run together, and any refusal after it.
func (m *chatMessage) text() (string, bool, error) {
	c := bytes.TrimSpace(m.Content)
	var text string
	refusal := m.Refusal != ""
	switch {
	case len(c) == 0 || string(c) == "null":
	case c[0] == '"':
		if err := json.Unmarshal(c, &text); err != nil {
			return "", false, err
		}
	case c[0] == '[':
		var parts []chatPart
		if err := unmarshal(c, &parts); err != nil {
			return "", false, fmt.Errorf("content: %w", jsonError(err))
		}
		var b strings.Builder
		for _, p := range parts {
			switch {
			case p.Text != nil:
				b.WriteString(*p.Text)
			case p.Refusal != nil:
				b.WriteString(*p.Refusal)
				refusal = true
			}
		}
		text = b.String()
	default:
		return "", false, errors.New("content is not a string, an array of parts or null")
	}
	return text + m.Refusal, refusal, nil
}

// calls returns the tool calls of an assistant message, the legacy
// function_call last.
func (m *chatMessage) calls() ([]Call, error) {
	var calls []Call
	for i, tc := range m.ToolCalls {
		args, err := argsText(tc.Function.Arguments)
		if err != nil {
			return nil, fmt.Errorf("tool call %d: arguments: %w", i, err)
		}
		calls = append(calls, Call{ID: tc.ID, Name: tc.Function.Name, Args: args})
	}
	if fc := m.FunctionCall; fc != nil {
		args, err := argsText(fc.Arguments)
		if err != nil {
			return nil, fmt.Errorf("function call: arguments: %w", err)
		}
		calls = append(calls, Call{Name: fc.Name, Args: args})
	}
	return calls, nil
}

func (f *chatFunction) spec() (ToolSpec, error) {
	s := ToolSpec{Name: f.Name, Description: f.Description}
	if p := bytes.TrimSpace(f.Parameters); len(p) > 0 && string(p) != "null" {
		var b bytes.Buffer
		if err := json.Compact(&b, p); err != nil {
			return s, err
		}
		s.Parameters = b.Bytes()
	}
	return s, nil
}

// argsText returns tool-call arguments as text: a JSON string as it is, any
// other JSON value compacted, null as "".
func argsText(raw json.RawMessage) (string, error) {
	raw = bytes.TrimSpace(raw)
	if len(raw) == 0 || string(raw) == "null" {
		return "", nil
	}
	return jsonText(raw)
}

// jsonText returns a JSON string's value, or any other JSON value compacted.
func jsonText(raw json.RawMessage) (string, error) {
	if raw[0] == '"' {
		var s string
		err := json.Unmarshal(raw, &s)
		return s, err
	}
	var b bytes.Buffer
	err := json.Compact(&b, raw)
	// Compact keeps invalid UTF-8 as it is; replace it as Unmarshal does
	// for strings, so that the text survives a JSONL round trip.
	return strings.ToValidUTF8(b.String(), "\uFFFD"), err
}

// scalarText returns a JSON string's value or a number's text; "" for null
// or nothing.
func scalarText(raw json.RawMessage) (string, error) {
	switch {
	case len(raw) == 0 || string(raw) == "null":
		return "", nil
	case raw[0] == '"':
		var s string
		err := json.Unmarshal(raw, &s)
		return s, err
	case raw[0] == '-' || raw[0] >= '0' && raw[0] <= '9':
		return string(raw), nil
	}
	return "", errors.New("not a string or a number")
}
