package postgres_test

import (
	"context"
	"testing"
	"time"

	"weft/internal/postgres"
	"weft/internal/runner"
)

func waitWake(t *testing.T, c <-chan struct{}, what string) {
	t.Helper()
	select {
	case <-c:
	case <-time.After(10 * time.Second):
		t.Fatalf("no wake-up after %s", what)
	}
}

func noWake(t *testing.T, c <-chan struct{}, what string) {
	t.Helper()
	select {
	case <-c:
		t.Fatalf("a wake-up after %s", what)
	case <-time.After(300 * time.Millisecond):
	}
}

// TestListener: enqueues, rescues and admin retries wake idle workers; other changes do
// not; a dropped connection is re-established.
func TestListener(t *testing.T) {
	t.Parallel()
	b := setupJobs(t)
	l := postgres.NewListener(b.db)
	ctx, cancel := context.WithCancel(b.ctx)
	done := make(chan error, 1)
	go func() { done <- l.Run(ctx) }()
	t.Cleanup(func() {
		cancel()
		if err := <-done; err != context.Canceled {
			t.Errorf("Run: %v", err)
		}
	})
	waitWake(t, l.C(), "connecting")
	start := time.Now()
	j := b.enqueue(t, tenantA, "wf")
	waitWake(t, l.C(), "an enqueue")
	t.Logf("enqueue → wake-up in %v", time.Since(start))

	b.claimOne(t, w1)
	if err := b.store.Succeed(b.ctx, j.ID, w1); err != nil {
		t.Fatal(err)
	}
	noWake(t, l.C(), "a claim and a success")

	// A burst is coalesced into at most one pending wake-up.
	for range 5 {
		b.enqueue(t, tenantA, "wf")
	}
	waitWake(t, l.C(), "a burst")
	time.Sleep(200 * time.Millisecond)
	select {
	case <-l.C():
	default:
	}
	jobs, err := b.store.Claim(b.ctx, w1, 10, time.Minute)
	if err != nil || len(jobs) != 5 {
		t.Fatalf("claim: %d, %v", len(jobs), err)
	}
	noWake(t, l.C(), "a claim")
	b.exec(t, `UPDATE jobs SET lease_until = now() - interval '1 second' WHERE id = $1`, jobs[0].ID)
	if n, err := b.store.Rescue(b.ctx); err != nil || n != 1 {
		t.Fatalf("rescue: %d, %v", n, err)
	}
	waitWake(t, l.C(), "a rescue")
	if err := b.store.Release(b.ctx, w1, []string{jobs[1].ID}); err != nil {
		t.Fatal(err)
	}
	waitWake(t, l.C(), "a release")
	if _, err := b.store.DeadLetter(b.ctx, jobs[2].ID, w1, jobError("E", 0)); err != nil {
		t.Fatal(err)
	}
	noWake(t, l.C(), "a dead-lettering")
	if err := b.store.Requeue(b.ctx, tenantA, jobs[2].ID, "admin"); err != nil {
		t.Fatal(err)
	}
	waitWake(t, l.C(), "an admin retry")

	// Kill the listening session: the listener reconnects (and wakes, as it may have missed
	// notifications), then hears enqueues again.
	var killed bool
	if err := b.pool.QueryRow(b.ctx, `SELECT pg_terminate_backend(pid) FROM pg_stat_activity
		WHERE datname = current_database() AND query = 'LISTEN weft_jobs'`).Scan(&killed); err != nil || !killed {
		t.Fatalf("terminate the listener's session: %v %v", killed, err)
	}
	waitWake(t, l.C(), "reconnecting")
	b.enqueue(t, tenantA, "wf")
	waitWake(t, l.C(), "an enqueue after reconnecting")
	var _ <-chan struct{} = runner.Config{Wake: l.C()}.Wake
}
