package guard

import (
	"context"
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

// stream carries a caller's streaming function through one guarded model
// turn, so that streaming never bypasses the checks: in buffered mode the
// chunks are held until the answer is judged; in pass-through mode they
// flow at once and a stopped answer is corrected by a last chunk.
type stream struct {
	ctx         context.Context
	user        func(ctx context.Context, chunk []byte) error
	buffered    bool
	passThrough bool
	streamed    bool // a chunk went out in pass-through mode
	chunks      [][]byte
}

func (g *Guard) newStream(ctx context.Context, rec *trace.Recorder, opts llms.CallOptions) *stream {
	st := &stream{ctx: ctx, user: opts.StreamingFunc}
	if st.user != nil {
		a := g.cfg.Answers
		st.passThrough = !g.answers || a.PassThrough || slices.Contains(a.PassThroughRoutes, rec.Route())
		st.buffered = !st.passThrough
	}
	return st
}

// options returns the call options with the buffering function in place of
// the caller's, when buffering. A later WithStreamingFunc overrides an
// earlier one.
func (st *stream) options(options []llms.CallOption) []llms.CallOption {
	switch {
	case st.buffered:
		return append(slices.Clip(options), llms.WithStreamingFunc(func(_ context.Context, chunk []byte) error {
			st.chunks = append(st.chunks, slices.Clone(chunk))
			return nil
		}))
	case st.passThrough:
		return append(slices.Clip(options), llms.WithStreamingFunc(func(ctx context.Context, chunk []byte) error {
			st.streamed = true
			return st.user(ctx, chunk)
		}))
	}
	return options
}

// reset drops what a rejected attempt streamed into the buffer.
func (st *stream) reset() { st.chunks = st.chunks[:0] }

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
	return nil
}

// replace streams the answer that replaces a stopped one: alone when
// buffering, after what already went out otherwise.
func (st *stream) replace(answer string) error {
	var err error
	switch {
	case st.buffered:
		err = st.user(st.ctx, []byte(answer))
	case st.streamed:
		err = st.user(st.ctx, []byte("\n\n"+answer))
	case st.passThrough:
		err = st.user(st.ctx, []byte(answer))
	}
	if err != nil {
		return &Error{Op: "model", Err: err}
	}
	return nil
}
