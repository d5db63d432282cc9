package otelexport_test

import (
	"bytes"
	"context"
	"encoding/base64"
	"encoding/binary"
	"encoding/hex"
	"encoding/json"
	"flag"
	"fmt"
	"net/url"
	"os"
	"path/filepath"
	"slices"
	"sync/atomic"
	"testing"

	"github.com/agentguard/agentguard/guard"
	"github.com/agentguard/agentguard/guard/guardtest"
	"github.com/agentguard/agentguard/trace"
	"github.com/agentguard/agentguard/trace/otelexport"
	"github.com/tmc/langchaingo/tools"
	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/exporters/otlp/otlptrace/otlptracehttp"
	"go.opentelemetry.io/otel/sdk/resource"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	oteltrace "go.opentelemetry.io/otel/trace"
	"google.golang.org/protobuf/encoding/protojson"
)

var update = flag.Bool("update", false, "rewrite the golden files under testdata")

// counterIDs gives spans ids in sequence, for a golden file.
type counterIDs struct{ n atomic.Uint64 }

func (g *counterIDs) NewIDs(ctx context.Context) (oteltrace.TraceID, oteltrace.SpanID) {
	var tid oteltrace.TraceID
	binary.BigEndian.PutUint64(tid[8:], 0x4a6f7264616e0001)
	return tid, g.NewSpanID(ctx, tid)
}

func (g *counterIDs) NewSpanID(context.Context, oteltrace.TraceID) oteltrace.SpanID {
	var sid oteltrace.SpanID
	binary.BigEndian.PutUint64(sid[:], g.n.Add(1))
	return sid
}

// toOTLPJSON exports traces with content over OTLP/HTTP to a loopback
// collector, and returns what it received in the OTLP JSON encoding, one
// request per line, as a collector's file exporter writes it (trace and
// span ids in hex, enums as numbers, 64-bit integers as strings).
func toOTLPJSON(t *testing.T, ids sdktrace.IDGenerator, traces ...*trace.Trace) []byte {
	t.Helper()
	col := newCollector(t)
	u, _ := url.Parse(col.URL)
	ctx := context.Background()
	exp, err := otlptracehttp.New(ctx, otlptracehttp.WithEndpoint(u.Host), otlptracehttp.WithInsecure(),
		otlptracehttp.WithRetry(otlptracehttp.RetryConfig{Enabled: false}))
	if err != nil {
		t.Fatal(err)
	}
	opts := []sdktrace.TracerProviderOption{sdktrace.WithSyncer(exp),
		sdktrace.WithResource(resource.NewSchemaless(attribute.String("service.name", "support-agent")))}
	if ids != nil {
		opts = append(opts, sdktrace.WithIDGenerator(ids))
	}
	tp := sdktrace.NewTracerProvider(opts...)
	// Span events, as old backends read them: the import reads both.
	e := otelexport.NewExporter(tp, otelexport.Options{AgentName: "support", RecordContent: true, Redact: func(s string) string { return s }, MaxContent: -1, SpanEvents: true})
	for _, tr := range traces {
		if err := e.Export(ctx, tr); err != nil {
			t.Fatal(err)
		}
	}
	if err := tp.Shutdown(ctx); err != nil {
		t.Fatal(err)
	}
	col.received(t)
	var out bytes.Buffer
	col.mu.Lock()
	defer col.mu.Unlock()
	// One request per trace, its spans in the order they ended.
	for _, req := range col.requests {
		raw, err := protojson.MarshalOptions{UseEnumNumbers: true}.Marshal(req)
		if err != nil {
			t.Fatal(err)
		}
		var v any
		if err := json.Unmarshal(raw, &v); err != nil {
			t.Fatal(err)
		}
		hexIDs(v)
		line, _ := json.Marshal(v)
		out.Write(line)
		out.WriteByte('\n')
	}
	return out.Bytes()
}

// hexIDs rewrites protojson's base64 ids as the hex the OTLP JSON
// encoding uses.
func hexIDs(v any) {
	switch v := v.(type) {
	case map[string]any:
		for k, e := range v {
			if s, ok := e.(string); ok && (k == "traceId" || k == "spanId" || k == "parentSpanId") {
				if b, err := base64.StdEncoding.DecodeString(s); err == nil {
					v[k] = hex.EncodeToString(b)
				}
				continue
			}
			hexIDs(e)
		}
	case []any:
		for _, e := range v {
			hexIDs(e)
		}
	}
}

// runGuarded records the scenario through a guard: a call to a
// tool the agent was not given (blocked), an empty lookup, and an answer
// that turns it into "no records" (stopped: the user is asked instead).
func runGuarded(t *testing.T, shadow bool, turn, answer string) *trace.Trace {
	t.Helper()
	g := guard.New(guard.Config{Shadow: shadow})
	empty := guardtest.NewTool("query_order", "Look up an order by id", func(context.Context, string) (string, error) {
		return "[]", nil
	}).WithParameters(map[string]any{"type": "object", "properties": map[string]any{"order_id": map[string]any{"type": "string"}}, "required": []string{"order_id"}})
	model := guardtest.Script(
		guardtest.ToolCall("delete_account", `{"account":"A42"}`),
		guardtest.ToolCall("query_order", `{"order_id":"A42"}`),
		guardtest.Text(answer),
	)
	ctx, _ := g.StartTrace(context.Background(), "sess-7", "orders")
	res, err := g.Run(ctx, model, []tools.Tool{empty}, human(turn))
	if err != nil {
		t.Fatal(err)
	}
	return res.Trace
}

// TestOTLPRoundTrip exports guarded runs as OTLP JSON, imports them with
// trace.ImportOTLP and evaluates both: the same findings on the same
// steps, the same split between what the guard stopped and what got
// through, the same score.
func TestOTLPRoundTrip(t *testing.T) {
	for _, tt := range []struct {
		name, turn, answer string
		shadow             bool
	}{
		{"guarded", "Where is order A42?", "There are no records of order A42.", false},
		{"shadow", "Where is order A42?", "There are no records of order A42.", true},
		{"guarded, Chinese", "订单 A42 在哪里？", "系统中没有订单 A42 的记录。", false},
		{"shadow, Chinese", "订单 A42 在哪里？", "系统中没有订单 A42 的记录。", true},
	} {
		t.Run(tt.name, func(t *testing.T) {
			orig := runGuarded(t, tt.shadow, tt.turn, tt.answer)
			data := toOTLPJSON(t, nil, orig)
			if !trace.SniffOTLP(data) {
				t.Errorf("SniffOTLP does not recognise %.80s", data)
			}
			var got []*trace.Trace
			for tr, err := range trace.ImportOTLP(bytes.NewReader(data), "roundtrip") {
				if err != nil {
					t.Fatal(err)
				}
				got = append(got, tr)
			}
			if len(got) != 1 {
				t.Fatalf("imported %d traces, want 1", len(got))
			}
			imp := got[0]
			if imp.ID != orig.ID || imp.SessionID != orig.SessionID || imp.Route != orig.Route || !slices.Equal(imp.UserTurns, orig.UserTurns) || len(imp.Steps) != len(orig.Steps) {
				t.Fatalf("imported %s/%s/%s %q with %d steps, want %s/%s/%s %q with %d",
					imp.ID, imp.SessionID, imp.Route, imp.UserTurns, len(imp.Steps), orig.ID, orig.SessionID, orig.Route, orig.UserTurns, len(orig.Steps))
			}
			for i, s := range orig.Steps {
				is := imp.Steps[i]
				if is.Kind != s.Kind || is.Name != s.Name || is.Turn != s.Turn || is.Args != s.Args || is.Result != s.Result || is.Blocked != s.Blocked {
					t.Errorf("step %d = %+v, want %+v", i, is, s)
				}
			}
			g := guard.New(guard.Config{})
			want, have := g.Evaluate(orig), g.Evaluate(imp)
			if a, b := findingsAt(want.Findings), findingsAt(have.Findings); !slices.Equal(a, b) {
				t.Errorf("findings after the round trip = %v, want %v", b, a)
			}
			if a, b := findingsAt(want.Stopped), findingsAt(have.Stopped); !slices.Equal(a, b) {
				t.Errorf("stopped = %v, want %v", b, a)
			}
			if have.Score != want.Score || have.Passed != want.Passed || want.Violations() == 0 {
				t.Errorf("score %d passed %v, want %d %v (%d violations)", have.Score, have.Passed, want.Score, want.Passed, want.Violations())
			}
		})
	}
}

func findingsAt(fs []trace.Finding) []string {
	out := make([]string, len(fs))
	for i, f := range fs {
		out[i] = fmt.Sprintf("%s@%s#%d", f.Rule, f.Verdict, f.Step)
	}
	return out
}

// TestOTLPGoldenInput writes trace/testdata/otlp_genai.jsonl, the seed of
// the OTLP importer's golden test, from the support fixture exported with
// fixed span ids (go test -update).
func TestOTLPGoldenInput(t *testing.T) {
	data := toOTLPJSON(t, &counterIDs{}, support())
	path := filepath.Join("..", "testdata", "otlp_genai.jsonl")
	if *update {
		if err := os.WriteFile(path, data, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(data, want) {
		t.Errorf("%s is stale: go test ./trace/otelexport -run TestOTLPGoldenInput -update", path)
	}

}
