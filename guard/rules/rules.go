package rules

import "github.com/agentguard/agentguard/memory"

// The built-in rules, by the name of their findings.
const (
	AllowList     = "tool-allow-list"
	Arguments     = "tool-arguments"
	Loop          = "loop"
	MaxSteps      = "max-steps"
	Intent        = "intent-confidence"
	EmptyResult   = "empty-result"
	Similarity    = "retrieval-similarity"
	Grounding     = "grounding"
	Invariant     = "value-invariant"
	Provenance    = "argument-provenance"
	Injection     = "injected-argument"
	Confirmation  = "confirmation"
	Authorization = "write-authorization"
	FalseClaim    = "false-claim"
	Relay         = "untrusted-relay"
	// The memory card's findings (package memory).
	MemoryProhibition  = memory.RuleProhibition
	MemoryStaleAddress = memory.RuleStaleAddress
	MemoryTimeRange    = memory.RuleTimeRange
	// MemoryAnswer: an answer that reaches the user by a prohibited channel
	// or names an address the user replaced.
	MemoryAnswer = "memory-answer"
)

// Rules that are off unless configured.
const (
	// ToolFailure: a turn that ends in a dead end after a failed tool call
	// (guard.Gates.DeadEnds).
	ToolFailure = "tool-failure"
	// PolicyChecks: the domain checks of a policy file (package
	// guard/policy), filed under each check's name or this one.
	PolicyChecks = "policy-checks"
)

// What the runtime records of a failure: a tool that timed out or
// panicked, a model that failed, output the guard repaired, a call an open
// circuit breaker refused, a run with no final answer within its budget,
// and (found by Evaluate in a recorded trace) a run that ended on a failed
// call without answering the user.
const (
	ToolError  = "tool-error"
	ModelError = "model-error"
	Malformed  = "malformed-output"
	Breaker    = "circuit-breaker"
	Iterations = "max-iterations"
	Unanswered = "unanswered"
)

// Builtin returns the names of the rules a default guard runs, in the
// order it runs them.
func Builtin() []string {
	return []string{AllowList, Arguments, Loop, MaxSteps, Intent, EmptyResult, Similarity, Grounding, Invariant,
		Provenance, Injection, Confirmation, Authorization, FalseClaim, Relay,
		MemoryProhibition, MemoryStaleAddress, MemoryTimeRange, MemoryAnswer}
}

// Runtime returns the names of what the runtime records of failures.
func Runtime() []string {
	return []string{ToolError, ModelError, Malformed, Breaker, Iterations, Unanswered}
}
