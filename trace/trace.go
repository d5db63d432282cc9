package trace

import (
	"encoding/json"
	"time"
)

// Kind says what a step was.
type Kind string

// Step kinds.
const (
	KindModel     Kind = "model"     // one model turn: the answer text and the tool calls it proposed
	KindTool      Kind = "tool"      // one tool call: arguments in, result or error out
	KindRetrieval Kind = "retrieval" // a retrieval: document ids and similarity scores
	KindGate      Kind = "gate"      // a rule's decision about an earlier step
	KindMemory    Kind = "memory"    // a memory-card event: extraction, injection, compression
)

// Trace is the record of one agent run: the user turns it served and the
// ordered steps it took. A Trace is plain data; use a Recorder to build one
// from several goroutines.
type Trace struct {
	ID        string     `json:"trace_id"`
	SessionID string     `json:"session_id,omitempty"`
	Route     string     `json:"route,omitempty"` // the intent or flow the run served
	Start     time.Time  `json:"start,omitzero"`
	UserTurns []string   `json:"user_turns,omitempty"`
	Tools     []ToolSpec `json:"tools,omitempty"` // the tools the agent was given: the allow-list
	// Released is how many steps were released from memory before
	// Steps[0] (Recorder.Release): Steps[i].Index is Released+i. A trace
	// saved after a release is a segment of the whole: its steps start at
	// Index Released. Zero for a whole trace.
	Released int               `json:"released,omitempty"`
	Steps    []*Step           `json:"steps"`
	Meta     map[string]string `json:"meta,omitempty"`
	// Pending holds tool calls that were judged and allowed but have not
	// been recorded yet, because they are still running (Recorder.Propose).
	// Rules that count calls (loops, step budgets) count them too, so that
	// concurrent calls in one trace cannot overrun a limit together. It is
	// never serialised and is empty in a finished trace.
	Pending []*Step `json:"-"`

	memo     map[any]any           // see Memo
	stepMemo map[any]map[*Step]any // see StepMemo: by key, then step
}

// Len returns how many steps the trace has recorded, released ones
// included: the Index the next step gets.
func (t *Trace) Len() int { return t.Released + len(t.Steps) }

// Step returns the step whose Index is i, or nil when it was released
// from memory or is not recorded (yet).
func (t *Trace) Step(i int) *Step {
	if i -= t.Released; i < 0 || i >= len(t.Steps) {
		return nil
	}
	return t.Steps[i]
}

// StepMemo is Memo for a value derived from step s alone (its decoded
// arguments, the origins its result holds): the value is dropped when s is
// released from memory (Recorder.Release). key tells apart what different
// rules keep for one step; it should be a comparable value of a type of
// the rule's own, the same for every step.
// Like Memo, it is shared by prefixes and not safe for concurrent use.
func (t *Trace) StepMemo(s *Step, key any, compute func() any) any {
	m := t.stepMemo[key]
	if v, ok := m[s]; ok {
		return v
	}
	v := compute()
	if m == nil {
		if t.stepMemo == nil {
			t.stepMemo = make(map[any]map[*Step]any)
		}
		m = make(map[*Step]any)
		t.stepMemo[key] = m
	}
	m[s] = v
	return v
}

// argsKey keys, in StepMemo, a step's arguments decoded by Args.
type argsKey struct{}

type decodedArgs struct {
	m  map[string]any
	ok bool
}

// Args returns s's arguments decoded as a JSON object, and false when they
// are not one. They are decoded once per trace, for every rule that asks:
// read the map, do not change it. Like StepMemo, it is not safe for
// concurrent use.
func (t *Trace) Args(s *Step) (map[string]any, bool) {
	d := t.StepMemo(s, argsKey{}, func() any {
		m, ok := decodeObject(s.Args)
		return decodedArgs{m, ok}
	}).(decodedArgs)
	return d.m, d.ok
}

// Releaser is implemented by a value kept in a trace's Memo that must hear
// of a release before it happens: an index read from earlier steps brings
// itself up to date with t's steps below n, which are about to leave
// memory, and lets go of what it kept of them. Recorder.Release calls it.
type Releaser interface {
	Release(t *Trace, n int)
}

// Memo returns the value kept in t under key, calling compute to make it
// the first time. Rules keep there what they derive from recorded steps,
// which never change (a step's decoded JSON, its origins), so that judging
// step n does not redo the work for steps 0 to n-1: what is kept per step
// goes in StepMemo, so that it leaves memory with its step. The memo lives as long as t; it is
// not copied by Recorder.Trace and not serialised. Memo is not safe for
// concurrent use: a Recorder calls rules under its lock, and a trace being
// evaluated offline belongs to one goroutine.
func (t *Trace) Memo(key any, compute func() any) any {
	if v, ok := t.memo[key]; ok {
		return v
	}
	v := compute()
	if t.memo == nil {
		t.memo = make(map[any]any)
	}
	t.memo[key] = v
	return v
}

// ToolSpec describes a tool the agent was offered.
type ToolSpec struct {
	Name        string          `json:"name"`
	Description string          `json:"description,omitempty"`
	Parameters  json.RawMessage `json:"parameters,omitempty"` // JSON schema of the arguments
}

// Step is one thing the agent did. Only the fields that fit its Kind are set.
// Step is a pointer so that fields can be added without breaking callers.
type Step struct {
	Index int    `json:"i"`
	Kind  Kind   `json:"kind"`
	Name  string `json:"name,omitempty"` // tool name, model name or rule name
	// Turn is the index into Trace.UserTurns of the last user turn before
	// this step; -1 means before any user turn.
	Turn   int    `json:"turn"`
	CallID string `json:"call_id,omitempty"` // the model's id for a tool call
	Args   string `json:"args,omitempty"`    // tool arguments as the model sent them (usually JSON)
	Result string `json:"result,omitempty"`  // tool result, or the model's answer text
	Error  string `json:"error,omitempty"`
	// Calls are the tool calls a model step proposed.
	Calls []Call `json:"calls,omitempty"`

	// Who answered a model step. Name is the model requested; these say
	// which provider served it ("openai", "anthropic", in the spelling of
	// the OpenTelemetry GenAI conventions' gen_ai.provider.name), the model
	// and response id the provider answered with, and why it stopped
	// ("stop", "tool_calls", "end_turn", as the provider said it). Server
	// is the host, and port when the URL named one, the call was sent to
	// ("api.openai.com", "localhost:11434").
	Provider      string `json:"provider,omitempty"`
	ResponseModel string `json:"response_model,omitempty"`
	ResponseID    string `json:"response_id,omitempty"`
	FinishReason  string `json:"finish_reason,omitempty"`
	Server        string `json:"server,omitempty"`

	Start     time.Time     `json:"start,omitzero"`
	Duration  time.Duration `json:"duration_ns,omitempty"`
	TokensIn  int           `json:"tokens_in,omitempty"`
	TokensOut int           `json:"tokens_out,omitempty"`
	Cost      float64       `json:"cost,omitempty"`

	// Fields read by gates.
	Intent     string  `json:"intent,omitempty"`
	Confidence float64 `json:"confidence,omitempty"`
	// Alternatives are the next most likely intents, best first: what a
	// clarifying question offers the user.
	Alternatives []string  `json:"alternatives,omitempty"`
	DocIDs       []string  `json:"doc_ids,omitempty"`
	Scores       []float64 `json:"scores,omitempty"`
	Citations    []string  `json:"citations,omitempty"`
	Refusal      bool      `json:"refusal,omitempty"`

	// Blocked is set on a tool step that was not executed because of a verdict.
	Blocked bool `json:"blocked,omitempty"`
	// Truncated is set when a field was cut to the recorder's size cap; a
	// cut field ends with TruncationMarker.
	Truncated bool `json:"truncated,omitempty"`
	// InvalidUTF8 is set when Args held invalid UTF-8, which the recorder
	// replaced with U+FFFD.
	InvalidUTF8 bool `json:"invalid_utf8,omitempty"`

	// Source is where an imported step was read from in its input, in the
	// input's own terms: "message 7" (its messages counted from 0), a run
	// or span id. Empty for steps a Recorder recorded.
	Source string `json:"source,omitempty"`

	// Finding is set on gate steps: the decision and the step it judged.
	Finding *Finding `json:"finding,omitempty"`
}

// Call is a tool call proposed by a model step.
type Call struct {
	ID   string `json:"id,omitempty"`
	Name string `json:"name"`
	Args string `json:"args,omitempty"`
}

// Verdict is what a rule decides about a step.
type Verdict string

// Verdicts, from the mildest to the strongest.
const (
	Allow   Verdict = "allow"   // go on
	Retry   Verdict = "retry"   // let the agent try again, with the finding as feedback
	Block   Verdict = "block"   // do not execute the step; the agent is told why
	Clarify Verdict = "clarify" // stop and ask the user a question
	Refuse  Verdict = "refuse"  // answer with the refusal template
	Handoff Verdict = "handoff" // stop and hand the conversation to a human
)

// Strength orders verdicts: when several rules judge one step, the strongest
// wins. The verdicts that end the run (Clarify, Refuse, Handoff) are
// stronger than Block, which only stops the step: a call that is both
// blocked and over the step budget hands the run off. An unknown verdict is
// as strong as Block.
func (v Verdict) Strength() int {
	switch v {
	case Allow, "":
		return 0
	case Retry:
		return 1
	case Clarify:
		return 3
	case Refuse:
		return 4
	case Handoff:
		return 5
	default:
		return 2
	}
}

// Dimension is the health dimension a finding counts against.
type Dimension string

// The five dimensions an agent is scored on.
const (
	Accuracy   Dimension = "accuracy"
	Coherence  Dimension = "coherence"
	Memory     Dimension = "memory"
	Stability  Dimension = "stability"
	Efficiency Dimension = "efficiency"
)

// Severity ranks a finding.
type Severity string

// Severities.
const (
	SeverityInfo     Severity = "info"
	SeverityWarning  Severity = "warning"
	SeverityError    Severity = "error"
	SeverityCritical Severity = "critical"
)

// Finding is a rule's judgement of one step. Rules return findings; the guard
// records each as a gate step, and the ledger stores the violations.
type Finding struct {
	Rule string `json:"rule"`
	Step int    `json:"step"` // index of the judged step
	// Source is the judged step's Step.Source: where the finding is in the
	// input the trace was imported from ("message 7"), set by offline
	// evaluation.
	Source    string    `json:"source,omitempty"`
	Verdict   Verdict   `json:"verdict"`
	Dimension Dimension `json:"dimension"`
	Severity  Severity  `json:"severity"`
	Message   string    `json:"message"`
	// Question is what to ask the user when the verdict is Clarify.
	Question string `json:"question,omitempty"`
	Evidence string `json:"evidence,omitempty"` // the offending arguments or result, size-bounded
	// Facts are what the finding rests on, each a fact of the trace a
	// reviewer can check without opening it: the value judged, where it
	// came from, the user's words that do or do not ask for the call.
	Facts []Fact   `json:"facts,omitempty"`
	Tags  []string `json:"tags,omitempty"` // root-cause tags, for lessons
	// Shadow is set when the guard ran in detect-only mode and did not enforce the verdict.
	Shadow bool `json:"shadow,omitempty"`
}

// Violation is a finding with the identity of the trace it happened in: the
// unit the ledger stores.
type Violation struct {
	Time      time.Time `json:"time"`
	TraceID   string    `json:"trace_id"`
	SessionID string    `json:"session_id,omitempty"`
	Finding
}

// Prefix returns a view of t holding only its first n steps, without copying
// them: the "trace so far" that rules see before step n. The view shares
// t's Memo, since what rules keep there is derived from single steps; when t
// has none yet, the view gets one of its own, which the prefixes taken from
// the view share in turn. t itself is not changed.
//
// n counts released steps too (see Len): it must not be below t.Released.
func (t *Trace) Prefix(n int) *Trace {
	v := *t
	n -= t.Released
	v.Steps = t.Steps[:n:n]
	if v.memo == nil {
		v.memo = make(map[any]any)
	}
	if v.stepMemo == nil {
		v.stepMemo = make(map[any]map[*Step]any)
	}
	return &v
}

// ToolNames returns the names of t.Tools.
func (t *Trace) ToolNames() []string {
	names := make([]string, len(t.Tools))
	for i, s := range t.Tools {
		names[i] = s.Name
	}
	return names
}
