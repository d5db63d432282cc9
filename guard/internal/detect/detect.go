package detect

import (
	"encoding/json"
	"regexp"
	"slices"
	"strings"
	"sync"

	"github.com/agentguard/agentguard/trace/lexicon"
	"github.com/agentguard/agentguard/trace/textnorm"
	"github.com/go-json-experiment/json/jsontext"
)

// Default is lexicon.Default compiled, shared by every guard and evaluator
// that is given no lexicon of its own.
var Default = sync.OnceValue(func() *lexicon.Compiled { return lexicon.Default().Compiled() })

var bracketCite = regexp.MustCompile(`\[([A-Za-z][A-Za-z0-9_.:#/-]*[0-9][A-Za-z0-9_.:#/-]*)\]`)

// CitedIDs returns the bracketed document ids a text cites ("[KB-RET-02]"),
// in order, once each.
func CitedIDs(text string) []string {
	text = textnorm.Fold(text) // 【KB-1】, full-width brackets and digits
	var out []string
	for _, m := range bracketCite.FindAllStringSubmatch(text, -1) {
		if !slices.Contains(out, m[1]) {
			out = append(out, m[1])
		}
	}
	return out
}

// ClauseRef is a clause, section, article or rule number quoted in a text.
type ClauseRef struct {
	Number string // "7.3"
	Text   string // the words that quote it: "clause 7.3", "第5条"
}

// ClauseRefs returns the clause numbers a text quotes (w.ClauseRefs), in
// order.
func ClauseRefs(w *lexicon.Compiled, text string) []ClauseRef {
	text = textnorm.Clauses(text) // 第七条, Section VII, Sec. 7.3, сlause, zero-width spaces
	if !w.MayMatch(w.ClauseRefs, text) {
		return nil // no clause word: most answers
	}
	var out []ClauseRef
	for _, m := range w.ClauseRefs.FindAllStringSubmatch(text, -1) {
		out = append(out, ClauseRef{Number: lexicon.Group(w.ClauseRefs, m, "num"), Text: strings.TrimSpace(m[0])})
	}
	return out
}

// AssertsAbsence reports whether an answer asserts there is nothing (w.Absence):
// "no records", "could not find any", "没有符合条件的记录".
func AssertsAbsence(w *lexicon.Compiled, text string) bool {
	return w.MayMatch(w.Absence, text) && w.Absence.MatchString(text)
}

// IsWriteVerb reports whether VerbOf(name) is one of w's write verbs,
// without allocating: it runs on every tool call.
func IsWriteVerb(w *lexicon.Compiled, name string) bool {
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
			return w.WriteVerbs[VerbOf(name)] // non-ASCII: Unicode lower-casing
		}
		if c >= 'A' && c <= 'Z' {
			c += 'a' - 'A'
		}
		buf[i] = c
	}
	return w.WriteVerbs[string(buf[:end])]
}

// VerbOf returns the verb a tool name starts with, in lower case:
// "send" for send_email, sendEmail and send-email.
func VerbOf(name string) string {
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
// every value is one of those, or a plain reply that w.EmptyResults lists:
// "no results", "not found", "0 rows", "无结果", "未找到".
func IsEmptyResult(w *lexicon.Compiled, result string) bool {
	s := strings.TrimSpace(result)
	if s == "" {
		return true
	}
	if s[0] == '{' || s[0] == '[' {
		if empty, ok := emptyJSONPrefix(s); ok {
			return empty
		}
	}
	var v any
	if json.Unmarshal([]byte(s), &v) == nil {
		return emptyJSON(v, 0)
	}
	return w.EmptyResults[strings.ToLower(strings.TrimRight(s, ".!。！ "))]
}

// emptyJSONPrefix decides emptyJSON for a JSON object or array from as
// few tokens as it takes: a result with records is known non-empty at its
// first value, without decoding the rest. ok is false when the tokens
// read are not JSON, or when the answer is "empty", which only the whole
// (valid) text can confirm.
func emptyJSONPrefix(s string) (empty, ok bool) {
	ReadJSON(s, func(d *jsontext.Decoder) { empty, ok = emptyPrefix(d) })
	return empty, ok
}

// emptyPrefix is emptyJSONPrefix on d, reading s.
func emptyPrefix(d *jsontext.Decoder) (empty, ok bool) {
	open, err := d.ReadToken()
	if err != nil {
		return false, false
	}
	if open.Kind() == '[' {
		if d.PeekKind() == ']' {
			return false, false // "[]": confirm on the whole text
		}
		return false, true
	}
	for {
		if d.PeekKind() != '"' { // '}', or not JSON
			return false, false
		}
		if _, err := d.ReadToken(); err != nil { // the name
			return false, false
		}
		switch d.PeekKind() {
		case 'n':
			if _, err := d.ReadToken(); err != nil {
				return false, false
			}
		case '{', '[':
			if _, err := d.ReadToken(); err != nil {
				return false, false
			}
			if k := d.PeekKind(); k != '}' && k != ']' {
				return false, true // a non-empty object or array
			}
			if _, err := d.ReadToken(); err != nil {
				return false, false
			}
		case '"', '0', 't', 'f':
			if _, err := d.ReadToken(); err != nil {
				return false, false
			}
			return false, true // a string, number or boolean: a record says something
		default:
			return false, false
		}
	}
}

// jsonReader is ReadJSON's decoder and its reader, reused.
type jsonReader struct {
	r strings.Reader
	d jsontext.Decoder
}

var jsonReaders = sync.Pool{New: func() any { return new(jsonReader) }}

// ReadJSON hands fn a jsontext decoder over s, reused across calls, that
// reads as encoding/json does: a name repeated in an object is read
// twice, and invalid UTF-8 is read as U+FFFD. fn must not keep it.
func ReadJSON(s string, fn func(d *jsontext.Decoder)) {
	p := jsonReaders.Get().(*jsonReader)
	defer jsonReaders.Put(p)
	p.r.Reset(s)
	p.d.Reset(&p.r, jsontext.AllowDuplicateNames(true), jsontext.AllowInvalidUTF8(true))
	fn(&p.d)
	p.r.Reset("")
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

// Usage reads token counts from a choice's GenerationInfo, whichever
// provider wrote it: PromptTokens/CompletionTokens (OpenAI, Ollama, Google)
// or InputTokens/OutputTokens (Anthropic, whose input count excludes cache
// reads and writes: they are added back). ok is false when neither is
// there, or when both counts are zero — what clients report when they did
// not count — so that the caller falls back to an estimate.
func Usage(info map[string]any) (in, out int, ok bool) {
	for _, keys := range [][2]string{{"PromptTokens", "CompletionTokens"}, {"InputTokens", "OutputTokens"}, {"prompt_tokens", "completion_tokens"}, {"input_tokens", "output_tokens"}} {
		i, iok := AsInt(info[keys[0]])
		o, ook := AsInt(info[keys[1]])
		if !iok && !ook {
			continue
		}
		if keys[0] == "InputTokens" {
			for _, k := range []string{"CacheCreationInputTokens", "CacheReadInputTokens"} {
				c, _ := AsInt(info[k])
				i += c
			}
		}
		return i, o, i != 0 || o != 0
	}
	return 0, 0, false
}

func AsInt(v any) (int, bool) {
	switch n := v.(type) {
	case int:
		return n, true
	case int32:
		return int(n), true
	case int64:
		return int(n), true
	case float64:
		return int(n), true
	case json.Number:
		i, err := n.Int64()
		return int(i), err == nil
	}
	return 0, false
}
