// Package memorycmd is the verb "agentguard memory": it shows the memory
// card at work on one conversation.
//
//	agentguard memory [-budget N] [FILE]
//
// FILE (the standard input when absent or "-") holds one OpenAI-style chat
// message per line: {"role":"system|user|assistant|tool","content":...};
// assistant messages may carry "tool_calls" ([{"id","type":"function",
// "function":{"name","arguments"}}]) and tool messages a "tool_call_id".
// The verb prints
//
//  1. the card built from the user turns, as JSON, history included, then
//     its history turn by turn (what each statement replaced or lifted)
//     and its text as the model sees it;
//  2. the messages that would be sent to the model under the token budget:
//     compressed by memory.Compress, with the card injected, one
//     OpenAI-style message per line;
//  3. the tool calls in the conversation that violate the card, found by
//     memory.Enforcer over the conversation imported as a trace, as
//     offline evaluation would.
//
// testdata holds two conversations: sms_zh.jsonl, 27 user turns in Chinese
// where the user forbids SMS in turn 6 and the agent sends one in turn 24,
// and address_en.jsonl, where the user's address changes and the agent
// uses the old one.
package memorycmd

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"strings"

	"github.com/agentguard/agentguard/examples/agentguard/internal/cli"
	"github.com/agentguard/agentguard/memory"
	"github.com/agentguard/agentguard/trace"
	"github.com/tmc/langchaingo/llms"
)

var verb = cli.Verb{
	Name:     "memory",
	Synopsis: "[-budget N] [FILE]",
	Doc: `Builds the memory card from one conversation (one OpenAI-style chat message
per line, from FILE or the standard input), prints the card, the messages
sent to the model under the token budget, and the tool calls that violate
the card.`,
	MaxArgs: 1,
}

// Run is the verb: it reads the conversation args name and returns the
// exit status (see package cli): 1 when a tool call violates the card.
func Run(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	fs := verb.FlagSet()
	budget := fs.Int("budget", 600, "token budget of the messages sent to the model, card included; 0 means no limit")
	files, code, ok := verb.Parse(fs, args, stdout, stderr)
	if !ok {
		return code
	}
	in := cli.Stdin(ctx)
	if len(files) == 1 && files[0] != "-" {
		f, err := os.Open(files[0])
		if err != nil {
			verb.Errorf(stderr, "%v", err)
			return cli.ExitUsage
		}
		defer f.Close()
		in = f
	}
	n, err := run(in, stdout, *budget)
	switch {
	case err != nil:
		verb.Errorf(stderr, "%v", err)
		return cli.ExitUsage
	case n > 0:
		return cli.ExitFindings
	}
	return cli.ExitPassed
}

// message is one line of the input, and of the message list printed.
type message struct {
	Role       string          `json:"role"`
	Content    json.RawMessage `json:"content"`
	ToolCalls  []toolCall      `json:"tool_calls,omitempty"`
	ToolCallID string          `json:"tool_call_id,omitempty"`
	Name       string          `json:"name,omitempty"`
}

type toolCall struct {
	ID       string `json:"id"`
	Type     string `json:"type"`
	Function struct {
		Name      string `json:"name"`
		Arguments string `json:"arguments"`
	} `json:"function"`
}

// run reads a conversation from in, writes the report to out, and returns
// the number of violations.
func run(in io.Reader, out io.Writer, budget int) (int, error) {
	lines, msgs, err := read(in)
	if err != nil {
		return 0, err
	}
	tr, err := importTrace(lines)
	if err != nil {
		return 0, err
	}

	// The card, as the guard builds it: one extraction per user turn.
	card := &memory.Card{}
	for turn, text := range tr.UserTurns {
		if _, err := card.Observe(context.Background(), memory.RuleBased(nil), turn, text); err != nil {
			return 0, err
		}
	}
	w := bufio.NewWriter(out)
	fmt.Fprintln(w, "# card")
	if err := writeJSON(w, card, "  "); err != nil {
		return 0, err
	}
	fmt.Fprintln(w, "\n# card history")
	writeHistory(w, card.History())
	fmt.Fprintln(w, "\n# card text")
	fmt.Fprintln(w, card.Text())

	sent, rep := memory.Compress(msgs, budget, card)
	sent = memory.Inject(sent, card)
	fmt.Fprintf(w, "\n# messages sent under a budget of %d tokens: %d of %d kept, %d -> %d tokens\n",
		budget, rep.Kept, rep.Messages, rep.TokensBefore, rep.TokensAfter)
	fmt.Fprintf(w, "# dropped %v, elided %v, pinned %v", rep.Dropped, rep.Elided, rep.Pinned)
	if rep.OverBudget {
		fmt.Fprint(w, ", over budget")
	}
	fmt.Fprintln(w)
	for _, m := range sent {
		for _, line := range toOpenAI(m) {
			if err := writeJSON(w, line, ""); err != nil {
				return 0, err
			}
		}
	}

	var found []string
	for i, s := range tr.Steps {
		for _, f := range (memory.Enforcer{}).Check(tr.Prefix(i), s) {
			found = append(found, fmt.Sprintf("step %d (%s, turn %d): %s %s: %s", f.Step, s.Name, s.Turn, f.Rule, f.Verdict, f.Message))
		}
	}
	fmt.Fprintf(w, "\n# violations: %d\n", len(found))
	for _, v := range found {
		fmt.Fprintln(w, v)
	}
	return len(found), w.Flush()
}

// writeHistory writes one line per constraint the card has held, in the
// order stated: its turn, what it is, and where it stands — the address a
// later one superseded, the prohibition the user lifted.
func writeHistory(w io.Writer, all []memory.Constraint) {
	for i, c := range all {
		fmt.Fprintf(w, "turn %d: %s %s %q: %s", c.Turn, c.Kind, c.Key, c.Value, c.Status)
		switch c.Status {
		case memory.Superseded:
			for _, n := range all[i+1:] {
				if n.Kind == c.Kind && n.Key == c.Key && n.Turn == c.Ended {
					fmt.Fprintf(w, " in turn %d by %q", c.Ended, n.Value)
					break
				}
			}
		case memory.Revoked:
			fmt.Fprintf(w, " in turn %d", c.Ended)
		}
		fmt.Fprintln(w)
	}
}

// read parses the input lines into messages for the model.
func read(in io.Reader) (lines []json.RawMessage, msgs []llms.MessageContent, err error) {
	sc := bufio.NewScanner(in)
	sc.Buffer(make([]byte, 0, 64<<10), 4<<20)
	for n := 1; sc.Scan(); n++ {
		line := bytes.TrimSpace(sc.Bytes())
		if len(line) == 0 {
			continue
		}
		var m message
		if err := json.Unmarshal(line, &m); err != nil {
			return nil, nil, fmt.Errorf("line %d: %w", n, err)
		}
		mc, err := toLLM(m)
		if err != nil {
			return nil, nil, fmt.Errorf("line %d: %w", n, err)
		}
		lines = append(lines, json.RawMessage(bytes.Clone(line)))
		msgs = append(msgs, mc)
	}
	if err := sc.Err(); err != nil {
		return nil, nil, err
	}
	if len(msgs) == 0 {
		return nil, nil, errors.New("no messages on standard input")
	}
	return lines, msgs, nil
}

// text reads an OpenAI content: a string, null, or an array of parts whose
// text parts run together.
func text(raw json.RawMessage) (string, error) {
	if len(raw) == 0 || string(raw) == "null" {
		return "", nil
	}
	var s string
	if json.Unmarshal(raw, &s) == nil {
		return s, nil
	}
	var parts []struct {
		Type string `json:"type"`
		Text string `json:"text"`
	}
	if err := json.Unmarshal(raw, &parts); err != nil {
		return "", fmt.Errorf("content is neither text nor parts: %w", err)
	}
	var b strings.Builder
	for _, p := range parts {
		b.WriteString(p.Text)
	}
	return b.String(), nil
}

func toLLM(m message) (llms.MessageContent, error) {
	t, err := text(m.Content)
	if err != nil {
		return llms.MessageContent{}, err
	}
	switch m.Role {
	case "system", "developer":
		return llms.TextParts(llms.ChatMessageTypeSystem, t), nil
	case "user":
		return llms.TextParts(llms.ChatMessageTypeHuman, t), nil
	case "assistant":
		mc := llms.MessageContent{Role: llms.ChatMessageTypeAI}
		if t != "" {
			mc.Parts = append(mc.Parts, llms.TextContent{Text: t})
		}
		for _, c := range m.ToolCalls {
			mc.Parts = append(mc.Parts, llms.ToolCall{ID: c.ID, Type: "function", FunctionCall: &llms.FunctionCall{Name: c.Function.Name, Arguments: c.Function.Arguments}})
		}
		return mc, nil
	case "tool":
		return llms.MessageContent{Role: llms.ChatMessageTypeTool, Parts: []llms.ContentPart{
			llms.ToolCallResponse{ToolCallID: m.ToolCallID, Name: m.Name, Content: t}}}, nil
	}
	return llms.MessageContent{}, fmt.Errorf("unknown role %q", m.Role)
}

// toOpenAI writes a message back in the input's format: one line per
// message, and one per tool result.
func toOpenAI(m llms.MessageContent) []message {
	role := map[llms.ChatMessageType]string{llms.ChatMessageTypeSystem: "system", llms.ChatMessageTypeHuman: "user", llms.ChatMessageTypeAI: "assistant"}[m.Role]
	var out []message
	var b strings.Builder
	var calls []toolCall
	for _, p := range m.Parts {
		switch p := p.(type) {
		case llms.TextContent:
			b.WriteString(p.Text)
		case llms.ToolCall:
			c := toolCall{ID: p.ID, Type: "function"}
			if p.FunctionCall != nil {
				c.Function.Name, c.Function.Arguments = p.FunctionCall.Name, p.FunctionCall.Arguments
			}
			calls = append(calls, c)
		case llms.ToolCallResponse:
			content, _ := json.Marshal(p.Content)
			out = append(out, message{Role: "tool", ToolCallID: p.ToolCallID, Content: content})
		}
	}
	if role == "" {
		return out
	}
	content := json.RawMessage("null")
	if b.Len() > 0 || len(calls) == 0 {
		content, _ = json.Marshal(b.String())
	}
	return append([]message{{Role: role, Content: content, ToolCalls: calls}}, out...)
}

// importTrace turns the conversation into a trace, as trace.ImportOpenAI
// does for a chat log.
func importTrace(lines []json.RawMessage) (*trace.Trace, error) {
	log, err := json.Marshal(struct {
		ID       string            `json:"id"`
		Messages []json.RawMessage `json:"messages"`
	}{"conversation", lines})
	if err != nil {
		return nil, err
	}
	for tr, err := range trace.ImportOpenAI(bytes.NewReader(log), "stdin") {
		return tr, err
	}
	return nil, errors.New("no conversation")
}

func writeJSON(w io.Writer, v any, indent string) error {
	enc := json.NewEncoder(w)
	enc.SetEscapeHTML(false)
	enc.SetIndent("", indent)
	return enc.Encode(v)
}
