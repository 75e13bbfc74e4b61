package postgres_test

import (
	"testing"

	"weft/internal/postgres"
	"weft/internal/runner"
)

// TestReads: reads of different kinds queued together come back as each does alone, in one
// round trip; a failing statement fails Run.
func TestReads(t *testing.T) {
	t.Parallel()
	b := setupJobs(t)
	for i := range 4 {
		b.enqueue(t, tenantA, []string{"wf1", "wf2"}[i%2])
	}
	b.enqueue(t, tenantB, "wf1")
	bus := postgres.NewEventBus(b.db, postgres.EventBusOptions{})
	t.Cleanup(func() { _ = bus.Close(b.ctx) })

	r := b.db.Reads()
	var counts []postgres.JobCount
	var wf1, all []runner.Job
	var latest int64
	var none [][]postgres.DashboardJob
	bus.QueueLatestID(r, tenantA, &latest)
	b.store.QueueCountJobs(r, tenantA, &counts)
	b.store.QueueListJobs(r, postgres.JobQuery{Filter: postgres.JobFilter{TenantID: tenantA, Workflow: "wf1"}, Limit: 10}, &wf1)
	b.store.QueueListJobs(r, postgres.JobQuery{Filter: postgres.JobFilter{TenantID: tenantA}, Limit: 3}, &all)
	b.store.QueueDashboardLists(r, tenantA, nil, &none) // no lists: nothing queued
	if r.Len() != 4 {
		t.Fatalf("%d statements queued, want 4", r.Len())
	}
	if err := r.Run(b.ctx); err != nil {
		t.Fatal(err)
	}
	wantCounts, err := b.store.CountJobs(b.ctx, tenantA)
	if err != nil {
		t.Fatal(err)
	}
	if len(counts) != len(wantCounts) || len(counts) != 2 {
		t.Fatalf("counts %+v, want %+v", counts, wantCounts)
	}
	for i := range counts {
		if counts[i] != wantCounts[i] || counts[i].N != 2 {
			t.Fatalf("counts %+v, want %+v", counts, wantCounts)
		}
	}
	if len(wf1) != 2 || len(all) != 3 || latest != 0 || none == nil || len(none) != 0 {
		t.Fatalf("wf1 %d jobs, all %d, latest %d, no lists %v", len(wf1), len(all), latest, none)
	}
	for _, j := range append(wf1, all...) {
		if j.TenantID != tenantA {
			t.Fatalf("job %s of tenant %s in tenant A's reads", j.ID, j.TenantID)
		}
	}

	// A statement the server refuses (a NUL byte in a text parameter) fails the whole Run.
	r = b.db.Reads()
	var fine, bad []runner.Job
	b.store.QueueListJobs(r, postgres.JobQuery{Filter: postgres.JobFilter{TenantID: tenantA}, Limit: 10}, &fine)
	b.store.QueueListJobs(r, postgres.JobQuery{Filter: postgres.JobFilter{TenantID: "bad\x00tenant"}, Limit: 10}, &bad)
	if err := r.Run(b.ctx); err == nil {
		t.Fatal("a refused statement did not fail Run")
	}
	if bad != nil {
		t.Fatalf("the failed read wrote %d jobs", len(bad))
	}
	// Nothing queued: nothing sent, no error.
	if err := b.db.Reads().Run(b.ctx); err != nil {
		t.Fatal(err)
	}
}
