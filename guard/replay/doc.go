/*
Package replay drives golden cases through an agent under the guard, the
very same guard.Guard wrapper used in production, and measures what came
out. It is the first half of the offline health check: replay produces the
runs — each with its full trace — and the objective metrics; package
guard/health screens and scores them, together with the violations the
guard sent to the ledger.

# How it fits

A golden set is a JSONL file of [Case] values, read by [LoadCases] and
written by [WriteCase]. [Replay] runs every case N times (Config.Repeats,
default 3), a few at a time, each run with a fresh agent from the user's
[Factory] and a guard of its own built from Config.Guard. A run sends the
case's turns one after the other through [Agent.Respond], which calls
guard.Guard.Run (or the user's own loop over WrapModel and WrapTool) with
the run's context, so every model turn, tool call and gate decision lands
in the run's trace, and every finding in Config.Guard.Observe.Ledger. Each finished
run's trace is appended to Config.Traces (execution_trace.jsonl), with the
answers and errors in its metadata, so that [RunFromTrace] reads the runs
back from the file.

"Without guard rails" means the same guard in shadow mode
(guard.Config{Shadow: true}): every rule still runs and every finding is
recorded, but nothing is enforced, so a guarded and an unguarded replay
are measured by the same detectors.

An agent's error or panic ends its run early and is recorded on the run
(Run.Err) and its trace; it never stops the replay. Cancelling the context
keeps the runs that finished.

[Case.Check] measures one run against its case — answer elements,
intent, tool trajectory (with TrajectoryMatch), constraint losses,
tool-call budget — and [Measure] computes the objective metrics of a
replay: mean completion time, tokens and tool calls, the no-output rate,
the timeout rate of external calls, the rate of the guard's own retries
(apart from timeouts) and the drift rate, the share of cases whose key
answer elements differ across repeats ([Drift]).

# The case format

A golden set holds one case per line, a JSON object in UTF-8; blank lines
are skipped. Keys not listed here are errors, so that a misspelt key cannot
silently turn a check off. A line looks like this (wrapped here):

	{"id":"N03","category":"normal","title":"Address change, confirmed",
	 "route":"order-change",
	 "turns":["Change the delivery address of order A1006 to 9 Lake Road, Hangzhou.","yes"],
	 "intent":"change_the_address",
	 "trajectory":{"match":"superset","args":"superset","calls":[
	   {"name":"query_order","args":{"order_id":"A1006"}},
	   {"name":"update_address","args":{"order_id":"A1006","address":"9 Lake Road, Hangzhou"}}]},
	 "answer":{"must":["9 Lake Road"],"must_not":["could not"]},
	 "tags":["address-change","en"],"last_verified":"2026-11-20"}

A case needs only an id and its turns; three keys make a useful one:

	{"id":"q1","turns":["Where is my order A1001?"],"answer":{"must":["shipped"]}}

The keys:

	id              string    required; 1 to 64 letters, digits, '_', '.', '-'; unique in the set
	category        string    "normal" (the default), "boundary" or "adversarial"
	title           string    what the case is about, for people
	route           string    the trace's route (Trace.Route), for route-dependent rules
	turns           [string]  required; the user's messages, sent one after the other
	intent          string    the intent the classifier should give turn intent_turn
	intent_turn     int       0-based; negative counts from the end (-1 is the last); default 0
	trajectory      object    the expected tool calls over the whole conversation (below)
	answer          object    the baseline answer's key elements (below); absent checks nothing
	tracks          object    the baseline's two tracks, {"expert": ANSWER, "agent": ANSWER} (below)
	constraints     [object]  what the user states and the agent must keep respecting (below)
	max_tool_calls  int       tool-call budget of a run; default twice the trajectory's length
	tags            [string]  words without spaces: topic, language, root cause, "ce_<assertion>"
	last_verified   string    YYYY-MM-DD, when a person last checked the baseline; absent: never (see Stale)

A trajectory object:

	match      string  "strict" (default: same calls, same order), "unordered",
	                   "subset" (no call beyond these), "superset" (at least these)
	args       string  "exact" (default), "ignore", "subset", "superset" (at least these keys)
	overrides  object  tool name to argument mode, for that tool
	calls      [object]  {"name": "...", "args": {...}}; args is a JSON object, absent means {}

Only calls that ran count; calls a verdict blocked do not (see
TrajectoryMatch).

An answer object: "must" and "must_not" are lists of key elements, each
compared with the final answer without regard to case or runs of white
space; "a|b" is satisfied by either alternative. "text" is a reference
answer for people and judges, not compared. "declines": true marks a
baseline that refuses, says it does not know, or hands over to a person;
a run of any other case that ends refused or handed off counts as an
over-refusal.

A tracks object holds the baseline's two tracks, each an answer object:
"expert", written by a domain expert from the rules, and "agent", the
agent's best undisturbed run. [Case.CrossCheck] compares them: the elements
both give the same way (must in both, or must_not in both; the order of
"|" alternatives does not matter) join "answer" as the reference runs are
checked against ([Case.Reference]); the others are flagged for alignment
and reported, never checked, until a person moves them into "answer" or
drops them.

A constraint object has an "id" (unique in the case), the 0-based "turn"
that states it (it is checked from that turn on), an optional "text", and
exactly one of:

	no_tool     string    this tool must not run
	tool, arg,  strings   every call of tool must pass argument arg containing value
	value
	answer_not  [string]  no answer may contain these elements

Each call or answer that breaks a constraint is one loss ([Loss]).

Every baseline is valid for a time after its last_verified date: [Stale]
lists the cases past it, to print before a run. [Shape] says how a set
departs from the method's: 10 normal, 10 boundary and 10 adversarial
cases, and at least one conversation of 15 turns or more.

The format is stable: cases are appended to a golden set by people and by
tools (continuous evaluation appends regression cases tagged
"ce_<assertion>"), so keys are only ever added, and [LoadCases] rejects a
malformed case with its line number and the reason:

	replay: golden.jsonl:7: case B04: invalid case: trajectory: match "loose": want strict, unordered, subset or superset

# Example

	cases, err := replay.LoadCases(f, "golden.jsonl")
	if err != nil {
		return err // every malformed line, joined
	}
	runs, err := replay.Replay(ctx, cases, newAgent, replay.Config{
		Guard:  guard.Config{Shadow: true, Observe: guard.Observation{Ledger: led}},
		Label:  "unguarded",
		Traces: traceFile,
	})
	m := replay.Measure(cases, runs)
	fmt.Printf("drift %.0f%%, %.1f tool calls per run\n", 100*m.DriftRate, m.MeanToolCalls)
*/
package replay
