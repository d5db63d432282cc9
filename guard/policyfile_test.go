package guard_test

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/agentguard/agentguard/guard"
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
		{name: "thresholds", in: `{"loop_limit": -1, "max_steps": 40, "min_intent_confidence": 0.75, "min_similarity": 0.3, "route_similarity": {"refund": 0.5}, "empty_result": "handoff"}`,
			check: func(t *testing.T, cfg guard.Config) {
				if cfg.Gates.LoopLimit != -1 || cfg.Gates.MaxSteps != 40 || cfg.Gates.MinIntentConfidence != 0.75 || cfg.Gates.MinSimilarity != 0.3 || cfg.Gates.RouteSimilarity["refund"] != 0.5 || cfg.Gates.EmptyResult != trace.Handoff {
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
		{name: "empty_ok makes a tool never empty", in: `{"tools": {"think": {"empty_ok": true}, "lookup": {}}}`, check: func(t *testing.T, cfg guard.Config) {
			if f := cfg.Tools["think"].IsEmpty; f == nil || f("") {
				t.Errorf("think: IsEmpty is nil or reports \"\" empty")
			}
			if cfg.Tools["lookup"].IsEmpty != nil {
				t.Errorf("lookup: IsEmpty is set, want the default")
			}
		}},
		{name: "lists", in: `{"allowed_tools": ["a", "b"], "disable": ["confirmation", "argument-provenance"], "json_routes": ["api"], "intents": ["refund"], "require_approval": ["b"], "confirm_writes": true, "shadow": true}`,
			check: func(t *testing.T, cfg guard.Config) {
				if !slices.Equal(cfg.Gates.AllowedTools, []string{"a", "b"}) || !slices.Equal(cfg.Disable, []string{rules.Confirmation, rules.Provenance}) ||
					!slices.Equal(cfg.Gates.JSONRoutes, []string{"api"}) || !slices.Equal(cfg.Gates.Intents, []string{"refund"}) || !slices.Equal(cfg.Gates.RequireApproval, []string{"b"}) ||
					!cfg.Gates.ConfirmWrites || !cfg.Shadow {
					t.Errorf("got %+v", cfg)
				}
			}},
		{name: "resilience", in: `{"resilience": {"tool_timeout": "-1s", "model_timeout": "90s", "backoff": "", "breaker_failures": 3, "breaker_open_for": "1m"}}`,
			check: func(t *testing.T, cfg guard.Config) {
				r := cfg.Resilience
				if r.ToolTimeout != -time.Second || r.ModelTimeout != 90*time.Second || r.Backoff != 0 || r.BreakerFailures != 3 || r.BreakerOpenFor != time.Minute {
					t.Errorf("got %+v", r)
				}
			}},
		{name: "YAML with comments", in: "# the demo\nmax_steps: 40 # per run\nconfirm_writes: true\ntools:\n  inbox: {untrusted: true, trusted_fields: [id], untrusted_fields: [body]}\n",
			check: func(t *testing.T, cfg guard.Config) {
				if cfg.Gates.MaxSteps != 40 || !cfg.Gates.ConfirmWrites || !cfg.Tools["inbox"].Untrusted ||
					!slices.Equal(cfg.Tools["inbox"].TrustedFields, []string{"id"}) || !slices.Equal(cfg.Tools["inbox"].UntrustedFields, []string{"body"}) {
					t.Errorf("got %+v", cfg)
				}
			}},
		{name: "profile", in: `{"profile": "autonomous"}`, check: func(t *testing.T, cfg guard.Config) {
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
		{name: "every other key", in: "version: 1\nmemory: {budget: 500}\npenalty: 25\npass_score: 70\nmax_retries: -1\nrefusal_template: no\nhandoff_message: hold on\nmax_field: 4096\n" +
			"resilience: {isolate_tools: true, tool_retries: 2, model_retries: -1}\ntools:\n  kb: {retrieval: true, isolate: true, channel: chat}\nnow: '2024-05-15T15:00:00Z'\ntables: {t: {a: 1}}\n",
			check: func(t *testing.T, cfg guard.Config) {
				if cfg.Memory == nil || cfg.Memory.Budget != 500 || cfg.Evaluation.Penalty != 25 || cfg.Evaluation.PassScore != 70 || cfg.Gates.MaxRetries != -1 ||
					cfg.Answers.RefusalTemplate != "no" || cfg.Answers.HandoffMessage != "hold on" || cfg.Observe.MaxField != 4096 {
					t.Errorf("got %+v", cfg)
				}
				if r := cfg.Resilience; !r.IsolateTools || r.ToolRetries != 2 || r.ModelRetries != -1 {
					t.Errorf("resilience %+v", r)
				}
				if kb := cfg.Tools["kb"]; !kb.Retrieval || !kb.Isolate || kb.Channel != "chat" {
					t.Errorf("kb %+v", kb)
				}
			}},
		{name: "nulls mean the default", in: `{"tools": null, "allowed_tools": null, "resilience": null, "max_steps": null}`, check: func(t *testing.T, cfg guard.Config) {
			if cfg.Tools != nil || cfg.Gates.AllowedTools != nil || cfg.Gates.MaxSteps != 0 {
				t.Errorf("got %+v", cfg)
			}
		}},

		{name: "unknown key with a suggestion", in: `{"loop_limt": 2}`, wantErr: `guard: policy: policy:1:2: unknown field "loop_limt" (did you mean "loop_limit"?)`},
		{name: "unknown tool key", in: `{"tools": {"send_email": {"efect": "write"}}}`, wantErr: `guard: policy: policy:1:27: tools.send_email: unknown field "efect" (did you mean "effect"?)`},
		{name: "unknown key far from any", in: `{"resilience": {"jitter": "1s"}}`,
			wantErr: `guard: policy: policy:1:17: resilience: unknown field "jitter" (known: backoff, breaker_failures, breaker_open_for, isolate_tools, model_retries, model_timeout, tool_retries, tool_timeout)`},
		{name: "wrong type", in: `{"tools": {"send_email": {"confirm": "yes"}}}`, wantErr: `guard: policy: policy:1:38: tools.send_email.confirm: want true or false, got "yes"`},
		{name: "fraction for an integer", in: `{"max_steps": 2.5}`, wantErr: `guard: policy: policy:1:15: max_steps: want an integer, got 2.5`},
		{name: "integer out of range", in: `{"max_steps": 1e99}`, wantErr: `guard: policy: policy:1:15: max_steps: want an integer, got 1e99`},
		{name: "array of the wrong type", in: `{"allowed_tools": "send_email"}`, wantErr: `guard: policy: policy:1:19: allowed_tools: want an array of strings, got "send_email"`},
		{name: "object of the wrong type", in: `{"route_similarity": {"refund": "high"}}`, wantErr: `guard: policy: policy:1:33: route_similarity.refund: want a number, got "high"`},
		{name: "array element of the wrong type", in: `{"disable": ["loop", 7]}`, wantErr: `guard: policy: policy:1:22: disable[1]: want a string, got 7`},
		{name: "tools not an object", in: `{"tools": ["send_email"]}`, wantErr: `guard: policy: policy:1:11: tools: want an object of objects, got an array`},
		{name: "bad duration", in: `{"tools": {"t": {"timeout": "5 seconds"}}}`, wantErr: `guard: policy: policy:1:29: tools.t.timeout: "5 seconds" is not a duration (want a Go duration such as "30s" or "1m30s")`},
		{name: "duration as a number", in: `{"resilience": {"backoff": 200}}`, wantErr: `guard: policy: policy:1:28: resilience.backoff: want a duration string such as "30s", got 200`},
		{name: "negative backoff", in: `{"resilience": {"backoff": "-1s"}}`, wantErr: `guard: policy: policy:1:28: resilience.backoff: -1s is negative`},
		{name: "negative breaker_open_for", in: `{"resilience": {"breaker_open_for": "-1m"}}`, wantErr: `guard: policy: policy:1:37: resilience.breaker_open_for: -1m0s is negative`},
		{name: "bad verdict", in: `{"empty_result": "ask"}`, wantErr: `guard: policy: policy:1:18: empty_result: "ask" is not a verdict for empty results (want "clarify", "retry" or "handoff")`},
		{name: "bad effect", in: `{"tools": {"pay": {"effect": "mutate"}}}`, wantErr: `guard: policy: policy:1:30: tools.pay.effect: "mutate" is not an effect (want "read", "write" or "auto")`},
		{name: "bad profile", in: `{"profile": "agentic"}`, wantErr: `guard: policy: policy:1:13: profile: "agentic" is not a profile (want "conversational" or "autonomous")`},
		{name: "unknown rule", in: `{"disable": ["loops"]}`, wantErr: `guard: policy: policy:1:14: disable[0]: "loops" names no rule's findings (did you mean "loop"?)`},
		{name: "unknown rule far from any", in: `{"disable": ["memory"]}`, wantErr: `guard: policy: policy:1:14: disable[0]: "memory" names no rule's findings (package guard/rules lists the names)`},
		{name: "schema not an object", in: `{"tools": {"t": {"schema": "object"}}}`, wantErr: `guard: policy: policy:1:28: tools.t.schema: want an object, got "object"`},
		{name: "schema with a bad pattern", in: `{"tools": {"t": {"schema": {"properties": {"x": {"pattern": "("}}}}}}`, wantErr: "guard: policy: policy:1:28: tools.t.schema: tool schema: pattern \"(\": error parsing regexp: missing closing ): `(`"},
		{name: "schema with negative maxItems", in: `{"tools": {"t": {"schema": {"maxItems": -1}}}}`, wantErr: `guard: policy: policy:1:28: tools.t.schema: tool schema: minItems and maxItems are at least 0`},
		{name: "field both trusted and not", in: "tools:\n  inbox:\n    trusted_fields: [id]\n    untrusted_fields: [body, id]\n", wantErr: `guard: policy: policy:4:23: tools.inbox.untrusted_fields: "id" is also a trusted field`},
		{name: "confidence out of range", in: `{"min_intent_confidence": 60}`, wantErr: `guard: policy: policy:1:27: min_intent_confidence: 60 is not between 0 and 1`},
		{name: "similarity out of range", in: `{"min_similarity": 2}`, wantErr: `guard: policy: policy:1:20: min_similarity: 2 is not between 0 and 1`},
		{name: "negative route similarity", in: `{"route_similarity": {"refund": -0.1}}`, wantErr: `guard: policy: policy:1:33: route_similarity.refund: -0.1 is not between 0 and 1`},
		{name: "empty route name", in: `{"route_similarity": {"": 0.5}}`, wantErr: `guard: policy: policy:1:27: route_similarity: empty route name`},
		{name: "empty tool name", in: `{"tools": {"": {}}}`, wantErr: `guard: policy: policy:1:16: tools: empty tool name`},
		{name: "empty name in a list", in: `{"allowed_tools": ["a", ""]}`, wantErr: `guard: policy: policy:1:25: allowed_tools[1]: empty name`},
		{name: "breaker failures out of range", in: `{"resilience": {"breaker_failures": -1}}`, wantErr: `guard: policy: policy:1:37: resilience.breaker_failures: -1 is out of range (want at least 0)`},
		{name: "negative penalty", in: `{"penalty": -100}`, wantErr: `guard: policy: policy:1:13: penalty: -100 is out of range (want points from 1 to 100 (0: the default, 20))`},
		{name: "penalty over 100", in: "penalty: 101\n", wantErr: `guard: policy: policy:1:10: penalty: 101 is out of range (want points from 1 to 100 (0: the default, 20))`},
		{name: "pass score over 100", in: `{"pass_score": 120}`, wantErr: `guard: policy: policy:1:16: pass_score: 120 is out of range (want a score from 1 to 100 (0: the default, 80))`},
		{name: "negative max_field", in: `{"max_field": -1}`, wantErr: `guard: policy: policy:1:15: max_field: -1 is out of range (want at least 0)`},
		{name: "negative memory budget", in: `{"memory": {"budget": -5}}`, wantErr: `guard: policy: policy:1:23: memory.budget: -5 is out of range (want at least 0)`},
		{name: "version", in: `{"version": 2}`, wantErr: `guard: policy: policy:1:13: version: unsupported version 2 (want 1)`},
		{name: "duplicate JSON key", in: "{\"penalty\": 10,\n \"penalty\": -100}", wantErr: `guard: policy: policy:2:2: key "penalty" repeats the key at line 1, column 2`},
		{name: "duplicate nested JSON key", in: `{"tools": {"a": {"confirm": true, "confirm": false}}}`, wantErr: `guard: policy: policy:1:35: key "confirm" repeats the key at line 1, column 18`},
		{name: "duplicate YAML key", in: "penalty: 10\nshadow: true\npenalty: 20\n", wantErr: `guard: policy: policy:3:1: key "penalty" repeats the key at line 1, column 1`},
		{name: "duplicate YAML tool", in: "tools:\n  a: {}\n  a: {effect: read}\n", wantErr: `guard: policy: policy:3:3: key "a" repeats the key at line 2, column 3`},
		{name: "YAML alias", in: "tables:\n  a: &x [1, 2]\n  b: *x\n", wantErr: `guard: policy: policy:3:6: YAML aliases (*x) are not supported: write the value out`},
		{name: "YAML syntax error", in: "tools:\n  a: {effect: read\n", wantErr: `guard: policy: policy:1:1: did not find expected ',' or '}'`},
		{name: "two YAML documents", in: "shadow: true\n---\nshadow: false\n", wantErr: `guard: policy: policy:2:1: a second YAML document (a policy file holds one)`},
		{name: "YAML not a mapping", in: "- a\n- b\n", wantErr: `guard: policy: policy:1:1: want an object of keys, got an array`},
		{name: "JSON syntax error with position", in: "{\n  \"loop_limit\": 3,\n}", wantErr: `guard: policy: policy:3:1: invalid character '}' looking for beginning of object key string`},
		{name: "truncated", in: `{"loop_limit": 3`, wantErr: `guard: policy: policy: unexpected end of file`},
		{name: "empty file", in: " \n", wantErr: `guard: policy: policy: empty file (the smallest policy is {})`},
		{name: "not an object", in: `[]`, wantErr: `guard: policy: policy:1:1: want an object of keys, got an array`},
		{name: "null", in: `null`, wantErr: `guard: policy: policy:1:1: want an object of keys, got null`},
		{name: "data after the object", in: `{} {}`, wantErr: `guard: policy: policy:1:4: data after the policy object`},
		{name: "now not a time", in: `{"now": "yesterday"}`, wantErr: `guard: policy: policy:1:9: now: "yesterday" is not a time (want RFC 3339, such as 2024-05-15T15:00:00-05:00, or 2024-05-15T15:00:00)`},
		{name: "table with a NaN", in: "tables:\n  t: {a: .nan}\n", wantErr: `guard: policy: policy:2:10: tables.t.a: .nan is not a finite number`},
		{name: "weights not summing to 100", in: "weights: {accuracy: 50, coherence: 40}\n", wantErr: `guard: policy: policy:1:10: weights: the weights sum to 90, not 100`},
		{name: "weight of an unknown dimension", in: "weights: {accuracy: 50, speed: 50}\n", wantErr: `guard: policy: policy:1:32: weights.speed: "speed" is not a dimension (want accuracy, coherence, memory, stability or efficiency)`},
		{name: "negative weight", in: "weights: {accuracy: 130, coherence: -30}\n", wantErr: `guard: policy: policy:1:21: weights.accuracy: 130 is out of range (want 0 to 100)`},
		{name: "weight not a number", in: "weights: {accuracy: high}\n", wantErr: `guard: policy: policy:1:21: weights.accuracy: want a number, got "high"`},
		{name: "empty assertion name", in: "assertions: {disable: ['']}\n", wantErr: `guard: policy: policy:1:24: assertions.disable[0]: empty name`},
		{name: "check without a name", in: "checks:\n  - require: 'true'\n", wantErr: `guard: policy: policy:2:5: checks[0]: a check needs a name`},
		{name: "check without require", in: "checks:\n  - name: c\n", wantErr: `guard: policy: policy:2:5: checks[0]: check "c" needs a require expression`},
		{name: "check name with a space", in: "checks:\n  - {name: 'a b', require: 'true'}\n", wantErr: `guard: policy: policy:2:12: checks[0].name: "a b": a check's name has no spaces (it names its findings)`},
		{name: "check named like a built-in rule", in: "checks:\n  - {name: loop, require: 'true'}\n", wantErr: `guard: policy: policy:2:12: checks[0].name: "loop" is the name of a built-in rule`},
		{name: "two checks of one name", in: "checks:\n  - {name: c, require: 'true'}\ntools:\n  t:\n    checks:\n      - {name: c, require: 'true'}\n", wantErr: `guard: policy: policy:6:16: tools.t.checks[0].name: check "c" is already defined at policy:2:12`},
		{name: "check with a bad verdict", in: "checks:\n  - {name: c, require: 'true', verdict: deny}\n", wantErr: `guard: policy: policy:2:41: checks[0].verdict: "deny" is not a verdict (want allow, retry, block, clarify, refuse or handoff)`},
		{name: "check with a bad severity", in: "checks:\n  - {name: c, require: 'true', severity: high}\n", wantErr: `guard: policy: policy:2:42: checks[0].severity: "high" is not a severity (want info, warning, error or critical)`},
		{name: "check with a bad dimension", in: "checks:\n  - {name: c, require: 'true', dimension: safety}\n", wantErr: `guard: policy: policy:2:43: checks[0].dimension: "safety" is not a dimension (want accuracy, coherence, memory, stability or efficiency)`},
		{name: "check with an empty tag", in: "checks:\n  - {name: c, require: 'true', tags: ['']}\n", wantErr: `guard: policy: policy:2:39: checks[0].tags[0]: empty tag`},
		{name: "expression with an unknown variable", in: "tools:\n  cancel:\n    checks:\n      - name: c\n        require: reservation.status == 'open'\n", wantErr: `guard: policy: policy:5:18: tools.cancel.checks[0].require: undeclared reference to 'reservation'`},
		{name: "expression with an unknown function", in: "checks:\n  - name: c\n    require: \"lookup('x', args.id).ok\"\n", wantErr: `guard: policy: policy:3:21: checks[0].require: undeclared reference to 'lookup'`},
		{name: "expression with a syntax error", in: "checks:\n  - {name: c, when: 'args.x ==', require: 'true'}\n", wantErr: `guard: policy: policy:2:31: checks[0].when: Syntax error: mismatched input '<EOF>' expecting {'[', '{', '(', '.', '-', '!', 'true', 'false', 'null', NUM_FLOAT, NUM_INT, NUM_UINT, STRING, BYTES, IDENTIFIER}`},
		{name: "expression not a boolean", in: "checks:\n  - {name: c, require: 'size(args)'}\n", wantErr: `guard: policy: policy:2:24: checks[0].require: want a boolean expression, got one of type int`},
		{name: "expression of the wrong type", in: "checks:\n  - {name: c, require: true}\n", wantErr: `guard: policy: policy:2:24: checks[0].require: want a CEL expression (a string), got true`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			cfg, err := guard.LoadPolicy(strings.NewReader(tc.in))
			if tc.wantErr != "" {
				if err == nil {
					t.Fatalf("got no error, want %q", tc.wantErr)
				}
				if got := err.Error(); got != tc.wantErr {
					t.Errorf("got error\n\t%s\nwant\n\t%s", got, tc.wantErr)
				}
				var ge *guard.Error
				if !errors.As(err, &ge) || ge.Op != "policy" {
					t.Errorf("error %T is not a *guard.Error with Op \"policy\"", err)
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
	files, err := filepath.Glob(filepath.Join("testdata", "policy", "*.json"))
	if err != nil || len(files) == 0 {
		t.Fatalf("no fixtures: %v", err)
	}
	for _, name := range files {
		t.Run(filepath.Base(name), func(t *testing.T) {
			cfg := loadPolicyFile(t, filepath.Base(name))
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
		{name: "confirm writes", policy: `{"confirm_writes": true}`, want: []string{rules.Injection, rules.Confirmation}},
		{name: "allow-list", policy: `{"allowed_tools": ["get_webpage"]}`, want: []string{rules.AllowList, rules.Injection}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			cfg, err := guard.LoadPolicy(strings.NewReader(tc.policy))
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

func ExampleLoadPolicy() {
	cfg, err := guard.LoadPolicy(strings.NewReader(`{
		"max_steps": 40,
		"confirm_writes": true,
		"tools": {"read_inbox": {"untrusted": true}, "think": {"effect": "read", "empty_ok": true}}
	}`))
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Println(cfg.Gates.MaxSteps, cfg.Gates.ConfirmWrites, cfg.Tools["read_inbox"].Untrusted)

	_, err = guard.LoadPolicy(strings.NewReader(`{"tools": {"send_email": {"confirm": true, "efect": "write"}}}`))
	fmt.Println(err)
	// Output:
	// 40 true true
	// guard: policy: policy:1:44: tools.send_email: unknown field "efect" (did you mean "effect"?)
}

func FuzzLoadPolicy(f *testing.F) {
	files, _ := filepath.Glob(filepath.Join("testdata", "policy", "*.json"))
	worked, _ := filepath.Glob(filepath.Join("..", "examples", "policies", "*.yaml"))
	for _, name := range append(files, worked...) {
		b, err := os.ReadFile(name)
		if err != nil {
			f.Fatal(err)
		}
		f.Add(string(b))
	}
	for _, s := range []string{``, `{}`, `null`, `[]`, `{"tools":{"a":{"schema":{"type":"object","properties":{"x":{"items":{}}}}}}}`,
		`{"tools":{"a":{"schema":{"type":7}}}}`, `{"resilience":{"backoff":"-3h"}}`, `{"loop_limit":1e99}`, `{"tools":{"a":null}}`, `{"disable":[null]}`,
		"penalty: 10\npenalty: 20\n", "a: &x 1\nb: *x\n", "tables: {t: [1, 2.5, x, null, true]}\n",
		"checks:\n  - {name: c, when: 'has(args.x)', require: 'args.x > 1'}\n", "checks:\n  - {name: c, require: \"last('a', args.x).y == 1\"}\n",
		"checks:\n  - {name: c, require: '[1,2,3].all(x, [1,2,3].all(y, x + y > 0))'}\n", "weights: {accuracy: 100}\n", "now: 2024-05-15\n",
		"tools:\n  a:\n    schema: {properties: {x: {pattern: '^a+$', maxItems: 2}}}\n"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		p, err := guard.ReadPolicy("f.yaml", []byte(s))
		if err != nil {
			var ge *guard.Error
			if !errors.As(err, &ge) || ge.Op != "policy" {
				t.Fatalf("error %T %v is not a *guard.Error with Op \"policy\"", err, err)
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
