package telemetry_test

import (
	"context"
	"encoding/json"
	"testing"
	"time"

	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/sdk/trace/tracetest"
	"go.opentelemetry.io/otel/trace"

	"weft/internal/app"
	"weft/internal/llm"
	"weft/internal/postgres/pgtest"
	"weft/internal/runner"
	"weft/internal/telemetry"
	"weft/internal/workflow/bideval"
)

// worker is one Weft process on a shared database, with its own tracer provider.
type worker struct {
	app  *app.App
	exp  *tracetest.InMemoryExporter
	stop func()
}

func startWorker(t *testing.T, url, id string) *worker {
	t.Helper()
	exp := tracetest.NewInMemoryExporter()
	tp := telemetry.NewProvider(sdktrace.WithSyncer(exp))
	t.Cleanup(func() { _ = tp.Shutdown(context.Background()) })
	a, err := app.Open(context.Background(), app.Config{DatabaseURL: url, LLM: firstAttemptFails{llm.NewOffline()}, Tracer: tp,
		Runner: runner.Config{WorkerID: id, Lease: 5 * time.Second, PollInterval: 50 * time.Millisecond,
			Backoff: func(int) time.Duration { return time.Second }}})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(a.Close)
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() { defer close(done); _ = a.RunWorkers(ctx) }()
	w := &worker{app: a, exp: exp}
	stopped := false
	w.stop = func() {
		if !stopped {
			stopped = true
			cancel()
			<-done
		}
	}
	t.Cleanup(w.stop)
	return w
}

func waitJob(t *testing.T, a *app.App, id string, want runner.Status) runner.Job {
	t.Helper()
	for deadline := time.Now().Add(60 * time.Second); ; time.Sleep(25 * time.Millisecond) {
		j, err := a.Jobs.Job(context.Background(), app.DemoTenant, id)
		if err == nil && j.Status == want {
			return j
		}
		if time.Now().After(deadline) {
			t.Fatalf("job %s is %s (%v), want %s", id, j.Status, err, want)
		}
	}
}

// TestRetryOnAnotherWorkerLinksToTheFirstAttempt: worker A runs a job's first attempt,
// which fails transiently and is scheduled for a retry; A stops; worker B, another process
// with its own exporter, runs the retry. B's attempt span is in the job's trace and links to
// A's attempt span (the job's error history keeps its id).
func TestRetryOnAnotherWorkerLinksToTheFirstAttempt(t *testing.T) {
	t.Parallel()
	url := pgtest.URL(t)
	a := startWorker(t, url, "worker-a")
	ctx := context.Background()
	if _, err := app.Bid(a.app).Store.SeedDemo(ctx, bideval.Demo(app.DemoTenant, app.DemoTenant)); err != nil {
		t.Fatal(err)
	}
	j, err := a.app.StartRun(ctx, app.DemoTenant, "bid_evaluation", json.RawMessage(`{"evaluation_id":"ev_demo-northwind"}`), "u_pm")
	if err != nil {
		t.Fatal(err)
	}
	failed := waitJob(t, a.app, j.ID, runner.RetryScheduled)
	a.stop() // (its run has ended: the attempt's span is exported)
	var first tracetest.SpanStub
	for _, s := range a.exp.GetSpans() {
		if s.Name == "run bid_evaluation" && attr(s, "weft.job_id").AsString() == j.ID {
			first = s
		}
	}
	if !first.SpanContext.IsValid() || attr(first, "weft.worker").AsString() != "worker-a" || attr(first, "weft.attempt").AsInt64() != 1 {
		t.Fatalf("worker A's attempt span: %+v", first)
	}
	if got := failed.Errors[len(failed.Errors)-1].SpanID; got != first.SpanContext.SpanID().String() {
		t.Fatalf("the job's error keeps span %s, A's attempt was %s", got, first.SpanContext.SpanID())
	}

	b := startWorker(t, url, "worker-b")
	waitJob(t, b.app, j.ID, runner.Succeeded)
	var second tracetest.SpanStub
	for deadline := time.Now().Add(10 * time.Second); !second.SpanContext.IsValid(); time.Sleep(20 * time.Millisecond) {
		for _, s := range b.exp.GetSpans() {
			if s.Name == "run bid_evaluation" && attr(s, "weft.job_id").AsString() == j.ID {
				second = s
			}
		}
		if time.Now().After(deadline) {
			t.Fatal("worker B exported no attempt span")
		}
	}
	if attr(second, "weft.worker").AsString() != "worker-b" || attr(second, "weft.attempt").AsInt64() != 2 ||
		second.SpanContext.TraceID() != first.SpanContext.TraceID() || second.SpanContext.TraceID().String() != j.TraceID {
		t.Fatalf("worker B's attempt: %v in trace %s (A's %s, the job's %s)", second.Attributes, second.SpanContext.TraceID(), first.SpanContext.TraceID(), j.TraceID)
	}
	var link trace.Link
	for _, l := range second.Links {
		if l.SpanContext.SpanID() == first.SpanContext.SpanID() {
			link = trace.Link{SpanContext: l.SpanContext, Attributes: l.Attributes}
		}
	}
	if !link.SpanContext.IsValid() || link.SpanContext.TraceID() != first.SpanContext.TraceID() {
		t.Fatalf("worker B's attempt links to %+v, want worker A's attempt %s", second.Links, first.SpanContext.SpanID())
	}
}
