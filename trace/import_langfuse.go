package trace

import (
	"bytes"
	"cmp"
	"encoding/json"
	"fmt"
	"io"
	"iter"
	"slices"
	"strings"
	"time"
)

// ImportLangfuse reads Langfuse traces as the public API returns them —
// a trace with its "observations" (GET /api/public/traces/{id}), one per
// line, a JSON array of them, or {"data": [...]} — or bare observations,
// which are grouped by traceId. It yields one Trace per Langfuse trace.
// Observations are ordered by startTime.
//
// GENERATION observations become model steps: model, the answer and tool
// calls from output (a message, OpenAI's or LangChain's, or a string), the
// user turns from the longest input message list, token counts from
// usageDetails (or usage), the error from statusMessage when level is
// ERROR. TOOL observations become tool steps (input as arguments, output
// as result), RETRIEVER observations retrieval steps; others (SPAN, EVENT,
// AGENT, CHAIN) give no step. The trace's id, sessionId and timestamp are
// the Trace's; without model input, the trace's input is the user turn.
//
// The input is read whole (at most DefaultMaxImport bytes). A value that
// cannot be read — not JSON, a key given twice, an observation without an
// id — is yielded as a *ParseError naming its line; the others still
// import.
func ImportLangfuse(r io.Reader, source string) iter.Seq2[*Trace, error] {
	if source == "" {
		source = "langfuse"
	}
	return func(yield func(*Trace, error) bool) {
		docs, readErr := readDocs(r, source)
		var order []string
		traces := map[string]*lfTrace{}
		get := func(id string) *lfTrace {
			lt, ok := traces[id]
			if !ok {
				lt = &lfTrace{ID: id}
				traces[id] = lt
				order = append(order, id)
			}
			return lt
		}
		for _, d := range docs {
			els, err := d.elements("data")
			if err == nil {
				for i, raw := range els {
					var probe struct {
						Observations json.RawMessage `json:"observations"`
						TraceID      string          `json:"traceId"`
						Type         string          `json:"type"`
					}
					if err = unmarshal(raw, &probe); err != nil {
						err = fmt.Errorf("value %d: %w", i, jsonError(err))
						break
					}
					if probe.Observations == nil && probe.TraceID != "" && probe.Type != "" { // a bare observation
						var o lfObservation
						if err = unmarshal(raw, &o); err != nil {
							err = fmt.Errorf("observation %d: %w", i, jsonError(err))
							break
						}
						lt := get(o.TraceID)
						lt.Observations = append(lt.Observations, o)
						continue
					}
					var tr lfTrace
					if err = unmarshal(raw, &tr); err != nil {
						err = fmt.Errorf("trace %d: %w", i, jsonError(err))
						break
					}
					if tr.ID == "" || probe.Observations == nil {
						err = fmt.Errorf("trace %d: no \"id\" or \"observations\": not a Langfuse trace", i)
						break
					}
					lt := get(tr.ID)
					obs := append(lt.Observations, tr.Observations...)
					*lt = tr
					lt.Observations = obs
				}
			}
			if err != nil && !yield(nil, &ParseError{Source: source, Line: d.line, Err: err}) {
				return
			}
		}
		yieldTraces(yield, source, order, func(id string) (*Trace, error) { return langfuseTrace(traces[id]) }, readErr)
	}
}

// SniffLangfuse reports whether head, the first bytes of an input, looks
// like a Langfuse export: JSON with "observations", or observations
// ("traceId" and "parentObservationId" or "startTime" with a Langfuse
// observation type).
func SniffLangfuse(head []byte) bool {
	h := bytes.TrimLeft(head, "\uFEFF \t\r\n")
	if len(h) == 0 || h[0] != '{' && h[0] != '[' {
		return false
	}
	if bytes.Contains(h, []byte(`"observations"`)) {
		return true
	}
	return bytes.Contains(h, []byte(`"traceId"`)) && (bytes.Contains(h, []byte(`"parentObservationId"`)) ||
		bytes.Contains(h, []byte(`"startTime"`)) && bytes.Contains(h, []byte(`"GENERATION"`)))
}

type (
	lfTrace struct {
		ID           string          `json:"id"`
		Name         string          `json:"name"`
		SessionID    string          `json:"sessionId"`
		UserID       string          `json:"userId"`
		Timestamp    json.RawMessage `json:"timestamp"`
		Input        json.RawMessage `json:"input"`
		Observations []lfObservation `json:"observations"`
	}
	lfObservation struct {
		ID            string          `json:"id"`
		TraceID       string          `json:"traceId"`
		Type          string          `json:"type"`
		Name          string          `json:"name"`
		StartTime     json.RawMessage `json:"startTime"`
		EndTime       json.RawMessage `json:"endTime"`
		Model         string          `json:"model"`
		Input         json.RawMessage `json:"input"`
		Output        json.RawMessage `json:"output"`
		Level         string          `json:"level"`
		StatusMessage string          `json:"statusMessage"`
		Usage         lfUsage         `json:"usage"`
		UsageDetails  lfUsage         `json:"usageDetails"`
		Metadata      json.RawMessage `json:"metadata"`
		start, end    time.Time
	}
	lfUsage struct {
		Input  int `json:"input"`
		Output int `json:"output"`
	}
)

// langfuseTrace builds the Trace of a Langfuse trace and its observations.
func langfuseTrace(lt *lfTrace) (*Trace, error) {
	t := &Trace{ID: lt.ID, SessionID: lt.SessionID, Steps: []*Step{}}
	var err error
	if t.Start, err = parseTime(lt.Timestamp); err != nil {
		return nil, fmt.Errorf("timestamp: %w", err)
	}
	t.Meta = langfuseMeta(lt)
	obs := lt.Observations
	if err := langfuseTimes(obs); err != nil {
		return nil, err
	}
	slices.SortStableFunc(obs, func(a, b lfObservation) int { return a.start.Compare(b.start) })
	for i := range obs {
		if s := langfuseStep(t, &obs[i]); s != nil {
			s.Index = len(t.Steps)
			t.Steps = append(t.Steps, s)
		}
	}
	if len(t.UserTurns) == 0 {
		if m := messageList(lt.Input); len(m) > 0 {
			t.UserTurns = userTurns(m)
		} else if in := lsField(lt.Input, "input", "question", "query", "message"); in != "" {
			t.UserTurns = []string{in}
		}
	}
	turn := min(len(t.UserTurns)-1, 0)
	for _, s := range t.Steps {
		if s.Turn == unknownTurn {
			s.Turn = turn
		}
		turn = s.Turn
	}
	if t.Start.IsZero() && len(t.Steps) > 0 {
		t.Start = t.Steps[0].Start
	}
	return t, nil
}

// langfuseMeta returns the trace's name and user id as Trace.Meta, or nil
// when it has neither.
func langfuseMeta(lt *lfTrace) map[string]string {
	if lt.Name == "" && lt.UserID == "" {
		return nil
	}
	meta := map[string]string{}
	if lt.Name != "" {
		meta["name"] = lt.Name
	}
	if lt.UserID != "" {
		meta["user_id"] = lt.UserID
	}
	return meta
}

// langfuseTimes reads the start and end times of obs, each of which must
// have an id.
func langfuseTimes(obs []lfObservation) error {
	for i := range obs {
		o := &obs[i]
		if o.ID == "" {
			return fmt.Errorf("observation %d has no id", i)
		}
		var err error
		if o.start, err = parseTime(o.StartTime); err != nil {
			return fmt.Errorf("observation %s: startTime: %w", o.ID, err)
		}
		if o.end, err = parseTime(o.EndTime); err != nil {
			return fmt.Errorf("observation %s: endTime: %w", o.ID, err)
		}
	}
	return nil
}

// langfuseStep returns the step of a GENERATION, TOOL or RETRIEVER
// observation, or nil for one of another type. The user turns a
// generation saw join t.UserTurns when they are more.
func langfuseStep(t *Trace, o *lfObservation) *Step {
	s := &Step{Start: o.start, Turn: unknownTurn}
	if !o.end.IsZero() && o.end.After(o.start) {
		s.Duration = o.end.Sub(o.start)
	}
	if strings.EqualFold(o.Level, "ERROR") {
		s.Error = cmp.Or(o.StatusMessage, "error")
	}
	switch strings.ToUpper(o.Type) {
	case "GENERATION":
		langfuseModel(s, o)
		turns := userTurns(messageList(o.Input))
		t.UserTurns = longer(t.UserTurns, turns)
		if len(turns) > 0 {
			s.Turn = len(turns) - 1
		}
	case "TOOL":
		s.Kind, s.Name, s.Args, s.Result = KindTool, o.Name, anyText(o.Input), anyText(o.Output)
		if m, ok := readMessage(o.Output); ok && m.Role == roleTool {
			s.Result, s.CallID = m.text(), m.ToolCallID
		}
	case "RETRIEVER":
		langfuseRetrieval(s, o)
	default:
		return nil
	}
	return s
}

// langfuseModel reads a GENERATION observation: model, tokens and answer.
func langfuseModel(s *Step, o *lfObservation) {
	s.Kind, s.Name = KindModel, o.Model
	u := o.UsageDetails
	if u == (lfUsage{}) {
		u = o.Usage
	}
	s.TokensIn, s.TokensOut = u.Input, u.Output
	if m, ok := readMessage(o.Output); ok {
		s.Result, s.Calls = m.text(), m.calls()
	} else {
		s.Result = contentText(o.Output)
	}
}

// langfuseRetrieval reads a RETRIEVER observation: the query, and the ids
// of the documents it returned.
func langfuseRetrieval(s *Step, o *lfObservation) {
	s.Kind, s.Name, s.Args = KindRetrieval, o.Name, anyText(o.Input)
	var docs []struct {
		ID       string                     `json:"id"`
		Metadata map[string]json.RawMessage `json:"metadata"`
	}
	out := o.Output
	if v := lsRaw(out, "documents"); v != nil {
		out = v
	}
	json.Unmarshal(out, &docs)
	for i, d := range docs {
		s.DocIDs = append(s.DocIDs, cmp.Or(d.ID, anyText(d.Metadata["id"]), anyText(d.Metadata["source"]), fmt.Sprint(i)))
	}
}
