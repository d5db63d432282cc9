package guard_test

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/agentguard/agentguard/guard"
	"github.com/agentguard/agentguard/guard/guardtest"
	"github.com/agentguard/agentguard/guard/internal/testkit"
	"github.com/agentguard/agentguard/trace"
	"github.com/tmc/langchaingo/llms"
	"github.com/tmc/langchaingo/llms/openai"
	"github.com/tmc/langchaingo/tools"
)

// sseServer speaks OpenAI's streaming chat wire format: each request is
// answered with the next answer's pieces as chat.completion.chunk events,
// gap apart, then the usage chunk and [DONE].
type sseServer struct {
	*httptest.Server
	mu      sync.Mutex
	answers [][]string
	n       int
	gap     time.Duration
}

func newSSE(tb testing.TB, gap time.Duration, answers ...[]string) *sseServer {
	s := &sseServer{answers: answers, gap: gap}
	s.Server = httptest.NewServer(http.HandlerFunc(s.serve))
	tb.Cleanup(s.Close)
	return s
}

func (s *sseServer) serve(w http.ResponseWriter, r *http.Request) {
	var req struct {
		Stream bool `json:"stream"`
	}
	json.NewDecoder(r.Body).Decode(&req)
	s.mu.Lock()
	pieces := s.answers[min(s.n, len(s.answers)-1)]
	s.n++
	id := fmt.Sprintf("chatcmpl-wire%d", s.n)
	s.mu.Unlock()
	if !req.Stream {
		http.Error(w, `{"error":{"message":"want stream"}}`, http.StatusBadRequest)
		return
	}
	w.Header().Set("Content-Type", "text/event-stream")
	fl := w.(http.Flusher)
	chunk := func(delta, finish string) {
		fr := "null"
		if finish != "" {
			fr = `"` + finish + `"`
		}
		d, _ := json.Marshal(delta)
		fmt.Fprintf(w, "data: {\"id\":%q,\"object\":\"chat.completion.chunk\",\"created\":1733040000,\"model\":\"gpt-4o-2024-08-06\",\"choices\":[{\"index\":0,\"delta\":{\"content\":%s},\"finish_reason\":%s}]}\n\n", id, d, fr)
		fl.Flush()
	}
	fmt.Fprintf(w, "data: {\"id\":%q,\"object\":\"chat.completion.chunk\",\"created\":1733040000,\"model\":\"gpt-4o-2024-08-06\",\"choices\":[{\"index\":0,\"delta\":{\"role\":\"assistant\",\"content\":\"\"},\"finish_reason\":null}]}\n\n", id)
	fl.Flush()
	for _, p := range pieces {
		if s.gap > 0 {
			time.Sleep(s.gap)
		}
		chunk(p, "")
	}
	chunk("", "stop")
	fmt.Fprintf(w, "data: {\"id\":%q,\"object\":\"chat.completion.chunk\",\"created\":1733040000,\"model\":\"gpt-4o-2024-08-06\",\"choices\":[],\"usage\":{\"prompt_tokens\":31,\"completion_tokens\":%d,\"total_tokens\":%d}}\n\ndata: [DONE]\n\n", id, len(pieces), 31+len(pieces))
	fl.Flush()
}

func newStreamingOpenAI(tb testing.TB, url string) llms.Model {
	tb.Helper()
	m, err := openai.New(openai.WithBaseURL(url+"/v1"), openai.WithToken("test"), openai.WithModel("gpt-4o"),
		openai.WithHTTPClient(&http.Client{Transport: guard.Transport(nil)}))
	if err != nil {
		tb.Fatal(err)
	}
	return m
}

// The answer of the issue's report: an empty lookup turned into "no
// records", with a policy section nothing retrieved; and an honest one.
var (
	unchecked = []string{"There are no records ", "of order A42. ", "Per section 9.9 ", "you get a full refund."}
	checked   = []string{"Let me ", "look order A42 ", "up for you."}
	// 订单 A42 没有记录。根据第 9.9 条，您可以获得全额退款。
	uncheckedZH = []string{"订单 A42 没有记录。", "根据第 9.9 条，", "您可以获得全额退款。"}
)

// TestStreamingWire streams answers through langchaingo's real openai
// client: by default the user's streaming function never receives an
// answer the guard stops; pass-through is a choice, and then the stopped
// answer is followed by its replacement.
func TestStreamingWire(t *testing.T) {
	tests := []struct {
		name    string
		answers guard.Answers
		script  [][]string
		turn    string
		want    string
		tagged  bool
	}{
		{"default, allowed", guard.Answers{}, [][]string{checked}, "Where is order A42?", "Let me look order A42 up for you.", false},
		{"default, stopped: only the refusal", guard.Answers{}, [][]string{unchecked}, "Where is order A42?", testkit.Refusal, false},
		{"default, stopped, Chinese", guard.Answers{}, [][]string{uncheckedZH}, "订单 A42 在哪里？", "", false},
		{"default, retried then allowed", guard.Answers{}, [][]string{unchecked, checked}, "Where is order A42?", "Let me look order A42 up for you.", false},
		{"pass-through: seen, then corrected", guard.Answers{PassThrough: true}, [][]string{unchecked}, "Where is order A42?", strings.Join(unchecked, "") + "\n\n" + testkit.Refusal, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			srv := newSSE(t, 0, tt.script...)
			g := guard.New(guard.Config{Answers: tt.answers})
			var got, reasoned strings.Builder
			stream := llms.WithStreamingFunc(func(_ context.Context, chunk []byte) error {
				got.Write(chunk)
				return nil
			})
			// The reasoning function sees what the streaming function does.
			reasoning := llms.WithStreamingReasoningFunc(func(_ context.Context, _, chunk []byte) error {
				reasoned.Write(chunk)
				return nil
			})
			res, err := g.Run(context.Background(), newStreamingOpenAI(t, srv.URL), nil, human(tt.turn), stream, reasoning)
			if err != nil {
				t.Fatal(err)
			}
			want := tt.want
			if want == "" { // the refusal in the user's language
				want = res.Answer
				if res.Status != guard.StatusRefused {
					t.Errorf("status = %s, want refused", res.Status)
				}
			}
			if got.String() != want || reasoned.String() != want {
				t.Errorf("user saw %q (reasoning function %q), want %q", got.String(), reasoned.String(), want)
			}
			for _, p := range append(unchecked[2:], uncheckedZH[1:]...) {
				if !tt.tagged && strings.Contains(got.String(), p) {
					t.Errorf("user saw the stopped answer: %q", got.String())
				}
			}
			tagged := false
			for _, f := range res.Findings {
				tagged = tagged || strings.Contains(strings.Join(f.Tags, ","), "already-streamed")
			}
			if tagged != tt.tagged {
				t.Errorf("already-streamed = %v, want %v", tagged, tt.tagged)
			}
			// Who answered, as the wire said.
			m := steps(res.Trace, trace.KindModel)[0]
			if m.Name != "gpt-4o" || m.Provider != "openai" || m.ResponseModel != "gpt-4o-2024-08-06" || m.ResponseID != "chatcmpl-wire1" || m.FinishReason != "stop" {
				t.Errorf("model step = name %q provider %q response %q/%q finish %q", m.Name, m.Provider, m.ResponseModel, m.ResponseID, m.FinishReason)
			}
		})
	}
}

// BenchmarkStreamLatency measures what buffering costs the user: the time
// to the first chunk their streaming function receives and to the end of
// the call, for an allowed answer streamed by langchaingo's openai client
// from a loopback server as 20 chunks 1 ms apart (a model writing about a
// thousand tokens a second). Pass-through is the baseline; the two modes
// run in turn within each iteration, so that they share the machine's
// load, and the ratios buffered/pass-through are reported.
func BenchmarkStreamLatency(b *testing.B) {
	pieces := make([]string, 20)
	for i := range pieces {
		pieces[i] = fmt.Sprintf("word%d ", i)
	}
	modes := []bool{true, false} // pass-through, buffered
	models := make([]llms.Model, len(modes))
	guards := make([]*guard.Guard, len(modes))
	for i, mode := range modes {
		srv := newSSE(b, time.Millisecond, pieces)
		guards[i] = guard.New(guard.Config{Answers: guard.Answers{PassThrough: mode}})
		models[i] = guards[i].WrapModel(newStreamingOpenAI(b, srv.URL))
	}
	first := make([]time.Duration, len(modes))
	total := make([]time.Duration, len(modes))
	for b.Loop() {
		for i := range modes {
			var firstAt time.Time
			stream := llms.WithStreamingFunc(func(_ context.Context, chunk []byte) error {
				if firstAt.IsZero() && len(chunk) > 0 {
					firstAt = time.Now()
				}
				return nil
			})
			ctx, _ := guards[i].StartTrace(context.Background(), "s", "")
			start := time.Now()
			if _, err := models[i].GenerateContent(ctx, human("Where is order A42?"), stream); err != nil {
				b.Fatal(err)
			}
			total[i] += time.Since(start)
			first[i] += firstAt.Sub(start)
		}
	}
	n := float64(b.N)
	b.ReportMetric(float64(first[0].Microseconds())/n, "passthrough-first-µs")
	b.ReportMetric(float64(total[0].Microseconds())/n, "passthrough-total-µs")
	b.ReportMetric(float64(first[1].Microseconds())/n, "buffered-first-µs")
	b.ReportMetric(float64(total[1].Microseconds())/n, "buffered-total-µs")
	b.ReportMetric(float64(first[1])/float64(first[0]), "first-ratio")
	b.ReportMetric(float64(total[1])/float64(total[0]), "total-ratio")
}

// toolCallSSE answers the first request with a tool call streamed as
// OpenAI streams one (the call's id and name, then its arguments in
// pieces, finish_reason "tool_calls"), and later ones with answer text.
func toolCallSSE(tb testing.TB, answer []string) *httptest.Server {
	var mu sync.Mutex
	n := 0
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		n++
		first := n == 1
		mu.Unlock()
		w.Header().Set("Content-Type", "text/event-stream")
		event := func(delta, finish string) {
			fmt.Fprintf(w, "data: {\"id\":\"chatcmpl-tc\",\"object\":\"chat.completion.chunk\",\"model\":\"gpt-4o-2024-08-06\",\"choices\":[{\"index\":0,\"delta\":%s,\"finish_reason\":%s}]}\n\n", delta, finish)
		}
		event(`{"role":"assistant","content":""}`, "null")
		if first {
			event(`{"tool_calls":[{"index":0,"id":"call_1","type":"function","function":{"name":"lookup_order","arguments":""}}]}`, "null")
			event(`{"tool_calls":[{"index":0,"function":{"arguments":"{\"order\":"}}]}`, "null")
			event(`{"tool_calls":[{"index":0,"function":{"arguments":"\"A1001\"}"}}]}`, "null")
			event(`{}`, `"tool_calls"`)
		} else {
			for _, p := range answer {
				d, _ := json.Marshal(p)
				event(`{"content":`+string(d)+`}`, "null")
			}
			event(`{}`, `"stop"`)
		}
		fmt.Fprint(w, "data: [DONE]\n\n")
	}))
	tb.Cleanup(srv.Close)
	return srv
}

// TestStreamingToolCallChunks: the JSON langchaingo's openai client
// streams of a proposed tool call never reaches the caller's streaming
// functions, in buffered or pass-through mode; the answer text does, once
// judged (buffered) or as it comes (pass-through).
func TestStreamingToolCallChunks(t *testing.T) {
	answer := []string{"订单 A1001 ", "已发货。"}
	for _, passThrough := range []bool{false, true} {
		t.Run(fmt.Sprintf("pass-through=%v", passThrough), func(t *testing.T) {
			srv := toolCallSSE(t, answer)
			g := guard.New(guard.Config{Answers: guard.Answers{PassThrough: passThrough}})
			lookup := guardtest.NewTool("lookup_order", "Look an order up", func(context.Context, string) (string, error) {
				return `{"order":"A1001","status":"shipped"}`, nil
			})
			var text, reasoned strings.Builder
			opts := []llms.CallOption{
				llms.WithStreamingFunc(func(_ context.Context, chunk []byte) error { text.Write(chunk); return nil }),
				llms.WithStreamingReasoningFunc(func(_ context.Context, _, chunk []byte) error { reasoned.Write(chunk); return nil }),
			}
			res, err := g.Run(context.Background(), newStreamingOpenAI(t, srv.URL), []tools.Tool{lookup}, human("订单 A1001 到哪了？"), opts...)
			if err != nil {
				t.Fatal(err)
			}
			if res.Answer != "订单 A1001 已发货。" {
				t.Fatalf("answer %q, status %s", res.Answer, res.Status)
			}
			for name, got := range map[string]string{"StreamingFunc": text.String(), "StreamingReasoningFunc": reasoned.String()} {
				if got != "订单 A1001 已发货。" {
					t.Errorf("%s saw %q, want only the answer", name, got)
				}
			}
			if calls := steps(res.Trace, trace.KindTool); len(calls) != 1 || calls[0].Args != `{"order":"A1001"}` {
				t.Errorf("tool steps %+v", calls)
			}
		})
	}
}
