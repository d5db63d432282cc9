// Package rules names the guard's rules: the name each files its findings
// under (trace.Finding.Rule), which is also the name guard.Config.Disable,
// a policy file's disable list and the ledger's lessons know it by.
//
// The rules themselves are configured through guard.Config, in one place
// per setting (guard.Config.Gates, Tools, Memory); this package only names
// them. Builtin lists the rules a default guard runs, in the order it runs
// them.
//
// # What each judges
//
// Tool calls, before they run:
//
//	tool-allow-list       a tool the agent was not given (block)
//	tool-arguments        arguments that break the tool's JSON schema (retry); a send with no
//	                      schema whose arguments name no recipient (warning)
//	loop                  the n-th identical call in a row (block)
//	max-steps             more tool calls in one trace than allowed (handoff)
//	argument-provenance   an id from nowhere; content about one entity sent to another (block)
//	injected-argument     an identifying argument only third-party content holds (block)
//	confirmation          a write that needs the user's explicit yes first (clarify)
//	write-authorization   a destructive write the user did not ask for (block)
//	memory-prohibition    a call that breaks a constraint on the memory card ("don't text me")
//	memory-stale-address  an address that is not the card's current one (clarify)
//	memory-time-range     a time outside the window the user gave (clarify)
//
// Model steps, before the answer reaches the user:
//
//	intent-confidence     a misread or unsure intent (clarify)
//	empty-result          an answer or a write that goes on after an empty lookup (clarify)
//	retrieval-similarity  no or weak retrieval evidence (refuse)
//	grounding             a citation or clause number no retrieved document holds (retry)
//	value-invariant       a negative amount, an invalid date, a non-JSON answer on a JSON route (retry)
//	false-claim           an answer that says an action happened when the trace shows it did not (retry)
//	untrusted-relay       an answer that passes on a link or account only third-party content holds (warning)
//	memory-answer         an answer that reaches the user by a channel the card prohibits (retry; an offer, warning)
//	                      or names an address the user replaced (clarify)
//
// What the runtime records of a failure, whatever the rules say:
//
//	tool-error, model-error, malformed-output, circuit-breaker, max-iterations
//
// Off by default: tool-failure (a turn that ends in a dead end after a
// failed call; guard.Gates.DeadEnds) and policy-checks (the CEL checks of
// a policy file; package guard/policy).
package rules
