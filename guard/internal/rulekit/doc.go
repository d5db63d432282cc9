// Package rulekit is what the guard's built-in rules share: the tools of
// one guard as the rules see them (Tools: which tool writes, which result
// is third-party content, read with the guard's lexicon), the plumbing by
// which the guard runs a rule only where it can say something (Scoped,
// HotRule, Indexer, Namer), the per-trace scans that keep a rule's cost
// flat in the length of a session (TurnScan, Hot), and small readers of
// steps, arguments and values.
//
// It is internal: users configure rules through guard.Config and write
// their own with guard.NewRule. The rule families live in packages of
// their own beside it (calls, gates, origins, authz, claims), each a pure
// function of the trace so far and a proposed step.
package rulekit
