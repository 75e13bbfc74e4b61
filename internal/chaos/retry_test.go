package chaos_test

import (
	"context"
	"errors"
	"sync/atomic"
	"testing"

	"weft/internal/fault"
	"weft/internal/graph"
	"weft/internal/postgres"
	"weft/internal/postgres/pgtest"
	"weft/internal/runner"
)

// retryState: what the parallel siblings did, and the failure the error route saw.
type retryState struct {
	Done    []string          `json:"done" weft:"append"`
	Failure graph.NodeFailure `json:"failure"`
}

// TestRetryKeepsFinishedSiblings: a failed job's admin retry re-runs only what failed in its
// step. Two nodes run side by side; "fetch" finishes, "score" fails for good and the graph's
// error route dead-letters the job. Once the cause is fixed, the admin's retry runs "score"
// again and not "fetch", whose writes the failed step kept (an admin's fork, by contrast,
// replays everything after its checkpoint).
func TestRetryKeepsFinishedSiblings(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	b := newBench(t, pgtest.URL(t), 0)
	store := postgres.NewJobStore(b.db)
	var fetched, scored atomic.Int32
	var fixed atomic.Bool
	var r *runner.Runner
	gb := graph.New[retryState]()
	gb.AddNode("fetch", func(context.Context, retryState) (graph.Command, error) {
		fetched.Add(1)
		return graph.Update(graph.Set("done", "fetch")), nil
	})
	gb.AddNode("score", func(context.Context, retryState) (graph.Command, error) {
		scored.Add(1)
		if !fixed.Load() {
			return graph.Command{}, graph.Permanent(errors.New("the model refused the prompt"))
		}
		return graph.Update(graph.Set("done", "score")), nil
	})
	gb.AddEdge(graph.START, "fetch").AddEdge(graph.START, "score").AddEdge("fetch", graph.END).AddEdge("score", graph.END)
	g := compileErrorRoute(t, b, gb, &r, func(context.Context) graph.Command { return graph.Command{} })
	r = startRunner(t, store, registry{workflowName: g}, 0)
	job, err := r.Enqueue(ctx, runner.NewJob{TenantID: tenantID, Workflow: workflowName})
	if err != nil {
		t.Fatal(err)
	}
	failed := waitJob(t, store, job.ID, runner.Failed)
	if fetched.Load() != 1 || scored.Load() != 1 || failed.RetryFrom == "" {
		t.Fatalf("first run: fetch ran %d, score %d, retry from %q", fetched.Load(), scored.Load(), failed.RetryFrom)
	}
	fixed.Store(true)
	if err := store.Requeue(ctx, tenantID, job.ID, "u_admin"); err != nil {
		t.Fatal(err)
	}
	waitJob(t, store, job.ID, runner.Succeeded)
	if fetched.Load() != 1 || scored.Load() != 2 {
		t.Fatalf("after the retry: fetch ran %d times, score %d; want fetch kept (1) and score run again (2)", fetched.Load(), scored.Load())
	}
	snap, err := g.GetState(ctx, graph.Config{ThreadID: job.ThreadID})
	if err != nil {
		t.Fatal(err)
	}
	if len(snap.Values.Done) != 2 {
		t.Fatalf("the retried thread's state: %+v, want fetch's and score's writes once each", snap.Values.Done)
	}
}

// compileErrorRoute adds the graph's error route to gb, a node that records the failure the
// graph saw with the runner (*r, set once it exists: a permanent SCORE_REFUSED), then goes on
// with what then returns, and compiles the graph on the bench's database.
func compileErrorRoute(t *testing.T, b *bench, gb *graph.Builder[retryState], r **runner.Runner, then func(context.Context) graph.Command) *graph.Graph[retryState] {
	t.Helper()
	gb.AddNode("retry_or_dlq", func(ctx context.Context, s retryState) (graph.Command, error) {
		if _, err := (*r).RecordFailure(ctx, runner.Failure{Class: fault.Permanent, Code: "SCORE_REFUSED", Message: s.Failure.Error,
			Node: s.Failure.Node, CheckpointID: s.Failure.CheckpointID}); err != nil {
			return graph.Command{}, err
		}
		return then(ctx), nil
	})
	gb.AddEdge("retry_or_dlq", graph.END)
	g, err := gb.Compile(graph.WithCheckpointer(postgres.NewCheckpointer(b.db)), graph.WithName(workflowName),
		graph.WithErrorHandler("retry_or_dlq", func(f graph.NodeFailure, _ error) []graph.Write {
			return []graph.Write{graph.Set("failure", f)}
		}))
	if err != nil {
		t.Fatal(err)
	}
	return g
}
