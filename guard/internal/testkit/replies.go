package testkit

import "github.com/agentguard/agentguard/trace/lexicon"

// The default lexicon's English refusal and handoff message: what a guard
// answers in English when a rule refuses or hands off.
var (
	Refusal = lexicon.Default().Replies[lexicon.EN].Refusal
	Handoff = lexicon.Default().Replies[lexicon.EN].Handoff
)
