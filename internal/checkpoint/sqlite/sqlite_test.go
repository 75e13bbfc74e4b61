package sqlite_test

import (
	"context"
	"errors"
	"fmt"
	"path/filepath"
	"testing"

	"weft/internal/checkpoint/checkpointtest"
	"weft/internal/checkpoint/sqlite"
	"weft/internal/graph"
)

// open opens a fresh file under the test's temp dir, closed when the test ends.
func open(t testing.TB, path string) *sqlite.Checkpointer {
	t.Helper()
	c, err := sqlite.Open(context.Background(), path)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = c.Close() })
	return c
}

func TestConformance(t *testing.T) {
	t.Parallel()
	checkpointtest.Run(t, func(t *testing.T) graph.Checkpointer {
		return open(t, filepath.Join(t.TempDir(), "weft.db"))
	})
}

func TestConformanceInMemory(t *testing.T) {
	t.Parallel()
	checkpointtest.Run(t, func(t *testing.T) graph.Checkpointer { return open(t, ":memory:") })
}

type counter struct {
	N   int      `json:"n"`
	Log []string `json:"log" weft:"append"`
	Ans string   `json:"ans"`
}

func counterGraph(t *testing.T, cp graph.Checkpointer) *graph.Graph[counter] {
	t.Helper()
	b := graph.New[counter]()
	b.AddNode("inc", func(_ context.Context, s counter) (graph.Command, error) {
		return graph.Update(graph.Set("n", s.N+1), graph.Set("log", fmt.Sprintf("step %d", s.N+1))), nil
	})
	b.AddNode("ask", func(ctx context.Context, s counter) (graph.Command, error) {
		a, err := graph.Interrupt[string](ctx, map[string]int{"n": s.N})
		if err != nil {
			return graph.Command{}, err
		}
		return graph.Update(graph.Set("ans", a)), nil
	})
	b.AddEdge(graph.START, "inc")
	b.AddConditionalEdges("inc", graph.Pick(func(s counter) string {
		if s.N < 4 {
			return "again"
		}
		return "ask"
	}), map[string]string{"again": "inc", "ask": "ask"})
	b.AddEdge("ask", graph.END)
	g, err := b.Compile(graph.WithCheckpointer(cp))
	if err != nil {
		t.Fatal(err)
	}
	return g
}

// A thread paused in one process resumes in the next: everything the run needs is in
// the file.
func TestThreadSurvivesReopen(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	path := filepath.Join(t.TempDir(), "weft.db")
	first, err := sqlite.Open(ctx, path)
	if err != nil {
		t.Fatal(err)
	}
	cfg := graph.Config{ThreadID: "session-1"}
	res, err := counterGraph(t, first).Invoke(ctx, cfg, graph.Update(graph.Set("n", 0)))
	if err != nil || len(res.Interrupts) != 1 {
		t.Fatalf("first run: %+v, %v", res, err)
	}
	if err := first.Close(); err != nil {
		t.Fatal(err)
	}

	second := open(t, path)
	g := counterGraph(t, second)
	snap, err := g.GetState(ctx, cfg)
	if err != nil || snap.Values.N != 4 || len(snap.Interrupts) != 1 {
		t.Fatalf("state after reopen: %+v, %v", snap, err)
	}
	res, err = g.Invoke(ctx, cfg, graph.Resume("yes"))
	if err != nil || !res.Done() || res.State.Ans != "yes" || len(res.State.Log) != 4 {
		t.Fatalf("resume after reopen: %+v, %v", res, err)
	}
	hist, err := g.History(ctx, cfg, graph.ListOptions{})
	if err != nil || len(hist) < 6 {
		t.Fatalf("history after reopen: %d checkpoints, %v", len(hist), err)
	}
}

// Two savers on one file (two processes, say) still move a thread's head by
// compare-and-set: the second Put on the same head loses.
func TestTwoOpenersShareTheHead(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	path := filepath.Join(t.TempDir(), "weft.db")
	a, b := open(t, path), open(t, path)
	cp := graph.Checkpoint{ID: "0190a000-0000-7000-8000-000000000001", ThreadID: "th", Source: graph.SourceInput}
	if err := a.Put(ctx, graph.PutRequest{Checkpoint: cp}); err != nil {
		t.Fatal(err)
	}
	cp2 := cp
	cp2.ID = "0190a000-0000-7000-8000-000000000002"
	if err := b.Put(ctx, graph.PutRequest{Checkpoint: cp2}); !errors.Is(err, graph.ErrConflict) {
		t.Fatalf("second opener's put on a stale head: %v, want ErrConflict", err)
	}
	tup, err := b.GetTuple(ctx, "th", "", "")
	if err != nil || tup.Checkpoint.ID != cp.ID {
		t.Fatalf("head seen by the second opener = %+v, %v", tup, err)
	}
}

func TestOpenNeedsAPath(t *testing.T) {
	t.Parallel()
	if _, err := sqlite.Open(context.Background(), ""); err == nil {
		t.Fatal("Open with no path succeeded")
	}
}
