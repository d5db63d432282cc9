package trace

import (
	"bytes"
	"cmp"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"iter"
	"math"
	"net"
	"slices"
	"strconv"
	"strings"
	"time"
)

// ImportOTLP reads OpenTelemetry spans in the OTLP JSON encoding — what an
// OpenTelemetry Collector's file exporter writes, one
// ExportTraceServiceRequest per line, or a single request, and the
// ExportLogsServiceRequests of its log pipeline beside them — and yields one
// Trace per trace id, in the order the ids first appear. Spans that follow
// the GenAI semantic conventions become steps, by gen_ai.operation.name:
// "chat", "text_completion" and "generate_content" model steps,
// "execute_tool" tool steps, "retrieval" retrieval steps; other spans (HTTP,
// database, "invoke_agent") give the trace its identity but no step.
// gen_ai.evaluation.result events, as span events or as log events
// parented to the span (in resourceLogs requests of the same input), become
// gate steps after the step they judged.
//
// What package trace/otelexport exports comes back whole when it was
// exported with content (Options.RecordContent; tool arguments and results,
// answers and user turns are content): the agentguard.* attributes give
// each step its place, turn and flags, so that evaluating the import finds
// what evaluating the original does. Spans of other instrumentations are
// ordered by start time; their user turns come from the chat spans'
// gen_ai.input.messages, when recorded, and gen_ai.system stands in for
// gen_ai.provider.name.
//
// The input is read whole (at most DefaultMaxImport bytes), since a trace's
// spans may be spread over the file. A value that cannot be read — not
// JSON, a key given twice, a span without a trace id — is yielded as a
// *ParseError naming its line, and the other values still import.
func ImportOTLP(r io.Reader, source string) iter.Seq2[*Trace, error] {
	if source == "" {
		source = "otlp"
	}
	return func(yield func(*Trace, error) bool) {
		docs, readErr := readDocs(r, source)
		var order []string
		byTrace := map[string][]*otlpSpan{}
		var logs []otlpLogRecord
		for _, d := range docs {
			var req otlpRequest
			if err := unmarshal(d.raw, &req); err != nil {
				if !yield(nil, &ParseError{Source: source, Line: d.line, Err: jsonError(err)}) {
					return
				}
				continue
			}
			for _, rl := range req.ResourceLogs {
				for _, sl := range rl.ScopeLogs {
					logs = append(logs, sl.LogRecords...)
				}
			}
			if req.ResourceSpans == nil {
				if req.ResourceLogs == nil && !yield(nil, &ParseError{Source: source, Line: d.line, Err: errors.New(`no "resourceSpans" or "resourceLogs" key: not an OTLP JSON trace or logs request`)}) {
					return
				}
				continue
			}
			var bad error
			for _, rs := range req.ResourceSpans {
				for _, ss := range rs.ScopeSpans {
					for i := range ss.Spans {
						sp := &ss.Spans[i]
						if sp.TraceID == "" {
							bad = fmt.Errorf("span %q has no traceId", sp.Name)
							continue
						}
						if _, ok := byTrace[sp.TraceID]; !ok {
							order = append(order, sp.TraceID)
						}
						byTrace[sp.TraceID] = append(byTrace[sp.TraceID], sp)
					}
				}
			}
			if bad != nil && !yield(nil, &ParseError{Source: source, Line: d.line, Err: bad}) {
				return
			}
		}
		attachLogEvents(byTrace, logs)
		yieldTraces(yield, source, order, func(id string) (*Trace, error) { return otlpTrace(id, byTrace[id]) }, readErr)
	}
}

// attachLogEvents adds each log-based event of logs to the span it is
// parented to, as the span event it would have been: the conventions
// define gen_ai.evaluation.result as a log event, which a collector writes
// apart from the spans. An event whose span is not among the spans is
// left out, as is a log record that is no event.
func attachLogEvents(byTrace map[string][]*otlpSpan, logs []otlpLogRecord) {
	type spanKey struct{ trace, span string }
	var spans map[spanKey]*otlpSpan
	for _, lr := range logs {
		name := lr.eventName()
		if name == "" || lr.TraceID == "" {
			continue
		}
		if spans == nil {
			spans = map[spanKey]*otlpSpan{}
			for id, ss := range byTrace {
				for _, sp := range ss {
					if k := (spanKey{id, sp.SpanID}); spans[k] == nil {
						spans[k] = sp
					}
				}
			}
		}
		if sp := spans[spanKey{lr.TraceID, lr.SpanID}]; sp != nil {
			sp.Events = append(sp.Events, otlpEvent{Time: lr.Time, Name: name, Attributes: lr.Attributes})
		}
	}
}

// eventName is the name of a log-based event, "" for a log record that is
// none.
func (lr *otlpLogRecord) eventName() string {
	return cmp.Or(lr.EventName, attrsOf(lr.Attributes).str("event.name")) // before eventName had a field
}

// SniffOTLP reports whether head, the first bytes of an input, looks like
// OTLP JSON: an object whose first key is "resourceSpans" or
// "resourceLogs".
func SniffOTLP(head []byte) bool {
	k := firstKey(head)
	return k == "resourceSpans" || k == "resourceLogs"
}

// firstKey returns the first key of the JSON object head starts with, or
// "" when it does not start with one.
func firstKey(head []byte) string {
	head = bytes.TrimLeft(bytes.TrimPrefix(head, []byte("\uFEFF")), " \t\r\n")
	if len(head) == 0 || head[0] != '{' {
		return ""
	}
	dec := json.NewDecoder(bytes.NewReader(head))
	if _, err := dec.Token(); err != nil {
		return ""
	}
	k, err := dec.Token()
	if err != nil {
		return ""
	}
	s, _ := k.(string)
	return s
}

// The OTLP JSON shapes, as far as the importer reads them. Integers may be
// strings or numbers, enums names or numbers.
type (
	otlpRequest struct {
		ResourceSpans []struct {
			ScopeSpans []struct {
				Spans []otlpSpan `json:"spans"`
			} `json:"scopeSpans"`
		} `json:"resourceSpans"`
		ResourceLogs []struct {
			ScopeLogs []struct {
				LogRecords []otlpLogRecord `json:"logRecords"`
			} `json:"scopeLogs"`
		} `json:"resourceLogs"`
	}
	otlpLogRecord struct {
		Time       json.RawMessage `json:"timeUnixNano"`
		EventName  string          `json:"eventName"`
		TraceID    string          `json:"traceId"`
		SpanID     string          `json:"spanId"`
		Attributes []otlpKV        `json:"attributes"`
	}
	otlpSpan struct {
		TraceID      string          `json:"traceId"`
		SpanID       string          `json:"spanId"`
		ParentSpanID string          `json:"parentSpanId"`
		Name         string          `json:"name"`
		Start        json.RawMessage `json:"startTimeUnixNano"`
		End          json.RawMessage `json:"endTimeUnixNano"`
		Attributes   []otlpKV        `json:"attributes"`
		Events       []otlpEvent     `json:"events"`
		Status       struct {
			Code    json.RawMessage `json:"code"`
			Message string          `json:"message"`
		} `json:"status"`
	}
	otlpEvent struct {
		Time       json.RawMessage `json:"timeUnixNano"`
		Name       string          `json:"name"`
		Attributes []otlpKV        `json:"attributes"`
	}
	otlpKV struct {
		Key   string  `json:"key"`
		Value otlpAny `json:"value"`
	}
	otlpAny struct {
		String *string         `json:"stringValue"`
		Bool   *bool           `json:"boolValue"`
		Int    json.RawMessage `json:"intValue"`
		Double json.RawMessage `json:"doubleValue"`
		Array  *struct {
			Values []otlpAny `json:"values"`
		} `json:"arrayValue"`
	}
)

// attrs is a span's or event's attributes by key.
type attrs map[string]otlpAny

func attrsOf(kvs []otlpKV) attrs {
	m := make(attrs, len(kvs))
	for _, kv := range kvs {
		m[kv.Key] = kv.Value
	}
	return m
}

func (a attrs) str(k string) string {
	v, ok := a[k]
	switch {
	case !ok:
		return ""
	case v.String != nil:
		return *v.String
	case v.Int != nil:
		return strings.Trim(string(v.Int), `"`)
	}
	return ""
}

func (a attrs) int(k string) (int, bool) {
	v, ok := a[k]
	if !ok {
		return 0, false
	}
	raw := v.Int
	if raw == nil && v.String != nil {
		raw = json.RawMessage(*v.String)
	}
	n, err := strconv.Atoi(strings.Trim(string(raw), `"`))
	return n, err == nil
}

func (a attrs) float(k string) float64 {
	v := a[k]
	if v.Double != nil {
		f, _ := strconv.ParseFloat(strings.Trim(string(v.Double), `"`), 64)
		return f
	}
	n, _ := a.int(k)
	return float64(n)
}

func (a attrs) bool(k string) bool { v := a[k]; return v.Bool != nil && *v.Bool }

func (a attrs) strs(k string) []string {
	v := a[k]
	if v.Array == nil {
		return nil
	}
	out := make([]string, 0, len(v.Array.Values))
	for _, e := range v.Array.Values {
		if e.String != nil {
			out = append(out, *e.String)
		}
	}
	return out
}

// unixNano reads an OTLP timestamp: a decimal string or number of
// nanoseconds since the epoch; zero means unset.
func unixNano(raw json.RawMessage) time.Time {
	n, err := strconv.ParseUint(strings.Trim(string(bytes.TrimSpace(raw)), `"`), 10, 64)
	if err != nil || n == 0 || n > math.MaxInt64 {
		return time.Time{}
	}
	return time.Unix(0, int64(n)).UTC()
}

// otlpItem is a step made from a span or an event, with where it goes.
type otlpItem struct {
	s      *Step
	key    int       // the original index, or the judged step's for a gate
	gate   int       // 0 for a step; 1+ its order for a gate after its key
	start  time.Time // to order spans that carry no index
	judged *Step     // a gate's judged step, when it has a span
	run    bool      // a gate on the agent span: about a memory step or the run
}

// genAI message schema, as gen_ai.input.messages and gen_ai.output.messages
// hold it.
type genAIMessage struct {
	Role  string `json:"role"`
	Parts []struct {
		Type      string          `json:"type"`
		Content   json.RawMessage `json:"content"`
		ID        string          `json:"id"`
		Name      string          `json:"name"`
		Arguments json.RawMessage `json:"arguments"`
		Response  json.RawMessage `json:"response"`
	} `json:"parts"`
	FinishReason string `json:"finish_reason"`
}

func genAIMessages(s string) []genAIMessage {
	var msgs []genAIMessage
	if s == "" || json.Unmarshal([]byte(s), &msgs) != nil {
		return nil
	}
	return msgs
}

func (m genAIMessage) text() string {
	var b strings.Builder
	for _, p := range m.Parts {
		if p.Type == "text" {
			b.WriteString(anyText(p.Content))
		}
	}
	return b.String()
}

// otlpTrace builds the trace of one trace id from its spans.
func otlpTrace(id string, spans []*otlpSpan) (*Trace, error) {
	t := &Trace{ID: id, Steps: []*Step{}}
	items, root, indexed := otlpSpanItems(t, spans)
	if root != nil {
		var rootIndexed bool
		items, rootIndexed = otlpRoot(t, id, root, items)
		indexed = indexed && rootIndexed
	}
	if len(t.UserTurns) == 0 {
		t.UserTurns = otlpChatUserTurns(items)
	}
	if indexed {
		otlpOrderByIndex(items)
	} else {
		items = otlpOrderByStart(items)
	}
	otlpNumber(t, items)
	otlpFillTurns(t)
	if len(t.Steps) == 0 && root == nil {
		return nil, errors.New("no GenAI span (gen_ai.operation.name)")
	}
	if t.Start.IsZero() && len(t.Steps) > 0 {
		t.Start = t.Steps[0].Start
	}
	return t, nil
}

// otlpSpanItems reads the step spans of a trace, in span order, each
// followed by the gates of its evaluation events, and the session id into
// t. It returns the invoke_agent span that is the trace's root, if any,
// and whether every step span carries its original index.
func otlpSpanItems(t *Trace, spans []*otlpSpan) (items []otlpItem, root *otlpSpan, indexed bool) {
	indexed = true
	for _, sp := range spans {
		a := attrsOf(sp.Attributes)
		op := a.str("gen_ai.operation.name")
		if op == "invoke_agent" && (root == nil || sp.ParentSpanID == "") {
			root = sp
		}
		if v := a.str("gen_ai.conversation.id"); v != "" && t.SessionID == "" {
			t.SessionID = v
		}
		s := otlpStep(t, sp, a, op)
		if s == nil {
			continue
		}
		it := otlpItem{s: s, start: s.Start}
		if n, ok := a.int("agentguard.step"); ok {
			it.key = n
		} else {
			indexed = false
		}
		items = append(items, it)
		for i, ev := range sp.Events {
			if ev.Name == "gen_ai.evaluation.result" {
				items = append(items, otlpItem{s: otlpGate(ev), key: it.key, gate: 1 + i, start: unixNano(ev.Time), judged: s})
			}
		}
	}
	return items, root, indexed
}

// otlpStep returns the step of a span of operation op — a model, tool or
// retrieval step — or nil for a span of another operation. A tool
// description it carries joins t.Tools.
func otlpStep(t *Trace, sp *otlpSpan, a attrs, op string) *Step {
	s := &Step{Start: unixNano(sp.Start), Turn: unknownTurn}
	if end := unixNano(sp.End); !end.IsZero() && !s.Start.IsZero() && end.After(s.Start) {
		s.Duration = end.Sub(s.Start)
	}
	switch op {
	case "chat", "text_completion", "generate_content":
		otlpModel(s, a)
	case "execute_tool":
		otlpTool(s, a)
		if d := a.str("gen_ai.tool.description"); d != "" {
			t.Tools = addToolSpec(t.Tools, ToolSpec{Name: s.Name, Description: d})
		}
	case "retrieval":
		otlpRetrieval(s, a)
	default:
		return nil
	}
	otlpCommon(s, a, sp)
	return s
}

// otlpTool reads an execute_tool span.
func otlpTool(s *Step, a attrs) {
	s.Kind, s.Name, s.CallID = KindTool, a.str("gen_ai.tool.name"), a.str("gen_ai.tool.call.id")
	s.Args, s.Result, s.Blocked = a.str("gen_ai.tool.call.arguments"), a.str("gen_ai.tool.call.result"), a.bool("agentguard.blocked")
}

// otlpRetrieval reads a retrieval span: the query, and the ids and scores
// of the documents.
func otlpRetrieval(s *Step, a attrs) {
	s.Kind, s.Name, s.Args = KindRetrieval, a.str("gen_ai.data_source.id"), a.str("gen_ai.retrieval.query.text")
	var docs []struct {
		ID    string   `json:"id"`
		Score *float64 `json:"score"`
	}
	if json.Unmarshal([]byte(a.str("gen_ai.retrieval.documents")), &docs) == nil {
		for _, d := range docs {
			score := 0.0 // the exporter leaves out scores that are not numbers
			if d.Score != nil {
				score = *d.Score
			}
			s.DocIDs, s.Scores = append(s.DocIDs, d.ID), append(s.Scores, score)
		}
	}
}

// otlpRoot reads the invoke_agent span into t — the trace's id, route,
// start, tools and user turns — and appends to items the gates and steps
// of its events. It reports whether every event carries its step index.
func otlpRoot(t *Trace, id string, root *otlpSpan, items []otlpItem) ([]otlpItem, bool) {
	a := attrsOf(root.Attributes)
	t.ID = cmp.Or(a.str("agentguard.trace_id"), id)
	t.Route = a.str("agentguard.route")
	t.Start = unixNano(root.Start)
	for _, name := range a.strs("agentguard.tools") {
		t.Tools = addToolSpec(t.Tools, ToolSpec{Name: name})
	}
	t.Tools = otlpToolDefinitions(t.Tools, a.str("gen_ai.tool.definitions"))
	t.UserTurns = genAIUserTurns(a.str("gen_ai.input.messages"))
	indexed := true
	for i, ev := range root.Events {
		ea := attrsOf(ev.Attributes)
		n, ok := ea.int("agentguard.step")
		if !ok {
			indexed = false
		}
		switch ev.Name {
		case "gen_ai.evaluation.result":
			items = append(items, otlpItem{s: otlpGate(ev), key: n, gate: 1 + i, start: unixNano(ev.Time), run: true})
		case "agentguard.memory", "agentguard.step":
			s := otlpEventStep(ev, ea)
			items = append(items, otlpItem{s: s, key: n, start: s.Start})
		}
	}
	return items, indexed
}

// otlpToolDefinitions adds to specs the tools of gen_ai.tool.definitions,
// defs, when it is a JSON array of them.
func otlpToolDefinitions(specs []ToolSpec, defs string) []ToolSpec {
	var ds []struct {
		Name        string          `json:"name"`
		Description string          `json:"description"`
		Parameters  json.RawMessage `json:"parameters"`
	}
	if json.Unmarshal([]byte(defs), &ds) != nil {
		return specs
	}
	for _, d := range ds {
		spec := ToolSpec{Name: d.Name, Description: d.Description}
		if p := bytes.TrimSpace(d.Parameters); len(p) > 0 && string(p) != "null" {
			var b bytes.Buffer
			if json.Compact(&b, p) == nil {
				spec.Parameters = b.Bytes()
			}
		}
		specs = addToolSpec(specs, spec)
	}
	return specs
}

// otlpEventStep reads an agentguard.memory or agentguard.step event of the
// agent span, whose attributes are a, as the step it records.
func otlpEventStep(ev otlpEvent, a attrs) *Step {
	return &Step{Kind: Kind(cmp.Or(a.str("agentguard.step.kind"), string(KindMemory))), Name: a.str("agentguard.step.name"),
		Args: a.str("agentguard.step.args"), Result: a.str("agentguard.step.result"), Error: a.str("agentguard.step.error"),
		Truncated: a.bool("agentguard.truncated"), Start: unixNano(ev.Time), Turn: unknownTurn}
}

// genAIUserTurns returns the text of the user messages of msgs, a
// gen_ai.input.messages value.
func genAIUserTurns(msgs string) []string {
	var turns []string
	for _, m := range genAIMessages(msgs) {
		if m.Role == "user" {
			turns = append(turns, m.text())
		}
	}
	return turns
}

// otlpChatUserTurns returns the user turns of the longest chat input
// among the model steps of items: how other instrumentations record them.
func otlpChatUserTurns(items []otlpItem) []string {
	var longest []string
	for _, it := range items {
		if in := it.s.Args; it.s.Kind == KindModel && in != "" {
			if turns := genAIUserTurns(in); len(turns) > len(longest) {
				longest = turns
			}
		}
	}
	return longest
}

// otlpOrderByIndex sorts items by their original indexes, each step
// followed by its gates. A finding about the run, not about a step, goes
// where its time puts it: after the last step that started before it.
func otlpOrderByIndex(items []otlpItem) {
	steps := map[int]bool{}
	for _, it := range items {
		if it.gate == 0 {
			steps[it.key] = true
		}
	}
	for i := range items {
		if it := &items[i]; it.run && !steps[it.key] {
			it.key, it.gate = -1, 1<<20+it.gate
			for _, o := range items {
				if o.gate == 0 && !o.start.After(it.start) && o.key > it.key {
					it.key = o.key
				}
			}
		}
	}
	slices.SortStableFunc(items, func(x, y otlpItem) int {
		return cmp.Or(cmp.Compare(x.key, y.key), cmp.Compare(x.gate, y.gate))
	})
}

// otlpOrderByStart returns items in start order, each step followed by
// the gates that judged it, keyed by position; it reuses items' array.
func otlpOrderByStart(items []otlpItem) []otlpItem {
	var steps []otlpItem
	gates := map[*Step][]otlpItem{}
	for _, it := range items {
		if it.judged != nil {
			gates[it.judged] = append(gates[it.judged], it)
		} else {
			steps = append(steps, it)
		}
	}
	slices.SortStableFunc(steps, func(x, y otlpItem) int { return x.start.Compare(y.start) })
	items = items[:0]
	for i, it := range steps {
		it.key, it.gate = i, 0
		items = append(items, it)
		items = append(items, gates[it.s]...)
	}
	return items
}

// otlpNumber appends the steps of the ordered items to t.Steps, numbered;
// a gate's Finding.Step follows its judged step.
func otlpNumber(t *Trace, items []otlpItem) {
	newIndex := map[int]int{}
	for i, it := range items {
		if it.gate == 0 {
			newIndex[it.key] = i
		}
	}
	for i, it := range items {
		s := it.s
		s.Index = i
		if s.Kind == KindModel {
			s.Args = "" // the chat input, read for the user turns: a model step has no arguments
		}
		if f := s.Finding; f != nil {
			if it.judged != nil {
				f.Step, s.Turn = it.judged.Index, it.judged.Turn
			} else if j, ok := newIndex[f.Step]; ok && !(it.run && it.gate >= 1<<20) {
				f.Step = j
			} else if f.Step >= 0 {
				f.Step = i // a finding about the run that names itself
			}
		}
		t.Steps = append(t.Steps, s)
	}
}

// otlpFillTurns gives a step without a turn (a memory step, a tool span of
// another instrumentation) the turn of the step after it, or, last, of the
// step before.
func otlpFillTurns(t *Trace) {
	next := unknownTurn
	for i := len(t.Steps) - 1; i >= 0; i-- {
		if s := t.Steps[i]; s.Turn == unknownTurn {
			s.Turn = next
		} else {
			next = s.Turn
		}
	}
	prev := len(t.UserTurns) - 1
	for _, s := range t.Steps {
		if s.Turn == unknownTurn {
			s.Turn = prev
		}
		prev = s.Turn
	}
}

// otlpModel reads a chat span.
func otlpModel(s *Step, a attrs) {
	s.Kind = KindModel
	s.Name = a.str("gen_ai.request.model")
	s.Provider = cmp.Or(a.str("gen_ai.provider.name"), a.str("gen_ai.system"))
	s.ResponseModel, s.ResponseID = a.str("gen_ai.response.model"), a.str("gen_ai.response.id")
	if host := a.str("server.address"); host != "" {
		s.Server = host
		if port, ok := a.int("server.port"); ok && port > 0 {
			s.Server = net.JoinHostPort(host, strconv.Itoa(port))
		}
	}
	if fr := a.strs("gen_ai.response.finish_reasons"); len(fr) > 0 {
		s.FinishReason = fr[0]
	}
	in, _ := a.int("gen_ai.usage.input_tokens")
	out, _ := a.int("gen_ai.usage.output_tokens")
	s.TokensIn, s.TokensOut = in, out
	s.Refusal, s.Citations = a.bool("agentguard.refusal"), a.strs("agentguard.citations")
	if outs := genAIMessages(a.str("gen_ai.output.messages")); len(outs) > 0 {
		for _, m := range outs {
			s.Result += m.text()
			for _, p := range m.Parts {
				if p.Type == "tool_call" {
					s.Calls = append(s.Calls, Call{ID: p.ID, Name: p.Name, Args: anyText(p.Arguments)})
				}
			}
		}
	} else {
		for _, name := range a.strs("agentguard.tool_calls") {
			s.Calls = append(s.Calls, Call{Name: name})
		}
	}
	s.Args = a.str("gen_ai.input.messages") // read for user turns, then dropped
	if s.Turn == unknownTurn && s.Args != "" {
		users := 0
		for _, m := range genAIMessages(s.Args) {
			if m.Role == "user" {
				users++
			}
		}
		s.Turn = users - 1
	}
}

// unknownTurn marks a step whose turn is not known yet.
const unknownTurn = -2

// otlpCommon reads what every step span may carry.
func otlpCommon(s *Step, a attrs, sp *otlpSpan) {
	if n, ok := a.int("agentguard.turn"); ok {
		s.Turn = n
	}
	s.Cost = a.float("agentguard.cost")
	s.Intent, s.Confidence, s.Alternatives = a.str("agentguard.intent"), a.float("agentguard.confidence"), a.strs("agentguard.alternatives")
	s.Truncated = a.bool("agentguard.truncated")
	if s.Kind != KindTool {
		s.Blocked = a.bool("agentguard.blocked")
	}
	// A failed operation has status Error, or (instrumentations that set
	// no status) error.type, which the conventions set only on failure.
	code := strings.Trim(string(sp.Status.Code), `"`)
	if code == "2" || code == "STATUS_CODE_ERROR" || a.str("error.type") != "" {
		s.Error = cmp.Or(sp.Status.Message, a.str("error.type"), "error")
	}
}

// otlpGate reads a gen_ai.evaluation.result event as a gate step; its
// Finding.Step is the judged step's original index until renumbered.
func otlpGate(ev otlpEvent) *Step {
	a := attrsOf(ev.Attributes)
	n, _ := a.int("agentguard.step")
	f := &Finding{
		Rule: a.str("gen_ai.evaluation.name"), Step: n, Verdict: Verdict(a.str("gen_ai.evaluation.score.label")),
		Dimension: Dimension(a.str("agentguard.dimension")), Severity: Severity(a.str("agentguard.severity")),
		Message: a.str("gen_ai.evaluation.explanation"), Tags: a.strs("agentguard.tags"), Shadow: a.bool("agentguard.shadow"),
		Evidence: a.str("agentguard.evidence"), Question: a.str("agentguard.question"),
	}
	if facts := a.str("agentguard.facts"); facts != "" {
		if json.Unmarshal([]byte(facts), &f.Facts) != nil {
			f.Facts = nil // facts that do not decode are dropped: the finding stands on its message
		}
	}
	return &Step{Kind: KindGate, Name: f.Rule, Start: unixNano(ev.Time), Finding: f}
}

// addToolSpec adds spec to specs, or completes the one of the same name.
func addToolSpec(specs []ToolSpec, spec ToolSpec) []ToolSpec {
	for i := range specs {
		if specs[i].Name == spec.Name {
			specs[i].Description = cmp.Or(specs[i].Description, spec.Description)
			if specs[i].Parameters == nil {
				specs[i].Parameters = spec.Parameters
			}
			return specs
		}
	}
	return append(specs, spec)
}

// ImportOTLPFindings reads the gate decisions that package
// trace/otelexport sends as gen_ai.evaluation.result log events, in the
// OTLP JSON encoding a collector's file exporter writes (one
// ExportLogsServiceRequest per line, or whole), and yields them as the
// violations the guard's ledger received, in the order they appear: the
// finding, its time (the event's), and the trace and session ids
// (agentguard.trace_id and gen_ai.conversation.id, else the record's trace
// id). So the findings of every replica of an agent, collected by one
// collector, read as one ledger. Other log records, and trace requests in
// the same input, are skipped; a value that cannot be read is yielded as a
// *ParseError naming its line, and the others still import.
func ImportOTLPFindings(r io.Reader, source string) iter.Seq2[Violation, error] {
	if source == "" {
		source = "otlp"
	}
	return func(yield func(Violation, error) bool) {
		docs, readErr := readDocs(r, source)
		for _, d := range docs {
			var req otlpRequest
			if err := unmarshal(d.raw, &req); err != nil {
				if !yield(Violation{}, &ParseError{Source: source, Line: d.line, Err: jsonError(err)}) {
					return
				}
				continue
			}
			for _, rl := range req.ResourceLogs {
				for _, sl := range rl.ScopeLogs {
					for i := range sl.LogRecords {
						lr := &sl.LogRecords[i]
						if lr.eventName() != "gen_ai.evaluation.result" {
							continue
						}
						a := attrsOf(lr.Attributes)
						g := otlpGate(otlpEvent{Time: lr.Time, Attributes: lr.Attributes})
						v := Violation{Time: g.Start, TraceID: cmp.Or(a.str("agentguard.trace_id"), lr.TraceID),
							SessionID: a.str("gen_ai.conversation.id"), Finding: *g.Finding}
						if !yield(v, nil) {
							return
						}
					}
				}
			}
		}
		if readErr != nil {
			yield(Violation{}, readErr)
		}
	}
}
