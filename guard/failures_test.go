package guard_test

import (
	"context"
	"errors"
	"runtime"
	"slices"
	"strings"
	"testing"
	"testing/synctest"
	"time"

	"github.com/agentguard/agentguard/guard"
	"github.com/agentguard/agentguard/guard/guardtest"
	"github.com/agentguard/agentguard/guard/internal/testkit"
	"github.com/agentguard/agentguard/guard/rules"
	"github.com/agentguard/agentguard/trace"
	"github.com/tmc/langchaingo/llms"
	"github.com/tmc/langchaingo/tools"
)

// rawModel answers with whatever its function builds, for responses
// guardtest cannot script (a tool call without a function, a panic).
type rawModel func(ctx context.Context, n int) (*llms.ContentResponse, error)

type countingModel struct {
	f rawModel
	n int
}

func (m *countingModel) GenerateContent(ctx context.Context, _ []llms.MessageContent, _ ...llms.CallOption) (*llms.ContentResponse, error) {
	m.n++
	return m.f(ctx, m.n-1)
}

func (m *countingModel) Call(ctx context.Context, prompt string, options ...llms.CallOption) (string, error) {
	return llms.GenerateFromSinglePrompt(ctx, m, prompt, options...)
}

func textAnswer(s string) *llms.ContentResponse {
	return &llms.ContentResponse{Choices: []*llms.ContentChoice{{Content: s}}}
}

func callAnswer(calls ...llms.ToolCall) *llms.ContentResponse {
	return &llms.ContentResponse{Choices: []*llms.ContentChoice{{ToolCalls: calls}}}
}

var orderCall = llms.ToolCall{ID: "c1", Type: "function", FunctionCall: &llms.FunctionCall{Name: "query_order", Arguments: `{"order_id":"A1001"}`}}

// Every failure of a tool or a model is a finding with the stability
// dimension: in Run's findings, as a gate step in the trace (what the
// health check and the ledger read), and again when the trace is evaluated
// offline. Each case runs in a synctest bubble: timeouts pass on its fake
// clock, and a hung call must not hold the run past its timeout.
func TestEveryFailureIsAFinding(t *testing.T) {
	const timeout = 200 * time.Millisecond
	var release chan struct{} // made per case, in its bubble
	tests := []struct {
		name    string
		res     guard.Resilience
		model   rawModel
		tool    func(ctx context.Context, input string) (string, error) // nil answers an order
		wantErr error                                                   // Run's error, matched with errors.Is
		rule    string
		tag     string
		// wantResult is a substring of the tool result the model got.
		wantResult string
	}{
		{name: "tool hangs ignoring its context", rule: rules.ToolError, tag: "timeout", wantResult: "call timed out",
			tool: func(context.Context, string) (string, error) { <-release; return "late", nil }},
		{name: "tool overruns its timeout, then returns", rule: rules.ToolError, tag: "timeout", wantResult: "call timed out",
			tool: func(context.Context, string) (string, error) { time.Sleep(3 * timeout); return "late", nil }},
		{name: "tool panics", rule: rules.ToolError, tag: "panic", wantResult: "tool panicked",
			tool: func(context.Context, string) (string, error) { panic("boom") }},
		{name: "model panics", rule: rules.ModelError, tag: "panic", wantErr: guard.ErrModelPanic,
			model: func(context.Context, int) (*llms.ContentResponse, error) { panic("boom") }},
		{name: "model hangs ignoring its context", rule: rules.ModelError, tag: "timeout", wantErr: guard.ErrTimeout,
			model: func(context.Context, int) (*llms.ContentResponse, error) { <-release; return textAnswer("late"), nil }},
		{name: "model answers nothing", rule: rules.ModelError, tag: "empty-answer", wantErr: guard.ErrNoChoices,
			model: func(context.Context, int) (*llms.ContentResponse, error) { return &llms.ContentResponse{}, nil }},
		{name: "model answers an empty choice", rule: rules.ModelError, tag: "empty-answer", wantErr: guard.ErrNoChoices,
			model: func(context.Context, int) (*llms.ContentResponse, error) {
				return &llms.ContentResponse{Choices: []*llms.ContentChoice{{}}}, nil
			}},
		{name: "50 MB tool result", rule: rules.Malformed, tag: "oversized-result", wantResult: "tool result cut at 32768 of 52428800 bytes]",
			tool: func(context.Context, string) (string, error) { return strings.Repeat("x", 50<<20), nil }},
		{name: "tool result over a configured cap", res: guard.Resilience{MaxToolResult: 10}, rule: rules.Malformed, tag: "oversized-result",
			wantResult: `{"status":…[agentguard: tool result cut at 10 of 20 bytes]`},
		{name: "tool result of Chinese text cut inside a rune", res: guard.Resilience{MaxToolResult: 4}, rule: rules.Malformed, tag: "oversized-result",
			wantResult: "订…[agentguard: tool result cut at 3 of 15 bytes]",
			tool:       func(context.Context, string) (string, error) { return "订单已发货", nil }},
		{name: "invalid UTF-8 result", rule: rules.Malformed, tag: "invalid-utf8", wantResult: "ship\uFFFDped",
			tool: func(context.Context, string) (string, error) { return "ship\xffped", nil }},
		{name: "tool call without a function", rule: rules.Malformed, tag: "call-without-function",
			model: func(_ context.Context, n int) (*llms.ContentResponse, error) {
				if n == 0 {
					return callAnswer(llms.ToolCall{ID: "broken", Type: "function"}), nil
				}
				return textAnswer("Done."), nil
			}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				release = make(chan struct{})
				defer func() {
					close(release)          // hung calls return,
					time.Sleep(time.Minute) // and late ones finish on the bubble's clock, so it can end
				}()
				res := tt.res
				res.ToolTimeout, res.ModelTimeout, res.ModelRetries = timeout, timeout, -1
				g := guard.New(guard.Config{Resilience: res})
				defer g.Close(context.Background())
				model := tt.model
				if model == nil {
					model = func(_ context.Context, n int) (*llms.ContentResponse, error) {
						if n == 0 {
							return callAnswer(orderCall), nil
						}
						return textAnswer("Done."), nil
					}
				}
				tool := tt.tool
				if tool == nil {
					tool = func(context.Context, string) (string, error) { return `{"status":"shipped"}`, nil }
				}
				start := time.Now()
				out, err := g.Run(context.Background(), &countingModel{f: model}, []tools.Tool{guardtest.NewTool("query_order", "", tool)}, human("Where is A1001?"))
				if took := time.Since(start); took > 2*timeout {
					t.Errorf("Run took %v, want at most %v", took, 2*timeout)
				}
				if tt.wantErr == nil && err != nil || !errors.Is(err, tt.wantErr) {
					t.Fatalf("Run error = %v, want %v", err, tt.wantErr)
				}
				if tt.wantResult != "" {
					if got := toolResults(out.Messages); len(got) != 1 || !strings.Contains(got[0], tt.wantResult) {
						t.Errorf("tool results = %.200q, want one containing %q", got, tt.wantResult)
					}
				}
				has := func(fs []trace.Finding) bool {
					return slices.ContainsFunc(fs, func(f trace.Finding) bool {
						return f.Rule == tt.rule && f.Dimension == trace.Stability && slices.Contains(f.Tags, tt.tag)
					})
				}
				if !has(out.Findings) {
					t.Errorf("Run's findings %v lack %s[%s] with the stability dimension", ruleVerdicts(out.Findings), tt.rule, tt.tag)
				}
				if !has(findingsOf(out.Trace)) {
					t.Errorf("the trace's gate steps %v lack %s[%s]", ruleVerdicts(findingsOf(out.Trace)), tt.rule, tt.tag)
				}
				if r := g.Evaluate(out.Trace); !has(r.Findings) {
					t.Errorf("Evaluate's findings %v lack %s[%s]", ruleVerdicts(r.Findings), tt.rule, tt.tag)
				}
			})
		})
	}
}

// A call returns by its timeout or by the caller's deadline, whichever is
// first, under the default configuration, even when the tool or the model
// ignores its context and never returns.
func TestNoHangPastDeadline(t *testing.T) {
	hung := func(release chan struct{}) func(context.Context, string) (string, error) {
		return func(context.Context, string) (string, error) { <-release; return "late", nil }
	}
	tests := []struct {
		name     string
		res      guard.Resilience
		deadline time.Duration // the caller's; 0 means none
		want     time.Duration
		wantErr  error
	}{
		{name: "tool timeout first", res: guard.Resilience{ToolTimeout: 200 * time.Millisecond}, deadline: 3 * time.Second, want: 200 * time.Millisecond, wantErr: guard.ErrTimeout},
		{name: "caller deadline first", deadline: 3 * time.Second, want: 3 * time.Second, wantErr: context.DeadlineExceeded},
		{name: "default timeout, no deadline", want: 30 * time.Second, wantErr: guard.ErrTimeout},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				release := make(chan struct{})
				defer close(release)
				g := guard.New(guard.Config{Resilience: tt.res})
				defer g.Close(context.Background())
				ctx := context.Background()
				if tt.deadline > 0 {
					var cancel context.CancelFunc
					ctx, cancel = context.WithTimeout(ctx, tt.deadline)
					defer cancel()
				}
				ctx, _ = g.StartTrace(ctx, "s", "")
				start := time.Now()
				_, err := g.WrapTool(guardtest.NewTool("query_order", "", hung(release))).Call(ctx, `{"order_id":"A1001"}`)
				if got := time.Since(start); got != tt.want {
					t.Errorf("returned after %v, want %v", got, tt.want)
				}
				if !errors.Is(err, tt.wantErr) {
					t.Errorf("err = %v, want %v", err, tt.wantErr)
				}
				if running, total := g.Abandoned(); running != 1 || total != 1 {
					t.Errorf("Abandoned() = %d, %d; want 1, 1", running, total)
				}
			})
		})
	}
}

// A model that ignores its context returns by the caller's deadline too.
func TestHungModelReturnsByCallerDeadline(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		release := make(chan struct{})
		defer close(release)
		g := guard.New(guard.Config{})
		defer g.Close(context.Background())
		ctx, cancel := context.WithTimeout(context.Background(), 3*time.Second)
		defer cancel()
		start := time.Now()
		model := &countingModel{f: func(context.Context, int) (*llms.ContentResponse, error) { <-release; return textAnswer("late"), nil }}
		_, err := g.Run(ctx, model, nil, human("hi"))
		if got := time.Since(start); got != 3*time.Second {
			t.Errorf("Run returned after %v, want 3s", got)
		}
		if !errors.Is(err, context.DeadlineExceeded) {
			t.Errorf("err = %v, want the caller's deadline", err)
		}
	})
}

// Abandoned calls are bounded: past Resilience.MaxAbandoned still running,
// a call fails at once with ErrHungLimit without running, and is a finding.
// When the hung calls return, their workers count them back.
func TestAbandonedCallsAreBounded(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		release := make(chan struct{})
		g := guard.New(guard.Config{Resilience: guard.Resilience{ToolTimeout: time.Second, MaxAbandoned: 2}, Gates: guard.Gates{LoopLimit: -1}})
		defer g.Close(context.Background())
		tool := guardtest.NewTool("query_order", "", func(context.Context, string) (string, error) { <-release; return "late", nil })
		wrapped := g.WrapTool(tool)
		ctx, rec := g.StartTrace(context.Background(), "s", "")
		for i, want := range []error{guard.ErrTimeout, guard.ErrTimeout, guard.ErrHungLimit, guard.ErrHungLimit} {
			start := time.Now()
			_, err := wrapped.Call(ctx, `{"order_id":"A1001"}`)
			if !errors.Is(err, want) {
				t.Errorf("call %d: err = %v, want %v", i, err, want)
			}
			if want == guard.ErrHungLimit && time.Since(start) != 0 {
				t.Errorf("call %d refused after %v, want at once", i, time.Since(start))
			}
		}
		if got := len(tool.Inputs()); got != 2 {
			t.Errorf("the tool ran %d times, want 2", got)
		}
		if running, total := g.Abandoned(); running != 2 || total != 2 {
			t.Errorf("Abandoned() = %d, %d; want 2, 2", running, total)
		}
		tags := map[string]int{}
		for _, f := range findingsOf(rec.Trace()) {
			if f.Rule == rules.ToolError {
				tags[f.Tags[0]]++
			}
		}
		if tags["timeout"] != 2 || tags["hung-limit"] < 1 {
			t.Errorf("tool-error findings by tag = %v, want 2 timeouts and the refusals", tags)
		}
		close(release)
		synctest.Wait()
		if running, total := g.Abandoned(); running != 0 || total != 2 {
			t.Errorf("after release Abandoned() = %d, %d; want 0, 2", running, total)
		}
	})
}

// The workers are reused: a thousand sequential calls leave a handful of
// goroutines, not one per call.
func TestWorkersAreReused(t *testing.T) {
	g := guard.New(guard.Config{Gates: guard.Gates{LoopLimit: -1, MaxSteps: -1}})
	wrapped := g.WrapTool(testkit.BenchTool{})
	before := runtime.NumGoroutine()
	ctx, _ := g.StartTrace(context.Background(), "s", "")
	for range 1000 {
		if _, err := wrapped.Call(ctx, `{"order_id":"A1001"}`); err != nil {
			t.Fatal(err)
		}
	}
	// A call starts a worker only when none is idle, which on a loaded
	// machine happens now and then: a handful, never one per call.
	grew := runtime.NumGoroutine() - before
	t.Logf("%d goroutines more after 1000 sequential calls", grew)
	if grew > 50 {
		t.Errorf("%d goroutines more after 1000 sequential calls, want a few workers", grew)
	}
	g.Close(context.Background())
}
