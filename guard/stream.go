package guard

import (
	"bytes"
	"context"
	"encoding/json"
	"slices"

	"github.com/agentguard/agentguard/guard/rules"
	"github.com/agentguard/agentguard/trace"
	"github.com/tmc/langchaingo/llms"
)

// toolOnly names the built-in rules that judge tool calls only: a guard
// that runs no other rule has nothing to judge in an answer's text.
var toolOnly = []string{rules.AllowList, rules.Arguments, rules.Loop, rules.MaxSteps}

// judgesAnswers reports whether r may judge a model's answer: any rule
// but the tool-only built-ins, custom rules included.
func judgesAnswers(r Rule) bool { return !slices.Contains(toolOnly, r.Name()) }

// stream carries a caller's streaming functions (StreamingFunc, and
// StreamingReasoningFunc when set) through one guarded model turn, so that
// streaming never bypasses the checks: in buffered mode the chunks are held
// until the answer is judged; in pass-through mode they flow at once and a
// stopped answer is corrected by a last chunk. In both, the chunks a client
// streams of the tool calls the model proposes (langchaingo's openai client
// sends each call's JSON as it grows) never reach the caller: a call is the
// guard's to judge when it runs, and not the user's to read.
type stream struct {
	ctx         context.Context
	user        func(ctx context.Context, chunk []byte) error
	reasoning   func(ctx context.Context, reasoningChunk, chunk []byte) error
	buffered    bool
	passThrough bool
	streamed    bool // a chunk went out in pass-through mode
	chunks      [][]byte
	pairs       [][2][]byte // reasoning and text chunks, for reasoning
}

func (g *Guard) newStream(ctx context.Context, rec *trace.Recorder, opts llms.CallOptions) *stream {
	st := &stream{ctx: ctx, user: opts.StreamingFunc, reasoning: opts.StreamingReasoningFunc}
	if st.user != nil || st.reasoning != nil {
		a := g.cfg.Answers
		st.passThrough = !g.answers || a.PassThrough || slices.Contains(a.PassThroughRoutes, rec.Route())
		st.buffered = !st.passThrough
	}
	return st
}

// options returns the call options with the stream's functions in place of
// the caller's. A later option overrides an earlier one.
func (st *stream) options(options []llms.CallOption) []llms.CallOption {
	if !st.buffered && !st.passThrough {
		return options
	}
	options = slices.Clip(options)
	if st.user != nil {
		options = append(options, llms.WithStreamingFunc(func(ctx context.Context, chunk []byte) error {
			if toolCallChunk(chunk) {
				return nil
			}
			if st.buffered {
				st.chunks = append(st.chunks, slices.Clone(chunk))
				return nil
			}
			st.streamed = st.streamed || len(chunk) > 0
			return st.user(ctx, chunk)
		}))
	}
	if st.reasoning != nil {
		options = append(options, llms.WithStreamingReasoningFunc(func(ctx context.Context, reasoningChunk, chunk []byte) error {
			if toolCallChunk(chunk) {
				chunk = nil
			}
			if len(reasoningChunk) == 0 && len(chunk) == 0 {
				return nil
			}
			if st.buffered {
				st.pairs = append(st.pairs, [2][]byte{slices.Clone(reasoningChunk), slices.Clone(chunk)})
				return nil
			}
			st.streamed = true
			return st.reasoning(ctx, reasoningChunk, chunk)
		}))
	}
	return options
}

// toolCallChunk reports whether a streamed chunk is a tool call's JSON
// rather than answer text: what langchaingo's openai client streams for
// tool calls (the array of call deltas) and for a legacy function call
// (the call so far). A text chunk is a few tokens, never such a document.
func toolCallChunk(chunk []byte) bool {
	b := bytes.TrimSpace(chunk)
	if len(b) < 2 || (b[0] != '[' && b[0] != '{') || !json.Valid(b) {
		return false
	}
	if b[0] == '{' {
		var fc map[string]json.RawMessage
		if json.Unmarshal(b, &fc) != nil {
			return false
		}
		_, name := fc["name"]
		_, args := fc["arguments"]
		return name && args && len(fc) == 2
	}
	var calls []map[string]json.RawMessage
	if json.Unmarshal(b, &calls) != nil || len(calls) == 0 {
		return false
	}
	for _, c := range calls {
		if _, ok := c["function"]; !ok {
			return false
		}
	}
	return true
}

// reset drops what a rejected attempt streamed into the buffer.
func (st *stream) reset() { st.chunks, st.pairs = st.chunks[:0], st.pairs[:0] }

// release hands an allowed answer's buffered chunks to the caller.
func (st *stream) release() error {
	if !st.buffered {
		return nil
	}
	for _, c := range st.chunks {
		if err := st.user(st.ctx, c); err != nil {
			return &Error{Op: "model", Err: err}
		}
	}
	for _, p := range st.pairs {
		if err := st.reasoning(st.ctx, p[0], p[1]); err != nil {
			return &Error{Op: "model", Err: err}
		}
	}
	return nil
}

// replace streams the answer that replaces a stopped one: alone when
// buffering, after what already went out otherwise.
func (st *stream) replace(answer string) error {
	if !st.buffered && !st.passThrough {
		return nil
	}
	if st.streamed {
		answer = "\n\n" + answer
	}
	var err error
	if st.user != nil {
		err = st.user(st.ctx, []byte(answer))
	}
	if err == nil && st.reasoning != nil {
		err = st.reasoning(st.ctx, nil, []byte(answer))
	}
	if err != nil {
		return &Error{Op: "model", Err: err}
	}
	return nil
}
