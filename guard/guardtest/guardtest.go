package guardtest

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"sync"

	"github.com/tmc/langchaingo/llms"
)

// ErrScriptExhausted is returned by a Model called more often than its script allows.
var ErrScriptExhausted = errors.New("guardtest: script exhausted")

// Reply is one scripted model answer.
type Reply struct {
	Text  string
	Calls []Call
	// Usage, when set, is reported in GenerationInfo as OpenAI-style
	// PromptTokens and CompletionTokens.
	Usage *Usage
	// Err makes the call fail with this error.
	Err error
}

// Usage is a token count reported by a scripted reply.
type Usage struct{ In, Out int }

// Call is a scripted tool call.
type Call struct {
	Name, Args string
}

// Text returns a reply that answers with text.
func Text(s string) Reply { return Reply{Text: s} }

// ToolCall returns a reply that calls one tool with JSON arguments.
func ToolCall(name, args string) Reply { return Reply{Calls: []Call{{Name: name, Args: args}}} }

// Model is a scripted llms.Model. Each call gets the next reply of the script,
// or, when Func is set, whatever Func answers; with llms.WithStreamingFunc
// the text is streamed word by word first. It records what it was sent.
// It is safe for concurrent use; the zero value answers every call with
// ErrScriptExhausted.
type Model struct {
	// Func, when set, answers each call instead of the script.
	Func func(ctx context.Context, messages []llms.MessageContent, opts llms.CallOptions) (Reply, error)

	mu       sync.Mutex
	script   []Reply
	received [][]llms.MessageContent
	options  []llms.CallOptions
	n        int
}

// Script returns a Model that answers with replies, in order.
func Script(replies ...Reply) *Model { return &Model{script: replies} }

// Func returns a Model that answers each call with f.
func Func(f func(ctx context.Context, messages []llms.MessageContent, opts llms.CallOptions) (Reply, error)) *Model {
	return &Model{Func: f}
}

// GenerateContent answers with the next reply.
func (m *Model) GenerateContent(ctx context.Context, messages []llms.MessageContent, options ...llms.CallOption) (*llms.ContentResponse, error) {
	var o llms.CallOptions
	for _, opt := range options {
		opt(&o)
	}
	m.mu.Lock()
	m.received = append(m.received, slices.Clone(messages))
	m.options = append(m.options, o)
	n := m.n
	m.n++
	var r Reply
	var err error
	switch {
	case m.Func != nil:
	case n < len(m.script):
		r = m.script[n]
	default:
		err = fmt.Errorf("%w after %d replies", ErrScriptExhausted, len(m.script))
	}
	m.mu.Unlock()
	if m.Func != nil {
		r, err = m.Func(ctx, messages, o)
	}
	if err != nil {
		return nil, err
	}
	if r.Err != nil {
		return nil, r.Err
	}
	if o.StreamingFunc != nil && r.Text != "" {
		// Stream the text word by word, as providers do.
		for _, chunk := range strings.SplitAfter(r.Text, " ") {
			if err := o.StreamingFunc(ctx, []byte(chunk)); err != nil {
				return nil, err
			}
		}
	}
	return r.response(n), nil
}

func (r Reply) response(n int) *llms.ContentResponse {
	choice := &llms.ContentChoice{Content: r.Text, StopReason: "stop"}
	for i, c := range r.Calls {
		choice.ToolCalls = append(choice.ToolCalls, llms.ToolCall{
			ID: fmt.Sprintf("call_%d_%d", n, i), Type: "function",
			FunctionCall: &llms.FunctionCall{Name: c.Name, Arguments: c.Args},
		})
	}
	if len(r.Calls) > 0 {
		choice.StopReason = "tool_calls"
		choice.FuncCall = choice.ToolCalls[0].FunctionCall // as langchaingo's openai client does
	}
	if r.Usage != nil {
		choice.GenerationInfo = map[string]any{"PromptTokens": r.Usage.In, "CompletionTokens": r.Usage.Out, "TotalTokens": r.Usage.In + r.Usage.Out}
	}
	return &llms.ContentResponse{Choices: []*llms.ContentChoice{choice}}
}

// Call answers a single prompt.
func (m *Model) Call(ctx context.Context, prompt string, options ...llms.CallOption) (string, error) {
	return llms.GenerateFromSinglePrompt(ctx, m, prompt, options...)
}

// Received returns the messages of every call so far, in order.
func (m *Model) Received() [][]llms.MessageContent {
	m.mu.Lock()
	defer m.mu.Unlock()
	return slices.Clone(m.received)
}

// Options returns the call options of every call so far, in order.
func (m *Model) Options() []llms.CallOptions {
	m.mu.Lock()
	defer m.mu.Unlock()
	return slices.Clone(m.options)
}

// Tool is a tools.Tool that records its inputs and answers with a function.
// It is safe for concurrent use if its function is.
type Tool struct {
	name, description string
	parameters        any
	fn                func(ctx context.Context, input string) (string, error)

	mu     sync.Mutex
	inputs []string
}

// NewTool returns a recording tool. A nil fn answers "ok".
func NewTool(name, description string, fn func(ctx context.Context, input string) (string, error)) *Tool {
	if fn == nil {
		fn = func(context.Context, string) (string, error) { return "ok", nil }
	}
	return &Tool{name: name, description: description, fn: fn}
}

// WithParameters sets the JSON schema of the tool's arguments and returns t.
func (t *Tool) WithParameters(schema any) *Tool {
	t.parameters = schema
	return t
}

// Name returns the tool's name.
func (t *Tool) Name() string { return t.name }

// Description returns the tool's description.
func (t *Tool) Description() string { return t.description }

// Parameters returns the tool's JSON schema, or nil.
func (t *Tool) Parameters() any { return t.parameters }

// Call records input and calls the tool's function.
func (t *Tool) Call(ctx context.Context, input string) (string, error) {
	t.mu.Lock()
	t.inputs = append(t.inputs, input)
	t.mu.Unlock()
	return t.fn(ctx, input)
}

// Inputs returns every input the tool was called with, in order.
func (t *Tool) Inputs() []string {
	t.mu.Lock()
	defer t.mu.Unlock()
	return slices.Clone(t.inputs)
}
