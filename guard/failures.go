package guard

import (
	"fmt"
	"slices"
	"strings"
	"unicode/utf8"

	"github.com/agentguard/agentguard/guard/internal/rulekit"
	"github.com/agentguard/agentguard/guard/rules"
	"github.com/agentguard/agentguard/trace"
	"github.com/tmc/langchaingo/llms"
)

// Every failure of a callee is a finding with the stability dimension, so
// that the health check and the ledger see it: a tool that timed out,
// panicked or was refused for too many hung calls; a model call that
// panicked, hung or answered nothing; a tool result too large for the model
// or not valid UTF-8; a tool call without a function. Their verdict is
// Allow: the guard has already contained the failure (the call returned, the
// result was cut or repaired, the malformed call dropped), and the finding
// records it.

// defaultMaxToolResult is the default Resilience.MaxToolResult: 32 KiB,
// about 8,000 tokens, under the recorder's field cap so that the marker
// stays in the trace.
const defaultMaxToolResult = 32 << 10

// resultCutMarker opens the marker that ends a tool result cut to
// Resilience.MaxToolResult, followed by "N of M bytes]".
const resultCutMarker = "…[agentguard: tool result cut at "

// cutResult bounds a tool result to max bytes (at a rune boundary), ending
// a cut one with a marker that says how much there was, and replaces
// invalid UTF-8. It reports whether the result held invalid UTF-8.
func cutResult(out string, max int) (string, bool) {
	if max >= 0 && len(out) > max {
		cut := max
		for cut > 0 && !utf8.RuneStart(out[cut]) {
			cut--
		}
		out = out[:cut] + fmt.Sprintf("%s%d of %d bytes]", resultCutMarker, cut, len(out))
	}
	if utf8.ValidString(out) {
		return out, false
	}
	return strings.ToValidUTF8(out, "\uFFFD"), true
}

// invalidResult is the finding about a tool result holding invalid UTF-8,
// which the guard repaired before passing it on (see cutResult). The
// repaired step cannot show it, so Evaluate reads it back from the trace's
// gate steps (see recordedRepairs); a cut result shows its marker.
func invalidResult(s *trace.Step) trace.Finding {
	return trace.Finding{
		Rule: rules.Malformed, Step: s.Index, Verdict: trace.Allow, Dimension: trace.Stability, Severity: trace.SeverityWarning,
		Message: fmt.Sprintf("tool %q returned invalid UTF-8; it was replaced before reaching the model", s.Name), Tags: []string{"invalid-utf8"},
		Facts: []trace.Fact{rulekit.ResultFact(s, "", "", "invalid UTF-8, repaired")},
	}
}

// recordedRepairs returns the RuleMalformed findings the trace's gate steps
// recorded for step i that the step itself cannot show: an invalid UTF-8
// result, a tool call without a function.
func recordedRepairs(t *trace.Trace, i int) []trace.Finding {
	var out []trace.Finding
	for _, f := range recordedFindings(t, i, rules.Malformed) {
		if !slices.Contains(f.Tags, "oversized-result") {
			out = append(out, f)
		}
	}
	return out
}

func oversized(s *trace.Step) trace.Finding {
	return trace.Finding{
		Rule: rules.Malformed, Step: s.Index, Verdict: trace.Allow, Dimension: trace.Stability, Severity: trace.SeverityWarning,
		Message: fmt.Sprintf("tool %q returned an oversized result; it was cut before reaching the model", s.Name), Tags: []string{"oversized-result"},
		Facts: []trace.Fact{rulekit.ResultFact(s, "", "", "longer than Resilience.MaxToolResult, cut")},
	}
}

// malformedCalls are the findings about a model's tool calls that name no
// function: the guard drops them (see toolCalls), and records that it did.
func malformedCalls(s *trace.Step, choice *llms.ContentChoice) []trace.Finding {
	var out []trace.Finding
	for i, tc := range choice.ToolCalls {
		if tc.FunctionCall == nil {
			out = append(out, trace.Finding{
				Rule: rules.Malformed, Step: s.Index, Verdict: trace.Allow, Dimension: trace.Stability, Severity: trace.SeverityWarning,
				Message: fmt.Sprintf("the model's tool call %d (id %q) names no function; it was dropped", i, tc.ID), Evidence: tc.ID, Tags: []string{"call-without-function"},
				Facts: []trace.Fact{{Kind: trace.FactAnswer, Step: s.Index, Where: fmt.Sprintf("tool call %d", i), Text: rulekit.FactText(tc.ID), Says: "names no function"}},
			})
		}
	}
	return out
}

// failureFindings judges what a tool or model step's execution recorded:
// a tool that timed out, panicked or was refused for too many hung calls, a
// tool result cut by the guard, a failed model call. It reads only the
// step, so Evaluate finds the same in a recorded trace.
func failureFindings(s *trace.Step) []trace.Finding {
	var out []trace.Finding
	if s.Kind == trace.KindTool && strings.Contains(s.Result, resultCutMarker) {
		out = append(out, oversized(s))
	}
	if s.Error == "" {
		return out
	}
	msg, _, _ := strings.Cut(s.Error, "\n")
	f := trace.Finding{Step: s.Index, Verdict: trace.Allow, Dimension: trace.Stability, Severity: trace.SeverityError, Message: msg,
		Facts: []trace.Fact{rulekit.CallFact(s, msg)}}
	switch s.Kind {
	case trace.KindTool:
		f.Rule = rules.ToolError
		switch {
		case strings.Contains(s.Error, ErrToolPanic.Error()):
			f.Severity, f.Tags = trace.SeverityCritical, []string{"panic"}
		case strings.Contains(s.Error, ErrTimeout.Error()):
			f.Tags = []string{"timeout"}
		case strings.Contains(s.Error, ErrHungLimit.Error()):
			f.Tags = []string{"hung-limit"}
		default:
			return out // the tool's own error is the agent's to handle
		}
	case trace.KindModel:
		f.Rule = rules.ModelError
		switch {
		case strings.Contains(s.Error, ErrModelPanic.Error()), strings.Contains(s.Error, ErrToolPanic.Error()):
			f.Severity, f.Tags = trace.SeverityCritical, []string{"panic"}
		case strings.Contains(s.Error, ErrTimeout.Error()):
			f.Tags = []string{"timeout"}
		case strings.Contains(s.Error, ErrNoChoices.Error()):
			f.Tags = []string{"empty-answer"}
		case strings.Contains(s.Error, ErrHungLimit.Error()):
			f.Tags = []string{"hung-limit"}
		case strings.Contains(s.Error, ErrBreakerOpen.Error()):
			f.Tags = []string{"breaker-open"}
		default:
			f.Tags = []string{"provider-error"}
		}
	default:
		return out
	}
	return append(out, f)
}
