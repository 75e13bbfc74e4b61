package graph_test

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"sync"
	"sync/atomic"
	"testing"

	"weft/internal/checkpoint"
	"weft/internal/graph"
)

// dState is a linear graph's state: a log every node appends its name to, and a value every
// node rewrites.
type dState struct {
	Log  []string `weft:"append"`
	Last string
}

// recorder wraps a checkpointer and records the steps of the checkpoints put, how many Puts
// were in flight at once at most, and fails the Put of one step when asked.
type recorder struct {
	graph.Checkpointer
	mu       sync.Mutex
	steps    []int
	inFlight atomic.Int32
	maxPar   atomic.Int32
	gate     chan struct{} // when set, each Put waits for a receive
	failStep int           // a Put of this step fails (0: none)
}

var errSaveFailed = errors.New("disk full")

func (c *recorder) Put(ctx context.Context, req graph.PutRequest) error {
	n := c.inFlight.Add(1)
	defer c.inFlight.Add(-1)
	for {
		m := c.maxPar.Load()
		if n <= m || c.maxPar.CompareAndSwap(m, n) {
			break
		}
	}
	if c.gate != nil {
		<-c.gate
	}
	if c.failStep != 0 && req.Checkpoint.Step == c.failStep {
		return errSaveFailed
	}
	if err := c.Checkpointer.Put(ctx, req); err != nil {
		return err
	}
	c.mu.Lock()
	c.steps = append(c.steps, req.Checkpoint.Step)
	c.mu.Unlock()
	return nil
}

func (c *recorder) saved() []int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return slices.Clone(c.steps)
}

// linear builds n nodes in a row; each appends its name and sets Last. observe, when set,
// runs inside each node.
func linear(t *testing.T, cp graph.Checkpointer, n int, observe func(name string) error, opts ...graph.CompileOption) *graph.Graph[dState] {
	t.Helper()
	b := graph.New[dState]()
	prev := graph.START
	for i := 1; i <= n; i++ {
		name := fmt.Sprint("n", i)
		b.AddNode(name, func(_ context.Context, s dState) (graph.Command, error) {
			if observe != nil {
				if err := observe(name); err != nil {
					return graph.Command{}, err
				}
			}
			return graph.Update(graph.Set("Log", name), graph.Set("Last", name)), nil
		})
		b.AddEdge(prev, name)
		prev = name
	}
	b.AddEdge(prev, graph.END)
	g, err := b.Compile(append([]graph.CompileOption{graph.WithCheckpointer(cp)}, opts...)...)
	if err != nil {
		t.Fatal(err)
	}
	return g
}

func names(n int) []string {
	out := make([]string, n)
	for i := range out {
		out[i] = fmt.Sprint("n", i+1)
	}
	return out
}

// headState reads the thread's saved head.
func headState(t *testing.T, g *graph.Graph[dState], thread string) (dState, int) {
	t.Helper()
	snap, err := g.GetState(context.Background(), graph.Config{ThreadID: thread})
	if err != nil {
		t.Fatal(err)
	}
	return snap.Values, snap.Checkpoint.Step
}

// TestDurabilityExitSavesOnceAtTheEnd: a run under exit saves one checkpoint, at its end,
// holding every change (the append channel's items joined), and the thread goes on from it.
func TestDurabilityExitSavesOnceAtTheEnd(t *testing.T) {
	ctx := context.Background()
	rec := &recorder{Checkpointer: checkpoint.NewMemory()}
	g := linear(t, rec, 5, nil, graph.WithDurability(graph.DurabilityExit))
	res, err := g.Invoke(ctx, graph.Config{ThreadID: "t"}, graph.Update(graph.Set("Log", "in")))
	if err != nil {
		t.Fatal(err)
	}
	if got := rec.saved(); !slices.Equal(got, []int{5}) {
		t.Fatalf("saved steps %v, want [5] only", got)
	}
	want := append([]string{"in"}, names(5)...)
	st, step := headState(t, g, "t")
	if !slices.Equal(st.Log, want) || st.Last != "n5" || step != 5 || res.CheckpointID == "" {
		t.Fatalf("saved head: %+v at step %d, want log %v", st, step, want)
	}
	// A second run appends to the saved chain (a delta on the flushed version).
	if _, err := g.Invoke(ctx, graph.Config{ThreadID: "t"}, graph.Update(graph.Set("Log", "again"))); err != nil {
		t.Fatal(err)
	}
	st, _ = headState(t, g, "t")
	want = append(append(want, "again"), names(5)...)
	if !slices.Equal(st.Log, want) {
		t.Fatalf("after a second run: %v, want %v", st.Log, want)
	}
	if got := rec.saved(); !slices.Equal(got, []int{5, 11}) {
		t.Fatalf("saved steps %v, want [5 11]", got)
	}
}

// TestDurabilityExitSavesAtInterruptAndError: exit saves at a pause and at a failure, and
// the thread resumes from there without applying a step twice.
func TestDurabilityExitSavesAtInterruptAndError(t *testing.T) {
	ctx := context.Background()
	rec := &recorder{Checkpointer: checkpoint.NewMemory()}
	fail := true
	g := linear(t, rec, 6, func(name string) error {
		if name == "n5" && fail {
			return graph.Permanent(errors.New("n5 broke"))
		}
		return nil
	}, graph.WithDurability(graph.DurabilityExit), graph.WithInterruptBefore("n3"))
	res, err := g.Invoke(ctx, graph.Config{ThreadID: "t"}, graph.Update(graph.Set("Last", "")))
	if err != nil || len(res.Interrupts) != 1 {
		t.Fatalf("want a pause before n3: %v %+v", err, res)
	}
	if got := rec.saved(); !slices.Equal(got, []int{2}) {
		t.Fatalf("saved steps %v at the pause, want [2]", got)
	}
	if _, err := g.Invoke(ctx, graph.Config{ThreadID: "t"}, graph.Command{}); err == nil {
		t.Fatal("n5 should fail")
	}
	// The claim (3, always saved), and the state after n4 (at the error).
	st, step := headState(t, g, "t")
	if !slices.Equal(st.Log, names(4)) || step != 4 {
		t.Fatalf("after the failure the head is %+v at step %d, want n1..n4", st, step)
	}
	fail = false
	if _, err := g.Invoke(ctx, graph.Config{ThreadID: "t"}, graph.Command{}); err != nil {
		t.Fatal(err)
	}
	st, _ = headState(t, g, "t")
	if !slices.Equal(st.Log, names(6)) {
		t.Fatalf("final log %v, want each node once: %v", st.Log, names(6))
	}
}

// TestDurabilityAsyncOverlapsOneSave: under async the next step runs while the previous
// checkpoint is saved, never more than one save is in flight, they land in order, and the
// run returns only once its last one is saved.
func TestDurabilityAsyncOverlapsOneSave(t *testing.T) {
	ctx := context.Background()
	rec := &recorder{Checkpointer: checkpoint.NewMemory(), gate: make(chan struct{})}
	overlapped := 0
	last := make(chan struct{})
	// Node n<i> (step i) finds checkpoint i-1 not saved yet, and lets its save go on: under
	// sync this would never return (the save waits for the node, the node for the save).
	g := linear(t, rec, 6, func(name string) error {
		var i int
		fmt.Sscanf(name, "n%d", &i)
		if !slices.Contains(rec.saved(), i-1) {
			overlapped++
		}
		rec.gate <- struct{}{}
		if i == 6 {
			close(last)
		}
		return nil
	}, graph.WithDurability(graph.DurabilityAsync))
	done := make(chan error, 1)
	go func() {
		_, err := g.Invoke(ctx, graph.Config{ThreadID: "t"}, graph.Update(graph.Set("Last", "")))
		done <- err
	}()
	<-last
	rec.gate <- struct{}{} // the last step's save
	if err := <-done; err != nil {
		t.Fatal(err)
	}
	if got := rec.saved(); !slices.Equal(got, []int{0, 1, 2, 3, 4, 5, 6}) {
		t.Fatalf("saved steps %v, want 0..6 in order", got)
	}
	if m := rec.maxPar.Load(); m != 1 {
		t.Fatalf("%d saves in flight at once, want 1", m)
	}
	if overlapped != 6 {
		t.Fatalf("%d of 6 nodes ran while the previous checkpoint was saved", overlapped)
	}
	if st, step := headState(t, g, "t"); !slices.Equal(st.Log, names(6)) || step != 6 {
		t.Fatalf("head %+v at %d", st, step)
	}
}

// TestDurabilityAsyncSaveFailure: a failed save fails the run at the next step boundary;
// the thread's head stays the last saved checkpoint, and a continue from it applies each
// step once.
func TestDurabilityAsyncSaveFailure(t *testing.T) {
	ctx := context.Background()
	rec := &recorder{Checkpointer: checkpoint.NewMemory(), failStep: 3}
	var ran []string
	g := linear(t, rec, 6, func(name string) error { ran = append(ran, name); return nil },
		graph.WithDurability(graph.DurabilityAsync))
	_, err := g.Invoke(ctx, graph.Config{ThreadID: "t"}, graph.Update(graph.Set("Last", "")))
	if !errors.Is(err, errSaveFailed) {
		t.Fatalf("run error %v, want the save's", err)
	}
	if len(ran) > 4 {
		t.Fatalf("nodes %v ran: the failure of step 3's save must stop the run at step 4's end at the latest", ran)
	}
	st, step := headState(t, g, "t")
	if !slices.Equal(st.Log, names(2)) || step != 2 {
		t.Fatalf("head %+v at %d, want the last saved (n1, n2 at 2)", st, step)
	}
	rec.failStep = 0
	if _, err := g.Invoke(ctx, graph.Config{ThreadID: "t"}, graph.Command{}); err != nil {
		t.Fatal(err)
	}
	if st, _ := headState(t, g, "t"); !slices.Equal(st.Log, names(6)) {
		t.Fatalf("final log %v, want each node once", st.Log)
	}
}

// TestDurabilityPerRun: Config.Durability overrides the graph's, and an unknown mode is
// refused before anything runs.
func TestDurabilityPerRun(t *testing.T) {
	ctx := context.Background()
	rec := &recorder{Checkpointer: checkpoint.NewMemory()}
	g := linear(t, rec, 3, nil)
	if _, err := g.Invoke(ctx, graph.Config{ThreadID: "a"}, graph.Update(graph.Set("Last", ""))); err != nil {
		t.Fatal(err)
	}
	if got := rec.saved(); !slices.Equal(got, []int{0, 1, 2, 3}) {
		t.Fatalf("sync (the default) saved %v", got)
	}
	rec.steps = nil
	if _, err := g.Invoke(ctx, graph.Config{ThreadID: "b", Durability: graph.DurabilityExit}, graph.Update(graph.Set("Last", ""))); err != nil {
		t.Fatal(err)
	}
	if got := rec.saved(); !slices.Equal(got, []int{3}) {
		t.Fatalf("exit for one run saved %v", got)
	}
	_, err := g.Invoke(ctx, graph.Config{ThreadID: "c", Durability: "eventually"}, graph.Update(graph.Set("Last", "")))
	if !errors.Is(err, graph.ErrDurability) {
		t.Fatalf("unknown mode: %v", err)
	}
	if _, err := g.GetState(ctx, graph.Config{ThreadID: "c"}); !errors.Is(err, graph.ErrNotFound) {
		t.Fatalf("thread c exists after a refused run: %v", err)
	}
}

// TestDurabilityReachesSubgraphs: a subgraph's run takes its parent run's mode: under exit
// its namespace gets one checkpoint, at the subgraph's end.
func TestDurabilityReachesSubgraphs(t *testing.T) {
	ctx := context.Background()
	rec := &recorder{Checkpointer: checkpoint.NewMemory()}
	child := linear(t, rec, 3, nil)
	b := graph.New[dState]()
	b.AddNode("sub", graph.Subgraph(child))
	b.AddEdge(graph.START, "sub")
	b.AddEdge("sub", graph.END)
	g, err := b.Compile(graph.WithCheckpointer(rec))
	if err != nil {
		t.Fatal(err)
	}
	res, err := g.Invoke(ctx, graph.Config{ThreadID: "t", Durability: graph.DurabilityExit}, graph.Update(graph.Set("Last", "")))
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(res.State.Log, names(3)) {
		t.Fatalf("log %v", res.State.Log)
	}
	// The child's one checkpoint (its step 3) and the parent's (its step 1).
	if got := rec.saved(); !slices.Equal(got, []int{3, 1}) {
		t.Fatalf("saved steps %v, want the child's end and the parent's end only", got)
	}
}
