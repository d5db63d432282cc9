package guard

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"runtime/debug"
	"slices"
	"strings"
	"sync/atomic"
	"time"

	"github.com/agentguard/agentguard/guard/internal/calls"
	"github.com/agentguard/agentguard/guard/internal/detect"
	"github.com/agentguard/agentguard/guard/internal/rulekit"
	"github.com/agentguard/agentguard/guard/rules"
	"github.com/agentguard/agentguard/trace"
	"github.com/sony/gobreaker/v2"
	"github.com/tmc/langchaingo/tools"
)

// One tool call, from a wrapped tool's Call (or Run's loop) to its step in
// the trace. Each stage is a function that hands the call on to the next;
// they appear below in the order a call meets them:
//
//	callTool      judges the call, then refuses it or runs it, and records the step
//	judgeCall     the rules, and the allow-list for a tool the agent was not given
//	runTool       the tool's policy: its timeout, how often to retry
//	retry         attempts with backoff between them
//	execute       each attempt counted by the tool's circuit breaker
//	attempt       on a worker or inline, under the timeout
//	callPooled    on one of the guard's workers, abandoned at the deadline (worker.go)
//	callInline    on the caller's goroutine, for context-honouring tools; learns isolation
//	invoke        the tool itself, a panic recovered
//	recordRun     what the run did, onto the step and the outcome
//
// The model's calls (callModel, in resilience.go) share retry, execute and
// the workers (callWorker).

// toolOutcome is what happened to one proposed tool call.
type toolOutcome struct {
	verdict     trace.Verdict
	finding     trace.Finding // the finding behind a verdict other than Allow
	findings    []trace.Finding
	observation string // what the agent is told: the tool's result or why it did not run
	err         error  // the tool's own error (or a recovered panic) when it ran
}

// callTool judges one tool call, runs it when allowed, and records it.
// t is nil for a tool the agent was not given.
func (g *Guard) callTool(ctx context.Context, rec *trace.Recorder, t tools.Tool, call trace.Call, input string) toolOutcome {
	var tp *toolPlan
	if t != nil {
		tp = g.plan(call.Name)
	}
	return g.callPlanned(ctx, rec, t, tp, call, input)
}

// callPlanned is callTool with the plan of t, the tool named call.Name;
// tp is nil when t is.
func (g *Guard) callPlanned(ctx context.Context, rec *trace.Recorder, t tools.Tool, tp *toolPlan, call trace.Call, input string) toolOutcome {
	s := &trace.Step{Kind: trace.KindTool, Name: call.Name, CallID: call.ID, Args: call.Args, Start: g.now()}
	var out toolOutcome
	if tp != nil {
		out.findings, out.verdict = g.judgeWith(rec, s, tp.rules, tp.hot)
	} else {
		out = g.judgeCall(rec, s, true)
	}
	switch {
	case out.verdict != trace.Allow:
		out.finding = strongest(out.findings, out.verdict)
		out.observation = g.observation(g.replies(rec), out.finding)
		s.Blocked, s.Result = true, out.observation
	case t == nil:
		// Shadow mode cannot run a tool that does not exist.
		out.verdict, out.observation = trace.Block, fmt.Sprintf(g.replies(rec).UnknownTool, call.Name)
		s.Blocked, s.Result = true, out.observation
	default:
		sctx := g.stepStarted(ctx, s)
		run, err := g.runTool(sctx, tp, t, input, s.Start)
		g.recordRun(rec, s, &out, tp.policy, run, err)
		g.commitObserved(ctx, sctx, rec, s, out.findings)
		return out
	}
	g.observed(ctx, rec, s, out.findings, g.commit(ctx, rec, s, out.findings))
	return out
}

// judgeCall judges the proposed call s against rec's trace. A call of a
// tool the agent was not given (unknown) is blocked by the allow-list even
// when the rule is disabled or the allowed tools are not known.
func (g *Guard) judgeCall(rec *trace.Recorder, s *trace.Step, unknown bool) toolOutcome {
	findings, v := g.judge(rec, s)
	if unknown && !slices.ContainsFunc(findings, func(f trace.Finding) bool { return f.Rule == rules.AllowList }) {
		findings = append(findings, trace.Finding{
			Rule: rules.AllowList, Verdict: trace.Block, Dimension: trace.Accuracy, Severity: trace.SeverityError,
			Message: fmt.Sprintf("tool %q does not exist", s.Name), Evidence: s.Name, Tags: []string{"unknown-tool"},
			Facts: []trace.Fact{rulekit.CallFact(s, "no tool of this name was given to the agent")},
		})
		v = g.enforced(findings)
	}
	return toolOutcome{verdict: v, findings: findings}
}

// toolRun is what one run of a tool returned.
type toolRun struct {
	out   string
	stack []byte    // a recovered panic's stack, for the trace only
	end   time.Time // when the call returned, if known
}

// toolPlan is what a call of one tool needs that the tool's name and
// policy alone decide, worked out once per name (see Guard.plan) rather
// than on every call: the policy, the breaker, the timeout and retries,
// whether it runs inline, and the rules that may say something about it.
// It never changes once made.
type toolPlan struct {
	name    string
	policy  ToolPolicy
	state   *toolState
	timeout time.Duration
	retries int
	inline  bool      // declared context-honouring and not isolated by policy
	rules   []Rule    // the guard's rules, less those that cannot judge a call of this tool
	hot     []hotRule // hot[i] is rules[i] when it reads the trace's hot state, else nil
}

// plan returns the plan of the tool named name, making it on first use.
// Plans are kept per name for the guard's lifetime: only tools the agent
// was given get one, so their number is that of the tools.
func (g *Guard) plan(name string) *toolPlan {
	if m := g.plans.Load(); m != nil {
		if tp, ok := (*m)[name]; ok {
			return tp
		}
	}
	tp := g.newPlan(name)
	g.planMu.Lock()
	defer g.planMu.Unlock()
	m := make(map[string]*toolPlan)
	if old := g.plans.Load(); old != nil {
		if tp, ok := (*old)[name]; ok {
			return tp
		}
		maps.Copy(m, *old)
	}
	m[name] = tp
	g.plans.Store(&m)
	return tp
}

func (g *Guard) newPlan(name string) *toolPlan {
	p := g.cfg.Tools[name]
	rs := g.breakers.settings
	tp := &toolPlan{name: name, policy: p, state: g.breakers.tool(name), timeout: p.Timeout, retries: p.Retries,
		inline: p.HonoursContext}
	if tp.timeout == 0 {
		tp.timeout = rs.ToolTimeout
	}
	if tp.retries == 0 && !g.tools.Writes(name) { // a write runs once unless its policy says otherwise
		tp.retries = rs.ToolRetries
	}
	for i, r := range g.rules {
		if sc := g.scopes[i]; sc == nil || sc(name, g.tools.Of(name)) {
			tp.rules = append(tp.rules, r)
		}
	}
	tp.hot = hotRules(tp.rules)
	for i, r := range tp.rules {
		if va, ok := r.(*calls.Arguments); ok {
			tp.hot[i] = g.bindArguments(va, name)
		}
	}
	return tp
}

// runTool runs an allowed call of t, planned by tp: the timeout, the
// retries (read-only tools only, unless the policy says otherwise) and the
// tool's breaker. start is when the step began: the first attempt's
// timeout runs from then.
func (g *Guard) runTool(ctx context.Context, tp *toolPlan, t tools.Tool, input string, start time.Time) (toolRun, error) {
	ts := tp.state
	n := 0
	if !ts.engaged.Load() {
		// A healthy tool's first attempt, made as execute would make it,
		// without its closures: the breaker is consulted only on a failure.
		run, err := g.attempt(ctx, ts, t, input, tp.inline, start, tp.timeout)
		if err == nil {
			return run, nil
		}
		if err = ts.failed(ctx, err); !g.again(ctx, 0, tp.retries, nil, err) {
			return run, g.toolError(t, err)
		}
		n = 1
	}
	for ; ; n++ {
		if n > 0 {
			start = g.now() // a retry's timeout runs from when it starts
		}
		run, err := ts.execute(ctx, func() (toolRun, error) {
			return g.attempt(ctx, ts, t, input, tp.inline, start, tp.timeout)
		})
		if !g.again(ctx, n, tp.retries, nil, err) {
			return run, g.toolError(t, err)
		}
	}
}

// toolError wraps the guard's own failures of a call of t in *Error.
func (g *Guard) toolError(t tools.Tool, err error) error {
	if errors.Is(err, ErrBreakerOpen) || errors.Is(err, ErrTimeout) || errors.Is(err, ErrHungLimit) {
		err = &Error{Op: "tool", Name: t.Name(), Err: err}
	}
	return err
}

// retry calls attempt until it succeeds or another try is pointless (see
// again), and returns the last attempt's outcome.
func retry[T any](ctx context.Context, g *Guard, retries int, worth func(error) bool, attempt func(n int) (T, error)) (T, error) {
	for n := 0; ; n++ {
		v, err := attempt(n)
		if !g.again(ctx, n, retries, worth, err) {
			return v, err
		}
	}
}

// again reports whether attempt n, which returned err, is to be tried
// again, after waiting the configured backoff, doubled for each attempt
// made: not when it succeeded, the breaker refused, ctx is done, retries
// are spent, or worth (when not nil) says the error is not worth one.
func (g *Guard) again(ctx context.Context, n, retries int, worth func(error) bool, err error) bool {
	if err == nil || errors.Is(err, ErrBreakerOpen) || ctx.Err() != nil || n >= retries || worth != nil && !worth(err) {
		return false
	}
	return g.sleep(ctx, g.breakers.settings.Backoff<<n) == nil
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

// breaker is a circuit breaker that stays out of the way of a healthy
// callee. Every tool and each model role has one (see breakers).
type breaker[T any] struct {
	cb *gobreaker.CircuitBreaker[T]
	// engaged is set while cb has failures to count (see execute).
	engaged atomic.Bool
}

// execute runs one attempt under the breaker. While the callee is healthy
// (no failure counted since its last success) the breaker has nothing to
// decide and is not consulted: a success would only reset counts that are
// already zero. A failure engages it; it then decides every attempt until a
// success leaves it closed with no failure counted. This keeps the
// breaker's clock reads and locks off the common path.
//
// A failure while ctx is done is the caller's doing and does not count.
// gobreaker's refusals come back as ErrBreakerOpen.
func (b *breaker[T]) execute(ctx context.Context, call func() (T, error)) (T, error) {
	if !b.engaged.Load() {
		v, err := call()
		if err == nil {
			return v, nil
		}
		return v, b.failed(ctx, err)
	}
	v, err := b.cb.Execute(func() (T, error) {
		v, err := call()
		return v, callerFailure(ctx, err)
	})
	if err == nil && b.cb.State() == gobreaker.StateClosed && b.cb.Counts().ConsecutiveFailures == 0 {
		b.engaged.Store(false)
	}
	return v, translateBreaker(err)
}

// failed counts err, the failure of an attempt made while b was not
// engaged, unless it is excluded (see excludedFromBreaker), engaging b; it
// returns err as execute does.
func (b *breaker[T]) failed(ctx context.Context, err error) error {
	err = callerFailure(ctx, err)
	if excludedFromBreaker(err) {
		return translateBreaker(err)
	}
	b.engaged.Store(true)
	_, _ = b.cb.Execute(func() (T, error) { var zero T; return zero, err }) // count the failure
	return translateBreaker(err)
}

// callerFailure marks err excluded from the breaker's count when ctx, the
// caller's context, is done: the failure says nothing about the callee.
func callerFailure(ctx context.Context, err error) error {
	if err != nil && ctx.Err() != nil {
		return excluded{err}
	}
	return err
}

// excluded wraps errors that must not count against a breaker: the
// caller's own cancellation and the guard's refusals.
type excluded struct{ err error }

func (e excluded) Error() string { return e.err.Error() }
func (e excluded) Unwrap() error { return e.err }

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

// toolState is what the guard keeps per tool name.
type toolState struct {
	breaker[toolRun]
	// isolate is set once a context-honouring tool's call ran past its
	// timeout on the caller's goroutine: later calls run on the workers.
	isolate atomic.Bool
}

// attempt makes one attempt at the call, under its timeout: on a worker
// (see callPooled) unless the tool is declared context-honouring and has
// not ignored its deadline before, inline (see callInline) otherwise. A
// negative timeout means none: the call runs inline, unbounded.
func (g *Guard) attempt(ctx context.Context, ts *toolState, t tools.Tool, input string, inline bool, start time.Time, timeout time.Duration) (toolRun, error) {
	switch {
	case timeout < 0:
		return invoke(ctx, t, input)
	case inline && !ts.isolate.Load():
		return g.callInline(ctx, ts, t, input, start, timeout)
	default:
		return g.callPooled(ctx, t, input, start, timeout)
	}
}

// callInline calls t on the caller's goroutine with a context that expires
// at start+timeout (see callCtx). A call that returns past its deadline
// fails with ErrTimeout whatever it returned, as it would have on a worker;
// one that overran the deadline by more than a grace period ignored its
// context, so the tool runs on the workers from then on.
func (g *Guard) callInline(ctx context.Context, ts *toolState, t tools.Tool, input string, start time.Time, timeout time.Duration) (toolRun, error) {
	deadline := start.Add(timeout)
	cc := newCallCtx(ctx, deadline, g.now)
	run, err := invoke(cc, t, input)
	cc.release()
	run.end = g.endOf(start)
	late := run.end.Sub(deadline)
	if late < 0 {
		return run, err
	}
	if late > min(max(timeout/10, 5*time.Millisecond), time.Second) {
		ts.isolate.Store(true)
	}
	if err := ctx.Err(); err != nil {
		return toolRun{end: run.end}, err
	}
	return toolRun{end: run.end}, fmt.Errorf("%w after %v", ErrTimeout, timeout)
}

// endOf returns the time now, for a call that started at start: on the
// real clock, start plus the monotonic time since, which is half the cost
// of reading the wall clock again and the same instant; on a test's clock,
// that clock's time.
func (g *Guard) endOf(start time.Time) time.Time {
	if g.realClock {
		return start.Add(time.Since(start))
	}
	return g.now()
}

// invoke calls t, turning a panic into an error matching ErrToolPanic; the
// panic's stack is returned apart, for the trace only: the agent sees the
// error, not the stack.
func invoke(ctx context.Context, t tools.Tool, input string) (run toolRun, err error) {
	defer func() {
		if r := recover(); r != nil {
			err = &Error{Op: "tool", Name: t.Name(), Err: fmt.Errorf("%w: %v", ErrToolPanic, r)}
			run.stack = debug.Stack()
		}
	}()
	run.out, err = t.Call(ctx, input)
	return run, err
}

// recordRun writes what running the call did onto its step s and outcome:
// how long it took, the result or the error (with a panic's stack, for the
// trace only), the documents a retrieval returned, and the findings about
// the run itself. A call the open breaker refused becomes a blocked call.
func (g *Guard) recordRun(rec *trace.Recorder, s *trace.Step, out *toolOutcome, p ToolPolicy, run toolRun, err error) {
	if run.end.IsZero() {
		run.end = g.now()
	}
	s.Duration = run.end.Sub(s.Start)
	result, invalid := cutResult(run.out, g.breakers.settings.MaxToolResult)
	if invalid {
		out.findings = append(out.findings, invalidResult(s))
	}
	s.Result, out.observation, out.err = result, result, err
	if p.Retrieval && err == nil {
		s.DocIDs, s.Scores = detect.Documents(result)
	}
	if err != nil {
		s.Error = err.Error()
		if run.stack != nil {
			s.Error += "\n" + string(run.stack)
		}
	}
	refused := errors.Is(err, ErrBreakerOpen)
	if refused {
		s.Blocked = true
	}
	if ff := outcomeFindings(s); len(ff) > 0 {
		out.findings = append(out.findings, ff...)
		if refused {
			out.verdict, out.finding, out.err = trace.Block, ff[0], nil
			out.observation = g.observation(g.replies(rec), ff[0])
			s.Result = out.observation
		}
	}
}

// outcomeFindings judges what a tool or model step's execution recorded: a
// call its open breaker refused, or a failure (see failureFindings). It
// reads only the step, so Evaluate finds the same in a recorded trace.
func outcomeFindings(s *trace.Step) []trace.Finding {
	if s.Kind == trace.KindTool && strings.Contains(s.Error, ErrBreakerOpen.Error()) {
		return []trace.Finding{{
			Rule: rules.Breaker, Step: s.Index, Verdict: trace.Block, Dimension: trace.Stability, Severity: trace.SeverityError,
			Message: fmt.Sprintf("tool %q is failing and its circuit breaker is open", s.Name), Tags: []string{"breaker-open"},
			Facts: []trace.Fact{rulekit.CallFact(s, rulekit.FirstLine(s.Error))},
		}}
	}
	return failureFindings(s)
}
