package guard_test

// Real provider wire: langchaingo's own openai, anthropic and ollama
// clients talk HTTP to a loopback server that replays responses recorded in
// each provider's wire format (testdata/wire), through guard.Run. Nothing
// leaves the machine.

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/agentguard/agentguard/guard"
	"github.com/agentguard/agentguard/guard/internal/detect"
	"github.com/agentguard/agentguard/trace"
	"github.com/tmc/langchaingo/llms"
	"github.com/tmc/langchaingo/llms/anthropic"
	"github.com/tmc/langchaingo/llms/ollama"
	"github.com/tmc/langchaingo/llms/openai"
	"github.com/tmc/langchaingo/tools"
)

// replay is one recorded HTTP response.
type replay struct {
	status int
	file   string // under testdata/wire; empty means body
	body   string
}

// wireRequest is what the server received.
type wireRequest struct {
	path   string
	header http.Header
	body   map[string]any
}

// wire is a loopback provider endpoint that answers each request with the
// next replay and keeps what it was sent.
//
// Tests on a wire run on real time, not in a testing/synctest bubble: a
// real HTTP round trip is network I/O, which is not durably blocking, so
// the bubble's clock could not stand in for it. The backoffs they set are
// a millisecond.
type wire struct {
	*httptest.Server
	t        *testing.T
	path     string
	mu       sync.Mutex
	replays  []replay
	requests []wireRequest
}

func newWire(t *testing.T, path string, replays ...replay) *wire {
	t.Helper()
	w := &wire{t: t, path: path, replays: replays}
	w.Server = httptest.NewServer(http.HandlerFunc(w.serve))
	t.Cleanup(w.Close)
	return w
}

func (w *wire) serve(rw http.ResponseWriter, r *http.Request) {
	var body map[string]any
	if err := json.NewDecoder(r.Body).Decode(&body); err != nil {
		w.t.Errorf("%s: request body is not a JSON object: %v", r.URL.Path, err)
	}
	w.mu.Lock()
	w.requests = append(w.requests, wireRequest{path: r.URL.Path, header: r.Header.Clone(), body: body})
	n := len(w.requests)
	w.mu.Unlock()
	if r.Method != http.MethodPost || r.URL.Path != w.path {
		w.t.Errorf("request %d: %s %s, want POST %s", n, r.Method, r.URL.Path, w.path)
	}
	if n > len(w.replays) {
		w.t.Errorf("request %d: only %d responses recorded", n, len(w.replays))
		http.Error(rw, `{"error":"unexpected request"}`, http.StatusTeapot)
		return
	}
	rep := w.replays[n-1]
	data := []byte(rep.body)
	if rep.file != "" {
		var err error
		if data, err = os.ReadFile(filepath.Join("testdata", "wire", rep.file)); err != nil {
			w.t.Errorf("fixture: %v", err)
		}
	}
	ct := "application/json"
	if strings.HasSuffix(rep.file, ".ndjson") {
		ct = "application/x-ndjson"
	}
	rw.Header().Set("Content-Type", ct)
	if rep.status != 0 {
		rw.WriteHeader(rep.status)
	}
	rw.Write(data)
}

func (w *wire) received() []wireRequest {
	w.mu.Lock()
	defer w.mu.Unlock()
	return slices.Clone(w.requests)
}

// get walks a decoded JSON value: keys for objects, ints for arrays.
func get(v any, path ...any) any {
	for _, p := range path {
		switch k := p.(type) {
		case string:
			m, _ := v.(map[string]any)
			v = m[k]
		case int:
			a, _ := v.([]any)
			if k >= len(a) {
				return nil
			}
			v = a[k]
		}
	}
	return v
}

func newOpenAI(t *testing.T, url string) llms.Model {
	t.Helper()
	m, err := openai.New(openai.WithBaseURL(url+"/v1"), openai.WithToken("test"), openai.WithModel("gpt-4o"))
	if err != nil {
		t.Fatal(err)
	}
	return m
}

func newAnthropic(t *testing.T, url string) llms.Model {
	t.Helper()
	m, err := anthropic.New(anthropic.WithBaseURL(url+"/v1"), anthropic.WithToken("test"), anthropic.WithModel("claude-sonnet-4-20250514"))
	if err != nil {
		t.Fatal(err)
	}
	return m
}

func newOllama(t *testing.T, url string) llms.Model {
	t.Helper()
	m, err := ollama.New(ollama.WithServerURL(url), ollama.WithModel("llama3.1:8b"))
	if err != nil {
		t.Fatal(err)
	}
	return m
}

// steps returns the trace's steps of kind k.
func steps(tr *trace.Trace, k trace.Kind) []*trace.Step {
	var out []*trace.Step
	for _, s := range tr.Steps {
		if s.Kind == k {
			out = append(out, s)
		}
	}
	return out
}

// TestProviderWireToolLoop runs the whole loop on the real clients: the
// model calls query_order, the guard runs it and sends the result back
// under the provider's call id, and the model answers.
func TestProviderWireToolLoop(t *testing.T) {
	tests := []struct {
		name     string
		path     string
		newModel func(*testing.T, string) llms.Model
		replays  []replay
		callID   string
		// tools returns the names and schemas of the tools offered in a request.
		tools func(body map[string]any) (names []string, schemas []any)
		// echo returns the call id of the assistant's tool call that the
		// second request sends back.
		echo func(body map[string]any) string
		// toolResult returns the call id and content of the tool result in
		// the second request.
		toolResult func(body map[string]any) (id, content string)
		auth       func(h http.Header) string
		wantUsage  [][2]int // per model step: in, out
	}{
		{
			name: "openai", path: "/v1/chat/completions", newModel: newOpenAI,
			replays: []replay{{file: "openai_tool_call.json"}, {file: "openai_answer.json"}},
			callID:  "call_Qx7bW2mT9rLkP4",
			tools: func(body map[string]any) (names []string, schemas []any) {
				for _, tl := range get(body, "tools").([]any) {
					names = append(names, get(tl, "function", "name").(string))
					schemas = append(schemas, get(tl, "function", "parameters"))
				}
				return names, schemas
			},
			echo: func(body map[string]any) string {
				for _, m := range get(body, "messages").([]any) { // after the card's system message
					if get(m, "role") == "assistant" {
						id, _ := get(m, "tool_calls", 0, "id").(string)
						return id
					}
				}
				return ""
			},
			toolResult: func(body map[string]any) (string, string) {
				for _, m := range get(body, "messages").([]any) {
					if get(m, "role") == "tool" {
						id, _ := get(m, "tool_call_id").(string)
						content, _ := get(m, "content").(string)
						return id, content
					}
				}
				return "", ""
			},
			auth:      func(h http.Header) string { return h.Get("Authorization") },
			wantUsage: [][2]int{{82, 17}, {131, 12}},
		},
		{
			name: "anthropic", path: "/v1/messages", newModel: newAnthropic,
			replays: []replay{{file: "anthropic_tool_use.json"}, {file: "anthropic_answer.json"}},
			callID:  "toolu_01A09q90qw90lq917835lq9",
			tools: func(body map[string]any) (names []string, schemas []any) {
				for _, tl := range get(body, "tools").([]any) {
					names = append(names, get(tl, "name").(string))
					schemas = append(schemas, get(tl, "input_schema"))
				}
				return names, schemas
			},
			echo: func(body map[string]any) string {
				if get(body, "messages", 1, "role") != "assistant" || get(body, "messages", 1, "content", 0, "type") != "tool_use" {
					return ""
				}
				id, _ := get(body, "messages", 1, "content", 0, "id").(string)
				return id
			},
			toolResult: func(body map[string]any) (string, string) {
				for _, m := range get(body, "messages").([]any) {
					if c := get(m, "content", 0); get(m, "role") == "user" && get(c, "type") == "tool_result" {
						id, _ := get(c, "tool_use_id").(string)
						content, _ := get(c, "content").(string)
						return id, content
					}
				}
				return "", ""
			},
			auth: func(h http.Header) string { return h.Get("X-Api-Key") },
			// input_tokens only: Anthropic counts cache reads (1024 here) apart,
			// and detect.Usage does not add them.
			wantUsage: [][2]int{{1436, 55}, {1504, 19}}, // input_tokens plus cache reads and writes
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			srv := newWire(t, tt.path, tt.replays...)
			tool := orderTool()
			g := guard.New(guard.Config{})
			res, err := g.Run(context.Background(), tt.newModel(t, srv.URL), []tools.Tool{tool}, human("Where is my order A1001?"))
			if err != nil {
				t.Fatalf("Run: %v", err)
			}
			if res.Status != guard.StatusDone || res.Answer != "Order A1001 has shipped and arrives on Friday." {
				t.Errorf("Run = %s %q", res.Status, res.Answer)
			}
			if got, want := tool.Inputs(), []string{`{"order_id":"A1001"}`}; !slices.Equal(got, want) {
				t.Errorf("tool inputs %q, want %q", got, want)
			}
			checkPairs(t, res.Messages)

			reqs := srv.received()
			if len(reqs) != 2 {
				t.Fatalf("server got %d requests, want 2", len(reqs))
			}
			for i, r := range reqs {
				if got := tt.auth(r.header); !strings.Contains(got, "test") {
					t.Errorf("request %d: credential header %q", i, got)
				}
				names, schemas := tt.tools(r.body)
				if !slices.Equal(names, []string{"query_order"}) {
					t.Errorf("request %d offers tools %q, want [query_order]", i, names)
				}
				if got := get(schemas[0], "required", 0); got != "order_id" {
					t.Errorf("request %d: tool schema %v, want the tool's own", i, schemas[0])
				}
			}
			if got := tt.echo(reqs[1].body); got != tt.callID {
				t.Errorf("second request's assistant tool call id %q, want %q", got, tt.callID)
			}
			id, content := tt.toolResult(reqs[1].body)
			if id != tt.callID || content != `{"order_id":"A1001","status":"shipped"}` {
				t.Errorf("second request's tool result: id %q content %q, want id %q and the tool's output", id, content, tt.callID)
			}

			models := steps(res.Trace, trace.KindModel)
			if len(models) != len(tt.wantUsage) {
				t.Fatalf("%d model steps, want %d", len(models), len(tt.wantUsage))
			}
			for i, s := range models {
				if got := [2]int{s.TokensIn, s.TokensOut}; got != tt.wantUsage[i] {
					t.Errorf("model step %d tokens in/out = %v, want %v (the provider's usage)", i, got, tt.wantUsage[i])
				}
			}
			toolSteps := steps(res.Trace, trace.KindTool)
			if len(toolSteps) != 1 || toolSteps[0].CallID != tt.callID || toolSteps[0].Blocked || toolSteps[0].Error != "" {
				t.Errorf("tool steps %+v, want one run of call %s", toolSteps, tt.callID)
			}
			if len(res.Findings) != 0 {
				t.Errorf("findings %v, want none", ruleVerdicts(res.Findings))
			}
		})
	}
}

// TestProviderWireGenerationInfo pins which GenerationInfo keys each real
// client fills from its provider's usage, the input of detect.Usage.
func TestProviderWireGenerationInfo(t *testing.T) {
	tests := []struct {
		name     string
		path     string
		newModel func(*testing.T, string) llms.Model
		file     string
		want     map[string]int // keys and values that must be there
		in, out  int            // what detect.Usage reads
	}{
		{"openai", "/v1/chat/completions", newOpenAI, "openai_answer.json",
			map[string]int{"PromptTokens": 131, "CompletionTokens": 12, "TotalTokens": 143, "PromptCachedTokens": 64, "ReasoningTokens": 0}, 131, 12},
		{"anthropic", "/v1/messages", newAnthropic, "anthropic_answer.json",
			map[string]int{"InputTokens": 480, "OutputTokens": 19, "CacheReadInputTokens": 1024, "CacheCreationInputTokens": 0}, 1504, 19}, // input counts cache reads
		{"ollama", "/api/chat", newOllama, "ollama_chat_stream.ndjson",
			map[string]int{"PromptTokens": 48, "CompletionTokens": 7, "TotalTokens": 55}, 48, 7},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			srv := newWire(t, tt.path, replay{file: tt.file})
			resp, err := tt.newModel(t, srv.URL).GenerateContent(context.Background(), human("Where is my order A1001?"))
			if err != nil {
				t.Fatal(err)
			}
			info := resp.Choices[0].GenerationInfo
			for k, want := range tt.want {
				if got, ok := info[k].(int); !ok || got != want {
					t.Errorf("GenerationInfo[%q] = %#v, want %d", k, info[k], want)
				}
			}
			in, out, ok := detect.Usage(info)
			if !ok || in != tt.in || out != tt.out {
				t.Errorf("detect.Usage = %d, %d, %v; want %d, %d, true", in, out, ok, tt.in, tt.out)
			}
		})
	}
}

// errorCapture keeps the error the client returned, so that the test can
// check the guard wraps that very error.
type errorCapture struct {
	llms.Model
	mu  sync.Mutex
	err error
}

func (c *errorCapture) GenerateContent(ctx context.Context, msgs []llms.MessageContent, opts ...llms.CallOption) (*llms.ContentResponse, error) {
	resp, err := c.Model.GenerateContent(ctx, msgs, opts...)
	c.mu.Lock()
	c.err = err
	c.mu.Unlock()
	return resp, err
}

// TestProviderWireErrors sends error statuses back: each must surface from
// Run as a *guard.Error wrapping the client's own error, recorded on the
// model step. Retries are off here; TestProviderWireRetry covers them.
func TestProviderWireErrors(t *testing.T) {
	tests := []struct {
		name     string
		path     string
		newModel func(*testing.T, string) llms.Model
		reply    replay
		want     []string // in the error text
	}{
		{"openai 429", "/v1/chat/completions", newOpenAI, replay{status: 429, file: "openai_error_429.json"},
			[]string{"429", "Rate limit reached for gpt-4o"}},
		{"openai 500", "/v1/chat/completions", newOpenAI, replay{status: 500, file: "openai_error_500.json"},
			[]string{"500", "The server had an error"}},
		{"openai 502 html", "/v1/chat/completions", newOpenAI, replay{status: 502, body: "<html>Bad Gateway</html>"},
			[]string{"502"}},
		{"anthropic 429", "/v1/messages", newAnthropic, replay{status: 429, file: "anthropic_error_429.json"},
			[]string{"anthropic", "429", "exceed the rate limit"}},
		{"anthropic 529", "/v1/messages", newAnthropic, replay{status: 529, file: "anthropic_error_529.json"},
			[]string{"529", "Overloaded"}},
		// The ollama client reads the body before the status: a JSON error
		// keeps its message but loses the status code...
		{"ollama 500", "/api/chat", newOllama, replay{status: 500, file: "ollama_error_500.json"},
			[]string{"model runner has unexpectedly stopped"}},
		{"ollama 503", "/api/chat", newOllama, replay{status: 503, file: "ollama_error_503.json"},
			[]string{"server busy"}},
		// ...and a proxy's plain-text 429 becomes a JSON syntax error.
		{"ollama 429 from a proxy", "/api/chat", newOllama, replay{status: 429, body: "Too Many Requests\n"},
			[]string{"invalid character"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			srv := newWire(t, tt.path, tt.reply)
			model := &errorCapture{Model: tt.newModel(t, srv.URL)}
			g := guard.New(guard.Config{Resilience: guard.Resilience{ModelRetries: -1}})
			res, err := g.Run(context.Background(), model, []tools.Tool{orderTool()}, human("Where is my order A1001?"))
			if err == nil {
				t.Fatalf("Run succeeded with %s %q", res.Status, res.Answer)
			}
			var gerr *guard.Error
			if !errors.As(err, &gerr) || gerr.Op != "model" {
				t.Fatalf("err = %T %v, want a *guard.Error for op model", err, err)
			}
			if model.err == nil || !errors.Is(err, model.err) {
				t.Errorf("err %v does not wrap the client's error %v", err, model.err)
			}
			for _, w := range tt.want {
				if !strings.Contains(err.Error(), w) {
					t.Errorf("err %q lacks %q", err, w)
				}
			}
			if !strings.HasPrefix(err.Error(), "guard: model: ") {
				t.Errorf("err %q, want the guard's prefix", err)
			}
			if res == nil || res.Trace == nil {
				t.Fatal("Run returned no trace with the error")
			}
			models := steps(res.Trace, trace.KindModel)
			if len(models) != 1 || models[0].Error != err.Error() {
				t.Errorf("model steps %+v, want one recording %q", models, err)
			}
			if n := len(srv.received()); n != 1 {
				t.Errorf("server got %d requests, want 1", n)
			}
		})
	}
}

// TestProviderWireRetry: a 429 or 5xx is tried again with backoff, each
// failed attempt recorded as a model step; the run goes on when a retry
// succeeds, and fails with the last error when none does.
func TestProviderWireRetry(t *testing.T) {
	tests := []struct {
		name      string
		path      string
		newModel  func(*testing.T, string) llms.Model
		replays   []replay
		wantErr   string // "" means the run completes
		wantSteps []string
	}{
		{"openai 429 then ok", "/v1/chat/completions", newOpenAI,
			[]replay{{status: 429, file: "openai_error_429.json"}, {file: "openai_tool_call.json"}, {file: "openai_answer.json"}},
			"", []string{"model error 429", "model", "tool", "model"}},
		{"anthropic 529 then ok", "/v1/messages", newAnthropic,
			[]replay{{status: 529, file: "anthropic_error_529.json"}, {file: "anthropic_tool_use.json"}, {file: "anthropic_answer.json"}},
			"", []string{"model error 529", "model", "tool", "model"}},
		{"ollama 503 then ok", "/api/chat", newOllama,
			[]replay{{status: 503, file: "ollama_error_503.json"}, {file: "ollama_chat_stream.ndjson"}},
			"", []string{"model error server busy", "model"}},
		{"openai 500 three times", "/v1/chat/completions", newOpenAI,
			[]replay{{status: 500, file: "openai_error_500.json"}, {status: 500, file: "openai_error_500.json"}, {status: 500, file: "openai_error_500.json"}},
			"500", []string{"model error 500", "model error 500", "model error 500"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			srv := newWire(t, tt.path, tt.replays...)
			g := guard.New(guard.Config{Resilience: guard.Resilience{ModelRetries: 2, Backoff: time.Millisecond}})
			res, err := g.Run(context.Background(), tt.newModel(t, srv.URL), []tools.Tool{orderTool()}, human("Where is my order A1001?"))
			switch {
			case tt.wantErr == "" && err != nil:
				t.Fatalf("Run: %v", err)
			case tt.wantErr != "" && (err == nil || !strings.Contains(err.Error(), tt.wantErr)):
				t.Fatalf("Run error %v, want one with %q", err, tt.wantErr)
			case tt.wantErr == "" && res.Status != guard.StatusDone:
				t.Errorf("Run = %s %q", res.Status, res.Answer)
			}
			if n := len(srv.received()); n != len(tt.replays) {
				t.Errorf("server got %d requests, want %d", n, len(tt.replays))
			}
			var got []string
			for _, s := range res.Trace.Steps {
				switch {
				case s.Kind == trace.KindGate, s.Kind == trace.KindMemory: // the card's steps are not the wire's
				case s.Error != "":
					got = append(got, string(s.Kind)+" error "+lastWordIn(s.Error, tt.wantSteps[0]))
				default:
					got = append(got, string(s.Kind))
				}
			}
			if !slices.Equal(got, tt.wantSteps) {
				t.Errorf("steps %q, want %q", got, tt.wantSteps)
			}
		})
	}
}

// lastWordIn returns the part of want after "model error " when err holds
// it, and err otherwise, so that a mismatch shows the whole error.
func lastWordIn(err, want string) string {
	w := strings.TrimPrefix(want, "model error ")
	if strings.Contains(err, w) {
		return w
	}
	return err
}

// TestProviderWireBreaker: consecutive failures open the model's breaker,
// after which the guard fails fast with ErrBreakerOpen and the provider is
// not called at all.
func TestProviderWireBreaker(t *testing.T) {
	srv := newWire(t, "/v1/chat/completions",
		replay{status: 500, file: "openai_error_500.json"}, replay{status: 429, file: "openai_error_429.json"})
	g := guard.New(guard.Config{Resilience: guard.Resilience{ModelRetries: -1, BreakerFailures: 2, BreakerOpenFor: time.Minute}})
	model := newOpenAI(t, srv.URL)
	for i, want := range []string{"500", "429", "circuit breaker open"} {
		_, err := g.Run(context.Background(), model, []tools.Tool{orderTool()}, human("Where is my order A1001?"))
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Fatalf("run %d: err %v, want one with %q", i, err, want)
		}
		if i == 2 && !errors.Is(err, guard.ErrBreakerOpen) {
			t.Errorf("run %d: err %v does not match ErrBreakerOpen", i, err)
		}
	}
	if n := len(srv.received()); n != 2 {
		t.Errorf("server got %d requests, want 2: the open breaker must not call it", n)
	}
	if got := g.BreakerState("model:primary"); got != "open" {
		t.Errorf("breaker %q, want open", got)
	}
}

// TestProviderWireOllamaAnswers runs a plain answer through Run on the real
// ollama client: the streamed chunks arrive joined, with Ollama's counts as
// usage.
func TestProviderWireOllamaAnswers(t *testing.T) {
	srv := newWire(t, "/api/chat", replay{file: "ollama_chat_stream.ndjson"})
	g := guard.New(guard.Config{})
	res, err := g.Run(context.Background(), newOllama(t, srv.URL), nil, human("Where is my order A1001?"))
	if err != nil {
		t.Fatal(err)
	}
	if res.Status != guard.StatusDone || res.Answer != "Order A1001 has shipped." {
		t.Errorf("Run = %s %q", res.Status, res.Answer)
	}
	reqs := srv.received()
	if len(reqs) != 1 {
		t.Fatalf("%d requests, want 1", len(reqs))
	}
	if got := get(reqs[0].body, "model"); got != "llama3.1:8b" {
		t.Errorf("model %v", got)
	}
	// The memory card, on by default, comes first as a system message.
	if role, card := get(reqs[0].body, "messages", 0, "role"), fmt.Sprint(get(reqs[0].body, "messages", 0, "content")); role != "system" || !strings.Contains(card, "- id order: A1001 (turn 0)") {
		t.Errorf("first message %v %q, want the memory card", role, card)
	}
	if got := get(reqs[0].body, "messages", 1, "content"); got != "Where is my order A1001?" {
		t.Errorf("second message %v", got)
	}
	s := steps(res.Trace, trace.KindModel)[0]
	if s.TokensIn != 48 || s.TokensOut != 7 {
		t.Errorf("tokens %d/%d, want 48/7 from prompt_eval_count/eval_count", s.TokensIn, s.TokensOut)
	}
}

// TestProviderWireOllamaToolsUnsupported pins a limit of langchaingo
// v0.1.14's ollama client that the guard inherits: it sends no tools and
// ignores the tool_calls Ollama answers with, so the answer the guard sees
// is empty. The guard treats an empty answer as a failed call
// (ErrNoChoices), never as a silent "done". When a langchaingo upgrade makes
// this fail, the client has learned tools: add ollama to
// TestProviderWireToolLoop instead.
func TestProviderWireOllamaToolsUnsupported(t *testing.T) {
	srv := newWire(t, "/api/chat", replay{file: "ollama_tool_call.ndjson"})
	tool := orderTool()
	g := guard.New(guard.Config{Resilience: guard.Resilience{ModelRetries: -1}})
	res, err := g.Run(context.Background(), newOllama(t, srv.URL), []tools.Tool{tool}, human("Where is my order A1001?"))
	if !errors.Is(err, guard.ErrNoChoices) {
		t.Fatalf("Run error = %v, want ErrNoChoices", err)
	}
	reqs := srv.received()
	if len(reqs) != 1 {
		t.Fatalf("%d requests, want 1", len(reqs))
	}
	if _, ok := reqs[0].body["tools"]; ok {
		t.Errorf("the ollama client now sends tools: %v", reqs[0].body["tools"])
	}
	if len(tool.Inputs()) != 0 {
		t.Errorf("tool inputs %q, want none", tool.Inputs())
	}
	if s := steps(res.Trace, trace.KindModel); len(s) != 1 || !strings.Contains(s[0].Error, "empty answer") {
		t.Errorf("model steps %+v, want one failed attempt", s)
	}
}

// TestProviderWireAnthropicTextBeforeToolUse checks Claude's usual reply, a
// text block then a tool_use block: langchaingo's anthropic client turns
// each content block into its own choice, and the guard merges them so the
// tool call is not lost. The client sends only the first part of an AI
// message back, so the guard puts tool calls first: the tool_use survives
// in the history and its tool_result stays valid.
func TestProviderWireAnthropicTextBeforeToolUse(t *testing.T) {
	srv := newWire(t, "/v1/messages", replay{file: "anthropic_text_and_tool_use.json"})
	model := newAnthropic(t, srv.URL)

	// What the client returns.
	resp, err := model.GenerateContent(context.Background(), human("Where is my order A1001?"))
	if err != nil {
		t.Fatal(err)
	}
	if len(resp.Choices) != 2 || resp.Choices[0].Content != "I'll look up order A1001 for you." ||
		len(resp.Choices[0].ToolCalls) != 0 || len(resp.Choices[1].ToolCalls) != 1 {
		t.Fatalf("client choices changed shape: %+v", resp.Choices)
	}
	callID := resp.Choices[1].ToolCalls[0].ID

	// What the guard makes of it.
	srv = newWire(t, "/v1/messages", replay{file: "anthropic_text_and_tool_use.json"}, replay{file: "anthropic_answer.json"})
	tool := orderTool()
	g := guard.New(guard.Config{})
	res, err := g.Run(context.Background(), newAnthropic(t, srv.URL), []tools.Tool{tool}, human("Where is my order A1001?"))
	if err != nil {
		t.Fatal(err)
	}
	if res.Status != guard.StatusDone || len(tool.Inputs()) != 1 {
		t.Errorf("Run = %s %q, tool inputs %q; want done after one tool call", res.Status, res.Answer, tool.Inputs())
	}
	second := fmt.Sprint(srv.received()[1].body["messages"])
	if !strings.Contains(second, "tool_use") || !strings.Contains(second, callID) || !strings.Contains(second, "tool_result") {
		t.Errorf("second request lost the tool_use/tool_result pair: %s", second)
	}
}

// TestProviderWireOllamaEmptyErrorBody checks a failure the ollama client
// hides: it reads the body before the status, so an error status with an
// empty body (a 429 or 503 from a proxy) comes back as an empty answer with
// zero usage and no error. The guard takes the empty answer as a failed
// call, retries it, and ends the run with ErrNoChoices when the failures go
// on — never a silent "done".
func TestProviderWireOllamaEmptyErrorBody(t *testing.T) {
	for _, status := range []int{http.StatusTooManyRequests, http.StatusServiceUnavailable} {
		t.Run(http.StatusText(status), func(t *testing.T) {
			srv := newWire(t, "/api/chat", replay{status: status}, replay{status: status})
			g := guard.New(guard.Config{Resilience: guard.Resilience{ModelRetries: 1, Backoff: time.Millisecond}})
			res, err := g.Run(context.Background(), newOllama(t, srv.URL), []tools.Tool{orderTool()}, human("Where is my order A1001?"))
			if !errors.Is(err, guard.ErrNoChoices) {
				t.Fatalf("Run error = %v, want ErrNoChoices", err)
			}
			if n := len(srv.received()); n != 2 {
				t.Errorf("server got %d requests, want 2 (one retry)", n)
			}
			if s := steps(res.Trace, trace.KindModel); len(s) != 2 || s[0].Error == "" {
				t.Errorf("model steps %+v, want two failed attempts", s)
			}
		})
	}
}
