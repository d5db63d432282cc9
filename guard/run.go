package guard

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strconv"
	"strings"

	"github.com/agentguard/agentguard/guard/internal/rulekit"
	"github.com/agentguard/agentguard/guard/rules"
	"github.com/agentguard/agentguard/trace"
	"github.com/tmc/langchaingo/llms"
	"github.com/tmc/langchaingo/tools"
)

// RunStatus says how a run, or one turn of it, ended. Result.Status and
// Outcome.Status are always one of the constants below.
type RunStatus string

// Run statuses.
const (
	StatusDone    RunStatus = "done"    // the model gave its final answer
	StatusClarify RunStatus = "clarify" // the user is asked a question (Result.Answer)
	StatusRefused RunStatus = "refused" // the answer is the refusal template
	StatusHandoff RunStatus = "handoff" // a human takes over
	StatusPaused  RunStatus = "paused"  // tool calls wait for approval: see Guard.Resume
	StatusFailed  RunStatus = "failed"  // the model failed after its retries, or the context ended: Result.Err says why
)

// Result is the outcome of Run or Resume.
type Result struct {
	Status RunStatus
	// Answer is what to show the user: the model's final text, the
	// clarifying question, the refusal template or the handoff message.
	Answer string
	// Messages is the whole conversation, the caller's messages first. Every
	// tool call in it has exactly one tool result, except, while Paused, the
	// Pending ones. To continue after the user replies, append the reply and
	// call Run again: the next run appends to the same array, as append
	// does, so a turn costs what it adds. (To branch a conversation, give
	// each branch its own copy: slices.Clip(Messages) before appending.)
	Messages []llms.MessageContent
	// Pending holds the tool calls that wait for a human's approval.
	Pending []llms.ToolCall
	// Findings are every rule finding of this run, enforced or shadow.
	Findings []trace.Finding
	// Trace is the run's trace so far.
	Trace *trace.Trace
	// Err is the error that ended the run when Status is StatusFailed, as
	// Run and Resume also return it; nil otherwise.
	Err error

	rec     *trace.Recorder
	options []llms.CallOption
}

// Run drives the tool-calling loop itself: it calls model with the tools
// offered through llms.WithTools, executes the calls it makes under the
// guard, feeds the results back, and stops at the final answer or when a
// verdict ends the run. Every tool call the model makes gets exactly one
// tool-result message — the tool's output, or an observation saying why it
// did not run — so the conversation stays valid for any provider.
//
// Run records into the context's trace, or starts one (see StartTrace).
// messages are not modified. A model error (after the retries and the
// fallback, Config.Resilience) or the end of ctx ends the run with that
// error and the Result so far, its Status StatusFailed and its Err the
// error; a tool error is shown to the model as the tool's result.
//
// Calls to tools named in Config.Gates.RequireApproval pause the run (StatusPaused);
// Resume continues it once a human has decided.
func (g *Guard) Run(ctx context.Context, model llms.Model, tls []tools.Tool, messages []llms.MessageContent, options ...llms.CallOption) (*Result, error) {
	rec := RecorderFrom(ctx)
	if rec == nil {
		ctx, rec = g.StartTrace(ctx, "", "")
	}
	res := &Result{Messages: conversation(rec).extend(messages), rec: rec, options: options}
	return g.loop(ctx, unwrapModel(model), toolIndex(tls), res)
}

// extend returns the slice a run appends its messages to: messages
// themselves when they extend the Messages of the trace's last run (the
// caller appended the user's reply to them, as Result.Messages says), so
// that a turn costs what it adds however long the conversation; else a
// copy with room to grow. Either way the caller's messages are not
// changed: a run writes only past their end, into an array the guard made.
func (cv *convo) extend(messages []llms.MessageContent) []llms.MessageContent {
	cv.mu.Lock()
	last := cv.runOut
	cv.mu.Unlock()
	if len(last) > 0 && len(messages) >= len(last) && cap(messages) == cap(last) && &messages[0] == &last[0] {
		return messages
	}
	return append(make([]llms.MessageContent, 0, len(messages)+len(messages)/2+16), messages...)
}

// Decision is a human's answer about one pending tool call.
type Decision struct {
	Approve bool
	// Reason is shown to the model when the call is declined.
	Reason string
}

// Resume continues a paused run. decisions maps a pending call's ID to the
// human's decision; a pending call without a decision is declined. model
// and tls are the same as the ones given to Run.
func (g *Guard) Resume(ctx context.Context, model llms.Model, tls []tools.Tool, paused *Result, decisions map[string]Decision) (*Result, error) {
	if paused == nil || paused.Status != StatusPaused || paused.rec == nil {
		return nil, &Error{Op: "resume", Err: errors.New("result is not a paused run")}
	}
	res := &Result{Messages: slices.Clone(paused.Messages), Findings: slices.Clone(paused.Findings), rec: paused.rec, options: paused.options}
	ctx = WithRecorder(ctx, res.rec)
	index := toolIndex(tls)
	for i, call := range paused.Pending {
		d := decisions[call.ID]
		if !d.Approve {
			r := g.replies(res.rec)
			reason := d.Reason
			if reason == "" {
				reason = r.NoReason
			}
			obs := feedback + fmt.Sprintf(r.Declined, reason)
			res.rec.Add(&trace.Step{Kind: trace.KindTool, Name: call.FunctionCall.Name, CallID: call.ID, Args: call.FunctionCall.Arguments, Blocked: true, Result: obs, Start: g.now()})
			res.Messages = append(res.Messages, toolMessage(call, obs))
			continue
		}
		if done := g.execute(ctx, index, call, res); done {
			// A verdict ended the run: the remaining pending calls get results too.
			for _, rest := range paused.Pending[i+1:] {
				res.Messages = append(res.Messages, toolMessage(rest, g.observation(g.replies(res.rec), trace.Finding{Verdict: terminalVerdict(res.Status)})))
			}
			return g.finish(res), nil
		}
	}
	return g.loop(ctx, unwrapModel(model), index, res)
}

func (g *Guard) loop(ctx context.Context, model llms.Model, index map[string]tools.Tool, res *Result) (*Result, error) {
	opts := append([]llms.CallOption{llms.WithTools(llmsTools(index))}, res.options...)
	info := DescribedModel(model)
	limit := 2 * g.cfg.Gates.MaxSteps
	if limit <= 0 {
		limit = 100
	}
	cv := conversation(res.rec)
	for i := range limit {
		if err := ctx.Err(); err != nil {
			return g.fail(res, &Error{Op: "run", Err: err})
		}
		if i > 0 { // what the last turn read, the run has only appended to since
			cv.vouch(res.Messages)
		}
		turn, err := g.generate(ctx, res.rec, model, info, res.Messages, opts)
		res.Findings = append(res.Findings, turn.findings...)
		if err != nil {
			return g.fail(res, err)
		}
		if turn.verdict != trace.Allow {
			res.Status, res.Answer = statusOf(turn.verdict), g.answer(g.replies(res.rec), turn.finding)
			res.Messages = append(res.Messages, llms.TextParts(llms.ChatMessageTypeAI, res.Answer))
			return g.finish(res), nil
		}
		choice := turn.resp.Choices[0]
		res.Messages = append(res.Messages, aiMessage(choice))
		calls := toolCalls(choice)
		if len(calls) == 0 {
			res.Status, res.Answer = StatusDone, choice.Content
			return g.finish(res), nil
		}
		for i, call := range calls {
			if slices.Contains(g.cfg.Gates.RequireApproval, call.FunctionCall.Name) {
				res.Pending = append(res.Pending, call)
				continue
			}
			if done := g.execute(ctx, index, call, res); done {
				for _, rest := range calls[i+1:] {
					res.Messages = append(res.Messages, toolMessage(rest, g.observation(g.replies(res.rec), trace.Finding{Verdict: terminalVerdict(res.Status)})))
				}
				res.Pending = nil
				return g.finish(res), nil
			}
		}
		if len(res.Pending) > 0 {
			res.Status = StatusPaused
			return g.finish(res), nil
		}
	}
	f := g.recordGate(ctx, res.rec, trace.Finding{
		Rule: rules.Iterations, Step: -1, Verdict: trace.Handoff, Dimension: trace.Efficiency, Severity: trace.SeverityError,
		Message: fmt.Sprintf("no final answer after %d model turns", limit), Tags: []string{"step-budget"},
		Facts: []trace.Fact{rulekit.PolicyFact("model turns per run (2 × gates.max_steps)", strconv.Itoa(limit))},
	})
	res.Findings = append(res.Findings, f)
	res.Status, res.Answer = StatusHandoff, g.handoff(g.replies(res.rec))
	res.Messages = append(res.Messages, llms.TextParts(llms.ChatMessageTypeAI, res.Answer))
	return g.finish(res), nil
}

// execute runs one tool call and appends its result message. It reports
// whether a verdict ended the run, in which case res carries the status,
// the answer, and the closing AI message comes after the results.
func (g *Guard) execute(ctx context.Context, index map[string]tools.Tool, call llms.ToolCall, res *Result) bool {
	name, args := call.FunctionCall.Name, call.FunctionCall.Arguments
	t := index[name]
	out := g.callTool(ctx, res.rec, t, trace.Call{ID: call.ID, Name: name, Args: args}, toolInput(t, args))
	res.Findings = append(res.Findings, out.findings...)
	obs := out.observation
	if out.verdict == trace.Allow && out.err != nil {
		obs = "error: " + out.err.Error()
	}
	res.Messages = append(res.Messages, toolMessage(call, obs))
	if !terminal(out.verdict) {
		return false
	}
	res.Status, res.Answer = statusOf(out.verdict), g.answer(g.replies(res.rec), out.finding)
	return true
}

// fail ends a run with err.
func (g *Guard) fail(res *Result, err error) (*Result, error) {
	res.Status, res.Answer, res.Err, res.Pending = StatusFailed, "", err, nil
	return g.finish(res), err
}

// finish closes a run: the closing AI message for a terminal verdict that
// came from a tool call, and the trace snapshot.
func (g *Guard) finish(res *Result) *Result {
	if (res.Status == StatusClarify || res.Status == StatusRefused || res.Status == StatusHandoff) &&
		(len(res.Messages) == 0 || res.Messages[len(res.Messages)-1].Role != llms.ChatMessageTypeAI) {
		res.Messages = append(res.Messages, llms.TextParts(llms.ChatMessageTypeAI, res.Answer))
	}
	cv := conversation(res.rec)
	cv.vouch(nil)
	cv.mu.Lock()
	cv.runOut = res.Messages
	cv.mu.Unlock()
	res.Trace = res.rec.Trace()
	g.saveTrace(context.Background(), res.Trace, nil)
	return res
}

func statusOf(v trace.Verdict) RunStatus {
	switch v {
	case trace.Clarify:
		return StatusClarify
	case trace.Handoff:
		return StatusHandoff
	default:
		return StatusRefused
	}
}

func terminalVerdict(s RunStatus) trace.Verdict {
	switch s {
	case StatusClarify:
		return trace.Clarify
	case StatusHandoff:
		return trace.Handoff
	default:
		return trace.Refuse
	}
}

// aiMessage is the model's turn as a message for the history. Tool calls
// come first: langchaingo's anthropic client sends only the first part of
// an AI message, and a lost tool call would orphan its tool result.
func aiMessage(choice *llms.ContentChoice) llms.MessageContent {
	m := llms.MessageContent{Role: llms.ChatMessageTypeAI}
	for _, tc := range toolCalls(choice) {
		m.Parts = append(m.Parts, tc)
	}
	if choice.Content != "" {
		m.Parts = append(m.Parts, llms.TextContent{Text: choice.Content})
	}
	return m
}

// toolCalls returns the choice's tool calls, the legacy function call
// included, skipping malformed entries.
func toolCalls(choice *llms.ContentChoice) []llms.ToolCall {
	calls := make([]llms.ToolCall, 0, len(choice.ToolCalls))
	for i, tc := range choice.ToolCalls {
		if tc.FunctionCall == nil {
			continue
		}
		if tc.ID == "" {
			tc.ID = fmt.Sprintf("call_%d", i)
		}
		calls = append(calls, tc)
	}
	if fc := choice.FuncCall; fc != nil && len(calls) == 0 {
		calls = append(calls, llms.ToolCall{ID: "call_0", Type: "function", FunctionCall: fc})
	}
	return calls
}

func toolMessage(call llms.ToolCall, content string) llms.MessageContent {
	return llms.MessageContent{Role: llms.ChatMessageTypeTool, Parts: []llms.ContentPart{
		llms.ToolCallResponse{ToolCallID: call.ID, Name: call.FunctionCall.Name, Content: content},
	}}
}

// catchAllSchema is what langchaingo's agents offer for a tool without a
// schema: one string argument, passed to the tool as its whole input.
var catchAllSchema = map[string]any{
	"type":       "object",
	"properties": map[string]any{"__arg1": map[string]any{"type": "string"}},
	"required":   []string{"__arg1"},
}

func llmsTools(index map[string]tools.Tool) []llms.Tool {
	names := make([]string, 0, len(index))
	for n := range index {
		names = append(names, n)
	}
	slices.Sort(names)
	out := make([]llms.Tool, 0, len(index))
	for _, n := range names {
		t := index[n]
		var params any = catchAllSchema
		if st, ok := t.(SchemaTool); ok && st.Parameters() != nil {
			params = st.Parameters()
		}
		out = append(out, llms.Tool{Type: "function", Function: &llms.FunctionDefinition{Name: n, Description: t.Description(), Parameters: params}})
	}
	return out
}

// toolInput is the input string for t: the arguments JSON, or the bare
// "__arg1" value for a tool without a schema.
func toolInput(t tools.Tool, args string) string {
	if st, ok := t.(SchemaTool); ok && st.Parameters() != nil {
		return args
	}
	if !strings.Contains(args, "__") && !strings.Contains(args, `\u`) {
		// No "__arg1" name in any case or escape (encoding/json matches
		// names case-insensitively): nothing to take out, nothing to decode.
		return args
	}
	var wrapped struct {
		Arg *string `json:"__arg1"`
	}
	if json.Unmarshal([]byte(args), &wrapped) == nil && wrapped.Arg != nil {
		return *wrapped.Arg
	}
	return args
}

func toolIndex(tls []tools.Tool) map[string]tools.Tool {
	index := make(map[string]tools.Tool, len(tls))
	for _, t := range tls {
		if w, ok := t.(*guardedTool); ok {
			t = w.t // Run records tool calls itself
		}
		index[t.Name()] = t
	}
	return index
}

func unwrapModel(m llms.Model) llms.Model {
	if w, ok := m.(*guardedModel); ok {
		return w.m // Run records model turns itself
	}
	return m
}
