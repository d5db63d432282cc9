package guard_test

import (
	"testing"

	"github.com/agentguard/agentguard/guard"
	"github.com/agentguard/agentguard/guard/internal/testkit"
)

// BenchmarkGuardedStepInline is BenchmarkGuardedStep with the tool declared
// context-honouring: it runs on the caller's goroutine, the path every tool
// took before calls moved onto the guard's workers. It is the baseline the
// worker hand-off is measured against.
func BenchmarkGuardedStepInline(b *testing.B) {
	g := guard.New(guard.Config{Tools: map[string]guard.ToolPolicy{"query_order": {HonoursContext: true}}})
	testkit.BenchStep(b, g, func(i int) string { return testkit.OrderArgs[i%2] })
}

// BenchmarkHandOffFloor is the least a call on another goroutine can cost:
// one job handed to a goroutine parked on a channel and its answer waited
// for on another, with nothing else done. Any design that keeps the
// no-hang guarantee for a tool that ignores its context runs the tool off
// the caller's goroutine, so BenchmarkGuardedStep costs at least this more
// than BenchmarkGuardedStepInline.
func BenchmarkHandOffFloor(b *testing.B) {
	jobs, done := make(chan struct{}, 1), make(chan struct{}, 1)
	go func() {
		for range jobs {
			done <- struct{}{}
		}
	}()
	defer close(jobs)
	b.ReportAllocs()
	defer testkit.ReportCPU(b, testkit.ProcessCPU())
	for b.Loop() {
		jobs <- struct{}{}
		<-done
	}
}
