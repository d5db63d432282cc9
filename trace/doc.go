/*
Package trace is the step/trace model that every other agentguard package
speaks: a [Trace] is the record of one agent run, the user turns it served
and the ordered [Step] values it took. The guard records each model turn,
tool call and rule decision into a trace as it happens; the memory card
reports its extractions, injections and compressions into it; the ledger
stores the [Violation] values cut from its gate steps; and replay reads
traces back to run rules offline. This package imports only the standard
library, so that any of them can use it.

# Recording

A [Recorder] builds a trace from several goroutines. [Recorder.Add] sets a
step's Index and Turn, caps its Args and Result at
[RecorderOptions.MaxField] bytes (see [Truncate]) and returns the index;
[Recorder.UserTurn] appends a user message; [Recorder.Trace] returns a copy
of the trace so far.

	rec := trace.NewRecorder("run-1", "session-9", "refund", trace.RecorderOptions{})
	rec.UserTurn("Where is my order 1042?")
	rec.Add(&trace.Step{Kind: trace.KindTool, Name: "order_status", Args: `{"id":1042}`, Result: "shipped"})
	err := trace.NewWriter(f).Write(rec.Trace())

[EstimateTokens] gives a network-free token estimate for budgets and costs.

# The JSONL format

A trace file holds one trace per line, as a JSON object in UTF-8 ending in
"\n". [Writer] writes it and [Reader] reads it. The first key is "v", the
format version; the others are the fields of [Trace], under the keys below.
Keys marked "omitted when empty" are left out when their value is the zero
value; times are RFC 3339 strings with nanoseconds ("2025-06-01T09:30:00.5Z"),
durations are integer nanoseconds, and text is written without HTML
escaping. A line looks like this (wrapped here):

	{"v":1,"trace_id":"run-1","session_id":"session-9","route":"refund",
	 "start":"2025-06-01T09:30:00Z","user_turns":["Where is my order 1042?"],
	 "steps":[{"i":0,"kind":"tool","name":"order_status","turn":0,
	           "args":"{\"id\":1042}","result":"shipped"}]}

The line object:

	v             number     the format version: always 1 (see Versions)
	trace_id      string     Trace.ID: the run's id; always present
	session_id    string     Trace.SessionID: the conversation the run belongs to; omitted when empty
	route         string     Trace.Route: the intent or flow the run served; omitted when empty
	start         time       Trace.Start: when the run started; omitted when zero
	user_turns    [string]   Trace.UserTurns: the user messages, in order; Step.Turn indexes them; omitted when empty
	tools         [object]   Trace.Tools: the tools the agent was given, the allow-list (tool objects below); omitted when empty
	released      number     Trace.Released: steps released from memory before the first one here (a segment of a session that never ends); omitted when 0
	steps         [object]   Trace.Steps: the steps, in order (step objects below), "i" counting from released; always present, [] when none
	meta          object     Trace.Meta: free string-to-string metadata; omitted when empty

A tool object ([ToolSpec]), a tool the agent was offered:

	name          string     the tool's name
	description   string     what the tool does, as told to the model; omitted when empty
	parameters    JSON       the JSON schema of its arguments, as a JSON value, not a string; omitted when empty

A step object ([Step]), one thing the agent did; only the keys that fit its
kind are set, and all but "i", "kind" and "turn" are omitted when empty:

	i             int        Step.Index: the step's position in steps; must equal it
	kind          string     Step.Kind: "model", "tool", "retrieval", "gate" or "memory" (see Kind)
	name          string     Step.Name: the tool name, model name or rule name
	turn          int        Step.Turn: the index into user_turns of the last user turn before the step; -1 before any
	call_id       string     Step.CallID: the model's id for a tool call
	args          string     Step.Args: tool arguments as the model sent them, usually JSON text in a string
	result        string     Step.Result: the tool's result, or the model's answer text
	error         string     Step.Error: the error the step ended with
	calls         [object]   Step.Calls: the tool calls a model step proposed (call objects below)
	provider      string     Step.Provider: who served a model step ("openai", "anthropic"; gen_ai.provider.name)
	response_model string    Step.ResponseModel: the model that answered, as the provider named it
	response_id   string     Step.ResponseID: the provider's id for the answer
	finish_reason string     Step.FinishReason: why the model stopped ("stop", "tool_calls", "end_turn")
	server        string     Step.Server: the host[:port] a model call was sent to (server.address, server.port)
	start         time       Step.Start: when the step started
	duration_ns   int        Step.Duration: how long it took, in nanoseconds
	tokens_in     int        Step.TokensIn: prompt tokens the step cost
	tokens_out    int        Step.TokensOut: completion tokens the step cost
	cost          number     Step.Cost: what the step cost, in the caller's currency unit
	intent        string     Step.Intent: the intent the step was judged to serve; read by gates
	confidence    number     Step.Confidence: the confidence in that intent or answer; read by gates
	alternatives  [string]   Step.Alternatives: the next most likely intents, best first; read by gates
	doc_ids       [string]   Step.DocIDs: the ids of the documents a retrieval returned
	scores        [number]   Step.Scores: their similarity scores, in the same order
	citations     [string]   Step.Citations: the sources an answer cites; read by gates
	refusal       bool       Step.Refusal: the model's answer is a refusal
	blocked       bool       Step.Blocked: a tool step not executed because of a verdict
	truncated     bool       Step.Truncated: args or result were cut to the recorder's size cap (they end in TruncationMarker)
	invalid_utf8  bool       Step.InvalidUTF8: args held invalid UTF-8, replaced with U+FFFD
	source        string     Step.Source: where an imported step was read from in its input ("message 7")
	finding       object     Step.Finding: on gate steps, the decision and the step it judged (finding object below)

A call object ([Call]), a tool call proposed by a model step:

	id            string     the model's id for the call, matching a tool step's call_id; omitted when empty
	name          string     the tool's name
	args          string     the arguments as the model sent them; omitted when empty

A finding object ([Finding]), a rule's judgement of one step; the first six
keys are always present:

	rule          string     the rule's name
	step          int        the index of the judged step
	verdict       string     what the rule decided: "allow", "retry", "clarify", "refuse", "handoff" or "block" (see Verdict)
	dimension     string     the health dimension it counts against: "accuracy", "coherence", "memory", "stability" or "efficiency"
	severity      string     "info", "warning", "error" or "critical"
	message       string     what is wrong, for people and for the agent's retry feedback
	question      string     what to ask the user when the verdict is "clarify"; omitted when empty
	evidence      string     the offending arguments or result, size-bounded; omitted when empty
	tags          [string]   root-cause tags, for lessons; omitted when empty
	shadow        bool       the guard ran in detect-only mode and did not enforce the verdict; omitted when false

# Versions

Every line starts with "v":1. A [Reader] rejects a line whose "v" is
missing or is anything but 1 with an error wrapping [ErrVersion], and goes
on with the next line. Adding a key does not change the version: readers
ignore keys they do not know, so older readers still read newer files
(without the new fields). Removing a key, or changing the type or meaning
of one, makes a new version.

A reader also rejects a line that is not one JSON object, is longer than
[Reader.MaxLine], has a null step or a step whose "i" is not its position
([ErrInvalid]). Blank lines are skipped. Errors are [*ParseError] values
naming the line: "trace: runs.jsonl:3: unsupported version 2".

Writing is lossless: a trace read from a line written by [Writer] writes
back to the same bytes.

# Importing OpenAI chat logs

[ImportOpenAI] reads chat logs in the shape of OpenAI's chat completions
API and its fine-tuning files, one conversation per line:

	{"id":"c1","messages":[{"role":"user","content":"..."}, ...],"tools":[...]}

and yields one trace per line, mapped like this:

  - "id" (a string or a number) becomes Trace.ID; without it the id is
    "SOURCE:LINE", with SOURCE "openai" when no source name was given.
  - "session_id" and "route" become Trace.SessionID and Trace.Route;
    "model" becomes the Name of the model steps; "metadata" becomes
    Trace.Meta, string values as they are and other values as compact JSON.
  - "tools" ({"type":"function","function":{"name","description",
    "parameters"}}, or the flat form without "function") and the legacy
    "functions" become Trace.Tools, with the parameters schema compacted.
  - A message's text is its "content" when that is a string; the text parts
    of it run together when it is an array of parts (other parts, such as
    images, are skipped); "" when it is null. A "refusal" string or
    refusal part is added to the text and sets Step.Refusal.
  - "system" and "developer" messages are joined, with a blank line between
    them, into Trace.Meta["system"], replacing any "system" metadata.
  - "user" messages are appended to Trace.UserTurns.
  - An "assistant" message becomes one KindModel step: Result is its text,
    Calls its "tool_calls" ({"id","type":"function","function":{"name",
    "arguments"}}) and then its legacy "function_call". Arguments that are
    a JSON string are kept as they are; any other JSON value is compacted.
    One KindTool step follows for each call, with its Name, CallID and
    Args.
  - A "tool" or legacy "function" message fills in the Result of the tool
    step it answers: the unanswered call with the same "tool_call_id", or,
    when it has none, the oldest unanswered call. The importer does not
    guess errors from the text: an error message from a tool stays in
    Result, as the model saw it. A tool message that answers no call
    becomes a KindTool step of its own, with Name from its "name", and
    Error "unmatched tool result", so that no data is dropped. A call that
    is never answered keeps an empty Result.
  - Every step's Turn is the index of the last user turn before it (-1
    before any), and its Index its position. Other keys are ignored.

A line that is not such an object, has no "messages", or has a message
with an unknown role yields a [*ParseError] for that line, and the import
goes on with the next one.

# Importing other tools' traces

Four more importers read what other tools record; each yields traces and
*ParseError values like ImportOpenAI, refuses a JSON object that names a
key twice ([ErrDuplicateKey]), and has a cheap predicate that recognises
its format from the first bytes of an input, for auto-detection:

	ImportOTLP       SniffOTLP       OTLP JSON spans (a collector's file exporter), GenAI conventions
	ImportAnthropic  SniffAnthropic  Anthropic Messages API logs: request (and response), one per line
	ImportLangSmith  SniffLangSmith  LangSmith runs: an array, one per line, or nested child_runs
	ImportLangfuse   SniffLangfuse   Langfuse traces with their observations, or bare observations

ImportOTLP reads back what package trace/otelexport exports: with content
recorded, evaluating the import finds what evaluating the original does.
The functions' documentation gives each mapping; testdata holds a sample
and the traces it imports to for each.

# Example

Convert a chat log to a trace file:

	in, _ := os.Open("chats.jsonl")
	out, _ := os.Create("chats.trace.jsonl")
	w := trace.NewWriter(out)
	for t, err := range trace.ImportOpenAI(in, "chats.jsonl") {
		if err != nil {
			log.Print(err) // trace: chats.jsonl:7: message 2: unknown role "bot"
			continue
		}
		if err := w.Write(t); err != nil {
			log.Fatal(err)
		}
	}

and read it back:

	r := trace.NewReader(out)
	r.Source = "chats.trace.jsonl"
	for t, err := range r.All() {
		...
	}
*/
package trace
