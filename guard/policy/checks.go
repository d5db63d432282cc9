package policy

import (
	"fmt"
	"regexp"
	"slices"
	"strings"
	"sync"
	"time"

	"cel.dev/cel-go/cel"
	celast "cel.dev/cel-go/common/ast"
	"cel.dev/cel-go/common/functions"
	"cel.dev/cel-go/common/types"
	"cel.dev/cel-go/common/types/ref"
	"cel.dev/cel-go/common/types/traits"
	"cel.dev/cel-go/ext"
	"cel.dev/cel-go/interpreter"
	"go.yaml.in/yaml/v3"

	"github.com/agentguard/agentguard/guard/internal/authz"
	"github.com/agentguard/agentguard/guard/internal/detect"
	"github.com/agentguard/agentguard/guard/internal/rulekit"
	"github.com/agentguard/agentguard/guard/rules"
	"github.com/agentguard/agentguard/memory"
	"github.com/agentguard/agentguard/trace"
)

// celCostLimit bounds the work of one expression's evaluation, in CEL's
// cost units (about one per operation and per element a comprehension
// visits): a check over a long list stops with an error rather than
// stalling the step.
const celCostLimit = 100_000

// checksRule runs a policy's checks on tool calls, and its answer checks
// on what the agent says. It is immutable after compileChecks; withNow
// copies it.
type checksRule struct {
	all     []*check            // in file order
	byTool  map[string][]*check // the checks of each tool, global ones first
	global  []*check            // checks of every tool
	answers []*check            // checks of the agent's answers (on: answer)
	tables  ref.Val
	vars    []variable // in file order; each may read those before it
	now     time.Time  // the file's or the caller's fixed clock; zero: the steps'
	pool    *sync.Pool
}

// variable is one compiled variable: read as variables.<name>, evaluated
// at most once per checked call, when first read.
type variable struct {
	name string // "variables.<name>"
	prg  cel.Program
}

// check is one compiled check.
type check struct {
	name      string
	src       string // the require expression, as written
	tool      string // "" for every tool
	answer    bool   // on: answer: it judges what the agent says, not a call
	when      cel.Program
	require   cel.Program
	message   string
	verdict   trace.Verdict
	severity  trace.Severity
	dimension trace.Dimension
	tags      []string
}

func (r *checksRule) Name() string { return rules.PolicyChecks }

// Index brings t's index of calls by tool and entity up to date, before
// steps are released (rulekit.Indexer).
func (r *checksRule) Index(t *trace.Trace) { indexOf(t) }

func (r *checksRule) withNow(t time.Time) *checksRule {
	q := *r
	q.now = t
	return &q
}

// Check runs the checks of s's tool, or, at an answer, the answer
// checks. A check whose when is false, or
// cannot be evaluated, does not apply. One whose require is false gives a
// finding with the check's verdict: the records it read show the policy
// broken. One whose require cannot be evaluated (a record never fetched, a
// key it lacks) gives a warning, recorded and not enforced: the agent acted
// on what it had not established, which is not proof that the policy was
// broken.
func (r *checksRule) Check(t *trace.Trace, s *trace.Step) []trace.Finding {
	var cs []*check
	switch s.Kind {
	case trace.KindTool:
		var ok bool
		if cs, ok = r.byTool[s.Name]; !ok {
			cs = r.global
		}
	case trace.KindModel:
		if _, said := rulekit.Said(s); said {
			cs = r.answers
		}
	}
	if len(cs) == 0 {
		return nil
	}
	a := r.pool.Get().(*celActivation)
	a.start(r, t, s)
	defer a.finish(r.pool)
	var out []trace.Finding
	for _, c := range cs {
		if c.when != nil {
			v, _, err := c.when.Eval(a)
			if err != nil || v != types.True {
				continue
			}
		}
		v, _, err := c.require.Eval(a)
		if err == nil && v == types.True {
			continue
		}
		msg, outcome := c.message, "false"
		switch {
		case err != nil:
			msg += " (not established: " + err.Error() + ")"
			outcome = "not established: " + err.Error()
		case v != types.False:
			msg += fmt.Sprintf(" (require gave %v, not a boolean)", v)
			outcome = fmt.Sprintf("%v, not a boolean", v)
		}
		tags := c.tags
		if len(tags) == 0 {
			tags = tagsPolicy
		}
		verdict, severity := c.verdict, c.severity
		if err != nil {
			verdict, severity = trace.Allow, trace.SeverityWarning
			tags = append(slices.Clip(tags), "not-established")
		}
		judged, evidence := rulekit.CallFact(s, ""), rulekit.Clip(s.Args, rulekit.MaxEvidence)
		if s.Kind == trace.KindModel {
			judged, evidence = rulekit.AnswerFact(s, s.Result, "the agent's answer"), rulekit.Clip(s.Result, rulekit.MaxEvidence)
		}
		out = append(out, trace.Finding{
			Rule: c.name, Step: s.Index, Verdict: verdict, Dimension: c.dimension, Severity: severity,
			Message: msg, Evidence: evidence, Tags: tags,
			Facts: []trace.Fact{
				judged,
				{Kind: trace.FactPolicy, Step: -1, Where: "check " + c.name, Text: rulekit.FactText(c.src), Says: outcome},
			},
		})
	}
	return out
}

var tagsPolicy = []string{"policy"}[:1:1]

// celEnv is the environment every check compiles in: the variables and
// functions policy.md documents.
var celEnv = sync.OnceValues(func() (*cel.Env, error) {
	return cel.NewEnv(
		cel.Variable("args", cel.MapType(cel.StringType, cel.DynType)),
		cel.Variable("tool", cel.StringType),
		cel.Variable("user", cel.ListType(cel.StringType)),
		cel.Variable("card", cel.MapType(cel.StringType, cel.MapType(cel.StringType, cel.StringType))),
		cel.Variable("now", cel.TimestampType),
		cel.Variable("tables", cel.MapType(cel.StringType, cel.DynType)),
		cel.Variable("messages", cel.ListType(cel.MapType(cel.StringType, cel.DynType))),
		cel.Variable("batch", cel.ListType(cel.MapType(cel.StringType, cel.DynType))),
		cel.Variable("answer", cel.StringType),
		cel.Variable("turn_calls", cel.ListType(cel.MapType(cel.StringType, cel.DynType))),
		cel.Function("listed",
			cel.Overload("listed_list", []*cel.Type{cel.ListType(cel.DynType)}, cel.BoolType, cel.LateFunctionBinding())),
		cel.Function("confirmed",
			cel.Overload("confirmed", []*cel.Type{}, cel.BoolType, cel.LateFunctionBinding())),
		cel.Function("requested",
			cel.Overload("requested", []*cel.Type{}, cel.BoolType, cel.LateFunctionBinding())),
		cel.Function("last",
			cel.Overload("last_string_dyn", []*cel.Type{cel.StringType, cel.DynType}, cel.DynType, cel.LateFunctionBinding()),
			cel.Overload("last_list_dyn", []*cel.Type{cel.ListType(cel.StringType), cel.DynType}, cel.DynType, cel.LateFunctionBinding())),
		cel.Function("calls",
			cel.Overload("calls_string", []*cel.Type{cel.StringType}, cel.ListType(cel.DynType), cel.LateFunctionBinding()),
			cel.Overload("calls_string_dyn", []*cel.Type{cel.StringType, cel.DynType}, cel.ListType(cel.DynType), cel.LateFunctionBinding())),
		cel.Function("results",
			cel.Overload("results_string", []*cel.Type{cel.StringType}, cel.ListType(cel.DynType), cel.LateFunctionBinding()),
			cel.Overload("results_string_dyn", []*cel.Type{cel.StringType, cel.DynType}, cel.ListType(cel.DynType), cel.LateFunctionBinding())),
		cel.Function("time",
			cel.Overload("time_string", []*cel.Type{cel.StringType}, cel.TimestampType, cel.UnaryBinding(celTime))),
		cel.Function("sum",
			cel.Overload("sum_list", []*cel.Type{cel.ListType(cel.DynType)}, cel.DynType, cel.UnaryBinding(celSum))),
		cel.Function("num",
			cel.Overload("num_dyn", []*cel.Type{cel.DynType}, cel.DoubleType, cel.UnaryBinding(celNum))),
		cel.OptionalTypes(cel.OptionalTypesVersion(1)), // version 2 adds list.last(), whose binding the policy's late-bound last cannot share
		ext.Strings(),
		ext.Lists(ext.ListsVersion(4)), // version 5 adds first() and last(), which the policy's last would shadow
		ext.Sets(),
		ext.Math(),
		ext.Bindings(),
	)
})

// compileChecks compiles the file's checks, the global ones and each
// tool's, once; an expression that does not compile, or names a variable
// or function the environment lacks, is an error at its place in the file.
func compileChecks(d *decoder, f *policyFile) (*checksRule, error) {
	r := &checksRule{byTool: map[string][]*check{}}
	if f.Now != "" {
		t, err := parseTime(f.Now)
		if err != nil {
			return nil, d.at("now", "%q is not a time (want RFC 3339, such as 2024-05-15T15:00:00-05:00, or 2024-05-15T15:00:00)", f.Now)
		}
		r.now = t
	}
	r.tables = types.DefaultTypeAdapter.NativeToValue(map[string]any{})
	if len(f.Tables) > 0 {
		r.tables = types.DefaultTypeAdapter.NativeToValue(f.Tables)
	}
	env, err := celEnv()
	if err != nil {
		return nil, fmt.Errorf("policy expressions: %v", err)
	}
	if env, err = r.compileVariables(d, env, f.Variables); err != nil {
		return nil, err
	}
	names := map[string]string{} // check name -> where first used
	add := func(tool, path string, pc policyCheck) error {
		c, err := compileCheck(d, env, tool, path, pc)
		if err != nil {
			return err
		}
		if first, ok := names[c.name]; ok {
			return d.at(path+".name", "check %q is already defined at %s", c.name, first)
		}
		names[c.name] = d.at(path+".name", "").(*Error).where()
		r.all = append(r.all, c)
		return nil
	}
	for i, pc := range f.Checks {
		if err := add("", fmt.Sprintf("checks[%d]", i), pc); err != nil {
			return nil, err
		}
	}
	for _, name := range rulekit.SortedKeys(f.Tools) {
		for i, pc := range f.Tools[name].Checks {
			if err := add(name, fmt.Sprintf("%s.checks[%d]", join("tools", name), i), pc); err != nil {
				return nil, err
			}
		}
	}
	if len(r.all) == 0 {
		return nil, nil
	}
	for _, c := range r.all {
		switch {
		case c.answer:
			r.answers = append(r.answers, c)
		case c.tool == "":
			r.global = append(r.global, c)
		}
	}
	for _, c := range r.all {
		if c.tool != "" {
			if _, ok := r.byTool[c.tool]; !ok {
				r.byTool[c.tool] = slices.Clone(r.global)
			}
			r.byTool[c.tool] = append(r.byTool[c.tool], c)
		}
	}
	r.pool = &sync.Pool{New: func() any { return newCELActivation() }}
	return r, nil
}

// where returns "file:line:col" of the error's place.
func (e *Error) where() string {
	if e.Line == 0 {
		return e.File
	}
	return fmt.Sprintf("%s:%d:%d", e.File, e.Line, e.Col)
}

// variableName is what a variable may be called: a CEL identifier.
var variableName = regexp.MustCompile(`^[A-Za-z_][A-Za-z0-9_]*$`)

// compileVariables compiles the file's variables in order, each in env
// with the variables before it declared at the type their expressions
// give, and returns env with them all: a check that reads a variable is
// type-checked against it, and one that names no variable the file
// declares does not compile.
func (r *checksRule) compileVariables(d *decoder, env *cel.Env, vs []policyVariable) (*cel.Env, error) {
	seen := map[string]bool{}
	for i, v := range vs {
		path := fmt.Sprintf("variables[%d]", i)
		switch {
		case !variableName.MatchString(v.Name):
			return nil, d.at(path+".name", "%q is not a variable name (letters, digits and _, not starting with a digit)", v.Name)
		case seen[v.Name]:
			return nil, d.at(path+".name", "variable %q is already defined", v.Name)
		case v.Expression.src == "":
			return nil, d.at(path, "variable %q needs an expression", v.Name)
		}
		seen[v.Name] = true
		prg, out, err := compileAny(d, env, v.Expression)
		if err != nil {
			return nil, err
		}
		name := "variables." + v.Name
		if env, err = env.Extend(cel.Variable(name, out)); err != nil {
			return nil, d.at(path, "%v", err)
		}
		r.vars = append(r.vars, variable{name: name, prg: prg})
	}
	return env, nil
}

func compileCheck(d *decoder, env *cel.Env, tool, path string, pc policyCheck) (*check, error) {
	c := &check{name: pc.Name, src: pc.Require.src, tool: tool, message: pc.Message, tags: pc.Tags,
		verdict: trace.Block, severity: trace.SeverityError, dimension: trace.Accuracy}
	switch {
	case pc.Name == "":
		return nil, d.at(path, "a check needs a name")
	case strings.TrimSpace(pc.Name) != pc.Name || strings.ContainsAny(pc.Name, " \t\n"):
		return nil, d.at(path+".name", "%q: a check's name has no spaces (it names its findings)", pc.Name)
	case slices.Contains(knownRules(), pc.Name):
		return nil, d.at(path+".name", "%q is the name of a built-in rule", pc.Name)
	case pc.Require.src == "":
		return nil, d.at(path, "check %q needs a require expression", pc.Name)
	}
	if c.message == "" {
		c.message = "policy check " + pc.Name + " failed"
	}
	switch pc.On {
	case "", "call":
	case "answer":
		if tool != "" {
			return nil, d.at(path+".on", "check %q judges answers: put it under the top-level checks, not a tool's", pc.Name)
		}
		c.answer = true
	default:
		return nil, d.at(path+".on", "%q is not what a check judges (want call or answer)", pc.On)
	}
	if pc.Verdict != "" {
		switch v := trace.Verdict(pc.Verdict); v {
		case trace.Allow, trace.Retry, trace.Block, trace.Clarify, trace.Refuse, trace.Handoff:
			c.verdict = v
		default:
			return nil, d.at(path+".verdict", "%q is not a verdict (want allow, retry, block, clarify, refuse or handoff)", pc.Verdict)
		}
	}
	if pc.Severity != "" {
		switch v := trace.Severity(pc.Severity); v {
		case trace.SeverityInfo, trace.SeverityWarning, trace.SeverityError, trace.SeverityCritical:
			c.severity = v
		default:
			return nil, d.at(path+".severity", "%q is not a severity (want info, warning, error or critical)", pc.Severity)
		}
	}
	if pc.Dimension != "" {
		switch v := trace.Dimension(pc.Dimension); v {
		case trace.Accuracy, trace.Coherence, trace.Memory, trace.Stability, trace.Efficiency:
			c.dimension = v
		default:
			return nil, d.at(path+".dimension", "%q is not a dimension (want accuracy, coherence, memory, stability or efficiency)", pc.Dimension)
		}
	}
	if i := slices.Index(pc.Tags, ""); i >= 0 {
		return nil, d.at(fmt.Sprintf("%s.tags[%d]", path, i), "empty tag")
	}
	var err error
	if pc.When.src != "" {
		if c.when, err = compileExpr(d, env, pc.When); err != nil {
			return nil, err
		}
	}
	if c.require, err = compileExpr(d, env, pc.Require); err != nil {
		return nil, err
	}
	return c, nil
}

// compileExpr compiles one boolean expression in env, placing CEL's
// errors in the file.
func compileExpr(d *decoder, env *cel.Env, e policyExpr) (cel.Program, error) {
	prg, out, err := compileAny(d, env, e)
	if err != nil {
		return nil, err
	}
	if !out.IsExactType(cel.BoolType) && !out.IsExactType(cel.DynType) {
		return nil, d.errAt(&yaml.Node{Line: e.line, Column: e.col}, e.path, "want a boolean expression, got one of type %s", out)
	}
	return prg, nil
}

// compileAny compiles an expression of any type in env and returns its
// program and type.
func compileAny(d *decoder, env *cel.Env, e policyExpr) (cel.Program, *cel.Type, error) {
	ast, iss := env.Compile(e.src)
	if iss.Err() != nil {
		errs := iss.Errors()
		first := errs[0]
		line, col := exprPos(e, first.Location.Line(), first.Location.Column())
		msgs := make([]string, 0, len(errs))
		for _, x := range errs {
			msgs = append(msgs, x.Message)
		}
		return nil, nil, &Error{File: d.file, Line: line, Col: col, Key: e.path, Msg: strings.Join(msgs, "; ")}
	}
	// An expression without a comprehension costs at most its size: only
	// those with one (all, exists, map, filter over a record's lists) run
	// under the cost limit, whose tracking costs as much as the evaluation.
	opts := []cel.ProgramOption{cel.EvalOptions(cel.OptOptimize)}
	if len(celast.MatchDescendants(celast.NavigateAST(ast.NativeRep()), celast.KindMatcher(celast.ComprehensionKind))) > 0 {
		opts = append(opts, cel.CostLimit(celCostLimit))
	}
	prg, err := env.Program(ast, opts...)
	if err != nil {
		return nil, nil, d.errAt(&yaml.Node{Line: e.line, Column: e.col}, e.path, "%v", err)
	}
	return prg, ast.OutputType(), nil
}

// exprPos places a CEL position (line from 1, column from 0) in the file.
func exprPos(e policyExpr, line, col int) (int, int) {
	switch e.style {
	case yaml.LiteralStyle, yaml.FoldedStyle:
		// The text starts on the line after the indicator, indented by
		// at least one more column than the key; the exact indentation
		// is not kept, so the column is the text's.
		return e.line + line, col + 1
	case yaml.DoubleQuotedStyle, yaml.SingleQuotedStyle:
		if line == 1 {
			return e.line, e.col + 1 + col
		}
	default:
		if line == 1 {
			return e.line, e.col + col
		}
	}
	return e.line + line - 1, col + 1
}

// celActivation is what one tool call's checks read: the variables,
// resolved on first use, and the functions over the trace's index. It is
// reused through the rule's pool, so a call allocates little.
type celActivation struct {
	r         *checksRule
	t         *trace.Trace
	s         *trace.Step
	idx       *policyIndex
	args      ref.Val
	user      ref.Val
	card      ref.Val
	last      functions.LateBoundOp
	calls     functions.LateBoundOp
	results   functions.LateBoundOp
	listed    functions.LateBoundOp
	confirmed functions.LateBoundOp
	requested functions.LateBoundOp
	haveUser  bool
	haveCard  bool
	haveArgs  bool
	argsSlice []ref.Val
	vars      []ref.Val // the variables evaluated so far in this call, by index
	messages  ref.Val   // built on first read, as user and card
	batch     ref.Val
	turnCalls ref.Val
}

func newCELActivation() *celActivation {
	a := &celActivation{}
	a.last = func(_ string, args ...ref.Val) ref.Val { return a.lastOf(args) }
	a.calls = func(_ string, args ...ref.Val) ref.Val { return a.callsOf(args) }
	a.results = func(_ string, args ...ref.Val) ref.Val { return a.resultsOf(args) }
	a.listed = func(_ string, args ...ref.Val) ref.Val { return a.listedOf(args) }
	a.confirmed = func(string, ...ref.Val) ref.Val { return types.Bool(authz.Confirms(policyTools(), a.t, a.s, false)) }
	a.requested = func(string, ...ref.Val) ref.Val { return types.Bool(authz.Requested(policyTools(), a.t, a.s)) }
	return a
}

func (a *celActivation) start(r *checksRule, t *trace.Trace, s *trace.Step) {
	a.r, a.t, a.s = r, t, s
	a.idx = indexOf(t)
}

func (a *celActivation) finish(pool *sync.Pool) {
	a.r, a.t, a.s, a.idx = nil, nil, nil, nil
	a.args, a.user, a.card, a.messages, a.batch, a.turnCalls = nil, nil, nil, nil, nil, nil
	a.haveArgs, a.haveUser, a.haveCard = false, false, false
	clear(a.vars)
	a.vars = a.vars[:0]
	pool.Put(a)
}

var _ interpreter.FunctionActivation = (*celActivation)(nil)

func (a *celActivation) Parent() interpreter.Activation { return nil }

func (a *celActivation) ResolveFunction(name string) (functions.LateBoundOp, bool) {
	switch name {
	case "last":
		return a.last, true
	case "calls":
		return a.calls, true
	case "results":
		return a.results, true
	case "listed":
		return a.listed, true
	case "confirmed":
		return a.confirmed, true
	case "requested":
		return a.requested, true
	}
	return nil, false
}

func (a *celActivation) ResolveName(name string) (any, bool) {
	switch name {
	case "args":
		if !a.haveArgs {
			a.args, a.haveArgs = noArgs, true
			if a.s.Kind == trace.KindTool {
				a.args = argsValue(a.s.Args)
			}
		}
		return a.args, true
	case "tool":
		if a.s.Kind != trace.KindTool {
			return types.String(""), true
		}
		return types.String(a.s.Name), true
	case "answer":
		if a.s.Kind != trace.KindModel {
			return types.String(""), true
		}
		return types.String(a.s.Result), true
	case "turn_calls":
		if a.turnCalls == nil {
			a.turnCalls = turnCallsValue(a.t, a.s)
		}
		return a.turnCalls, true
	case "tables":
		return a.r.tables, true
	case "now":
		return a.now(), true
	case "user":
		if !a.haveUser {
			n := min(max(a.s.Turn+1, 0), len(a.t.UserTurns))
			a.user, a.haveUser = types.NewStringList(types.DefaultTypeAdapter, a.t.UserTurns[:n]), true
		}
		return a.user, true
	case "card":
		if !a.haveCard {
			a.card, a.haveCard = cardValue(a.t), true
		}
		return a.card, true
	case "messages":
		if a.messages == nil {
			a.messages = messagesValue(a.t, a.s)
		}
		return a.messages, true
	case "batch":
		if a.batch == nil {
			a.batch = noCalls
			if a.s.Kind == trace.KindTool {
				a.batch = batchValue(a.t, a.s)
			}
		}
		return a.batch, true
	}
	if strings.HasPrefix(name, "variables.") {
		return a.variable(name)
	}
	return nil, false
}

// policyTools reads tools for confirmed(): the default lexicon's words,
// and no tool policy, since the function judges the conversation, not the
// tool.
var policyTools = sync.OnceValue(func() *rulekit.Tools { return rulekit.NewTools(detect.Default(), nil) })

// messagesValue is the conversation up to the call s, in order: each user
// turn, then what the agent said in it (its answers, and the questions the
// guard asked for it), as {role: "user" or "agent", text, turn}.
func messagesValue(t *trace.Trace, s *trace.Step) ref.Val {
	var out []any
	turn := -1
	for _, p := range t.Steps {
		if p == nil || p.Index >= s.Index {
			break
		}
		for ; turn < p.Turn && turn+1 < len(t.UserTurns); turn++ {
			out = append(out, map[string]any{"role": "user", "text": t.UserTurns[turn+1], "turn": turn + 1})
		}
		if text, ok := rulekit.Said(p); ok {
			out = append(out, map[string]any{"role": "agent", "text": text, "turn": p.Turn})
		}
	}
	for ; turn < s.Turn && turn+1 < len(t.UserTurns); turn++ {
		out = append(out, map[string]any{"role": "user", "text": t.UserTurns[turn+1], "turn": turn + 1})
	}
	return types.DefaultTypeAdapter.NativeToValue(out)
}

// noArgs and noCalls are args and batch at an answer, which is no call.
var (
	noArgs  = types.NewStringInterfaceMap(types.DefaultTypeAdapter, map[string]any{})
	noCalls = types.NewRefValList(types.DefaultTypeAdapter, nil)
)

// turnCallsValue is the tool calls of s's user turn before s, oldest
// first, as {name, args, failed}: what the agent did since the user last
// spoke ("transfer, then send the transfer message" is an answer check on
// turn_calls' last name). Steps released from memory are not read, so a
// turn of thousands of calls reads at most the kept window.
func turnCallsValue(t *trace.Trace, s *trace.Step) ref.Val {
	var out []ref.Val
	for i := min(s.Index, t.Len()) - 1; i >= 0; i-- {
		p := t.Step(i)
		if p == nil || p.Turn != s.Turn {
			break
		}
		if p.Kind == trace.KindTool {
			out = append(out, types.NewStringInterfaceMap(types.DefaultTypeAdapter,
				map[string]any{"name": p.Name, "args": argsValue(p.Args), "failed": p.Error != "" || p.Blocked}))
		}
	}
	slices.Reverse(out)
	return types.NewRefValList(types.DefaultTypeAdapter, out)
}

// batchValue is the calls the model proposed in the message that proposed
// s, s included, as {name, args, text}, text being what that message said
// to the user: one call at a time, and no answer with it, is
// size(batch) == 1 && batch[0].text == ”.
func batchValue(t *trace.Trace, s *trace.Step) ref.Val {
	for i := min(s.Index, t.Len()) - 1; i >= 0; i-- {
		p := t.Step(i)
		if p == nil || p.Kind != trace.KindModel || len(p.Calls) == 0 {
			continue
		}
		if !slices.ContainsFunc(p.Calls, func(c trace.Call) bool {
			return c.ID == s.CallID && c.Name == s.Name || s.CallID == "" && c.Name == s.Name
		}) {
			break // the nearest proposal is not this call's: it came alone
		}
		out := make([]ref.Val, len(p.Calls))
		for j, c := range p.Calls {
			out[j] = types.NewStringInterfaceMap(types.DefaultTypeAdapter, map[string]any{"name": c.Name, "args": argsValue(c.Args), "text": p.Result})
		}
		return types.NewRefValList(types.DefaultTypeAdapter, out)
	}
	one := types.NewStringInterfaceMap(types.DefaultTypeAdapter, map[string]any{"name": s.Name, "args": argsValue(s.Args), "text": ""})
	return types.NewRefValList(types.DefaultTypeAdapter, []ref.Val{one})
}

// listedOf is listed(values): the agent's last words before the user's
// latest turn name every value (as letters and digits: "#W1" is "w1").
func (a *celActivation) listedOf(args []ref.Val) ref.Val {
	l, ok := args[0].(traits.Lister)
	if !ok {
		return types.NewErr("listed: want a list of values")
	}
	said := rulekit.Alnum(rulekit.LastSaid(a.t, a.s.Turn-1))
	if said == "" {
		return types.False
	}
	n := 0
	for it := l.Iterator(); it.HasNext() == types.True; {
		v := it.Next()
		text, ok := v.Value().(string)
		if !ok {
			text = fmt.Sprint(v.Value())
		}
		if !strings.Contains(said, rulekit.Alnum(text)) {
			return types.False
		}
		n++
	}
	return types.Bool(n > 0)
}

// variable evaluates the variable called name once per call: a check that
// reads it again, or a later variable built on it, gets the same value. A
// variable that cannot be evaluated is an error value, so that a check
// reading it is not established.
func (a *celActivation) variable(name string) (any, bool) {
	i := slices.IndexFunc(a.r.vars, func(v variable) bool { return v.name == name })
	if i < 0 {
		return nil, false
	}
	if len(a.vars) < len(a.r.vars) {
		a.vars = append(a.vars, make([]ref.Val, len(a.r.vars)-len(a.vars))...)
	}
	if a.vars[i] == nil {
		v, _, err := a.r.vars[i].prg.Eval(a)
		if err != nil {
			v = types.NewErr("%s: %v", name, err)
		}
		a.vars[i] = v
	}
	return a.vars[i], true
}

// now is the check's clock: the policy's or the caller's fixed time, else
// the step's start, else the latest start recorded before it.
func (a *celActivation) now() ref.Val {
	switch {
	case !a.r.now.IsZero():
		return types.Timestamp{Time: a.r.now}
	case !a.s.Start.IsZero():
		return types.Timestamp{Time: a.s.Start}
	}
	for i := len(a.t.Steps) - 1; i >= 0; i-- {
		if st := a.t.Steps[i].Start; !st.IsZero() {
			return types.Timestamp{Time: st.Add(a.t.Steps[i].Duration)}
		}
	}
	return types.NewErr("now: the trace records no time (set the policy's now, or evaluate with a clock)")
}

// argsValue decodes a tool call's arguments; arguments that are not a JSON
// object become an empty map, which the schema rule reports.
func argsValue(args string) ref.Val {
	if v, ok := decodeJSONValue(args); ok {
		if _, isMap := v.(traits.Mapper); isMap {
			return v
		}
	}
	return emptyMap
}

var emptyMap = types.NewRefValMap(types.DefaultTypeAdapter, map[ref.Val]ref.Val{})

// cardValue is the memory card's active constraints, kind -> key -> value:
// the card kept in t's memo, which holds the card steps released from
// memory too.
func cardValue(t *trace.Trace) ref.Val {
	out := map[string]any{}
	for _, c := range memory.CardOf(t).Active() {
		m, _ := out[string(c.Kind)].(map[string]any)
		if m == nil {
			m = map[string]any{}
			out[string(c.Kind)] = m
		}
		m[c.Key] = c.Value
	}
	return types.DefaultTypeAdapter.NativeToValue(out)
}

// entityArgs reads last's, calls' and results' arguments: a tool name and,
// optionally, the entity.
func entityArgs(fn string, args []ref.Val) (tool string, entity string, hasEntity bool, err ref.Val) {
	if len(args) == 0 || len(args) > 2 {
		return "", "", false, types.NewErr("%s: want a tool name and an entity", fn)
	}
	name, ok := args[0].(types.String)
	if !ok {
		return "", "", false, types.NewErr("%s: the tool name is a %s, not a string", fn, args[0].Type())
	}
	if len(args) == 1 {
		return string(name), "", false, nil
	}
	key, ok := entityKeyOf(args[1])
	if !ok {
		return "", "", false, types.NewErr("%s(%q, ...): the entity is a %s, not a string or number", fn, name, args[1].Type())
	}
	return string(name), key, true, nil
}

// entityKeyOf is the index key of an entity value: its text.
func entityKeyOf(v ref.Val) (string, bool) {
	switch x := v.(type) {
	case types.String:
		return string(x), true
	case types.Int:
		return fmt.Sprint(int64(x)), true
	case types.Uint:
		return fmt.Sprint(uint64(x)), true
	case types.Double:
		return fmt.Sprint(float64(x)), true
	}
	return "", false
}

// lastOf is last(tool, entity): the result of the latest earlier call of
// tool — or of any of a list of tools, all returning the same record —
// that named entity among its arguments and did not fail.
func (a *celActivation) lastOf(args []ref.Val) ref.Val {
	if len(args) != 2 {
		return types.NewErr("last: want a tool name (or a list of them) and an entity")
	}
	if l, ok := args[0].(traits.Lister); ok {
		best, found := -1, false
		var names []string
		for it := l.Iterator(); it.HasNext() == types.True; {
			name, ok := it.Next().(types.String)
			if !ok {
				return types.NewErr("last: a tool name in the list is not a string")
			}
			names = append(names, string(name))
			_, entity, _, err := entityArgs("last", []ref.Val{name, args[1]})
			if err != nil {
				return err
			}
			if i, ok := a.idx.latest(string(name), entity, a.t.Len()); ok && i > best {
				best, found = i, true
			}
		}
		if !found {
			return types.NewErr("no result of %s for %v earlier in the trace", strings.Join(names, ", "), args[1])
		}
		return a.idx.result(a.t, best)
	}
	tool, entity, _, err := entityArgs("last", args)
	if err != nil {
		return err
	}
	i, ok := a.idx.latest(tool, entity, a.t.Len())
	if !ok {
		return types.NewErr("no %s result for %q earlier in the trace", tool, entity)
	}
	return a.idx.result(a.t, i)
}

// callsOf is calls(tool[, entity]): the arguments of the earlier calls of
// tool (that named entity) that ran and did not fail, and of those still
// running, oldest first.
func (a *celActivation) callsOf(args []ref.Val) ref.Val {
	tool, entity, has, err := entityArgs("calls", args)
	if err != nil {
		return err
	}
	steps := a.idx.list(tool, entity, has, a.t.Len())
	out := a.argsSlice[:0]
	for _, i := range steps {
		out = append(out, a.idx.args(a.t, i))
	}
	for _, p := range a.t.Pending {
		if p.Name == tool && (!has || namesEntity(p.Args, entity)) {
			out = append(out, argsValue(p.Args))
		}
	}
	a.argsSlice = out[:0]
	return types.NewRefValList(types.DefaultTypeAdapter, slices.Clone(out))
}

// resultsOf is results(tool[, entity]): the results of those calls, oldest first.
func (a *celActivation) resultsOf(args []ref.Val) ref.Val {
	tool, entity, has, err := entityArgs("results", args)
	if err != nil {
		return err
	}
	steps := a.idx.list(tool, entity, has, a.t.Len())
	out := make([]ref.Val, len(steps))
	for j, i := range steps {
		out[j] = a.idx.result(a.t, i)
		if types.IsError(out[j]) {
			return out[j] // a record cut short: the list is not the records
		}
	}
	return types.NewRefValList(types.DefaultTypeAdapter, out)
}

// parseTime reads RFC 3339, or a time without a zone (read as UTC) with a
// "T" or a space, or a date.
func parseTime(s string) (time.Time, error) {
	for _, layout := range []string{time.RFC3339Nano, "2006-01-02T15:04:05.999999999", "2006-01-02 15:04:05.999999999", "2006-01-02T15:04", "2006-01-02"} {
		if t, err := time.Parse(layout, s); err == nil {
			return t, nil
		}
	}
	return time.Time{}, fmt.Errorf("%q is not a time", s)
}

// celTime is time(string): a timestamp from a record's text.
func celTime(v ref.Val) ref.Val {
	s, ok := v.(types.String)
	if !ok {
		return types.NewErr("time: want a string, got %s", v.Type())
	}
	t, err := parseTime(string(s))
	if err != nil {
		return types.NewErr("time: %v", err)
	}
	return types.Timestamp{Time: t}
}

// celNum is num(x): a number of any kind, or its text, as a double.
func celNum(v ref.Val) ref.Val {
	switch x := v.(type) {
	case types.Int:
		return types.Double(x)
	case types.Uint:
		return types.Double(x)
	case types.Double:
		return x
	case types.String:
		var f float64
		if _, err := fmt.Sscan(string(x), &f); err == nil {
			return types.Double(f)
		}
		return types.NewErr("num: %q is not a number", string(x))
	}
	return types.NewErr("num: want a number, got %s", v.Type())
}

// celSum is sum(list): the sum of a list of numbers, an int when every
// one is an int, a double otherwise.
func celSum(v ref.Val) ref.Val {
	l, ok := v.(traits.Lister)
	if !ok {
		return types.NewErr("sum: want a list, got %s", v.Type())
	}
	var ints int64
	total, allInts := 0.0, true
	for it := l.Iterator(); it.HasNext() == types.True; {
		e := it.Next()
		if i, ok := e.(types.Int); ok {
			ints += int64(i)
			total += float64(i)
			continue
		}
		n := celNum(e)
		if types.IsError(n) {
			return n
		}
		allInts = false
		total += float64(n.(types.Double))
	}
	if allInts {
		return types.Int(ints)
	}
	return types.Double(total)
}
