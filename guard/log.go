package guard

import (
	"log/slog"

	"github.com/agentguard/agentguard/trace"
)

// Stable slog attribute keys for gate decisions.
const (
	LogKeyRule    = "rule"
	LogKeyVerdict = "verdict"
	LogKeyTrace   = "trace_id"
	LogKeyStep    = "step"
	LogKeyMessage = "message"
	LogKeyError   = "error"
)

const errorLevel = slog.LevelError

func levelOf(f trace.Finding) slog.Level {
	if f.Severity == trace.SeverityError || f.Severity == trace.SeverityCritical {
		return slog.LevelWarn
	}
	return slog.LevelInfo
}

func attrRule(r string) slog.Attr           { return slog.String(LogKeyRule, r) }
func attrVerdict(v trace.Verdict) slog.Attr { return slog.String(LogKeyVerdict, string(v)) }
func attrTrace(id string) slog.Attr         { return slog.String(LogKeyTrace, id) }
func attrStep(i int) slog.Attr              { return slog.Int(LogKeyStep, i) }
func attrMessage(m string) slog.Attr        { return slog.String(LogKeyMessage, m) }
func attrError(err error) slog.Attr         { return slog.String(LogKeyError, err.Error()) }
