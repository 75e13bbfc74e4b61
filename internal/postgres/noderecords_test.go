package postgres_test

import (
	"context"
	"strconv"
	"testing"
	"time"

	"weft/internal/postgres"
	"weft/internal/postgres/pgtest"
	"weft/internal/runner"
)

func TestNodeRecords(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	d := pgtest.DB(t)
	recs := postgres.NewNodeRecords(d, postgres.BatchOptions{})
	base := time.Date(2026, 5, 1, 10, 0, 0, 0, time.UTC)
	var want []runner.NodeExecution
	for i := range 30 {
		for _, th := range []string{"th-1", "th-2"} {
			r := runner.NodeExecution{TenantID: "acme", JobID: "job-" + th, Workflow: "wf", TraceID: "trace-" + th,
				ThreadID: th, Node: "n" + strconv.Itoa(i), TaskID: "task-" + strconv.Itoa(i),
				StartedAt: base.Add(time.Duration(i) * time.Second), EndedAt: base.Add(time.Duration(i)*time.Second + 1500*time.Microsecond),
				LatencyMS: 1.5, InputSize: 10 * i, OutputSize: 20 * i, Attempts: 1 + i%2, Cached: i%5 == 0}
			if i%7 == 3 {
				r.ErrorCode = "WF_NODE_TIMEOUT"
			}
			recs.RecordNode(ctx, r)
			if th == "th-1" {
				want = append(want, r)
			}
		}
		recs.RecordNode(ctx, runner.NodeExecution{TenantID: "globex", ThreadID: "th-1", Node: "intruder",
			StartedAt: base, EndedAt: base})
	}
	if err := recs.Close(ctx); err != nil {
		t.Fatal(err)
	}
	if s := recs.Stats(); s.Rows != 90 || s.Dropped != 0 || s.Errors != 0 {
		t.Fatalf("stats %+v", s)
	}
	got, err := d.ListNodeExecutions(ctx, "acme", "th-1")
	if err != nil {
		t.Fatal(err)
	}
	if len(got) != len(want) {
		t.Fatalf("%d records, want %d", len(got), len(want))
	}
	for i := range got {
		g, w := got[i], want[i]
		if !g.StartedAt.Equal(w.StartedAt) || !g.EndedAt.Equal(w.EndedAt) {
			t.Fatalf("record %d times %v..%v, want %v..%v", i, g.StartedAt, g.EndedAt, w.StartedAt, w.EndedAt)
		}
		g.StartedAt, g.EndedAt = w.StartedAt, w.EndedAt
		if g != w {
			t.Fatalf("record %d = %+v, want %+v", i, g, w)
		}
	}
	if other, err := d.ListNodeExecutions(ctx, "initech", "th-1"); err != nil || len(other) != 0 {
		t.Fatalf("another tenant's timeline: %v %v", other, err)
	}
	recs.RecordNode(ctx, want[0]) // after Close: dropped, never blocks
	if s := recs.Stats(); s.Dropped != 1 {
		t.Fatalf("stats after close %+v", s)
	}
}
