package telemetry

import (
	"context"
	"log/slog"

	"go.opentelemetry.io/otel/trace"
)

// LogHandler wraps h so that a line logged with a context holding a span (InfoContext, …)
// carries its trace_id and span_id; a logger that already names a trace_id (the runner's,
// which is the job's and so the trace's) gets only the span_id.
func LogHandler(h slog.Handler) slog.Handler { return logHandler{next: h} }

type logHandler struct {
	next     slog.Handler
	hasTrace bool
}

func (l logHandler) Enabled(ctx context.Context, lv slog.Level) bool { return l.next.Enabled(ctx, lv) }

func (l logHandler) Handle(ctx context.Context, r slog.Record) error {
	if sc := trace.SpanContextFromContext(ctx); sc.IsValid() {
		if !l.hasTrace {
			r.AddAttrs(slog.String("trace_id", sc.TraceID().String()))
		}
		r.AddAttrs(slog.String("span_id", sc.SpanID().String()))
	}
	return l.next.Handle(ctx, r)
}

func (l logHandler) WithAttrs(as []slog.Attr) slog.Handler {
	has := l.hasTrace
	for _, a := range as {
		has = has || a.Key == "trace_id"
	}
	return logHandler{next: l.next.WithAttrs(as), hasTrace: has}
}

func (l logHandler) WithGroup(name string) slog.Handler {
	return logHandler{next: l.next.WithGroup(name), hasTrace: l.hasTrace}
}
