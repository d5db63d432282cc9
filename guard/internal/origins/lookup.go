package origins

import (
	"github.com/agentguard/agentguard/guard/internal/rulekit"
	"github.com/agentguard/agentguard/trace"
)

// HeldByResult reports whether a tool result of t, other than the one of
// step except, holds v — as a record field or in text — and not only as a
// repeat of its own call's arguments: the tools have seen the thing v
// names. It reads t's origins index, so its cost does not grow with the
// trace.
func HeldByResult(t *trace.Trace, tools *rulekit.Tools, v string, except int) bool {
	for _, o := range indexOf(t, tools).of(v) {
		if (o.kind == fromRecord || o.kind == fromContent) && o.step != except {
			return true
		}
	}
	return false
}
