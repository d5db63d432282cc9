package conteval

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/agentguard/agentguard/guard"
	"github.com/agentguard/agentguard/guard/policy"
	"github.com/agentguard/agentguard/guard/rules"
)

// Config is the versioned configuration of an evaluation round: how traces
// are sampled, how the gate judges, how the judge model is used, and the
// parameters of the built-in assertions. It is usually read from a JSON file
// with LoadConfig (the package documentation shows the format). Every field
// whose zero value is documented as a default means that default, so the
// zero Config is a working configuration, reported as version "unversioned".
type Config struct {
	// Version names this configuration, for example "2025-06-01" or "v3".
	// It is written into every report, trend line and regression case, and
	// a round whose version differs from the previous round's is marked on
	// the trend. A config file must have one; empty means "unversioned".
	Version string `json:"version"`
	// Sampling chooses the traces a round evaluates.
	Sampling Sampling `json:"sampling,omitzero"`
	// Gate turns the pass rate of the head sample into a verdict.
	Gate Gate `json:"gate,omitzero"`
	// Judge sets how much an optional judge model scores and what it costs.
	Judge JudgeConfig `json:"judge,omitzero"`
	// Policy names the agent's policy file (package guard/policy), the one the
	// guard and the health check read: its allow-list, JSON routes,
	// retrieval tools, similarity thresholds and "assertions" section set
	// Assertions. A relative path is relative to the config file (to the
	// working directory for ParseConfig). Empty means the default
	// assertions.
	Policy string `json:"policy,omitempty"`
	// Assertions parameterises the built-in assertions (see Defaults).
	// LoadConfig and ParseConfig set it from Policy (AssertionsFromPolicy);
	// a config file has no key of its own for it, so that each setting
	// lives in one file.
	Assertions AssertionConfig `json:"-"`
	// CostPerSample is what evaluating one sample costs besides the judge
	// (compute, storage, a reviewer's glance), in the currency of Step.Cost.
	// Zero means the assertions are free.
	CostPerSample float64 `json:"cost_per_sample,omitempty"`
	// HistoryRounds is how many earlier rounds of a route's pass rate a
	// regression case carries. Zero means 10.
	HistoryRounds int `json:"history_rounds,omitempty"`
}

// Sampling configures the sampler (see Select).
type Sampling struct {
	// Seed seeds the head sampler's keys, and through them the judge's
	// choice of head samples.
	Seed uint64 `json:"seed,omitempty"`
	// MinConfidence forces traces with an intent step (Step.Intent set)
	// whose Confidence is below it. Zero means 0.6; negative turns the band
	// off.
	MinConfidence float64 `json:"min_confidence,omitempty"`
	// CostPercentile is the percentile of a route's trace costs that
	// CostMultiplier multiplies. Zero means 0.99 (p99).
	CostPercentile float64 `json:"cost_percentile,omitempty"`
	// CostMultiplier forces traces that cost more than their route's
	// percentile cost times it. Zero means 2; negative turns the band off.
	CostMultiplier float64 `json:"cost_multiplier,omitempty"`
	// RouteCost gives a route's percentile cost from a baseline (say, last
	// week's p99) instead of computing it from the round's own traces,
	// which cannot flag anything on a route with too few traces.
	RouteCost map[string]float64 `json:"route_cost,omitempty"`
	// HeadRate is the share of all traces the head sampler takes, in
	// (0, 1]; at least one trace is always taken. Zero means 0.05.
	HeadRate float64 `json:"head_rate,omitempty"`
	// HashConsistent makes a trace's head key a hash of Seed and its id
	// rather than the next number of a seeded generator in input order, so
	// that every evaluator with the same seed takes the same traces,
	// whatever else its input holds.
	HashConsistent bool `json:"hash_consistent,omitempty"`
	// TailPerRoute is how many of each route's most expensive normal
	// traces (in no forced band) the tail sampler takes. Zero means 3;
	// negative turns the band off.
	TailPerRoute int `json:"tail_per_route,omitempty"`
}

// JudgeConfig configures the optional judge model (see Evaluator.Judge).
type JudgeConfig struct {
	// HeadShare is the share of the head sample the judge scores besides
	// every red sample; at least one head sample when there is any. Zero
	// means 0.1; negative means none.
	HeadShare float64 `json:"head_share,omitempty"`
	// MaxCalls caps the judge calls of a round: red samples first, in
	// input order, then head samples. Zero means 100.
	MaxCalls int `json:"max_calls,omitempty"`
	// InputPerMillion and OutputPerMillion price the judge's tokens, per
	// million, in the currency of Step.Cost.
	InputPerMillion  float64 `json:"input_per_million,omitempty"`
	OutputPerMillion float64 `json:"output_per_million,omitempty"`
	// PassScore is the lowest of the judge's scores (1 to 5: 5 correct,
	// 4 minor flaws, 3 errors recovered, 2 structural errors, 1 unusable)
	// that passes a sample. Zero means 4: a run whose errors the agent
	// recovered from fails in the judge's view; 3 passes it too.
	PassScore int `json:"pass_score,omitempty"`
}

// Pricing returns the judge's prices as a guard.Pricing.
func (j JudgeConfig) Pricing() guard.Pricing {
	return guard.Pricing{InputPerMillion: j.InputPerMillion, OutputPerMillion: j.OutputPerMillion}
}

// AssertionConfig parameterises the built-in assertions (see Defaults). It
// is read from the policy file (AssertionsFromPolicy).
type AssertionConfig struct {
	// AllowedTools is the allow-list of AllowedTools. Empty means each
	// trace's own offered tools (Trace.Tools).
	AllowedTools []string `json:"allowed_tools,omitempty"`
	// JSONRoutes are the routes whose answers must be JSON (JSONAnswer,
	// NonNegativeAmounts).
	JSONRoutes []string `json:"json_routes,omitempty"`
	// RetrievalTools name the tools whose results are documents, as
	// guard.ToolPolicy.Retrieval does (CitationsRetrieved,
	// RefusalWithoutEvidence). Retrieval steps count whatever this says.
	RetrievalTools []string `json:"retrieval_tools,omitempty"`
	// MinSimilarity and RouteSimilarity set when retrieved evidence is too
	// weak to answer from, as guard.Gates says. Zero means only a
	// retrieval that returned nothing is no evidence.
	MinSimilarity   float64            `json:"min_similarity,omitempty"`
	RouteSimilarity map[string]float64 `json:"route_similarity,omitempty"`
	// RefusalTexts are answers that count as refusals besides steps marked
	// Step.Refusal. Empty means the guard's refusal and handoff message in
	// every language of the default lexicon.
	RefusalTexts []string `json:"refusal_texts,omitempty"`
	// Disable names built-in assertions to leave out.
	Disable []string `json:"disable,omitempty"`
	// GuardRules names guard rules to run as assertions too, through
	// FromRule, each under its own name (see GuardRuleNames): "grounding"
	// also catches clause numbers no document holds, "argument-provenance"
	// identifying values from nowhere and content sent to the wrong
	// entity, "loop" repeated calls, "empty-result" answers that go on
	// after an empty lookup, "confirmation" writes the user did not
	// confirm.
	GuardRules []string `json:"guard_rules,omitempty"`
}

// AssertionsFromPolicy returns the assertions' parameters from the
// agent's policy file: gates.allowed_tools, json_routes, min_similarity
// and route_similarity as the guard reads them, the tools marked retrieval,
// and the "assertions" section (disable, guard_rules, refusal_texts). An
// unknown assertion or guard rule name is an error wrapping ErrConfig that
// names its place in the policy file.
func AssertionsFromPolicy(p *policy.Policy) (AssertionConfig, error) {
	cfg := p.Config()
	pa := p.Assertions()
	a := AssertionConfig{
		AllowedTools:    cfg.Gates.AllowedTools,
		JSONRoutes:      cfg.Gates.JSONRoutes,
		MinSimilarity:   cfg.Gates.MinSimilarity,
		RouteSimilarity: cfg.Gates.RouteSimilarity,
		RefusalTexts:    pa.RefusalTexts,
		Disable:         pa.Disable,
		GuardRules:      pa.GuardRules,
	}
	for name, tp := range cfg.Tools {
		if tp.Retrieval {
			a.RetrievalTools = append(a.RetrievalTools, name)
		}
	}
	slices.Sort(a.RetrievalTools)
	known := DefaultNames()
	for i, name := range a.Disable {
		if !slices.Contains(known, name) {
			key := fmt.Sprintf("assertions.disable[%d]", i)
			return AssertionConfig{}, &Error{Op: "config", Err: fmt.Errorf("%w: %s: %s: %q is not an assertion (want one of %s)", ErrConfig, p.Where(key), key, name, strings.Join(known, ", "))}
		}
	}
	for i, name := range a.GuardRules {
		if !slices.Contains(GuardRuleNames(), name) || slices.Contains(a.GuardRules[:i], name) {
			key := fmt.Sprintf("assertions.guard_rules[%d]", i)
			return AssertionConfig{}, &Error{Op: "config", Err: fmt.Errorf("%w: %s: %s: %q: want each of %s at most once", ErrConfig, p.Where(key), key, name, strings.Join(GuardRuleNames(), ", "))}
		}
	}
	return a, nil
}

// GuardRuleNames returns the guard rules AssertionConfig.GuardRules may
// name.
func GuardRuleNames() []string {
	return []string{rules.Grounding, rules.Provenance, rules.Loop, rules.EmptyResult, rules.Confirmation}
}

// guardRule returns the guard rule named name as a default guard with a's
// tool policies runs it: the guard's own registry, so the assertion and the
// online rule are one rule with one configuration.
func (a AssertionConfig) guardRule(name string) guard.Rule {
	r, _ := guard.New(guard.Config{Tools: a.Tools()}).Rule(name)
	return r
}

// Tools returns the tool policies the assertions use: RetrievalTools
// marked Retrieval.
func (a AssertionConfig) Tools() map[string]guard.ToolPolicy {
	tp := map[string]guard.ToolPolicy{}
	for _, name := range a.RetrievalTools {
		tp[name] = guard.ToolPolicy{Retrieval: true}
	}
	return tp
}

// Defaults of the configuration.
const (
	DefaultMinConfidence  = 0.6
	DefaultCostPercentile = 0.99
	DefaultCostMultiplier = 2
	DefaultHeadRate       = 0.05
	DefaultTailPerRoute   = 3
	DefaultFloor          = 0.95
	DefaultMaxWidth       = 0.15
	DefaultLevel          = 0.95
	DefaultResamples      = 10000
	DefaultJudgeHeadShare = 0.1
	DefaultJudgeMaxCalls  = 100
	DefaultJudgePassScore = 4
	DefaultHistoryRounds  = 10
)

// Unversioned is the version reported for a Config whose Version is empty.
const Unversioned = "unversioned"

// withDefaults returns c with every defaulted zero field set.
func (c Config) withDefaults() Config {
	if c.Version == "" {
		c.Version = Unversioned
	}
	c.Sampling = c.Sampling.withDefaults()
	c.Gate = c.Gate.withDefaults()
	if c.Judge.HeadShare == 0 {
		c.Judge.HeadShare = DefaultJudgeHeadShare
	}
	if c.Judge.MaxCalls == 0 {
		c.Judge.MaxCalls = DefaultJudgeMaxCalls
	}
	if c.Judge.PassScore == 0 {
		c.Judge.PassScore = DefaultJudgePassScore
	}
	if c.HistoryRounds == 0 {
		c.HistoryRounds = DefaultHistoryRounds
	}
	return c
}

func (s Sampling) withDefaults() Sampling {
	if s.MinConfidence == 0 {
		s.MinConfidence = DefaultMinConfidence
	}
	if s.CostPercentile == 0 {
		s.CostPercentile = DefaultCostPercentile
	}
	if s.CostMultiplier == 0 {
		s.CostMultiplier = DefaultCostMultiplier
	}
	if s.HeadRate == 0 {
		s.HeadRate = DefaultHeadRate
	}
	if s.TailPerRoute == 0 {
		s.TailPerRoute = DefaultTailPerRoute
	}
	return s
}

// Validate reports the first field of c that is out of range, as an *Error
// wrapping ErrConfig. Zero fields, which mean their defaults, are valid.
func (c Config) Validate() error {
	if err := c.validate(); err != nil {
		return &Error{Op: "config", Err: fmt.Errorf("%w: %v", ErrConfig, err)}
	}
	return nil
}

func (c Config) validate() error {
	bad := func(field string, v any, want string) error {
		return fmt.Errorf("%s is %v, want %s", field, v, want)
	}
	finite := func(x float64) bool { return !math.IsNaN(x) && !math.IsInf(x, 0) }
	in01 := func(x float64) bool { return finite(x) && x >= 0 && x <= 1 }
	s, g, j := c.Sampling, c.Gate, c.Judge
	switch {
	case strings.TrimSpace(c.Version) != c.Version:
		return bad("version", fmt.Sprintf("%q", c.Version), "no surrounding spaces")
	case !finite(s.MinConfidence) || s.MinConfidence > 1:
		return bad("sampling.min_confidence", s.MinConfidence, "at most 1 (negative: off)")
	case !finite(s.CostPercentile) || s.CostPercentile < 0 || s.CostPercentile > 1:
		return bad("sampling.cost_percentile", s.CostPercentile, "in (0, 1]")
	case !finite(s.CostMultiplier):
		return bad("sampling.cost_multiplier", s.CostMultiplier, "a number (negative: off)")
	case !in01(s.HeadRate):
		return bad("sampling.head_rate", s.HeadRate, "in (0, 1]")
	case !in01(g.Floor):
		return bad("gate.floor", g.Floor, "in (0, 1]")
	case !in01(g.MaxWidth):
		return bad("gate.max_width", g.MaxWidth, "in (0, 1]")
	case !finite(g.Level) || g.Level < 0 || g.Level >= 1:
		return bad("gate.level", g.Level, "in (0, 1)")
	case g.Resamples < 0 || g.Resamples > 10_000_000:
		return bad("gate.resamples", g.Resamples, "in [1, 10000000]")
	case g.Interval != "" && g.Interval != IntervalBootstrap && g.Interval != IntervalUnion:
		return bad("gate.interval", fmt.Sprintf("%q", g.Interval), `"bootstrap" or "union"`)
	case g.MinSamples < 0:
		return bad("gate.min_samples", g.MinSamples, "positive")
	case !finite(j.HeadShare) || j.HeadShare > 1:
		return bad("judge.head_share", j.HeadShare, "at most 1 (negative: none)")
	case j.MaxCalls < 0:
		return bad("judge.max_calls", j.MaxCalls, "positive")
	case !finite(j.InputPerMillion) || j.InputPerMillion < 0 || !finite(j.OutputPerMillion) || j.OutputPerMillion < 0:
		return bad("judge prices", fmt.Sprintf("%v/%v", j.InputPerMillion, j.OutputPerMillion), "non-negative")
	case j.PassScore < 0 || j.PassScore > 5:
		return bad("judge.pass_score", j.PassScore, "a score from 1 to 5")
	case !finite(c.CostPerSample) || c.CostPerSample < 0:
		return bad("cost_per_sample", c.CostPerSample, "non-negative")
	case c.HistoryRounds < 0:
		return bad("history_rounds", c.HistoryRounds, "positive")
	case !finite(c.Assertions.MinSimilarity):
		return bad("assertions.min_similarity", c.Assertions.MinSimilarity, "a number")
	}
	for route, v := range s.RouteCost {
		if !finite(v) || v < 0 {
			return bad(fmt.Sprintf("sampling.route_cost[%q]", route), v, "non-negative")
		}
	}
	known := DefaultNames()
	for _, name := range c.Assertions.Disable {
		if !slices.Contains(known, name) {
			return fmt.Errorf("assertions.disable names %q, not one of %s", name, strings.Join(known, ", "))
		}
	}
	for i, name := range c.Assertions.GuardRules {
		if !slices.Contains(GuardRuleNames(), name) || slices.Contains(c.Assertions.GuardRules[:i], name) {
			return fmt.Errorf("assertions.guard_rules names %q: want each of %s at most once", name, strings.Join(GuardRuleNames(), ", "))
		}
	}
	return nil
}

// Fingerprint returns a short hash of every parameter of c but its
// Version, defaults applied: two configs with the same fingerprint sample,
// assert and gate alike. The trend uses it to notice parameters that
// changed without a new version.
func (c Config) Fingerprint() string {
	d := c.withDefaults()
	d.Version = ""
	d.Policy = "" // what it sets is in Assertions; a moved file is the same config
	if d.Judge.PassScore == DefaultJudgePassScore {
		// Left out at its default, so that a config written before the
		// key existed keeps its fingerprint.
		d.Judge.PassScore = 0
	}
	// The fields in the order the file had them before the assertions
	// moved to the policy file, so that a fingerprint does not change with
	// the move.
	b, _ := json.Marshal(struct {
		Version       string          `json:"version"`
		Sampling      Sampling        `json:"sampling,omitzero"`
		Gate          Gate            `json:"gate,omitzero"`
		Judge         JudgeConfig     `json:"judge,omitzero"`
		Assertions    AssertionConfig `json:"assertions,omitzero"`
		CostPerSample float64         `json:"cost_per_sample,omitempty"`
		HistoryRounds int             `json:"history_rounds,omitempty"`
	}{d.Version, d.Sampling, d.Gate, d.Judge, d.Assertions, d.CostPerSample, d.HistoryRounds}) // map keys are sorted
	sum := sha256.Sum256(b)
	return hex.EncodeToString(sum[:6])
}

// ParseConfig reads a config from its JSON text, and the policy file it
// names (relative to the working directory). Unknown keys, a missing or
// empty "version" and out-of-range values are errors wrapping ErrConfig;
// a policy file that does not load is an error wrapping the guard's.
func ParseConfig(data []byte) (Config, error) {
	c, err := parseConfig(data, "")
	if err != nil {
		return Config{}, &Error{Op: "config", Err: err}
	}
	return c, nil
}

// LoadConfig reads a config file; see ParseConfig. A relative policy path
// is relative to the config file.
func LoadConfig(path string) (Config, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return Config{}, &Error{Op: "config", Path: path, Err: err}
	}
	c, err := parseConfig(data, filepath.Dir(path))
	if err != nil {
		return Config{}, &Error{Op: "config", Path: path, Err: err}
	}
	return c, nil
}

func parseConfig(data []byte, dir string) (Config, error) {
	var keys map[string]json.RawMessage
	if json.Unmarshal(data, &keys) == nil {
		if _, ok := keys["assertions"]; ok {
			return Config{}, fmt.Errorf(`%w: "assertions" moved to the agent's policy file (its allow-list, json_routes, retrieval tools, similarity thresholds and "assertions" section): name the file with "policy"`, ErrConfig)
		}
	}
	var c Config
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&c); err != nil {
		return Config{}, fmt.Errorf("%w: %v", ErrConfig, err)
	}
	if _, err := dec.Token(); !errors.Is(err, io.EOF) {
		return Config{}, fmt.Errorf("%w: text after the JSON object", ErrConfig)
	}
	if c.Version == "" {
		return Config{}, fmt.Errorf(`%w: no "version"`, ErrConfig)
	}
	if c.Policy != "" {
		path := c.Policy
		if !filepath.IsAbs(path) && dir != "" {
			path = filepath.Join(dir, path)
		}
		p, err := policy.Open(path)
		if err != nil {
			return Config{}, fmt.Errorf("%w: policy: %w", ErrConfig, err)
		}
		a, err := AssertionsFromPolicy(p)
		if err != nil {
			var e *Error
			if errors.As(err, &e) {
				return Config{}, e.Err
			}
			return Config{}, err
		}
		c.Assertions = a
	}
	if err := c.validate(); err != nil {
		return Config{}, fmt.Errorf("%w: %v", ErrConfig, err)
	}
	return c, nil
}
