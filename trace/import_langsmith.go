package trace

import (
	"bytes"
	"cmp"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"iter"
	"slices"
	"strings"
	"time"
)

// ImportLangSmith reads LangSmith runs — what the LangSmith client's run
// listing returns, as a JSON array, one run per line, {"runs": [...]}, or
// runs nested under "child_runs" — and yields one Trace per trace_id (a run
// without one belongs to the trace of its root run), in the order the
// traces first appear. Within a trace, runs are ordered by dotted_order,
// or start_time without it.
//
// Runs of type "llm" become model steps: the model from
// extra.metadata.ls_model_name or extra.invocation_params, the provider
// from extra.metadata.ls_provider, the answer and tool calls from outputs
// (LangChain generations, an AI message, or OpenAI's choices), token
// counts from prompt_tokens and completion_tokens. Runs of type "tool"
// become tool steps (arguments from inputs, result from outputs, error
// from error); "retriever" runs retrieval steps with the ids of the
// documents they returned. Other runs (chains, prompts, parsers) give the
// trace its identity. User turns come from the longest model input, or the
// root run's input. The root's extra.metadata thread_id, session_id or
// conversation_id is the session.
//
// The input is read whole (at most DefaultMaxImport bytes). A value that
// cannot be read — not JSON, a key given twice, a run without an id — is
// yielded as a *ParseError naming its line; the others still import.
func ImportLangSmith(r io.Reader, source string) iter.Seq2[*Trace, error] {
	if source == "" {
		source = "langsmith"
	}
	return func(yield func(*Trace, error) bool) {
		docs, readErr := readDocs(r, source)
		var all []*lsRun
		var add func(run *lsRun)
		add = func(run *lsRun) {
			all = append(all, run)
			for _, c := range run.ChildRuns {
				c.ParentRunID = cmp.Or(c.ParentRunID, run.ID)
				c.TraceID = cmp.Or(c.TraceID, run.TraceID)
				add(c)
			}
		}
		for _, d := range docs {
			els, err := d.elements("runs", "data")
			if err == nil {
				for i, raw := range els {
					run := new(lsRun)
					if err = unmarshal(raw, run); err != nil {
						err = fmt.Errorf("run %d: %w", i, jsonError(err))
						break
					}
					if run.ID == "" || run.RunType == "" {
						err = fmt.Errorf("run %d: no \"id\" or \"run_type\": not a LangSmith run", i)
						break
					}
					add(run)
				}
			}
			if err != nil && !yield(nil, &ParseError{Source: source, Line: d.line, Err: err}) {
				return
			}
		}
		// A run without a trace_id belongs to the trace of its root run.
		byID := make(map[string]*lsRun, len(all))
		for _, run := range all {
			byID[run.ID] = run
		}
		traceOf := func(run *lsRun) string {
			for hops := 0; run.TraceID == "" && run.ParentRunID != "" && hops < len(all); hops++ {
				p, ok := byID[run.ParentRunID]
				if !ok {
					break
				}
				run = p
			}
			return cmp.Or(run.TraceID, run.ID)
		}
		var order []string
		byTrace := map[string][]*lsRun{}
		for _, run := range all {
			key := traceOf(run)
			if _, ok := byTrace[key]; !ok {
				order = append(order, key)
			}
			byTrace[key] = append(byTrace[key], run)
		}
		yieldTraces(yield, source, order, func(key string) (*Trace, error) {
			if len(byTrace[key]) == 0 {
				return nil, nil
			}
			return langsmithTrace(key, byTrace[key])
		}, readErr)
	}
}

// SniffLangSmith reports whether head, the first bytes of an input, looks
// like LangSmith runs: JSON with a "run_type" and a "dotted_order",
// "trace_id" or "parent_run_id".
func SniffLangSmith(head []byte) bool {
	h := bytes.TrimLeft(head, "\uFEFF \t\r\n")
	if len(h) == 0 || h[0] != '{' && h[0] != '[' || !bytes.Contains(h, []byte(`"run_type"`)) {
		return false
	}
	return bytes.Contains(h, []byte(`"dotted_order"`)) || bytes.Contains(h, []byte(`"trace_id"`)) || bytes.Contains(h, []byte(`"parent_run_id"`))
}

type lsRun struct {
	ID               string          `json:"id"`
	Name             string          `json:"name"`
	RunType          string          `json:"run_type"`
	TraceID          string          `json:"trace_id"`
	ParentRunID      string          `json:"parent_run_id"`
	DottedOrder      string          `json:"dotted_order"`
	StartTime        json.RawMessage `json:"start_time"`
	EndTime          json.RawMessage `json:"end_time"`
	Inputs           json.RawMessage `json:"inputs"`
	Outputs          json.RawMessage `json:"outputs"`
	Error            string          `json:"error"`
	PromptTokens     int             `json:"prompt_tokens"`
	CompletionTokens int             `json:"completion_tokens"`
	Extra            struct {
		Metadata         map[string]json.RawMessage `json:"metadata"`
		InvocationParams map[string]json.RawMessage `json:"invocation_params"`
	} `json:"extra"`
	ChildRuns []*lsRun `json:"child_runs"`

	start, end time.Time
}

func (r *lsRun) meta(keys ...string) string {
	for _, k := range keys {
		if s := anyText(r.Extra.Metadata[k]); s != "" {
			return s
		}
	}
	return ""
}

// langsmithTrace builds the trace of one trace id from its runs.
func langsmithTrace(id string, runs []*lsRun) (*Trace, error) {
	if err := langsmithTimes(runs); err != nil {
		return nil, err
	}
	slices.SortStableFunc(runs, func(a, b *lsRun) int {
		if a.DottedOrder != "" && b.DottedOrder != "" {
			return strings.Compare(a.DottedOrder, b.DottedOrder)
		}
		return a.start.Compare(b.start)
	})
	t := &Trace{ID: id, Steps: []*Step{}}
	root := langsmithRoot(id, runs)
	t.Start = root.start
	t.SessionID = root.meta("thread_id", "session_id", "conversation_id")
	if root.Name != "" {
		t.Meta = map[string]string{"name": root.Name}
	}
	for _, r := range runs {
		if s := langsmithStep(t, r); s != nil {
			s.Index = len(t.Steps)
			t.Steps = append(t.Steps, s)
		}
	}
	if len(t.UserTurns) == 0 {
		if in := lsField(root.Inputs, "input", "question", "query"); in != "" {
			t.UserTurns = []string{in}
		} else if turns := userTurns(messageList(root.Inputs)); len(turns) > 0 {
			t.UserTurns = turns
		}
	}
	langsmithTurns(t)
	langsmithArgs(t)
	if len(t.Steps) == 0 && len(runs) == 0 {
		return nil, errors.New("no runs")
	}
	return t, nil
}

// langsmithArgs gives a tool step whose input is not JSON — LangChain
// records a tool's input as Python shows the dict, {'order_id': 'A42'} —
// the arguments of the call the model proposed for it, which are: the call
// of the same id, else the first call of the same name of the model step
// before it not given already. Rules read arguments as JSON.
func langsmithArgs(t *Trace) {
	var calls []Call // the latest model step's calls not matched yet
	for _, s := range t.Steps {
		switch {
		case s.Kind == KindModel:
			calls = slices.Clone(s.Calls)
		case s.Kind == KindTool:
			i := slices.IndexFunc(calls, func(c Call) bool { return s.CallID != "" && c.ID == s.CallID })
			if i < 0 {
				i = slices.IndexFunc(calls, func(c Call) bool { return c.Name == s.Name })
			}
			if i < 0 {
				continue
			}
			if !json.Valid([]byte(s.Args)) && json.Valid([]byte(calls[i].Args)) {
				s.Args = calls[i].Args
			}
			if s.CallID == "" {
				s.CallID = calls[i].ID
			}
			calls = slices.Delete(calls, i, i+1)
		}
	}
}

// langsmithTimes reads the start and end times of runs.
func langsmithTimes(runs []*lsRun) error {
	for _, r := range runs {
		var err error
		if r.start, err = parseTime(r.StartTime); err != nil {
			return fmt.Errorf("run %s: start_time: %w", r.ID, err)
		}
		if r.end, err = parseTime(r.EndTime); err != nil {
			return fmt.Errorf("run %s: end_time: %w", r.ID, err)
		}
	}
	return nil
}

// langsmithRoot returns the root run of a trace's sorted runs: the first
// without a parent or with the trace's id, else the first.
func langsmithRoot(id string, runs []*lsRun) *lsRun {
	for _, r := range runs {
		if r.ParentRunID == "" || r.ID == id {
			return r
		}
	}
	return runs[0]
}

// langsmithStep returns the step of an llm, tool or retriever run, or nil
// for a run of another type. The user turns a model run saw join
// t.UserTurns when they are more.
func langsmithStep(t *Trace, r *lsRun) *Step {
	s := &Step{Start: r.start, Error: r.Error, Turn: unknownTurn}
	if !r.end.IsZero() && r.end.After(r.start) {
		s.Duration = r.end.Sub(r.start)
	}
	switch r.RunType {
	case "llm":
		langsmithModel(s, r)
		turns := userTurns(messageList(r.Inputs))
		t.UserTurns = longer(t.UserTurns, turns)
		s.Turn = len(turns) - 1
	case "tool":
		langsmithTool(s, r)
	case "retriever":
		langsmithRetrieval(s, r)
	default:
		return nil
	}
	return s
}

// langsmithModel reads an llm run: model, provider, tokens and answer.
func langsmithModel(s *Step, r *lsRun) {
	s.Kind = KindModel
	s.Name = cmp.Or(r.meta("ls_model_name"), anyText(r.Extra.InvocationParams["model"]), anyText(r.Extra.InvocationParams["model_name"]))
	s.Provider = r.meta("ls_provider")
	s.TokensIn, s.TokensOut = r.PromptTokens, r.CompletionTokens
	langsmithAnswer(s, r.Outputs)
}

// langsmithTool reads a tool run: arguments, and the result, with its
// call id and error when the output is a tool message.
func langsmithTool(s *Step, r *lsRun) {
	s.Kind, s.Name = KindTool, r.Name
	s.Args = lsField(r.Inputs, "input", "tool_input", "args")
	out := lsField(r.Outputs, "output")
	if m, ok := readMessage(lsRaw(r.Outputs, "output")); ok && m.Role == roleTool {
		out, s.CallID = m.text(), m.ToolCallID
		if m.Status == "error" && s.Error == "" {
			s.Error = out
		}
	}
	s.Result = out
}

// langsmithRetrieval reads a retriever run: the query, and the ids of the
// documents it returned.
func langsmithRetrieval(s *Step, r *lsRun) {
	s.Kind, s.Name = KindRetrieval, r.Name
	s.Args = lsField(r.Inputs, "query", "input")
	var out struct {
		Documents []struct {
			ID       string                     `json:"id"`
			Metadata map[string]json.RawMessage `json:"metadata"`
		} `json:"documents"`
	}
	json.Unmarshal(r.Outputs, &out)
	for i, d := range out.Documents {
		id := cmp.Or(d.ID, anyText(d.Metadata["id"]), anyText(d.Metadata["source"]), fmt.Sprint(i))
		s.DocIDs = append(s.DocIDs, id)
	}
}

// langsmithTurns sets the turn of the steps that have none. A model input
// carries the conversation so far: a model step's turn is the number of
// user messages its model saw, less one; other steps take the turn of the
// step before them.
func langsmithTurns(t *Trace) {
	turn := len(t.UserTurns) - 1
	if len(t.Steps) > 0 && t.Steps[0].Turn == unknownTurn {
		turn = min(turn, 0)
	}
	for _, s := range t.Steps {
		if s.Turn == unknownTurn || s.Turn < 0 && len(t.UserTurns) > 0 {
			s.Turn = turn
		}
		turn = s.Turn
	}
}

// langsmithAnswer reads an llm run's outputs: LangChain generations, an AI
// message, or an OpenAI completion.
func langsmithAnswer(s *Step, raw json.RawMessage) {
	var out struct {
		Generations json.RawMessage `json:"generations"`
		Choices     []struct {
			Message      json.RawMessage `json:"message"`
			FinishReason string          `json:"finish_reason"`
		} `json:"choices"`
		ID        string          `json:"id"`
		Model     string          `json:"model"`
		LLMOutput json.RawMessage `json:"llm_output"`
	}
	if json.Unmarshal(raw, &out) != nil {
		return
	}
	var msg json.RawMessage
	switch {
	case out.Generations != nil:
		var gens [][]struct {
			Text    string          `json:"text"`
			Message json.RawMessage `json:"message"`
			Info    struct {
				FinishReason string `json:"finish_reason"`
			} `json:"generation_info"`
		}
		if json.Unmarshal(out.Generations, &gens) == nil && len(gens) > 0 && len(gens[0]) > 0 {
			g := gens[0][0]
			s.Result, msg, s.FinishReason = g.Text, g.Message, g.Info.FinishReason
		}
	case len(out.Choices) > 0:
		msg, s.FinishReason = out.Choices[0].Message, out.Choices[0].FinishReason
		s.ResponseID, s.ResponseModel = out.ID, out.Model
	default:
		msg = raw // an AI message itself
	}
	if m, ok := readMessage(msg); ok {
		if text := m.text(); text != "" || s.Result == "" {
			s.Result = text
		}
		s.Calls = m.calls()
		rm := m.ResponseMetadata
		s.FinishReason = cmp.Or(s.FinishReason, rm.FinishReason, rm.StopReason)
		s.ResponseModel = cmp.Or(s.ResponseModel, rm.ModelName, rm.Model)
		s.ResponseID = cmp.Or(s.ResponseID, rm.ID)
	}
}

// lsRaw returns the value under the first present key of an object.
func lsRaw(raw json.RawMessage, keys ...string) json.RawMessage {
	var obj map[string]json.RawMessage
	if json.Unmarshal(raw, &obj) != nil {
		return nil
	}
	for _, k := range keys {
		if v, ok := obj[k]; ok {
			return v
		}
	}
	return nil
}

// lsField returns the text under the first present key of an object, or
// the whole object compacted when there is none.
func lsField(raw json.RawMessage, keys ...string) string {
	if v := lsRaw(raw, keys...); v != nil {
		return anyText(v)
	}
	return anyText(raw)
}
