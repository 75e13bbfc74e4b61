package chaos_test

import (
	"context"
	"errors"
	"slices"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"weft/internal/fault"
	"weft/internal/graph"
	"weft/internal/postgres"
	"weft/internal/postgres/pgtest"
	"weft/internal/runner"
)

// TestRunEventsStoredWhenJobRests: by the time a job says its run ended, the run's events and
// node records are in the database, even though the writers would have held them for an
// hour (as a process killed right after the job's commit would have lost them: a kill -9
// left a paused thread whose stream never showed its last checkpoint or its interrupt).
func TestRunEventsStoredWhenJobRests(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	b := newBench(t, pgtest.URL(t), 1)
	g, err := buildLine(b.db, b.probe, func() time.Duration { return 0 })
	if err != nil {
		t.Fatal(err)
	}
	slow := postgres.BatchOptions{FlushInterval: time.Hour, MaxBatch: 10000}
	bus := postgres.NewEventBus(b.db, postgres.EventBusOptions{BatchOptions: slow})
	recs := postgres.NewNodeRecords(b.db, slow)
	t.Cleanup(func() {
		cctx, cancel := context.WithTimeout(ctx, 10*time.Second)
		defer cancel()
		_ = bus.Close(cctx)
		_ = recs.Close(cctx)
	})
	cfg := workerConfig()
	store := postgres.NewJobStore(b.db)
	cfg.Store, cfg.Workflows, cfg.Events, cfg.Nodes = store, registry{workflowName: g}, bus, recs
	runRunner(t, cfg)

	j := waitJob(t, store, b.jobs[0].ID, runner.Succeeded) // no wait after: stored already
	evs, err := bus.ListEvents(ctx, tenantID, j.ThreadID, 0, 1000)
	if err != nil {
		t.Fatal(err)
	}
	checkpoints := 0
	for _, e := range evs {
		if e.Kind == "checkpoint" {
			checkpoints++
		}
	}
	cps, err := b.graph.History(ctx, graph.Config{ThreadID: j.ThreadID}, graph.ListOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if checkpoints == 0 || checkpoints != len(cps) {
		t.Fatalf("when the job succeeded, %d checkpoint events were stored for %d checkpoints", checkpoints, len(cps))
	}
	execs, err := b.db.ListNodeExecutions(ctx, tenantID, j.ThreadID)
	if err != nil || len(execs) == 0 {
		t.Fatalf("when the job succeeded, %d node records were stored (%v)", len(execs), err)
	}
}

// TestErrorRouteRunEndsAfterRest: when the graph's error route moves its job to rest (the
// dead letters), the run still writes its last checkpoint and says where the job rests, even
// when heartbeats come meanwhile: one used to find the job no longer leased and stop the run
// before that checkpoint, so the thread lost its last step and its stream never ended.
func TestErrorRouteRunEndsAfterRest(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	b := newBench(t, pgtest.URL(t), 0)
	store := postgres.NewJobStore(b.db)
	bus := postgres.NewEventBus(b.db, postgres.EventBusOptions{})
	t.Cleanup(func() {
		cctx, cancel := context.WithTimeout(ctx, 10*time.Second)
		defer cancel()
		_ = bus.Close(cctx)
	})
	const lease = 600 * time.Millisecond // a heartbeat every 200 ms
	var r *runner.Runner
	gb := graph.New[retryState]()
	gb.AddNode("score", func(context.Context, retryState) (graph.Command, error) {
		return graph.Command{}, graph.Permanent(errors.New("the model refused the prompt"))
	})
	gb.AddEdge(graph.START, "score").AddEdge("score", graph.END)
	g := compileErrorRoute(t, b, gb, &r, func(context.Context) graph.Command {
		time.Sleep(3 * lease / 2) // heartbeats come while the step finishes
		return graph.Update(graph.Set("done", "dead-lettered"))
	})
	cfg := workerConfig()
	cfg.Store, cfg.Workflows, cfg.Events, cfg.Lease = store, registry{workflowName: g}, bus, lease
	r = runRunner(t, cfg)

	job, err := r.Enqueue(ctx, runner.NewJob{TenantID: tenantID, Workflow: workflowName})
	if err != nil {
		t.Fatal(err)
	}
	failed := waitJob(t, store, job.ID, runner.Failed)
	for deadline := time.Now().Add(10 * time.Second); ; time.Sleep(20 * time.Millisecond) {
		if ended, err := bus.RunEnded(ctx, failed); err == nil && ended {
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("the dead-lettered job's run never said where the job rests")
		}
	}
	snap, err := g.GetState(ctx, graph.Config{ThreadID: job.ThreadID})
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Contains(snap.Values.Done, "dead-lettered") {
		t.Fatalf("the error route's step is not in the thread's last checkpoint: %+v", snap.Values)
	}
}

// TestRetryWaitsForSettlingRun: an admin retry of a job whose own run dead-lettered it, sent
// while that run still writes its last step, waits for the run to return: it used to be
// claimed at once and start from the head before the old run's last checkpoint landed, so one
// of the two runs failed on the head's compare-and-set.
func TestRetryWaitsForSettlingRun(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	b := newBench(t, pgtest.URL(t), 0)
	store := postgres.NewJobStore(b.db)
	var r *runner.Runner
	var scored atomic.Int32
	gb := graph.New[retryState]()
	gb.AddNode("score", func(context.Context, retryState) (graph.Command, error) {
		if scored.Add(1) == 1 {
			return graph.Command{}, graph.Permanent(errors.New("the model refused the prompt"))
		}
		return graph.Update(graph.Set("done", "scored")), nil
	})
	gb.AddEdge(graph.START, "score").AddEdge("score", graph.END)
	rested, release := make(chan struct{}), make(chan struct{})
	var releaseOnce sync.Once
	releaseRun := func() { releaseOnce.Do(func() { close(release) }) }
	var again string
	g := compileErrorRoute(t, b, gb, &r, func(ctx context.Context) graph.Command {
		// Recording the failure again in the same run (the node run again) gives the same
		// answer, though the job is no longer running.
		var err error
		if again, err = r.RecordFailure(ctx, runner.Failure{Class: fault.Permanent, Code: "SCORE_REFUSED", Message: "again"}); err != nil {
			again = err.Error()
		}
		close(rested)
		<-release // the old run's last step is still being written
		return graph.Update(graph.Set("done", "dead-lettered"))
	})
	cfg := workerConfig()
	cfg.Store, cfg.Workflows = store, registry{workflowName: g}
	r = runRunner(t, cfg)
	t.Cleanup(releaseRun) // before the runner stops (cleanups run last first): it waits for the run

	job, err := r.Enqueue(ctx, runner.NewJob{TenantID: tenantID, Workflow: workflowName})
	if err != nil {
		t.Fatal(err)
	}
	<-rested
	if again != runner.DecisionDLQ {
		t.Errorf("recording the failure again in the same run: %q, want %q", again, runner.DecisionDLQ)
	}
	waitJob(t, store, job.ID, runner.Failed)
	if err := store.Requeue(ctx, tenantID, job.ID, "admin@test"); err != nil {
		t.Fatal(err)
	}
	// Many claim rounds (a poll every 50 ms, and the requeue's wake-up) pass meanwhile.
	for range 20 {
		time.Sleep(50 * time.Millisecond)
		if j, err := store.Job(ctx, tenantID, job.ID); err != nil || j.Status != runner.Queued {
			t.Fatalf("the retry is %q (%v) while the run that dead-lettered the job has not returned, want it queued", j.Status, err)
		}
	}
	releaseRun()
	done := waitJob(t, store, job.ID, runner.Succeeded)
	if len(done.Errors) != 1 || done.Errors[0].Code != "SCORE_REFUSED" {
		t.Fatalf("job errors %+v, want only the refusal", done.Errors)
	}
	snap, err := g.GetState(ctx, graph.Config{ThreadID: job.ThreadID})
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Contains(snap.Values.Done, "scored") {
		t.Fatalf("the retry did not score: %+v", snap.Values)
	}
	hist, err := g.History(ctx, graph.Config{ThreadID: job.ThreadID}, graph.ListOptions{})
	if err != nil {
		t.Fatal(err)
	}
	last := false // the old run's last step is in the thread's history
	for _, cp := range hist {
		last = last || slices.Contains(cp.Nodes, "retry_or_dlq")
	}
	if !last {
		t.Fatalf("the dead-lettering run's last step is not in the thread's history (%d checkpoints)", len(hist))
	}
}
