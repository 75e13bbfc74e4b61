package platform

import (
	"context"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"weft/internal/postgres"
	"weft/internal/postgres/pgtest"
	"weft/internal/runner"
)

// TestLatencyRecorderFlushes: the node-record writer the runner is given in production (the
// records behind a latency histogram) flushes when the runner asks before a job comes to
// rest, so a job that says its run ended has its node records stored (it did not: the
// runner's check for a Flush found none, and skipped them).
func TestLatencyRecorderFlushes(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	d := pgtest.DB(t)
	recs := postgres.NewNodeRecords(d, postgres.BatchOptions{FlushInterval: time.Hour, MaxBatch: 10000})
	t.Cleanup(func() { _ = recs.Close(ctx) })
	hist := prometheus.NewHistogramVec(prometheus.HistogramOpts{Name: "h"}, []string{"workflow", "node", "outcome"})
	var nodes runner.NodeRecorder = latencyRecorder{next: recs, hist: hist}
	now := time.Now()
	nodes.RecordNode(ctx, runner.NodeExecution{TenantID: "acme", JobID: "j1", Workflow: "w", TraceID: "tr", ThreadID: "th",
		Node: "score", TaskID: "t1", StartedAt: now, EndedAt: now, Attempts: 1})
	f, ok := nodes.(runner.EventFlusher)
	if !ok {
		t.Fatal("the runner cannot flush the production node-record writer")
	}
	if err := f.Flush(ctx); err != nil {
		t.Fatal(err)
	}
	if got, err := d.ListNodeExecutions(ctx, "acme", "th"); err != nil || len(got) != 1 {
		t.Fatalf("after the flush, %d node records are stored (%v), want 1", len(got), err)
	}
}
