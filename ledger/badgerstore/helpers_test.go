package badgerstore

import (
	"context"
	"fmt"
	"log/slog"
	"strings"
)

// slogHandlerFunc returns a logger that passes each record, as
// "LEVEL msg k=v ...", to f.
func slogHandlerFunc(f func(string)) *slog.Logger {
	return slog.New(funcHandler{f: f})
}

type funcHandler struct {
	f     func(string)
	attrs []slog.Attr
}

func (h funcHandler) Enabled(context.Context, slog.Level) bool { return true }
func (h funcHandler) Handle(_ context.Context, r slog.Record) error {
	var b strings.Builder
	fmt.Fprintf(&b, "%s %s", r.Level, r.Message)
	r.Attrs(func(a slog.Attr) bool { fmt.Fprintf(&b, " %s", a); return true })
	h.f(b.String())
	return nil
}
func (h funcHandler) WithAttrs(as []slog.Attr) slog.Handler {
	return funcHandler{f: h.f, attrs: append(h.attrs[:len(h.attrs):len(h.attrs)], as...)}
}
func (h funcHandler) WithGroup(string) slog.Handler { return h }
