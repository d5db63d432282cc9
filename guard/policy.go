package guard

import (
	"encoding/json"
	"time"

	"github.com/agentguard/agentguard/guard/internal/detect"
	"github.com/agentguard/agentguard/guard/internal/rulekit"
	"github.com/agentguard/agentguard/trace/lexicon"
)

// Effect says whether a tool changes the world.
type Effect string

// Effects. The zero value infers the effect from the tool's name.
const (
	EffectAuto  Effect = ""
	EffectRead  Effect = "read"
	EffectWrite Effect = "write"
)

// ToolPolicy annotates one tool. The zero value means: effect inferred from
// the name, results trusted, no confirmation, not a retriever, default
// emptiness test, the guard's timeout and retries.
type ToolPolicy struct {
	// Effect says whether the tool changes state; EffectAuto infers it from
	// the verb that starts the name, one of Config.Lexicon's WriteVerbs.
	Effect Effect `json:"effect,omitempty"`
	// Untrusted marks tools whose results carry third-party content: web
	// pages, files, e-mails, messages. Identifying values that reach a
	// state-changing call only through such results are flagged as injected.
	Untrusted bool `json:"untrusted,omitempty"`
	// TrustedFields and UntrustedFields set trust per result field, by key:
	// the ids and handles of a listing are records the agent may act on,
	// its text fields third-party content. Without them, a field is
	// content when it reads as prose (sentences, a message body, a page)
	// and a record otherwise.
	TrustedFields   []string `json:"trusted_fields,omitempty"`
	UntrustedFields []string `json:"untrusted_fields,omitempty"`
	// Channel names how the tool reaches the world: one of the channels of
	// Config.Lexicon's Claims ("sms", "email", "call", "push", "refund",
	// "handoff", ...) or of its memory card's contact channels. The memory card's channel bans
	// stop the tool's calls ("don't text me" stops an "sms" tool), and a
	// claim in an answer about that channel is checked against its calls.
	// Empty means the channel is read from the tool's name, description
	// and argument keys.
	Channel string `json:"channel,omitempty"`
	// Confirm requires the user's explicit confirmation, in the turn before
	// the call, of a state-changing call; without it the verdict is Clarify.
	Confirm bool `json:"confirm,omitempty"`
	// Retrieval marks tools whose results are documents: a JSON array of
	// objects with an id ("id", "doc_id", "document_id", "source") and a
	// score ("score", "similarity", "relevance"). Their ids and scores feed
	// the similarity and grounding gates.
	Retrieval bool `json:"retrieval,omitempty"`
	// EmptyOK says an empty result is the tool's normal answer (a "think"
	// or "note" tool that returns nothing): the empty-result gate never
	// counts it as a lookup that found nothing.
	EmptyOK bool `json:"empty_ok,omitempty"`
	// IsEmpty reports whether a result counts as empty for the empty-result
	// gate. Nil means blank, JSON null or empty, or one of Config.Lexicon's
	// EmptyResults ("no results", "无结果"). EmptyOK overrides it.
	IsEmpty func(result string) bool `json:"-"`
	// Timeout bounds one call. Zero means Resilience.ToolTimeout.
	Timeout time.Duration `json:"timeout,omitempty"`
	// HonoursContext declares that the tool returns by its context's
	// deadline: its calls run on the caller's goroutine, which saves the
	// hand-off to a worker (see Resilience.ToolTimeout). A tool that
	// overruns its deadline anyway runs on the workers from then on.
	HonoursContext bool `json:"honours_context,omitempty"`
	// Retries is how often a failed call is tried again, with backoff.
	// Zero means Resilience.ToolRetries; negative means never.
	Retries int `json:"retries,omitempty"`
	// Schema is the JSON schema of the tool's arguments, for tools that do
	// not publish one (see SchemaTool).
	Schema json.RawMessage `json:"schema,omitempty"`
}

// toolsOf returns the tools of policies as the rules see them, read with
// the lexicon w.
func toolsOf(w *lexicon.Compiled, policies map[string]ToolPolicy) *rulekit.Tools {
	listed := make(map[string]rulekit.Tool, len(policies))
	for name, p := range policies {
		listed[name] = rulekit.Tool{
			Writes: stateChangingIn(w, name, p), Untrusted: p.Untrusted,
			TrustedFields: p.TrustedFields, UntrustedFields: p.UntrustedFields,
			Channel: p.Channel, Confirm: p.Confirm, Retrieval: p.Retrieval, IsEmpty: p.IsEmpty,
		}
		if p.EmptyOK {
			t := listed[name]
			t.IsEmpty = neverEmpty
			listed[name] = t
		}
	}
	return rulekit.NewTools(w, listed)
}

// stateChanging is stateChangingIn with the default lexicon, for rules not
// yet given the guard's.
func stateChanging(name string, p ToolPolicy) bool {
	return stateChangingIn(detect.Default(), name, p)
}

// stateChangingIn reports whether a tool changes state: its policy says so,
// or, with EffectAuto, its name starts with one of w's write verbs (send_,
// update_, cancel_, book_, transfer_, delete_, submit_, pay_, ... in snake,
// kebab or camel case).
func stateChangingIn(w *lexicon.Compiled, name string, p ToolPolicy) bool {
	switch p.Effect {
	case EffectRead:
		return false
	case EffectWrite:
		return true
	}
	return detect.IsWriteVerb(w, name)
}

// neverEmpty is the emptiness test of a tool whose empty result is its
// normal answer.
func neverEmpty(string) bool { return false }
