package rulekit

import (
	"maps"
	"slices"
	"sync"
	"sync/atomic"

	"github.com/agentguard/agentguard/guard/internal/detect"
	"github.com/agentguard/agentguard/trace/lexicon"
)

// Tool is what the built-in rules know of one tool: guard.ToolPolicy,
// resolved against the guard's lexicon.
type Tool struct {
	// Writes says the tool changes state: its policy says so, or, with no
	// effect given, its name starts with one of the lexicon's write verbs.
	Writes bool
	// Untrusted marks every field of its results as third-party content;
	// TrustedFields and UntrustedFields set it per field key.
	Untrusted                      bool
	TrustedFields, UntrustedFields []string
	// Channel is how the tool reaches the world, when its policy names it.
	Channel string
	// Confirm asks the user's explicit yes before a call that writes.
	Confirm bool
	// Retrieval marks tools whose results are documents.
	Retrieval bool
	// IsEmpty tells an empty result; nil means the default test
	// (detect.IsEmptyResult).
	IsEmpty func(result string) bool
}

// maxGuessed bounds the names Tools keeps of tools no policy lists.
const maxGuessed = 256

// Tools is the tools of one guard as the rules see them: those its
// policies list, and any other name a trace holds, classified by the
// lexicon's write verbs. It is safe for concurrent use and never changes
// what it says of a name.
type Tools struct {
	words  *lexicon.Compiled
	listed map[string]Tool
	names  []string // listed, sorted

	// guessed caches Of for names no policy lists: the tools a model
	// invents, up to maxGuessed; past it a name is classified afresh on
	// each call.
	guessed atomic.Pointer[map[string]Tool]
	mu      sync.Mutex
}

// NewTools returns the tools listed, read with the lexicon w. The map is
// the caller's to keep; Tools copies it.
func NewTools(w *lexicon.Compiled, listed map[string]Tool) *Tools {
	ts := &Tools{words: w, listed: maps.Clone(listed)}
	ts.names = slices.Sorted(maps.Keys(ts.listed))
	return ts
}

// Words is the lexicon the tools are read with.
func (ts *Tools) Words() *lexicon.Compiled { return ts.words }

// Listed returns the names of the tools a policy lists, sorted.
func (ts *Tools) Listed() []string { return ts.names }

// IsListed reports whether a policy lists the tool.
func (ts *Tools) IsListed(name string) bool {
	_, ok := ts.listed[name]
	return ok
}

// Of returns what the rules know of the tool named name.
func (ts *Tools) Of(name string) Tool {
	if t, ok := ts.listed[name]; ok {
		return t
	}
	if m := ts.guessed.Load(); m != nil {
		if t, ok := (*m)[name]; ok {
			return t
		}
	}
	t := Tool{Writes: detect.IsWriteVerb(ts.words, name)}
	ts.mu.Lock()
	defer ts.mu.Unlock()
	old := ts.guessed.Load()
	if old != nil && len(*old) >= maxGuessed {
		return t
	}
	m := make(map[string]Tool, 1)
	if old != nil {
		maps.Copy(m, *old)
	}
	m[name] = t
	ts.guessed.Store(&m)
	return t
}

// Writes reports whether the tool named name changes state.
func (ts *Tools) Writes(name string) bool { return ts.Of(name).Writes }

// Channels maps the listed tools whose policy names a channel to it.
func (ts *Tools) Channels() map[string]string {
	var out map[string]string
	for _, name := range ts.names {
		if ch := ts.listed[name].Channel; ch != "" {
			if out == nil {
				out = map[string]string{}
			}
			out[name] = ch
		}
	}
	return out
}
