package chaos_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	"weft/internal/fault"
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
			// A lease long enough that only the test's lost worker gets the re-run rescued,
			// not a heartbeat late on a busy machine.
			r := startRunner(t, store, registry{workflowName: g}, 4*time.Second)
			waitSucceeded := func(id string) { waitJob(t, store.JobStore, id, runner.Succeeded) }
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

// TestRerunAfterAFailedRun: running a thread again after its last run failed part-way (its
// job failed with a node still to run) starts a new run from the job's input, as "Re-run"
// promises, rather than continuing the failed run. The graph is a → b → c; b fails for good
// while seq is 0. The first job fails at b; the re-run (seq 1) runs a, b and c and succeeds.
func TestRerunAfterAFailedRun(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	url := pgtest.URL(t)
	d, err := postgres.Open(ctx, url)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(d.Close)
	const name = "fail_once"
	bld := graph.New[lineState]()
	for _, n := range []string{"a", "b", "c"} {
		bld.AddNode(n, func(_ context.Context, s lineState) (graph.Command, error) {
			if n == "b" && s.Seq == 0 {
				return graph.Command{}, fault.New(fault.Permanent, "TEST_BROKEN", "b cannot work with seq 0")
			}
			return graph.Update(graph.Set("trail", []string{n})), nil
		})
	}
	bld.AddEdge(graph.START, "a")
	bld.AddEdge("a", "b")
	bld.AddEdge("b", "c")
	bld.AddEdge("c", graph.END)
	g, err := bld.Compile(graph.WithCheckpointer(postgres.NewCheckpointer(d)), graph.WithName(name))
	if err != nil {
		t.Fatal(err)
	}
	store := postgres.NewJobStore(d)
	r := startRunner(t, store, registry{name: g}, 0)
	wait := func(id string, want runner.Status) runner.Job { return waitJob(t, store, id, want) }

	first, err := r.Enqueue(ctx, runner.NewJob{TenantID: tenantID, Workflow: name, Input: json.RawMessage(`{"seq":0}`)})
	if err != nil {
		t.Fatal(err)
	}
	wait(first.ID, runner.Failed)
	snap, err := g.GetState(ctx, graph.Config{ThreadID: first.ThreadID})
	if err != nil || len(snap.Next) != 1 || snap.Next[0] != "b" {
		t.Fatalf("after the failed run the thread waits for %v (%v), want [b]", snap.Next, err)
	}

	rerun, err := r.Enqueue(ctx, runner.NewJob{TenantID: tenantID, Workflow: name, ThreadID: first.ThreadID,
		Input: json.RawMessage(`{"seq":1}`)})
	if err != nil {
		t.Fatal(err)
	}
	if j := wait(rerun.ID, runner.Succeeded); len(j.Errors) != 0 {
		t.Fatalf("the re-run recorded errors: %+v", j.Errors)
	}
	snap, err = g.GetState(ctx, graph.Config{ThreadID: first.ThreadID})
	if err != nil {
		t.Fatal(err)
	}
	if got := strings.Join(snap.Values.Trail, " "); snap.Values.Seq != 1 || got != "a a b c" {
		t.Fatalf("after the re-run: seq %d, trail %q; want seq 1 and %q (a from each run, b and c from the re-run)",
			snap.Values.Seq, got, "a a b c")
	}
}

// startRunner runs a runner (workerConfig, with lease unless it is 0) on store and workflows
// until the test ends.
func startRunner(t *testing.T, store runner.Store, workflows registry, lease time.Duration) *runner.Runner {
	t.Helper()
	cfg := workerConfig()
	cfg.Store, cfg.Workflows = store, workflows
	if lease > 0 {
		cfg.Lease = lease
	}
	return runRunner(t, cfg)
}

// runRunner runs a runner of cfg until the test ends.
func runRunner(t *testing.T, cfg runner.Config) *runner.Runner {
	t.Helper()
	r := runner.New(cfg)
	ctx, stop := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- r.Run(ctx) }()
	t.Cleanup(func() { stop(); <-done })
	return r
}

// waitJob polls until the job of tenantID is in status want, and returns it.
func waitJob(t *testing.T, store *postgres.JobStore, id string, want runner.Status) runner.Job {
	t.Helper()
	deadline := time.Now().Add(30 * time.Second)
	for {
		j, err := store.Job(context.Background(), tenantID, id)
		if err == nil && j.Status == want {
			return j
		}
		if time.Now().After(deadline) {
			t.Fatalf("job %s is %q (%v), want %q", id, j.Status, err, want)
		}
		time.Sleep(20 * time.Millisecond)
	}
}
