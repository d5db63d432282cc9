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
				if !slices.Equal(cfg.Gates.AllowedTools, []string{"a", "b"}) || !slices.Equal(cfg.Disable, []string{guard.RuleConfirmation, guard.RuleProvenance}) ||
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
		{name: "nulls mean the default", in: `{"tools": null, "allowed_tools": null, "resilience": null, "max_steps": null}`, check: func(t *testing.T, cfg guard.Config) {
			if cfg.Tools != nil || cfg.Gates.AllowedTools != nil || cfg.Gates.MaxSteps != 0 {
				t.Errorf("got %+v", cfg)
			}
		}},

		{name: "unknown key with a suggestion", in: `{"loop_limt": 2}`, wantErr: `guard: policy: unknown field "loop_limt" (did you mean "loop_limit"?)`},
		{name: "unknown tool key", in: `{"tools": {"send_email": {"efect": "write"}}}`, wantErr: `guard: policy: tools.send_email: unknown field "efect" (did you mean "effect"?)`},
		{name: "unknown key far from any", in: `{"resilience": {"jitter": "1s"}}`,
			wantErr: `guard: policy: resilience: unknown field "jitter" (known: backoff, breaker_failures, breaker_open_for, isolate_tools, model_retries, model_timeout, tool_retries, tool_timeout)`},
		{name: "wrong type", in: `{"tools": {"send_email": {"confirm": "yes"}}}`, wantErr: `guard: policy: tools.send_email.confirm: want true or false, got "yes"`},
		{name: "fraction for an integer", in: `{"max_steps": 2.5}`, wantErr: `guard: policy: max_steps: want an integer, got 2.5`},
		{name: "array of the wrong type", in: `{"allowed_tools": "send_email"}`, wantErr: `guard: policy: allowed_tools: want an array of strings, got "send_email"`},
		{name: "object of the wrong type", in: `{"route_similarity": {"refund": "high"}}`, wantErr: `guard: policy: route_similarity.refund: want a number, got "high"`},
		{name: "array element of the wrong type", in: `{"disable": ["loop", 7]}`, wantErr: `guard: policy: disable[1]: want a string, got 7`},
		{name: "tools not an object", in: `{"tools": ["send_email"]}`, wantErr: `guard: policy: tools: want an object of objects, got an array`},
		{name: "bad duration", in: `{"tools": {"t": {"timeout": "5 seconds"}}}`, wantErr: `guard: policy: tools.t.timeout: "5 seconds" is not a duration (want a Go duration such as "30s" or "1m30s")`},
		{name: "duration as a number", in: `{"resilience": {"backoff": 200}}`, wantErr: `guard: policy: resilience.backoff: want a duration string such as "30s", got 200`},
		{name: "bad verdict", in: `{"empty_result": "ask"}`, wantErr: `guard: policy: empty_result: "ask" is not a verdict for empty results (want "clarify", "retry" or "handoff")`},
		{name: "bad effect", in: `{"tools": {"pay": {"effect": "mutate"}}}`, wantErr: `guard: policy: tools.pay.effect: "mutate" is not an effect (want "read", "write" or "auto")`},
		{name: "unknown rule", in: `{"disable": ["loops"]}`, wantErr: `guard: policy: disable[0]: "loops" is not a built-in rule (known: tool-allow-list, tool-arguments, loop, max-steps, intent-confidence, empty-result, retrieval-similarity, grounding, value-invariant, argument-provenance, confirmation, write-authorization, false-claim, untrusted-relay, memory)`},
		{name: "schema not an object", in: `{"tools": {"t": {"schema": "object"}}}`, wantErr: `guard: policy: tools.t.schema: want an object, got "object"`},
		{name: "confidence out of range", in: `{"min_intent_confidence": 60}`, wantErr: `guard: policy: min_intent_confidence: 60 is not between 0 and 1`},
		{name: "negative similarity", in: `{"route_similarity": {"refund": -0.1}}`, wantErr: `guard: policy: route_similarity.refund: -0.1 is negative`},
		{name: "empty tool name", in: `{"tools": {"": {}}}`, wantErr: `guard: policy: tools: empty tool name`},
		{name: "empty name in a list", in: `{"allowed_tools": ["a", ""]}`, wantErr: `guard: policy: allowed_tools[1]: empty name`},
		{name: "breaker failures out of range", in: `{"resilience": {"breaker_failures": -1}}`, wantErr: `guard: policy: resilience.breaker_failures: -1 is out of range`},
		{name: "version", in: `{"version": 2}`, wantErr: `guard: policy: version: unsupported version 2 (want 1)`},
		{name: "syntax error with position", in: "{\n  \"loop_limit\": 3,\n}", wantErr: `guard: policy: line 3, column 1: invalid character '}' looking for beginning of object key string`},
		{name: "truncated", in: `{"loop_limit": 3`, wantErr: `guard: policy: unexpected end of file`},
		{name: "empty file", in: " \n", wantErr: `guard: policy: empty file (the smallest policy is {})`},
		{name: "not an object", in: `[]`, wantErr: `guard: policy: want a JSON object, got an array`},
		{name: "null", in: `null`, wantErr: `guard: policy: want a JSON object, got null`},
		{name: "data after the object", in: `{} {}`, wantErr: `guard: policy: line 1, column 4: data after the policy object`},
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
		{name: "default", policy: `{}`, want: []string{guard.RuleInjection}},
		{name: "web pages untrusted", policy: `{"tools": {"get_webpage": {"untrusted": true}}}`, want: []string{guard.RuleInjection}},
		{name: "confirm writes", policy: `{"confirm_writes": true}`, want: []string{guard.RuleInjection, guard.RuleConfirmation}},
		{name: "allow-list", policy: `{"allowed_tools": ["get_webpage"]}`, want: []string{guard.RuleAllowList, guard.RuleInjection}},
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
	// guard: policy: tools.send_email: unknown field "efect" (did you mean "effect"?)
}

func FuzzLoadPolicy(f *testing.F) {
	files, _ := filepath.Glob(filepath.Join("testdata", "policy", "*.json"))
	for _, name := range files {
		b, err := os.ReadFile(name)
		if err != nil {
			f.Fatal(err)
		}
		f.Add(string(b))
	}
	for _, s := range []string{``, `{}`, `null`, `[]`, `{"tools":{"a":{"schema":{"type":"object","properties":{"x":{"items":{}}}}}}}`,
		`{"tools":{"a":{"schema":{"type":7}}}}`, `{"resilience":{"backoff":"-3h"}}`, `{"loop_limit":1e99}`, `{"tools":{"a":null}}`, `{"disable":[null]}`} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		cfg, err := guard.LoadPolicy(strings.NewReader(s))
		if err != nil {
			var ge *guard.Error
			if !errors.As(err, &ge) || ge.Op != "policy" {
				t.Fatalf("error %T %v is not a *guard.Error with Op \"policy\"", err, err)
			}
			return
		}
		// A policy that loads makes a guard that judges a trace.
		guard.New(cfg).Evaluate(&trace.Trace{ID: "f", Steps: []*trace.Step{
			{Index: 0, Kind: trace.KindTool, Name: "a", Args: `{"x":1}`},
			{Index: 1, Kind: trace.KindModel, Result: "done"},
		}})
	})
}
