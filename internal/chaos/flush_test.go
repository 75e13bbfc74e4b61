package chaos_test

import (
	"context"
	"errors"
	"slices"
	"testing"
	"time"

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
	g := compileErrorRoute(t, b, gb, &r, func() graph.Command {
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
