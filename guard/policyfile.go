package guard

import (
	"encoding/json"
	"fmt"
	"io"
	"math"
	"os"
	"reflect"
	"slices"
	"strings"
	"time"

	"github.com/agentguard/agentguard/guard/internal/claims"
	"github.com/agentguard/agentguard/guard/internal/detect"
	"github.com/agentguard/agentguard/guard/internal/rulekit"
	"github.com/agentguard/agentguard/guard/rules"
	"github.com/agentguard/agentguard/trace"
	"go.yaml.in/yaml/v3"
)

// maxPolicySize is the largest policy file read, in bytes.
const maxPolicySize = 16 << 20

// LoadPolicy reads a policy file (see ReadPolicy) and returns the Config
// it describes; errors name the file "policy". It is ReadPolicy followed by
// Policy.Config, for callers that need nothing but the guard's settings.
func LoadPolicy(r io.Reader) (Config, error) {
	data, err := io.ReadAll(io.LimitReader(r, maxPolicySize+1))
	if err != nil {
		return Config{}, &Error{Op: "policy", Err: err}
	}
	p, err := ReadPolicy("policy", data)
	if err != nil {
		return Config{}, err
	}
	return p.Config(), nil
}

// Policy is a loaded policy file: one file, YAML or JSON, for everything
// the guard, continuous evaluation (guard/conteval) and the health check
// (guard/health) read about an agent: its tools (effect, trust,
// confirmation, schema), the built-in rules' switches and thresholds, the
// domain checks written as CEL expressions, the assertions of continuous
// evaluation and the health weights. policy.md, beside this file, lists
// every key.
//
// A Policy is immutable and safe for concurrent use.
type Policy struct {
	name       string
	cfg        Config      // the settings, without the checks
	checks     *checksRule // nil when the file has none
	weights    map[trace.Dimension]float64
	assertions PolicyAssertions
	pos        map[string]*yaml.Node
}

// PolicyAssertions is the policy file's "assertions" section, read by
// guard/conteval: which of its built-in assertions to leave out, which of
// the guard's rules to run as assertions, and which answers count as
// refusals. The guard does not read it; conteval checks the names.
type PolicyAssertions struct {
	Disable      []string
	GuardRules   []string
	RefusalTexts []string
}

// ReadPolicy reads a policy file's text; name is what errors call the file
// (usually its path). The text is YAML (comments welcome) or JSON (when it
// starts with '{'). The reading is strict, so that a typo never silently
// turns a rule off: an unknown key, a repeated key, a value of the wrong
// type or out of range, an unknown verdict, effect, dimension or rule
// name, a schema or CEL expression that does not compile — each is an
// error (a *Error with Op "policy") that says where, such as
//
//	guard: policy: airline.yaml:12:7: tools.send_email: unknown field "efect" (did you mean "effect"?)
//	guard: policy: airline.yaml:3:1: key "penalty" repeats the key at line 2, column 1
//	guard: policy: airline.yaml:30:21: tools.cancel_reservation.checks[0].require: undeclared reference to 'reservation'
//
// Every key is optional; an absent key, like 0, false or "", means the
// default of what it sets, so {} is the default guard.
func ReadPolicy(name string, data []byte) (*Policy, error) {
	if len(data) > maxPolicySize {
		return nil, &Error{Op: "policy", Err: fmt.Errorf("%s: file larger than %d bytes", name, maxPolicySize)}
	}
	p, err := readPolicy(name, data)
	if err != nil {
		return nil, &Error{Op: "policy", Err: err}
	}
	return p, nil
}

// OpenPolicy reads the policy file at path; see ReadPolicy.
func OpenPolicy(path string) (*Policy, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, &Error{Op: "policy", Err: err}
	}
	defer f.Close()
	data, err := io.ReadAll(io.LimitReader(f, maxPolicySize+1))
	if err != nil {
		return nil, &Error{Op: "policy", Err: fmt.Errorf("%s: %v", path, err)}
	}
	return ReadPolicy(path, data)
}

// Config returns the guard configuration the policy describes, its checks
// in Rules as one rule named RulePolicyChecks. Set the fields a file cannot
// hold (Ledger, Logger, Classifier, Invariants, Resilience.Fallback, and
// ToolPolicy.IsEmpty beyond empty_ok) on it before calling New; append to
// Rules rather than replacing it. Each call returns a Config of its own.
func (p *Policy) Config() Config {
	cfg := p.cfg
	cfg.Disable = slices.Clone(cfg.Disable)
	if cfg.Tools != nil {
		cfg.Tools = make(ToolPolicies, len(p.cfg.Tools))
		for k, v := range p.cfg.Tools {
			cfg.Tools[k] = v
		}
	}
	if p.checks != nil {
		cfg.Rules = []Rule{p.checks}
	}
	return cfg
}

// WithNow returns a copy of p whose checks read now as t, whatever the
// file's "now" and the steps' times say: the evaluate command's -now flag,
// for traces recorded in a simulated world or without times. The zero t
// returns p.
func (p *Policy) WithNow(t time.Time) *Policy {
	if t.IsZero() || p.checks == nil {
		return p
	}
	q := *p
	q.checks = p.checks.withNow(t)
	return &q
}

// Checks returns the names of the policy's checks, in file order: the
// Rule of their findings.
func (p *Policy) Checks() []string {
	if p.checks == nil {
		return nil
	}
	names := make([]string, len(p.checks.all))
	for i, c := range p.checks.all {
		names[i] = c.name
	}
	return names
}

// Weights returns the health weights the file sets (key "weights"), by
// dimension: each at least 0, summing to 100. Nil means the file sets none
// and the health check's defaults apply.
func (p *Policy) Weights() map[trace.Dimension]float64 {
	if p.weights == nil {
		return nil
	}
	w := make(map[trace.Dimension]float64, len(p.weights))
	for k, v := range p.weights {
		w[k] = v
	}
	return w
}

// Assertions returns the file's "assertions" section, for guard/conteval.
func (p *Policy) Assertions() PolicyAssertions {
	a := p.assertions
	return PolicyAssertions{slices.Clone(a.Disable), slices.Clone(a.GuardRules), slices.Clone(a.RefusalTexts)}
}

// Where returns "file:line:col" of the value at key (such as
// "assertions.disable[1]"), or the file's name when the file does not
// hold the key: for errors found by the packages that read a section.
func (p *Policy) Where(key string) string {
	n := p.pos[key]
	if n == nil {
		return p.name
	}
	return fmt.Sprintf("%s:%d:%d", p.name, n.Line, n.Column)
}

// policyFile is the policy file's shape; the json tags are its keys.
type policyFile struct {
	Version             int                   `json:"version"`
	Profile             string                `json:"profile"`
	AllowedTools        []string              `json:"allowed_tools"`
	LoopLimit           int                   `json:"loop_limit"`
	MaxSteps            int                   `json:"max_steps"`
	Intents             []string              `json:"intents"`
	MinIntentConfidence float64               `json:"min_intent_confidence"`
	EmptyResult         string                `json:"empty_result"`
	MinSimilarity       float64               `json:"min_similarity"`
	RouteSimilarity     map[string]float64    `json:"route_similarity"`
	JSONRoutes          []string              `json:"json_routes"`
	ConfirmWrites       bool                  `json:"confirm_writes"`
	Disable             []string              `json:"disable"`
	RequireApproval     []string              `json:"require_approval"`
	Shadow              bool                  `json:"shadow"`
	MaxRetries          int                   `json:"max_retries"`
	RefusalTemplate     string                `json:"refusal_template"`
	HandoffMessage      string                `json:"handoff_message"`
	MaxField            int                   `json:"max_field"`
	PassScore           int                   `json:"pass_score"`
	Memory              *policyMemory         `json:"memory"`
	Penalty             int                   `json:"penalty"`
	Resilience          policyResilience      `json:"resilience"`
	Tools               map[string]policyTool `json:"tools"`
	Now                 string                `json:"now"`
	Tables              map[string]any        `json:"tables"`
	Checks              []policyCheck         `json:"checks"`
	Assertions          policyAssertions      `json:"assertions"`
	Weights             map[string]float64    `json:"weights"`
}

type policyMemory struct {
	Off    bool `json:"off"`
	Budget int  `json:"budget"`
}

type policyTool struct {
	Effect          string          `json:"effect"`
	Untrusted       bool            `json:"untrusted"`
	TrustedFields   []string        `json:"trusted_fields"`
	UntrustedFields []string        `json:"untrusted_fields"`
	Channel         string          `json:"channel"`
	Confirm         bool            `json:"confirm"`
	Retrieval       bool            `json:"retrieval"`
	Schema          json.RawMessage `json:"schema"`
	Timeout         duration        `json:"timeout"`
	Isolate         bool            `json:"isolate"`
	Retries         int             `json:"retries"`
	EmptyOK         bool            `json:"empty_ok"`
	Checks          []policyCheck   `json:"checks"`
}

type policyResilience struct {
	ToolTimeout     duration `json:"tool_timeout"`
	ModelTimeout    duration `json:"model_timeout"`
	IsolateTools    bool     `json:"isolate_tools"`
	ToolRetries     int      `json:"tool_retries"`
	ModelRetries    int      `json:"model_retries"`
	Backoff         duration `json:"backoff"`
	BreakerFailures int      `json:"breaker_failures"`
	BreakerOpenFor  duration `json:"breaker_open_for"`
}

// policyCheck is one domain check: when (scope) and require (must hold).
type policyCheck struct {
	Name      string     `json:"name"`
	When      policyExpr `json:"when"`
	Require   policyExpr `json:"require"`
	Message   string     `json:"message"`
	Verdict   string     `json:"verdict"`
	Severity  string     `json:"severity"`
	Dimension string     `json:"dimension"`
	Tags      []string   `json:"tags"`
}

// policyExpr is a CEL expression with where the file holds it.
type policyExpr struct {
	src       string
	line, col int
	style     yaml.Style
	path      string
}

type policyAssertions struct {
	Disable      []string `json:"disable"`
	GuardRules   []string `json:"guard_rules"`
	RefusalTexts []string `json:"refusal_texts"`
}

// duration is a time.Duration written as a Go duration string.
type duration time.Duration

func (m *policyMemory) options() *MemoryOptions {
	if m == nil {
		return nil
	}
	return &MemoryOptions{Off: m.Off, Budget: m.Budget}
}

// neverEmpty is the IsEmpty of tools whose empty result is their normal answer.
func neverEmpty(string) bool { return false }

// readPolicy parses, decodes and validates a policy file.
func readPolicy(name string, data []byte) (*Policy, error) {
	root, err := parseTree(name, data)
	if err != nil {
		return nil, err
	}
	if root.Kind != yaml.MappingNode {
		return nil, &posError{file: name, line: root.Line, col: root.Column, msg: "want an object of keys, got " + describeNode(root)}
	}
	d := &decoder{file: name, pos: map[string]*yaml.Node{}}
	f := new(policyFile)
	if err := d.decode(root, "", reflect.ValueOf(f).Elem()); err != nil {
		return nil, err
	}
	return f.policy(d)
}

func jsonKey(f reflect.StructField) string {
	name, _, _ := strings.Cut(f.Tag.Get("json"), ",")
	return name
}

func join(path, key string) string {
	switch {
	case path == "":
		return key
	case key == "":
		return path
	}
	return path + "." + key
}

func describeType(t reflect.Type) string {
	switch {
	case t == reflect.TypeFor[duration]():
		return `a duration string such as "30s"`
	case t == reflect.TypeFor[policyExpr]():
		return "a CEL expression (a string)"
	case t.Kind() == reflect.Bool:
		return "true or false"
	case t.Kind() == reflect.Int:
		return "an integer"
	case t.Kind() == reflect.Float64:
		return "a number"
	case t.Kind() == reflect.String:
		return "a string"
	case t.Kind() == reflect.Slice:
		return "an array of " + strings.TrimPrefix(strings.TrimPrefix(describeType(t.Elem()), "an "), "a ") + "s"
	case t.Kind() == reflect.Map && t.Elem().Kind() == reflect.Struct:
		return "an object of objects"
	case t.Kind() == reflect.Map:
		return "an object of " + strings.TrimPrefix(strings.TrimPrefix(describeType(t.Elem()), "an "), "a ") + "s"
	}
	return "an object"
}

// editDistance is the Levenshtein distance of a and b, in bytes; it gives
// up above 8, since only close names are worth suggesting.
func editDistance(a, b string) int {
	if d := len(a) - len(b); d > 8 || d < -8 || len(a) > 64 {
		return 9
	}
	prev := make([]int, len(b)+1)
	cur := make([]int, len(b)+1)
	for j := range prev {
		prev[j] = j
	}
	for i := 1; i <= len(a); i++ {
		cur[0] = i
		for j := 1; j <= len(b); j++ {
			cost := 1
			if a[i-1] == b[j-1] {
				cost = 0
			}
			cur[j] = min(prev[j]+1, cur[j-1]+1, prev[j-1]+cost)
		}
		prev, cur = cur, prev
	}
	return prev[len(b)]
}

// policy validates the decoded file and builds the Policy.
func (f *policyFile) policy(d *decoder) (*Policy, error) {
	p := &Policy{name: d.file, pos: d.pos}
	if f.Version != 0 && f.Version != 1 {
		return nil, d.at("version", "unsupported version %d (want 1)", f.Version)
	}
	for _, l := range []struct {
		key   string
		names []string
	}{{"allowed_tools", f.AllowedTools}, {"intents", f.Intents}, {"json_routes", f.JSONRoutes}, {"require_approval", f.RequireApproval}} {
		if i := slices.Index(l.names, ""); i >= 0 {
			key := fmt.Sprintf("%s[%d]", l.key, i)
			return nil, d.at(key, "empty name")
		}
	}
	switch pr := Profile(f.Profile); pr {
	case "", ProfileConversational, ProfileAutonomous:
	default:
		return nil, d.at("profile", "%q is not a profile (want %q or %q)", pr, ProfileConversational, ProfileAutonomous)
	}
	if c := f.MinIntentConfidence; c < 0 || c > 1 {
		return nil, d.at("min_intent_confidence", "%v is not between 0 and 1", c)
	}
	switch v := trace.Verdict(f.EmptyResult); v {
	case "", trace.Clarify, trace.Retry, trace.Handoff:
	default:
		return nil, d.at("empty_result", `%q is not a verdict for empty results (want "clarify", "retry" or "handoff")`, v)
	}
	if f.MinSimilarity < 0 || f.MinSimilarity > 1 {
		return nil, d.at("min_similarity", "%v is not between 0 and 1", f.MinSimilarity)
	}
	for _, route := range rulekit.SortedKeys(f.RouteSimilarity) {
		key := join("route_similarity", route)
		if route == "" {
			return nil, d.at("route_similarity", "empty route name")
		}
		if v := f.RouteSimilarity[route]; v < 0 || v > 1 {
			return nil, d.at(key, "%v is not between 0 and 1", v)
		}
	}
	for i, name := range f.Disable {
		if !slices.Contains(knownRules(), name) {
			return nil, d.at(fmt.Sprintf("disable[%d]", i), "%q names no rule's findings (%s)", name, closestRule(name))
		}
	}
	for _, r := range []struct {
		key       string
		v, lo, hi int
		want      string
	}{
		{"max_field", f.MaxField, 0, math.MaxInt32, "at least 0"},
		{"pass_score", f.PassScore, 0, 100, "a score from 1 to 100 (0: the default, 80)"},
		{"penalty", f.Penalty, 0, 100, "points from 1 to 100 (0: the default, 20)"},
		{"resilience.breaker_failures", f.Resilience.BreakerFailures, 0, math.MaxInt32, "at least 0"},
	} {
		if r.v < r.lo || r.v > r.hi {
			return nil, d.at(r.key, "%d is out of range (want %s)", r.v, r.want)
		}
	}
	if f.Memory != nil && f.Memory.Budget < 0 {
		return nil, d.at("memory.budget", "%d is out of range (want at least 0)", f.Memory.Budget)
	}
	for _, r := range []struct {
		key string
		v   duration
	}{{"resilience.backoff", f.Resilience.Backoff}, {"resilience.breaker_open_for", f.Resilience.BreakerOpenFor}} {
		if r.v < 0 {
			return nil, d.at(r.key, "%v is negative", time.Duration(r.v))
		}
	}

	cfg := Config{
		Disable: f.Disable,
		Shadow:  f.Shadow,
		Memory:  f.Memory.options(),
		Resilience: Resilience{
			ToolTimeout:     time.Duration(f.Resilience.ToolTimeout),
			ModelTimeout:    time.Duration(f.Resilience.ModelTimeout),
			IsolateTools:    f.Resilience.IsolateTools,
			ToolRetries:     f.Resilience.ToolRetries,
			ModelRetries:    f.Resilience.ModelRetries,
			Backoff:         time.Duration(f.Resilience.Backoff),
			BreakerFailures: uint32(f.Resilience.BreakerFailures),
			BreakerOpenFor:  time.Duration(f.Resilience.BreakerOpenFor),
		},
		Gates: Gates{
			AllowedTools:        f.AllowedTools,
			LoopLimit:           f.LoopLimit,
			MaxSteps:            f.MaxSteps,
			Intents:             f.Intents,
			MinIntentConfidence: f.MinIntentConfidence,
			EmptyResult:         trace.Verdict(f.EmptyResult),
			MinSimilarity:       f.MinSimilarity,
			RouteSimilarity:     f.RouteSimilarity,
			JSONRoutes:          f.JSONRoutes,
			ConfirmWrites:       f.ConfirmWrites,
			RequireApproval:     f.RequireApproval,
			MaxRetries:          f.MaxRetries,
			Profile:             Profile(f.Profile),
		},
		Answers: Answers{
			RefusalTemplate: f.RefusalTemplate,
			HandoffMessage:  f.HandoffMessage,
		},
		Observe: Observation{
			MaxField: f.MaxField,
		},
		Evaluation: Evaluation{
			PassScore: f.PassScore,
			Penalty:   f.Penalty,
		},
	}
	for _, name := range rulekit.SortedKeys(f.Tools) {
		pt := f.Tools[name]
		path := join("tools", name)
		if strings.TrimSpace(name) == "" {
			return nil, d.at(path, "empty tool name")
		}
		tp := ToolPolicy{Untrusted: pt.Untrusted, TrustedFields: pt.TrustedFields, UntrustedFields: pt.UntrustedFields,
			Confirm: pt.Confirm, Retrieval: pt.Retrieval, Timeout: time.Duration(pt.Timeout), Isolate: pt.Isolate, Retries: pt.Retries}
		if pt.EmptyOK {
			tp.IsEmpty = neverEmpty
		}
		switch Effect(pt.Effect) {
		case EffectAuto, "auto":
		case EffectRead, EffectWrite:
			tp.Effect = Effect(pt.Effect)
		default:
			return nil, d.at(path+".effect", `%q is not an effect (want "read", "write" or "auto")`, pt.Effect)
		}
		if ch := strings.ToLower(strings.TrimSpace(pt.Channel)); ch != "" {
			if !slices.Contains(policyChannels(), ch) {
				return nil, d.at(path+".channel", "%q is not a channel (want one of %s)", pt.Channel, strings.Join(policyChannels(), ", "))
			}
			tp.Channel = ch
		}
		for _, field := range pt.TrustedFields {
			if slices.Contains(pt.UntrustedFields, field) {
				return nil, d.at(path+".untrusted_fields", "%q is also a trusted field", field)
			}
		}
		if len(pt.Schema) > 0 {
			if pt.Schema[0] != '{' {
				return nil, d.at(path+".schema", "want an object, got %s", describeNode(d.pos[path+".schema"]))
			}
			if _, err := compileSchema(pt.Schema); err != nil {
				return nil, d.at(path+".schema", "%v", err)
			}
			tp.Schema = pt.Schema
		}
		if cfg.Tools == nil {
			cfg.Tools = make(ToolPolicies, len(f.Tools))
		}
		cfg.Tools[name] = tp
	}
	p.cfg = cfg

	if len(f.Weights) > 0 {
		w, err := f.weights(d)
		if err != nil {
			return nil, err
		}
		p.weights = w
	}
	a := f.Assertions
	for _, l := range []struct {
		key   string
		names []string
	}{{"assertions.disable", a.Disable}, {"assertions.guard_rules", a.GuardRules}} {
		if i := slices.Index(l.names, ""); i >= 0 {
			return nil, d.at(fmt.Sprintf("%s[%d]", l.key, i), "empty name")
		}
	}
	p.assertions = PolicyAssertions{Disable: a.Disable, GuardRules: a.GuardRules, RefusalTexts: a.RefusalTexts}

	checks, err := compileChecks(d, f)
	if err != nil {
		return nil, err
	}
	p.checks = checks
	return p, nil
}

// weights validates the health weights: the five dimensions, each a finite
// number of at least 0, summing to 100.
func (f *policyFile) weights(d *decoder) (map[trace.Dimension]float64, error) {
	dims := []trace.Dimension{trace.Accuracy, trace.Coherence, trace.Memory, trace.Stability, trace.Efficiency}
	w := make(map[trace.Dimension]float64, len(dims))
	sum := 0.0
	for _, k := range rulekit.SortedKeys(f.Weights) {
		v := f.Weights[k]
		key := join("weights", k)
		if !slices.Contains(dims, trace.Dimension(k)) {
			return nil, d.at(key, "%q is not a dimension (want accuracy, coherence, memory, stability or efficiency)", k)
		}
		if v < 0 || v > 100 {
			return nil, d.at(key, "%v is out of range (want 0 to 100)", v)
		}
		w[trace.Dimension(k)] = v
		sum += v
	}
	if math.Abs(sum-100) > 1e-9 {
		return nil, d.at("weights", "the weights sum to %v, not 100", sum)
	}
	return w, nil
}

// policyChannels are the channels a tool may declare: the false-claim
// rule's and the memory card's, in the default lexicon.
func policyChannels() []string {
	w := detect.Default()
	out := claims.Channels(w)
	for _, ch := range w.Memory.Channels {
		if !slices.Contains(out, ch.Name) {
			out = append(out, ch.Name)
		}
	}
	return out
}

// closestRule suggests the known rule name nearest to name, or says where
// the names are listed.
func closestRule(name string) string {
	best, dist := "", 3
	for _, k := range knownRules() {
		if d := editDistance(name, k); d < dist {
			best, dist = k, d
		}
	}
	if best == "" {
		return "package guard/rules lists the names"
	}
	return fmt.Sprintf("did you mean %q?", best)
}

// knownRules are the names a policy may disable, and no check may take:
// the findings of the built-in rules, of the runtime, and of the rules
// that are off by default.
func knownRules() []string {
	return slices.Concat(rules.Builtin(), rules.Runtime(), []string{rules.ToolFailure, rules.PolicyChecks})
}
