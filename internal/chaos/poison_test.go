package chaos_test

import (
	"context"
	"encoding/json"
	"testing"
	"time"

	"weft/internal/fault"
	"weft/internal/graph"
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
		loseWorker(t, b, store, job.ID)
	}
	runRescuingWorker(t, b, store, maxRescues)

	failed := waitJob(t, store, job.ID, runner.Failed)
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
	done2 := waitJob(t, store, job.ID, runner.Succeeded)
	if done2.Rescues != 0 {
		t.Fatalf("after an admin retry the job has %d rescues, want 0", done2.Rescues)
	}
	if err := b.probe.pool.QueryRow(ctx, `SELECT count(*) FROM chaos_node_runs WHERE job_id = $1`, job.ID).Scan(&ran); err != nil || ran != len(line) {
		t.Fatalf("%d node runs after the retry (%v), want %d", ran, err, len(line))
	}
}

// loseWorker makes the worker holding job vanish: its lease runs out and the rescuer
// requeues the job.
func loseWorker(t *testing.T, b *bench, store *postgres.JobStore, job string) {
	t.Helper()
	ctx := context.Background()
	if _, err := b.probe.pool.Exec(ctx, `UPDATE jobs SET lease_until = now() - interval '1 second' WHERE id = $1`, job); err != nil {
		t.Fatal(err)
	}
	if n, err := store.Rescue(ctx); err != nil || n != 1 {
		t.Fatalf("rescue: %d jobs, %v", n, err)
	}
}

// runRescuingWorker runs a runner with the given rescue cap on b's workflow until the test ends.
func runRescuingWorker(t *testing.T, b *bench, store *postgres.JobStore, maxRescues int) {
	t.Helper()
	cfg := workerConfig()
	cfg.Store, cfg.Workflows, cfg.MaxRescues = store, registry{workflowName: b.graph}, maxRescues
	ctx, stop := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- runner.New(cfg).Run(ctx) }()
	t.Cleanup(func() { stop(); <-done })
}

// TestRescuesCountOnlyInARow: the rescue count starts again when a run ends in its worker's
// hands. A job loses its worker twice, then runs to a review pause, is resumed by a
// reviewer, and loses its worker once more: with MaxRescues 3 it is run again (not
// dead-lettered with WF_WORKER_LOST), and the reviewer's decision is acted on.
func TestRescuesCountOnlyInARow(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	b := newBench(t, pgtest.URL(t), 1)
	job := b.jobs[0]
	store := postgres.NewJobStore(b.db)
	const maxRescues = 3
	for range maxRescues - 1 {
		if got, err := store.Claim(ctx, "w", 1, time.Minute); err != nil || len(got) != 1 {
			t.Fatalf("claim: %+v, %v", got, err)
		}
		loseWorker(t, b, store, job.ID)
	}
	// The third run gets as far as a review pause.
	if got, err := store.Claim(ctx, "w", 1, time.Minute); err != nil || len(got) != 1 || got[0].Rescues != maxRescues-1 {
		t.Fatalf("claim: %+v, %v", got, err)
	}
	it := graph.PendingInterrupt{ID: "review-1", Node: "n3", TaskID: "task", When: "before"}
	if err := store.Pause(ctx, job.ID, "w", []graph.PendingInterrupt{it}); err != nil {
		t.Fatal(err)
	}
	if err := store.IssueToken(ctx, tenantID, job.ID, it.ID, runner.HashToken("rt_secret"), time.Now().Add(time.Hour)); err != nil {
		t.Fatal(err)
	}
	resumed, err := store.ResumeJob(ctx, runner.ResumeParams{TenantID: tenantID, TokenHash: runner.HashToken("rt_secret"),
		Actor: "u_reviewer", Decision: json.RawMessage(`{"ok":true}`), Worker: "w2", Lease: time.Minute})
	if err != nil {
		t.Fatal(err)
	}
	if resumed.Rescues != 0 {
		t.Fatalf("after a pause and a resume the job has %d rescues, want 0", resumed.Rescues)
	}
	// The resuming worker dies once.
	loseWorker(t, b, store, job.ID)

	runRescuingWorker(t, b, store, maxRescues)

	deadline := time.Now().Add(20 * time.Second)
	for {
		j, err := store.Job(ctx, tenantID, job.ID)
		if err != nil {
			t.Fatal(err)
		}
		if j.Status == runner.Failed || j.Status == runner.Succeeded || j.Status == runner.WaitingReview {
			for _, e := range j.Errors {
				if e.Code == fault.CodeWorkerLost {
					t.Fatalf("job dead-lettered with %s after one lost run since the reviewer's decision (rescues=%d): %s",
						e.Code, j.Rescues, e.Message)
				}
			}
			t.Logf("job ended %s, errors %+v", j.Status, j.Errors)
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("job still %s", j.Status)
		}
		time.Sleep(20 * time.Millisecond)
	}
}
