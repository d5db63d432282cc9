package trace

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"iter"
	"slices"
	"strings"
	"sync"
)

// Sentinel errors of format detection, wrapped by *ParseError.
var (
	// ErrUnknownFormat: the input's first line is in no registered format.
	ErrUnknownFormat = errors.New("unknown input format")
	// ErrAmbiguousFormat: the first line fits several formats equally well.
	ErrAmbiguousFormat = errors.New("ambiguous input format")
)

// Match is how surely a line is in a format.
type Match int

// Matches, weakest first.
const (
	NoMatch    Match = iota // not in the format
	MaybeMatch              // has the format's keys, which other formats may share
	SureMatch               // has a mark only this format has
)

// A Format is a way of writing agent runs down as JSON Lines that [Import]
// reads into traces. Formats are registered with [RegisterFormat]; the
// built-in ones are:
//
//	agentguard       trace JSONL (this package's format), one run per line: {"v":1,"trace_id":...,"steps":[...]}
//	openai           OpenAI chat logs, one conversation per line: {"id":...,"messages":[...],"tools":[...]} (see ImportOpenAI)
//	openai-messages  one OpenAI chat message per line, the whole input one conversation: {"role":"user","content":...}
type Format struct {
	// Name picks the format, e.g. on a command line: "openai".
	Name string
	// Doc describes the format in a few words, for usage texts and error
	// messages: `OpenAI chat logs, one conversation per line ({"messages":[...]})`.
	Doc string
	// Detect reports how surely an input whose first non-blank line is the
	// JSON object first (its keys and raw values) is in this format.
	Detect func(first map[string]json.RawMessage) Match
	// Read reads an input in this format: each trace, or for a line that
	// cannot be read a *ParseError naming it. source names the input in
	// errors; it may be empty.
	Read func(r io.Reader, source string) iter.Seq2[*Trace, error]
}

var (
	formatsMu sync.RWMutex
	formats   = []Format{
		{Name: "agentguard", Doc: `agentguard trace JSONL, one run per line ({"v":1,"trace_id":...})`, Detect: detectJSONL, Read: readJSONL},
		{Name: "openai", Doc: `OpenAI chat logs, one conversation per line ({"messages":[...]})`, Detect: detectOpenAI, Read: ImportOpenAI},
		{Name: "openai-messages", Doc: `OpenAI chat messages, one per line, the input one conversation ({"role":...})`, Detect: detectOpenAIMessage, Read: importOpenAIMessages},
	}
)

// RegisterFormat makes a format available to [Import] and [DetectFormat].
// It panics if the name is empty or taken, or Detect or Read is nil; call
// it from an init function.
func RegisterFormat(f Format) {
	if f.Name == "" || f.Detect == nil || f.Read == nil {
		panic("trace: RegisterFormat: a format needs a name, Detect and Read")
	}
	formatsMu.Lock()
	defer formatsMu.Unlock()
	if slices.ContainsFunc(formats, func(g Format) bool { return g.Name == f.Name }) {
		panic("trace: RegisterFormat: format " + f.Name + " registered twice")
	}
	formats = append(formats, f)
}

// Formats returns the registered formats, built-in ones first, in the
// order they were registered.
func Formats() []Format {
	formatsMu.RLock()
	defer formatsMu.RUnlock()
	return slices.Clone(formats)
}

// LookupFormat returns the format registered under name.
func LookupFormat(name string) (Format, bool) {
	formatsMu.RLock()
	defer formatsMu.RUnlock()
	i := slices.IndexFunc(formats, func(f Format) bool { return f.Name == name })
	if i < 0 {
		return Format{}, false
	}
	return formats[i], true
}

// FormatNames returns the names of the registered formats, joined by
// ", ", for messages.
func FormatNames() string {
	var names []string
	for _, f := range Formats() {
		names = append(names, f.Name)
	}
	return strings.Join(names, ", ")
}

// DetectFormat returns the format whose Detect is surest of line, an
// input's first non-blank line. The error, when no format or several fit
// equally well, wraps ErrUnknownFormat or ErrAmbiguousFormat and says what
// the line looks like and which formats there are.
func DetectFormat(line []byte) (Format, error) {
	line = bytes.TrimSpace(bytes.TrimPrefix(line, []byte("\uFEFF")))
	var first map[string]json.RawMessage
	if len(line) == 0 || line[0] != '{' || json.Unmarshal(line, &first) != nil {
		what := "not a JSON object"
		switch {
		case len(line) > 0 && line[0] == '[':
			what = "a JSON array, not an object per line"
		case len(line) > 0 && line[0] == '{':
			what = "not a whole JSON object (JSON Lines hold one object per line, not one spread over several)"
		}
		return Format{}, fmt.Errorf("%w: the line is %s; want JSON Lines in one of: %s", ErrUnknownFormat, what, formatList())
	}
	var best []Format
	bestMatch := NoMatch
	for _, f := range Formats() {
		switch m := f.Detect(first); {
		case m > bestMatch:
			best, bestMatch = []Format{f}, m
		case m == bestMatch && m > NoMatch:
			best = append(best, f)
		}
	}
	switch len(best) {
	case 0:
		keys := make([]string, 0, len(first))
		for k := range first {
			keys = append(keys, fmt.Sprintf("%q", k))
		}
		slices.Sort(keys)
		if len(keys) > 8 {
			keys = append(keys[:8], "…")
		}
		return Format{}, fmt.Errorf("%w: a JSON object with keys %s; want one of: %s", ErrUnknownFormat, strings.Join(keys, ", "), formatList())
	case 1:
		return best[0], nil
	}
	names := make([]string, len(best))
	for i, f := range best {
		names[i] = f.Name
	}
	return Format{}, fmt.Errorf("%w: the line could be %s; name the format", ErrAmbiguousFormat, strings.Join(names, " or "))
}

// formatList lists the formats with their docs, for messages.
func formatList() string {
	var b strings.Builder
	for i, f := range Formats() {
		if i > 0 {
			b.WriteString("; ")
		}
		fmt.Fprintf(&b, "%s: %s", f.Name, f.Doc)
	}
	return b.String()
}

// Import reads traces from r in the format named, or, when format is "",
// in the format [DetectFormat] finds in r's first non-blank line. source
// names the input in errors; it may be empty. An input whose first line is
// not a whole JSON value — a pretty-printed document, or an array of
// records, as tools that write whole files write them — is read whole (at
// most DefaultMaxImport bytes) and taken as JSON Lines, one value or array
// element per line; its errors then count lines in that form.
//
// When the format cannot be detected, or is not registered, the sequence
// yields one error and ends: a *ParseError naming the first line (wrapping
// ErrUnknownFormat or ErrAmbiguousFormat), or an error naming the format.
// When a named format fails on the first line and the line looks like
// another format, the error says so. Otherwise it is the format's Read:
// see there for errors.
func Import(r io.Reader, source, format string) iter.Seq2[*Trace, error] {
	return func(yield func(*Trace, error) bool) {
		var f Format
		if format != "" {
			var ok bool
			if f, ok = LookupFormat(format); !ok {
				yield(nil, fmt.Errorf("trace: unknown format %q (want %s)", format, FormatNames()))
				return
			}
		}
		br := bufio.NewReaderSize(r, 64<<10)
		blank, head, first, lineNo, err := firstLine(br)
		if err != nil {
			yield(nil, &ParseError{Source: source, Line: lineNo, Err: err})
			return
		}
		skipped := newlines(blank)
		in := io.MultiReader(&skipped, bytes.NewReader(head), br)
		if first == nil { // no line at all
			if f.Read == nil {
				return
			}
			for t, err := range f.Read(in, source) {
				if !yield(t, err) {
					return
				}
			}
			return
		}
		if !json.Valid(first) && (first[0] == '{' || first[0] == '[') {
			// A whole-file document: pretty-printed, or an array of records.
			// Read as JSON Lines, one value (one element of an array) per line.
			var err error
			if in, first, err = asLines(in); err != nil {
				yield(nil, &ParseError{Source: source, Line: lineNo, Err: err})
				return
			}
			lineNo = 1
		}
		detected, derr := DetectFormat(first)
		if format == "" {
			if derr != nil {
				yield(nil, &ParseError{Source: source, Line: lineNo, Err: derr})
				return
			}
			f = detected
		}
		checked := false
		for t, err := range f.Read(in, source) {
			if !checked {
				checked = true
				var pe *ParseError
				if err != nil && derr == nil && detected.Name != f.Name && errors.As(err, &pe) && pe.Line == lineNo {
					pe.Err = fmt.Errorf("%w (the line looks like %s: %s)", pe.Err, detected.Name, detected.Doc)
				}
			}
			if !yield(t, err) {
				return
			}
		}
	}
}

// asLines reads in whole (at most DefaultMaxImport bytes) as one or more
// JSON values, and returns them as JSON Lines: each value compacted onto a
// line, and the elements of a top-level array each on its own, with the
// first line. Errors then name the value's line in that form: the n-th
// record.
func asLines(in io.Reader) (io.Reader, []byte, error) {
	docs, err := readDocs(in, "")
	if err != nil {
		var pe *ParseError
		if errors.As(err, &pe) {
			return nil, nil, fmt.Errorf("a JSON document that does not parse, at line %d: %w", pe.Line, pe.Err)
		}
		return nil, nil, err
	}
	var out bytes.Buffer
	for _, d := range docs {
		vals := []json.RawMessage{d.raw}
		if raw := bytes.TrimSpace(d.raw); len(raw) > 0 && raw[0] == '[' {
			vals = nil
			if err := json.Unmarshal(raw, &vals); err != nil {
				return nil, nil, jsonError(err)
			}
		}
		for _, v := range vals {
			if err := json.Compact(&out, v); err != nil {
				return nil, nil, jsonError(err)
			}
			out.WriteByte('\n')
		}
	}
	data := out.Bytes()
	first, _, _ := bytes.Cut(data, []byte("\n"))
	if len(first) == 0 {
		return nil, nil, errors.New("an empty JSON array")
	}
	return bytes.NewReader(data), first, nil
}

// maxLeadingBlank caps the blank input read before the first line that
// holds anything: past it, an input (a decompressed one, say) is refused
// rather than read on.
const maxLeadingBlank = 64 << 20

// firstLine reads br up to and including its first non-blank line. blank
// is how many blank lines came before it, which are not kept: what is to
// be read again is that many newlines, then head. first is the line,
// trimmed, nil when the input has none; n is its 1-based number.
func firstLine(br *bufio.Reader) (blank int, head, first []byte, n int, err error) {
	skipped := 0
	for {
		n++
		head = head[:0]
		for {
			chunk, err := br.ReadSlice('\n')
			head = append(head, chunk...)
			if len(head) > DefaultMaxLine {
				return 0, nil, nil, n, fmt.Errorf("%w: over %d bytes", ErrLineTooLong, DefaultMaxLine)
			}
			if err == bufio.ErrBufferFull {
				continue
			}
			if err == io.EOF {
				line := bytes.TrimSpace(bytes.TrimPrefix(head, []byte("\uFEFF")))
				if len(line) == 0 {
					return n - 1, nil, nil, n, nil
				}
				return n - 1, head, line, n, nil
			}
			if err != nil {
				return 0, nil, nil, n, err
			}
			break
		}
		line := head
		if n == 1 {
			line = bytes.TrimPrefix(line, []byte("\uFEFF"))
		}
		if line = bytes.TrimSpace(line); len(line) > 0 {
			return n - 1, head, line, n, nil
		}
		if skipped += len(head); skipped > maxLeadingBlank {
			return 0, nil, nil, n, fmt.Errorf("nothing but blank lines in the first %d MiB", maxLeadingBlank>>20)
		}
	}
}

// newlines reads as n newlines: the blank lines firstLine skipped, so
// that a format's reader numbers the lines after them as the input does.
type newlines int

func (k *newlines) Read(p []byte) (int, error) {
	if *k <= 0 {
		return 0, io.EOF
	}
	m := min(len(p), int(*k))
	for i := range m {
		p[i] = '\n'
	}
	*k -= newlines(m)
	return m, nil
}

func readJSONL(r io.Reader, source string) iter.Seq2[*Trace, error] {
	rd := NewReader(r)
	rd.Source = source
	return rd.All()
}

// detectJSONL: a "v" key marks trace JSONL; with "trace_id" or "steps" it
// is surely one.
func detectJSONL(first map[string]json.RawMessage) Match {
	if _, ok := first["v"]; !ok {
		return NoMatch
	}
	if _, ok := first["trace_id"]; ok {
		return SureMatch
	}
	if _, ok := first["steps"]; ok {
		return SureMatch
	}
	return MaybeMatch
}

// detectOpenAI: a "messages" array marks a chat log; a message role or key
// that only OpenAI's API has (system, developer or tool roles, tool_calls,
// tool_call_id), or function tools, make it sure.
func detectOpenAI(first map[string]json.RawMessage) Match {
	var msgs []map[string]json.RawMessage
	if json.Unmarshal(first["messages"], &msgs) != nil || msgs == nil {
		return NoMatch
	}
	for _, m := range msgs {
		if openAIOnly(m) {
			return SureMatch
		}
	}
	var tools []struct {
		Type string `json:"type"`
	}
	if json.Unmarshal(first["tools"], &tools) == nil && len(tools) > 0 && tools[0].Type == "function" {
		return SureMatch
	}
	return MaybeMatch
}

// detectOpenAIMessage: a "role" string (and no "messages") marks one chat
// message.
func detectOpenAIMessage(first map[string]json.RawMessage) Match {
	var role string
	if _, ok := first["messages"]; ok || json.Unmarshal(first["role"], &role) != nil || role == "" {
		return NoMatch
	}
	if openAIOnly(first) {
		return SureMatch
	}
	return MaybeMatch
}

// openAIOnly reports whether a message has a role or key that OpenAI's
// chat format has and other chat formats lack.
func openAIOnly(m map[string]json.RawMessage) bool {
	var role string
	json.Unmarshal(m["role"], &role)
	switch role {
	case "system", "developer", "tool", "function":
		return true
	}
	_, calls := m["tool_calls"]
	_, id := m["tool_call_id"]
	return calls || id
}

// importOpenAIMessages reads one OpenAI chat message per line, the whole
// input one conversation, and yields it as one trace whose id is source
// (or "conversation"), mapped as ImportOpenAI maps a conversation. A line
// that is not a message yields a *ParseError naming it and is left out.
func importOpenAIMessages(r io.Reader, source string) iter.Seq2[*Trace, error] {
	return func(yield func(*Trace, error) bool) {
		lr := &lineReader{br: bufio.NewReaderSize(r, 64<<10), source: source}
		var msgs []json.RawMessage
		for {
			line, err := lr.next()
			if err == io.EOF {
				break
			}
			if err == nil {
				err = checkMessage(line)
				if err != nil {
					err = lr.errorf(err)
				}
			}
			if err != nil {
				if !yield(nil, err) || lr.err != nil {
					return
				}
				continue
			}
			msgs = append(msgs, bytes.Clone(line))
		}
		if len(msgs) == 0 {
			return
		}
		id := source
		if id == "" {
			id = "conversation"
		}
		log, err := json.Marshal(struct {
			ID       string            `json:"id"`
			Messages []json.RawMessage `json:"messages"`
		}{id, msgs})
		if err == nil {
			var t *Trace
			if t, err = importChat(log, id); err == nil {
				yield(t, nil)
				return
			}
		}
		yield(nil, &ParseError{Source: source, Line: 1, Err: err})
	}
}

// checkMessage reports what keeps line from being one chat message.
func checkMessage(line []byte) error {
	if line[0] != '{' {
		return errors.New(`not a JSON object; want one chat message per line ({"role":...,"content":...})`)
	}
	var m chatMessage
	if err := json.Unmarshal(line, &m); err != nil {
		return jsonError(err)
	}
	switch m.Role {
	case "system", "developer", "user", "assistant", "tool", "function":
	case "":
		return errors.New(`no "role": want one chat message per line ({"role":...,"content":...})`)
	default:
		return fmt.Errorf("unknown role %q (want system, developer, user, assistant or tool)", m.Role)
	}
	if _, _, err := m.text(); err != nil {
		return err
	}
	_, err := m.calls()
	return err
}
