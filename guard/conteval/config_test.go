package conteval

import (
	"errors"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
)

const fullConfig = `{
  "version": "2025-06-01",
  "sampling": {"seed": 7, "hash_consistent": true, "head_rate": 0.02, "tail_per_route": 5,
               "min_confidence": 0.5, "cost_percentile": 0.95, "cost_multiplier": 3,
               "route_cost": {"order-status": 0.004}},
  "gate": {"floor": 0.9, "max_width": 0.1, "level": 0.9, "resamples": 5000, "seed": 3},
  "judge": {"head_share": 0.25, "max_calls": 20, "pass_score": 3, "input_per_million": 0.15, "output_per_million": 0.6},
  "policy": "testdata/policy.yaml",
  "cost_per_sample": 0.0001,
  "history_rounds": 5
}`

func TestParseConfig(t *testing.T) {
	got, err := ParseConfig([]byte(fullConfig))
	if err != nil {
		t.Fatal(err)
	}
	want := Config{
		Version: "2025-06-01",
		Sampling: Sampling{Seed: 7, HashConsistent: true, HeadRate: 0.02, TailPerRoute: 5, MinConfidence: 0.5,
			CostPercentile: 0.95, CostMultiplier: 3, RouteCost: map[string]float64{"order-status": 0.004}},
		Gate:   Gate{Floor: 0.9, MaxWidth: 0.1, Level: 0.9, Resamples: 5000, Seed: 3},
		Judge:  JudgeConfig{HeadShare: 0.25, MaxCalls: 20, PassScore: 3, InputPerMillion: 0.15, OutputPerMillion: 0.6},
		Policy: "testdata/policy.yaml",
		Assertions: AssertionConfig{AllowedTools: []string{"query_order"}, JSONRoutes: []string{"order-api"},
			RetrievalTools: []string{"search_kb"}, MinSimilarity: 0.2, RouteSimilarity: map[string]float64{"after-sales": 0.3},
			RefusalTexts: []string{"Sorry."}, Disable: []string{"allow-list"}},
		CostPerSample: 0.0001,
		HistoryRounds: 5,
	}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("ParseConfig =\n%+v\nwant\n%+v", got, want)
	}
	minimal, err := ParseConfig([]byte(`{"version":"v1"}`))
	if err != nil || !reflect.DeepEqual(minimal, Config{Version: "v1"}) {
		t.Errorf("minimal config: %+v, %v", minimal, err)
	}
}

func TestParseConfigErrors(t *testing.T) {
	tests := []struct {
		name, text, want string
	}{
		{"no version", `{"sampling":{"head_rate":0.1}}`, `no "version"`},
		{"empty version", `{"version":""}`, `no "version"`},
		{"unknown key", `{"version":"v","sampling":{"head_rat":0.1}}`, `unknown field "head_rat"`},
		{"not JSON", `version: 1`, "invalid character"},
		{"two objects", `{"version":"v"} {}`, "text after"},
		{"head rate", `{"version":"v","sampling":{"head_rate":1.5}}`, "sampling.head_rate is 1.5"},
		{"negative head rate", `{"version":"v","sampling":{"head_rate":-0.1}}`, "sampling.head_rate"},
		{"floor", `{"version":"v","gate":{"floor":95}}`, "gate.floor is 95"},
		{"level", `{"version":"v","gate":{"level":1}}`, "gate.level is 1"},
		{"interval", `{"version":"v","gate":{"interval":"wilson"}}`, `gate.interval is "wilson"`},
		{"resamples", `{"version":"v","gate":{"resamples":-1}}`, "gate.resamples"},
		{"price", `{"version":"v","judge":{"input_per_million":-1}}`, "judge prices"},
		{"pass score 6", `{"version":"v","judge":{"pass_score":6}}`, "judge.pass_score is 6, want a score from 1 to 5"},
		{"negative pass score", `{"version":"v","judge":{"pass_score":-1}}`, "judge.pass_score is -1"},
		{"pass score not an integer", `{"version":"v","judge":{"pass_score":3.5}}`, "cannot unmarshal"},
		{"the judge's old key", `{"version":"v","judge":{"pass":true}}`, `unknown field "pass"`},
		{"route cost", `{"version":"v","sampling":{"route_cost":{"a":-1}}}`, `route_cost["a"]`},
		{"the old assertions key", `{"version":"v","assertions":{"json_routes":["x"]}}`, `"assertions" moved to the agent's policy file`},
		{"policy missing", `{"version":"v","policy":"testdata/nope.yaml"}`, `policy: policy: testdata/nope.yaml: no such file or directory`},
		{"policy with a bad assertion", `{"version":"v","policy":"testdata/bad-assertion.yaml"}`, `testdata/bad-assertion.yaml:3:13: assertions.disable[0]: "nope" is not an assertion`},
		{"policy with a bad guard rule", `{"version":"v","policy":"testdata/bad-guard-rule.yaml"}`, `testdata/bad-guard-rule.yaml:2:23: assertions.guard_rules[1]: "loop": want each of`},
		{"type", `{"version":"v","sampling":{"seed":"1"}}`, "cannot unmarshal"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := ParseConfig([]byte(tt.text))
			if !errors.Is(err, ErrConfig) {
				t.Fatalf("err = %v, want ErrConfig", err)
			}
			var e *Error
			if !errors.As(err, &e) || !strings.HasPrefix(err.Error(), "conteval: config: invalid config") || !strings.Contains(err.Error(), tt.want) {
				t.Errorf("err = %q, want it to mention %q", err, tt.want)
			}
		})
	}
}

func TestLoadConfig(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "c.json")
	if err := os.WriteFile(path, []byte(`{"version":"v9","sampling":{"head_rate":0.5}}`), 0o600); err != nil {
		t.Fatal(err)
	}
	c, err := LoadConfig(path)
	if err != nil || c.Version != "v9" || c.Sampling.HeadRate != 0.5 {
		t.Errorf("LoadConfig = %+v, %v", c, err)
	}
	_, err = LoadConfig(filepath.Join(dir, "missing.json"))
	if !errors.Is(err, os.ErrNotExist) || !strings.Contains(err.Error(), "missing.json") {
		t.Errorf("missing file: %v", err)
	}
	// A relative policy path is relative to the config file.
	os.WriteFile(filepath.Join(dir, "p.yaml"), []byte("gates: {json_routes: [api]}\n"), 0o600)
	os.WriteFile(path, []byte(`{"version":"v9","policy":"p.yaml"}`), 0o600)
	if c, err := LoadConfig(path); err != nil || !reflect.DeepEqual(c.Assertions.JSONRoutes, []string{"api"}) {
		t.Errorf("LoadConfig with a policy = %+v, %v", c.Assertions, err)
	}
	os.WriteFile(path, []byte(`{"version":"v9","gate":{"floor":2}}`), 0o600)
	if _, err := LoadConfig(path); !errors.Is(err, ErrConfig) || !strings.Contains(err.Error(), `"`+path+`"`) {
		t.Errorf("bad file: %v", err)
	}
}

func TestFingerprint(t *testing.T) {
	base := Config{Version: "a"}
	tests := []struct {
		name string
		c    Config
		same bool
	}{
		{"other version", Config{Version: "b"}, true},
		{"explicit defaults", Config{Version: "a", Sampling: Sampling{HeadRate: 0.05, TailPerRoute: 3}, Gate: Gate{Floor: 0.95}}, true},
		{"head rate", Config{Version: "a", Sampling: Sampling{HeadRate: 0.1}}, false},
		{"floor", Config{Version: "a", Gate: Gate{Floor: 0.9}}, false},
		{"allow-list", Config{Version: "a", Assertions: AssertionConfig{AllowedTools: []string{"x"}}}, false},
		{"judge pass score at its default", Config{Version: "a", Judge: JudgeConfig{PassScore: DefaultJudgePassScore}}, true},
		{"judge pass score", Config{Version: "a", Judge: JudgeConfig{PassScore: 3}}, false},
	}
	for _, tt := range tests {
		if got := tt.c.Fingerprint() == base.Fingerprint(); got != tt.same {
			t.Errorf("%s: same fingerprint = %v, want %v", tt.name, got, tt.same)
		}
	}
	// The fingerprint of the zero config. It changed when the gate took
	// the method's order and interval (bootstrap, width first, 20 samples
	// at least), since the same flags can get another verdict: a trend
	// kept across that upgrade marks the change.
	if got, want := base.Fingerprint(), "5225042e839c"; got != want {
		t.Errorf("fingerprint %q, want %q", got, want)
	}
}

func FuzzParseConfig(f *testing.F) {
	f.Add([]byte(fullConfig))
	f.Add([]byte(`{"version":"v"}`))
	f.Add([]byte(`{"version":"v","sampling":{"head_rate":1e400}}`))
	f.Fuzz(func(t *testing.T, data []byte) {
		c, err := ParseConfig(data)
		if err != nil {
			if !errors.Is(err, ErrConfig) {
				t.Fatalf("error %v does not wrap ErrConfig", err)
			}
			return
		}
		if c.Version == "" || c.Validate() != nil {
			t.Fatalf("accepted %+v", c)
		}
		// An accepted config runs.
		_ = Select(nil, c.Sampling)
		_ = c.Gate.Judge(1, 2)
	})
}
