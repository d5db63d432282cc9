// Package guard puts guard rails inside an agent's tool-calling loop.
//
// A Guard holds rules and a ledger sink. It plugs into an agent in one of
// three ways, all sharing the same rules and recording into the same trace:
//
//   - WrapModel returns an llms.Model: each model turn is recorded and its
//     answer judged; a terminal verdict replaces the answer.
//   - WrapTool returns a tools.Tool: each call is judged before it runs,
//     recorded with its result, and a panic in the tool is recovered.
//   - Run drives the loop itself over []llms.MessageContent with
//     llms.WithTools, and can pause for a human (Resume).
//
// The wrappers return what they wrap, so an existing loop or langchaingo's
// agents.Executor keeps working unmodified.
//
// # Rules and verdicts
//
// A Rule is a pure function of the trace so far and a proposed step. Online
// a tool step is judged before the tool runs and a model step after the
// model answered; offline, Evaluate judges every step of a recorded trace
// against the steps before it, so the same rules give the same findings in
// both places. Each finding carries a verdict; the strongest wins, in the
// order of this table (the verdicts that end the run outrank Block):
//
//	verdict  tool step (Run)                       tool step (WrapTool)     model step
//	allow    the tool runs                         the tool runs            the answer stands
//	retry    not run; the model is told to fix it  same, as an observation  asked again (Config.Gates.MaxRetries), then refuse
//	block    not run; the model is told why        same, as an observation  refusal template
//	clarify  not run; Run ends asking the question *Interrupt error         answer replaced by the question
//	refuse   not run; Run ends with the refusal    *Interrupt error         refusal template
//	handoff  not run; Run ends, a human takes over *Interrupt error         handoff message
//
// Whatever the verdict, every tool call the model made gets exactly one
// tool-result message in Run's conversation, so it stays valid for any
// provider. Observations go back with a nil error because agents.Executor
// aborts on tool errors. In shadow mode (Config.Shadow) every rule runs and
// every finding is recorded, but nothing is enforced.
//
// One way reads how a turn ended, whatever drove the loop: Result.Status
// for Run (done, clarify, refused, handoff, paused or failed), and
// OutcomeOf for agents.Executor or a loop of your own, which tells a
// replaced answer from a final one by the trace in the context.
//
// # Built-in rules and gates
//
// All are on by default and tuned by Config, one setting in one place;
// package guard/rules names each and says what it judges. Config.Disable
// leaves findings out by the name they carry (a rule whose every finding is
// disabled does not run); Config.Rules adds your own, made with NewRule or
// any type with Name and Check. The rules themselves live in packages of
// their own under guard/internal, one per family:
//
//   - calls: tool-allow-list, tool-arguments (the tool's JSON schema),
//     loop, max-steps;
//   - gates: intent-confidence (a misread or unsure intent, from
//     Gates.Classifier → Clarify with the top candidates), empty-result (an
//     empty tool result may not become "there are no records" or invented
//     data → Clarify, Retry or Handoff), retrieval-similarity (no or weak
//     retrieval evidence → the refusal, before the model is called),
//     grounding (citations and quoted clause numbers must come from
//     documents retrieved in this trace), value-invariant (amounts ≥ 0,
//     valid dates, JSON answers on JSON routes), and, when Gates.DeadEnds is
//     set, tool-failure;
//   - origins: every value that entered the trace has origins (a user turn,
//     the card, a record field, third-party text); an identifying argument
//     whose only origins are third-party text is injected
//     (injected-argument), an id from nowhere is made up and content about
//     one entity sent to another is flagged (argument-provenance), an
//     answer passing on what only third-party text holds is a warning
//     (untrusted-relay) — judged by origins, never by wording;
//   - authz: destructive writes need the user's request or yes
//     (write-authorization; Gates.Profile ProfileConversational, the
//     default), or, for an agent given a task (ProfileAutonomous), writes
//     the task names; writes that need it wait for the user's explicit yes
//     (confirmation);
//   - claims: an answer may not claim an action that failed, was blocked
//     or never ran (false-claim);
//   - memory.Enforcer, unless the card is off (MemoryOptions.Off): tool
//     calls may not break the constraints on the pinned memory card
//     ("don't text me"); an address that is not the card's asks the user;
//     and an answer may not reach the user by a banned channel ("I'll text
//     you the tracking number") or name a replaced address (memory-answer).
//
// # Evidence, and when a finding interrupts
//
// Every finding carries the facts it rests on (trace.Finding.Facts: the
// value judged, the step and field it came from and what kind of origin
// that is, the user's words that do or do not ask for the call, the
// records involved), so that a reviewer can uphold or reject it without
// opening the trace: `agentguard evaluate -explain FILE` prints them, and
// trace.Finding.Explain renders them. A finding interrupts — blocks a
// call, asks the user, hands off — only when those facts are complete; a
// weaker pattern is a warning (verdict allow, severity warning): recorded,
// sent to the ledger and scored offline, never enforced.
//
//	rule                  enforced when (the facts are complete)                                   a warning when
//	tool-allow-list       the tool is not on the list (block)                                      -
//	tool-arguments        the arguments fail the tool's JSON schema (retry)                        a send with no schema whose arguments
//	                                                                                               are all content: no recipient
//	loop, max-steps       the n-th identical call in a row (block); call n+1 of a run (handoff)    -
//	injected-argument     an identifying argument of a write, or a URL a read fetches, whose       a link, address or IBAN inside a
//	                      every origin is third-party content the user's pointer does not vouch    write's free text that only third-party
//	                      for: not pointed at, two hops away, or for a write not requested (block) text the user never pointed at holds
//	argument-provenance   a write's identifying argument no user turn, card or result holds;       a read's id from nowhere
//	                      content about one record sent to another entity, nothing linking them
//	write-authorization   no user turn asks for the write's action, nor says yes to the agent's    the request names another object;
//	                      proposal of it (block)                                                   more writes than requests
//	confirmation          a write that needs the user's yes without it (clarify)                   -
//	false-claim           the answer claims a call that failed, was blocked or never ran, or, in   the answer, naming no actor, reports
//	                      the first person, an action no call made (retry)                         an effect the user asked for that no call made
//	empty-result          a lookup found nothing for a key no other result holds, and the answer   -
//	                      asserts absence, speaks of it as found, or a write acts on it (clarify)
//	grounding             a citation or clause number no retrieved document holds (retry)          -
//	retrieval-similarity  the retrieval returned nothing, or nothing above the threshold (refuse)  -
//	value-invariant       a negative amount, a date written with digits that is none (retry)       -
//	memory-*              a call by a channel the user banned, outside their window (block); an    -
//	                      address that is not the card's (clarify)
//	memory-answer         the answer, in the agent's voice and not negated, tells the user they    the answer offers or asks to use
//	                      are or will be reached by a channel the card bans (retry), or names      the banned channel
//	                      the address the user replaced and not the new one (clarify)
//	policy checks         require is false on the records the agent fetched (the check's verdict)  require cannot be evaluated: a record never fetched
//	untrusted-relay       -                                                                        the answer passes on a link, account or recommended
//	                                                                                               name only third-party text holds
//
// Package guard/rules says what each rule judges; TestPrecision
// (guard/precision_test.go) measures each rule's flags on legitimate runs,
// per model, and the README quotes its summary.
//
// Every rule reads the guard's tools (Config.Tools, and for a tool no
// policy lists, the lexicon's write verbs) and the guard's lexicon, so that
// what one rule takes for a write, every rule, and the call path (which
// never retries a write), takes for one.
//
// # Language
//
// The words the rules look for — the verbs that make a tool state-changing,
// phrases of absence, denial and affirmation — and every reply the guard
// writes come from Config.Lexicon (package trace/lexicon; English and
// Chinese by default). A reply is in one language, that of the user's
// latest turn: the refusal, the handoff message, the questions the gates
// ask and the observations the model gets for calls that did not run.
// Config.Answers' texts, when set, replace the refusal and handoff message
// in every language.
//
// Tools are annotated by Config.Tools (ToolPolicy: effect, trust,
// confirmation, retrieval, schema, timeout). Every tool and the model run
// under a circuit breaker, a timeout and bounded retries (Config.Resilience),
// with an optional fallback model. A call returns by its timeout or the
// caller's deadline even when the callee ignores its context: tools and the
// model run on a small pool of worker goroutines per guard and are abandoned
// at the deadline (a bounded number, Resilience.MaxAbandoned); tools
// declared ToolPolicy.HonoursContext run on the caller's goroutine. Every
// failure — timeout, panic, empty answer, oversized or invalid result — is a
// finding with the stability dimension. Streamed answers are held until
// they are judged, unless Config.Answers.PassThrough says otherwise; the
// JSON of streamed tool calls never reaches the caller's streaming
// function.
//
// # Offline
//
// Guard.Evaluate scores a recorded trace with the guard's rules, exactly
// as they judged it online (100 minus Config.Evaluation.Penalty per
// violation that got through; a critical one fails it). Package
// guard/replay replays golden cases through a guard, guard/health scores
// them on five dimensions, and guard/conteval evaluates production traces
// continuously.
//
// # Policy files
//
// Package guard/policy reads one YAML or JSON file whose keys are Config's
// (gates.loop_limit is Gates.LoopLimit), plus domain checks written in CEL
// over the records the agent fetched earlier in the trace, the assertions
// of continuous evaluation and the health weights. It is the only package
// that links cel-go: a program that imports guard alone does not.
//
// # Traces and the ledger
//
// Steps go into the trace carried by the context (StartTrace), as
// trace.Step values: model turns, tool calls, and one gate step per finding.
// Each finding is also sent to Config.Observe.Ledger, which the ledger package
// implements on badger; guard itself never imports badger. Findings reach
// the ledger (and Config.Observe.Logger) off the agent's step, from a queue; Flush
// waits for them and Close, before exit, delivers the rest.
//
// For telemetry, Config.Observe.Metrics (an Observer) gets verdicts, gate
// latency and breaker changes, and Config.Observe.Steps (a StepObserver)
// sees each model and tool call while it runs, with its findings as the
// ledger gets them: package trace/otelexport implements both, as
// OpenTelemetry metrics, live spans and gen_ai.evaluation.result log events
// that a collector gathers from every replica. guard itself never imports
// OpenTelemetry.
//
// # What a guard holds
//
// A guard keeps nothing per session but the trace of each run and what its
// rules derive from it, in the trace's memo: the origins index (where every
// value came from), the memory card, the policy checks' index of calls by
// tool and entity, the count of tool calls, and a few scans of the current
// turn. So a guard's memory per session is bounded by its trace: the steps
// (each field capped by Observation.MaxField) and indexes whose size is
// that of the values the steps carried. A trace ends with its run; the
// recorder is dropped when the caller drops it.
//
// A session that never ends sets Observation.TraceEvery, so that its trace
// is saved as it grows, and then holds only the last KeepSteps steps
// (1,000): once the trace sink acknowledged a save, the steps it
// stored are released (trace.Recorder.Release); a save the sink refused
// releases nothing (ReportStats.TracesUnsaved counts it, the logger says
// why). What a session holds is then KeepSteps steps plus its indexes, and
// the origins index forgets released records that later released records
// repeat, so it grows with the distinct values the session saw, not with
// its steps: 100,000 steps about 1,000 orders hold about the heap that
// 10,000 held, under 10 MiB (TestLongSessionBoundedHeap).
//
// After a release the rules judge as before by their indexes: a value's
// origins, the card, last() and the call count cover the whole session.
// What reads the steps themselves sees the steps kept: a loop is counted
// among them (keep more steps than Gates.LoopLimit), grounding cites the
// retrievals among them, the policy checks' calls() and results() list the
// calls among them (last() is exact), and the confirmation and
// write-authorization rules take a "yes" as an answer only to what the
// agent said among them. Provenance
// reads released steps back through stubs the origins index keeps (the
// name, turn and short arguments of each tool step, the text of content
// the user pointed at), keeping, per lookup key, the latest lookup only.
//
// # Performance
//
// A clean tool call through a wrapper costs two clock reads, two small
// allocations (the step and the tool's context) and the rules' scans of its
// arguments: about a microsecond, no JSON encoding, no logging, no lock held
// across the call. BenchmarkGuardedStep measures it against one
// OpenTelemetry span. Config.Bypass costs nothing.
//
// # Example
//
//	g := guard.New(guard.Config{Observe: guard.Observation{Ledger: led}})
//	defer g.Close(ctx)
//	ctx, rec := g.StartTrace(ctx, sessionID, "after-sales")
//	res, err := g.Run(ctx, model, []tools.Tool{queryOrder, submitReturn}, msgs)
//	// res.Status, res.Answer, res.Messages; rec.Trace() is the trace.
package guard
