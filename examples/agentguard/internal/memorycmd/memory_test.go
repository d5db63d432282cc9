package memorycmd

import (
	"bytes"
	"flag"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/agentguard/agentguard/trace"
)

var update = flag.Bool("update", false, "rewrite the golden files under testdata")

func TestRunGolden(t *testing.T) {
	tests := []struct {
		file   string
		budget int
		want   []string // lines the output must hold, whatever the golden file says
	}{
		{"sms_zh.jsonl", 600, []string{
			`"value": "不要自动给我发短信通知",`,
			`- prohibition sms: 不要自动给我发短信通知 (turn 6)`,
			`{"role":"user","content":"另外，不要自动给我发短信通知，有事在这里说就行。"}`,
			`# violations: 2`,
			`step 35 (send_sms, turn 24): memory-prohibition block: send_sms would contact the user by sms, which the user prohibited in turn 6: "不要自动给我发短信通知"`,
			`step 39 (schedule_delivery, turn 26): memory-time-range block: schedule_delivery for 2025-06-08 is outside the delivery window 06-01..06-05 the user gave in turn 14`,
		}},
		{"address_en.jsonl", 400, []string{
			`"status": "superseded",`,
			`- address delivery: 48 Pine Avenue, Shelbyville (turn 6, replaces \"12 Oak Street, Springfield\" from turn 1)`,
			`- no longer prohibited: sms (lifted in turn 10)`,
			`# violations: 4`,
			`step 9 (send_sms, turn 4): memory-prohibition block: send_sms would contact the user by sms, which the user prohibited in turn 3: "Please don't text me"`,
			`turn 1: address delivery "12 Oak Street, Springfield": superseded in turn 6 by "48 Pine Avenue, Shelbyville"`,
			`turn 6: address delivery "48 Pine Avenue, Shelbyville": active`,
			`turn 3: prohibition sms "Please don't text me": revoked in turn 10`,
			`step 16 (update_address, turn 7): memory-stale-address clarify: update_address uses address "12 Oak Street, Springfield", which the user replaced in turn 6 by "48 Pine Avenue, Shelbyville"`,
			`step 22 (submit_return, turn 9): memory-stale-address clarify: submit_return uses address "12 Oak Street, Springfield", which the user replaced in turn 6 by "48 Pine Avenue, Shelbyville"`,
			`step 26 (schedule_delivery, turn 11): memory-time-range block: schedule_delivery for 2025-06-09 is outside the delivery window 06-01..06-05 the user gave in turn 4`,
		}},
	}
	for _, tt := range tests {
		t.Run(tt.file, func(t *testing.T) {
			in, err := os.Open(filepath.Join("testdata", tt.file))
			if err != nil {
				t.Fatal(err)
			}
			defer in.Close()
			var out bytes.Buffer
			if _, err := run(in, tt.file, "", &out, tt.budget); err != nil {
				t.Fatal(err)
			}
			for _, line := range tt.want {
				if !strings.Contains(out.String(), line) {
					t.Errorf("output lacks %q", line)
				}
			}
			golden := filepath.Join("testdata", strings.TrimSuffix(tt.file, ".jsonl")+".golden")
			if *update {
				if err := os.WriteFile(golden, out.Bytes(), 0o644); err != nil {
					t.Fatal(err)
				}
				return
			}
			want, err := os.ReadFile(golden)
			if err != nil {
				t.Fatalf("%v (run go test -update to create it)", err)
			}
			if got := out.String(); got != string(want) {
				t.Errorf("output differs from %s (run go test -update if the change is right):\n%s", golden, firstDiff(got, string(want)))
			}
		})
	}
}

// firstDiff shows the first line where got and want differ.
func firstDiff(got, want string) string {
	g, w := strings.Split(got, "\n"), strings.Split(want, "\n")
	for i := range max(len(g), len(w)) {
		var gl, wl string
		if i < len(g) {
			gl = g[i]
		}
		if i < len(w) {
			wl = w[i]
		}
		if gl != wl {
			return "line " + strconv.Itoa(i+1) + ":\n got  " + gl + "\n want " + wl
		}
	}
	return ""
}

func TestRunErrors(t *testing.T) {
	for _, tt := range []struct{ in, want string }{
		{"", "stdin: no conversation in the input"},
		{"\n\n", "stdin: no conversation in the input"},
		{`{"role":"bot","content":"hi"}`, `stdin:1: unknown role "bot"`},
		{"{\"role\":\"user\",\"content\":\"hi\"}\nnot json", "stdin:2: not a JSON object; want one chat message per line"},
		{`{"role":"user","content":{"text":"hi"}}`, "stdin:1: content is not a string, an array of parts or null"},
		{`{"prompt":"hi"}`, `stdin:1: unknown input format: a JSON object with keys "prompt"`},
	} {
		_, err := run(strings.NewReader(tt.in), "stdin", "", &bytes.Buffer{}, 100)
		if err == nil || !strings.Contains(err.Error(), tt.want) {
			t.Errorf("run(%q) = %v, want an error with %q", tt.in, err, tt.want)
		}
	}
}

func TestRunContentParts(t *testing.T) {
	in := `{"role":"user","content":[{"type":"text","text":"Please don't "},{"type":"image_url"},{"type":"text","text":"text me."}]}` + "\n" +
		`{"role":"assistant","content":"","tool_calls":[{"id":"c1","type":"function","function":{"name":"send_sms","arguments":"{}"}}]}` + "\n" +
		`{"role":"tool","tool_call_id":"c1","content":null}`
	var out bytes.Buffer
	if _, err := run(strings.NewReader(in), "stdin", "", &out, 0); err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{`"value": "Please don't text me"`, "# violations: 1", `{"role":"tool","content":"","tool_call_id":"c1"}`} {
		if !strings.Contains(out.String(), want) {
			t.Errorf("output lacks %q:\n%s", want, out.String())
		}
	}
}

// TestRunFormats: the same conversation as a chat log line and as a trace
// gives the report it gives as messages, one per line.
func TestRunFormats(t *testing.T) {
	lines, err := os.ReadFile(filepath.Join("testdata", "address_en.jsonl"))
	if err != nil {
		t.Fatal(err)
	}
	var want bytes.Buffer
	if _, err := run(bytes.NewReader(lines), "address_en.jsonl", "", &want, 400); err != nil {
		t.Fatal(err)
	}
	parts := strings.Split(strings.TrimSpace(string(lines)), "\n")
	chat := `{"id":"address_en.jsonl","messages":[` + strings.Join(parts, ",") + `]}`
	var tr bytes.Buffer
	for t2, err := range trace.Import(strings.NewReader(chat), "chat", "") {
		if err != nil {
			t.Fatal(err)
		}
		if err := trace.NewWriter(&tr).Write(t2); err != nil {
			t.Fatal(err)
		}
	}
	for _, tt := range []struct{ name, in string }{{"chat log", chat}, {"trace", tr.String()}} {
		t.Run(tt.name, func(t *testing.T) {
			var got bytes.Buffer
			n, err := run(strings.NewReader(tt.in), "in", "", &got, 400)
			if err != nil || n != 4 {
				t.Fatalf("%d violations, %v", n, err)
			}
			if got.String() != want.String() {
				t.Errorf("report differs from the one of the messages:\n%s", firstDiff(got.String(), want.String()))
			}
		})
	}
	// Two conversations: one report each, under a header.
	var got bytes.Buffer
	n, err := run(strings.NewReader(chat+"\n"+strings.Replace(chat, `"id":"address_en.jsonl"`, `"id":"again"`, 1)), "in", "", &got, 400)
	if err != nil || n != 8 || !strings.Contains(got.String(), "# conversation again\n") {
		t.Errorf("%d violations, %v:\n%s", n, err, got.String())
	}
}

// chatLines writes an OpenAI chat log of n lines, as a support chat grows:
// each user turn names a new order (in English or Chinese), the assistant
// looks it up and answers, and now and then the user states a constraint.
func chatLines(n int) []byte {
	var b bytes.Buffer
	b.WriteString(`{"role":"system","content":"You are the after-sales assistant of a small online shop. Be brief."}` + "\n")
	for i, lines := 0, 1; lines < n; i++ {
		order := fmt.Sprintf("A%d", 1000+i)
		user := fmt.Sprintf("Where is order %s?", order)
		switch {
		case i%2 == 1:
			user = fmt.Sprintf("订单 %s 到哪了？", order)
		case i%17 == 4:
			user = fmt.Sprintf("Please don't text me about %s.", order)
		case i%23 == 9:
			user = fmt.Sprintf("我的收货地址改成北京市朝阳区建国路%d号。", 10+i%80)
		}
		fmt.Fprintf(&b, `{"role":"user","content":%q}`+"\n", user)
		fmt.Fprintf(&b, `{"role":"assistant","content":null,"tool_calls":[{"id":"call_%d","type":"function","function":{"name":"query_order","arguments":"{\"order_id\":\"%s\"}"}}]}`+"\n", i, order)
		fmt.Fprintf(&b, `{"role":"tool","tool_call_id":"call_%d","content":"{\"order_id\":\"%s\",\"status\":\"shipped\"}"}`+"\n", i, order)
		fmt.Fprintf(&b, `{"role":"assistant","content":"Order %s has shipped."}`+"\n", order)
		lines += 4
	}
	return b.Bytes()
}

// BenchmarkMemoryCommand is the memory verb on one chat log of 10, 1,000
// and 10,000 lines, each user turn naming a new order: the import, the
// card, the compression and the constraint checks of every tool call. Cost
// per line should not grow with the log.
func BenchmarkMemoryCommand(b *testing.B) {
	for _, n := range []int{10, 1000, 10000} {
		in := chatLines(n)
		b.Run(fmt.Sprintf("lines=%d", n), func(b *testing.B) {
			b.SetBytes(int64(len(in)))
			b.ReportAllocs()
			for b.Loop() {
				if _, err := run(bytes.NewReader(in), "chat.jsonl", "", io.Discard, 4000); err != nil {
					b.Fatal(err)
				}
			}
			b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N*n), "ns/line")
		})
	}
}
