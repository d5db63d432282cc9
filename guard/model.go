package guard

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"reflect"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
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
	return &guardedModel{g: g, m: m, info: DescribedModel(m)}
}

type guardedModel struct {
	g    *Guard
	m    llms.Model
	info ModelInfo
}

func (w *guardedModel) GenerateContent(ctx context.Context, messages []llms.MessageContent, options ...llms.CallOption) (*llms.ContentResponse, error) {
	if w.g.cfg.Bypass {
		return w.m.GenerateContent(ctx, messages, options...)
	}
	rec := w.g.recorder(ctx)
	turn, err := w.g.generate(ctx, rec, w.m, w.info, messages, options)
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
func (g *Guard) generate(ctx context.Context, rec *trace.Recorder, m llms.Model, info ModelInfo, messages []llms.MessageContent, options []llms.CallOption) (modelTurn, error) {
	cv := conversation(rec)
	card, latest := g.observeTurns(ctx, rec, cv, messages)
	opts := callOptions(options)
	turn := modelTurn{offered: offeredSpecs(rec, opts)}
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
	model := opts.Model
	if model == "" {
		model = info.Model
	}
	for retries := 0; ; retries++ {
		pre := &trace.Step{Kind: trace.KindModel, Name: model, Provider: info.Provider, Start: g.now()}
		if findings, v := g.judge(rec, pre); terminal(v) || v == trace.Block {
			f := strongest(findings, v)
			pre.Blocked, pre.Refusal, pre.Result = true, v == trace.Refuse || v == trace.Block, g.answer(g.replies(rec), f)
			g.observed(ctx, rec, pre, findings, g.commit(ctx, rec, pre, findings))
			turn.findings = append(turn.findings, findings...)
			return stop(v, f)
		}
		sent, tokens := g.withCard(rec, cv, card, messages)
		s := &trace.Step{Kind: trace.KindModel, Name: model, Provider: info.Provider, Start: g.now()}
		primary := &tappedModel{Model: m}
		wire := new(wireInfo)
		failed := false
		who := func(role string) (name, provider string) {
			if role != "primary" {
				return role, ""
			}
			return model, info.Provider
		}
		var begin func(context.Context, string, time.Time) context.Context
		if g.cfg.Observe.Steps != nil {
			begin = func(ctx context.Context, role string, start time.Time) context.Context {
				name, provider := who(role)
				return g.stepStarted(ctx, &trace.Step{Kind: trace.KindModel, Name: name, Provider: provider, Start: start})
			}
		}
		var lastFail *trace.Step
		resp, actx, err := g.callModel(context.WithValue(ctx, wireKey{}, wire), primary, sent, options, begin, func(actx context.Context, role string, err error, took time.Duration) {
			failed = true
			name, provider := who(role)
			fs := &trace.Step{Kind: trace.KindModel, Name: name, Provider: provider, Start: g.now().Add(-took), Duration: took, Error: err.Error(), Server: wire.server()}
			lastFail = fs
			ff := failureFindings(fs)
			g.commitObserved(ctx, actx, rec, fs, ff)
			turn.findings = append(turn.findings, ff...)
		})
		cv.returned(failed || err != nil)
		s.Duration = g.now().Sub(s.Start)
		if err != nil {
			if lastFail != nil { // no answer will come: the caller gets the error
				turn.findings = append(turn.findings, g.unansweredGate(ctx, rec, lastFail))
			}
			return turn, err
		}
		if primary.failed.Load() { // the fallback answered
			fb := DescribedModel(g.cfg.Resilience.Fallback)
			s.Name, s.Provider = fb.Model, fb.Provider
			if s.Name == "" {
				s.Name = "fallback"
			}
		}
		s.ResponseID, s.ResponseModel = wire.get()
		s.Server = wire.server()
		resp = mergeChoices(resp)
		choice := resp.Choices[0]
		s.Result, s.FinishReason = choice.Content, choice.StopReason
		for _, tc := range choice.ToolCalls {
			if tc.FunctionCall != nil {
				s.Calls = append(s.Calls, trace.Call{ID: tc.ID, Name: tc.FunctionCall.Name, Args: tc.FunctionCall.Arguments})
			}
		}
		if fc := choice.FuncCall; fc != nil && len(choice.ToolCalls) == 0 {
			s.Calls = append(s.Calls, trace.Call{Name: fc.Name, Args: fc.Arguments})
		}
		g.usage(s, choice, tokens)
		findings, v := g.judge(rec, s)
		findings = append(findings, malformedCalls(s, choice)...)
		if v != trace.Allow && st.streamed {
			for i := range findings {
				findings[i].Tags = append(slices.Clip(findings[i].Tags), "already-streamed")
			}
		}
		g.commitObserved(ctx, actx, rec, s, findings)
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

// tappedModel tells whether its last call failed: when the guard's model
// call succeeds all the same, the fallback answered.
type tappedModel struct {
	llms.Model
	failed atomic.Bool
}

func (t *tappedModel) GenerateContent(ctx context.Context, messages []llms.MessageContent, options ...llms.CallOption) (*llms.ContentResponse, error) {
	t.failed.Store(true) // until it returns an answer: a panic or an abandoned call fails
	resp, err := t.Model.GenerateContent(ctx, messages, options...)
	t.failed.Store(err != nil || emptyResponse(resp))
	return resp, err
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
// there is one and from an estimate otherwise: in, the usageTokens of what
// sent.
func (g *Guard) usage(s *trace.Step, choice *llms.ContentChoice, sent int) {
	in, out, ok := detect.Usage(choice.GenerationInfo)
	if !ok {
		in = sent
		out = trace.EstimateTokens(choice.Content)
		for _, c := range s.Calls {
			out += trace.EstimateTokens(c.Name) + trace.EstimateTokens(c.Args)
		}
	}
	s.TokensIn, s.TokensOut = in, out
	p := g.cfg.Observe.Pricing
	s.Cost = p.Cost(in, out)
}

// usageTokens estimates what a message sent costs, for usage: its text,
// tool results and tool call arguments.
func usageTokens(m llms.MessageContent) int {
	n := 0
	for _, p := range m.Parts {
		switch p := p.(type) {
		case llms.TextContent:
			n += trace.EstimateTokens(p.Text)
		case llms.ToolCallResponse:
			n += trace.EstimateTokens(p.Content)
		case llms.ToolCall:
			if p.FunctionCall != nil {
				n += trace.EstimateTokens(p.FunctionCall.Arguments)
			}
		}
	}
	return n
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

// offeredSpecs returns the tools and functions offered by a call's
// options as the trace records them. A conversation offers the same
// definitions on every model call, and marshalling their parameter schemas
// each time cost a tenth of a user turn: the specs of the trace's last
// call are reused while the call offers the same names, descriptions and
// parameter values (the same map, pointer or text; a schema changed in
// place, keeping its size, between two calls of one trace stays recorded
// as first offered).
func offeredSpecs(rec *trace.Recorder, o llms.CallOptions) []trace.ToolSpec {
	defs := make([]*llms.FunctionDefinition, 0, len(o.Tools)+len(o.Functions))
	for _, t := range o.Tools {
		if t.Function != nil {
			defs = append(defs, t.Function)
		}
	}
	for i := range o.Functions {
		defs = append(defs, &o.Functions[i])
	}
	if len(defs) == 0 {
		return nil
	}
	var (
		held  *lastOffered
		specs []trace.ToolSpec
	)
	rec.View(func(t *trace.Trace) {
		held = t.Memo(offeredKey{}, func() any { return new(lastOffered) }).(*lastOffered)
		if held.tools.same(defs) {
			specs = held.tools.specs
		}
	})
	if specs != nil {
		return specs
	}
	last := &offeredTools{defs: make([]llms.FunctionDefinition, len(defs)), specs: make([]trace.ToolSpec, len(defs))}
	for i, f := range defs {
		last.defs[i] = *f
		last.specs[i] = trace.ToolSpec{Name: f.Name, Description: f.Description}
		if f.Parameters != nil {
			if raw, err := json.Marshal(f.Parameters); err == nil {
				last.specs[i].Parameters = raw
			}
		}
	}
	rec.View(func(*trace.Trace) { held.tools = last }) // under the recorder's lock, as the memo is read
	return last.specs
}

// offeredKey keys, in a trace's Memo, the definitions its last model call
// offered and the specs recorded of them (a *lastOffered).
type offeredKey struct{}

type lastOffered struct{ tools *offeredTools }

type offeredTools struct {
	defs  []llms.FunctionDefinition // copies: the names, descriptions and parameter values offered
	specs []trace.ToolSpec
}

func (o *offeredTools) same(defs []*llms.FunctionDefinition) bool {
	if o == nil || len(o.defs) != len(defs) {
		return false
	}
	for i, f := range defs {
		if d := o.defs[i]; d.Name != f.Name || d.Description != f.Description || d.Strict != f.Strict || !sameValue(d.Parameters, f.Parameters) {
			return false
		}
	}
	return true
}

// sameValue reports whether a and b are the same parameters value: the
// same map or slice of the same length, the same pointer, equal text.
// Other values (a struct) are never the same, and are marshalled again.
func sameValue(a, b any) bool {
	if a == nil || b == nil {
		return a == nil && b == nil
	}
	va, vb := reflect.ValueOf(a), reflect.ValueOf(b)
	if va.Type() != vb.Type() {
		return false
	}
	switch va.Kind() {
	case reflect.Map, reflect.Slice:
		return va.UnsafePointer() == vb.UnsafePointer() && va.Len() == vb.Len()
	case reflect.Pointer:
		return va.UnsafePointer() == vb.UnsafePointer()
	case reflect.String:
		return va.String() == vb.String()
	}
	return false
}

func textResponse(text string) *llms.ContentResponse {
	return &llms.ContentResponse{Choices: []*llms.ContentChoice{{Content: text, StopReason: "guard"}}}
}

// ModelInfo names what stands behind an llms.Model: the provider, in the
// spelling of the OpenTelemetry GenAI conventions' gen_ai.provider.name
// ("openai", "anthropic", "ollama", "gcp.gemini", "aws.bedrock"), and the
// model a call asks for when it does not name one with llms.WithModel.
// The guard records both on every model step (trace.Step.Provider and
// Name), which the exporter turns into gen_ai.provider.name,
// gen_ai.request.model and the span name "chat MODEL".
type ModelInfo struct {
	Provider string
	Model    string
}

// DescribeModel returns m carrying info, for WrapModel and Run to record.
// Use it for a client the guard does not recognise — it recognises
// langchaingo's openai, anthropic, ollama, googleai, vertex, bedrock and
// mistral clients, and reads the model they were built with — or to name
// a compatible endpoint ("deepseek" behind the openai client). Empty
// fields of info are detected as for m itself.
func DescribeModel(m llms.Model, info ModelInfo) llms.Model {
	return &describedModel{Model: m, info: info}
}

type describedModel struct {
	llms.Model
	info ModelInfo
}

// SupportsReasoning reports whether the described model does.
func (d *describedModel) SupportsReasoning() bool {
	r, ok := d.Model.(llms.ReasoningModel)
	return ok && r.SupportsReasoning()
}

// providers maps langchaingo's client packages to provider names.
var providers = map[string]string{
	"github.com/tmc/langchaingo/llms/openai":          "openai",
	"github.com/tmc/langchaingo/llms/anthropic":       "anthropic",
	"github.com/tmc/langchaingo/llms/ollama":          "ollama",
	"github.com/tmc/langchaingo/llms/googleai":        "gcp.gemini",
	"github.com/tmc/langchaingo/llms/googleai/vertex": "gcp.vertex_ai",
	"github.com/tmc/langchaingo/llms/bedrock":         "aws.bedrock",
	"github.com/tmc/langchaingo/llms/mistral":         "mistral_ai",
	"github.com/tmc/langchaingo/llms/cohere":          "cohere",
	"github.com/tmc/langchaingo/llms/watsonx":         "ibm.watsonx.ai",
	"github.com/tmc/langchaingo/llms/huggingface":     "huggingface",
	"github.com/tmc/langchaingo/llms/ernie":           "baidu.ernie",
	"github.com/tmc/langchaingo/llms/llamafile":       "llamafile",
	"github.com/tmc/langchaingo/llms/maritaca":        "maritaca",
	"github.com/tmc/langchaingo/llms/cloudflare":      "cloudflare",
}

// DescribedModel returns what WrapModel and Run record about m: the
// ModelInfo given to DescribeModel, completed by what m's type says when m
// is one of langchaingo's clients (its package names the provider; the
// model it was built with is read from the client, as the client itself
// reads it). A guarded model is described by the model it wraps. Fields
// that cannot be known are empty.
func DescribedModel(m llms.Model) ModelInfo {
	var info ModelInfo
	for {
		switch w := m.(type) {
		case *guardedModel:
			m = w.m
			continue
		case *describedModel:
			if info.Provider == "" {
				info.Provider = w.info.Provider
			}
			if info.Model == "" {
				info.Model = w.info.Model
			}
			m = w.Model
			continue
		}
		break
	}
	if m == nil {
		return info
	}
	v := reflect.ValueOf(m)
	for v.Kind() == reflect.Pointer || v.Kind() == reflect.Interface {
		if v.IsNil() {
			return info
		}
		v = v.Elem()
	}
	if info.Provider == "" {
		info.Provider = providers[v.Type().PkgPath()]
	}
	if info.Model == "" && info.Provider != "" && v.Kind() == reflect.Struct {
		// The clients keep the model in an unexported string field.
		for _, path := range [][]string{{"model"}, {"modelID"}, {"options", "model"}, {"options", "Model"}} {
			f := v
			for _, name := range path {
				if f.Kind() != reflect.Struct {
					f = reflect.Value{}
					break
				}
				f = f.FieldByName(name)
				for f.IsValid() && f.Kind() == reflect.Pointer && !f.IsNil() {
					f = f.Elem()
				}
				if !f.IsValid() {
					break
				}
			}
			if f.IsValid() && f.Kind() == reflect.String && f.String() != "" {
				info.Model = f.String()
				break
			}
		}
	}
	return info
}

// wireKey carries a *wireInfo from a guarded model call to Transport.
type wireKey struct{}

// wireInfo is what Transport read from the provider's response to one
// guarded model call. An abandoned call (a timeout) may still write it, so
// it has a lock.
type wireInfo struct {
	mu        sync.Mutex
	id, model string
	host      string // the URL's host[:port] of the last request sent
}

func (w *wireInfo) server() string {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.host
}

func (w *wireInfo) get() (id, model string) {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.id, w.model
}

// Transport returns an http.RoundTripper for a model client's HTTP client
// that reads, from the provider's answers to guarded model calls, what
// langchaingo's clients do not pass on: the server called, the response id
// and the model that answered. The guard records them on the model step
// (trace.Step.Server, ResponseID and ResponseModel), and the exporter as
// server.address and server.port, gen_ai.response.id and
// gen_ai.response.model:
//
//	client := &http.Client{Transport: guard.Transport(nil)}
//	llm, err := openai.New(openai.WithHTTPClient(client))
//
// A nil base means http.DefaultTransport. Requests that are not a guarded
// model call pass untouched. The body streams to the client as it comes;
// only its first 64 KiB are kept, to be read once the client closes it. It
// reads the top-level "id" and "model" of a JSON answer (OpenAI, Anthropic,
// Ollama), and of the first server-sent event that has them (OpenAI's
// chunks, Anthropic's message_start).
func Transport(base http.RoundTripper) http.RoundTripper {
	if base == nil {
		base = http.DefaultTransport
	}
	return &wireTap{base: base}
}

type wireTap struct{ base http.RoundTripper }

func (t *wireTap) RoundTrip(req *http.Request) (*http.Response, error) {
	info, _ := req.Context().Value(wireKey{}).(*wireInfo)
	if info != nil {
		info.mu.Lock()
		info.host = req.URL.Host
		info.mu.Unlock()
	}
	resp, err := t.base.RoundTrip(req)
	if err != nil || info == nil || resp.Body == nil || resp.StatusCode >= 300 {
		return resp, err
	}
	resp.Body = &tapBody{ReadCloser: resp.Body, info: info, sse: strings.Contains(resp.Header.Get("Content-Type"), "event-stream")}
	return resp, nil
}

// tapCap is how much of a response body a tap keeps.
const tapCap = 64 << 10

// tapBody keeps the start of a response body. A client may read it on
// one goroutine and close it on another (langchaingo's openai client
// streams on its own), so buf has a lock.
type tapBody struct {
	io.ReadCloser
	info *wireInfo
	sse  bool
	mu   sync.Mutex
	buf  []byte
	once sync.Once
}

func (b *tapBody) Read(p []byte) (int, error) {
	n, err := b.ReadCloser.Read(p)
	b.mu.Lock()
	if keep := min(n, tapCap-len(b.buf)); keep > 0 {
		b.buf = append(b.buf, p[:keep]...)
	}
	b.mu.Unlock()
	if err == io.EOF {
		b.once.Do(b.parse)
	}
	return n, err
}

func (b *tapBody) Close() error {
	b.once.Do(b.parse)
	return b.ReadCloser.Close()
}

// parse reads the response's id and model from what was kept.
func (b *tapBody) parse() {
	type head struct {
		ID      string `json:"id"`
		Model   string `json:"model"`
		Message *struct {
			ID    string `json:"id"`
			Model string `json:"model"`
		} `json:"message"` // Anthropic's message_start event
	}
	b.mu.Lock()
	defer b.mu.Unlock()
	var id, model string
	take := func(h head) bool {
		if h.Message != nil && h.ID == "" {
			h.ID, h.Model = h.Message.ID, h.Message.Model
		}
		if id == "" {
			id = h.ID
		}
		if model == "" {
			model = h.Model
		}
		return id != "" && model != ""
	}
	if b.sse {
		for line := range bytes.Lines(b.buf) {
			data, ok := bytes.CutPrefix(bytes.TrimSpace(line), []byte("data:"))
			var h head
			if ok && json.Unmarshal(bytes.TrimSpace(data), &h) == nil && take(h) {
				break
			}
		}
	} else {
		// A prefix is enough: the keys are read one by one until both are found.
		dec := json.NewDecoder(bytes.NewReader(b.buf))
		if tok, err := dec.Token(); err == nil && tok == json.Delim('{') {
			for dec.More() && (id == "" || model == "") {
				key, err := dec.Token()
				if err != nil {
					break
				}
				var v json.RawMessage
				if dec.Decode(&v) != nil {
					break
				}
				var s string
				if json.Unmarshal(v, &s) != nil {
					continue
				}
				switch key {
				case "id":
					id = s
				case "model":
					model = s
				}
			}
		}
	}
	b.buf = nil
	b.info.mu.Lock()
	b.info.id, b.info.model = id, model
	b.info.mu.Unlock()
}
