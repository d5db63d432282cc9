package guard_test

import (
	"testing"

	"github.com/agentguard/agentguard/guard"
)

// BenchmarkGuardedStepInline is BenchmarkGuardedStep with the tool declared
// context-honouring: it runs on the caller's goroutine, the path every tool
// took before calls moved onto the guard's workers. It is the baseline the
// worker hand-off is measured against.
func BenchmarkGuardedStepInline(b *testing.B) {
	g := guard.New(guard.Config{Tools: guard.ToolPolicies{"query_order": {HonoursContext: true}}})
	benchStep(b, g, func(i int) string { return orderArgs[i%2] })
}
