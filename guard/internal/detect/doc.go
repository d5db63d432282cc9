// Package detect holds the text and result detectors that the guard's rules
// and its offline evaluators (guard/health, guard/conteval) share: cited
// document ids, clause numbers, assertions of absence, empty results,
// retrieval documents, token usage and write verbs in tool names. The
// words they look for come from a compiled lexicon (package trace/lexicon):
// the caller's, or Default.
//
// It is internal so that these helpers are not part of guard's public API;
// every function is pure and safe for concurrent use.
package detect
