package guard_test

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"runtime"
	"runtime/debug"
	"slices"
	"strings"
	"sync"
	"testing"
	"testing/synctest"
	"time"
	"unicode/utf8"

	"github.com/agentguard/agentguard/guard"
	"github.com/agentguard/agentguard/guard/guardtest"
	"github.com/agentguard/agentguard/guard/rules"
	"github.com/agentguard/agentguard/trace"
	"github.com/tmc/langchaingo/llms"
	"github.com/tmc/langchaingo/tools"
)

// The hostile-input tests feed the guard what a broken or malicious model or
// tool can produce, through Run and through WrapTool. Every case must end
// with a clear finding or error, never a panic or a hang; the conversation
// must stay valid; the trace must stay bounded (no recorded field longer
// than the recorder's cap) and round-trip through the JSONL writer and
// reader; and every finding must reach the ledger exactly once.

// hostileSchema is the schema of the recording tool in the hostile cases.
var hostileSchema = map[string]any{
	"type":       "object",
	"properties": map[string]any{"order_id": map[string]any{"type": "string"}},
	"required":   []string{"order_id"},
}

const hostileTool = "query_order"

func newHostileTool(fn func(context.Context, string) (string, error)) *guardtest.Tool {
	if fn == nil {
		fn = func(context.Context, string) (string, error) { return `{"status":"shipped"}`, nil }
	}
	return guardtest.NewTool(hostileTool, "Look up an order by id", fn).WithParameters(hostileSchema)
}

// callThenAnswer is a model that makes one tool call and then answers.
func callThenAnswer(name, args string) *guardtest.Model {
	return guardtest.Script(guardtest.ToolCall(name, args), guardtest.Text("Sorry, I could not look that up."))
}

// violationSink is a ledger that keeps every violation in memory.
type violationSink struct {
	mu  sync.Mutex
	got []trace.Violation
}

func (s *violationSink) Append(_ context.Context, v trace.Violation) (uint64, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.got = append(s.got, v)
	return uint64(len(s.got)), nil
}

func (s *violationSink) violations() []trace.Violation {
	s.mu.Lock()
	defer s.mu.Unlock()
	return slices.Clone(s.got)
}

// panicError is an error whose Error method panics too.
type panicError struct{}

func (panicError) Error() string { panic("Error() panics as well") }

// hangingTool blocks until *release is closed, ignoring its context. It
// reads *release when called: each subtest makes its own in its bubble.
func hangingTool(release *chan struct{}) func(context.Context, string) (string, error) {
	return func(context.Context, string) (string, error) {
		<-*release
		return "too late", nil
	}
}

// nested returns depth opening brackets followed, when closed, by as many
// closing ones.
func nested(depth int, closed bool) string {
	s := strings.Repeat("[", depth)
	if closed {
		s += strings.Repeat("]", depth)
	}
	return s
}

func manyCalls(n int, args func(i int) string) guardtest.Reply {
	r := guardtest.Reply{Calls: make([]guardtest.Call, n)}
	for i := range r.Calls {
		r.Calls[i] = guardtest.Call{Name: hostileTool, Args: args(i)}
	}
	return r
}

func TestHostileInputRun(t *testing.T) {
	const mb = 1 << 20
	bigArgs := `{"order_id":"` + strings.Repeat("A", 5*mb) + `"}`
	var release chan struct{} // made per subtest, in its bubble
	fast := guard.Resilience{ModelRetries: -1, ToolTimeout: 50 * time.Millisecond, ModelTimeout: 50 * time.Millisecond}
	isolated := fast // every tool not declared HonoursContext runs isolated

	tests := []struct {
		name  string
		cfg   guard.Config // Ledger is set by the test
		model llms.Model
		tool  func(ctx context.Context, input string) (string, error) // nil answers an order
		// wantErr is matched with errors.Is against Run's error; nil means
		// Run must succeed with wantStatus.
		wantErr    error
		wantStatus guard.RunStatus
		wantRules  []string // rule@verdict, each among the findings
		wantRan    int      // how often the tool ran
		// wantResult is a substring of every tool result message.
		wantResult string
		// quick means a hung call must be abandoned at its timeout: Run
		// returns within seconds.
		quick bool
		check func(t *testing.T, res *guard.Result)
	}{
		// Malformed tool-argument JSON.
		{name: "unterminated object", model: callThenAnswer(hostileTool, `{"order_id": "A1001"`),
			wantStatus: guard.StatusDone, wantRules: []string{"tool-arguments@retry"}, wantResult: "not valid JSON"},
		{name: "not JSON", model: callThenAnswer(hostileTool, `order A1001 please`),
			wantStatus: guard.StatusDone, wantRules: []string{"tool-arguments@retry"}, wantResult: "not valid JSON"},
		{name: "array instead of object", model: callThenAnswer(hostileTool, `["A1001"]`),
			wantStatus: guard.StatusDone, wantRules: []string{"tool-arguments@retry"}, wantResult: "want a JSON object"},
		{name: "trailing data", model: callThenAnswer(hostileTool, `{"order_id":"A1001"}{"order_id":"A1002"}`),
			wantStatus: guard.StatusDone, wantRules: []string{"tool-arguments@retry"}, wantResult: "trailing data"},
		{name: "NUL bytes", model: callThenAnswer(hostileTool, "{\"order_id\":\"A1\x00001\"}"),
			wantStatus: guard.StatusDone, wantRules: []string{"tool-arguments@retry"}, wantResult: "not valid JSON"},
		{name: "empty arguments", model: callThenAnswer(hostileTool, ``),
			wantStatus: guard.StatusDone, wantRules: []string{"tool-arguments@retry"}, wantResult: `missing required "order_id"`},

		// Oversized arguments: recorded cut to the cap, never whole.
		{name: "5 MB arguments", model: callThenAnswer(hostileTool, bigArgs),
			wantStatus: guard.StatusDone, wantRan: 1, wantResult: "shipped",
			check: func(t *testing.T, res *guard.Result) {
				s := toolStep(t, res.Trace)
				if !s.Truncated || !strings.HasSuffix(s.Args, trace.TruncationMarker) || len(s.Args) > trace.DefaultMaxField {
					t.Errorf("tool step: Truncated = %v, %d bytes of args ending %q; want them cut to %d bytes with the marker",
						s.Truncated, len(s.Args), tail(s.Args), trace.DefaultMaxField)
				}
			}},
		{name: "5 MB malformed arguments", model: callThenAnswer(hostileTool, bigArgs[:len(bigArgs)-2]),
			wantStatus: guard.StatusDone, wantRules: []string{"tool-arguments@retry"}, wantResult: "not valid JSON"},

		// Invalid UTF-8: JSON text must be UTF-8 (RFC 8259 §8.1).
		{name: "invalid UTF-8 in an argument string", model: callThenAnswer(hostileTool, "{\"order_id\":\"A\xff\xfe1001\"}"),
			wantStatus: guard.StatusDone, wantRules: []string{"tool-arguments@retry"}, wantResult: "UTF-8"},
		{name: "invalid UTF-8 outside strings", model: callThenAnswer(hostileTool, "{\"order_id\":\xff}"),
			wantStatus: guard.StatusDone, wantRules: []string{"tool-arguments@retry"}, wantResult: "not valid JSON"},
		{name: "invalid UTF-8 in the tool result", model: callThenAnswer(hostileTool, `{"order_id":"A1001"}`),
			tool:       func(context.Context, string) (string, error) { return "{\"status\":\"ship\xffped\xc3\"}", nil },
			wantStatus: guard.StatusDone, wantRan: 1, wantResult: "ship\uFFFDped", wantRules: []string{"malformed-output@allow"}},

		// Deeply nested JSON: the validator errors, nothing recurses itself to death.
		{name: "100k open brackets", model: callThenAnswer(hostileTool, nested(100_000, false)),
			wantStatus: guard.StatusDone, wantRules: []string{"tool-arguments@retry"}, wantResult: "not valid JSON"},
		{name: "100k nested arrays in a property", model: callThenAnswer(hostileTool, `{"order_id":"A1","x":`+nested(100_000, true)+`}`),
			wantStatus: guard.StatusDone, wantRules: []string{"tool-arguments@retry"}, wantResult: "not valid JSON"},
		{name: "100k nested objects", model: callThenAnswer(hostileTool, strings.Repeat(`{"a":`, 100_000)+"1"+strings.Repeat("}", 100_000)),
			wantStatus: guard.StatusDone, wantRules: []string{"tool-arguments@retry"}, wantResult: "not valid JSON"},
		{name: "9k nested arrays, under the decoder's limit", model: callThenAnswer(hostileTool, `{"order_id":"A1","x":`+nested(9_000, true)+`}`),
			wantStatus: guard.StatusDone, wantRan: 1, wantResult: "shipped"},
		{name: "100k nested arrays in the tool result", model: callThenAnswer(hostileTool, `{"order_id":"A1001"}`),
			tool:       func(context.Context, string) (string, error) { return nested(100_000, true), nil },
			wantStatus: guard.StatusDone, wantRan: 1},

		// Unknown tools.
		{name: "unknown tool", model: callThenAnswer("drop_database", `{}`),
			wantStatus: guard.StatusDone, wantRules: []string{"tool-allow-list@block"}, wantResult: "allow-list"},
		{name: "unknown tool with a 100 KB name", model: callThenAnswer(strings.Repeat("x", 100<<10), `{}`),
			wantStatus: guard.StatusDone, wantRules: []string{"tool-allow-list@block"}, wantResult: "allow-list"},
		{name: "unknown tool with an empty name", model: callThenAnswer("", `{}`),
			wantStatus: guard.StatusDone, wantRules: []string{"tool-allow-list@block"}},

		// A thousand tool calls in one turn: MaxSteps hands off, every call gets its one result.
		{name: "1000 distinct calls", model: guardtest.Script(manyCalls(1000, func(i int) string { return fmt.Sprintf(`{"order_id":"A%d"}`, i) })),
			wantStatus: guard.StatusHandoff, wantRules: []string{"max-steps@handoff"}, wantRan: 25,
			check: func(t *testing.T, res *guard.Result) {
				if got := len(toolResults(res.Messages)); got != 1000 {
					t.Errorf("%d tool results, want 1000", got)
				}
			}},
		{name: "1000 identical calls", model: guardtest.Script(manyCalls(1000, func(int) string { return `{"order_id":"A1"}` })),
			wantStatus: guard.StatusHandoff, wantRules: []string{"loop@block", "max-steps@handoff"}, wantRan: 2,
			check: func(t *testing.T, res *guard.Result) {
				if got, want := strings.Count(strings.Join(ruleVerdicts(res.Findings), " "), "loop@block"), 24; got != want {
					t.Errorf("%d loop findings, want %d (calls 3 to 26)", got, want)
				}
			}},
		{name: "1000 calls without a step limit", cfg: guard.Config{Gates: guard.Gates{MaxSteps: -1}},
			model:      guardtest.Script(manyCalls(1000, func(i int) string { return fmt.Sprintf(`{"order_id":"A%d"}`, i) }), guardtest.Text("Done.")),
			wantStatus: guard.StatusDone, wantRan: 1000},

		// Huge tool output.
		{name: "tool returns 50 MB", model: callThenAnswer(hostileTool, `{"order_id":"A1001"}`),
			tool:       func(context.Context, string) (string, error) { return strings.Repeat("x", 50*mb), nil },
			wantStatus: guard.StatusDone, wantRan: 1, wantRules: []string{"malformed-output@allow"},
			wantResult: "tool result cut at 32768 of 52428800 bytes]",
			check: func(t *testing.T, res *guard.Result) {
				for _, r := range toolResults(res.Messages) {
					if len(r) > (32<<10)+100 {
						t.Errorf("the model got a %d-byte tool result, want at most the cap", len(r))
					}
				}
			}},
		{name: "tool fails with a 50 MB error", model: callThenAnswer(hostileTool, `{"order_id":"A1001"}`),
			tool:       func(context.Context, string) (string, error) { return "", errors.New(strings.Repeat("e", 50*mb)) },
			wantStatus: guard.StatusDone, wantRan: 1, wantResult: "error: eeee"},

		// Panicking tools: recorded as a critical tool-error, the loop goes on.
		{name: "tool panics with an int", model: callThenAnswer(hostileTool, `{"order_id":"A1001"}`),
			tool:       func(context.Context, string) (string, error) { panic(42) },
			wantStatus: guard.StatusDone, wantRules: []string{"tool-error@allow"}, wantRan: 1, wantResult: "tool panicked: 42"},
		{name: "tool panics with a struct", model: callThenAnswer(hostileTool, `{"order_id":"A1001"}`),
			tool:       func(context.Context, string) (string, error) { panic(struct{ Code int }{7}) },
			wantStatus: guard.StatusDone, wantRules: []string{"tool-error@allow"}, wantRan: 1, wantResult: "tool panicked: {7}"},
		{name: "tool panics with nil", model: callThenAnswer(hostileTool, `{"order_id":"A1001"}`),
			tool:       func(context.Context, string) (string, error) { panic(nil) },
			wantStatus: guard.StatusDone, wantRules: []string{"tool-error@allow"}, wantRan: 1, wantResult: "tool panicked"},
		{name: "tool panics with an error whose Error panics", model: callThenAnswer(hostileTool, `{"order_id":"A1001"}`),
			tool:       func(context.Context, string) (string, error) { panic(panicError{}) },
			wantStatus: guard.StatusDone, wantRules: []string{"tool-error@allow"}, wantRan: 1, wantResult: "tool panicked"},

		// Panicking and broken models: Run returns the error, the host survives.
		{name: "model panics", cfg: guard.Config{Resilience: fast},
			model: guardtest.Func(func(context.Context, []llms.MessageContent, llms.CallOptions) (guardtest.Reply, error) {
				panic("model exploded")
			}),
			wantErr: guard.ErrModelPanic,
			check: func(t *testing.T, res *guard.Result) {
				if !slices.ContainsFunc(res.Trace.Steps, func(s *trace.Step) bool {
					return s.Kind == trace.KindModel && strings.Contains(s.Error, "model panicked: model exploded")
				}) {
					t.Error("no model step records the panic")
				}
			}},
		{name: "model panics with nil", cfg: guard.Config{Resilience: fast},
			model:   guardtest.Func(func(context.Context, []llms.MessageContent, llms.CallOptions) (guardtest.Reply, error) { panic(nil) }),
			wantErr: guard.ErrModelPanic},
		{name: "model panics after a tool call", cfg: guard.Config{Resilience: fast},
			model: guardtest.Func(func(_ context.Context, msgs []llms.MessageContent, _ llms.CallOptions) (guardtest.Reply, error) {
				if msgs[len(msgs)-1].Role == llms.ChatMessageTypeTool {
					panic("model exploded")
				}
				return guardtest.ToolCall(hostileTool, `{"order_id":"A1001"}`), nil
			}),
			wantErr: guard.ErrModelPanic, wantRan: 1},
		{name: "model answers a nil choice before a real one", cfg: guard.Config{Resilience: fast},
			model:      choicesModel{nil, {Content: "Your order has shipped."}},
			wantStatus: guard.StatusDone},
		{name: "model answers a tool call without a function", cfg: guard.Config{Resilience: fast},
			model:      choicesModel{{Content: "Done.", ToolCalls: []llms.ToolCall{{ID: "c1", Type: "function"}}}},
			wantStatus: guard.StatusDone},
		{name: "model hangs ignoring its context", cfg: guard.Config{Resilience: fast},
			model: guardtest.Func(func(context.Context, []llms.MessageContent, llms.CallOptions) (guardtest.Reply, error) {
				<-release
				return guardtest.Text("too late"), nil
			}),
			wantErr: guard.ErrTimeout, quick: true},

		// A tool that hangs ignoring its context is abandoned at its timeout
		// when it runs isolated.
		{name: "tool hangs ignoring its context", cfg: guard.Config{Resilience: isolated},
			model:      callThenAnswer(hostileTool, `{"order_id":"A1001"}`),
			tool:       hangingTool(&release),
			wantStatus: guard.StatusDone, wantRan: 1, wantResult: guard.ErrTimeout.Error(), quick: true,
			check: func(t *testing.T, res *guard.Result) {
				if s := toolStep(t, res.Trace); !strings.Contains(s.Error, guard.ErrTimeout.Error()) {
					t.Errorf("tool step error = %q, want %q", s.Error, guard.ErrTimeout)
				}
			}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				release = make(chan struct{})
				defer close(release) // abandoned calls return, so the bubble can end
				sink := &violationSink{}
				cfg := tt.cfg
				cfg.Observe.Ledger = sink
				g := guard.New(cfg)
				defer g.Close(context.Background())
				tool := newHostileTool(tt.tool)
				var res *guard.Result
				var err error
				start := time.Now()
				within(t, 60*time.Second, func() {
					res, err = g.Run(context.Background(), tt.model, []tools.Tool{tool}, human("Where is my order A1001?"))
				})
				if took := time.Since(start); tt.quick && took > 5*time.Second {
					t.Errorf("a hung call held Run for %v", took)
				}
				if tt.wantErr != nil {
					if !errors.Is(err, tt.wantErr) {
						t.Fatalf("Run error = %v, want %v", err, tt.wantErr)
					}
				} else if err != nil {
					t.Fatalf("Run error = %v", err)
				}
				if res == nil {
					t.Fatal("Run returned no result")
				}
				if tt.wantErr == nil && res.Status != tt.wantStatus {
					t.Errorf("status = %s, want %s", res.Status, tt.wantStatus)
				}
				got := ruleVerdicts(res.Findings)
				for _, want := range tt.wantRules {
					if !slices.Contains(got, want) {
						t.Errorf("findings = %s, want %s among them", shorten(got), want)
					}
				}
				if got := len(tool.Inputs()); got != tt.wantRan {
					t.Errorf("tool ran %d times, want %d", got, tt.wantRan)
				}
				if tt.wantResult != "" {
					results := toolResults(res.Messages)
					if len(results) == 0 {
						t.Errorf("no tool result, want one containing %q", tt.wantResult)
					}
					for _, r := range results {
						if !strings.Contains(r, tt.wantResult) {
							t.Errorf("tool result %q, want it to contain %q", head(r), tt.wantResult)
						}
					}
				}
				checkPairs(t, res.Messages)
				checkRecorded(t, g, res.Trace, sink)
				if tt.check != nil {
					tt.check(t, res)
				}
			})
		})
	}
}

func TestHostileInputWrapTool(t *testing.T) {
	const mb = 1 << 20
	var release chan struct{} // made per subtest, in its bubble
	tests := []struct {
		name      string
		cfg       guard.Config // Ledger is set by the test
		tool      func(ctx context.Context, input string) (string, error)
		input     string
		wantErr   error  // matched with errors.Is; nil means none, errAny any
		wantOut   string // a substring of the output
		wantRules []string
		wantRan   int
		check     func(t *testing.T, out string, tr *trace.Trace)
	}{
		{name: "unterminated object", input: `{"order_id": "A1001"`, wantOut: "not valid JSON", wantRules: []string{"tool-arguments@retry"}},
		{name: "array instead of object", input: `["A1001"]`, wantOut: "want a JSON object", wantRules: []string{"tool-arguments@retry"}},
		{name: "5 MB arguments", input: `{"order_id":"` + strings.Repeat("A", 5*mb) + `"}`, wantOut: "shipped", wantRan: 1,
			check: func(t *testing.T, _ string, tr *trace.Trace) {
				if s := toolStep(t, tr); !s.Truncated || !strings.HasSuffix(s.Args, trace.TruncationMarker) {
					t.Errorf("tool step: Truncated = %v, args end %q", s.Truncated, tail(s.Args))
				}
			}},
		{name: "5 MB malformed arguments", input: `{"order_id":"` + strings.Repeat("A", 5*mb), wantOut: "not valid JSON", wantRules: []string{"tool-arguments@retry"}},
		{name: "invalid UTF-8 in an argument string", input: "{\"order_id\":\"A\xff\xfe1001\"}", wantOut: "UTF-8", wantRules: []string{"tool-arguments@retry"}},
		{name: "invalid UTF-8 in the result", input: `{"order_id":"A1001"}`, wantOut: "\uFFFD broken", wantRan: 1, wantRules: []string{"malformed-output@allow"},
			tool: func(context.Context, string) (string, error) { return "\xff\xfe broken \xc3", nil }},
		{name: "100k open brackets", input: nested(100_000, false), wantOut: "not valid JSON", wantRules: []string{"tool-arguments@retry"}},
		{name: "100k nested arrays in a property", input: `{"order_id":"A1","x":` + nested(100_000, true) + `}`, wantOut: "not valid JSON", wantRules: []string{"tool-arguments@retry"}},
		{name: "not on the allow-list", cfg: guard.Config{Gates: guard.Gates{AllowedTools: []string{"send_email"}}}, input: `{"order_id":"A1001"}`,
			wantOut: "allow-list", wantRules: []string{"tool-allow-list@block"}},
		{name: "tool returns 50 MB", input: `{"order_id":"A1001"}`, wantRan: 1, wantRules: []string{"malformed-output@allow"},
			wantOut: "tool result cut at 32768 of 52428800 bytes]",
			tool:    func(context.Context, string) (string, error) { return strings.Repeat("x", 50*mb), nil },
			check: func(t *testing.T, out string, tr *trace.Trace) {
				if len(out) > (32<<10)+100 {
					t.Errorf("caller got %d bytes, want at most the cap", len(out))
				}
				if s := toolStep(t, tr); s.Result != out {
					t.Error("the tool step does not record what the caller got")
				}
			}},
		{name: "tool fails with a 50 MB error", input: `{"order_id":"A1001"}`, wantRan: 1, wantErr: errAny,
			tool: func(context.Context, string) (string, error) { return "", errors.New(strings.Repeat("e", 50*mb)) }},
		{name: "tool panics with an int", input: `{"order_id":"A1001"}`, wantErr: guard.ErrToolPanic, wantRules: []string{"tool-error@allow"}, wantRan: 1,
			tool: func(context.Context, string) (string, error) { panic(42) }},
		{name: "tool panics with nil", input: `{"order_id":"A1001"}`, wantErr: guard.ErrToolPanic, wantRules: []string{"tool-error@allow"}, wantRan: 1,
			tool: func(context.Context, string) (string, error) { panic(nil) }},
		{name: "tool hangs ignoring its context", cfg: guard.Config{Resilience: guard.Resilience{ToolTimeout: 50 * time.Millisecond}},
			input: `{"order_id":"A1001"}`, wantErr: guard.ErrTimeout, wantRan: 1, tool: hangingTool(&release),
			check: func(t *testing.T, _ string, tr *trace.Trace) {
				if s := toolStep(t, tr); !strings.Contains(s.Error, guard.ErrTimeout.Error()) {
					t.Errorf("tool step error = %q, want %q", s.Error, guard.ErrTimeout)
				}
			}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				release = make(chan struct{})
				defer close(release) // abandoned calls return, so the bubble can end
				sink := &violationSink{}
				cfg := tt.cfg
				cfg.Observe.Ledger = sink
				g := guard.New(cfg)
				defer g.Close(context.Background())
				tool := newHostileTool(tt.tool)
				ctx, rec := g.StartTrace(context.Background(), "s", "")
				var out string
				var err error
				start := time.Now()
				within(t, 60*time.Second, func() { out, err = g.WrapTool(tool).Call(ctx, tt.input) })
				switch {
				case tt.wantErr == nil:
					if err != nil {
						t.Errorf("Call error = %v", head(err.Error()))
					}
				case tt.wantErr == errAny:
					if err == nil {
						t.Error("Call error = nil, want the tool's error")
					}
				case !errors.Is(err, tt.wantErr):
					t.Errorf("Call error = %v, want %v", err, tt.wantErr)
				}
				if tt.wantErr == guard.ErrTimeout && time.Since(start) > 5*time.Second {
					t.Errorf("a hung tool held the caller for %v", time.Since(start))
				}
				if !strings.Contains(out, tt.wantOut) {
					t.Errorf("Call output = %q, want it to contain %q", head(out), tt.wantOut)
				}
				tr := rec.Trace()
				got := ruleVerdicts(findingsOf(tr))
				for _, want := range tt.wantRules {
					if !slices.Contains(got, want) {
						t.Errorf("findings = %s, want %s among them", shorten(got), want)
					}
				}
				if got := len(tool.Inputs()); got != tt.wantRan {
					t.Errorf("tool ran %d times, want %d", got, tt.wantRan)
				}
				checkRecorded(t, g, tr, sink)
				if tt.check != nil {
					tt.check(t, out, tr)
				}
			})
		})
	}
}

// errAny stands for any error in a test case.
var errAny = errors.New("any error")

// choicesModel answers every call with the same choices, as a broken
// provider client might.
type choicesModel []*llms.ContentChoice

func (m choicesModel) GenerateContent(context.Context, []llms.MessageContent, ...llms.CallOption) (*llms.ContentResponse, error) {
	return &llms.ContentResponse{Choices: m}, nil
}

func (m choicesModel) Call(ctx context.Context, prompt string, options ...llms.CallOption) (string, error) {
	return llms.GenerateFromSinglePrompt(ctx, m, prompt, options...)
}

// within runs fn, failing the test if it panics or has not returned after d.
func within(t *testing.T, d time.Duration, fn func()) {
	t.Helper()
	done := make(chan any, 1)
	go func() {
		defer func() {
			if r := recover(); r != nil {
				done <- fmt.Sprintf("%v\n%s", r, debug.Stack())
				return
			}
			done <- nil
		}()
		fn()
	}()
	select {
	case p := <-done:
		if p != nil {
			t.Fatalf("panic: %v", p)
		}
	case <-time.After(d):
		buf := make([]byte, 1<<20)
		t.Fatalf("did not return within %v; goroutines:\n%s", d, buf[:runtime.Stack(buf, true)])
	}
}

// checkRecorded checks what the guard recorded: every field of every step
// within the recorder's cap, every finding sent to the ledger exactly once,
// offline evaluation as quiet as online, and a JSONL round trip that loses
// nothing more.
func checkRecorded(t *testing.T, g *guard.Guard, tr *trace.Trace, sink *violationSink) {
	t.Helper()
	if err := g.Flush(context.Background()); err != nil {
		t.Fatal(err)
	}
	const limit = trace.DefaultMaxField
	for _, s := range tr.Steps {
		fields := map[string]string{"name": s.Name, "args": s.Args, "result": s.Result, "error": s.Error}
		for i, c := range s.Calls {
			fields[fmt.Sprintf("calls[%d].name", i)], fields[fmt.Sprintf("calls[%d].args", i)] = c.Name, c.Args
		}
		if f := s.Finding; f != nil {
			fields["finding.message"], fields["finding.evidence"], fields["finding.question"] = f.Message, f.Evidence, f.Question
		}
		for _, k := range sortedFieldNames(fields) {
			if n := len(fields[k]); n > limit {
				t.Errorf("step %d (%s %s): %s holds %d bytes, over the %d-byte cap", s.Index, s.Kind, head(s.Name), k, n, limit)
			}
		}
	}

	gates := findingsOf(tr)
	vs := sink.violations()
	if len(vs) != len(gates) {
		t.Errorf("ledger got %d violations, trace has %d gate steps", len(vs), len(gates))
	}
	// Every finding reaches the ledger once. Order is not kept when the
	// queue is full: the step that finds it full delivers its own finding.
	key := func(traceID, rule string, step int) string { return fmt.Sprintf("%s@%d in %q", rule, step, traceID) }
	var got, want []string
	for _, v := range vs {
		got = append(got, key(v.TraceID, v.Rule, v.Step))
	}
	for _, f := range gates {
		want = append(want, key(tr.ID, f.Rule, f.Step))
	}
	slices.Sort(got)
	slices.Sort(want)
	if !slices.Equal(got, want) {
		t.Errorf("ledger holds %s, want %s", shorten(got), shorten(want))
	}

	// Offline evaluation of the recorded trace finds what was found online.
	if got, want := ruleVerdicts(g.Evaluate(tr).Findings), ruleVerdicts(online(gates)); !slices.Equal(got, want) {
		t.Errorf("offline findings = %s, online %s", shorten(got), shorten(want))
	}

	var first, second bytes.Buffer
	if err := trace.NewWriter(&first).Write(tr); err != nil {
		t.Fatalf("writing the trace: %v", err)
	}
	if !utf8.Valid(first.Bytes()) {
		t.Error("the JSONL line is not valid UTF-8")
	}
	back, err := trace.NewReader(bytes.NewReader(first.Bytes())).Read()
	if err != nil {
		t.Fatalf("reading the trace back: %v", err)
	}
	if back.ID != tr.ID || len(back.Steps) != len(tr.Steps) {
		t.Errorf("read back trace %q with %d steps, wrote %q with %d", back.ID, len(back.Steps), tr.ID, len(tr.Steps))
	}
	if err := trace.NewWriter(&second).Write(back); err != nil {
		t.Fatalf("writing the trace again: %v", err)
	}
	if !bytes.Equal(first.Bytes(), second.Bytes()) {
		t.Errorf("the trace does not round-trip: %d bytes written, %d after reading back", first.Len(), second.Len())
	}
}

// online returns the findings that rules gave on model and tool steps:
// those Evaluate can find again.
func online(fs []trace.Finding) []trace.Finding {
	return slices.DeleteFunc(slices.Clone(fs), func(f trace.Finding) bool { return f.Rule == rules.Iterations })
}

func sortedFieldNames(m map[string]string) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	return keys
}

// findingsOf returns the findings of a trace's gate steps, in order.
func findingsOf(tr *trace.Trace) []trace.Finding {
	var out []trace.Finding
	for _, s := range tr.Steps {
		if s.Kind == trace.KindGate && s.Finding != nil {
			out = append(out, *s.Finding)
		}
	}
	return out
}

// toolStep returns the trace's first tool step.
func toolStep(t *testing.T, tr *trace.Trace) *trace.Step {
	t.Helper()
	for _, s := range tr.Steps {
		if s.Kind == trace.KindTool {
			return s
		}
	}
	t.Fatal("no tool step in the trace")
	return nil
}

// head and tail shorten long strings for messages.
func head(s string) string {
	if len(s) <= 80 {
		return s
	}
	return s[:80] + fmt.Sprintf("…(%d bytes)", len(s))
}

func tail(s string) string {
	if len(s) <= 40 {
		return s
	}
	return "…" + s[len(s)-40:]
}

// shorten summarises a long list of rule@verdict names.
func shorten(rs []string) string {
	if len(rs) <= 8 {
		return fmt.Sprint(rs)
	}
	return fmt.Sprintf("%v … (%d in all)", rs[:8], len(rs))
}
