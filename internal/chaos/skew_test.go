package chaos_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"sync"
	"testing"
	"time"

	"weft/internal/graph"
	"weft/internal/postgres"
	"weft/internal/postgres/pgtest"
	"weft/internal/runner"
)

// skewedClock is a worker machine's clock, off from the database's by skew: the engine
// stamps checkpoints with it.
type skewedClock struct{ skew time.Duration }

func (c skewedClock) Now() time.Time { return time.Now().Add(c.skew) }

func (skewedClock) Sleep(ctx context.Context, d time.Duration) error { return sleep(ctx, d) }

// lostSuccess is the job store of a worker that dies once, for one job, after the job's run
// has ended and before its success is recorded: the job stays running until its lease
// expires, and is then rescued and claimed again.
type lostSuccess struct {
	*postgres.JobStore
	mu     sync.Mutex
	target string
	lost   bool
}

func (s *lostSuccess) Succeed(ctx context.Context, id, worker string) error {
	s.mu.Lock()
	lose := id == s.target && !s.lost
	s.lost = s.lost || lose
	s.mu.Unlock()
	if lose {
		return errors.New("the worker died before recording the success")
	}
	return s.JobStore.Succeed(ctx, id, worker)
}

// TestRerunIgnoresClockSkew: a second run on a finished thread (a re-run, as "Start again"
// makes) runs every node exactly once, whatever the worker's clock says. The worker's clock
// is an hour ahead of the database's, or an hour behind, and the worker dies once after the
// re-run's last checkpoint, before recording its success, so the job is rescued and claimed
// again. The runner used to compare the thread's last checkpoint time (the worker's clock)
// with the job's creation (the database's): ahead, the re-run did nothing at all; behind,
// the rescued re-run ran the whole graph a second time.
func TestRerunIgnoresClockSkew(t *testing.T) {
	t.Parallel()
	for _, skew := range []time.Duration{time.Hour, -time.Hour} {
		t.Run(fmt.Sprintf("worker clock %+v", skew), func(t *testing.T) {
			t.Parallel()
			ctx := context.Background()
			b := newBench(t, pgtest.URL(t), 1)
			first := b.jobs[0]
			g, err := buildLine(b.db, b.probe, func() time.Duration { return 0 }, graph.WithClock(skewedClock{skew}))
			if err != nil {
				t.Fatal(err)
			}
			store := &lostSuccess{JobStore: postgres.NewJobStore(b.db)}
			cfg := workerConfig()
			cfg.Store, cfg.Workflows = store, registry{workflowName: g}
			r := runner.New(cfg)
			rctx, stop := context.WithCancel(ctx)
			done := make(chan error, 1)
			go func() { done <- r.Run(rctx) }()
			t.Cleanup(func() { stop(); <-done })

			waitSucceeded := func(id string) {
				t.Helper()
				deadline := time.Now().Add(30 * time.Second)
				for {
					j, err := store.Job(ctx, tenantID, id)
					if err == nil && j.Status == runner.Succeeded {
						return
					}
					if time.Now().After(deadline) {
						t.Fatalf("job %s is %q (%v), want succeeded", id, j.Status, err)
					}
					time.Sleep(20 * time.Millisecond)
				}
			}
			waitSucceeded(first.ID)

			store.mu.Lock()
			rerun, err := r.Enqueue(ctx, runner.NewJob{TenantID: tenantID, Workflow: workflowName, ThreadID: first.ThreadID,
				Input: json.RawMessage(`{"seq":1}`)})
			if err == nil {
				store.target = rerun.ID
			}
			store.mu.Unlock()
			if err != nil {
				t.Fatal(err)
			}
			waitSucceeded(rerun.ID)

			var rescued int
			if err := b.probe.pool.QueryRow(ctx, `SELECT count(*) FROM chaos_job_moves
				WHERE job_id = $1 AND from_status = 'running' AND to_status = 'queued'`, rerun.ID).Scan(&rescued); err != nil {
				t.Fatal(err)
			}
			if rescued != 1 {
				t.Fatalf("the re-run was rescued %d times, want once (the test's lost worker)", rescued)
			}
			runs := map[string]int{}
			rows, err := b.probe.pool.Query(ctx, `SELECT node, count(*) FROM chaos_node_runs WHERE job_id = $1 GROUP BY node`, rerun.ID)
			if err != nil {
				t.Fatal(err)
			}
			for rows.Next() {
				var node string
				var n int
				if err := rows.Scan(&node, &n); err != nil {
					t.Fatal(err)
				}
				runs[node] = n
			}
			if err := rows.Err(); err != nil {
				t.Fatal(err)
			}
			for _, n := range line {
				if runs[n] != 1 {
					t.Errorf("node %s ran %d times in the re-run, want once (runs: %v)", n, runs[n], runs)
				}
			}
			snap, err := g.GetState(ctx, graph.Config{ThreadID: first.ThreadID})
			if err != nil {
				t.Fatal(err)
			}
			if snap.Values.Seq != 1 || len(snap.Values.Trail) != 2*len(line) {
				t.Errorf("state after the re-run: seq %d, trail %v; want seq 1 and two runs of the line", snap.Values.Seq, snap.Values.Trail)
			}
		})
	}
}
