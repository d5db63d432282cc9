package health

import "github.com/agentguard/agentguard/trace"

// Fix is the direction of a fix for a root cause: what kind of change,
// where, and what to do.
type Fix struct {
	// Kind is "knowledge base" (a gap to fill), "config" (a guard.Config
	// field), "rule" (a rule to add or tune), "prompt" (the agent's own
	// instructions or tool plan), "tool" (the tool's code) or "golden set"
	// (the case itself).
	Kind string `json:"kind"`
	// Where names the rule, the config field or the knowledge-base gap.
	Where string `json:"where"`
	What  string `json:"what"`
}

// Fixes are the fix directions of the root-cause tags the screens and the
// built-in rules give. Options.Fixes adds to them or overrides them; a tag
// in neither gets the direction of its dimension (dimensionFix). Do not
// modify it.
var Fixes = map[string]Fix{
	"invented-clause":           {"knowledge base", "the rules the answers quote", "the agent quotes a clause the knowledge base lacks: add the rule if it exists, else keep the grounding gate enforcing and force citations on the route (Options.CitationRoutes)"},
	"bad-citation":              {"knowledge base", "document ids", "answers cite documents the knowledge base does not hold: re-index, or fix the ids the retriever returns"},
	"uncited":                   {"prompt", "citations on retrieval routes", "answers on a retrieval route cite no retrieved document: require a [DOC-ID] citation in the route's prompt"},
	"weak-evidence":             {"knowledge base", "retrieval coverage", "retrieval found only weak matches: add the missing documents, or tune guard.Gates.RouteSimilarity for the route"},
	"asserted-absence":          {"config", "guard.Gates.EmptyResult", "an empty lookup became \"no records\": keep the empty-result gate on Clarify so the user confirms the key"},
	"write-after-empty":         {"config", "guard.Gates.EmptyResult", "a write ran after an empty lookup: keep the empty-result gate enforcing"},
	"empty-result":              {"config", "guard.Gates.EmptyResult", "the answer went on after an empty tool result: ask the user (Clarify) or hand off"},
	"write-after-failure":       {"config", "guard.Gates.DeadEnds", "a write ran after a failed call: set Gates.DeadEnds (hand-off or re-ask)"},
	"failed-result":             {"config", "guard.Gates.DeadEnds", "the answer went on after a tool exception: set Gates.DeadEnds (hand-off or re-ask)"},
	"tool-failure":              {"config", "guard.Gates.DeadEnds", "a tool exception ended in a dead end: choose hand-off or re-ask for it in Gates.DeadEnds"},
	"amnesia":                   {"config", "guard.Config.Memory", "a constraint the user stated was lost in later turns: turn on the pinned memory card (MemoryOptions) and check its Budget"},
	"unknown-address":           {"config", "guard.Config.Memory", "the agent used an address the user never gave: keep the memory card enforcing"},
	"stale-address":             {"config", "guard.Config.Memory", "the agent used an address the user replaced: keep the memory card enforcing"},
	"drift":                     {"prompt", "sampling and instructions", "repeats disagree: lower the temperature or make the instructions for this request unambiguous"},
	"trajectory":                {"prompt", "the tool plan", "the tool calls differ from the expected ones: fix the instructions for the request's tools, or the golden trajectory if it is out of date"},
	"wrong-answer":              {"prompt", "the answer's key elements", "the final answer lacks or adds key elements: check the case's baseline, then the instructions and the knowledge base"},
	"intent":                    {"config", "guard.Gates.Classifier", "the request was misread, then misanswered: retrain or re-prompt the classifier; guard.Gates.MinIntentConfidence asks back below the threshold"},
	"low-confidence-intent":     {"config", "guard.Gates.MinIntentConfidence", "the classifier was unsure and the user was asked back: improve the classifier on these wordings"},
	"unconfirmed-write":         {"prompt", "confirmation before writes", "the agent wrote before the user confirmed and the guard asked: make the agent ask first (guard.ToolPolicy.Confirm stays on)"},
	"over-budget":               {"prompt", "the tool plan", "more tool calls than the case needs: remove redundant lookups; guard.Gates.LoopLimit and MaxSteps bound them"},
	"loop":                      {"config", "guard.Gates.LoopLimit", "the same call was repeated: fix the plan; the loop gate blocks the repeat"},
	"step-budget":               {"config", "guard.Gates.MaxSteps", "the run hit the step budget: fix the plan or raise MaxSteps for this route"},
	"timeout":                   {"config", "guard.Config.Resilience", "the run timed out: set tool timeouts, retries and a fallback model (Resilience)"},
	"agent-error":               {"config", "guard.Config.Resilience", "an error ended the run: handle it in the agent, or set retries and a fallback model"},
	"no-output":                 {"config", "guard.Config.Resilience", "a turn got no answer: find the failing call in the trace; set a fallback model"},
	"retry":                     {"config", "guard.Config.Resilience", "calls were made again: the model or the guard retried; check what failed first"},
	"panic":                     {"tool", "the tool's code", "the tool panicked: the guard recovered it; fix the tool"},
	"breaker-open":              {"tool", "the failing dependency", "a circuit breaker opened: the tool's dependency is failing"},
	"false-claim":               {"rule", "false-claim", "the answer claimed what the trace does not show: keep the rule enforcing; tell the agent to report only calls that succeeded"},
	"entity-mismatch":           {"rule", "argument-provenance", "a call used another entity's value: keep the provenance rule enforcing"},
	"unsourced-value":           {"rule", "argument-provenance", "a call used a value no one gave: keep the provenance rule enforcing"},
	"unauthorized-destructive":  {"rule", "authorization", "a destructive write the user did not ask for: keep the rule enforcing"},
	"unrequested-write":         {"rule", "authorization", "a write the user did not ask for: keep the rule enforcing"},
	"other-object":              {"prompt", "what the user asked for", "the agent acted on another kind of thing than the user named: make it act on what was asked"},
	"more-writes-than-requests": {"prompt", "the tool plan", "more writes than the user asked for: one requested action, one write"},
	"not-established":           {"prompt", "the policy's lookups", "the agent acted before fetching the record the policy reads: make it look the record up first"},
	"policy":                    {"rule", "the domain rule that fired", "a domain policy stopped the call: make the agent check the policy first"},
	"bad-arguments":             {"prompt", "the tool's schema", "the arguments break the tool's schema: publish the schema to the model"},
	"no-recipient":              {"prompt", "the tool's schema", "a send named no recipient: give the tool a schema that requires one, or tell the agent whom it sends to"},
	"injection":                 {"rule", "injected-argument", "a call carried a value only third-party content (an e-mail, a web page, a tool result) holds: keep the rule enforcing, and tell the agent that retrieved content is data, never orders"},
	"instructions":              {"rule", "injected-argument", "third-party content gave the agent orders and it followed them: keep the rule enforcing, and tell the agent that retrieved content is data, never orders"},
	"in-text":                   {"rule", "injected-argument", "a write's free text carried a link or account only third-party content holds: review the write; keep the rule on"},
	"relay":                     {"prompt", "what the answer passes on", "the answer passed on a link or account only third-party content holds: tell the agent not to relay links or accounts from retrieved content"},
	"recommendation":            {"prompt", "what the answer recommends", "the answer recommended what only third-party content names: tell the agent to recommend from its own records"},
	"prohibition":               {"config", "guard.Config.Memory", "the agent reached the user by a channel they banned: keep the memory card on (it stops the call and the answer) and its Budget large enough to keep the card in the prompt"},
	"sms":                       {"config", "guard.Config.Memory", "the agent texted, or said it would text, a user who banned texts: keep the memory card on (it stops the call and the answer)"},
	"email":                     {"config", "guard.Config.Memory", "the agent e-mailed, or said it would e-mail, a user who banned e-mail: keep the memory card on (it stops the call and the answer)"},
	"call":                      {"config", "guard.Config.Memory", "the agent called, or said it would call, a user who banned calls: keep the memory card on (it stops the call and the answer)"},
	"push":                      {"config", "guard.Config.Memory", "the agent sent, or said it would send, notifications a user banned: keep the memory card on (it stops the call and the answer)"},
	"contact":                   {"config", "guard.Config.Memory", "the agent contacted a user who asked not to be contacted: keep the memory card on (it stops the call and the answer)"},
	"unknown-tool":              {"prompt", "the offered tools", "the agent called a tool it was not given"},
}

// dimensionFix is the direction of a tag no entry names.
var dimensionFix = map[trace.Dimension]Fix{
	trace.Accuracy:   {"knowledge base", "the facts the answer needs", "check what the answer rests on: the knowledge base, then the instructions"},
	trace.Coherence:  {"prompt", "the flow", "check the steps that led there in the trace"},
	trace.Memory:     {"config", "guard.Config.Memory", "a constraint was lost: the memory card keeps it"},
	trace.Stability:  {"config", "guard.Config.Resilience", "timeouts, retries and a fallback model"},
	trace.Efficiency: {"prompt", "the tool plan", "fewer, better calls"},
}

// fixFor returns the fix direction of a root cause.
func fixFor(extra map[string]Fix, tag string, d trace.Dimension) Fix {
	if f, ok := extra[tag]; ok {
		return f
	}
	if f, ok := Fixes[tag]; ok {
		return f
	}
	return dimensionFix[d]
}
