package policy

import (
	"errors"
	"fmt"
	"io"
	"io/fs"
	"math"
	"os"
	"reflect"
	"slices"
	"strings"
	"time"

	"github.com/agentguard/agentguard/guard"
	"github.com/agentguard/agentguard/guard/internal/claims"
	"github.com/agentguard/agentguard/guard/internal/detect"
	"github.com/agentguard/agentguard/guard/internal/rulekit"
	"github.com/agentguard/agentguard/guard/internal/schema"
	"github.com/agentguard/agentguard/guard/rules"
	"github.com/agentguard/agentguard/trace"
	"go.yaml.in/yaml/v3"
)

// maxSize is the largest policy file read, in bytes.
const maxSize = 16 << 20

// Version is the version of the file format this package reads.
const Version = 2

// Policy is a loaded policy File: one file, YAML or JSON, for everything
// the guard, continuous evaluation (guard/conteval) and the health check
// (guard/health) read about an agent. Its keys are guard.Config's, with
// the same names (Gates.LoopLimit is gates.loop_limit), plus what only a
// file says: domain checks written as CEL expressions, the assertions of
// continuous evaluation and the health weights. policy.md, beside this
// file, lists every key.
//
// A Policy is immutable and safe for concurrent use.
type Policy struct {
	name       string
	cfg        guard.Config // the settings, without the checks
	checks     *checksRule  // nil when the file has none
	tests      []Test
	weights    map[trace.Dimension]float64
	assertions Assertions
	pos        map[string]*yaml.Node
}

// Assertions is the policy file's "assertions" section, read by
// guard/conteval: which of its built-in assertions to leave out, which of
// the guard's rules to run as assertions, and which answers count as
// refusals. The guard does not read it; conteval checks the names.
type Assertions struct {
	Disable      []string
	GuardRules   []string
	RefusalTexts []string
}

// Read reads a policy file's text; name is what errors call the file
// (usually its path). The text is YAML (comments welcome) or JSON (when it
// starts with '{'). The reading is strict, so that a typo never silently
// turns a rule off: an unknown key, a repeated key, a value of the wrong
// type or out of range, an unknown verdict, effect, dimension or rule
// name, a schema or CEL expression that does not compile — each is an
// *Error that says where, such as
//
//	policy: airline.yaml:12:7: tools.send_email: unknown field "efect" (did you mean "effect"?)
//	policy: airline.yaml:3:1: key "penalty" repeats the key at line 2, column 1
//	policy: airline.yaml:30:21: tools.cancel_reservation.checks[0].require: undeclared reference to 'reservation'
//
// Every key is optional; an absent key, like 0, false or "", means the
// default of what it sets, so {} is the default guard.
func Read(name string, data []byte) (*Policy, error) {
	if len(data) > maxSize {
		return nil, &Error{File: name, Msg: fmt.Sprintf("file larger than %d bytes", maxSize)}
	}
	return read(name, data)
}

// Open reads the policy file at path; see Read.
func Open(path string) (*Policy, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, &Error{File: path, Err: pathCause(err)}
	}
	defer f.Close()
	data, err := io.ReadAll(io.LimitReader(f, maxSize+1))
	if err != nil {
		return nil, &Error{File: path, Err: pathCause(err)}
	}
	return Read(path, data)
}

// pathCause is err without the path an *fs.PathError repeats.
func pathCause(err error) error {
	var pe *fs.PathError
	if errors.As(err, &pe) {
		return pe.Err
	}
	return err
}

// Config returns the guard configuration the policy describes, its checks
// in Rules as one rule, rules.PolicyChecks. Set the fields a file cannot
// hold (Ledger, Logger, Classifier, Invariants, Resilience.Fallback,
// ToolPolicy.IsEmpty) on it before calling guard.New; append to Rules
// rather than replacing it. Each call returns a Config of its own.
func (p *Policy) Config() guard.Config {
	cfg := p.cfg
	cfg.Disable = slices.Clone(cfg.Disable)
	if cfg.Tools != nil {
		cfg.Tools = make(map[string]guard.ToolPolicy, len(p.cfg.Tools))
		for k, v := range p.cfg.Tools {
			cfg.Tools[k] = v
		}
	}
	if cfg.Memory != nil {
		m := *cfg.Memory
		cfg.Memory = &m
	}
	if p.checks != nil {
		cfg.Rules = []guard.Rule{p.checks}
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
func (p *Policy) Assertions() Assertions {
	a := p.assertions
	return Assertions{slices.Clone(a.Disable), slices.Clone(a.GuardRules), slices.Clone(a.RefusalTexts)}
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

// policyFile is the policy file's shape: guard.Config's keys, by their
// json names, and what only a file says.
type policyFile struct {
	Version int `json:"version"`
	guard.Config
	Tools      map[string]policyTool `json:"tools"` // guard.Config's, with checks
	Now        string                `json:"now"`
	Tables     map[string]any        `json:"tables"`
	Variables  []policyVariable      `json:"variables"`
	Checks     []policyCheck         `json:"checks"`
	Assertions policyAssertions      `json:"assertions"`
	Weights    map[string]float64    `json:"weights"`
	Tests      []policyTest          `json:"tests"`
}

// policyTest is one unit test of the file's checks (see tests.go).
type policyTest struct {
	Name         string       `json:"name"`
	Now          string       `json:"now"`
	Conversation []policyTurn `json:"conversation"`
	Want         []string     `json:"want"`
}

// policyTurn is one entry of a test's conversation: exactly one of a user
// turn, what the agent said, or a tool call with its result or error.
type policyTurn struct {
	User   string         `json:"user"`
	Agent  string         `json:"agent"`
	Tool   string         `json:"tool"`
	Args   map[string]any `json:"args"`
	Result any            `json:"result"`
	Error  string         `json:"error"`
	// Together puts a tool call in the message that proposed the call
	// before it: calls proposed at once (the checks' batch).
	Together bool `json:"together"`
}

// policyTool is one tool's guard.ToolPolicy and its checks.
type policyTool struct {
	guard.ToolPolicy
	Checks []policyCheck `json:"checks"`
}

// policyVariable is a named expression the checks read as
// variables.<name>, as a Kubernetes ValidatingAdmissionPolicy's variables.
type policyVariable struct {
	Name       string     `json:"name"`
	Expression policyExpr `json:"expression"`
}

// policyCheck is one domain check: when (scope) and require (must hold).
type policyCheck struct {
	Name      string     `json:"name"`
	On        string     `json:"on"`
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

// read parses, decodes and validates a policy file.
func read(name string, data []byte) (*Policy, error) {
	root, err := parseTree(name, data)
	if err != nil {
		return nil, err
	}
	if root.Kind != yaml.MappingNode {
		return nil, &Error{File: name, Line: root.Line, Col: root.Column, Msg: "want an object of keys, got " + describeNode(root)}
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
	case t == reflect.TypeFor[time.Duration]():
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

// movedKeys are the top-level keys of version 1 files and where version 2
// keeps them, for the error that meets an old file.
var movedKeys = func() map[string]string {
	m := map[string]string{}
	cfg := reflect.TypeFor[guard.Config]()
	for _, group := range []string{"gates", "answers", "observe", "evaluation"} {
		for i := range cfg.NumField() {
			f := cfg.Field(i)
			if jsonKey(f) != group {
				continue
			}
			for k := range structFields(f.Type) {
				m[k] = group + "." + k
			}
		}
	}
	return m
}()

// policy validates the decoded file and builds the Policy.
func (f *policyFile) policy(d *decoder) (*Policy, error) {
	if err := f.checkVersion(d); err != nil {
		return nil, err
	}
	cfg := f.Config
	if err := checkGates(d, &cfg); err != nil {
		return nil, err
	}
	if err := checkRanges(d, &cfg); err != nil {
		return nil, err
	}
	tools, err := f.tools(d)
	if err != nil {
		return nil, err
	}
	cfg.Tools = tools
	p := &Policy{name: d.file, pos: d.pos, cfg: cfg}
	if len(f.Weights) > 0 {
		if p.weights, err = f.weights(d); err != nil {
			return nil, err
		}
	}
	if p.assertions, err = f.assertions(d); err != nil {
		return nil, err
	}
	if p.checks, err = compileChecks(d, f); err != nil {
		return nil, err
	}
	if p.tests, err = f.tests(d, p.checks); err != nil {
		return nil, err
	}
	return p, nil
}

// checkVersion refuses a file of a version this package does not read.
func (f *policyFile) checkVersion(d *decoder) error {
	switch f.Version {
	case 0, Version:
	case 1:
		return d.at("version", "version 1 is no longer read: version 2 nests the guard's settings as guard.Config does (gates.loop_limit, answers.refusal_template, observe.max_field, evaluation.pass_score; see policy.md)")
	default:
		return d.at("version", "unsupported version %d (want %d)", f.Version, Version)
	}
	return nil
}

// checkGates checks the gates' settings and the disabled rule names: names
// not empty, profiles, verdicts and thresholds each one the gate takes.
func checkGates(d *decoder, cfg *guard.Config) error {
	g := &cfg.Gates
	for _, l := range []struct {
		key   string
		names []string
	}{{"gates.allowed_tools", g.AllowedTools}, {"gates.intents", g.Intents}, {"gates.json_routes", g.JSONRoutes}, {"gates.require_approval", g.RequireApproval}, {"answers.pass_through_routes", cfg.Answers.PassThroughRoutes}} {
		if i := slices.Index(l.names, ""); i >= 0 {
			return d.at(fmt.Sprintf("%s[%d]", l.key, i), "empty name")
		}
	}
	switch g.Profile {
	case "", guard.ProfileConversational, guard.ProfileAutonomous:
	default:
		return d.at("gates.profile", "%q is not a profile (want %q or %q)", g.Profile, guard.ProfileConversational, guard.ProfileAutonomous)
	}
	switch g.Confirmation {
	case "", guard.ConfirmYesOrRequest, guard.ConfirmYes:
	default:
		return d.at("gates.confirmation", "%q is not a confirmation (want %q or %q)", g.Confirmation, guard.ConfirmYesOrRequest, guard.ConfirmYes)
	}
	for _, v := range []struct {
		key     string
		verdict trace.Verdict
		allowed []trace.Verdict
	}{
		{"gates.empty_result", g.EmptyResult, []trace.Verdict{trace.Clarify, trace.Retry, trace.Handoff}},
		{"gates.dead_ends", g.DeadEnds, []trace.Verdict{trace.Handoff, trace.Clarify, trace.Retry}},
	} {
		if v.verdict != "" && !slices.Contains(v.allowed, v.verdict) {
			return d.at(v.key, "%q is not a verdict here (want %q, %q or %q)", v.verdict, v.allowed[0], v.allowed[1], v.allowed[2])
		}
	}
	for _, r := range []struct {
		key string
		v   float64
	}{{"gates.min_intent_confidence", g.MinIntentConfidence}, {"gates.min_similarity", g.MinSimilarity}} {
		if r.v < 0 || r.v > 1 {
			return d.at(r.key, "%v is not between 0 and 1", r.v)
		}
	}
	for _, route := range rulekit.SortedKeys(g.RouteSimilarity) {
		key := join("gates.route_similarity", route)
		if route == "" {
			return d.at("gates.route_similarity", "empty route name")
		}
		if v := g.RouteSimilarity[route]; v < 0 || v > 1 {
			return d.at(key, "%v is not between 0 and 1", v)
		}
	}
	for i, name := range cfg.Disable {
		if !slices.Contains(knownRules(), name) {
			return d.at(fmt.Sprintf("disable[%d]", i), "%q names no rule's findings (%s)", name, closestRule(name))
		}
	}
	return nil
}

// checkRanges checks the numbers outside the gates: caps, scores,
// budgets, durations and prices, each within its range.
func checkRanges(d *decoder, cfg *guard.Config) error {
	budget := 0
	if cfg.Memory != nil {
		budget = cfg.Memory.Budget
	}
	for _, r := range []struct {
		key       string
		v, lo, hi int
		want      string
	}{
		{"observe.max_field", cfg.Observe.MaxField, 0, math.MaxInt32, "at least 0"},
		{"observe.trace_every", cfg.Observe.TraceEvery, 0, math.MaxInt32, "at least 0 (0: save finished traces only)"},
		{"evaluation.pass_score", cfg.Evaluation.PassScore, 0, 100, "a score from 1 to 100 (0: the default, 80)"},
		{"evaluation.penalty", cfg.Evaluation.Penalty, 0, 100, "points from 1 to 100 (0: the default, 20)"},
		{"memory.budget", budget, 0, math.MaxInt32, "at least 0"},
	} {
		if r.v < r.lo || r.v > r.hi {
			return d.at(r.key, "%d is out of range (want %s)", r.v, r.want)
		}
	}
	for _, r := range []struct {
		key string
		v   time.Duration
	}{{"resilience.backoff", cfg.Resilience.Backoff}, {"resilience.breaker_open_for", cfg.Resilience.BreakerOpenFor}} {
		if r.v < 0 {
			return d.at(r.key, "%v is negative", r.v)
		}
	}
	for _, r := range []struct {
		key string
		v   float64
	}{{"observe.pricing.input_per_million", cfg.Observe.Pricing.InputPerMillion}, {"observe.pricing.output_per_million", cfg.Observe.Pricing.OutputPerMillion}} {
		if r.v < 0 {
			return d.at(r.key, "%v is negative", r.v)
		}
	}
	return nil
}

// tools checks each tool's policy and returns them as Config.Tools holds
// them: the effect and channel normalised, the schema compiled once to
// prove it compiles.
func (f *policyFile) tools(d *decoder) (map[string]guard.ToolPolicy, error) {
	var tools map[string]guard.ToolPolicy
	for _, name := range rulekit.SortedKeys(f.Tools) {
		tp := f.Tools[name].ToolPolicy
		path := join("tools", name)
		if strings.TrimSpace(name) == "" {
			return nil, d.at(path, "empty tool name")
		}
		switch tp.Effect {
		case guard.EffectAuto, guard.EffectRead, guard.EffectWrite:
		case "auto":
			tp.Effect = guard.EffectAuto
		default:
			return nil, d.at(path+".effect", `%q is not an effect (want "read", "write" or "auto")`, tp.Effect)
		}
		if ch := strings.ToLower(strings.TrimSpace(tp.Channel)); ch != "" {
			if !slices.Contains(policyChannels(), ch) {
				return nil, d.at(path+".channel", "%q is not a channel (want one of %s)", tp.Channel, strings.Join(policyChannels(), ", "))
			}
			tp.Channel = ch
		}
		for _, field := range tp.TrustedFields {
			if slices.Contains(tp.UntrustedFields, field) {
				return nil, d.at(path+".untrusted_fields", "%q is also a trusted field", field)
			}
		}
		if len(tp.Schema) > 0 {
			if tp.Schema[0] != '{' {
				return nil, d.at(path+".schema", "want an object, got %s", describeNode(d.pos[path+".schema"]))
			}
			if _, err := schema.Compile(tp.Schema); err != nil {
				return nil, d.at(path+".schema", "%v", err)
			}
		}
		if tools == nil {
			tools = make(map[string]guard.ToolPolicy, len(f.Tools))
		}
		tools[name] = tp
	}
	return tools, nil
}

// assertions checks and returns the continuous-evaluation assertions.
func (f *policyFile) assertions(d *decoder) (Assertions, error) {
	a := f.Assertions
	for _, l := range []struct {
		key   string
		names []string
	}{{"assertions.disable", a.Disable}, {"assertions.guard_rules", a.GuardRules}} {
		if i := slices.Index(l.names, ""); i >= 0 {
			return Assertions{}, d.at(fmt.Sprintf("%s[%d]", l.key, i), "empty name")
		}
	}
	return Assertions{Disable: a.Disable, GuardRules: a.GuardRules, RefusalTexts: a.RefusalTexts}, nil
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
