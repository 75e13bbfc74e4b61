package runner

import (
	"context"
	"time"

	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/codes"
	"go.opentelemetry.io/otel/trace"

	"weft/internal/telemetry"
)

// Observer is told what the runner's jobs do, for metrics (Config.Observer; optional).
// Calls come from the runner's goroutines and must not block.
type Observer interface {
	// Claimed: a worker took j from the queue wait after it became runnable.
	Claimed(j Job, wait time.Duration)
	// Rested: j's run (one attempt) left it at rest as e says (its status: waiting for
	// review, succeeded, retry scheduled or failed, with the error's class) after ran.
	Rested(j Job, e JobEvent, ran time.Duration)
	// Interrupted: j's run paused at n interrupts.
	Interrupted(j Job, n int)
	// Resumed: a reviewer answered j's pause waited after it began.
	Resumed(j Job, waited time.Duration)
}

// attempt is one run of a job: its span and where it left the job.
type attempt struct {
	span  trace.Span
	began time.Time
	rest  JobEvent
}

type attemptKey struct{}

// startAttempt starts the span of one attempt at job j (a run), in the job's trace (its
// trace id is the job's, so node records and spans join): the child of the caller's span
// when the job was started with a traceparent of that trace, else a root linked to the
// caller's (a resume's) span; linked to the previous attempt's span when a retry.
func (r *Runner) startAttempt(ctx context.Context, j Job) (context.Context, *attempt) {
	opts := []trace.SpanStartOption{trace.WithSpanKind(trace.SpanKindConsumer), trace.WithAttributes(
		attribute.String("weft.workflow", j.Workflow), attribute.String("weft.thread_id", j.ThreadID),
		attribute.String("weft.job_id", j.ID), attribute.Int("weft.attempt", j.RetryCount+1),
		attribute.Int("weft.retry_count", j.RetryCount), attribute.String("weft.tenant_id", j.TenantID),
		attribute.String("weft.trace_id", j.TraceID), attribute.String("weft.worker", r.cfg.WorkerID))}
	ctx = trace.ContextWithSpanContext(ctx, trace.SpanContext{}) // nothing of the dispatcher's
	if sc, ok := telemetry.ParseTraceparent(j.TraceParent); ok {
		if sc.TraceID().String() == j.TraceID {
			ctx = trace.ContextWithRemoteSpanContext(ctx, sc)
		} else {
			opts = append(opts, trace.WithLinks(trace.Link{SpanContext: sc, Attributes: []attribute.KeyValue{attribute.String("weft.link", "caller")}}))
		}
	}
	if n := len(j.Errors); n > 0 && j.Errors[n-1].SpanID != "" {
		tid, terr := trace.TraceIDFromHex(j.TraceID)
		sid, serr := trace.SpanIDFromHex(j.Errors[n-1].SpanID)
		if terr == nil && serr == nil {
			prev := trace.NewSpanContext(trace.SpanContextConfig{TraceID: tid, SpanID: sid, TraceFlags: trace.FlagsSampled, Remote: true})
			opts = append(opts, trace.WithLinks(trace.Link{SpanContext: prev, Attributes: []attribute.KeyValue{
				attribute.String("weft.link", "previous_attempt"), attribute.Int("weft.attempt", j.RetryCount)}}))
		}
	}
	ctx, span := r.tracer.Start(telemetry.WithTraceID(ctx, j.TraceID), "run "+j.Workflow, opts...)
	a := &attempt{span: span, began: r.cfg.Now()}
	return context.WithValue(ctx, attemptKey{}, a), a
}

// end ends the attempt's span with where it left the job.
func (a *attempt) end() {
	if a.rest.Status != "" {
		a.span.SetAttributes(attribute.String("weft.status", string(a.rest.Status)))
	}
	if a.rest.Code != "" {
		a.span.SetAttributes(attribute.String("error.type", a.rest.Class), attribute.String("weft.error_class", a.rest.Class),
			attribute.String("weft.error_code", a.rest.Code))
		a.span.SetStatus(codes.Error, a.rest.Code)
	}
	a.span.End()
}

// spanID is the id of the attempt span in ctx ("" outside one), kept with a job error so
// the next attempt links to it.
func spanID(ctx context.Context) string {
	if a, ok := ctx.Value(attemptKey{}).(*attempt); ok && a.span.SpanContext().IsValid() {
		return a.span.SpanContext().SpanID().String()
	}
	return ""
}

// rested tells the attempt in ctx (if any) and the observer where job j rests.
func (r *Runner) noteRest(ctx context.Context, j Job, e JobEvent) {
	if e.Status == "" {
		return
	}
	var ran time.Duration
	if a, ok := ctx.Value(attemptKey{}).(*attempt); ok {
		a.rest = e
		ran = r.cfg.Now().Sub(a.began)
	}
	if r.cfg.Observer != nil {
		r.cfg.Observer.Rested(j, e, ran)
	}
}
