package guard_test

import (
	"bytes"
	"context"
	"encoding/json"
	"log/slog"
	"testing"

	"github.com/agentguard/agentguard/guard"
	"github.com/agentguard/agentguard/guard/guardtest"
	"github.com/agentguard/agentguard/guard/rules"
	"github.com/tmc/langchaingo/tools"
)

func TestGateDecisionsAreLogged(t *testing.T) {
	var buf bytes.Buffer
	g := guard.New(guard.Config{Observe: guard.Observation{Logger: slog.New(slog.NewJSONHandler(&buf, nil))}})
	_, err := g.Run(context.Background(), guardtest.Script(guardtest.ToolCall("nope", "{}"), guardtest.Text("ok")), []tools.Tool{orderTool()}, human("hi"))
	if err != nil {
		t.Fatal(err)
	}
	if err := g.Close(context.Background()); err != nil {
		t.Fatal(err)
	}
	var rec map[string]any
	if err := json.Unmarshal(buf.Bytes(), &rec); err != nil {
		t.Fatalf("want one JSON log line, got %q: %v", buf.String(), err)
	}
	for key, want := range map[string]any{
		"level": "WARN", "rule": rules.AllowList, "verdict": "block", "step": float64(2), // after the card step and the model step
	} {
		if rec[key] != want {
			t.Errorf("%s = %v, want %v", key, rec[key], want)
		}
	}
	if rec["trace_id"] == "" || rec["message"] == "" {
		t.Errorf("trace id or message missing: %v", rec)
	}
}
