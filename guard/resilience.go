package guard

import (
	"context"
	"errors"
	"regexp"
	"strconv"
	"sync"
	"time"

	"github.com/sony/gobreaker/v2"
	"github.com/tmc/langchaingo/llms"
)

// More sentinel errors, matched with errors.Is.
var (
	// ErrBreakerOpen is returned when a tool's or the model's circuit
	// breaker is open (or half-open and busy): the call was not made.
	ErrBreakerOpen = errors.New("circuit breaker open")
	// ErrTimeout is returned when a call ran past its timeout. A call on a
	// worker (every model call, and every tool call not declared
	// context-honouring) is abandoned at its timeout, not waited for.
	ErrTimeout = errors.New("call timed out")
)

// Resilience configures timeouts, retries and circuit breakers. The zero
// value means the defaults given per field.
type Resilience struct {
	// ToolTimeout bounds one tool call. Zero means 30s; negative, none.
	//
	// A call returns by its timeout or the caller's deadline, whichever is
	// first, even when the tool ignores its context: it runs on one of the
	// guard's worker goroutines (reused from call to call, not one per
	// call) with a context that expires at its timeout, and is abandoned
	// when it overruns, failing with ErrTimeout. A tool declared
	// ToolPolicy.HonoursContext runs on the caller's goroutine instead,
	// trusted to return by its deadline; one that overruns it anyway is
	// moved onto the workers from then on.
	ToolTimeout time.Duration `json:"tool_timeout,omitempty"`
	// MaxAbandoned bounds the calls abandoned at their deadline that still
	// run on their workers: past it, a call that would need a worker fails
	// at once with ErrHungLimit, so a tool that never returns costs at most
	// this many goroutines. Zero means 64; negative, no bound.
	// Guard.Abandoned reports the count.
	MaxAbandoned int `json:"max_abandoned,omitempty"`
	// MaxToolResult caps a tool result passed on to the model, in bytes: a
	// longer one is cut at a rune boundary and ends with a marker saying how
	// long it was, and a finding records it. Zero means 32 KiB, about
	// 8,000 tokens; negative, no cap.
	MaxToolResult int `json:"max_tool_result,omitempty"`
	// ModelTimeout bounds one model call. Zero means 2m; negative, none.
	ModelTimeout time.Duration `json:"model_timeout,omitempty"`
	// ToolRetries is how often a failed read-only tool call is tried again.
	// State-changing tools are retried only when their ToolPolicy says so.
	// Zero means none.
	ToolRetries int `json:"tool_retries,omitempty"`
	// ModelRetries is how often a failed model call is tried again. Zero
	// means 2; negative, none.
	ModelRetries int `json:"model_retries,omitempty"`
	// Backoff is the wait before the first retry; it doubles each time.
	// Zero means 200ms.
	Backoff time.Duration `json:"backoff,omitempty"`
	// BreakerFailures is how many consecutive failures open a breaker. Zero
	// means 5.
	BreakerFailures uint32 `json:"breaker_failures,omitempty"`
	// BreakerOpenFor is how long an open breaker refuses calls before it
	// lets one through to probe. Zero means 30s.
	BreakerOpenFor time.Duration `json:"breaker_open_for,omitempty"`
	// Fallback, when set, answers model calls that failed on the primary
	// model after its retries, or that its open breaker refused.
	Fallback llms.Model `json:"-"`
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
	if r.MaxAbandoned == 0 {
		r.MaxAbandoned = 64
	}
	if r.MaxToolResult == 0 {
		r.MaxToolResult = defaultMaxToolResult
	}
	return r
}

// breakers holds one breaker per tool and per model role, made on first
// use, whether each tool is isolated, and the workers isolated calls run on.
type breakers struct {
	settings Resilience
	observer Observer // Config.Observe.Metrics
	pool     *workers
	tools    sync.Map // name → *toolState, read without a lock on every call
	mu       sync.Mutex
	models   map[string]*breaker[*llms.ContentResponse]
}

func newBreakers(cfg Config, now func() time.Time) *breakers {
	return &breakers{
		settings: cfg.Resilience,
		observer: cfg.Observe.Metrics,
		pool:     newWorkers(cfg.Resilience.MaxAbandoned, now),
		models:   map[string]*breaker[*llms.ContentResponse]{},
	}
}

func (b *breakers) gobreakerSettings(name string) gobreaker.Settings {
	failures := b.settings.BreakerFailures
	return gobreaker.Settings{
		Name:        name,
		MaxRequests: 1,
		Timeout:     b.settings.BreakerOpenFor,
		ReadyToTrip: func(c gobreaker.Counts) bool { return c.ConsecutiveFailures >= failures },
		IsExcluded:  excludedFromBreaker,
		OnStateChange: func(name string, from, to gobreaker.State) {
			if obs := b.observer; obs != nil {
				obs.BreakerChanged(name, from.String(), to.String())
			}
		},
	}
}

func (b *breakers) tool(name string) *toolState {
	if ts, ok := b.tools.Load(name); ok {
		return ts.(*toolState)
	}
	ts := &toolState{}
	ts.cb = gobreaker.NewCircuitBreaker[toolRun](b.gobreakerSettings("tool:" + name))
	actual, _ := b.tools.LoadOrStore(name, ts)
	return actual.(*toolState)
}

func (b *breakers) model(name string) *breaker[*llms.ContentResponse] {
	b.mu.Lock()
	defer b.mu.Unlock()
	mb, ok := b.models[name]
	if !ok {
		mb = &breaker[*llms.ContentResponse]{cb: gobreaker.NewCircuitBreaker[*llms.ContentResponse](b.gobreakerSettings("model:" + name))}
		b.models[name] = mb
	}
	return mb
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
	if mb, ok := b.models[trimPrefix(name, "model:")]; ok && name != trimPrefix(name, "model:") {
		return mb.cb.State().String()
	}
	return ""
}

func trimPrefix(s, p string) string {
	if len(s) >= len(p) && s[:len(p)] == p {
		return s[len(p):]
	}
	return s
}

// callModel calls m under the model breaker, timeout and retries, then the
// fallback model if there is one. Each attempt runs with the context begin
// returns for it (begin is nil without a StepObserver); each failed one is
// reported to failed with that context, for the trace. It returns the
// context of the attempt that answered. It shares its stages with a tool
// call (see call.go): retry, breaker.execute and a worker (callWorker).
func (g *Guard) callModel(ctx context.Context, m llms.Model, messages []llms.MessageContent, options []llms.CallOption,
	begin func(ctx context.Context, role string, start time.Time) context.Context,
	failed func(ctx context.Context, role string, err error, took time.Duration)) (*llms.ContentResponse, context.Context, error) {
	rs := g.breakers.settings
	answered := ctx
	try := func(role string, m llms.Model) (*llms.ContentResponse, error) {
		b := g.breakers.model(role)
		return retry(ctx, g, max(rs.ModelRetries, 0), Retryable, func(int) (*llms.ContentResponse, error) {
			start := g.now()
			actx := ctx
			if begin != nil {
				actx = begin(ctx, role, start)
			}
			resp, err := b.execute(actx, func() (*llms.ContentResponse, error) {
				r, err := callWorker(g, actx, "model", role, rs.ModelTimeout, func(ctx context.Context) (*llms.ContentResponse, error) {
					return safeGenerate(ctx, m, messages, options)
				})
				if err == nil && emptyResponse(r) {
					err = &Error{Op: "model", Err: ErrNoChoices}
				}
				return r, err
			})
			if err == nil {
				answered = actx
				return resp, nil
			}
			var gerr *Error
			if !errors.As(err, &gerr) {
				err = &Error{Op: "model", Name: role, Err: err}
			}
			failed(actx, role, err, g.now().Sub(start))
			return nil, err
		})
	}
	resp, err := try("primary", m)
	if err != nil && rs.Fallback != nil && ctx.Err() == nil {
		resp, err = try("fallback", rs.Fallback)
	}
	return resp, answered, err
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

// Retryable reports whether a failed model call is worth another try.
//
// A provider error typed by langchaingo (an *llms.Error anywhere in err's
// chain, as the providers' MapError and llms.ErrorMapper return) is judged
// by its Code: a rate limit, a timeout or an unavailable provider is worth
// another try; a failed authentication, an invalid request, a missing
// resource, an exhausted quota, a content filter, a token limit, an
// unimplemented feature or a cancellation is not.
//
// Any other error, or a typed one whose code says nothing (ErrCodeUnknown
// or a code newer than this list), is judged by its text and its typed
// cause's, since most provider clients return plain errors: everything but
// a client error (an HTTP status 4xx other than 408, 409, 425 and 429) is
// worth another try.
func Retryable(err error) bool {
	var le *llms.Error
	if errors.As(err, &le) {
		switch le.Code {
		case llms.ErrCodeRateLimit, llms.ErrCodeTimeout, llms.ErrCodeProviderUnavailable:
			return true
		case llms.ErrCodeAuthentication, llms.ErrCodeInvalidRequest, llms.ErrCodeResourceNotFound,
			llms.ErrCodeQuotaExceeded, llms.ErrCodeContentFilter, llms.ErrCodeTokenLimit,
			llms.ErrCodeNotImplemented, llms.ErrCodeCanceled:
			return false
		}
		if le.Cause != nil && !retryableText(le.Cause.Error()) {
			return false
		}
	}
	return retryableText(err.Error())
}

var statusCode = regexp.MustCompile(`(?i)status(?: code)?\s*[:=]?\s*(\d{3})\b|\b(\d{3}) (?:bad request|unauthorized|forbidden|not found|unprocessable)`)

// retryableText reads an HTTP status out of an error's text, for errors
// that carry no type: a client error (4xx) is not worth another try, except
// 408, 409, 425 and 429; anything else, a text without a status included,
// is.
func retryableText(text string) bool {
	m := statusCode.FindStringSubmatch(text)
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
