// Package memorycmd is the verb "agentguard memory": it shows the memory
// card at work on one conversation.
//
//	agentguard memory [-budget N] [FILE]
//
// FILE (the standard input when absent or "-") holds one conversation as
// OpenAI-style chat messages, one per line ({"role":"system|user|assistant|
// tool","content":...}; assistant messages may carry "tool_calls" and tool
// messages a "tool_call_id"), or conversations in any format trace.Import
// reads — OpenAI chat logs one conversation per line, agentguard trace JSONL
// — detected from the first line unless -format names it. For each
// conversation the verb prints
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
	"context"
	"encoding/json"
	"fmt"
	"io"
	"slices"
	"strings"

	"github.com/agentguard/agentguard/examples/agentguard/internal/cli"
	"github.com/agentguard/agentguard/memory"
	"github.com/agentguard/agentguard/trace"
	"github.com/tmc/langchaingo/llms"
)

var verb = cli.Verb{
	Name:     "memory",
	Synopsis: "[-budget N] [-format NAME] [FILE]",
	Doc: `Builds the memory card of each conversation in FILE (or the standard input):
OpenAI chat messages one per line, OpenAI chat logs one conversation per
line, or agentguard traces, detected from the first line. Prints the card,
the messages sent to the model under the token budget, and the tool calls
that violate the card (exit status 1 when there are any).`,
	MaxArgs: 1,
}

// Run is the verb: it reads the conversation args name and returns the
// exit status (see package cli): 1 when a tool call violates the card.
func Run(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	fs := verb.FlagSet()
	budget := fs.Int("budget", 600, "token budget of the messages sent to the model, card included; 0 means no limit")
	format := fs.String("format", "", "input format, one of "+trace.FormatNames()+" (default: detected from the first line)")
	files, code, ok := verb.Parse(fs, args, stdout, stderr)
	if !ok {
		return code
	}
	if *budget < 0 {
		return verb.Fail(stderr, fs, fmt.Sprintf("-budget %d: want 0 (no limit) or more", *budget))
	}
	if _, ok := trace.LookupFormat(*format); *format != "" && !ok {
		return verb.Fail(stderr, fs, fmt.Sprintf("-format %q: want one of %s", *format, trace.FormatNames()))
	}
	name := "-"
	if len(files) == 1 {
		name = files[0]
	}
	in, err := cli.OpenInput(ctx, name)
	if err != nil {
		verb.Errorf(stderr, "%v", err)
		return cli.ExitUsage
	}
	defer in.Close()
	n, err := run(in, in.Name, *format, stdout, *budget)
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

// run reads the conversations in in, writes the report to out, and
// returns the number of violations. It reports each conversation as it is
// read, holding one (two at the start: a header names each conversation
// only when there is more than one).
func run(in io.Reader, source, format string, out io.Writer, budget int) (int, error) {
	w := bufio.NewWriter(out)
	total, n, written := 0, 0, 0
	var first *trace.Trace
	write := func(tr *trace.Trace, header bool) error {
		if header {
			if written > 0 {
				fmt.Fprintln(w)
			}
			fmt.Fprintf(w, "# conversation %s\n\n", tr.ID)
		}
		written++
		v, err := report(w, tr, budget)
		total += v
		return err
	}
	for tr, err := range trace.Import(in, source, format) {
		if err != nil {
			return total, err
		}
		n++
		switch n {
		case 1:
			first = tr
			continue
		case 2:
			if err := write(first, true); err != nil {
				return total, err
			}
			first = nil
		}
		if err := write(tr, true); err != nil {
			return total, err
		}
	}
	switch n {
	case 0:
		return 0, fmt.Errorf("%s: no conversation in the input", source)
	case 1:
		if err := write(first, false); err != nil {
			return total, err
		}
	}
	return total, w.Flush()
}

// report writes the report of one conversation and returns the number of
// violations.
func report(w io.Writer, tr *trace.Trace, budget int) (int, error) {
	msgs := messages(tr)
	// The card, as the guard builds it: one extraction per user turn.
	card := &memory.Card{}
	for turn, text := range tr.UserTurns {
		if _, err := card.Observe(context.Background(), memory.RuleBased(nil), turn, text); err != nil {
			return 0, err
		}
	}
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
	fmt.Fprintf(w, "# dropped %v, elided %v, pinned %v", slices.Collect(rep.Dropped.All()), rep.Elided, rep.Pinned)
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
	tr = tr.Prefix(tr.Len()) // a view whose memo the prefixes below share: the card is extracted once, not at every step
	for i, s := range tr.Steps {
		for _, f := range (memory.Enforcer{}).Check(tr.Prefix(i), s) {
			found = append(found, fmt.Sprintf("step %d (%s, turn %d): %s %s: %s", f.Step, s.Name, s.Turn, f.Rule, f.Verdict, f.Message))
		}
	}
	fmt.Fprintf(w, "\n# violations: %d\n", len(found))
	for _, v := range found {
		fmt.Fprintln(w, v)
	}
	return len(found), nil
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

func writeJSON(w io.Writer, v any, indent string) error {
	enc := json.NewEncoder(w)
	enc.SetEscapeHTML(false)
	enc.SetIndent("", indent)
	return enc.Encode(v)
}

// messages rebuilds the messages a conversation sent to its model from its
// trace: the system prompt (Meta["system"]), the user turns, and each model
// step's answer and tool calls with the tool results that followed.
func messages(tr *trace.Trace) []llms.MessageContent {
	var msgs []llms.MessageContent
	if sys := tr.Meta["system"]; sys != "" {
		msgs = append(msgs, llms.TextParts(llms.ChatMessageTypeSystem, sys))
	}
	turn := 0
	user := func(upTo int) {
		for ; turn <= upTo && turn < len(tr.UserTurns); turn++ {
			msgs = append(msgs, llms.TextParts(llms.ChatMessageTypeHuman, tr.UserTurns[turn]))
		}
	}
	for _, s := range tr.Steps {
		user(s.Turn)
		switch s.Kind {
		case trace.KindModel:
			m := llms.MessageContent{Role: llms.ChatMessageTypeAI}
			if s.Result != "" {
				m.Parts = append(m.Parts, llms.TextContent{Text: s.Result})
			}
			for _, c := range s.Calls {
				m.Parts = append(m.Parts, llms.ToolCall{ID: c.ID, Type: "function", FunctionCall: &llms.FunctionCall{Name: c.Name, Arguments: c.Args}})
			}
			if len(m.Parts) > 0 {
				msgs = append(msgs, m)
			}
		case trace.KindTool:
			msgs = append(msgs, llms.MessageContent{Role: llms.ChatMessageTypeTool, Parts: []llms.ContentPart{
				llms.ToolCallResponse{ToolCallID: s.CallID, Name: s.Name, Content: s.Result}}})
		}
	}
	user(len(tr.UserTurns) - 1)
	return msgs
}
