// Package claims holds the false-claim rule: an answer that tells the user
// an action happened when the trace shows it did not — the call failed,
// was blocked, returned a result that says so, was proposed and never
// ran, or was never made. What did not happen comes from the steps'
// structure (effects.go); what an answer claims from the guard's lexicon
// (lexicon.Claims: each kind of effect's nouns and verbs, and the markers
// of completion, negation and hedging), read clause by clause; who a
// claim is told of, and what the user asked for, from the same lexicon
// (voice.go). A claim of a call that did not happen is an error; a claim
// of a tool never called is one only in the first person, else a warning
// when the user asked for it.
package claims
