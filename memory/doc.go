// Package memory keeps the pinned memory card: the user's constraints
// (addresses, dates, prohibitions, preferences) that must survive context
// compression and are checked before the agent acts.
//
// It sits beside trace, below guard: guard consults the card on every model
// call and tool call, and memory reports its events as trace steps of kind
// trace.KindMemory. It imports neither guard nor ledger.
package memory
