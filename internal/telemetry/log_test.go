package telemetry_test

import (
	"bytes"
	"context"
	"log/slog"
	"strings"
	"testing"

	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/sdk/trace/tracetest"

	"weft/internal/telemetry"
)

// TestLogLinesCarryTheSpan: a line logged with a span's context names its trace_id and
// span_id; a logger that names the trace already (the runner's) gets the span_id alone; a
// line without a span gets neither.
func TestLogLinesCarryTheSpan(t *testing.T) {
	t.Parallel()
	var buf bytes.Buffer
	log := slog.New(telemetry.LogHandler(slog.NewTextHandler(&buf, nil)))
	tp := telemetry.NewProvider(sdktrace.WithSyncer(tracetest.NewInMemoryExporter()))
	ctx, span := tp.Tracer("t").Start(telemetry.WithTraceID(context.Background(), "4bf92f3577b34da6a3ce929d0e0e4736"), "run")
	defer span.End()
	sid := span.SpanContext().SpanID().String()

	log.InfoContext(ctx, "in a span")
	log.With("trace_id", "4bf92f3577b34da6a3ce929d0e0e4736").InfoContext(ctx, "named")
	log.InfoContext(context.Background(), "outside")
	lines := strings.Split(strings.TrimSpace(buf.String()), "\n")
	if len(lines) != 3 {
		t.Fatalf("lines: %q", lines)
	}
	if !strings.Contains(lines[0], "trace_id=4bf92f3577b34da6a3ce929d0e0e4736") || !strings.Contains(lines[0], "span_id="+sid) {
		t.Errorf("a line in a span: %s", lines[0])
	}
	if strings.Count(lines[1], "trace_id=") != 1 || !strings.Contains(lines[1], "span_id="+sid) {
		t.Errorf("a line of a logger naming the trace: %s", lines[1])
	}
	if strings.Contains(lines[2], "trace_id") || strings.Contains(lines[2], "span_id") {
		t.Errorf("a line outside a span: %s", lines[2])
	}
}
