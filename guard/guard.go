package guard

import (
	"context"
	"crypto/rand"
	"encoding/json"
	"fmt"
	"log/slog"
	"maps"
	"slices"
	"sync"
	"sync/atomic"
	"time"

	"github.com/agentguard/agentguard/guard/internal/authz"
	"github.com/agentguard/agentguard/guard/internal/calls"
	"github.com/agentguard/agentguard/guard/internal/claims"
	"github.com/agentguard/agentguard/guard/internal/detect"
	"github.com/agentguard/agentguard/guard/internal/gates"
	"github.com/agentguard/agentguard/guard/internal/origins"
	"github.com/agentguard/agentguard/guard/internal/rulekit"
	"github.com/agentguard/agentguard/guard/internal/schema"
	"github.com/agentguard/agentguard/memory"
	"github.com/agentguard/agentguard/trace"
	"github.com/agentguard/agentguard/trace/lexicon"
)

// Config configures a Guard. The zero value is a working guard with the
// default rules, no ledger and enforcement on. Fields are grouped by who
// reads them: Gates by the built-in rules, Answers by what the user is told,
// Observe by where records and findings go, Evaluation by offline scoring
// only.
type Config struct {
	// Tools annotates tools by name: effect, trust, confirmation, retrieval,
	// emptiness, timeout, retries and schema. Unlisted tools get the zero
	// ToolPolicy.
	Tools map[string]ToolPolicy `json:"tools,omitempty"`
	// Gates tunes the built-in rules.
	Gates Gates `json:"gates,omitempty"`
	// Answers sets what the user is told when a rule stops a run, and
	// whether streamed answers wait until they are judged.
	Answers Answers `json:"answers,omitempty"`
	// Memory configures the pinned memory card: constraints extracted from
	// every user turn, injected into every model call, kept through
	// compression and enforced before tool calls. Nil means on, with the
	// rule-based extractor and no compression; MemoryOptions.Off turns it
	// off.
	Memory *MemoryOptions `json:"memory,omitempty"`
	// Rules run after the built-in rules, in order; Disable leaves one out
	// by its Name like a built-in one.
	Rules []Rule `json:"-"`
	// Disable names findings to leave out, by the name they carry
	// (package guard/rules names the built-in rules'; a custom rule's is
	// its Name): a rule whose every finding is disabled does not run. An
	// unknown name is ignored here; a policy file refuses it.
	Disable []string `json:"disable,omitempty"`
	// Resilience sets timeouts, retries, circuit breakers and a fallback
	// model for every tool and model call.
	Resilience Resilience `json:"resilience,omitempty"`
	// Observe says where findings and records go: ledger, logger, pricing,
	// field caps.
	Observe Observation `json:"observe,omitempty"`
	// Evaluation tunes Evaluate's score; the online guard ignores it.
	Evaluation Evaluation `json:"evaluation,omitempty"`
	// Lexicon is the guard's language data: the write verbs that make a
	// tool state-changing, the phrases the built-in rules look for, the
	// memory card's vocabulary and every reply the guard writes, to the
	// user or to the model, in the language of the user's latest turn (see
	// package lexicon). Nil means lexicon.Default(), English and Chinese.
	// New compiles it, and panics if it does not compile (check it first
	// with Lexicon.Check); it must not change afterwards.
	Lexicon *lexicon.Lexicon `json:"-"`
	// Shadow turns on detect-only mode: every rule runs and every finding is
	// recorded and sent to the ledger, marked Shadow, but no verdict is
	// enforced.
	Shadow bool `json:"shadow,omitempty"`
	// Bypass turns the guard off: wrapped models and tools call straight
	// through, recording and judging nothing, without allocating; Run still
	// drives the loop but judges nothing and records only the user turns.
	// It is the kill switch for an incident, not a mode to measure in (see
	// Shadow).
	Bypass bool `json:"bypass,omitempty"`
}

// Gates tunes the built-in rules. The zero value is the default of each.
type Gates struct {
	// AllowedTools is the tool allow-list. Empty means the tools the agent
	// was offered in the run (from llms.WithTools / WithFunctions, or Run's
	// tools).
	AllowedTools []string `json:"allowed_tools,omitempty"`
	// LoopLimit blocks the n-th consecutive identical tool call. Zero means
	// 3; negative disables the rule.
	LoopLimit int `json:"loop_limit,omitempty"`
	// MaxSteps hands the run to a human after this many tool calls in one
	// trace. Zero means 25; negative disables the rule.
	MaxSteps int `json:"max_steps,omitempty"`
	// Classifier, when set, classifies each new user turn before the model
	// is called; the result is recorded as a step and judged by the intent
	// gate.
	Classifier Classifier `json:"-"`
	// Intents is the set of intents the agent serves. Empty means any.
	Intents []string `json:"intents,omitempty"`
	// MinIntentConfidence is the intent gate's threshold. Zero means 0.6.
	MinIntentConfidence float64 `json:"min_intent_confidence,omitempty"`
	// EmptyResult is the verdict when an answer goes on after an empty tool
	// result: Clarify (ask the user to confirm the key), Retry or Handoff.
	// Empty means Clarify.
	EmptyResult trace.Verdict `json:"empty_result,omitempty"`
	// MinSimilarity is the best retrieval score below which the answer is
	// the refusal template; RouteSimilarity overrides it per route. Zero
	// refuses only when a retrieval returned no document.
	MinSimilarity   float64            `json:"min_similarity,omitempty"`
	RouteSimilarity map[string]float64 `json:"route_similarity,omitempty"`
	// JSONRoutes lists routes whose answers must parse as JSON.
	JSONRoutes []string `json:"json_routes,omitempty"`
	// Invariants check tool arguments and JSON answers, after the
	// defaults: amounts (fields named like an amount, price or quantity)
	// are not negative, dates (fields named like a date) parse. Each is
	// given one argument value (or, with tool "", one field of a JSON
	// answer) and its dotted path; a non-nil error, which the agent is
	// shown, judges the call Retry.
	Invariants []func(tool, path string, value any) error `json:"-"`
	// ConfirmWrites requires user confirmation before every state-changing
	// call, not only those whose ToolPolicy sets Confirm.
	ConfirmWrites bool `json:"confirm_writes,omitempty"`
	// Confirmation is what confirms a call that needs the user's yes:
	// "" (ConfirmYesOrRequest, the default) an affirmation after the agent
	// spoke, or a request for the call's action after the agent named what
	// it acts on ("Please submit the exchange" after the agent listed the
	// items); ConfirmYes an affirmation only.
	Confirmation string `json:"confirmation,omitempty"`
	// RequireApproval names tools whose calls pause Run until a human
	// approves them (see Result.Pending and Guard.Resume).
	RequireApproval []string `json:"require_approval,omitempty"`
	// DeadEnds turns on the tool-failure rule: when a turn's tool call
	// failed and its answer goes nowhere (the write did not happen, or
	// nothing the answer rests on succeeded), the answer is judged
	// Handoff (a person takes over), Clarify (re-ask the user) or Retry
	// (re-ask the model, told what failed). Empty means off.
	DeadEnds trace.Verdict `json:"dead_ends,omitempty"`
	// MaxRetries bounds how often a model step judged Retry is asked again
	// within one call. Zero means 1; negative means never.
	MaxRetries int `json:"max_retries,omitempty"`
	// Profile says who authorizes consequential calls: the user turn by
	// turn (ProfileConversational, the default) or the user's task as a
	// whole (ProfileAutonomous).
	Profile Profile `json:"profile,omitempty"`
}

// Profile says what authorizes the agent's consequential calls.
type Profile string

// Profiles.
const (
	// ProfileConversational, the default, is customer service: a
	// destructive write (cancel, delete, refund, transfer, pay) needs the
	// user's request for it in their own words, or their yes after the
	// agent proposed it; content the user pointed at may supply the values
	// of the writes the user asked for.
	ProfileConversational Profile = "conversational"
	// ProfileAutonomous is an agent given a task: the task authorizes the
	// writes it names, and content the user pointed at may supply their
	// values; a write the task does not name, driven by a value only
	// third-party content holds, is still an injection.
	ProfileAutonomous Profile = "autonomous"
)

// What confirms a call that needs the user's yes (Gates.Confirmation). A
// yes followed in the same turn by a "no" word and no other yes ("Yes —
// no, wait") is taken back. Under either, a yes to the agent's listing of
// the call (its words named the reservation or order) holds until it is
// used: while each of the user's next turns (at most two) gives a detail
// of the call and nothing more — a word of its argument values or of the
// option the agent offered ("use the gift card", "用礼品卡"), no number
// the arguments and the agent's words do not hold, no question, no "no"
// word, no new request for the action — and until a call of the tool
// succeeds. "Let me hold off", "我再想想" or "make it the 20th instead"
// end it.
const (
	// ConfirmYesOrRequest, the default: the user's yes after the agent
	// spoke, or their request for the call's action, or to carry out what
	// was listed ("please submit it"), after the agent named what the call
	// acts on.
	ConfirmYesOrRequest = "yes-or-request"
	// ConfirmYes: the user's yes after the agent spoke, and nothing else.
	ConfirmYes = "yes"
)

// Answers sets what the user is told when a rule stops a run.
type Answers struct {
	// RefusalTemplate is the answer given when a verdict is Refuse or a
	// blocked model answer has to be replaced, whatever the user's
	// language. Empty means the lexicon's refusal in the language of the
	// user's latest turn.
	RefusalTemplate string `json:"refusal_template,omitempty"`
	// HandoffMessage is the answer given on a Handoff verdict, whatever the
	// user's language. Empty means the lexicon's handoff message in the
	// language of the user's latest turn.
	HandoffMessage string `json:"handoff_message,omitempty"`
	// PassThrough says when the caller's llms.WithStreamingFunc receives
	// an answer's chunks. False, the default, holds the chunks until the
	// answer is judged: an allowed answer's chunks are then handed on, in
	// order, at once; a stopped answer's never are, and its replacement
	// (the refusal, the question, the handoff message) goes out as one
	// chunk instead, so the user never sees an answer the guard stops. The
	// cost is the time to the first chunk, which becomes the time to the
	// last plus the judgement. True hands each chunk on as it comes: an
	// answer stopped afterwards has already been seen, its replacement
	// follows as a last chunk, its findings are tagged "already-streamed",
	// and a Retry verdict refuses the answer instead of asking again. A
	// guard that runs no rule judging answers streams through either way.
	// PassThroughRoutes streams the routes it lists through whatever
	// PassThrough says. llms.WithStreamingReasoningFunc is held and handed
	// on the same way. In every mode the chunks a client streams of the tool
	// calls the model proposes (the calls' JSON) are never handed on: a
	// call is judged when it runs, and is not text for the user.
	PassThrough       bool     `json:"pass_through,omitempty"`
	PassThroughRoutes []string `json:"pass_through_routes,omitempty"`
}

// Observation says where a guard's findings and records go.
type Observation struct {
	// Ledger receives every finding, Allow ones included (a recovered tool
	// panic is worth a lesson). Nil means findings stay in the trace only.
	// Findings are appended off the agent's step, by a goroutine of the
	// guard, in batches when Ledger has AppendBatch (see Sink): a durable
	// ledger's sync never delays a step. Guard.Flush waits for them; Guard.Close, before
	// exit, delivers the rest. A failing Ledger never stops the agent: the
	// error is logged. A Ledger slower than the agent holds a step back
	// while up to 4,096 findings wait, at most one second; past that the
	// oldest waiting finding is dropped, and Flush and Close return
	// ErrDropped.
	Ledger Sink `json:"-"`
	// Logger receives gate decisions and ledger errors, off the step like
	// the ledger, with the attributes rule, verdict, trace_id, step and
	// message (error for a failure), whose keys are stable. Nil means
	// silent.
	Logger *slog.Logger `json:"-"`
	// Pricing turns token counts into cost. Zero means cost is not recorded.
	Pricing Pricing `json:"pricing,omitempty"`
	// MaxField caps recorded arguments and results, in bytes (see
	// trace.RecorderOptions). Zero means trace.DefaultMaxField.
	MaxField int `json:"max_field,omitempty"`
	// Traces receives every finished trace (see TraceSink for when a trace
	// is finished), off the step like findings. Nil means Ledger, when it
	// stores traces too (a badgerstore.Store does): every entry's trace
	// can then be fetched from the ledger. DiscardTraces stores none.
	Traces TraceSink `json:"-"`
	// TraceEvery saves a trace every TraceEvery recorded steps as well, for
	// sessions that never end. A save that comes due while the trace's last
	// is still queued replaces it, so a sink slower than the agent stores
	// the latest rather than falling behind. Zero or negative means only
	// when finished.
	TraceEvery int `json:"trace_every,omitempty"`
	// KeepSteps bounds a trace's memory in a session that never ends: once
	// the trace sink has acknowledged a save made by TraceEvery, the guard
	// releases from memory the steps it stored, keeping the last KeepSteps
	// (trace.Recorder.Release). Rules then judge by their per-trace indexes
	// and the steps kept (see "What a guard holds" in the package
	// documentation), and the recorder's Trace returns the segment kept.
	// A save the sink refused releases nothing. Zero means 1,000;
	// negative keeps every step. Without TraceEvery and a trace sink it
	// does nothing.
	KeepSteps int `json:"keep_steps,omitempty"`
	// Metrics receives verdicts, gate latency and breaker changes (see
	// Observer). Nil means none, at no cost: the guard then does not even
	// read the clock for them.
	Metrics Observer `json:"-"`
	// Steps sees each model and tool call as it runs (see StepObserver):
	// otelexport.NewLive makes one that traces them as live spans. Nil means
	// none, at no cost.
	Steps StepObserver `json:"-"`
}

// Evaluation tunes the score Evaluate gives a recorded trace.
type Evaluation struct {
	// PassScore is the trajectory score a trace needs to pass. Zero means 80.
	PassScore int `json:"pass_score,omitempty"`
	// Penalty is the score lost per violation. Zero means 20.
	Penalty int `json:"penalty,omitempty"`
}

// Pricing is the price of a model's tokens, in any currency unit per million tokens.
type Pricing struct {
	InputPerMillion  float64 `json:"input_per_million,omitempty"`
	OutputPerMillion float64 `json:"output_per_million,omitempty"`
}

// Cost is the price of in input and out output tokens.
func (p Pricing) Cost(in, out int) float64 {
	return (float64(in)*p.InputPerMillion + float64(out)*p.OutputPerMillion) / 1e6
}

// Sink receives violations. The ledger package's *Ledger implements it.
// A Sink that also has the method
//
//	AppendBatch(ctx context.Context, vs []trace.Violation) ([]uint64, error)
//
// as *Ledger does, is given the violations that queued up while it was
// writing in one call: a durable ledger syncs once per batch.
type Sink interface {
	Append(ctx context.Context, v trace.Violation) (uint64, error)
}

// SinkFunc adapts a function to the Sink interface.
type SinkFunc func(ctx context.Context, v trace.Violation) (uint64, error)

// Append calls f.
func (f SinkFunc) Append(ctx context.Context, v trace.Violation) (uint64, error) { return f(ctx, v) }

// Guard holds the rules and the ledger that every wrapped model, wrapped tool
// and Run of it shares. It is safe for concurrent use by many sessions.
type Guard struct {
	cfg          Config
	rules        []Rule
	scopes       []toolScope                               // of each of rules: the tool calls it may judge; nil, any
	stepRules    []Rule                                    // rules, less those that judge tool calls only
	hot, stepHot []hotRule                                 // rules and stepRules as hotRules (see hotRules)
	dropped      bool                                      // Config.Disable names some findings of a rule that runs
	planMu       sync.Mutex                                // serialises writers of plans
	plans        atomic.Pointer[map[string]*toolPlan]      // by tool name; copied on write
	answers      bool                                      // a rule that may judge a model's answer runs: streams are buffered
	schemaMu     sync.Mutex                                // serialises writers of schemas
	schemas      atomic.Pointer[map[string]calls.Compiled] // argument schemas of wrapped and annotated tools; copied on write
	untraced     sync.Once                                 // warns once about calls without a trace
	breakers     *breakers
	reports      reporter
	words        *lexicon.Compiled // Config.Lexicon compiled
	tools        *rulekit.Tools    // Config.Tools, as the rules read them with words
	extractor    memory.Extractor  // Config.Memory's, or the rule-based one of Config.Lexicon
	// now is the guard's clock: every time the guard reads comes from it
	// (a trace's start, a step's start and duration, a finding's time, an
	// inline call's deadline and lateness). Waits (backoff, timeouts, what
	// is left of a deadline) are durations on the runtime's timers, which
	// testing/synctest fakes together with time.Now; gobreaker times a
	// breaker's open period on time.Now. time.Now unless a test sets it.
	now func() time.Time
	// realClock is set while now is time.Now: a call's end is then read
	// from the monotonic clock alone (see endOf).
	realClock bool
}

// New returns a Guard configured by cfg. It panics if cfg.Lexicon does not
// compile.
func New(cfg Config) *Guard {
	g := &Guard{cfg: cfg, now: time.Now, realClock: true}
	g.reports.g = g
	if g.cfg.Gates.LoopLimit == 0 {
		g.cfg.Gates.LoopLimit = 3
	}
	if g.cfg.Gates.MaxSteps == 0 {
		g.cfg.Gates.MaxSteps = 25
	}
	if g.cfg.Gates.MaxRetries == 0 {
		g.cfg.Gates.MaxRetries = 1
	}
	g.cfg.Resilience = g.cfg.Resilience.withDefaults()
	if g.cfg.Evaluation.PassScore == 0 {
		g.cfg.Evaluation.PassScore = 80
	}
	if g.cfg.Evaluation.Penalty == 0 {
		g.cfg.Evaluation.Penalty = 20
	}
	g.words = detect.Default()
	if cfg.Lexicon != nil {
		g.words = cfg.Lexicon.Compiled()
	}
	g.tools = toolsOf(g.words, cfg.Tools)
	if cfg.Memory.on() {
		if cfg.Memory != nil {
			g.extractor = cfg.Memory.Extractor
		}
		if g.extractor == nil {
			g.extractor = memory.RuleBased(cfg.Lexicon)
		}
	}
	for name, p := range cfg.Tools {
		if len(p.Schema) > 0 {
			g.addSchema(name, p.Schema)
		}
	}
	all := g.builtin()
	if cfg.Memory.on() {
		enf := memory.Enforcer{Lexicon: cfg.Lexicon, Channels: g.tools.Channels()}
		all = append(all, memoryRule{enf}, claims.NewCardAnswers(g.tools, enf))
	}
	all = append(all, cfg.Rules...)
	for _, r := range all {
		names := rulekit.NamesOf(r)
		off := 0
		for _, n := range names {
			if slices.Contains(cfg.Disable, n) {
				off++
			}
		}
		if off == len(names) {
			continue // every finding it files is disabled: it does not run
		}
		if off > 0 {
			g.dropped = true // some of its findings are: they are dropped (see judgeWith)
		}
		g.addRule(r)
	}
	g.hot, g.stepHot = hotRules(g.rules), hotRules(g.stepRules)
	g.answers = slices.ContainsFunc(g.rules, judgesAnswers)
	g.breakers = newBreakers(g.cfg, func() time.Time { return g.now() })
	return g
}

// builtin returns the built-in rules, configured by g.cfg, in the order
// they run. Each says which steps it may judge (rulekit.Scoped).
func (g *Guard) builtin() []Rule {
	cfg := g.cfg
	gt := cfg.Gates
	invariants := make([]gates.Invariant, len(gt.Invariants))
	for i, inv := range gt.Invariants {
		invariants[i] = gates.Invariant(inv)
	}
	falseClaim := claims.New(g.tools)
	out := []Rule{
		calls.NewAllowList(gt.AllowedTools...),
		calls.NewArguments(g.toolSchema, g.words, falseClaim.Sends),
		calls.NewLoopLimit(gt.LoopLimit),
		calls.NewMaxSteps(gt.MaxSteps),
		gates.NewIntent(g.words, gt.Intents, gt.MinIntentConfidence),
		gates.NewEmptyResult(g.tools, gt.EmptyResult),
		gates.NewSimilarity(g.tools, gt.MinSimilarity, gt.RouteSimilarity),
		gates.NewGrounding(g.tools),
		gates.NewInvariants(g.words, gt.JSONRoutes, invariants, true),
		origins.NewProvenance(g.tools),
		authz.NewConfirmation(g.tools, gt.ConfirmWrites, gt.Confirmation == ConfirmYes),
		authz.NewAuthorization(g.tools, gt.Profile == ProfileAutonomous),
		falseClaim,
		origins.NewRelay(g.tools),
	}
	switch gt.Confirmation {
	case "", ConfirmYesOrRequest, ConfirmYes:
	default:
		panic(fmt.Sprintf("guard: Gates.Confirmation is %q, want %q or %q", gt.Confirmation, ConfirmYesOrRequest, ConfirmYes))
	}
	switch gt.DeadEnds {
	case "":
	case trace.Handoff, trace.Clarify, trace.Retry:
		out = append(out, gates.NewDeadEnd(g.tools, gt.DeadEnds))
	default:
		panic(fmt.Sprintf("guard: Gates.DeadEnds is %q, want handoff, clarify or retry", gt.DeadEnds))
	}
	return out
}

// memoryRule is the memory card's enforcement, which judges tool calls
// only and files findings under three names.
type memoryRule struct{ memory.Enforcer }

func (memoryRule) ToolOnly() bool                       { return true }
func (memoryRule) JudgesTool(string, rulekit.Tool) bool { return true }
func (memoryRule) Names() []string {
	return []string{memory.RuleProhibition, memory.RuleStaleAddress, memory.RuleTimeRange}
}

// addRule appends r to the rules the guard runs, with the tool calls it
// may judge and whether it judges tool calls only, as r says
// (rulekit.Scoped); a rule that does not say may judge any step.
func (g *Guard) addRule(r Rule) {
	var tools toolScope
	toolOnly := false
	if sc, ok := r.(rulekit.Scoped); ok {
		tools, toolOnly = sc.JudgesTool, sc.ToolOnly()
	}
	g.rules = append(g.rules, r)
	g.scopes = append(g.scopes, tools)
	if !toolOnly {
		g.stepRules = append(g.stepRules, r)
	}
}

// Rules returns the rules the guard runs, built-in ones first.
func (g *Guard) Rules() []Rule { return append([]Rule(nil), g.rules...) }

// Rule returns the rule the guard runs under name, configured as the guard
// configures it; ok is false when no rule of that name runs.
func (g *Guard) Rule(name string) (r Rule, ok bool) {
	for _, r := range g.rules {
		if r.Name() == name {
			return r, true
		}
	}
	return nil, false
}

// addSchema compiles and keeps a tool's argument schema.
func (g *Guard) addSchema(name string, raw json.RawMessage) {
	sch, err := schema.Compile(raw)
	g.schemaMu.Lock()
	defer g.schemaMu.Unlock()
	m := make(map[string]calls.Compiled)
	if old := g.schemas.Load(); old != nil {
		maps.Copy(m, *old)
	}
	m[name] = calls.Compiled{Schema: sch, Err: err}
	g.schemas.Store(&m)
}

// toolSchema looks a schema up without a lock: it runs on every tool call,
// while schemas are added only when tools are wrapped.
func (g *Guard) toolSchema(name string) (calls.Compiled, bool) {
	m := g.schemas.Load()
	if m == nil {
		return calls.Compiled{}, false
	}
	c, ok := (*m)[name]
	return c, ok
}

func (g *Guard) newRecorder(sessionID, route string) *trace.Recorder {
	return trace.NewRecorder(rand.Text(), sessionID, route, trace.RecorderOptions{MaxField: g.cfg.Observe.MaxField, Now: g.now})
}

type recorderKey struct{}

// StartTrace begins a new trace for one run of a session and returns a
// context carrying it: wrapped models and tools called with that context
// record into it. Start one per user request (or per conversation).
func (g *Guard) StartTrace(ctx context.Context, sessionID, route string) (context.Context, *trace.Recorder) {
	rec := g.newRecorder(sessionID, route)
	return WithRecorder(ctx, rec), rec
}

// WithRecorder returns a context whose wrapped calls record into rec.
func WithRecorder(ctx context.Context, rec *trace.Recorder) context.Context {
	return context.WithValue(ctx, recorderKey{}, rec)
}

// RecorderFrom returns the recorder carried by ctx, or nil.
func RecorderFrom(ctx context.Context) *trace.Recorder {
	rec, _ := ctx.Value(recorderKey{}).(*trace.Recorder)
	return rec
}

// recorder returns the context's recorder. A wrapped call whose context
// carries none — StartTrace was forgotten — is judged and recorded as a
// trace of its own, with no session: no two such calls share a trace, so
// they never share loop or step limits, and nothing grows for the guard's
// lifetime. Rules that read earlier steps (provenance, empty results,
// grounding) see nothing earlier, so start a trace per request to get
// them. The first such call is logged once as a warning.
func (g *Guard) recorder(ctx context.Context) *trace.Recorder {
	if rec := RecorderFrom(ctx); rec != nil {
		return rec
	}
	if g.cfg.Observe.Logger != nil {
		g.untraced.Do(func() {
			g.cfg.Observe.Logger.Warn("agentguard: a wrapped call had no trace in its context; each such call is judged on its own (use Guard.StartTrace per request)")
		})
	}
	return g.newRecorder("", "")
}
