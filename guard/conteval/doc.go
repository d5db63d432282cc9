/*
Package conteval evaluates production traces continuously. After release,
monitoring watches for 500s, but an agent's failures are 200s: an invented
policy clause, a citation nobody retrieved, a tool that should not have
run. Every hour or day, a round of continuous evaluation samples the
traces the agent recorded, runs cheap property assertions on every
sample, and reports a pass rate with its confidence interval and its cost
on the same line; red samples become regression cases for the health
check and violations in the ledger, closing the loop.

	traces ──Select──▶ samples ──Assertions──▶ pass/fail ──Gate──▶ verdict
	                                   │                         │
	                         red samples ──▶ Case (guard/replay)  trend line
	                                     └─▶ ledger violation "ce_<assertion>"

It reads traces in the trace package's model and reuses the guard's rules
as assertions; it imports guard, ledger and guard/replay, and nothing
imports it. The command examples/conteval runs a round over a trace file.

# Sampling

[Select] takes, deduplicated by trace id:

  - forced bands, 100%: traces in which a tool outside the allow-list ran
    ([BandPrivilege]: the allow-list assertion failed), traces with an
    error ([BandError]), an intent confidence below 0.6
    ([BandLowConfidence]), or a cost above twice their route's p99
    ([BandOverCost]);
  - the head ([BandHead]): an unbiased 5% of all traces, at least one;
  - the tail ([BandTail]): per route, the 3 most expensive normal traces.

A trace's cost is the sum of its steps' Cost; its intent confidence is the
lowest Confidence of its steps with an Intent; its route is Trace.Route.
The head sampler gives every trace a key uniform in [0, 1) and takes those
below the rate, so a lower rate takes a subset of a higher one. Keys come
from a PCG generator seeded from the config, in input order, or — with
hash_consistent — from [HashKey] of the seed and the trace id, so that
every evaluator with the config takes the same traces whatever else it
reads. The head looks at every trace, forced ones included, which is what
makes its pass rate the unbiased production level; it adds only normal
traces to the sample.

A privilege violation blocks a release by itself: Report.Privilege counts
the traces in BandPrivilege, and one makes the verdict Red (exit 1 in a
command) whatever the pass rate. An assertion that applied to no sample
checked nothing — its config is probably missing — and Report.Warnings says
so, for the command to print.

# Streams

[Evaluator.Run] holds the round's traces; [Evaluator.RunStream] (or
[Evaluator.Start], [Round.Add], [Round.Finish]) reads them one at a time in
memory that does not grow with their number: head and forced samples are
judged on arrival and only counted, red ones kept up to
[Evaluator.KeepRed]; the over-cost and tail bands come from per-route cost
histograms and top-k candidates. A million traces read from a gzip file
peak at about 50 MB. See [Round] for what a stream judges differently.

# Assertions

An [Assertion] is a property, not a literal answer. The built-in ones
([Defaults]) reuse the guard's rules (package guard/rules names them):
[JSONAnswer] (value-invariant's JSON check), [NonNegativeAmounts]
(value-invariant's amounts), [CitationsRetrieved] (grounding's citations),
[AllowedTools] (tool-allow-list) and [RefusalWithoutEvidence]
(retrieval-similarity). [Assert] makes one from a function; [FromRule]
turns any guard.Rule into one and [FromEvaluate] any Guard.Evaluate; the
policy file's assertions.guard_rules runs
some of the guard's rules as assertions by name. An assertion passes,
fails or is skipped where it does not apply; a sample is red when any
fails.

Which tools return documents is the policy file's tools marked retrieval
(the guard's ToolPolicy.Retrieval); besides, retrieval steps and tool steps recorded
with document ids count as retrievals. A retrieval that returned nothing
records no ids, so only the policy's retrieval tools can tell RefusalWithoutEvidence
that it was one.

The built-in assertions and FromRule judge outcomes, not attempts: what
reached the user and what ran. A step that an enforcing guard blocked,
replaced or sent back — a gate step judged it with a verdict other than
allow, not in shadow mode — is not held against the trace, since the
guard's own finding about it is already in the ledger. Traces recorded
without a guard, or in shadow mode, are judged on everything the agent
did. FromEvaluate judges attempts, to measure the agent itself.

# The gate and the two curves

[Gate.Judge] estimates a pass rate with two 95% intervals side by side:
a percentile bootstrap, each of whose resamples is one binomial draw
B(n, p̂) — resampling n flags and counting the passes is that draw — so it
costs O(resamples) whatever n is; and the Wilson score interval in closed
form. The draws are exact (inversion for n·p ≤ 30, BTPE beyond; see the
comment on binomial in binomial.go). The verdict is taken as the method
gives it, on the bootstrap interval, the interval's width first:

	fewer than 20 samples                   not-enough-samples: a clean round's bootstrap is a point
	interval wider than 0.15                not-enough-samples: too wide to judge, whatever the rate
	lower bound ≥ floor (0.95)              green (20 of 20 is green)
	rate ≥ floor, lower bound below it      yellow
	otherwise                               red

so 10 of 20 is not red but unknown: the interval [0.30, 0.70] cannot say.
Wilson's interval is reported beside it; Gate.Interval "union" takes the
verdict on the union of the two instead, which keeps a clean round of 20
not-enough-samples (Wilson [0.839, 1]) for teams that want more samples.

The seed check — 120 flags with every 17th failing (flags 0, 17, …, 119) —
gives 112/120 = 0.933, bootstrap [0.883, 0.975], Wilson [0.874, 0.966],
width 0.092: judged, and red.

A round reports two curves, never merged: the pass rate of the head sample
only (the unbiased production level, which the verdict is taken on) and
the pass rate of all samples (the density of problems, risk bands
included, for ranking work). The command exits 0 on green, 0 with a
warning on yellow, 1 on red, 2 on not-enough-samples.

# Judging, cost, trend

An optional judge model ([Evaluator].Judge, any llms.Model) scores every
red sample and a fixed share of the head sample (the head samples with the
smallest keys: again a subset at a lower share); its verdicts are reported
beside the assertions' (confirmed, disputed, missed) and never change the
pass rates. Its tokens come from the provider's usage (detect.Usage) or,
when there is none, from trace.EstimateTokens. A round costs samples ×
cost_per_sample plus the judge's calls; [Report.GateLine] puts it on the
gate's line.

The judge speaks the protocol of guard/health's judge: one call per sample
at temperature 0 in JSON mode, bounded by [Evaluator].JudgeTimeout, whose
answer must be exactly one JSON object {"score": 1-5, "reason": "..."}
(health.ParseRating's rules). The anchors are the run's: 5 correct, 4 minor
flaws, 3 errors recovered (something failed, but the agent asked, declined
or handed over instead of misleading), 2 structural errors (invented or
unsupported facts, ids, clauses or citations; a tool that does not fit), 1
unusable. A sample passes in the judge's view when its score is at least
judge.pass_score, 4 by default ([JudgeResult].Pass); any other answer is a
judge error, paid for but not counted as a verdict.

Each round appends one [TrendPoint] to a trend file (JSON Lines): both
curves, the verdict, the cost, each route's pass counts, the config
version and a fingerprint of its parameters. The first round under a new
version is marked version_changed; a round whose parameters changed under
the same version is marked params_changed.

# Closing the loop

Each red sample becomes a [Case]: a health-check case (replay.Case) that
replays its conversation beside the golden set — written by [WriteCases]
in the format replay.LoadCases reads, tagged "ce_<assertion>" for every
failed assertion, "continuous-eval" and "review" — and, in the details file
([WriteCaseDetails]), the trace id, the failed assertions' findings, the
config version and the route's recent pass-rate history. Each failed
assertion is also appended to the ledger as a trace.Violation with the
rule "ce_<assertion>", once per trace and rule however often the trace is
evaluated.

The cases carry no last_verified date and the tag "review": nobody has
checked their baselines yet. Every two weeks, as the method asks, [Merge]
(the command "agentguard conteval merge -into golden.jsonl CASES.jsonl…")
adds them to the golden set once, by id or by their turns, where they stay
stale until a person has checked them.

Once a week a person checks green samples, since assertions miss what a
person sees: with Evaluator.Review a round keeps that many green head
samples ([Report.ReviewItems], "-review FILE", 20 by default) for the
person to mark ok or not; the filled file, read by [ReadReview] and given
to the next round ([Report.AddHumanCheck], "-reviewed FILE"), lands on the
trend, and a green sample found wrong turns a green verdict yellow.

Citation defects are also counted by the domain of the cited document
([DocDomain]: "KB-RET-04" is in "KB-RET"), in Report.CitationDomains: which
part of the knowledge base answers cite wrongly.

# Schedule

A round is one command, so any scheduler runs it: daily over the day's
traces, or hourly for a busy agent (each round's -since picks its window;
the trend file keeps the history). With cron:

	# daily at 02:00: yesterday's traces; Mondays also write the week's human check
	0 2 * * *   agentguard conteval -traces /var/log/agent/traces.jsonl.gz -since 24h -config conteval.json -ledger /var/lib/agentguard/ledger -cases red.jsonl -trend trend.jsonl
	0 2 * * 1   agentguard conteval -traces /var/log/agent/traces.jsonl.gz -since 24h -config conteval.json -trend trend.jsonl -review review-$(date +\%F).jsonl
	# every other Sunday: merge the red cases into the golden set for review
	0 3 * * 0   [ $(( $(date +\%V) % 2 )) -eq 0 ] && agentguard conteval merge -into golden.jsonl red.jsonl

On Kubernetes, a CronJob (exit status 1 red, 3 not enough samples: the
job's failure is the alert):

	apiVersion: batch/v1
	kind: CronJob
	metadata: {name: agentguard-conteval}
	spec:
	  schedule: "0 * * * *"            # hourly
	  concurrencyPolicy: Forbid
	  jobTemplate:
	    spec:
	      backoffLimit: 0
	      template:
	        spec:
	          restartPolicy: Never
	          containers:
	          - name: conteval
	            image: your-registry/agentguard:latest
	            args: ["conteval", "-traces", "/traces/current.jsonl", "-since", "1h",
	                   "-config", "/etc/agentguard/conteval.json", "-trend", "/data/trend.jsonl",
	                   "-ledger", "/data/ledger", "-cases", "/data/red.jsonl"]
	            volumeMounts:
	            - {name: traces, mountPath: /traces, readOnly: true}
	            - {name: data, mountPath: /data}
	            - {name: config, mountPath: /etc/agentguard}
	          volumes:
	          - {name: traces, persistentVolumeClaim: {claimName: agent-traces}}
	          - {name: data, persistentVolumeClaim: {claimName: agentguard-data}}
	          - {name: config, configMap: {name: agentguard-conteval}}

# The config file

A round is configured by a JSON file ([LoadConfig]); every key but
"version" may be left out, and then has the default shown. Unknown keys
are errors.

	{
	  "version": "2025-06-01",          required; written into every result
	  "sampling": {
	    "seed": 1,                       head keys' seed (0)
	    "hash_consistent": true,         keys from HashKey(seed, id) (false)
	    "head_rate": 0.05,               share of all traces in the head, (0, 1]
	    "tail_per_route": 3,             most expensive normal traces per route; <0 off
	    "min_confidence": 0.6,           low-confidence band; <0 off
	    "cost_percentile": 0.99,         the route percentile of the over-cost band
	    "cost_multiplier": 2,            over-cost: cost > percentile × this; <0 off
	    "route_cost": {"order-status": 0.004}   baseline percentile per route (computed)
	  },
	  "gate": {
	    "floor": 0.95, "max_width": 0.15, "level": 0.95,
	    "resamples": 10000, "seed": 1,
	    "interval": "bootstrap",         the verdict's interval: bootstrap, or union (with Wilson)
	    "min_samples": 20                fewer samples are not-enough-samples
	  },
	  "judge": {
	    "head_share": 0.1,               share of the head sample judged; <0 none
	    "max_calls": 100,
	    "pass_score": 4,                 lowest judge score (1–5) that passes a sample
	    "input_per_million": 0.15, "output_per_million": 0.6
	  },
	  "policy": "agent.yaml",            the agent's policy file (package guard/policy), relative
	                                     to this file: its gates (allowed_tools, json_routes,
	                                     min_similarity, route_similarity), retrieval tools
	                                     and "assertions" section (disable, guard_rules,
	                                     refusal_texts) configure the assertions
	  "cost_per_sample": 0,              cost of evaluating one sample besides the judge
	  "history_rounds": 10               rounds of route history in a case
	}

# Example

	cfg, err := conteval.LoadConfig("conteval.json")
	...
	history, err := conteval.LoadTrend("trend.jsonl")
	ev := &conteval.Evaluator{Config: cfg, Ledger: led, History: history}
	rep, err := ev.Run(ctx, traces, time.Now())
	fmt.Println(rep.GateLine())
	err = conteval.WriteCases(casesFile, rep.Cases)
	err = conteval.AppendTrend("trend.jsonl", rep.Trend)
	os.Exit(rep.Verdict.ExitCode())

# Performance

Measured on 2 shared vCPUs (busy; figures vary by ±30%), with go test
-bench over synthetic traces of three steps:

	BenchmarkRound    a round over 1,000,000 traces: select, 5 assertions
	                  on the ~76,000 samples, gate       1.3 s   (1.3 µs/trace)
	BenchmarkSelect   the sampler alone, 1,000,000 traces  0.3–0.7 s
	BenchmarkGate     the gate over 1,000,000 flags        1.2 ms
	  baseline        resampling the flags themselves      ~10 ms per resample,
	                                                        ~100 s for 10,000
	BenchmarkBinomial one draw: BTPE at n = 10⁶            42 ns
	                  inversion at n·min(p, 1-p) ≤ 30       ~110 ns

In a round, the assertions cost most where they parse JSON (tool
arguments for non-negative-amounts); the sampler's cost is reading the
traces' steps and deduplicating ids (a radix sort of 64-bit hashes).
*/
package conteval
