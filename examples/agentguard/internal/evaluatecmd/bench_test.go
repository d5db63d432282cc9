package evaluatecmd

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"testing"

	"github.com/agentguard/agentguard/trace"
)

// chatLog returns conversation i of a log a support agent's traffic
// writes, as OpenAI chat logs: a few user turns, each naming a new order
// (in English or Chinese), each answered by a lookup, a customer read and
// an e-mail.
func chatLog(i, turns int) []byte {
	type call struct {
		ID       string `json:"id"`
		Type     string `json:"type"`
		Function struct {
			Name      string `json:"name"`
			Arguments string `json:"arguments"`
		} `json:"function"`
	}
	type message struct {
		Role       string `json:"role"`
		Content    any    `json:"content"`
		ToolCalls  []call `json:"tool_calls,omitempty"`
		ToolCallID string `json:"tool_call_id,omitempty"`
	}
	msgs := []message{{Role: "system", Content: "You are a customer-service agent."}}
	n := 0
	tool := func(name, args, result string) {
		n++
		c := call{ID: fmt.Sprintf("call_%d", n), Type: "function"}
		c.Function.Name, c.Function.Arguments = name, args
		msgs = append(msgs, message{Role: "assistant", ToolCalls: []call{c}}, message{Role: "tool", ToolCallID: c.ID, Content: result})
	}
	for k := range turns {
		order := fmt.Sprintf("A%d", 100000+i*turns+k)
		email := "c-" + order + "@example.com"
		ask := fmt.Sprintf("Please send the invoice of order %s to its customer.", order)
		if k%2 == 1 {
			ask = fmt.Sprintf("请把订单 %s 的发票发给客户。", order)
		}
		msgs = append(msgs, message{Role: "user", Content: ask})
		tool("get_invoice", fmt.Sprintf(`{"order_id":%q}`, order), fmt.Sprintf(`{"order_id":%q,"email":%q,"invoice":"INV-%s","total":120.5}`, order, email, order))
		tool("get_customer", fmt.Sprintf(`{"email":%q}`, email), fmt.Sprintf(`{"email":%q,"name":"Customer %d"}`, email, i))
		tool("send_email", fmt.Sprintf(`{"to":%q,"body":"Your invoice INV-%s, total 120.50"}`, email, order), `{"status":"sent"}`)
		msgs = append(msgs, message{Role: "assistant", Content: fmt.Sprintf("I have e-mailed invoice INV-%s to %s.", order, email)})
	}
	line, err := json.Marshal(map[string]any{"id": fmt.Sprintf("chat-%d", i), "model": "gpt-4o", "messages": msgs})
	if err != nil {
		panic(err)
	}
	return append(line, '\n')
}

// chatFile writes n conversations of chatLog to a file and returns its
// name.
func chatFile(b *testing.B, n int) string {
	b.Helper()
	path := filepath.Join(b.TempDir(), "chats.jsonl")
	f, err := os.Create(path)
	if err != nil {
		b.Fatal(err)
	}
	for i := range n {
		if _, err := f.Write(chatLog(i, 3)); err != nil {
			b.Fatal(err)
		}
	}
	if err := f.Close(); err != nil {
		b.Fatal(err)
	}
	return path
}

// BenchmarkEvaluateCommand runs `agentguard evaluate FILE` — detection,
// import, the default rules on every CPU, the JSON lines it prints — over files of 10,
// 1,000 and 10,000 OpenAI chat logs of a support agent (three user turns
// each, every turn naming a new order), beside BenchmarkImportOnly, the
// same files only imported: cost per trace should not grow with the file,
// and the ratio of the two is what judging adds to reading.
func BenchmarkEvaluateCommand(b *testing.B) {
	for _, n := range []int{10, 1000, 10000} {
		b.Run(fmt.Sprintf("traces=%d", n), func(b *testing.B) {
			path := chatFile(b, n)
			b.ReportAllocs()
			for b.Loop() {
				if code := run(context.Background(), []string{path}, io.Discard, io.Discard); code != exitPassed {
					b.Fatalf("exit %d", code)
				}
			}
			b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N*n), "ns/trace")
		})
	}
}

// BenchmarkEvaluateSequential is BenchmarkEvaluateCommand judging one
// trace at a time, as the command did before it used every CPU: the
// baseline of its speed-up.
func BenchmarkEvaluateSequential(b *testing.B) {
	defer func(old func() int) { parallelism = old }(parallelism)
	parallelism = func() int { return 1 }
	BenchmarkEvaluateCommand(b)
}

// BenchmarkImportOnly is BenchmarkEvaluateCommand's baseline: the files
// read by trace.Import and nothing more.
func BenchmarkImportOnly(b *testing.B) {
	for _, n := range []int{10, 1000, 10000} {
		b.Run(fmt.Sprintf("traces=%d", n), func(b *testing.B) {
			path := chatFile(b, n)
			b.ReportAllocs()
			for b.Loop() {
				f, err := os.Open(path)
				if err != nil {
					b.Fatal(err)
				}
				for _, err := range trace.Import(f, path, "") {
					if err != nil {
						b.Fatal(err)
					}
				}
				f.Close()
			}
			b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N*n), "ns/trace")
		})
	}
}
