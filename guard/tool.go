package guard

import (
	"context"
	"encoding/json"

	"github.com/agentguard/agentguard/trace"
	"github.com/tmc/langchaingo/tools"
)

// SchemaTool is a tools.Tool that publishes the JSON schema of its
// arguments. The guard checks the arguments of such tools (required
// properties, types, enums) and offers the schema to the model in Run.
type SchemaTool interface {
	tools.Tool
	Parameters() any
}

// WrapTool returns a tools.Tool that runs t under the guard. Each call is
// judged by the rules before t runs and recorded, with its result, in the
// context's trace (see StartTrace). What the caller gets back depends on the
// verdict:
//
//   - Allow: t's own result and error; a panic in t is recovered, recorded
//     and returned as an *Error matching ErrToolPanic.
//   - Retry, Block: t does not run; the result is an observation telling the
//     agent why, with a nil error, so that agents.Executor (which aborts on
//     any tool error) carries on and the model can correct itself.
//   - Clarify, Refuse, Handoff: t does not run; the error is an *Interrupt
//     carrying what to tell the user.
//
// The returned tool keeps t's name and description, and its schema if t is
// a SchemaTool.
func (g *Guard) WrapTool(t tools.Tool) tools.Tool {
	if st, ok := t.(SchemaTool); ok {
		if raw := schemaJSON(st.Parameters()); raw != nil {
			g.addSchema(t.Name(), raw)
		}
	}
	return &guardedTool{g: g, t: t, plan: g.plan(t.Name())}
}

type guardedTool struct {
	g    *Guard
	t    tools.Tool
	plan *toolPlan // t's, by the name it had when wrapped
}

func (w *guardedTool) Name() string        { return w.t.Name() }
func (w *guardedTool) Description() string { return w.t.Description() }

// Parameters returns the wrapped tool's schema, or nil.
func (w *guardedTool) Parameters() any {
	if st, ok := w.t.(SchemaTool); ok {
		return st.Parameters()
	}
	return nil
}

func (w *guardedTool) Call(ctx context.Context, input string) (string, error) {
	if w.g.cfg.Bypass {
		return w.t.Call(ctx, input)
	}
	rec := w.g.recorder(ctx)
	tp := w.plan
	if name := w.t.Name(); name != tp.name {
		tp = w.g.plan(name) // a tool whose name changed since
	}
	out := w.g.callPlanned(ctx, rec, w.t, tp, trace.Call{Name: tp.name, Args: input}, input)
	switch {
	case out.verdict == trace.Allow:
		return out.observation, out.err
	case terminal(out.verdict):
		return "", &Interrupt{Verdict: out.verdict, Message: w.g.answer(w.g.replies(rec), out.finding), Finding: out.finding}
	default:
		return out.observation, nil
	}
}

func schemaJSON(p any) json.RawMessage {
	switch p := p.(type) {
	case nil:
		return nil
	case json.RawMessage:
		return p
	case []byte:
		return p
	case string:
		return json.RawMessage(p)
	}
	raw, err := json.Marshal(p)
	if err != nil || string(raw) == "null" {
		return nil
	}
	return raw
}
