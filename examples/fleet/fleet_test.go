package fleet_test

import (
	"bytes"
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/agentguard/agentguard/guard"
	"github.com/agentguard/agentguard/guard/guardtest"
	"github.com/agentguard/agentguard/ledger"
	"github.com/agentguard/agentguard/ledger/badgerstore"
	"github.com/agentguard/agentguard/trace"
	"github.com/agentguard/agentguard/trace/otelexport"
	"github.com/open-telemetry/opentelemetry-collector-contrib/exporter/fileexporter"
	"github.com/tmc/langchaingo/llms"
	"github.com/tmc/langchaingo/tools"
	"go.opentelemetry.io/collector/component"
	"go.opentelemetry.io/collector/confmap"
	"go.opentelemetry.io/collector/confmap/provider/envprovider"
	"go.opentelemetry.io/collector/confmap/provider/fileprovider"
	"go.opentelemetry.io/collector/exporter"
	"go.opentelemetry.io/collector/otelcol"
	"go.opentelemetry.io/collector/receiver"
	"go.opentelemetry.io/collector/receiver/otlpreceiver"
	"go.opentelemetry.io/collector/service/telemetry/otelconftelemetry"
	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/exporters/otlp/otlplog/otlploghttp"
	"go.opentelemetry.io/otel/exporters/otlp/otlptrace/otlptracehttp"
	sdklog "go.opentelemetry.io/otel/sdk/log"
	"go.opentelemetry.io/otel/sdk/resource"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
)

var keep = flag.String("keep", "", "copy the collector's file to `FILE` (trace/testdata/otlp_collector.jsonl is one)")

// TestFleetThroughCollector runs three replicas, each with its own guard
// and badger ledger, sending OTLP/HTTP to a real collector that writes one
// file; the lessons the command reads from that file are the lessons of
// the three ledgers read together, and the file's traces carry every
// finding the replicas recorded.
func TestFleetThroughCollector(t *testing.T) {
	dir := t.TempDir()
	out := filepath.Join(dir, "fleet.jsonl")
	endpoint := freeAddr(t)
	t.Setenv("FLEET_OTLP_ENDPOINT", endpoint)
	t.Setenv("FLEET_OUT", out)
	stop := startCollector(t, "testdata/collector.yaml")

	ctx := context.Background()
	var ledgers []string
	recorded := map[string]int{} // findings per trace, as the replicas recorded them
	for i, conv := range conversations {
		ldir := filepath.Join(dir, fmt.Sprintf("replica-%d", i))
		ledgers = append(ledgers, ldir)
		for id, n := range runReplica(t, ctx, i, ldir, endpoint, conv) {
			recorded[id] = n
		}
	}
	stop() // the file exporter writes what it holds on shutdown
	if *keep != "" {
		b, err := os.ReadFile(out)
		if err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(*keep, b, 0o644); err != nil {
			t.Fatal(err)
		}
	}

	// The lessons from the collector's file equal those of the three
	// ledgers together.
	fromFile := lessons(t, out)
	fromLedgers := lessons(t, ledgers...)
	if len(fromLedgers) == 0 {
		t.Fatal("the replicas' ledgers hold no lessons: the scenario recorded no finding")
	}
	t.Logf("%d lessons over %d replicas, e.g. %+v", len(fromLedgers), len(ledgers), fromLedgers[0])
	if !slices.EqualFunc(fromFile, fromLedgers, sameLesson) {
		t.Errorf("lessons from the collector's file differ from the replicas' ledgers:\nfile    %+v\nledgers %+v", fromFile, fromLedgers)
	}

	// The file's traces carry the findings the replicas recorded, the log
	// events joined to their spans.
	f, err := os.Open(out)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	got := map[string]int{}
	for tr, err := range trace.Import(f, out, "") {
		if err != nil {
			t.Fatalf("import of the collector's file: %v", err)
		}
		for _, s := range tr.Steps {
			if s.Kind == trace.KindGate {
				got[tr.ID]++
			}
		}
		if tr.SessionID == "" {
			t.Errorf("trace %s has no session", tr.ID)
		}
	}
	if fmt.Sprint(got) != fmt.Sprint(recorded) {
		t.Errorf("findings per trace in the file %v, recorded %v", got, recorded)
	}
}

// conversations are the replicas' traffic: each calls a tool it was not
// given (the allow-list blocks it), and sends to a number nobody gave it
// (provenance blocks it), in English and Chinese.
var conversations = [][]guardtest.Reply{
	{
		guardtest.ToolCall("lookup_order", `{"order":"A1001"}`),
		guardtest.ToolCall("delete_account", `{"order":"A1001"}`),
		guardtest.Text("Order A1001 has shipped."),
	},
	{
		guardtest.ToolCall("lookup_order", `{"order":"B2002"}`),
		guardtest.ToolCall("send_sms", `{"to":"+1 415 555 0199","text":"shipped"}`),
		guardtest.Text("订单 B2002 已发货。"),
	},
	{
		guardtest.ToolCall("send_sms", `{"to":"+86 138 0000 0000","text":"refund"}`),
		guardtest.ToolCall("delete_account", `{"user":"u-3"}`),
		guardtest.Text("退款已处理。"),
	},
}

var userTurns = []string{"Where is order A1001?", "订单 B2002 到哪了？", "我的退款怎么样了？"}

// runReplica runs one replica's conversation and shuts it down as a
// process would, and returns the findings it recorded per trace.
func runReplica(t *testing.T, ctx context.Context, i int, ldir, endpoint string, replies []guardtest.Reply) map[string]int {
	t.Helper()
	res := resource.NewSchemaless(attribute.String("service.name", "support-agent"), attribute.String("service.instance.id", fmt.Sprintf("replica-%d", i)))
	texp, err := otlptracehttp.New(ctx, otlptracehttp.WithEndpoint(endpoint), otlptracehttp.WithInsecure())
	if err != nil {
		t.Fatal(err)
	}
	lexp, err := otlploghttp.New(ctx, otlploghttp.WithEndpoint(endpoint), otlploghttp.WithInsecure())
	if err != nil {
		t.Fatal(err)
	}
	tp := sdktrace.NewTracerProvider(sdktrace.WithBatcher(texp), sdktrace.WithResource(res))
	lp := sdklog.NewLoggerProvider(sdklog.WithProcessor(sdklog.NewBatchProcessor(lexp)), sdklog.WithResource(res))
	store, err := badgerstore.Open(ldir, badgerstore.Options{})
	if err != nil {
		t.Fatal(err)
	}
	live, err := otelexport.NewLive(tp, nil, otelexport.Options{AgentName: "support", Logs: lp})
	if err != nil {
		t.Fatal(err)
	}
	g := guard.New(guard.Config{Observe: guard.Observation{Ledger: store, Steps: live}})
	lookup := guardtest.NewTool("lookup_order", "Look an order up", func(context.Context, string) (string, error) {
		return `{"status":"shipped"}`, nil
	})
	actx, end := live.StartAgent(ctx)
	actx, rec := g.StartTrace(actx, fmt.Sprintf("session-%d", i), "support")
	msgs := []llms.MessageContent{llms.TextParts(llms.ChatMessageTypeHuman, userTurns[i])}
	if _, err := g.Run(actx, g.WrapModel(guardtest.Script(replies...)), []tools.Tool{lookup}, msgs); err != nil {
		t.Fatal(err)
	}
	end(rec.Trace())
	recorded := map[string]int{}
	for _, s := range rec.Trace().Steps {
		if s.Kind == trace.KindGate {
			recorded[rec.ID()]++
		}
	}
	if err := g.Close(ctx); err != nil {
		t.Fatal(err)
	}
	if err := store.Close(); err != nil {
		t.Fatal(err)
	}
	if err := tp.Shutdown(ctx); err != nil {
		t.Fatal(err)
	}
	if err := lp.Shutdown(ctx); err != nil {
		t.Fatal(err)
	}
	return recorded
}

// startCollector runs an OpenTelemetry Collector in this process with the
// configuration file config, and returns a function that shuts it down
// and waits for it.
func startCollector(t *testing.T, config string) (stop func()) {
	t.Helper()
	factories := func() (otelcol.Factories, error) {
		receivers, err := otelcol.MakeFactoryMap[receiver.Factory](otlpreceiver.NewFactory())
		if err != nil {
			return otelcol.Factories{}, err
		}
		exporters, err := otelcol.MakeFactoryMap[exporter.Factory](fileexporter.NewFactory())
		if err != nil {
			return otelcol.Factories{}, err
		}
		return otelcol.Factories{Receivers: receivers, Exporters: exporters, Telemetry: otelconftelemetry.NewFactory()}, nil
	}
	col, err := otelcol.NewCollector(otelcol.CollectorSettings{
		BuildInfo: component.BuildInfo{Command: "fleet-test", Description: "agentguard fleet test", Version: "test"},
		Factories: factories,
		ConfigProviderSettings: otelcol.ConfigProviderSettings{ResolverSettings: confmap.ResolverSettings{
			URIs:              []string{"file:" + config},
			ProviderFactories: []confmap.ProviderFactory{fileprovider.NewFactory(), envprovider.NewFactory()},
		}},
	})
	if err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() { done <- col.Run(context.Background()) }()
	for col.GetState() != otelcol.StateRunning {
		select {
		case err := <-done:
			t.Fatalf("collector: %v", err)
		case <-time.After(10 * time.Millisecond):
		}
	}
	return func() {
		col.Shutdown()
		if err := <-done; err != nil {
			t.Fatalf("collector: %v", err)
		}
	}
}

// lessons runs "agentguard ledger lessons -json" on args.
func lessons(t *testing.T, args ...string) []ledger.Lesson {
	t.Helper()
	cmd := exec.Command("go", append([]string{"tool", "agentguard", "ledger", "lessons", "-json"}, args...)...)
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Run(); err != nil {
		t.Fatalf("agentguard ledger lessons %s: %v\n%s", strings.Join(args, " "), err, stderr.String())
	}
	var ls []ledger.Lesson
	if err := json.Unmarshal(stdout.Bytes(), &ls); err != nil {
		t.Fatalf("lessons: %v\n%s", err, stdout.String())
	}
	return ls
}

// sameLesson compares lessons, their examples as sets: the collector
// interleaves the replicas' batches, so the order examples were first seen
// in may differ.
func sameLesson(a, b ledger.Lesson) bool {
	ea, eb := slices.Sorted(slices.Values(a.Examples)), slices.Sorted(slices.Values(b.Examples))
	return a.Rule == b.Rule && a.Tag == b.Tag && a.Dimension == b.Dimension && a.Count == b.Count &&
		a.FirstSeen.Equal(b.FirstSeen) && a.LastSeen.Equal(b.LastSeen) && slices.Equal(ea, eb)
}

// freeAddr returns a loopback address no one listens on.
func freeAddr(t *testing.T) string {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	return l.Addr().String()
}
