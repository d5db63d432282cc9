package guard

import (
	"encoding/json"
	"strings"
	"time"
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
	// the verb that starts the name (see StateChanging).
	Effect Effect `json:"effect,omitempty"`
	// Untrusted marks tools whose results carry third-party content: web
	// pages, files, e-mails, messages. Identifying values that reach a
	// state-changing call only through such results are flagged as injected.
	Untrusted bool `json:"untrusted,omitempty"`
	// Confirm requires the user's explicit confirmation, in the turn before
	// the call, of a state-changing call; without it the verdict is Clarify.
	Confirm bool `json:"confirm,omitempty"`
	// Retrieval marks tools whose results are documents: a JSON array of
	// objects with an id ("id", "doc_id", "document_id", "source") and a
	// score ("score", "similarity", "relevance"). Their ids and scores feed
	// the similarity and grounding gates.
	Retrieval bool `json:"retrieval,omitempty"`
	// IsEmpty reports whether a result counts as empty for the empty-result
	// gate. Nil means IsEmptyResult.
	IsEmpty func(result string) bool `json:"-"`
	// Timeout bounds one call. Zero means Resilience.ToolTimeout.
	Timeout time.Duration `json:"timeout,omitempty"`
	// Isolate runs every call on a goroutine of its own, abandoned at the
	// timeout, for a tool that may ignore its context (see
	// Resilience.ToolTimeout).
	Isolate bool `json:"isolate,omitempty"`
	// Retries is how often a failed call is tried again, with backoff.
	// Zero means Resilience.ToolRetries; negative means never.
	Retries int `json:"retries,omitempty"`
	// Schema is the JSON schema of the tool's arguments, for tools that do
	// not publish one (see SchemaTool).
	Schema json.RawMessage `json:"schema,omitempty"`
}

var writeVerbs = []string{
	"add", "append", "approve", "assign", "book", "buy", "cancel", "change", "charge", "close", "create",
	"delete", "deposit", "disable", "edit", "enable", "exchange", "grant", "insert", "invite", "issue", "modify",
	"move", "order", "pay", "post", "publish", "purchase", "refund", "remove", "rename", "reply", "reschedule",
	"reserve", "reset", "return", "revoke", "schedule", "send", "set", "share", "submit", "toggle", "transfer",
	"update", "upload", "upsert", "withdraw", "write",
}

// StateChanging reports whether a tool changes state: its policy says so, or,
// with EffectAuto, its name starts with a write verb (send_, update_,
// cancel_, book_, transfer_, delete_, submit_, pay_, ... in snake, kebab or
// camel case).
func StateChanging(name string, p ToolPolicy) bool {
	switch p.Effect {
	case EffectRead:
		return false
	case EffectWrite:
		return true
	}
	return isWriteVerb(name)
}

// writeVerbSet is writeVerbs as a set.
var writeVerbSet = func() map[string]bool {
	m := make(map[string]bool, len(writeVerbs))
	for _, v := range writeVerbs {
		m[v] = true
	}
	return m
}()

// isWriteVerb reports whether verbOf(name) is a write verb, without
// allocating: it runs on every tool call.
func isWriteVerb(name string) bool {
	// The verb ends at the first separator, or else at the first upper-case
	// letter after the first byte.
	end, upper := len(name), len(name)
	for i := 0; i < len(name); i++ {
		c := name[i]
		if c == '_' || c == '-' || c == '.' || c == ' ' {
			end = i
			break
		}
		if i > 0 && upper == len(name) && c >= 'A' && c <= 'Z' {
			upper = i
		}
	}
	if end == len(name) {
		end = upper
	}
	var buf [16]byte
	if end > len(buf) {
		return false // longer than any write verb
	}
	for i := 0; i < end; i++ {
		c := name[i]
		if c >= 0x80 {
			return writeVerbSet[verbOf(name)] // non-ASCII: Unicode lower-casing
		}
		if c >= 'A' && c <= 'Z' {
			c += 'a' - 'A'
		}
		buf[i] = c
	}
	return writeVerbSet[string(buf[:end])]
}

// verbOf returns the verb a tool name starts with, in lower case:
// "send" for send_email, sendEmail and send-email.
func verbOf(name string) string {
	verb := strings.ToLower(name)
	if i := strings.IndexAny(verb, "_-. "); i >= 0 {
		return verb[:i]
	}
	for i, r := range name {
		if i > 0 && r >= 'A' && r <= 'Z' {
			return strings.ToLower(name[:i])
		}
	}
	return verb
}

// IsEmptyResult is the default emptiness test of the empty-result gate: a
// blank result, a JSON null, empty array or empty object, an object whose
// every value is one of those, or a plain "no results" / "not found" /
// "0 rows" / "无结果" / "未找到" / "没有找到" reply.
func IsEmptyResult(result string) bool {
	s := strings.TrimSpace(result)
	if s == "" {
		return true
	}
	var v any
	if json.Unmarshal([]byte(s), &v) == nil {
		return emptyJSON(v, 0)
	}
	l := strings.ToLower(strings.TrimRight(s, ".!。！ "))
	switch l {
	case "none", "null", "nil", "no results", "no result", "not found", "no records", "no record found", "no records found", "0 rows", "0 results",
		"无结果", "未找到", "没有找到", "查无结果", "无记录", "没有记录":
		return true
	}
	return false
}

func emptyJSON(v any, depth int) bool {
	switch x := v.(type) {
	case nil:
		return true
	case string:
		return strings.TrimSpace(x) == "" && depth == 0
	case []any:
		return len(x) == 0
	case map[string]any:
		if depth > 0 {
			return len(x) == 0
		}
		for _, e := range x {
			if !emptyJSON(e, depth+1) {
				return false
			}
		}
		return true
	}
	return false
}

// Documents reads document ids and similarity scores from a retrieval
// result (see ToolPolicy.Retrieval). A score that is missing is NaN-free:
// it is reported as -1, and such documents do not count for the similarity
// gate.
func Documents(result string) (ids []string, scores []float64) {
	var docs []map[string]any
	if json.Unmarshal([]byte(result), &docs) != nil {
		var wrapped map[string][]map[string]any
		if json.Unmarshal([]byte(result), &wrapped) != nil {
			return nil, nil
		}
		for _, k := range []string{"documents", "docs", "results", "hits", "items"} {
			if d, ok := wrapped[k]; ok {
				docs = d
				break
			}
		}
	}
	for _, d := range docs {
		id := firstString(d, "id", "doc_id", "document_id", "source")
		if id == "" {
			if md, ok := d["metadata"].(map[string]any); ok {
				id = firstString(md, "id", "doc_id", "source")
			}
		}
		score := -1.0
		for _, k := range []string{"score", "similarity", "relevance", "relevance_score"} {
			if f, ok := d[k].(float64); ok {
				score = f
				break
			}
		}
		ids = append(ids, id)
		scores = append(scores, score)
	}
	return ids, scores
}

func firstString(m map[string]any, keys ...string) string {
	for _, k := range keys {
		switch v := m[k].(type) {
		case string:
			if v != "" {
				return v
			}
		case float64:
			b, _ := json.Marshal(v)
			return string(b)
		}
	}
	return ""
}
