package badgerstore

import (
	"context"
	"fmt"
	"log/slog"
	"strings"
)

// slogAdapter passes badger's warnings and errors to a slog.Logger and drops
// its info and debug chatter.
type slogAdapter struct{ l *slog.Logger }

func (a slogAdapter) Errorf(format string, args ...any) { a.log(slog.LevelError, format, args) }
func (a slogAdapter) Warningf(format string, args ...any) {
	a.log(slog.LevelWarn, format, args)
}
func (slogAdapter) Infof(string, ...any)  {}
func (slogAdapter) Debugf(string, ...any) {}

func (a slogAdapter) log(level slog.Level, format string, args []any) {
	ctx := context.Background()
	if !a.l.Enabled(ctx, level) {
		return
	}
	a.l.Log(ctx, level, strings.TrimSpace(fmt.Sprintf(format, args...)), "component", "badger")
}
