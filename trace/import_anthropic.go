package trace

import (
	"bytes"
	"cmp"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"iter"
	"strings"
)

// ImportAnthropic reads Anthropic Messages API logs, one JSON object per
// line, and yields one Trace per line. A line is a request body — "model",
// "system", "tools" (name, description, input_schema) and "messages", whose
// content is a string or content blocks (text, tool_use, tool_result) — with
// the API's answer, a Message, under "response" when it was logged; or the
// two under "request" and "response". "id", "session_id", "route" and
// "metadata" (string values) are read when present.
//
// User text becomes user turns; an assistant message a model step whose
// tool_use blocks are its calls, each followed by a tool step that the
// matching tool_result (by tool_use_id) completes, with Error set when
// is_error is true. The response is the last model step, with its id,
// model, stop_reason and token usage.
//
// Errors are as for ImportOpenAI: a line that cannot be imported yields a
// *ParseError naming it (a key given twice included), and the next line
// is read.
func ImportAnthropic(r io.Reader, source string) iter.Seq2[*Trace, error] {
	return importLines(r, source, "anthropic", importAnthropic)
}

// SniffAnthropic reports whether head, the first bytes of an input, looks
// like an Anthropic Messages log: a JSON object with "messages" or
// "request" and a mark of Anthropic's format — content blocks of type
// tool_use or tool_result, a tool's input_schema, a Message's stop_reason
// or "type":"message".
func SniffAnthropic(head []byte) bool {
	k := firstKey(head)
	if k == "" || !(bytes.Contains(head, []byte(`"messages"`)) || k == "request") {
		return false
	}
	for _, mark := range []string{`"tool_use"`, `"tool_result"`, `"input_schema"`, `"stop_reason"`, `"type":"message"`, `"type": "message"`} {
		if bytes.Contains(head, []byte(mark)) {
			return true
		}
	}
	return false
}

type (
	anthropicLog struct {
		anthropicRequest
		ID        json.RawMessage            `json:"id"`
		SessionID string                     `json:"session_id"`
		Route     string                     `json:"route"`
		Metadata  map[string]json.RawMessage `json:"metadata"`
		Request   *anthropicRequest          `json:"request"`
		Response  *anthropicMessage          `json:"response"`
	}
	anthropicRequest struct {
		Model    string              `json:"model"`
		System   json.RawMessage     `json:"system"`
		Tools    []anthropicTool     `json:"tools"`
		Messages *[]anthropicMessage `json:"messages"`
	}
	anthropicTool struct {
		Name        string          `json:"name"`
		Description string          `json:"description"`
		InputSchema json.RawMessage `json:"input_schema"`
	}
	anthropicMessage struct {
		ID         string          `json:"id"`
		Model      string          `json:"model"`
		Role       string          `json:"role"`
		Content    json.RawMessage `json:"content"`
		StopReason string          `json:"stop_reason"`
		Usage      struct {
			InputTokens              int `json:"input_tokens"`
			OutputTokens             int `json:"output_tokens"`
			CacheCreationInputTokens int `json:"cache_creation_input_tokens"`
			CacheReadInputTokens     int `json:"cache_read_input_tokens"`
		} `json:"usage"`
	}
	anthropicBlock struct {
		Type      string          `json:"type"`
		Text      string          `json:"text"`
		ID        string          `json:"id"`
		Name      string          `json:"name"`
		Input     json.RawMessage `json:"input"`
		ToolUseID string          `json:"tool_use_id"`
		Content   json.RawMessage `json:"content"`
		IsError   bool            `json:"is_error"`
	}
)

// importAnthropic turns one Anthropic Messages log line into a Trace;
// defaultID is its id when the line has none.
func importAnthropic(line []byte, defaultID string) (*Trace, error) {
	if line[0] != '{' {
		return nil, errors.New("not a JSON object")
	}
	if err := UniqueKeys(line); err != nil {
		return nil, err
	}
	var l anthropicLog
	if err := unmarshal(line, &l); err != nil {
		return nil, jsonError(err)
	}
	req := l.anthropicRequest
	if l.Request != nil {
		req = *l.Request
	}
	if req.Messages == nil {
		return nil, errors.New(`no "messages" key`)
	}
	t := &Trace{SessionID: l.SessionID, Route: l.Route}
	var err error
	if t.ID, err = scalarText(l.ID); err != nil {
		return nil, fmt.Errorf("id: %w", err)
	}
	if t.ID == "" {
		t.ID = defaultID
	}
	t.Meta = anthropicMeta(l.Metadata, req.System)
	if t.Tools, err = anthropicTools(req.Tools); err != nil {
		return nil, err
	}
	if err := anthropicMessages(newConversation(t), req.Model, *req.Messages, l.Response); err != nil {
		return nil, err
	}
	return t, nil
}

// anthropicMeta returns the log's metadata that has text, and the system
// prompt under "system", as Trace.Meta; nil when there is neither.
func anthropicMeta(metadata map[string]json.RawMessage, system json.RawMessage) map[string]string {
	var meta map[string]string
	for k, v := range metadata {
		if s := anyText(v); s != "" {
			if meta == nil {
				meta = map[string]string{}
			}
			meta[k] = s
		}
	}
	if sys := contentText(system); sys != "" {
		if meta == nil {
			meta = map[string]string{}
		}
		meta["system"] = sys
	}
	return meta
}

// anthropicTools returns the request's tools as ToolSpecs, their input
// schemas compacted.
func anthropicTools(tools []anthropicTool) ([]ToolSpec, error) {
	var specs []ToolSpec
	for _, tool := range tools {
		spec := ToolSpec{Name: tool.Name, Description: tool.Description}
		if p := bytes.TrimSpace(tool.InputSchema); len(p) > 0 && string(p) != "null" {
			var b bytes.Buffer
			if err := json.Compact(&b, p); err != nil {
				return nil, fmt.Errorf("tool %q: input_schema: %w", tool.Name, err)
			}
			spec.Parameters = b.Bytes()
		}
		specs = append(specs, spec)
	}
	return specs, nil
}

// anthropicMessages adds the request's messages, and the response when
// it was logged, to c: user text as user turns, tool results to the calls
// they answer, assistant messages as model steps of model.
func anthropicMessages(c *conversation, model string, msgs []anthropicMessage, resp *anthropicMessage) error {
	if resp != nil {
		msgs = append(msgs[:len(msgs):len(msgs)], *resp)
	}
	for i, m := range msgs {
		blocks, err := anthropicBlocks(m.Content)
		if err != nil {
			return fmt.Errorf("message %d: %w", i, err)
		}
		switch m.Role {
		case "user":
			anthropicUser(c, blocks, messageSource(i))
		case "assistant":
			s := anthropicAssistant(model, blocks)
			if resp != nil && i == len(msgs)-1 {
				anthropicResponse(s, model, resp)
			}
			s.Source = messageSource(i)
			c.model(s)
		default:
			return fmt.Errorf("message %d: unknown role %q", i, m.Role)
		}
	}
	return nil
}

// anthropicUser adds a user message's blocks to c: its tool results to
// the calls they answer, then its text, joined, as a user turn.
func anthropicUser(c *conversation, blocks []anthropicBlock, source string) {
	var text []string
	for _, b := range blocks {
		switch b.Type {
		case "text":
			text = append(text, b.Text)
		case "tool_result":
			c.resultAt(b.ToolUseID, "", contentText(b.Content), b.IsError, source)
		}
	}
	if len(text) > 0 {
		c.user(strings.Join(text, "\n"))
	}
}

// anthropicAssistant returns the model step of an assistant message's
// blocks: its text, and its tool_use blocks as calls.
func anthropicAssistant(model string, blocks []anthropicBlock) *Step {
	s := &Step{Name: model}
	for _, b := range blocks {
		switch b.Type {
		case "text":
			s.Result += b.Text
		case "tool_use":
			s.Calls = append(s.Calls, Call{ID: b.ID, Name: b.Name, Args: anyText(b.Input)})
		}
	}
	return s
}

// anthropicResponse completes the model step of the logged response r: its
// id, model, stop reason and token usage, the cached input tokens
// included.
func anthropicResponse(s *Step, model string, r *anthropicMessage) {
	s.Name = cmp.Or(model, r.Model)
	s.Provider, s.ResponseID, s.ResponseModel, s.FinishReason = "anthropic", r.ID, r.Model, r.StopReason
	s.TokensIn = r.Usage.InputTokens + r.Usage.CacheCreationInputTokens + r.Usage.CacheReadInputTokens
	s.TokensOut = r.Usage.OutputTokens
}

// anthropicBlocks reads a message's content: a string is one text block.
func anthropicBlocks(raw json.RawMessage) ([]anthropicBlock, error) {
	raw = bytes.TrimSpace(raw)
	switch {
	case len(raw) == 0 || string(raw) == "null":
		return nil, nil
	case raw[0] == '"':
		var s string
		if err := json.Unmarshal(raw, &s); err != nil {
			return nil, err
		}
		return []anthropicBlock{{Type: "text", Text: s}}, nil
	case raw[0] == '[':
		var blocks []anthropicBlock
		if err := json.Unmarshal(raw, &blocks); err != nil {
			return nil, fmt.Errorf("content: %w", jsonError(err))
		}
		return blocks, nil
	}
	return nil, errors.New("content is not a string or a list of blocks")
}
