package chaos_test

import (
	"context"
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
	r := runner.New(cfg)
	rctx, stop := context.WithCancel(ctx)
	done := make(chan error, 1)
	go func() { done <- r.Run(rctx) }()
	t.Cleanup(func() { stop(); <-done })

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
