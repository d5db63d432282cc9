package rulekit

import (
	"encoding/json"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"unicode"
	"unicode/utf8"

	"github.com/agentguard/agentguard/trace"
	"github.com/agentguard/agentguard/trace/lexicon"
)

// SameTurn returns the steps of t recorded since the user's turn.
func SameTurn(t *trace.Trace, turn int) []*trace.Step {
	i := len(t.Steps)
	for i > 0 && t.Steps[i-1].Turn >= turn {
		i--
	}
	return t.Steps[i:]
}

// DisplayName is how the replies r, in lang, name an identifier (an intent
// label, a tool name, an argument key): by r.Names, or else the identifier
// itself, as words when r.Humanize is set. ok is false when id is written
// in another language than lang: "return_item" in Chinese, "退货" in
// English.
func DisplayName(w *lexicon.Compiled, r lexicon.Replies, lang lexicon.Lang, id string) (name string, ok bool) {
	if n, ok := r.Names[id]; ok {
		return n, true
	}
	if w.LangOf(id) != lang {
		return id, false
	}
	if r.Humanize {
		id = strings.ReplaceAll(strings.ReplaceAll(id, "_", " "), "-", " ")
	}
	return id, true
}

func AsksUser(answer string) bool {
	a := strings.TrimSpace(answer)
	return strings.HasSuffix(a, "?") || strings.HasSuffix(a, "？")
}

// UserTurn returns the text of user turn i of t, or "".
func UserTurn(t *trace.Trace, i int) string {
	if i >= 0 && i < len(t.UserTurns) {
		return t.UserTurns[i]
	}
	return ""
}

// CompactArgs writes a call's arguments for the user: each key, named as
// the replies r name it, and its value.
func CompactArgs(w *lexicon.Compiled, r lexicon.Replies, lang lexicon.Lang, args string) string {
	if m, ok := ArgsMap(args); ok {
		var parts []string
		for _, k := range SortedKeys(m) {
			name, _ := DisplayName(w, r, lang, k)
			parts = append(parts, fmt.Sprintf("%s %v", name, m[k]))
		}
		if len(parts) > 0 {
			return strings.Join(parts, ", ")
		}
	}
	if len(args) > 80 {
		return args[:80] + "…"
	}
	return args
}

// ArgsCut reports whether a recorded step's arguments were cut to the
// recorder's cap, so that rules cannot judge them offline.
func ArgsCut(s *trace.Step) bool {
	return s.Truncated && strings.HasSuffix(s.Args, trace.TruncationMarker)
}

func ArgsMap(args string) (map[string]any, bool) {
	var m map[string]any
	if json.Unmarshal([]byte(args), &m) != nil {
		return nil, false
	}
	return m, true
}

func SortedKeys[V any](m map[string]V) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	return keys
}

// Walk calls fn for every leaf of a decoded JSON value, with its dotted path.
func Walk(path string, v any, fn func(path string, v any)) {
	switch x := v.(type) {
	case map[string]any:
		if len(x) == 1 { // the common call of one argument: no keys to sort
			for k, e := range x {
				p := k
				if path != "" {
					p = path + "." + k
				}
				Walk(p, e, fn)
			}
			return
		}
		for _, k := range SortedKeys(x) {
			p := k
			if path != "" {
				p = path + "." + k
			}
			Walk(p, x[k], fn)
		}
	case []any:
		for i, e := range x {
			Walk(path+"["+strconv.Itoa(i)+"]", e, fn)
		}
	default:
		fn(path, v)
	}
}

// LastKey is the last name of a dotted path, without array indexes.
func LastKey(path string) string {
	if i := strings.LastIndexByte(path, '.'); i >= 0 {
		path = path[i+1:]
	}
	if i := strings.IndexByte(path, '['); i >= 0 {
		path = path[:i]
	}
	return strings.ToLower(path)
}

// AgentSpokeIn reports whether the agent said something to the user during
// turn: a model step's text, or a question the guard asked for it.
func AgentSpokeIn(t *trace.Trace, turn int) bool { return LastSaid(t, turn) != "" }

// LastSaid returns the last thing the agent said to the user during turn:
// a model step's text, or a question the guard asked for it; "" if none.
func LastSaid(t *trace.Trace, turn int) string {
	// Steps are in turn order: read back from the last, over later turns,
	// through turn, no further.
	for i := len(t.Steps) - 1; i >= 0 && t.Steps[i].Turn >= turn; i-- {
		p := t.Steps[i]
		if p.Turn != turn {
			continue
		}
		if text, ok := Said(p); ok {
			return text
		}
	}
	return ""
}

// Said returns what step p said to the user, if it said anything: a model
// step's text (not an intent classification), or the question the guard
// asked on a Clarify.
func Said(p *trace.Step) (string, bool) {
	switch {
	case p.Kind == trace.KindModel && p.Result != "" && p.Intent == "":
		return p.Result, true
	case p.Kind == trace.KindGate && p.Finding != nil && p.Finding.Verdict == trace.Clarify && p.Finding.Question != "":
		return p.Finding.Question, true
	}
	return "", false
}

// IdentifyingValues returns the values of a call's arguments whose keys
// identify what it acts on (the lexicon's Keys.Identifying: order_id,
// item_ids, reservation_id …), each as Alnum gives it and at least four
// characters long, at any depth.
func IdentifyingValues(w *lexicon.Compiled, args string) []string {
	m, ok := ArgsMap(args)
	if !ok {
		return nil
	}
	var out []string
	Walk("", m, func(path string, v any) {
		if KindOfKey(w, LastKey(path))&KeyIdentifying == 0 {
			return
		}
		if s, ok := LeafString(v); ok {
			if a := Alnum(s); len(a) >= 4 && !slices.Contains(out, a) {
				out = append(out, a)
			}
		}
	})
	return out
}

// Alnum keeps the letters and digits of s, in lower case: "#W2692684" and
// "w2692684" are one value, and a text holds a value when its Alnum holds
// the value's.
func Alnum(s string) string {
	var b strings.Builder
	for _, r := range s {
		switch {
		case r >= '0' && r <= '9', r >= 'a' && r <= 'z':
			b.WriteRune(r)
		case unicode.IsLetter(r) || unicode.IsDigit(r):
			b.WriteRune(unicode.ToLower(r))
		}
	}
	return b.String()
}

// Offered reports whether the agent was given the tool: a call to a tool
// it was not Offered is the allow-list's to judge.
func Offered(t *trace.Trace, tool string) bool {
	return len(t.Tools) == 0 || slices.ContainsFunc(t.Tools, func(ts trace.ToolSpec) bool { return ts.Name == tool })
}

// MaxEvidence bounds a finding's evidence, in bytes.
const MaxEvidence = 300

// Clip cuts s to at most n bytes at a rune boundary, marking the cut.
func Clip(s string, n int) string {
	if len(s) <= n {
		return s
	}
	for n > 0 && !utf8.RuneStart(s[n]) {
		n--
	}
	return s[:n] + "…"
}

// Sentences splits text at sentence ends: . followed by a space or the
// end (not in 89.99 or jamie.r@outlook.com), ! ? 。！？ and new lines. The
// end mark stays with its sentence.
func Sentences(text string) []string {
	var out []string
	start := 0
	for i, r := range text {
		end := false
		switch r {
		case '!', '?', '。', '！', '？', '\n', '…':
			end = true
		case '.':
			next, _ := utf8.DecodeRuneInString(text[i+1:])
			end = i+1 == len(text) || unicode.IsSpace(next)
		}
		if end {
			j := i + utf8.RuneLen(r)
			if s := strings.TrimSpace(text[start:j]); s != "" {
				out = append(out, s)
			}
			start = j
		}
	}
	if s := strings.TrimSpace(text[start:]); s != "" {
		out = append(out, s)
	}
	return out
}

// FirstLine returns the first line of an error, at most 120 bytes of it.
func FirstLine(s string) string {
	s, _, _ = strings.Cut(s, "\n")
	return Clip(s, 120)
}

func LeafString(v any) (string, bool) {
	switch x := v.(type) {
	case string:
		return x, true
	case float64:
		return strconv.FormatFloat(x, 'f', -1, 64), true
	case json.Number:
		return x.String(), true
	}
	return "", false
}

// WordByte reports whether text[i] is part of a word (letter or Digit),
// treating any byte of a multi-byte rune as a letter.
func WordByte(text string, i int) bool {
	if i < 0 || i >= len(text) {
		return false
	}
	c := text[i]
	return c >= 0x80 || c >= '0' && c <= '9' || c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z'
}

// ContainsAny reports whether lower-case text holds one of words: as a
// whole word (or its plural or past tense) for words in Latin script, as a
// substring otherwise.
func ContainsAny(text string, words []string) bool {
	return slices.ContainsFunc(words, func(w string) bool {
		return w != "" && (w[0] >= 0x80 && strings.Contains(text, w) || w[0] < 0x80 && ContainsWord(text, w))
	})
}

// NameWords splits a tool name into lower-case words: send_money, sendMoney
// and send-money give send, money.
func NameWords(name string) []string {
	var out []string
	cur := []rune{}
	flush := func() {
		if len(cur) > 0 {
			out = append(out, strings.ToLower(string(cur)))
			cur = cur[:0]
		}
	}
	for i, r := range name {
		switch {
		case r == '_' || r == '-' || r == '.' || r == ' ':
			flush()
		case i > 0 && r >= 'A' && r <= 'Z':
			flush()
			cur = append(cur, r)
		default:
			cur = append(cur, r)
		}
	}
	flush()
	return out
}

// ContainsWord reports whether text holds w as a whole word (or its plural
// or past tense).
func ContainsWord(text, w string) bool {
	for i := 0; ; {
		j := strings.Index(text[i:], w)
		if j < 0 {
			return false
		}
		start, end := i+j, i+j+len(w)
		for _, suffix := range []string{"s", "ed", "d", "ing", "es"} {
			if strings.HasPrefix(text[end:], suffix) && !WordByte(text, end+len(suffix)) {
				end += len(suffix)
				break
			}
		}
		if !WordByte(text, start-1) && !WordByte(text, end) {
			return true
		}
		i = start + 1
	}
}

// DecodedArgs returns p's arguments as a JSON object, decoded once per
// trace (trace.Trace.Args) for every rule and the memory card's checks:
// provenance reads a call's arguments when it is proposed, and the origins
// index reads them again once it is recorded.
func DecodedArgs(t *trace.Trace, p *trace.Step) (map[string]any, bool) {
	return t.Args(p)
}

// ArgValues returns the string and number leaves of s's JSON arguments,
// at any depth, as t decoded them once for every rule (DecodedArgs); nil
// when they are not a JSON object.
func ArgValues(t *trace.Trace, s *trace.Step) []string {
	m, ok := DecodedArgs(t, s)
	if !ok {
		return nil
	}
	var out []string
	Walk("", m, func(_ string, v any) {
		if s, ok := LeafString(v); ok && s != "" {
			out = append(out, s)
		}
	})
	return out
}

// Words returns the words of text that can carry content: its runs of
// letters and digits in Latin script of four characters or more, in lower
// case ("card", "5634230"; not "the", "use"), and each pair of Han
// characters in a row ("礼品卡" gives 礼品, 品卡).
func Words(text string) []string {
	var out []string
	var latin []rune
	var han []rune
	flush := func() {
		if len(latin) >= 4 {
			out = append(out, strings.ToLower(string(latin)))
		}
		for i := 0; i+1 < len(han); i++ {
			out = append(out, string(han[i:i+2]))
		}
		latin, han = latin[:0], han[:0]
	}
	for _, r := range text {
		switch {
		case unicode.Is(unicode.Han, r):
			if len(latin) > 0 {
				flush()
			}
			han = append(han, r)
		case r < 0x80 && (r >= '0' && r <= '9' || r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z'), r >= 0x80 && unicode.IsLetter(r):
			if len(han) > 0 {
				flush()
			}
			latin = append(latin, r)
		default:
			flush()
		}
	}
	flush()
	return out
}

// HasWord reports whether text holds w, a word as Words returns it: as a
// whole word (or its plural or past tense) in Latin script, in any case;
// as a substring in Han.
func HasWord(text, w string) bool {
	if w == "" {
		return false
	}
	if r, _ := utf8.DecodeRuneInString(w); unicode.Is(unicode.Han, r) {
		return strings.Contains(text, w)
	}
	return ContainsWord(strings.ToLower(text), w)
}

// Numbers returns the runs of two digits or more in text ("2024-05-19"
// gives 2024, 05, 19; "the 20th" gives 20; "gift_card_5634230" gives
// 5634230).
func Numbers(text string) []string {
	var out []string
	start := -1
	for i := 0; i <= len(text); i++ {
		if i < len(text) && Digit(text[i]) {
			if start < 0 {
				start = i
			}
			continue
		}
		if start >= 0 && i-start >= 2 {
			out = append(out, text[start:i])
		}
		start = -1
	}
	return out
}
