package guard

import (
	"errors"
	"fmt"

	"github.com/agentguard/agentguard/trace"
)

// Sentinel errors, matched with errors.Is.
var (
	// ErrToolPanic is returned (wrapped in *Error) when a tool panicked; the
	// panic was recovered and recorded.
	ErrToolPanic = errors.New("tool panicked")
	// ErrModelPanic is returned when a model panicked.
	ErrModelPanic = errors.New("model panicked")
	// ErrInterrupted is matched by every *Interrupt.
	ErrInterrupted = errors.New("run interrupted for the user")
	// ErrNoChoices is returned when a model answered with nothing: no
	// choice, or no text and no tool call. It is retried like a failure.
	ErrNoChoices = errors.New("model returned an empty answer")
	// ErrDropped is returned by Flush and Close when findings or traces
	// were dropped from the report queue since the last Flush or Close:
	// the ledger or the trace store fell behind (see ReportStats).
	ErrDropped = errors.New("reports dropped from a full queue")
)

// Error is the error type of package guard.
type Error struct {
	Op   string // "tool", "model", "run", "resume"
	Name string // the tool or model name, when known
	Err  error
}

func (e *Error) Error() string {
	if e.Name != "" {
		return fmt.Sprintf("guard: %s %q: %v", e.Op, e.Name, e.Err)
	}
	return fmt.Sprintf("guard: %s: %v", e.Op, e.Err)
}

func (e *Error) Unwrap() error { return e.Err }

// Interrupt is the error a wrapped tool or model returns when a verdict ends
// the run for now — clarify, refuse or hand off — so that an agent loop
// that is not Run (such as langchaingo's agents.Executor, which aborts on any
// tool error) stops and hands the decision to the caller. Message is what the
// user should be told.
type Interrupt struct {
	Verdict trace.Verdict
	Message string
	Finding trace.Finding
}

func (i *Interrupt) Error() string {
	return fmt.Sprintf("guard: %s by rule %s: %s", i.Verdict, i.Finding.Rule, i.Finding.Message)
}

// Is reports whether target is ErrInterrupted.
func (i *Interrupt) Is(target error) bool { return target == ErrInterrupted }
