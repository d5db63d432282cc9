package trace

import (
	"bytes"
	"encoding/json"
	"strings"
)

// anyMessage is a chat message in any of the shapes the importers meet:
// OpenAI's ({"role", "content", "tool_calls"}), LangChain's as a dict
// ({"type": "human", "content", "tool_calls": [{"name", "args", "id"}]}) or
// serialized ({"lc": 1, "id": [..., "AIMessage"], "kwargs": {...}}), and
// content as a string or a list of parts ({"type": "text", "text"}).
type anyMessage struct {
	Role       string          `json:"role"`
	Type       string          `json:"type"`
	Content    json.RawMessage `json:"content"`
	Name       string          `json:"name"`
	ToolCalls  json.RawMessage `json:"tool_calls"`
	ToolCallID string          `json:"tool_call_id"`
	ID         json.RawMessage `json:"id"`     // a serialized message's class path
	Kwargs     *anyMessage     `json:"kwargs"` // a serialized message's fields
	Status     string          `json:"status"` // a LangChain tool message's "error"
	// response_metadata of a LangChain AI message.
	ResponseMetadata struct {
		FinishReason string `json:"finish_reason"`
		StopReason   string `json:"stop_reason"`
		ModelName    string `json:"model_name"`
		Model        string `json:"model"`
		ID           string `json:"id"`
	} `json:"response_metadata"`
}

// message roles, normalized.
const (
	roleUser      = "user"
	roleAssistant = "assistant"
	roleTool      = "tool"
	roleSystem    = "system"
)

// readMessage reads raw as a message; ok is false when it is not one.
func readMessage(raw json.RawMessage) (m anyMessage, ok bool) {
	raw = bytes.TrimSpace(raw)
	if len(raw) == 0 || raw[0] != '{' || json.Unmarshal(raw, &m) != nil {
		return m, false
	}
	if m.Kwargs != nil { // serialized: the class names the role
		var path []string
		json.Unmarshal(m.ID, &path)
		k := *m.Kwargs
		if len(path) > 0 {
			k.Type = path[len(path)-1]
		}
		m = k
	}
	m.Role = normalRole(m.Role, m.Type)
	return m, m.Role != ""
}

func normalRole(role, typ string) string {
	switch strings.ToLower(role) {
	case "user", "human":
		return roleUser
	case "assistant", "ai", "model":
		return roleAssistant
	case "tool", "function":
		return roleTool
	case "system", "developer":
		return roleSystem
	}
	switch typ {
	case "human", "HumanMessage", "HumanMessageChunk":
		return roleUser
	case "ai", "AIMessage", "AIMessageChunk":
		return roleAssistant
	case "tool", "ToolMessage", "function", "FunctionMessage":
		return roleTool
	case "system", "SystemMessage":
		return roleSystem
	}
	return ""
}

// text returns the message's text: its content string, or its text parts
// run together.
func (m anyMessage) text() string { return contentText(m.Content) }

func contentText(raw json.RawMessage) string {
	raw = bytes.TrimSpace(raw)
	if len(raw) == 0 || raw[0] != '[' {
		return anyText(raw)
	}
	var parts []struct {
		Type string          `json:"type"`
		Text *string         `json:"text"`
		Cont json.RawMessage `json:"content"`
	}
	if json.Unmarshal(raw, &parts) != nil {
		return anyText(raw)
	}
	var b strings.Builder
	for _, p := range parts {
		switch {
		case p.Text != nil && (p.Type == "" || p.Type == "text" || p.Type == "output_text" || p.Type == "input_text"):
			b.WriteString(*p.Text)
		case p.Type == "tool_result" || p.Type == "tool_use" || p.Type == "thinking" || p.Type == "redacted_thinking":
		case p.Cont != nil && p.Type == "text":
			b.WriteString(anyText(p.Cont))
		}
	}
	return b.String()
}

// calls returns the tool calls of an assistant message, OpenAI's or
// LangChain's.
func (m anyMessage) calls() []Call {
	var raw []struct {
		ID       string          `json:"id"`
		Name     string          `json:"name"`
		Args     json.RawMessage `json:"args"`
		Function *struct {
			Name      string          `json:"name"`
			Arguments json.RawMessage `json:"arguments"`
		} `json:"function"`
	}
	if json.Unmarshal(m.ToolCalls, &raw) != nil {
		return nil
	}
	var out []Call
	for _, c := range raw {
		call := Call{ID: c.ID, Name: c.Name, Args: anyText(c.Args)}
		if f := c.Function; f != nil {
			call.Name, call.Args = f.Name, anyText(f.Arguments)
		}
		out = append(out, call)
	}
	return out
}

// messageList reads raw as a list of messages: a list, a list of lists
// (LangChain's batched inputs: the first batch), or an object holding one
// under "messages"; nil when it is none.
func messageList(raw json.RawMessage) []anyMessage {
	raw = bytes.TrimSpace(raw)
	if len(raw) > 0 && raw[0] == '{' {
		var obj struct {
			Messages json.RawMessage `json:"messages"`
		}
		if json.Unmarshal(raw, &obj) != nil || obj.Messages == nil {
			return nil
		}
		raw = bytes.TrimSpace(obj.Messages)
	}
	var list []json.RawMessage
	if len(raw) == 0 || raw[0] != '[' || json.Unmarshal(raw, &list) != nil {
		return nil
	}
	if len(list) > 0 && len(bytes.TrimSpace(list[0])) > 0 && bytes.TrimSpace(list[0])[0] == '[' {
		return messageList(list[0])
	}
	var out []anyMessage
	for _, r := range list {
		if m, ok := readMessage(r); ok {
			out = append(out, m)
		}
	}
	return out
}

// userTurns returns the texts of the user messages of msgs.
func userTurns(msgs []anyMessage) []string {
	var out []string
	for _, m := range msgs {
		if m.Role == roleUser {
			out = append(out, m.text())
		}
	}
	return out
}

// longer returns the longer of the user turns seen so far and those of a
// new model input: each input repeats the conversation so far.
func longer(turns, more []string) []string {
	if len(more) > len(turns) {
		return more
	}
	return turns
}
