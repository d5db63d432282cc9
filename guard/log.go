package guard

import (
	"log/slog"

	"github.com/agentguard/agentguard/trace"
)

const errorLevel = slog.LevelError

func levelOf(f trace.Finding) slog.Level {
	if f.Severity == trace.SeverityError || f.Severity == trace.SeverityCritical {
		return slog.LevelWarn
	}
	return slog.LevelInfo
}

// The attributes of what the guard logs (Observation.Logger): their keys
// are stable, and documented there.
func attrRule(r string) slog.Attr           { return slog.String("rule", r) }
func attrVerdict(v trace.Verdict) slog.Attr { return slog.String("verdict", string(v)) }
func attrTrace(id string) slog.Attr         { return slog.String("trace_id", id) }
func attrStep(i int) slog.Attr              { return slog.Int("step", i) }
func attrMessage(m string) slog.Attr        { return slog.String("message", m) }
func attrError(err error) slog.Attr         { return slog.String("error", err.Error()) }
