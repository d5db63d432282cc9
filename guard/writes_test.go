package guard_test

import (
	"context"
	"errors"
	"sync/atomic"
	"testing"
	"time"

	"github.com/agentguard/agentguard/guard"
	"github.com/agentguard/agentguard/trace/lexicon"
)

// countingTool fails every call and counts them.
type countingTool struct {
	name  string
	calls atomic.Int32
}

func (c *countingTool) Name() string        { return c.name }
func (c *countingTool) Description() string { return "" }
func (c *countingTool) Call(context.Context, string) (string, error) {
	c.calls.Add(1)
	return "", errors.New("upstream 503")
}

// TestWriteIsNeverRetried: a failing call is tried again only when it
// reads, however the guard learnt that a tool writes — its policy, or a
// write verb of the guard's own lexicon (the lexicon's documented example,
// "ship"). A retried write may ship twice.
func TestWriteIsNeverRetried(t *testing.T) {
	shipping := lexicon.Default()
	shipping.WriteVerbs = append(shipping.WriteVerbs, "ship")
	for _, tc := range []struct {
		name  string
		cfg   guard.Config
		tool  string
		calls int32
	}{
		{"a read is retried", guard.Config{}, "track_parcel", 3},
		{"a write verb of the default lexicon", guard.Config{}, "cancel_order", 1},
		{"a write verb of the guard's lexicon", guard.Config{Lexicon: shipping}, "ship_order", 1},
		{"the same tool under the default lexicon reads", guard.Config{}, "ship_order", 3},
		{"a write by policy", guard.Config{Tools: map[string]guard.ToolPolicy{"track_parcel": {Effect: guard.EffectWrite}}}, "track_parcel", 1},
		{"a policy's retries win", guard.Config{Tools: map[string]guard.ToolPolicy{"cancel_order": {Retries: 1}}}, "cancel_order", 2},
	} {
		t.Run(tc.name, func(t *testing.T) {
			tc.cfg.Resilience.ToolRetries = 2
			tc.cfg.Resilience.Backoff = time.Microsecond
			g := guard.New(tc.cfg)
			defer g.Close(context.Background())
			tool := &countingTool{name: tc.tool}
			ctx, _ := g.StartTrace(context.Background(), "s", "")
			if _, err := g.WrapTool(tool).Call(ctx, `{"order_id":"A1"}`); err == nil {
				t.Fatal("a failing tool returned no error")
			}
			if got := tool.calls.Load(); got != tc.calls {
				t.Errorf("%s called %d times, want %d", tc.tool, got, tc.calls)
			}
		})
	}
}
