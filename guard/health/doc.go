/*
Package health scores an agent's health offline: it screens the runs of a
replay (package guard/replay) and the violations the guard sent to the
ledger, scores five dimensions from 1 to 5, weighs them into a total, and
writes the report — report.json, report.md and a self-contained
report.html. [Compare] sets two reports side by side (unguarded and
guarded, or two prompt versions) and flags side effects.

# How it fits

replay drives golden cases through the guard and returns the runs, each
with its trace and answers; the guard sends every finding to the ledger.
[Score] reads both: the traces and answers for the screens and the checks
against each case, and the ledger (any [Violations], such as
*badgerstore.Store) for the guard's findings on those runs. Every score is
computed from what was recorded; an optional judge model gives a second
opinion on the screened cases beside the scores, never in them (see Judge
below).

# Screening

Four hard filters run on every run:

  - fabrication: an answer cites a document id ("[KB-7]") that is not in
    the knowledge base (Options.Knowledge, else the documents the run
    retrieved), or quotes a clause, section or rule number ("clause 7.3",
    "第5条") that no knowledge-base document quotes;
  - cascade: a tool call failed or came back empty (detect.IsEmptyResult)
    and the flow went on: a state-changing call ran after it in the same
    turn, or the turn ended in a final answer that neither asks the user
    nor says the step failed — an answer asserting absence ("there are no
    records") always counts;
  - amnesia: a case's constraints were lost (replay.Loss) Options.AmnesiaLosses
    times or more over its runs (default 2);
  - drift: more than Options.DriftThreshold of a case's runs (default a
    quarter) disagree with its most common outcome (replay.Drift).

Then the checks of each run against its case (answer elements,
trajectory, intent, tool-call budget), its errors and retries, and every
guard violation from the ledger. Each becomes a [Hit] with a dimension, an
outcome — failed, recovered or minor — a root-cause tag and a cause chain
("empty retrieval → invented clause"); [Score] documents which hit counts
where.

# Scoring

Each run is scored in each dimension on the method's anchors ([Rubric]):

	5  clean                      no hit
	4  one or two minor flaws     up to two minor hits, nothing worse
	3  recovered by a fallback    a guard rail caught an error (an enforced finding of
	                              severity error or critical), or more than two minor hits
	2  structural defect          an error got through
	1  unusable                   an error got through and the run gave the user nothing

and a dimension's score is the mean over the runs, to one decimal: all
runs, except for memory, where only the runs of cases that have
constraints or memory hits count, since a case with nothing to remember
says nothing about memory. Nine clean runs and one structural defect give
4.7: one failure costs its share, not the band. With two raters or more
(Options.Raters) the raters' mean replaces the rubric's score of the runs
of each case they agree on.

An error that gets through always costs more than one a guard rail
catches. The total weighs the scores with [Weights]
(default accuracy 30, coherence 25, memory 20, stability 15, efficiency
10; they must sum to 100), on the 1–5 scale and on a 100-point scale
(total × 20): scores 4, 4, 5, 3, 4 give 4.05, 81 points, and 3.3, 3.7,
4.0, 4.2, 4.4 give 3.785, about 76 points. The band follows the points,
and says what to do ([Band.Action]):

	90 to 100  healthy      keep monitoring
	75 to 90   sub-healthy  local repair       (both worked examples)
	60 to 75   unhealthy    structural repair
	below 60   critical     not releasable: rework before release

[Headline] words a total with both scales named, "4.05 of 5 (81 of 100
points, sub-healthy, local repair)", never "4.05/81". A release floor is
on the 100-point scale ([CheckFloor] refuses one that reads as 1–5).

A replay "without guard rails" runs the guard in shadow mode, so its
findings are the same detectors' and count as failures where the guarded
replay's count as recovered: the comparison shows what enforcing buys.

# Judge

Options.Judge, any llms.Model, is asked about each screened case — a case
with a hit of a hard filter or a failed hit, not every case — once: one
call per case, whatever its number of runs, at temperature 0 in JSON mode.
The prompt gives the case's turns and its runs' answers (runs that
answered alike shown once), the baseline's must and must-not elements and
reference answer, the constraints, and excerpts of the knowledge-base
rules the case touches: the documents its answers cite or its runs
retrieved, else the best lexical matches of its turns and answers, cut to
a bounded size. The judge answers {"score": 1-5, "reason": "..."} on the
rubric's anchors; [ParseRating] holds it to exactly that. It is the one
judge protocol of the module: guard/conteval's judge answers in it too,
on anchors of its own.

The verdicts never change the computed scores, the total, the band, the
problems or the comparison: those stay reproducible from the runs alone.
[JudgeReport] sets them beside the scores — the verdict and reason per
screened case, how many verdicts confirm the screens (1 or 2) or dispute
them (4 or 5), the calls, tokens and cost, and the judge's view of
accuracy, coherence and memory: the same rubric, with each screened run's
outcome in the dimensions it was screened in read from its case's verdict
(5 none, 4 minor, 3 recovered, 2 or 1 failed). Stability and efficiency
are measured, never judged. A failed call, a panic or an invalid answer is
recorded as that case's judge error; it never fails [Score].

# Raters

Options.Judge and Options.Raters are the independent raters of the
screened cases: judge models (any llms.Model) and people, whose scores are
collected in a file ([LoadScores]: one {"case", "score", "reason"} a
line). Every rater is given the same question — the turns and answers, the
baseline answer with its elements, the constraints and the excerpts of
the rules the case touches. With two raters or more, a case's verdict is
the mean of their scores, and a gap above [MaxGap] (1 point) between them
sends it to review (JudgedCase.Review); a case only one of them scored
goes to review too. Like the judge's, the raters' verdicts sit beside the
computed scores and never change them.

# What to fix

Each root cause carries the direction of its fix ([Fix]): the kind of
change — knowledge base, config, rule, prompt, tool — and where, "the
rules the answers quote" for an invented clause, guard.Gates.EmptyResult
for "no records" after an empty lookup, guard.Config.Memory for a lost
constraint. [Fixes] holds the directions by tag; Options.Fixes adds to
them. Options.CitationRoutes forces citations on retrieval routes: an
answer there that cites none of the documents its turn retrieved fails
accuracy, tagged "uncited".

# Honest gates

[Score] refuses an empty golden set ([ErrNoCases]) and runs of no case of
it ([ErrNoRuns]): a check of nothing passes nothing. Report.Shape says how
the set departs from the method's shape (10 normal, 10 boundary, 10
adversarial cases, one conversation of 15 turns or more;
replay.Shape), Report.Baseline lists the stale baselines and the cases
whose two baseline tracks disagree (replay.Case.CrossCheck). Whether any of
these fails a release is the caller's choice (agentguard health -strict).

# Before and after

[Compare] gives per-dimension deltas and flags a side effect when the total
rises by [SideEffectGain] points or more while a dimension the change did
not target falls by [SideEffectDrop] or more.

# Example

The health check of your own agent, from a factory and a golden set
([Check]):

	rep, err := health.Check(ctx, "golden.jsonl", newAgent, health.CheckConfig{Replay: replay.Config{Guard: cfg}})
	if err != nil {
		return err // an empty, unreadable or malformed set: nothing was checked
	}
	fmt.Println(health.Headline(rep.Total, rep.Points)) // 4.05 of 5 (81 of 100 points, sub-healthy, local repair)
	err = rep.WriteFiles("health-report")

or its two halves, with a ledger and a judge:

	runs, _ := replay.Replay(ctx, cases, newAgent, replay.Config{Guard: cfg, Traces: f})
	rep, err := health.Score(ctx, cases, runs, led, health.Options{Knowledge: kb, Judge: judge}) // judge may be nil

# The method, point by point

Where the health check follows the method (seeds 000, 002, 003) and where
it departs:

  - rubric (000): follows — each run scored 5 clean, 4 one or two minor
    flaws, 3 recovered by a fallback, 2 structural defect, 1 unusable; the
    dimension is the mean (TestRubricScore, TestMeanScore).
  - two blind raters averaged, a gap above one point to review (000):
    follows with two raters or more (TestTwoRaters); departs for a judge
    alone, which stays a second opinion beside the scores, since one model
    is not two blind raters.
  - weights and bands (000): follows (4, 4, 5, 3, 4 give 4.05, 81 points,
    sub-healthy); a before/after under other weights is flagged with the
    points the weights alone account for (TestCompareReweighted).
  - release floor: follows — the default floor is 60, the lowest band the
    method lets ship, and the exit status says what the band says
    (TestRelease, TestMainProgram).
  - cascade (000): follows — a failed or empty step counts only when the
    flow went on after it (a write ran, or the answer neither asked nor
    said it failed).
  - golden set shape (000): follows as a warning, as an error with -strict;
    health init writes it (TestStarterSet).
  - gate (002): follows — the bootstrap interval, width first, so 20 of 20
    is green and 10 of 20 too wide to judge; departs by asking for 20
    samples at least, since a clean round's bootstrap is a point
    (conteval TestGateVerdicts).
  - weekly human check of 20 green samples, red samples merged every two
    weeks (002): follows (conteval TestReviewRoundTrip, TestMerge).
  - the answer checked against the memory card (000, case C): follows —
    an answer that tells the user they are or will be reached by a banned
    channel, or names the address they replaced, is a memory finding
    (guard rule memory-answer; claims TestCardAnswers, on rewordings and a
    held-out set written blind; no flag on the corpus).
  - recipient required on sends (003): follows as a warning for tools the
    guard has no schema for (TestRecipientRequiredOnSends): a send whose
    arguments are all content is recorded and scored as a minor flaw, not
    stopped, since a notification to the user themselves needs none.
  - the loop as "the same tool three times in a row" (003): departs — the
    loop rule keys on the call, tool and arguments, because the seed's
    definition fires on 52 of 126 successful τ runs (reading three orders
    in a row) and the guard's on none (TestLoopDefinition).
*/
package health
