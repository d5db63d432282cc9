// Package gates holds the gates of an agent's flow, the rules that stop a
// step whose footing is missing: intent-confidence (a misread or unsure
// intent), empty-result (an answer or a write that goes on after a lookup
// found nothing), retrieval-similarity (no or weak retrieval evidence),
// grounding (a citation or clause number no retrieved document holds),
// value-invariant (a negative amount, an invalid date, a non-JSON answer on
// a JSON route) and the dead-end rule (tool-failure: a turn that ends
// where a failed call left it). Each reads the guard's tools and lexicon
// (rulekit.Tools) and keeps what it derives in the trace's memo, so its
// cost does not grow with the session.
package gates
