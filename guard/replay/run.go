package replay

import (
	"context"
	"errors"
	"fmt"
	"io"
	"runtime"
	"runtime/debug"
	"strconv"
	"sync"
	"time"

	"github.com/agentguard/agentguard/guard"
	"github.com/agentguard/agentguard/ledger"
	"github.com/agentguard/agentguard/trace"
	"github.com/tmc/langchaingo/llms"
)

// Agent is the system under test, for one run of one case. Respond answers
// the conversation so far, which ends with the user's latest message. It
// must go through g — g.Run, or its own loop over g.WrapModel and
// g.WrapTool — with ctx, which carries the run's trace.
//
// Result.Answer is what the user is shown and Result.Messages the whole
// conversation afterwards (nil: the history plus the answer). An agent with
// its own loop fills in those two and Status. Calls that wait for approval
// (StatusPaused) should be decided inside Respond: the next turn is sent
// whatever the status.
type Agent interface {
	Respond(ctx context.Context, g *guard.Guard, history []llms.MessageContent) (*guard.Result, error)
}

// AgentFunc adapts a function to the Agent interface.
type AgentFunc func(ctx context.Context, g *guard.Guard, history []llms.MessageContent) (*guard.Result, error)

// Respond calls f.
func (f AgentFunc) Respond(ctx context.Context, g *guard.Guard, history []llms.MessageContent) (*guard.Result, error) {
	return f(ctx, g, history)
}

// Factory returns a fresh agent — new model, tools and state — for run
// repeat (1-based) of c. It is called once per run, from several
// goroutines at once.
type Factory func(c *Case, repeat int) (Agent, error)

// Config configures Replay. The zero value replays each case three times,
// as many at once as there are CPUs, through a default guard, and writes
// nothing.
type Config struct {
	// Guard configures the guard every run goes through: a new guard.New
	// per run, so that no state (breakers) leaks between runs. Set
	// Guard.Shadow to replay "without guard rails": every rule still runs
	// and every finding is recorded and sent to Guard.Observe.Ledger, but nothing
	// is enforced, so both replays are measured by the same detectors.
	Guard guard.Config
	// Label names the replay ("guarded", "unguarded"); it starts every
	// trace id, "LABEL-CASE-REPEAT". Empty means "run".
	Label string
	// Repeats is how often each case runs. Zero means 3.
	Repeats int
	// Parallel bounds how many runs go at once. Zero means
	// runtime.GOMAXPROCS(0).
	Parallel int
	// Timeout bounds one run. Zero means one minute; negative, none.
	Timeout time.Duration
	// Traces receives each finished run's trace as one JSONL line
	// (trace.Writer), in the order runs finish. Nil means none.
	Traces io.Writer
	// Redact, when set, de-identifies the traces written to Traces: their
	// free text goes through it (ledger.RedactTrace; redact.String is the
	// usual choice). The runs Replay returns keep their traces as they were,
	// for scoring. Nil writes them as they are.
	Redact func(string) string
	// Progress receives a progress line, rewritten with "\r" after each
	// run and ended with "\n". Nil means none; pass os.Stdout only when it
	// is a terminal.
	Progress io.Writer
}

// Run is what happened in one run of a case.
type Run struct {
	Label   string `json:"label"`
	Case    string `json:"case"`
	Repeat  int    `json:"repeat"` // 1-based
	TraceID string `json:"trace_id"`
	// Turns holds one entry per user turn answered, in order; a run that
	// failed stops early.
	Turns []Turn `json:"turns"`
	// Start is when the run started, the trace's Start.
	Start    time.Time     `json:"start"`
	Duration time.Duration `json:"duration_ns"`
	// Err is the agent's error, or the panic it raised, that ended the run
	// early; "" when it did not.
	Err      string `json:"error,omitempty"`
	TimedOut bool   `json:"timed_out,omitempty"`
	// ReportsDropped counts the findings and traces the run's guard dropped
	// from its report queue (guard.ErrDropped): the ledger fell behind, so
	// its violations for the run are not all there.
	ReportsDropped uint64 `json:"reports_dropped,omitempty"`
	// Trace is the run's full timeline.
	Trace *trace.Trace `json:"-"`
}

// Turn is the agent's reply to one user turn.
type Turn struct {
	Answer string          `json:"answer"`
	Status guard.RunStatus `json:"status,omitempty"`
}

// Final returns the answer to the last turn answered, or "".
func (r *Run) Final() string {
	if len(r.Turns) == 0 {
		return ""
	}
	return r.Turns[len(r.Turns)-1].Answer
}

// Keys of the metadata Replay writes on each trace (Trace.Meta), from
// which RunFromTrace reads a Run back.
const (
	MetaLabel    = "replay.label"
	MetaCase     = "replay.case"
	MetaRepeat   = "replay.repeat"
	MetaDuration = "replay.duration_ns"
	MetaError    = "replay.error"
	MetaTimedOut = "replay.timed_out"
	// MetaAnswer and MetaStatus are followed by the turn index: "replay.answer.0".
	MetaAnswer = "replay.answer."
	MetaStatus = "replay.status."
)

// Replay runs every case cfg.Repeats times through the guard, each run with
// a fresh agent from f and a guard of its own, cfg.Parallel at a time. A
// run sends the case's turns one after the other, each with the history
// the agent returned. An agent's error or panic ends its run early and is
// recorded on the run and its trace; it never stops the replay.
//
// Replay returns the runs in case order, then repeat order. When ctx is
// done it stops starting runs, drops those it interrupted, and returns the
// ones that finished with ctx's error. A trace that cannot be written is
// reported in the error too, after every run has been tried.
func Replay(ctx context.Context, cases []Case, f Factory, cfg Config) ([]Run, error) {
	repeats, parallel := cfg.Repeats, cfg.Parallel
	if repeats == 0 {
		repeats = 3
	}
	if parallel <= 0 {
		parallel = runtime.GOMAXPROCS(0)
	}
	if repeats < 0 {
		return nil, fmt.Errorf("replay: negative Repeats %d", repeats)
	}
	if cfg.Label == "" {
		cfg.Label = "run"
	}
	if cfg.Timeout == 0 {
		cfg.Timeout = time.Minute
	}
	r := &replayer{cfg: cfg, factory: f, total: len(cases) * repeats}
	if cfg.Traces != nil {
		r.traces = trace.NewWriter(cfg.Traces)
	}
	slots := make([]*Run, len(cases)*repeats)
	jobs := make(chan int)
	var wg sync.WaitGroup
	for range min(parallel, len(slots)) {
		wg.Go(func() {
			for j := range jobs {
				run, ok := r.run(ctx, &cases[j/repeats], j%repeats+1)
				if ok {
					slots[j] = &run
				}
			}
		})
	}
feed:
	for j := range slots {
		select {
		case jobs <- j:
		case <-ctx.Done():
			break feed
		}
	}
	close(jobs)
	wg.Wait()
	r.progressEnd()
	runs := make([]Run, 0, len(slots))
	for _, s := range slots {
		if s != nil {
			runs = append(runs, *s)
		}
	}
	return runs, errors.Join(ctx.Err(), r.writeErr)
}

type replayer struct {
	cfg     Config
	factory Factory
	traces  *trace.Writer
	total   int

	mu       sync.Mutex
	done     int
	failed   int
	writeErr error
}

// run runs repeat of c; ok is false when ctx ended it.
func (r *replayer) run(ctx context.Context, c *Case, repeat int) (run Run, ok bool) {
	if ctx.Err() != nil {
		return run, false
	}
	id := r.cfg.Label + "-" + c.ID + "-" + strconv.Itoa(repeat)
	rec := trace.NewRecorder(id, id, c.Route, trace.RecorderOptions{MaxField: r.cfg.Guard.Observe.MaxField})
	run = Run{Label: r.cfg.Label, Case: c.ID, Repeat: repeat, TraceID: id}
	rec.View(func(t *trace.Trace) { run.Start = t.Start })
	begin := time.Now()
	rctx := guard.WithRecorder(ctx, rec)
	if r.cfg.Timeout > 0 {
		var cancel context.CancelFunc
		rctx, cancel = context.WithTimeout(rctx, r.cfg.Timeout)
		defer cancel()
	}
	g := guard.New(r.cfg.Guard)
	agent, err := r.newAgent(c, repeat)
	var history []llms.MessageContent
	for i, text := range c.Turns {
		if err != nil {
			break
		}
		history = append(history, llms.TextParts(llms.ChatMessageTypeHuman, text))
		var res *guard.Result
		res, err = respond(rctx, agent, g, history)
		if rec.UserTurns() <= i { // the agent did not go through the guard
			rec.UserTurn(text)
		}
		if err == nil && res == nil {
			err = errors.New("agent returned no result")
		}
		if err != nil {
			break
		}
		run.Turns = append(run.Turns, Turn{Answer: res.Answer, Status: res.Status})
		if len(res.Messages) > 0 {
			history = res.Messages
		} else {
			history = append(history, llms.TextParts(llms.ChatMessageTypeAI, res.Answer))
		}
	}
	// Deliver the run's findings to the ledger before the run counts as done.
	_ = g.Close(context.WithoutCancel(ctx)) // drops are counted below
	if st := g.ReportStats(); st.Dropped+st.TracesDropped > 0 {
		run.ReportsDropped = st.Dropped + st.TracesDropped
	}
	if ctx.Err() != nil && (err != nil || len(run.Turns) < len(c.Turns)) {
		return run, false // interrupted: not a result
	}
	run.Duration = time.Since(begin)
	if err != nil {
		run.Err = err.Error()
		run.TimedOut = errors.Is(rctx.Err(), context.DeadlineExceeded)
		if run.TimedOut {
			run.Err = fmt.Sprintf("timed out after %v: %s", r.cfg.Timeout, run.Err)
		}
	}
	setMeta(rec, &run)
	run.Trace = rec.Trace()
	r.finish(&run)
	return run, true
}

func (r *replayer) newAgent(c *Case, repeat int) (a Agent, err error) {
	defer func() {
		if p := recover(); p != nil {
			err = fmt.Errorf("agent factory panicked: %v", p)
		}
	}()
	a, err = r.factory(c, repeat)
	if err == nil && a == nil {
		err = errors.New("agent factory returned no agent")
	}
	return a, err
}

// respond calls the agent, turning a panic into an error that carries the
// stack, for the trace.
func respond(ctx context.Context, a Agent, g *guard.Guard, history []llms.MessageContent) (res *guard.Result, err error) {
	defer func() {
		if p := recover(); p != nil {
			res, err = nil, fmt.Errorf("agent panicked: %v\n%s", p, debug.Stack())
		}
	}()
	return a.Respond(ctx, g, history)
}

func setMeta(rec *trace.Recorder, run *Run) {
	rec.SetMeta(MetaLabel, run.Label)
	rec.SetMeta(MetaCase, run.Case)
	rec.SetMeta(MetaRepeat, strconv.Itoa(run.Repeat))
	rec.SetMeta(MetaDuration, strconv.FormatInt(int64(run.Duration), 10))
	if run.Err != "" {
		rec.SetMeta(MetaError, run.Err)
	}
	if run.TimedOut {
		rec.SetMeta(MetaTimedOut, "true")
	}
	for i, t := range run.Turns {
		rec.SetMeta(MetaAnswer+strconv.Itoa(i), t.Answer)
		rec.SetMeta(MetaStatus+strconv.Itoa(i), string(t.Status))
	}
}

// finish writes the run's trace and moves the progress line on.
func (r *replayer) finish(run *Run) {
	var err error
	if r.traces != nil {
		t := run.Trace
		if r.cfg.Redact != nil {
			t = ledger.RedactTrace(t, r.cfg.Redact)
		}
		err = r.traces.Write(t)
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	if err != nil && r.writeErr == nil {
		r.writeErr = err
	}
	r.done++
	if run.Err != "" {
		r.failed++
	}
	if p := r.cfg.Progress; p != nil {
		fmt.Fprintf(p, "\r%s: %d/%d runs, %d failed", r.cfg.Label, r.done, r.total, r.failed)
	}
}

func (r *replayer) progressEnd() {
	if p := r.cfg.Progress; p != nil && r.done > 0 {
		fmt.Fprintln(p)
	}
}

// RunFromTrace reads back the Run that Replay recorded on t (see the Meta
// keys); ok is false when t carries no replay metadata.
func RunFromTrace(t *trace.Trace) (run Run, ok bool) {
	m := t.Meta
	if m[MetaCase] == "" {
		return run, false
	}
	run = Run{Label: m[MetaLabel], Case: m[MetaCase], TraceID: t.ID, Start: t.Start, Err: m[MetaError], TimedOut: m[MetaTimedOut] == "true", Trace: t}
	run.Repeat, _ = strconv.Atoi(m[MetaRepeat])
	d, _ := strconv.ParseInt(m[MetaDuration], 10, 64)
	run.Duration = time.Duration(d)
	for i := 0; ; i++ {
		answer, ok := m[MetaAnswer+strconv.Itoa(i)]
		if !ok {
			break
		}
		run.Turns = append(run.Turns, Turn{Answer: answer, Status: guard.RunStatus(m[MetaStatus+strconv.Itoa(i)])})
	}
	return run, true
}
