package trace

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"strconv"
	"strings"
	"time"
)

// DefaultMaxImport is the most an importer of whole documents (ImportOTLP,
// ImportLangSmith, ImportLangfuse) reads from its input, in bytes: the
// spans of one trace may be anywhere in it, so it is read whole.
const DefaultMaxImport = 256 << 20

// jsonDoc is one top-level JSON value of an import and the line it starts
// on.
type jsonDoc struct {
	raw  []byte
	line int
}

// readDocs reads r whole (at most DefaultMaxImport bytes) and returns its
// top-level JSON values: one document, several one after the other (JSON
// lines), and each checked for duplicate keys. A value that is not JSON
// ends the list with a *ParseError naming its line.
func readDocs(r io.Reader, source string) ([]jsonDoc, error) {
	data, err := io.ReadAll(io.LimitReader(r, DefaultMaxImport+1))
	if err != nil {
		return nil, &ParseError{Source: source, Line: 1, Err: err}
	}
	if len(data) > DefaultMaxImport {
		return nil, &ParseError{Source: source, Line: 1, Err: fmt.Errorf("%w: input over %d bytes", ErrLineTooLong, DefaultMaxImport)}
	}
	data = bytes.TrimPrefix(data, []byte("\uFEFF"))
	// lineAt is the line of offset off, counted on from the last offset
	// asked for: the documents come in order, so the input is counted once.
	lastOff, lastLine := 0, 1
	lineAt := func(off int64) int {
		o := min(int(off), len(data))
		if o < lastOff {
			lastOff, lastLine = 0, 1
		}
		lastLine += bytes.Count(data[lastOff:o], []byte("\n"))
		lastOff = o
		return lastLine
	}
	dec := json.NewDecoder(bytes.NewReader(data))
	var docs []jsonDoc
	for {
		var raw json.RawMessage
		start := dec.InputOffset()
		err := dec.Decode(&raw)
		if err == io.EOF {
			return docs, nil
		}
		// The value starts after the white space that precedes it.
		for int(start) < len(data) && strings.IndexByte(" \t\r\n", data[start]) >= 0 {
			start++
		}
		line := lineAt(start)
		if err != nil {
			var se *json.SyntaxError
			if errors.As(err, &se) {
				line = lineAt(se.Offset)
			}
			return docs, &ParseError{Source: source, Line: line, Err: jsonError(err)}
		}
		if off, err := uniqueKeys(raw); err != nil {
			return docs, &ParseError{Source: source, Line: line + bytes.Count(raw[:min(off, len(raw))], []byte("\n")), Err: err}
		}
		docs = append(docs, jsonDoc{raw: raw, line: line})
	}
}

// elements returns the values of a document: the elements of an array, the
// elements of the array under key of an object that has it (a paginated
// API answer: {"data": [...]}, {"runs": [...]}), or the document itself.
func (d jsonDoc) elements(keys ...string) ([]json.RawMessage, error) {
	raw := bytes.TrimSpace(d.raw)
	if len(raw) > 0 && raw[0] == '{' {
		var obj map[string]json.RawMessage
		if err := json.Unmarshal(raw, &obj); err != nil {
			return nil, jsonError(err)
		}
		for _, k := range keys {
			if v, ok := obj[k]; ok && len(bytes.TrimSpace(v)) > 0 && bytes.TrimSpace(v)[0] == '[' {
				raw = v
				break
			}
		}
	}
	if len(raw) > 0 && raw[0] == '[' {
		var out []json.RawMessage
		if err := json.Unmarshal(raw, &out); err != nil {
			return nil, jsonError(err)
		}
		return out, nil
	}
	return []json.RawMessage{raw}, nil
}

// parseTime reads an RFC 3339 time, or epoch milliseconds as a number.
func parseTime(raw json.RawMessage) (time.Time, error) {
	raw = bytes.TrimSpace(raw)
	switch {
	case len(raw) == 0 || string(raw) == "null":
		return time.Time{}, nil
	case raw[0] == '"':
		var s string
		if err := json.Unmarshal(raw, &s); err != nil {
			return time.Time{}, err
		}
		if s == "" {
			return time.Time{}, nil
		}
		for _, layout := range []string{time.RFC3339Nano, "2006-01-02T15:04:05.999999999", "2006-01-02 15:04:05.999999999Z07:00", "2006-01-02 15:04:05.999999999"} {
			if t, err := time.Parse(layout, s); err == nil {
				return t.UTC(), nil
			}
		}
		return time.Time{}, fmt.Errorf("time %q is not RFC 3339", s)
	default:
		ms, err := strconv.ParseFloat(string(raw), 64)
		if err != nil {
			return time.Time{}, fmt.Errorf("time %s is not a string or epoch milliseconds", raw)
		}
		return time.UnixMilli(int64(ms)).UTC(), nil
	}
}

// anyText returns a JSON value as text: a string's value, null as "",
// anything else compacted.
func anyText(raw json.RawMessage) string {
	raw = bytes.TrimSpace(raw)
	if len(raw) == 0 || string(raw) == "null" {
		return ""
	}
	s, _ := jsonText(raw)
	return s
}

// conversation builds a trace's steps from a chat in order: user turns,
// model turns with the calls they propose, and the results that answer
// them, matched by call id.
type conversation struct {
	t       *Trace
	pending pendingCalls
}

func newConversation(t *Trace) *conversation {
	if t.Steps == nil {
		t.Steps = []*Step{}
	}
	return &conversation{t: t}
}

func (c *conversation) add(s *Step) *Step {
	s.Index = len(c.t.Steps)
	s.Turn = len(c.t.UserTurns) - 1
	c.t.Steps = append(c.t.Steps, s)
	return s
}

func (c *conversation) user(text string) { c.t.UserTurns = append(c.t.UserTurns, text) }

// model adds a model step and a pending tool step per call it proposes;
// the tool steps share the model step's Source, the message that made
// the calls.
func (c *conversation) model(s *Step) {
	s.Kind = KindModel
	c.add(s)
	for _, call := range s.Calls {
		c.pending.push(c.add(&Step{Kind: KindTool, Name: call.Name, CallID: call.ID, Args: call.Args, Start: s.Start.Add(s.Duration), Source: s.Source}))
	}
}

// result gives the tool step of call id its result, or adds an unmatched
// one.
func (c *conversation) result(id, name, text string, failed bool) {
	c.resultAt(id, name, text, failed, "")
}

// resultAt is result for a tool message read from source: an unmatched
// one is a step of its own there.
func (c *conversation) resultAt(id, name, text string, failed bool, source string) {
	s := c.pending.answer(id)
	if s == nil {
		c.add(&Step{Kind: KindTool, Name: name, CallID: id, Result: text, Error: unmatchedResult, Source: source})
		return
	}
	if failed {
		s.Error = text
	} else {
		s.Result = text
	}
	if s.Name == "" {
		s.Name = name
	}
}

// yieldTraces ends an importer of whole documents: it builds the trace of
// each id in order and yields it, checked as the JSONL reader checks a
// line (checkRanges), or the *ParseError saying why it could not be built;
// then readErr, if reading stopped early. A build that returns no trace
// and no error is skipped.
func yieldTraces(yield func(*Trace, error) bool, source string, order []string, build func(id string) (*Trace, error), readErr error) {
	for _, id := range order {
		t, err := build(id)
		if t == nil && err == nil {
			continue
		}
		if err == nil {
			err = checkRanges(t) // a negative token count or cost
		}
		if err != nil {
			t, err = nil, &ParseError{Source: source, Line: 1, Err: fmt.Errorf("trace %s: %w", id, err)}
		}
		if !yield(t, err) {
			return
		}
	}
	if readErr != nil {
		yield(nil, readErr)
	}
}
