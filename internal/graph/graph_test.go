package graph_test

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"sort"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"weft/internal/checkpoint"
	"weft/internal/graph"
)

// fakeClock advances only when something sleeps on it.
type fakeClock struct {
	mu     sync.Mutex
	now    time.Time
	sleeps []time.Duration
}

func newFakeClock() *fakeClock { return &fakeClock{now: time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)} }

func (c *fakeClock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.now
}

func (c *fakeClock) Sleep(ctx context.Context, d time.Duration) error {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.sleeps = append(c.sleeps, d)
	c.now = c.now.Add(d)
	return ctx.Err()
}

func (c *fakeClock) Advance(d time.Duration) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.now = c.now.Add(d)
}

type counter struct {
	mu sync.Mutex
	n  map[string]int
}

func (c *counter) hit(name string) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.n == nil {
		c.n = map[string]int{}
	}
	c.n[name]++
}

func (c *counter) get(name string) int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.n[name]
}

type State struct {
	Value int               `json:"value"`
	Items []string          `json:"items" weft:"append"`
	Tags  map[string]string `json:"tags" weft:"merge"`
	Note  string            `json:"note"`
	Topic string            `json:"topic"`
}

func compileOK[S any](t *testing.T, b *graph.Builder[S], opts ...graph.CompileOption) *graph.Graph[S] {
	t.Helper()
	g, err := b.Compile(opts...)
	if err != nil {
		t.Fatalf("compile: %v", err)
	}
	return g
}

func appendNode(name string, calls *counter) graph.NodeFunc[State] {
	return func(_ context.Context, s State) (graph.Command, error) {
		if calls != nil {
			calls.hit(name)
		}
		return graph.Update(graph.Set("items", name)), nil
	}
}

func TestLinearGraph(t *testing.T) {
	t.Parallel()
	b := graph.New[State]()
	b.AddNode("a", func(_ context.Context, s State) (graph.Command, error) {
		return graph.Update(graph.Set("value", s.Value+1), graph.Set("items", "a")), nil
	})
	b.AddNode("b", func(_ context.Context, s State) (graph.Command, error) {
		return graph.Update(graph.Set("value", s.Value*10), graph.Set("items", "b")), nil
	})
	b.AddEdge(graph.START, "a").AddEdge("a", "b").AddEdge("b", graph.END)
	g := compileOK(t, b)
	res, err := g.Invoke(context.Background(), graph.Config{}, graph.Update(graph.Set("value", 1)))
	if err != nil {
		t.Fatal(err)
	}
	if res.State.Value != 20 || !slices.Equal(res.State.Items, []string{"a", "b"}) || !res.Done() {
		t.Fatalf("result = %+v, want value 20 after a then b", res)
	}
}

func TestConditionalLoopEnds(t *testing.T) {
	t.Parallel()
	b := graph.New[State]()
	b.AddNode("inc", func(_ context.Context, s State) (graph.Command, error) {
		return graph.Update(graph.Set("value", s.Value+1)), nil
	})
	b.AddEdge(graph.START, "inc")
	b.AddConditionalEdges("inc", graph.Pick(func(s State) string {
		if s.Value < 5 {
			return "loop"
		}
		return "stop"
	}), map[string]string{"loop": "inc", "stop": graph.END})
	g := compileOK(t, b, graph.WithCheckpointer(checkpoint.NewMemory()))
	res, err := g.Invoke(context.Background(), graph.Config{ThreadID: "loop"}, graph.Update(graph.Set("value", 0)))
	if err != nil {
		t.Fatal(err)
	}
	if res.State.Value != 5 || !res.Done() {
		t.Fatalf("loop ended at %d (done=%v), want 5", res.State.Value, res.Done())
	}
	hist, _ := g.History(context.Background(), graph.Config{ThreadID: "loop"}, graph.ListOptions{})
	if len(hist) != 6 { // input + 5 steps
		t.Fatalf("%d checkpoints, want one per step plus the input (6)", len(hist))
	}
}

func TestDiamondFanOutAndJoin(t *testing.T) {
	t.Parallel()
	// a fans out to b and c; b takes an extra step (b -> b2). d joins b2 and c.
	var calls counter
	b := graph.New[State]()
	for _, n := range []string{"a", "b", "b2", "c", "d"} {
		b.AddNode(n, appendNode(n, &calls))
	}
	b.AddEdge(graph.START, "a").AddEdge("a", "b").AddEdge("a", "c").AddEdge("b", "b2")
	b.AddJoin([]string{"b2", "c"}, "d")
	b.AddEdge("d", graph.END)
	g := compileOK(t, b, graph.WithCheckpointer(checkpoint.NewMemory()))
	res, err := g.Invoke(context.Background(), graph.Config{ThreadID: "diamond"}, graph.Command{})
	if err != nil {
		t.Fatal(err)
	}
	// Step 2 runs b and c in parallel; writes apply in task order (by node name).
	want := []string{"a", "b", "c", "b2", "d"}
	if !slices.Equal(res.State.Items, want) {
		t.Fatalf("items = %v, want %v", res.State.Items, want)
	}
	if calls.get("d") != 1 {
		t.Fatalf("d ran %d times, want once after both branches", calls.get("d"))
	}

	// Plain edges into one node from the same step trigger it once.
	var calls2 counter
	b2 := graph.New[State]()
	for _, n := range []string{"a", "b", "c", "d"} {
		b2.AddNode(n, appendNode(n, &calls2))
	}
	b2.AddEdge(graph.START, "a").AddEdge("a", "b").AddEdge("a", "c").AddEdge("b", "d").AddEdge("c", "d").AddEdge("d", graph.END)
	res, err = compileOK(t, b2).Invoke(context.Background(), graph.Config{}, graph.Command{})
	if err != nil {
		t.Fatal(err)
	}
	if calls2.get("d") != 1 || !slices.Equal(res.State.Items, []string{"a", "b", "c", "d"}) {
		t.Fatalf("diamond: d ran %d times, items %v", calls2.get("d"), res.State.Items)
	}
}

func TestSendMapReduce(t *testing.T) {
	t.Parallel()
	b := graph.New[State]()
	b.AddNode("subjects", func(context.Context, State) (graph.Command, error) {
		return graph.Update(graph.Set("note", "lions,tigers,bears")), nil
	})
	b.AddNode("joke", func(_ context.Context, s State) (graph.Command, error) {
		return graph.Update(graph.Set("items", "joke about "+s.Topic)), nil
	})
	b.AddNode("best", func(_ context.Context, s State) (graph.Command, error) {
		return graph.Update(graph.Set("value", len(s.Items))), nil
	})
	b.AddEdge(graph.START, "subjects")
	b.AddConditionalEdges("subjects", func(_ context.Context, s State) (graph.Route, error) {
		var sends []graph.Send
		for _, sub := range strings.Split(s.Note, ",") {
			sends = append(sends, graph.Send{Node: "joke", Arg: State{Topic: sub}})
		}
		return graph.Fanout(sends...), nil
	}, map[string]string{"joke": "joke"})
	b.AddEdge("joke", "best").AddEdge("best", graph.END)
	for _, cp := range []graph.Checkpointer{nil, checkpoint.NewMemory()} {
		opts := []graph.CompileOption{}
		if cp != nil {
			opts = append(opts, graph.WithCheckpointer(cp))
		}
		res, err := compileOK(t, b, opts...).Invoke(context.Background(), graph.Config{ThreadID: "jokes"}, graph.Command{})
		if err != nil {
			t.Fatal(err)
		}
		want := []string{"joke about lions", "joke about tigers", "joke about bears"}
		if !slices.Equal(res.State.Items, want) || res.State.Value != 3 {
			t.Fatalf("checkpointer %T: items %v value %d, want %v (Send order) and 3", cp, res.State.Items, res.State.Value, want)
		}
	}
}

func TestInvalidConcurrentUpdate(t *testing.T) {
	t.Parallel()
	b := graph.New[State]()
	b.AddNode("a", func(context.Context, State) (graph.Command, error) { return graph.Command{}, nil })
	b.AddNode("b", func(context.Context, State) (graph.Command, error) { return graph.Update(graph.Set("value", 1)), nil })
	b.AddNode("c", func(context.Context, State) (graph.Command, error) { return graph.Update(graph.Set("value", 2)), nil })
	b.AddEdge(graph.START, "a").AddEdge("a", "b").AddEdge("a", "c").AddEdge("b", graph.END).AddEdge("c", graph.END)
	_, err := compileOK(t, b).Invoke(context.Background(), graph.Config{}, graph.Command{})
	var iu *graph.InvalidUpdateError
	if !errors.As(err, &iu) || iu.Channel != "value" {
		t.Fatalf("err = %v, want an InvalidUpdateError on channel value", err)
	}
	// An append channel takes both.
	b2 := graph.New[State]()
	b2.AddNode("a", func(context.Context, State) (graph.Command, error) { return graph.Command{}, nil })
	b2.AddNode("b", appendNode("b", nil))
	b2.AddNode("c", appendNode("c", nil))
	b2.AddEdge(graph.START, "a").AddEdge("a", "b").AddEdge("a", "c").AddEdge("b", graph.END).AddEdge("c", graph.END)
	res, err := compileOK(t, b2).Invoke(context.Background(), graph.Config{}, graph.Command{})
	if err != nil || len(res.State.Items) != 2 {
		t.Fatalf("append channel: %v %v", res.State.Items, err)
	}
}

// Port of LangGraph's test_pending_writes_resume: one of two parallel nodes
// fails; the other's writes are kept, and resuming re-runs only the failed one.
func TestPendingWritesResume(t *testing.T) {
	t.Parallel()
	type S struct {
		Value int `json:"value" weft:"custom"`
	}
	var oneCalls, twoCalls atomic.Int32
	var twoFixed atomic.Bool
	b := graph.New[S]()
	b.Reducer("value", graph.ReducerFunc(func(a, b int) int { return a + b }))
	b.AddNode("one", func(context.Context, S) (graph.Command, error) {
		oneCalls.Add(1)
		return graph.Update(graph.Set("value", 2)), nil
	})
	b.AddNode("two", func(context.Context, S) (graph.Command, error) {
		twoCalls.Add(1)
		if !twoFixed.Load() {
			return graph.Command{}, errors.New("connection reset")
		}
		return graph.Update(graph.Set("value", 3)), nil
	}, graph.WithRetry[S](graph.RetryPolicy{MaxAttempts: 2, InitialInterval: time.Nanosecond}))
	b.AddEdge(graph.START, "one").AddEdge(graph.START, "two").AddEdge("one", graph.END).AddEdge("two", graph.END)
	saver := checkpoint.NewMemory()
	g := compileOK(t, b, graph.WithCheckpointer(saver), graph.WithClock(newFakeClock()))
	ctx := context.Background()
	cfg := graph.Config{ThreadID: "pending"}

	_, err := g.Invoke(ctx, cfg, graph.Update(graph.Set("value", 1)))
	var ne *graph.NodeError
	if !errors.As(err, &ne) || ne.Node != "two" || ne.Attempt != 2 {
		t.Fatalf("err = %v, want two's NodeError after 2 attempts", err)
	}
	if oneCalls.Load() != 1 || twoCalls.Load() != 2 {
		t.Fatalf("calls one=%d two=%d, want 1 and 2", oneCalls.Load(), twoCalls.Load())
	}
	snap, err := g.GetState(ctx, cfg)
	if err != nil {
		t.Fatal(err)
	}
	if snap.Values.Value != 1 || !slices.Equal(snap.Next, []string{"one", "two"}) {
		t.Fatalf("state after failure = %+v next %v", snap.Values, snap.Next)
	}
	var oneDone bool
	var twoErr string
	for _, ts := range snap.Tasks {
		if ts.Node == "one" {
			oneDone = ts.Done
		}
		if ts.Node == "two" {
			twoErr = ts.Error
		}
	}
	if !oneDone || !strings.Contains(twoErr, "connection reset") {
		t.Fatalf("tasks = %+v: want one done (pending write) and two's error", snap.Tasks)
	}

	// Resuming while two still fails: one does not run again.
	if _, err := g.Invoke(ctx, cfg, graph.Command{}); err == nil {
		t.Fatal("second run succeeded while two still fails")
	}
	if oneCalls.Load() != 1 || twoCalls.Load() != 4 {
		t.Fatalf("after retry: calls one=%d two=%d, want 1 and 4", oneCalls.Load(), twoCalls.Load())
	}
	twoFixed.Store(true)
	res, err := g.Invoke(ctx, cfg, graph.Command{})
	if err != nil {
		t.Fatal(err)
	}
	if res.State.Value != 6 || oneCalls.Load() != 1 {
		t.Fatalf("final value %d (one ran %d times), want 1+2+3=6 with one run once", res.State.Value, oneCalls.Load())
	}
}

type review struct {
	Decision string `json:"decision"`
}

func TestInterruptResumeOneValue(t *testing.T) {
	t.Parallel()
	var calls counter
	b := graph.New[State]()
	b.AddNode("draft", appendNode("draft", &calls))
	b.AddNode("approve", func(ctx context.Context, s State) (graph.Command, error) {
		calls.hit("approve")
		r, err := graph.Interrupt[review](ctx, map[string]any{"question": "approve?", "items": s.Items})
		if err != nil {
			return graph.Command{}, err
		}
		return graph.Update(graph.Set("note", r.Decision)), nil
	})
	b.AddEdge(graph.START, "draft").AddEdge("draft", "approve").AddEdge("approve", graph.END)
	g := compileOK(t, b, graph.WithCheckpointer(checkpoint.NewMemory()))
	ctx := context.Background()
	cfg := graph.Config{ThreadID: "hitl"}
	res, err := g.Invoke(ctx, cfg, graph.Command{})
	if err != nil {
		t.Fatal(err)
	}
	if len(res.Interrupts) != 1 || res.Interrupts[0].Node != "approve" || !strings.Contains(string(res.Interrupts[0].Value), "approve?") {
		t.Fatalf("interrupts = %+v", res.Interrupts)
	}
	snap, _ := g.GetState(ctx, cfg)
	if len(snap.Interrupts) != 1 || snap.Interrupts[0].ID != res.Interrupts[0].ID || !slices.Equal(snap.Next, []string{"approve"}) {
		t.Fatalf("GetState while paused = next %v interrupts %+v", snap.Next, snap.Interrupts)
	}
	res, err = g.Invoke(ctx, cfg, graph.Resume(review{Decision: "yes"}))
	if err != nil {
		t.Fatal(err)
	}
	if res.State.Note != "yes" || !res.Done() {
		t.Fatalf("after resume: %+v", res)
	}
	if calls.get("draft") != 1 || calls.get("approve") != 2 {
		t.Fatalf("draft ran %d, approve %d; want 1 and 2 (the interrupted node re-runs from its start)", calls.get("draft"), calls.get("approve"))
	}
	if _, err := g.Invoke(ctx, cfg, graph.Resume("again")); !errors.Is(err, graph.ErrNothingToResume) {
		t.Fatalf("resume of a finished thread: %v, want ErrNothingToResume", err)
	}
}

func TestTwoInterruptsInOneNode(t *testing.T) {
	t.Parallel()
	var runs atomic.Int32
	b := graph.New[State]()
	b.AddNode("ask", func(ctx context.Context, s State) (graph.Command, error) {
		runs.Add(1)
		name, err := graph.Interrupt[string](ctx, "name?")
		if err != nil {
			return graph.Command{}, err
		}
		age, err := graph.Interrupt[int](ctx, "age?")
		if err != nil {
			return graph.Command{}, err
		}
		return graph.Update(graph.Set("note", fmt.Sprintf("%s/%d", name, age))), nil
	})
	b.AddEdge(graph.START, "ask").AddEdge("ask", graph.END)
	g := compileOK(t, b, graph.WithCheckpointer(checkpoint.NewMemory()))
	ctx := context.Background()
	cfg := graph.Config{ThreadID: "two"}
	res, _ := g.Invoke(ctx, cfg, graph.Command{})
	if len(res.Interrupts) != 1 || string(res.Interrupts[0].Value) != `"name?"` {
		t.Fatalf("first pause: %+v", res.Interrupts)
	}
	first := res.Interrupts[0].ID
	res, err := g.Invoke(ctx, cfg, graph.Resume("ada"))
	if err != nil {
		t.Fatal(err)
	}
	if len(res.Interrupts) != 1 || string(res.Interrupts[0].Value) != `"age?"` || res.Interrupts[0].ID == first {
		t.Fatalf("second pause: %+v", res.Interrupts)
	}
	res, err = g.Invoke(ctx, cfg, graph.Resume(36))
	if err != nil {
		t.Fatal(err)
	}
	if res.State.Note != "ada/36" || runs.Load() != 3 {
		t.Fatalf("note %q after %d runs, want ada/36 after 3", res.State.Note, runs.Load())
	}
}

func TestParallelInterruptsResumeMap(t *testing.T) {
	t.Parallel()
	b := graph.New[State]()
	ask := func(q string) graph.NodeFunc[State] {
		return func(ctx context.Context, s State) (graph.Command, error) {
			a, err := graph.Interrupt[string](ctx, q)
			if err != nil {
				return graph.Command{}, err
			}
			return graph.Update(graph.Set("items", q+"="+a)), nil
		}
	}
	b.AddNode("x", ask("x")).AddNode("y", ask("y"))
	b.AddEdge(graph.START, "x").AddEdge(graph.START, "y").AddEdge("x", graph.END).AddEdge("y", graph.END)
	g := compileOK(t, b, graph.WithCheckpointer(checkpoint.NewMemory()))
	ctx := context.Background()
	cfg := graph.Config{ThreadID: "map"}
	res, _ := g.Invoke(ctx, cfg, graph.Command{})
	if len(res.Interrupts) != 2 {
		t.Fatalf("interrupts = %+v, want 2", res.Interrupts)
	}
	if _, err := g.Invoke(ctx, cfg, graph.Resume("one value")); !errors.Is(err, graph.ErrResumeInvalid) {
		t.Fatalf("single value for two interrupts: %v, want ErrResumeInvalid", err)
	}
	if _, err := g.Invoke(ctx, cfg, graph.Resume(graph.ResumeMap{"not-an-id": 1})); !errors.Is(err, graph.ErrResumeInvalid) {
		t.Fatalf("unknown id: %v, want ErrResumeInvalid", err)
	}
	m := graph.ResumeMap{}
	for _, it := range res.Interrupts {
		m[it.ID] = strings.ToUpper(string(it.Value[1:2]))
	}
	res, err := g.Invoke(ctx, cfg, graph.Resume(m))
	if err != nil {
		t.Fatal(err)
	}
	sort.Strings(res.State.Items)
	if !slices.Equal(res.State.Items, []string{"x=X", "y=Y"}) {
		t.Fatalf("items = %v", res.State.Items)
	}
}

func TestInterruptBeforeAndAfter(t *testing.T) {
	t.Parallel()
	build := func(opt graph.CompileOption) (*graph.Graph[State], *counter) {
		var calls counter
		b := graph.New[State]()
		for _, n := range []string{"a", "b", "c"} {
			b.AddNode(n, appendNode(n, &calls))
		}
		b.AddEdge(graph.START, "a").AddEdge("a", "b").AddEdge("b", "c").AddEdge("c", graph.END)
		return compileOK(t, b, graph.WithCheckpointer(checkpoint.NewMemory()), opt), &calls
	}
	ctx := context.Background()
	cfg := graph.Config{ThreadID: "t"}

	g, calls := build(graph.WithInterruptBefore("b"))
	res, err := g.Invoke(ctx, cfg, graph.Command{})
	if err != nil {
		t.Fatal(err)
	}
	if calls.get("b") != 0 || len(res.Interrupts) != 1 || res.Interrupts[0].When != graph.InterruptBefore || !slices.Equal(res.Next, []string{"b"}) {
		t.Fatalf("before: b ran %d times, result %+v", calls.get("b"), res)
	}
	res, err = g.Invoke(ctx, cfg, graph.Command{})
	if err != nil || !res.Done() || !slices.Equal(res.State.Items, []string{"a", "b", "c"}) {
		t.Fatalf("continue after before-pause: %+v %v", res, err)
	}
	// A fork from the checkpoint that paused before b runs b without pausing again, as
	// LangGraph's replay does (a replay is a continue of that checkpoint).
	hist, _ := g.History(ctx, cfg, graph.ListOptions{})
	var paused graph.Checkpoint
	for _, cp := range hist {
		if len(cp.Next) == 1 && cp.Next[0].Node == "b" && cp.Source == graph.SourceLoop {
			paused = cp
		}
	}
	res, err = g.Invoke(ctx, graph.Config{ThreadID: "t", CheckpointID: paused.ID}, graph.Command{})
	if err != nil || !res.Done() || calls.get("b") != 2 {
		t.Fatalf("fork from the before-pause: %+v %v, b ran %d times", res, err, calls.get("b"))
	}

	g, calls = build(graph.WithInterruptAfter("b"))
	res, err = g.Invoke(ctx, cfg, graph.Command{})
	if err != nil {
		t.Fatal(err)
	}
	if calls.get("b") != 1 || calls.get("c") != 0 || len(res.Interrupts) != 1 || res.Interrupts[0].When != graph.InterruptAfter {
		t.Fatalf("after: b ran %d, c ran %d, result %+v", calls.get("b"), calls.get("c"), res)
	}
	res, err = g.Invoke(ctx, cfg, graph.Command{})
	if err != nil || !res.Done() || calls.get("b") != 1 || calls.get("c") != 1 {
		t.Fatalf("continue after after-pause: %+v %v (b %d, c %d)", res, err, calls.get("b"), calls.get("c"))
	}
}

func TestUpdateStateAsNodeThenContinue(t *testing.T) {
	t.Parallel()
	b := graph.New[State]()
	b.AddNode("agent", func(_ context.Context, s State) (graph.Command, error) {
		return graph.Update(graph.Set("items", "agent")), nil
	})
	b.AddNode("tools", appendNode("tools", nil))
	b.AddNode("final", appendNode("final", nil))
	b.AddEdge(graph.START, "agent")
	b.AddConditionalEdges("agent", graph.Pick(func(s State) string {
		if s.Note == "use tools" {
			return "tools"
		}
		return "final"
	}), map[string]string{"tools": "tools", "final": "final"})
	b.AddEdge("tools", "final").AddEdge("final", graph.END)
	g := compileOK(t, b, graph.WithCheckpointer(checkpoint.NewMemory()), graph.WithInterruptBefore("final", "tools"))
	ctx := context.Background()
	cfg := graph.Config{ThreadID: "upd"}
	res, _ := g.Invoke(ctx, cfg, graph.Command{})
	if !slices.Equal(res.Next, []string{"final"}) {
		t.Fatalf("paused before %v, want final", res.Next)
	}
	// As agent (the head's writer, chosen when asNode is ""): its router now
	// sees the note and routes to tools; the earlier plan (final) is replaced.
	cp, err := g.UpdateState(ctx, cfg, []graph.Write{graph.Set("note", "use tools")}, "")
	if err != nil {
		t.Fatal(err)
	}
	if cp.Source != graph.SourceUpdate || len(cp.Next) != 1 || cp.Next[0].Node != "tools" {
		t.Fatalf("update checkpoint = %+v", cp)
	}
	res, err = g.Invoke(ctx, cfg, graph.Command{})
	if err != nil {
		t.Fatal(err)
	}
	// Continuing runs tools (no second pause on the first step), then pauses before final.
	if !slices.Equal(res.Next, []string{"final"}) || !slices.Equal(res.State.Items, []string{"agent", "tools"}) {
		t.Fatalf("after update+continue: %+v", res)
	}
	if _, err := g.UpdateState(ctx, cfg, []graph.Write{graph.Set("note", "x")}, "nope"); err == nil {
		t.Fatal("update as an unknown node succeeded")
	}
	if _, err := g.UpdateState(ctx, cfg, []graph.Write{graph.Set("nope", 1)}, "agent"); err == nil {
		t.Fatal("update of an unknown channel succeeded")
	}
}

func TestForkFromOldCheckpoint(t *testing.T) {
	t.Parallel()
	b := graph.New[State]()
	b.AddNode("a", appendNode("a", nil)).AddNode("b", func(_ context.Context, s State) (graph.Command, error) {
		return graph.Update(graph.Set("items", "b:"+s.Note)), nil
	})
	b.AddEdge(graph.START, "a").AddEdge("a", "b").AddEdge("b", graph.END)
	g := compileOK(t, b, graph.WithCheckpointer(checkpoint.NewMemory()))
	ctx := context.Background()
	cfg := graph.Config{ThreadID: "fork"}
	if _, err := g.Invoke(ctx, cfg, graph.Update(graph.Set("note", "first"))); err != nil {
		t.Fatal(err)
	}
	hist, _ := g.History(ctx, cfg, graph.ListOptions{})
	var afterA graph.Checkpoint
	for _, cp := range hist {
		if slices.Equal(cp.Nodes, []string{"a"}) {
			afterA = cp
		}
	}
	// Edit the old checkpoint (a fork) and replay from it.
	upd, err := g.UpdateState(ctx, graph.Config{ThreadID: "fork", CheckpointID: afterA.ID}, []graph.Write{graph.Set("note", "second")}, "a")
	if err != nil {
		t.Fatal(err)
	}
	if upd.ForkOf != afterA.ID || upd.ParentID != afterA.ID {
		t.Fatalf("fork checkpoint = %+v, want parent and fork_of %s", upd, afterA.ID)
	}
	res, err := g.Invoke(ctx, cfg, graph.Command{})
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(res.State.Items, []string{"a", "b:second"}) {
		t.Fatalf("forked run items = %v", res.State.Items)
	}
	// Only the checkpoint that branched is marked: the run continuing from it is not
	// another fork (a history would show two).
	all, _ := g.History(ctx, cfg, graph.ListOptions{})
	for _, cp := range all {
		if cp.ForkOf != "" && cp.ID != upd.ID {
			t.Fatalf("checkpoint %s (source %s) says it forked from %s; only %s did", cp.ID, cp.Source, cp.ForkOf, upd.ID)
		}
	}
	// The old branch is intact.
	old, _ := g.GetState(ctx, graph.Config{ThreadID: "fork", CheckpointID: hist[0].ID})
	if !slices.Equal(old.Values.Items, []string{"a", "b:first"}) {
		t.Fatalf("original branch items = %v", old.Values.Items)
	}
	// Replaying from an old checkpoint without edits forks too.
	res, err = g.Invoke(ctx, graph.Config{ThreadID: "fork", CheckpointID: afterA.ID}, graph.Command{})
	if err != nil || !slices.Equal(res.State.Items, []string{"a", "b:first"}) {
		t.Fatalf("replay fork: %v %v", res.State.Items, err)
	}
	hist, _ = g.History(ctx, cfg, graph.ListOptions{Limit: 3})
	if hist[1].ForkOf != afterA.ID || hist[1].Source != graph.SourceFork {
		t.Fatalf("history does not show the replay's fork point: %+v", hist[1])
	}
}

func TestSubgraphInterruptResume(t *testing.T) {
	t.Parallel()
	var childRuns atomic.Int32
	cb := graph.New[State]()
	cb.AddNode("c1", appendNode("c1", nil))
	cb.AddNode("c2", func(ctx context.Context, s State) (graph.Command, error) {
		childRuns.Add(1)
		ok, err := graph.Interrupt[bool](ctx, "child asks")
		if err != nil {
			return graph.Command{}, err
		}
		return graph.Update(graph.Set("items", fmt.Sprintf("c2:%v", ok))), nil
	})
	cb.AddEdge(graph.START, "c1").AddEdge("c1", "c2").AddEdge("c2", graph.END)
	child := compileOK(t, cb)

	saver := checkpoint.NewMemory()
	pb := graph.New[State]()
	pb.AddNode("p1", appendNode("p1", nil))
	pb.AddNode("sub", graph.Subgraph(child))
	pb.AddNode("p2", appendNode("p2", nil))
	pb.AddEdge(graph.START, "p1").AddEdge("p1", "sub").AddEdge("sub", "p2").AddEdge("p2", graph.END)
	g := compileOK(t, pb, graph.WithCheckpointer(saver))
	ctx := context.Background()
	cfg := graph.Config{ThreadID: "nested"}
	var nsSeen []string
	var res graph.Result[State]
	for ev, err := range g.Stream(ctx, cfg, graph.Command{}, graph.ModeUpdates) {
		if err != nil {
			t.Fatal(err)
		}
		if ev.Kind == graph.KindUpdates && ev.NS != "" {
			nsSeen = append(nsSeen, ev.NS)
		}
		if ev.Kind == graph.KindDone {
			res = ev.Data.(graph.Result[State])
		}
	}
	if len(res.Interrupts) != 1 || !strings.HasPrefix(res.Interrupts[0].NS, "sub:") {
		t.Fatalf("parent pause = %+v, want the child's interrupt with its namespace", res.Interrupts)
	}
	if len(nsSeen) == 0 || !strings.HasPrefix(nsSeen[0], "sub:") {
		t.Fatalf("child events carry namespaces %v", nsSeen)
	}
	// The child has its own checkpoints under its namespace.
	childHist, _ := saver.List(ctx, "nested", res.Interrupts[0].NS, graph.ListOptions{})
	if len(childHist) == 0 {
		t.Fatal("the subgraph saved no checkpoints in its namespace")
	}
	res, err := g.Invoke(ctx, cfg, graph.Resume(true))
	if err != nil {
		t.Fatal(err)
	}
	want := []string{"p1", "c1", "c2:true", "p2"}
	if !slices.Equal(res.State.Items, want) || !res.Done() {
		t.Fatalf("items = %v, want %v (the child's appends written back once)", res.State.Items, want)
	}
	if childRuns.Load() != 2 {
		t.Fatalf("c2 ran %d times, want 2", childRuns.Load())
	}
	// A fork from before the subgraph replays it: the child runs from its start in a fresh
	// namespace and its interrupt asks again (it found its finished run and answered at once).
	hist, err := g.History(ctx, cfg, graph.ListOptions{})
	if err != nil {
		t.Fatal(err)
	}
	var beforeSub graph.Checkpoint
	for _, cp := range hist {
		if len(cp.Next) == 1 && cp.Next[0].Node == "sub" && cp.Source == graph.SourceLoop {
			beforeSub = cp
		}
	}
	res, err = g.Invoke(ctx, graph.Config{ThreadID: "nested", CheckpointID: beforeSub.ID}, graph.Command{})
	if err != nil || len(res.Interrupts) != 1 || res.Interrupts[0].NS == "" || childRuns.Load() != 3 {
		t.Fatalf("fork before the subgraph: %+v %v, c2 ran %d times; want a new pause of the child after a third run", res, err, childRuns.Load())
	}
	if res, err = g.Invoke(ctx, cfg, graph.Resume(false)); err != nil || !slices.Equal(res.State.Items, []string{"p1", "c1", "c2:false", "p2"}) {
		t.Fatalf("the fork's answer: %+v %v", res.State, err)
	}
}

func TestRetryBackoffOnFakeClock(t *testing.T) {
	t.Parallel()
	var attempts atomic.Int32
	b := graph.New[State]()
	b.AddNode("flaky", func(context.Context, State) (graph.Command, error) {
		if attempts.Add(1) < 4 {
			return graph.Command{}, errors.New("503 from upstream")
		}
		return graph.Update(graph.Set("note", "ok")), nil
	}, graph.WithRetry[State](graph.RetryPolicy{InitialInterval: time.Second, BackoffFactor: 3, MaxInterval: 5 * time.Second, MaxAttempts: 5, Jitter: true}))
	b.AddEdge(graph.START, "flaky").AddEdge("flaky", graph.END)
	clock := newFakeClock()
	g := compileOK(t, b, graph.WithClock(clock), graph.WithRand(func() float64 { return 0.25 }))
	res, err := g.Invoke(context.Background(), graph.Config{}, graph.Command{})
	if err != nil || res.State.Note != "ok" {
		t.Fatalf("%+v %v", res, err)
	}
	want := []time.Duration{1250 * time.Millisecond, 3250 * time.Millisecond, 5250 * time.Millisecond}
	if !slices.Equal(clock.sleeps, want) {
		t.Fatalf("sleeps = %v, want %v (1s, 3s, capped 5s, each +0.25s jitter)", clock.sleeps, want)
	}

	// Permanent errors are not retried.
	attempts.Store(0)
	b2 := graph.New[State]()
	b2.AddNode("bad", func(context.Context, State) (graph.Command, error) {
		attempts.Add(1)
		return graph.Command{}, graph.Permanent(errors.New("invalid input"))
	}, graph.WithRetry[State](graph.RetryPolicy{MaxAttempts: 5}))
	b2.AddEdge(graph.START, "bad").AddEdge("bad", graph.END)
	_, err = compileOK(t, b2, graph.WithClock(newFakeClock())).Invoke(context.Background(), graph.Config{}, graph.Command{})
	if err == nil || attempts.Load() != 1 {
		t.Fatalf("permanent error: %v after %d attempts, want 1", err, attempts.Load())
	}
}

func TestCacheHitWithinTTLMissAfter(t *testing.T) {
	t.Parallel()
	var calls atomic.Int32
	clock := newFakeClock()
	b := graph.New[State]()
	b.AddNode("expensive", func(_ context.Context, s State) (graph.Command, error) {
		calls.Add(1)
		return graph.Update(graph.Set("value", len(s.Topic)*int(calls.Load()))), nil
	}, graph.WithCache(graph.CachePolicy[State]{Key: func(s State) string { return s.Topic }, TTL: time.Minute}))
	b.AddEdge(graph.START, "expensive").AddEdge("expensive", graph.END)
	g := compileOK(t, b, graph.WithCacheStore(graph.NewMemoryCache(clock)), graph.WithClock(clock))
	run := func(topic string) int {
		res, err := g.Invoke(context.Background(), graph.Config{}, graph.Update(graph.Set("topic", topic)))
		if err != nil {
			t.Fatal(err)
		}
		return res.State.Value
	}
	if v := run("abcd"); v != 4 || calls.Load() != 1 {
		t.Fatalf("first run: value %d calls %d", v, calls.Load())
	}
	clock.Advance(30 * time.Second)
	if v := run("abcd"); v != 4 || calls.Load() != 1 {
		t.Fatalf("within TTL: value %d calls %d, want the cached 4 and no call", v, calls.Load())
	}
	if v := run("xy"); v != 4 || calls.Load() != 2 {
		t.Fatalf("other key: value %d calls %d", v, calls.Load())
	}
	clock.Advance(31 * time.Second)
	if v := run("abcd"); v != 12 || calls.Load() != 3 {
		t.Fatalf("after TTL: value %d calls %d, want a fresh call (12)", v, calls.Load())
	}
	if _, err := b.Compile(); err == nil {
		t.Fatal("cache policy without a cache store compiled")
	}
}

func TestRecursionLimit(t *testing.T) {
	t.Parallel()
	b := graph.New[State]()
	b.AddNode("spin", func(_ context.Context, s State) (graph.Command, error) {
		return graph.Update(graph.Set("value", s.Value+1)), nil
	})
	b.AddEdge(graph.START, "spin")
	b.AddConditionalEdges("spin", graph.Pick(func(State) string { return "again" }), map[string]string{"again": "spin", "never": graph.END})
	_, err := compileOK(t, b, graph.WithRecursionLimit(7)).Invoke(context.Background(), graph.Config{}, graph.Command{})
	var rl *graph.RecursionLimitError
	if !errors.As(err, &rl) || rl.Limit != 7 || !strings.Contains(err.Error(), "7") {
		t.Fatalf("err = %v, want a RecursionLimitError naming 7", err)
	}
	g := compileOK(t, b)
	_, err = g.Invoke(context.Background(), graph.Config{}, graph.Command{})
	if !errors.As(err, &rl) || rl.Limit != graph.DefaultRecursionLimit {
		t.Fatalf("default limit: %v", err)
	}
}

func TestConcurrentResumesOneWins(t *testing.T) {
	t.Parallel()
	var runs atomic.Int32
	entered := make(chan struct{}, 16)
	release := make(chan struct{})
	b := graph.New[State]()
	b.AddNode("gate", func(ctx context.Context, s State) (graph.Command, error) {
		d, err := graph.Interrupt[string](ctx, "decide")
		if err != nil {
			return graph.Command{}, err
		}
		entered <- struct{}{}
		<-release // hold the winner inside the node while the others try
		runs.Add(1)
		return graph.Update(graph.Set("note", d)), nil
	})
	b.AddEdge(graph.START, "gate").AddEdge("gate", graph.END)
	g := compileOK(t, b, graph.WithCheckpointer(checkpoint.NewMemory()))
	ctx := context.Background()
	cfg := graph.Config{ThreadID: "race"}
	if _, err := g.Invoke(ctx, cfg, graph.Command{}); err != nil {
		t.Fatal(err)
	}
	const n = 16
	start := make(chan struct{})
	errs := make(chan error, n)
	for i := 0; i < n; i++ {
		go func() {
			<-start
			_, err := g.Invoke(ctx, cfg, graph.Resume(fmt.Sprint("reviewer-", i)))
			errs <- err
		}()
	}
	close(start)
	// One resume enters the node; every other one must be turned away while
	// it is still inside. A second entry means the thread forked.
	<-entered
	var wins int
	for i := 0; i < n-1; i++ {
		select {
		case err := <-errs:
			switch {
			case err == nil:
				wins++
			case errors.Is(err, graph.ErrConflict), errors.Is(err, graph.ErrResumeInvalid):
			default:
				t.Errorf("losing resume: unexpected error %v", err)
			}
		case <-entered:
			t.Fatal("a second resume entered the node: the thread forked")
		}
	}
	close(release)
	if err := <-errs; err != nil {
		t.Fatalf("the resume holding the node failed: %v", err)
	}
	wins++
	if wins != 1 || runs.Load() != 1 {
		t.Fatalf("%d resumes: %d succeeded, node completed %d times; want exactly one", n, wins, runs.Load())
	}
	hist, _ := g.History(ctx, cfg, graph.ListOptions{})
	for i := 1; i < len(hist); i++ {
		if hist[i-1].ParentID != hist[i].ID {
			t.Fatalf("thread forked: %s's parent is %s, not %s", hist[i-1].ID, hist[i-1].ParentID, hist[i].ID)
		}
	}
}

func TestPanicInNode(t *testing.T) {
	t.Parallel()
	b := graph.New[State]()
	b.AddNode("ok", appendNode("ok", nil))
	b.AddNode("boom", func(_ context.Context, s State) (graph.Command, error) {
		return graph.Update(graph.Set("note", s.Items[3])), nil // index out of range: a runtime panic
	}, graph.WithRetry[State](graph.RetryPolicy{MaxAttempts: 3}))
	b.AddEdge(graph.START, "ok").AddEdge(graph.START, "boom").AddEdge("ok", graph.END).AddEdge("boom", graph.END)
	g := compileOK(t, b, graph.WithCheckpointer(checkpoint.NewMemory()))
	_, err := g.Invoke(context.Background(), graph.Config{ThreadID: "p"}, graph.Command{})
	var ne *graph.NodeError
	var pe *graph.PanicError
	if !errors.As(err, &ne) || ne.Node != "boom" || !errors.As(err, &pe) || ne.Attempt != 1 {
		t.Fatalf("err = %#v, want boom's NodeError wrapping a PanicError, not retried", err)
	}
	if !strings.Contains(pe.Stack, "graph_test.go") {
		t.Error("panic error lost its stack")
	}
	// The engine survives: the same graph runs another thread.
	snap, err := g.GetState(context.Background(), graph.Config{ThreadID: "p"})
	if err != nil || len(snap.Next) != 2 {
		t.Fatalf("state after panic: %+v %v", snap.Next, err)
	}
}

func TestCompileErrors(t *testing.T) {
	t.Parallel()
	nop := func(context.Context, State) (graph.Command, error) { return graph.Command{}, nil }
	cases := []struct {
		name  string
		build func(b *graph.Builder[State])
		want  string
	}{
		{"unknown node", func(b *graph.Builder[State]) {
			b.AddNode("a", nop).AddEdge(graph.START, "a").AddEdge("a", "ghost")
		}, `unknown node "ghost"`},
		{"unreachable node", func(b *graph.Builder[State]) {
			b.AddNode("a", nop).AddNode("island", nop).AddEdge(graph.START, "a").AddEdge("a", graph.END).AddEdge("island", graph.END)
		}, `"island" is unreachable`},
		{"no way out", func(b *graph.Builder[State]) {
			b.AddNode("a", nop).AddNode("dead", nop).AddEdge(graph.START, "a").AddEdge("a", "dead").AddEdge("a", graph.END)
		}, `"dead" has no way out`},
		{"misnamed channel", func(b *graph.Builder[State]) {
			b.AddNode("a", nop, graph.WithWrites[State]("valeu")).AddEdge(graph.START, "a").AddEdge("a", graph.END)
		}, `unknown channel "valeu"`},
		{"misnamed reducer channel", func(b *graph.Builder[State]) {
			b.AddNode("a", nop).AddEdge(graph.START, "a").AddEdge("a", graph.END)
			b.Reducer("itmes", graph.ReducerFunc(func(a, b []string) []string { return b }))
		}, `unknown channel "itmes"`},
		{"path map target missing", func(b *graph.Builder[State]) {
			b.AddNode("a", nop).AddEdge(graph.START, "a")
			b.AddConditionalEdges("a", graph.Pick(func(State) string { return "x" }), map[string]string{"x": graph.END, "y": "nowhere"})
		}, `path "y" goes to unknown node "nowhere"`},
		{"no entry point", func(b *graph.Builder[State]) {
			b.AddNode("a", nop).AddEdge("a", graph.END)
		}, "no edge from START"},
		{"interrupt on unknown node", func(b *graph.Builder[State]) {
			b.AddNode("a", nop).AddEdge(graph.START, "a").AddEdge("a", graph.END)
		}, `interrupt on unknown node "zzz"`},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			b := graph.New[State]()
			tc.build(b)
			_, err := b.Compile(graph.WithInterruptBefore("zzz"))
			var ce *graph.CompileError
			if !errors.As(err, &ce) || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("err = %v, want it to mention %q", err, tc.want)
			}
		})
	}
	type Bad struct {
		N int `weft:"append"`
	}
	if _, err := graph.New[Bad]().AddNode("a", func(context.Context, Bad) (graph.Command, error) { return graph.Command{}, nil }).
		AddEdge(graph.START, "a").AddEdge("a", graph.END).Compile(); err == nil || !strings.Contains(err.Error(), "needs a slice") {
		t.Fatalf("append reducer on an int: %v", err)
	}
}

func TestWritesAreDataAndZeroValuesWrite(t *testing.T) {
	t.Parallel()
	b := graph.New[State]()
	b.AddNode("reset", func(context.Context, State) (graph.Command, error) {
		return graph.Update(graph.Set("value", 0), graph.Set("note", ""), graph.Set("items", graph.Overwrite{Value: []string(nil)})), nil
	})
	b.AddEdge(graph.START, "reset").AddEdge("reset", graph.END)
	g := compileOK(t, b)
	res, err := g.Invoke(context.Background(), graph.Config{}, graph.Update(graph.Set("value", 9), graph.Set("note", "x"), graph.Set("items", []string{"a", "b"})))
	if err != nil {
		t.Fatal(err)
	}
	if res.State.Value != 0 || res.State.Note != "" || len(res.State.Items) != 0 {
		t.Fatalf("zero writes did not take: %+v", res.State)
	}
	bad := graph.New[State]()
	bad.AddNode("bad", func(context.Context, State) (graph.Command, error) {
		return graph.Update(graph.Set("value", "not a number")), nil
	})
	bad.AddEdge(graph.START, "bad").AddEdge("bad", graph.END)
	_, err = compileOK(t, bad).Invoke(context.Background(), graph.Config{}, graph.Command{})
	if err == nil || !strings.Contains(err.Error(), `channel holds int`) {
		t.Fatalf("wrong type: %v", err)
	}
	_, err = g.Invoke(context.Background(), graph.Config{}, graph.Update(graph.Set("nope", 1)))
	if err == nil || !strings.Contains(err.Error(), `unknown channel "nope"`) {
		t.Fatalf("unknown channel in input: %v", err)
	}
}

func TestCommandGotoAndMergeReducer(t *testing.T) {
	t.Parallel()
	b := graph.New[State]()
	b.AddNode("router", func(_ context.Context, s State) (graph.Command, error) {
		c := graph.Goto("left", "right")
		c.Update = []graph.Write{graph.Set("tags", map[string]string{"router": "1"})}
		return c, nil
	}, graph.WithDestinations[State]("left", "right"))
	b.AddNode("left", func(context.Context, State) (graph.Command, error) {
		return graph.Update(graph.Set("tags", map[string]string{"left": "L"})), nil
	})
	b.AddNode("right", func(context.Context, State) (graph.Command, error) {
		return graph.Update(graph.Set("tags", map[string]string{"right": "R", "router": "overridden"})), nil
	})
	b.AddEdge(graph.START, "router").AddEdge("left", graph.END).AddEdge("right", graph.END)
	res, err := compileOK(t, b, graph.WithCheckpointer(checkpoint.NewMemory())).Invoke(context.Background(), graph.Config{ThreadID: "goto"}, graph.Command{})
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]string{"router": "overridden", "left": "L", "right": "R"}
	if fmt.Sprint(res.State.Tags) != fmt.Sprint(want) {
		t.Fatalf("tags = %v, want %v", res.State.Tags, want)
	}
}

func TestStreamEvents(t *testing.T) {
	t.Parallel()
	b := graph.New[State]()
	b.AddNode("work", func(ctx context.Context, s State) (graph.Command, error) {
		for i := 1; i <= 3; i++ {
			graph.Emit(ctx, map[string]int{"done": i, "of": 3})
		}
		return graph.Update(graph.Set("value", 42)), nil
	})
	b.AddNode("after", appendNode("after", nil))
	b.AddEdge(graph.START, "work").AddEdge("work", "after").AddEdge("after", graph.END)
	g := compileOK(t, b, graph.WithCheckpointer(checkpoint.NewMemory()))
	kinds := map[string]int{}
	var lastValues State
	var results []graph.TaskResult
	for ev, err := range g.Stream(context.Background(), graph.Config{ThreadID: "s"}, graph.Command{}, graph.ModeAll) {
		if err != nil {
			t.Fatal(err)
		}
		kinds[ev.Kind]++
		if ev.Thread != "s" {
			t.Fatalf("event without its thread: %+v", ev)
		}
		switch ev.Kind {
		case graph.KindValues:
			lastValues = ev.Data.(State)
		case graph.KindTaskResult:
			results = append(results, ev.Data.(graph.TaskResult))
		}
	}
	if kinds[graph.KindCustom] != 3 || kinds[graph.KindUpdates] != 2 || kinds[graph.KindTaskStart] != 2 || kinds[graph.KindTaskResult] != 2 ||
		kinds[graph.KindCheckpoint] != 3 || kinds[graph.KindValues] != 3 || kinds[graph.KindDone] != 1 {
		t.Fatalf("event counts = %v", kinds)
	}
	if lastValues.Value != 42 || len(lastValues.Items) != 1 {
		t.Fatalf("last values event = %+v", lastValues)
	}
	if results[0].Node != "work" || results[0].OutputSize == 0 || results[0].Attempts != 1 {
		t.Fatalf("task result = %+v", results[0])
	}
	// Stopping early stops the run cleanly.
	n := 0
	for range g.Stream(context.Background(), graph.Config{ThreadID: "s2"}, graph.Command{}, graph.ModeCustom) {
		n++
		break
	}
	if n != 1 {
		t.Fatal("break did not stop the stream")
	}
}

func TestMermaid(t *testing.T) {
	t.Parallel()
	nop := func(context.Context, State) (graph.Command, error) { return graph.Command{}, nil }
	b := graph.New[State]()
	b.AddNode("quality_gate", nop).AddNode("finalize", nop).AddNode("human review", nop)
	b.AddEdge(graph.START, "quality_gate")
	b.AddConditionalEdges("quality_gate", graph.Pick(func(State) string { return "pass" }), map[string]string{"pass": "finalize", "hitl": "human review"})
	b.AddEdge("human review", "finalize").AddEdge("finalize", graph.END)
	m := compileOK(t, b).Mermaid()
	for _, want := range []string{
		"flowchart TD",
		"__start__ --> n_quality_gate",
		"n_quality_gate -.->|hitl| n_human_20_review",
		"n_quality_gate -.->|pass| n_finalize",
		"n_human_20_review --> n_finalize",
		"n_finalize --> __end__",
		`n_human_20_review["human review"]`,
	} {
		if !strings.Contains(m, want) {
			t.Errorf("mermaid lacks %q:\n%s", want, m)
		}
	}
}

func TestErrorHandlerRoutesFailuresAndForkRetries(t *testing.T) {
	t.Parallel()
	type S struct {
		Log      []string            `json:"log" weft:"append"`
		Failures []graph.NodeFailure `json:"failures" weft:"append"`
		Handled  string              `json:"handled"`
	}
	var fixed atomic.Bool
	var attempts atomic.Int32
	b := graph.New[S]()
	b.AddNode("fetch", func(context.Context, S) (graph.Command, error) {
		return graph.Update(graph.Set("log", "fetch")), nil
	})
	b.AddNode("score", func(context.Context, S) (graph.Command, error) {
		attempts.Add(1)
		if !fixed.Load() {
			return graph.Command{}, errors.New("model overloaded")
		}
		return graph.Update(graph.Set("log", "score")), nil
	}, graph.WithRetry[S](graph.RetryPolicy{MaxAttempts: 2, InitialInterval: time.Nanosecond}))
	b.AddNode("publish", func(context.Context, S) (graph.Command, error) {
		return graph.Update(graph.Set("log", "publish")), nil
	})
	b.AddNode("on_error", func(_ context.Context, s S) (graph.Command, error) {
		last := s.Failures[len(s.Failures)-1]
		return graph.Update(graph.Set("handled", last.Node+": "+last.Error)), nil
	})
	b.AddEdge(graph.START, "fetch").AddEdge("fetch", "score").AddEdge("score", "publish").AddEdge("publish", graph.END).AddEdge("on_error", graph.END)
	var gotCause error
	g := compileOK(t, b, graph.WithCheckpointer(checkpoint.NewMemory()), graph.WithClock(newFakeClock()),
		graph.WithErrorHandler("on_error", func(f graph.NodeFailure, err error) []graph.Write {
			gotCause = err
			return []graph.Write{graph.Set("failures", f)}
		}))
	ctx := context.Background()
	cfg := graph.Config{ThreadID: "err"}
	res, err := g.Invoke(ctx, cfg, graph.Command{})
	if err != nil {
		t.Fatalf("a handled failure failed the run: %v", err)
	}
	if !res.Done() || !slices.Equal(res.State.Log, []string{"fetch"}) || !strings.Contains(res.State.Handled, "score") {
		t.Fatalf("after failure: %+v (publish must not run; the handler must)", res.State)
	}
	f := res.State.Failures[0]
	if attempts.Load() != 2 || f.Attempts != 2 || gotCause == nil || gotCause.Error() != "model overloaded" {
		t.Fatalf("failure = %+v, cause %v; want the retry policy exhausted first and the original error", f, gotCause)
	}
	if !strings.Contains(g.Mermaid(), "__error__([any error]):::error -.-> n_on_error") {
		t.Error("drawing lacks the error route")
	}
	// Retrying the node: fork from the checkpoint the failed step started at.
	fixed.Store(true)
	res, err = g.Invoke(ctx, graph.Config{ThreadID: "err", CheckpointID: f.CheckpointID}, graph.Command{})
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(res.State.Log, []string{"fetch", "score", "publish"}) || len(res.State.Failures) != 0 {
		t.Fatalf("after fork retry: %+v", res.State)
	}
}

func TestGuardKeepsImmutableFields(t *testing.T) {
	t.Parallel()
	errImmutable := errors.New("topic is immutable")
	guard := func(before, after any) error {
		if b := before.(State); b.Topic != "" && after.(State).Topic != b.Topic {
			return errImmutable
		}
		return nil
	}
	b := graph.New[State]()
	b.AddNode("a", func(_ context.Context, s State) (graph.Command, error) {
		if s.Note == "tamper" {
			return graph.Update(graph.Set("topic", "other")), nil
		}
		return graph.Update(graph.Set("items", "a")), nil
	})
	b.AddEdge(graph.START, "a").AddEdge("a", graph.END)
	g := compileOK(t, b, graph.WithCheckpointer(checkpoint.NewMemory()), graph.WithGuard(guard))
	ctx := context.Background()
	cfg := graph.Config{ThreadID: "g"}
	if _, err := g.Invoke(ctx, cfg, graph.Update(graph.Set("topic", "bids"))); err != nil {
		t.Fatalf("setting the field once: %v", err)
	}
	if _, err := g.UpdateState(ctx, cfg, []graph.Write{graph.Set("topic", "changed")}, "a"); !errors.Is(err, errImmutable) {
		t.Fatalf("UpdateState changing it: %v, want the guard's error", err)
	}
	if _, err := g.Invoke(ctx, graph.Config{ThreadID: "g2"}, graph.Update(graph.Set("topic", "bids"), graph.Set("note", "tamper"))); !errors.Is(err, errImmutable) {
		t.Fatalf("a node changing it: %v, want the guard's error", err)
	}
	snap, _ := g.GetState(ctx, cfg)
	if snap.Values.Topic != "bids" {
		t.Fatalf("topic = %q after rejected updates", snap.Values.Topic)
	}
}

// A fork replays, as LangGraph's time travel does: every task after the checkpoint runs
// again, the parallel ones too (whose writes the checkpoint kept), and an interrupt asks
// again instead of taking the answer given before. A retry of a failed step (RetryFailed)
// keeps the writes of the tasks that finished.
func TestForkReplaysRetryReuses(t *testing.T) {
	t.Parallel()
	var calls counter
	b := graph.New[State]()
	b.AddNode("prep", appendNode("prep", &calls))
	b.AddNode("one", appendNode("one", &calls))
	b.AddNode("two", appendNode("two", &calls))
	b.AddNode("approve", func(ctx context.Context, s State) (graph.Command, error) {
		calls.hit("approve")
		r, err := graph.Interrupt[review](ctx, "approve?")
		if err != nil {
			return graph.Command{}, err
		}
		return graph.Update(graph.Set("note", r.Decision)), nil
	})
	b.AddEdge(graph.START, "prep").AddEdge("prep", "one").AddEdge("prep", "two").
		AddEdge("one", "approve").AddEdge("two", "approve").AddEdge("approve", graph.END)
	g := compileOK(t, b, graph.WithCheckpointer(checkpoint.NewMemory()))
	ctx := context.Background()
	cfg := graph.Config{ThreadID: "replay"}
	if res, err := g.Invoke(ctx, cfg, graph.Command{}); err != nil || len(res.Interrupts) != 1 {
		t.Fatalf("first run: %+v %v", res, err)
	}
	if res, err := g.Invoke(ctx, cfg, graph.Resume(review{Decision: "yes"})); err != nil || !res.Done() || res.State.Note != "yes" {
		t.Fatalf("resume: %+v %v", res, err)
	}
	hist, err := g.History(ctx, cfg, graph.ListOptions{})
	if err != nil {
		t.Fatal(err)
	}
	find := func(source string, next ...string) graph.Checkpoint {
		t.Helper()
		for _, cp := range hist {
			var nodes []string
			for _, n := range cp.Next {
				nodes = append(nodes, n.Node)
			}
			slices.Sort(nodes)
			if cp.Source == source && slices.Equal(nodes, next) {
				return cp
			}
		}
		t.Fatalf("no %s checkpoint before %v in %+v", source, next, hist)
		return graph.Checkpoint{}
	}
	beforePair := find(graph.SourceLoop, "one", "two")
	answered := find(graph.SourceResume, "approve")
	if calls.get("one") != 1 || calls.get("two") != 1 || calls.get("approve") != 2 {
		t.Fatalf("first run's calls: %v", calls.n)
	}

	// Forking before the parallel step runs both of its tasks again, and the review asks again.
	res, err := g.Invoke(ctx, graph.Config{ThreadID: "replay", CheckpointID: beforePair.ID}, graph.Command{})
	if err != nil {
		t.Fatal(err)
	}
	if calls.get("one") != 2 || calls.get("two") != 2 || len(res.Interrupts) != 1 || res.State.Note != "" {
		t.Fatalf("after the fork: calls %v, interrupts %+v, note %q; want one and two run again and a new pause", calls.n, res.Interrupts, res.State.Note)
	}
	if !slices.Equal(res.State.Items, []string{"prep", "one", "two"}) && !slices.Equal(res.State.Items, []string{"prep", "two", "one"}) {
		t.Fatalf("items after the fork: %v", res.State.Items)
	}
	// Forking from the checkpoint that carried the answer asks again too.
	res, err = g.Invoke(ctx, graph.Config{ThreadID: "replay", CheckpointID: answered.ID}, graph.Command{})
	if err != nil || len(res.Interrupts) != 1 || res.State.Note != "" {
		t.Fatalf("fork from the answered checkpoint: %+v %v; want a new pause, not the old answer", res, err)
	}

	// A retry of the step keeps what its tasks wrote: they do not run again.
	res, err = g.Invoke(ctx, graph.Config{ThreadID: "replay", CheckpointID: beforePair.ID, RetryFailed: true}, graph.Command{})
	if err != nil || len(res.Interrupts) != 1 {
		t.Fatalf("retry fork: %+v %v", res, err)
	}
	if calls.get("one") != 2 || calls.get("two") != 2 {
		t.Fatalf("a retry fork re-ran finished tasks: %v", calls.n)
	}
	hist, _ = g.History(ctx, cfg, graph.ListOptions{Limit: 3})
	if !slices.ContainsFunc(hist, func(cp graph.Checkpoint) bool { return cp.Source == graph.SourceRetry && cp.ForkOf == beforePair.ID }) {
		t.Errorf("the retry's first checkpoint is not marked a retry of %s: %+v", beforePair.ID, hist)
	}
}
