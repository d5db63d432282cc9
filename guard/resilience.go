package guard

import (
	"context"
	"errors"
	"fmt"
	"regexp"
	"strconv"
	"sync"
	"sync/atomic"
	"time"

	"github.com/sony/gobreaker/v2"
	"github.com/tmc/langchaingo/llms"
	"github.com/tmc/langchaingo/tools"
)

// More sentinel errors, matched with errors.Is.
var (
	// ErrBreakerOpen is returned when a tool's or the model's circuit
	// breaker is open (or half-open and busy): the call was not made.
	ErrBreakerOpen = errors.New("circuit breaker open")
	// ErrTimeout is returned when a call ran past its timeout. An isolated
	// call (every model call, and tools per Resilience.ToolTimeout) is
	// abandoned at its timeout, not waited for.
	ErrTimeout = errors.New("call timed out")
)

// RuleBreaker names findings about calls refused by an open breaker.
const RuleBreaker = "circuit-breaker"

// Resilience configures timeouts, retries and circuit breakers. The zero
// value means the defaults given per field.
type Resilience struct {
	// ToolTimeout bounds one tool call. Zero means 30s; negative, none.
	//
	// A tool runs on the caller's goroutine with a context that expires at
	// its timeout, the Go convention for cancellation: a tool that honours
	// its context returns then, and the call fails with ErrTimeout. A tool
	// that overruns its timeout anyway is isolated from then on: its calls
	// run on a goroutine of their own, abandoned at the timeout, so a hung
	// call costs a goroutine, never the agent. ToolPolicy.Isolate and
	// IsolateTools isolate from the first call.
	ToolTimeout time.Duration
	// IsolateTools runs every tool call on a goroutine of its own, abandoned
	// at its timeout, for tools that may ignore their context. It costs a
	// few microseconds per call.
	IsolateTools bool
	// ModelTimeout bounds one model call. Zero means 2m; negative, none.
	ModelTimeout time.Duration
	// ToolRetries is how often a failed read-only tool call is tried again.
	// State-changing tools are retried only when their ToolPolicy says so.
	// Zero means none.
	ToolRetries int
	// ModelRetries is how often a failed model call is tried again. Zero
	// means 2; negative, none.
	ModelRetries int
	// Backoff is the wait before the first retry; it doubles each time.
	// Zero means 200ms.
	Backoff time.Duration
	// BreakerFailures is how many consecutive failures open a breaker. Zero
	// means 5.
	BreakerFailures uint32
	// BreakerOpenFor is how long an open breaker refuses calls before it
	// lets one through to probe. Zero means 30s.
	BreakerOpenFor time.Duration
	// Fallback, when set, answers model calls that failed on the primary
	// model after its retries, or that its open breaker refused.
	Fallback llms.Model
}

func (r Resilience) withDefaults() Resilience {
	if r.ToolTimeout == 0 {
		r.ToolTimeout = 30 * time.Second
	}
	if r.ModelTimeout == 0 {
		r.ModelTimeout = 2 * time.Minute
	}
	if r.ModelRetries == 0 {
		r.ModelRetries = 2
	}
	if r.Backoff <= 0 {
		r.Backoff = 200 * time.Millisecond
	}
	if r.BreakerFailures == 0 {
		r.BreakerFailures = 5
	}
	if r.BreakerOpenFor <= 0 {
		r.BreakerOpenFor = 30 * time.Second
	}
	return r
}

// breakers holds one gobreaker per tool and per model role, made on first
// use, and whether each tool is isolated.
type breakers struct {
	settings Resilience
	tools    sync.Map // name → *toolState, read without a lock on every call
	mu       sync.Mutex
	models   map[string]*gobreaker.CircuitBreaker[*llms.ContentResponse]
}

// toolState is what the guard keeps per tool name.
type toolState struct {
	cb *gobreaker.CircuitBreaker[toolRun]
	// isolate is set once a call ran past its timeout on the caller's
	// goroutine: later calls run on their own.
	isolate atomic.Bool
	// engaged is set while cb has failures to count (see execute).
	engaged atomic.Bool
}

func newBreakers(cfg Config) *breakers {
	return &breakers{
		settings: cfg.Resilience,
		models:   map[string]*gobreaker.CircuitBreaker[*llms.ContentResponse]{},
	}
}

// excluded wraps errors that must not count against a breaker: the
// caller's own cancellation and the guard's refusals.
type excluded struct{ err error }

func (e excluded) Error() string { return e.err.Error() }
func (e excluded) Unwrap() error { return e.err }

func (b *breakers) gobreakerSettings(name string) gobreaker.Settings {
	failures := b.settings.BreakerFailures
	return gobreaker.Settings{
		Name:        name,
		MaxRequests: 1,
		Timeout:     b.settings.BreakerOpenFor,
		ReadyToTrip: func(c gobreaker.Counts) bool { return c.ConsecutiveFailures >= failures },
		IsExcluded:  excludedFromBreaker,
	}
}

// excludedFromBreaker reports errors that say nothing about the callee's
// health: the caller's cancellation and the guard's own refusals.
func excludedFromBreaker(err error) bool {
	if err == nil {
		return false
	}
	var ex excluded
	var in *Interrupt
	return errors.As(err, &ex) || errors.As(err, &in)
}

// execute runs call under the tool's breaker. While the tool is healthy
// (no failure counted since its last success) the breaker has nothing to
// decide and is not consulted: a success would only reset counts that are
// already zero. A failure engages it; it then decides every call until a
// success leaves it closed with no failure counted. This keeps the
// breaker's clock reads and locks off the common path.
func (ts *toolState) execute(call func() (toolRun, error)) (toolRun, error) {
	if !ts.engaged.Load() {
		r, err := call()
		if err == nil || excludedFromBreaker(err) {
			return r, err
		}
		ts.engaged.Store(true)
		_, _ = ts.cb.Execute(func() (toolRun, error) { return toolRun{}, err }) // count the failure
		return r, err
	}
	r, err := ts.cb.Execute(call)
	if err == nil && ts.cb.State() == gobreaker.StateClosed && ts.cb.Counts().ConsecutiveFailures == 0 {
		ts.engaged.Store(false)
	}
	return r, err
}

func (b *breakers) tool(name string) *toolState {
	if ts, ok := b.tools.Load(name); ok {
		return ts.(*toolState)
	}
	ts, _ := b.tools.LoadOrStore(name, &toolState{cb: gobreaker.NewCircuitBreaker[toolRun](b.gobreakerSettings("tool:" + name))})
	return ts.(*toolState)
}

func (b *breakers) model(name string) *gobreaker.CircuitBreaker[*llms.ContentResponse] {
	b.mu.Lock()
	defer b.mu.Unlock()
	cb, ok := b.models[name]
	if !ok {
		cb = gobreaker.NewCircuitBreaker[*llms.ContentResponse](b.gobreakerSettings("model:" + name))
		b.models[name] = cb
	}
	return cb
}

// BreakerState returns the state of the breaker of a tool ("tool:NAME") or
// of the model ("model:primary", "model:fallback"): "closed", "half-open",
// "open", or "" when it was never used.
func (g *Guard) BreakerState(name string) string {
	b := g.breakers
	if ts, ok := b.tools.Load(trimPrefix(name, "tool:")); ok && name != trimPrefix(name, "tool:") {
		return ts.(*toolState).cb.State().String()
	}
	b.mu.Lock()
	defer b.mu.Unlock()
	if cb, ok := b.models[trimPrefix(name, "model:")]; ok && name != trimPrefix(name, "model:") {
		return cb.State().String()
	}
	return ""
}

func trimPrefix(s, p string) string {
	if len(s) >= len(p) && s[:len(p)] == p {
		return s[len(p):]
	}
	return s
}

// translateBreaker maps gobreaker's refusals to ErrBreakerOpen and unwraps
// the excluded marker, so no gobreaker type leaks.
func translateBreaker(err error) error {
	if err == nil {
		return nil
	}
	if errors.Is(err, gobreaker.ErrOpenState) || errors.Is(err, gobreaker.ErrTooManyRequests) {
		return ErrBreakerOpen
	}
	var ex excluded
	if errors.As(err, &ex) {
		return ex.err
	}
	return err
}

type toolRun struct {
	out   string
	stack []byte
	end   time.Time // when the call returned, if known
}

// runTool calls t under its breaker, timeout and retry policy; start is
// when the step began.
func (g *Guard) runTool(ctx context.Context, t tools.Tool, input string, p ToolPolicy, start time.Time) (toolRun, error) {
	rs := g.breakers.settings
	timeout := p.Timeout
	if timeout == 0 {
		timeout = rs.ToolTimeout
	}
	retries := p.Retries
	if retries == 0 && !stateChanging(t.Name(), p) {
		retries = rs.ToolRetries
	}
	ts := g.breakers.tool(t.Name())
	var run toolRun
	var err error
	for attempt := 0; ; attempt++ {
		run, err = ts.execute(func() (toolRun, error) {
			var r toolRun
			var err error
			switch {
			case timeout < 0:
				r.out, r.stack, err = safeToolCall(ctx, t, input)
			case p.Isolate || rs.IsolateTools || ts.isolate.Load():
				r, err = callWithTimeout(ctx, timeout, func(ctx context.Context) (toolRun, error) {
					out, stack, err := safeToolCall(ctx, t, input)
					return toolRun{out: out, stack: stack}, err
				})
			default:
				r, err = g.callInline(ctx, ts, t, input, start, timeout)
			}
			if err != nil && ctx.Err() != nil {
				err = excluded{err}
			}
			return r, err
		})
		err = translateBreaker(err)
		if err == nil || errors.Is(err, ErrBreakerOpen) || ctx.Err() != nil || attempt >= retries {
			break
		}
		if g.sleep(ctx, rs.Backoff<<attempt) != nil {
			break
		}
		start = g.now()
	}
	if errors.Is(err, ErrBreakerOpen) || errors.Is(err, ErrTimeout) {
		err = &Error{Op: "tool", Name: t.Name(), Err: err}
	}
	return run, err
}

// callInline calls t on the caller's goroutine with a context that expires
// at start+timeout. A call that returns past its deadline fails with
// ErrTimeout whatever it returned, as it would have isolated; one that
// overran the deadline by more than a grace period ignored its context, so
// the tool is isolated from then on.
func (g *Guard) callInline(ctx context.Context, ts *toolState, t tools.Tool, input string, start time.Time, timeout time.Duration) (toolRun, error) {
	deadline := start.Add(timeout)
	cc := newCallCtx(ctx, deadline)
	out, stack, err := safeToolCall(cc, t, input)
	cc.release()
	end := g.now()
	late := end.Sub(deadline)
	if late < 0 {
		return toolRun{out, stack, end}, err
	}
	if late > min(max(timeout/10, 5*time.Millisecond), time.Second) {
		ts.isolate.Store(true)
	}
	if err := ctx.Err(); err != nil {
		return toolRun{end: end}, err
	}
	return toolRun{end: end}, fmt.Errorf("%w after %v", ErrTimeout, timeout)
}

// callWithTimeout runs fn with a deadline, abandoning it if it does not
// return in time: a hung call costs a goroutine, never the agent.
func callWithTimeout[T any](parent context.Context, d time.Duration, fn func(context.Context) (T, error)) (T, error) {
	if d < 0 {
		return fn(parent)
	}
	ctx, cancel := context.WithTimeout(parent, d)
	defer cancel()
	type result struct {
		v   T
		err error
	}
	ch := make(chan result, 1)
	go func() {
		v, err := fn(ctx)
		ch <- result{v, err}
	}()
	select {
	case r := <-ch:
		return r.v, r.err
	case <-ctx.Done():
		var zero T
		if err := parent.Err(); err != nil {
			return zero, err
		}
		return zero, fmt.Errorf("%w after %v", ErrTimeout, d)
	}
}

// sleep waits d or until ctx is done.
func (g *Guard) sleep(ctx context.Context, d time.Duration) error {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}

// callModel calls m under the model breaker, timeout and retries, then the
// fallback model if there is one. Each failed attempt is reported to
// failed, for the trace.
func (g *Guard) callModel(ctx context.Context, m llms.Model, messages []llms.MessageContent, options []llms.CallOption, failed func(role string, err error, took time.Duration)) (*llms.ContentResponse, error) {
	rs := g.breakers.settings
	try := func(role string, m llms.Model) (*llms.ContentResponse, error) {
		cb := g.breakers.model(role)
		var err error
		for attempt := 0; ; attempt++ {
			start := g.now()
			var resp *llms.ContentResponse
			resp, err = cb.Execute(func() (*llms.ContentResponse, error) {
				r, err := callWithTimeout(ctx, rs.ModelTimeout, func(ctx context.Context) (*llms.ContentResponse, error) {
					return safeGenerate(ctx, m, messages, options)
				})
				if err == nil && emptyResponse(r) {
					err = &Error{Op: "model", Err: ErrNoChoices}
				}
				if err != nil && ctx.Err() != nil {
					err = excluded{err}
				}
				return r, err
			})
			err = translateBreaker(err)
			if err == nil {
				return resp, nil
			}
			var gerr *Error
			if !errors.As(err, &gerr) {
				err = &Error{Op: "model", Name: role, Err: err}
			}
			failed(role, err, g.now().Sub(start))
			if errors.Is(err, ErrBreakerOpen) || ctx.Err() != nil || !Retryable(err) || attempt >= max(rs.ModelRetries, 0) {
				return nil, err
			}
			if g.sleep(ctx, rs.Backoff<<attempt) != nil {
				return nil, err
			}
		}
	}
	resp, err := try("primary", m)
	if err != nil && rs.Fallback != nil && ctx.Err() == nil {
		return try("fallback", rs.Fallback)
	}
	return resp, err
}

// emptyResponse reports a response with nothing in it: no choice, or no
// text and no tool call in any. Some clients turn an error status with an
// empty body into such a response.
func emptyResponse(r *llms.ContentResponse) bool {
	if r == nil {
		return true
	}
	for _, c := range r.Choices {
		if c != nil && (c.Content != "" || len(c.ToolCalls) > 0 || c.FuncCall != nil) {
			return false
		}
	}
	return true
}

var statusCode = regexp.MustCompile(`(?i)status(?: code)?\s*[:=]?\s*(\d{3})\b|\b(\d{3}) (?:bad request|unauthorized|forbidden|not found|unprocessable)`)

// Retryable reports whether a failed model call is worth another try:
// everything but a client error (HTTP 4xx other than 408, 409, 425 and 429),
// read from the error text since provider clients return plain errors.
func Retryable(err error) bool {
	m := statusCode.FindStringSubmatch(err.Error())
	if m == nil {
		return true
	}
	code, _ := strconv.Atoi(m[1] + m[2])
	switch {
	case code < 400 || code >= 500:
		return true
	case code == 408, code == 409, code == 425, code == 429:
		return true
	}
	return false
}
