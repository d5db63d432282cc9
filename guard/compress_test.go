package guard_test

import (
	"context"
	"encoding/json"
	"testing"

	"github.com/agentguard/agentguard/guard"
	"github.com/agentguard/agentguard/memory"
	"github.com/agentguard/agentguard/trace"
)

// TestCompressStepsRecordChanges pins what the guard records of its
// compressions: one memory step per model call that compresses otherwise
// than the last one recorded (none for a call within the turn that sends
// the same messages again), each the report memory.Compress makes of what
// was sent, with the dropped messages as runs, so that a step is no
// longer at turn 400 than at turn 100.
func TestCompressStepsRecordChanges(t *testing.T) {
	g := guard.New(guard.Config{Memory: &guard.MemoryOptions{Budget: 1000}})
	wrapped := g.WrapModel(instantModel{})
	ctx, rec := g.StartTrace(context.Background(), "compress-steps", "")
	msgs := conversation(400)
	compressSteps := func() []*trace.Step {
		var out []*trace.Step
		for _, s := range rec.Trace().Steps {
			if s.Kind == trace.KindMemory && s.Name == memory.StepCompress {
				out = append(out, s)
			}
		}
		return out
	}
	sizes := map[int][2]int{} // runs and indexes listed, bytes
	for turn := 1; turn <= 400; turn++ {
		sent := msgs[:2*turn] // ends with the user's turn
		before := len(compressSteps())
		for range 3 { // a new turn, then two follow-ups sending the same
			if _, err := wrapped.GenerateContent(ctx, sent); err != nil {
				t.Fatal(err)
			}
		}
		steps := compressSteps()
		_, want := memory.Compress(sent, 1000, traceCardOf(rec))
		if want.Dropped == nil && want.Elided == nil && !want.OverBudget {
			if len(steps) != before {
				t.Fatalf("turn %d: nothing compressed, yet %d steps recorded", turn, len(steps)-before)
			}
			continue
		}
		if len(steps) != before+1 {
			t.Fatalf("turn %d: %d compress steps recorded by three calls, want 1", turn, len(steps)-before)
		}
		s := steps[len(steps)-1]
		var got memory.CompressReport
		if err := json.Unmarshal([]byte(s.Result), &got); err != nil {
			t.Fatalf("turn %d: %v", turn, err)
		}
		if got.Kept+got.Dropped.Len() != got.Messages || got.Messages != len(sent) || got.TokensAfter != want.TokensAfter ||
			got.Dropped.Len() != want.Dropped.Len() || len(got.Dropped) != len(want.Dropped) {
			t.Fatalf("turn %d: recorded %s, want %+v", turn, s.Result, want)
		}
		sizes[turn] = [2]int{len(got.Dropped) + len(got.Elided) + len(got.Pinned), len(s.Result)}
	}
	// The numbers grow by a digit; their count may not.
	if sizes[100][0] == 0 || sizes[400][0] > sizes[100][0]+2 {
		t.Errorf("a compress step lists %d runs and indexes at turn 100, %d at turn 400: it grows with the conversation", sizes[100][0], sizes[400][0])
	}
	t.Logf("compress step: %d runs and indexes, %d bytes at turn 100; %d, %d bytes at turn 400", sizes[100][0], sizes[100][1], sizes[400][0], sizes[400][1])
}

// traceCardOf is the card the guard keeps on rec's trace.
func traceCardOf(rec *trace.Recorder) *memory.Card {
	var c *memory.Card
	rec.View(func(t *trace.Trace) { c = memory.CardOf(t) })
	return c
}
