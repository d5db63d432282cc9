package guard

import (
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"time"

	"github.com/agentguard/agentguard/guard/internal/detect"
	"github.com/agentguard/agentguard/trace"
	"github.com/tmc/langchaingo/llms"
)

// WrapModel returns an llms.Model that runs m under the guard: every call is
// recorded as a model step in the context's trace (see StartTrace), the
// answer is judged by the rules, and a terminal verdict replaces the answer:
// Refuse and Block with the refusal template, Clarify with the question,
// Handoff with the handoff message, dropping the proposed tool calls so that
// agents.Executor finishes cleanly. A Retry verdict asks m once more with the
// finding as feedback. Tool calls to tools that were not offered are
// recorded and judged here, since no wrapped tool will see them.
//
// The returned model is safe for concurrent use if m is.
func (g *Guard) WrapModel(m llms.Model) llms.Model {
	return &guardedModel{g: g, m: m}
}

type guardedModel struct {
	g *Guard
	m llms.Model
}

func (w *guardedModel) GenerateContent(ctx context.Context, messages []llms.MessageContent, options ...llms.CallOption) (*llms.ContentResponse, error) {
	if w.g.cfg.Bypass {
		return w.m.GenerateContent(ctx, messages, options...)
	}
	rec := w.g.recorder(ctx)
	turn, err := w.g.generate(ctx, rec, w.m, messages, options)
	if err != nil {
		return nil, err
	}
	if turn.verdict != trace.Allow {
		return turn.resp, nil
	}
	choice := turn.resp.Choices[0]
	if len(turn.offered) > 0 {
		for _, tc := range choice.ToolCalls {
			if tc.FunctionCall != nil && !slices.ContainsFunc(turn.offered, func(s trace.ToolSpec) bool { return s.Name == tc.FunctionCall.Name }) {
				w.g.callTool(ctx, rec, nil, trace.Call{ID: tc.ID, Name: tc.FunctionCall.Name, Args: tc.FunctionCall.Arguments}, "")
			}
		}
	}
	return turn.resp, nil
}

func (w *guardedModel) Call(ctx context.Context, prompt string, options ...llms.CallOption) (string, error) {
	return llms.GenerateFromSinglePrompt(ctx, w, prompt, options...)
}

// SupportsReasoning reports whether the wrapped model does.
func (w *guardedModel) SupportsReasoning() bool {
	r, ok := w.m.(llms.ReasoningModel)
	return ok && r.SupportsReasoning()
}

// modelTurn is the outcome of one guarded model call.
type modelTurn struct {
	resp     *llms.ContentResponse
	verdict  trace.Verdict
	finding  trace.Finding
	findings []trace.Finding
	offered  []trace.ToolSpec
}

// generate runs one guarded model turn: it records new user turns,
// classifies the latest one when a Classifier is set, judges the turn before
// the model is called (a gate such as the similarity gate can answer without
// it), calls the model under its breaker, timeout and retries, records and
// judges the answer, and asks again on Retry.
func (g *Guard) generate(ctx context.Context, rec *trace.Recorder, m llms.Model, messages []llms.MessageContent, options []llms.CallOption) (modelTurn, error) {
	card, latest := g.observeTurns(ctx, rec, messages)
	opts := callOptions(options)
	turn := modelTurn{offered: toolSpecs(opts)}
	rec.SetTools(turn.offered)
	st := g.newStream(ctx, rec, opts)
	options = st.options(options)
	stop := func(v trace.Verdict, f trace.Finding) (modelTurn, error) {
		turn.verdict, turn.finding, turn.resp = v, f, textResponse(g.answer(g.replies(rec), f))
		return turn, st.replace(turn.resp.Choices[0].Content)
	}
	if latest != "" && g.cfg.Gates.Classifier != nil {
		v, f, findings := g.classify(ctx, rec, latest)
		turn.findings = append(turn.findings, findings...)
		if v != trace.Allow {
			return stop(v, f)
		}
	}
	for retries := 0; ; retries++ {
		pre := &trace.Step{Kind: trace.KindModel, Name: opts.Model, Start: g.now()}
		if findings, v := g.judge(rec, pre); terminal(v) || v == trace.Block {
			f := strongest(findings, v)
			pre.Blocked, pre.Refusal, pre.Result = true, v == trace.Refuse || v == trace.Block, g.answer(g.replies(rec), f)
			g.commit(ctx, rec, pre, findings)
			turn.findings = append(turn.findings, findings...)
			return stop(v, f)
		}
		sent := g.withCard(rec, card, messages)
		s := &trace.Step{Kind: trace.KindModel, Name: opts.Model, Start: g.now()}
		resp, err := g.callModel(ctx, m, sent, options, func(role string, err error, took time.Duration) {
			name := opts.Model
			if role != "primary" {
				name = role
			}
			fs := &trace.Step{Kind: trace.KindModel, Name: name, Start: g.now().Add(-took), Duration: took, Error: err.Error()}
			ff := failureFindings(fs)
			g.commit(ctx, rec, fs, ff)
			turn.findings = append(turn.findings, ff...)
		})
		s.Duration = g.now().Sub(s.Start)
		if err != nil {
			return turn, err
		}
		resp = mergeChoices(resp)
		choice := resp.Choices[0]
		s.Result = choice.Content
		for _, tc := range choice.ToolCalls {
			if tc.FunctionCall != nil {
				s.Calls = append(s.Calls, trace.Call{ID: tc.ID, Name: tc.FunctionCall.Name, Args: tc.FunctionCall.Arguments})
			}
		}
		if fc := choice.FuncCall; fc != nil && len(choice.ToolCalls) == 0 {
			s.Calls = append(s.Calls, trace.Call{Name: fc.Name, Args: fc.Arguments})
		}
		g.usage(s, choice, sent)
		findings, v := g.judge(rec, s)
		findings = append(findings, malformedCalls(s, choice)...)
		if v != trace.Allow && st.streamed {
			for i := range findings {
				findings[i].Tags = append(slices.Clip(findings[i].Tags), "already-streamed")
			}
		}
		g.commit(ctx, rec, s, findings)
		turn.findings = append(turn.findings, findings...)
		if v == trace.Retry && retries < g.cfg.Gates.MaxRetries && !st.streamed {
			st.reset()
			f := strongest(findings, v)
			messages = append(slices.Clip(messages), llms.TextParts(llms.ChatMessageTypeHuman,
				feedback+fmt.Sprintf(g.replies(rec).AnswerRejected, f.Message)))
			continue
		}
		if v == trace.Retry { // out of retries: the answer cannot be trusted
			f := strongest(findings, v)
			f.Verdict = trace.Refuse
			return stop(trace.Refuse, f)
		}
		if v != trace.Allow {
			return stop(v, strongest(findings, v))
		}
		turn.resp, turn.verdict = resp, trace.Allow
		return turn, st.release()
	}
}

func isGuardFeedback(m llms.MessageContent) bool {
	if len(m.Parts) != 1 {
		return false
	}
	t, ok := m.Parts[0].(llms.TextContent)
	return ok && len(t.Text) > len(feedback) && t.Text[:len(feedback)] == feedback
}

func messageText(m llms.MessageContent) string {
	var text string
	for _, p := range m.Parts {
		if t, ok := p.(llms.TextContent); ok {
			text += t.Text
		}
	}
	return text
}

// usage fills token counts and cost, from the provider's usage report when
// there is one and from an estimate otherwise.
func (g *Guard) usage(s *trace.Step, choice *llms.ContentChoice, messages []llms.MessageContent) {
	in, out, ok := detect.Usage(choice.GenerationInfo)
	if !ok {
		for _, m := range messages {
			for _, p := range m.Parts {
				switch p := p.(type) {
				case llms.TextContent:
					in += trace.EstimateTokens(p.Text)
				case llms.ToolCallResponse:
					in += trace.EstimateTokens(p.Content)
				case llms.ToolCall:
					if p.FunctionCall != nil {
						in += trace.EstimateTokens(p.FunctionCall.Arguments)
					}
				}
			}
		}
		out = trace.EstimateTokens(choice.Content)
		for _, c := range s.Calls {
			out += trace.EstimateTokens(c.Name) + trace.EstimateTokens(c.Args)
		}
	}
	s.TokensIn, s.TokensOut = in, out
	p := g.cfg.Observe.Pricing
	s.Cost = p.Cost(in, out)
}

// mergeChoices folds a response's choices into one. langchaingo's
// anthropic client returns each content block of one message as its own
// choice (text, then tool_use), so reading only the first would drop the
// tool calls. Sampling several candidates (n > 1) is not supported under
// the guard: candidates would be merged too.
func mergeChoices(resp *llms.ContentResponse) *llms.ContentResponse {
	choices := slices.DeleteFunc(slices.Clone(resp.Choices), func(c *llms.ContentChoice) bool { return c == nil })
	if len(choices) == len(resp.Choices) && len(choices) < 2 {
		return resp
	}
	if len(choices) == 0 {
		return &llms.ContentResponse{Choices: []*llms.ContentChoice{{}}}
	}
	merged := *choices[0]
	merged.ToolCalls = slices.Clone(merged.ToolCalls)
	for _, c := range choices[1:] {
		if c.Content != "" {
			if merged.Content != "" {
				merged.Content += "\n"
			}
			merged.Content += c.Content
		}
		merged.ToolCalls = append(merged.ToolCalls, c.ToolCalls...)
		if merged.FuncCall == nil {
			merged.FuncCall = c.FuncCall
		}
		if c.StopReason != "" {
			merged.StopReason = c.StopReason
		}
		if merged.GenerationInfo == nil {
			merged.GenerationInfo = c.GenerationInfo
		}
	}
	return &llms.ContentResponse{Choices: []*llms.ContentChoice{&merged}}
}

func safeGenerate(ctx context.Context, m llms.Model, messages []llms.MessageContent, options []llms.CallOption) (resp *llms.ContentResponse, err error) {
	defer func() {
		if r := recover(); r != nil {
			err = &Error{Op: "model", Err: fmt.Errorf("%w: %v", ErrModelPanic, r)}
		}
	}()
	resp, err = m.GenerateContent(ctx, messages, options...)
	if err != nil {
		err = &Error{Op: "model", Err: err}
	}
	return resp, err
}

func callOptions(options []llms.CallOption) llms.CallOptions {
	var o llms.CallOptions
	for _, opt := range options {
		opt(&o)
	}
	return o
}

// toolSpecs returns the tools and functions offered by a call's options.
func toolSpecs(o llms.CallOptions) []trace.ToolSpec {
	var specs []trace.ToolSpec
	add := func(f *llms.FunctionDefinition) {
		if f == nil {
			return
		}
		spec := trace.ToolSpec{Name: f.Name, Description: f.Description}
		if f.Parameters != nil {
			if raw, err := json.Marshal(f.Parameters); err == nil {
				spec.Parameters = raw
			}
		}
		specs = append(specs, spec)
	}
	for _, t := range o.Tools {
		add(t.Function)
	}
	for i := range o.Functions {
		add(&o.Functions[i])
	}
	return specs
}

func textResponse(text string) *llms.ContentResponse {
	return &llms.ContentResponse{Choices: []*llms.ContentChoice{{Content: text, StopReason: "guard"}}}
}
