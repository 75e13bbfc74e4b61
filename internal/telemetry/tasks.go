package telemetry

import (
	"context"
	"sync"
	"time"

	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/codes"
	"go.opentelemetry.io/otel/trace"

	"weft/internal/graph"
)

// Tasks makes one span per node task of a run, a child of the span in the run's context,
// whose attributes are seed 000 §10's node record (trace_id, thread_id, node_name,
// started/ended, latency_ms, input/output size, error_code) and whose events are its retry
// attempts, a cache hit and its interrupts. Hook starts a task's span before its first
// attempt (so the node's LLM and database spans are its children); Result ends it.
type Tasks struct {
	tracer            trace.Tracer
	traceID, threadID string

	mu    sync.Mutex
	spans map[string]trace.Span // open spans by task id
}

// NewTasks returns the task spans of one run of thread threadID in trace traceID.
func NewTasks(tracer trace.Tracer, traceID, threadID string) *Tasks {
	return &Tasks{tracer: tracer, traceID: traceID, threadID: threadID, spans: map[string]trace.Span{}}
}

// Hook is the run's graph.TaskHook.
func (t *Tasks) Hook(ctx context.Context, a graph.TaskAttempt) context.Context {
	t.mu.Lock()
	span, ok := t.spans[a.TaskID]
	t.mu.Unlock()
	if ok {
		ev := []attribute.KeyValue{attribute.Int("weft.attempt", a.Attempt)}
		if a.PrevErr != nil {
			ev = append(ev, attribute.String("weft.error", a.PrevErr.Error()))
		}
		span.AddEvent("retry", trace.WithAttributes(ev...))
		return trace.ContextWithSpan(ctx, span)
	}
	ctx, span = t.tracer.Start(ctx, "node "+a.Node, trace.WithAttributes(
		attribute.String("weft.node_name", a.Node), attribute.String("weft.task_id", a.TaskID), attribute.Int("weft.step", a.Step),
		attribute.String("weft.trace_id", t.traceID), attribute.String("weft.thread_id", t.threadID)))
	t.mu.Lock()
	t.spans[a.TaskID] = span
	t.mu.Unlock()
	return ctx
}

// Result ends the span of the task res reports (class and code: its error's, "" when it
// succeeded). A task that ran no attempt (a cache hit) gets a span of its own, from its
// start to its end; a replayed one (its writes saved by an earlier run) none.
func (t *Tasks) Result(ctx context.Context, res graph.TaskResult, class, code string) {
	if res.Replayed {
		return
	}
	t.mu.Lock()
	span, ok := t.spans[res.ID]
	delete(t.spans, res.ID)
	t.mu.Unlock()
	if !ok {
		opts := []trace.SpanStartOption{trace.WithAttributes(attribute.String("weft.node_name", res.Node), attribute.String("weft.task_id", res.ID),
			attribute.String("weft.trace_id", t.traceID), attribute.String("weft.thread_id", t.threadID))}
		if !res.Started.IsZero() {
			opts = append(opts, trace.WithTimestamp(res.Started))
		}
		_, span = t.tracer.Start(ctx, "node "+res.Node, opts...)
	}
	if !span.IsRecording() {
		span.End()
		return
	}
	span.SetAttributes(
		attribute.String("weft.started_at", res.Started.UTC().Format(time.RFC3339Nano)),
		attribute.String("weft.ended_at", res.Ended.UTC().Format(time.RFC3339Nano)),
		attribute.Float64("weft.latency_ms", float64(res.Ended.Sub(res.Started).Microseconds())/1000),
		attribute.Int("weft.input_size", res.InputSize), attribute.Int("weft.output_size", res.OutputSize),
		attribute.Int("weft.attempts", res.Attempts), attribute.Bool("weft.cached", res.Cached),
		attribute.String("weft.error_code", code))
	if res.Cached {
		span.AddEvent("cache_hit")
	}
	for _, it := range res.Interrupts {
		span.AddEvent("interrupt", trace.WithAttributes(attribute.String("weft.interrupt_id", it.ID), attribute.String("weft.when", it.When)))
	}
	if res.Error != "" {
		span.SetAttributes(attribute.String("error.type", class), attribute.String("weft.error_class", class))
		span.AddEvent("exception", trace.WithAttributes(attribute.String("exception.message", res.Error)))
		span.SetStatus(codes.Error, code)
	}
	var end []trace.SpanEndOption
	if !res.Ended.IsZero() {
		end = append(end, trace.WithTimestamp(res.Ended))
	}
	span.End(end...)
}

// End ends the spans of the tasks whose result never came (the run stopped).
func (t *Tasks) End() {
	t.mu.Lock()
	defer t.mu.Unlock()
	for id, span := range t.spans {
		span.SetStatus(codes.Error, "the run stopped before the task ended")
		span.End()
		delete(t.spans, id)
	}
}
