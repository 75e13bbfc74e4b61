package chaos_test

import (
	"context"
	"testing"
	"time"

	"weft/internal/fault"
	"weft/internal/postgres"
	"weft/internal/postgres/pgtest"
	"weft/internal/runner"
)

// TestWorkerLostTooOftenIsDeadLettered: a job whose worker keeps disappearing (claimed, then
// never heard of again until its lease expires) is rescued MaxRescues times and then, instead
// of being run again, dead-lettered with WF_WORKER_LOST, without running a node. An admin
// retry starts the count again and the job runs to the end.
func TestWorkerLostTooOftenIsDeadLettered(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	b := newBench(t, pgtest.URL(t), 1)
	job := b.jobs[0]
	store := postgres.NewJobStore(b.db)
	const maxRescues = 3
	for i := range maxRescues {
		got, err := store.Claim(ctx, "vanishing-worker", 1, time.Minute)
		if err != nil || len(got) != 1 || got[0].ID != job.ID || got[0].Rescues != i {
			t.Fatalf("claim %d: %+v, %v; want job %s with %d rescues", i, got, err, job.ID, i)
		}
		// The worker is gone: its lease runs out.
		if _, err := b.probe.pool.Exec(ctx, `UPDATE jobs SET lease_until = now() - interval '1 second' WHERE id = $1`, job.ID); err != nil {
			t.Fatal(err)
		}
		if n, err := store.Rescue(ctx); err != nil || n != 1 {
			t.Fatalf("rescue %d: %d jobs, %v", i, n, err)
		}
	}

	cfg := workerConfig()
	cfg.Store, cfg.Workflows, cfg.MaxRescues = store, registry{workflowName: b.graph}, maxRescues
	wctx, stop := context.WithCancel(ctx)
	done := make(chan error, 1)
	go func() { done <- runner.New(cfg).Run(wctx) }()
	defer func() { stop(); <-done }()

	waitJob := func(want runner.Status) runner.Job {
		t.Helper()
		deadline := time.Now().Add(30 * time.Second)
		for {
			j, err := store.Job(ctx, tenantID, job.ID)
			if err == nil && j.Status == want {
				return j
			}
			if time.Now().After(deadline) {
				t.Fatalf("job is %q (%v), want %q", j.Status, err, want)
			}
			time.Sleep(20 * time.Millisecond)
		}
	}
	failed := waitJob(runner.Failed)
	if n := len(failed.Errors); n != 1 || failed.Errors[0].Code != fault.CodeWorkerLost || failed.Errors[0].Class != fault.Permanent {
		t.Fatalf("errors = %+v, want one %s (permanent)", failed.Errors, fault.CodeWorkerLost)
	}
	entries, _, err := store.ListDLQ(ctx, tenantID, postgres.DLQStatusRecorded, postgres.Cursor{}, 10)
	if err != nil || len(entries) != 1 || entries[0].JobID != job.ID || entries[0].Code != fault.CodeWorkerLost {
		t.Fatalf("dead letters = %+v, %v", entries, err)
	}
	var ran int
	if err := b.probe.pool.QueryRow(ctx, `SELECT count(*) FROM chaos_node_runs WHERE job_id = $1`, job.ID).Scan(&ran); err != nil || ran != 0 {
		t.Fatalf("%d nodes ran (%v); a job given up on must not run", ran, err)
	}

	if err := store.Requeue(ctx, tenantID, job.ID, "u_admin"); err != nil {
		t.Fatal(err)
	}
	done2 := waitJob(runner.Succeeded)
	if done2.Rescues != 0 {
		t.Fatalf("after an admin retry the job has %d rescues, want 0", done2.Rescues)
	}
	if err := b.probe.pool.QueryRow(ctx, `SELECT count(*) FROM chaos_node_runs WHERE job_id = $1`, job.ID).Scan(&ran); err != nil || ran != len(line) {
		t.Fatalf("%d node runs after the retry (%v), want %d", ran, err, len(line))
	}
}
