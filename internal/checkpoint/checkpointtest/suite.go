// Package checkpointtest is the conformance suite for graph.Checkpointer.
// Every implementation runs the same suite:
//
//	checkpointtest.Run(t, func(t *testing.T) graph.Checkpointer { return newSaver(t) })
//
// It imports internal/graph, internal/checkpoint's types and the standard
// library only.
package checkpointtest

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/google/uuid"

	"weft/internal/graph"
)

// Factory returns a fresh, empty Checkpointer for one subtest.
type Factory func(t *testing.T) graph.Checkpointer

// Run runs the suite.
func Run(t *testing.T, newSaver Factory) {
	tests := []struct {
		name string
		fn   func(t *testing.T, s graph.Checkpointer)
	}{
		{"PutThenGetHead", testPutGet},
		{"GetMissingIsNotFound", testMissing},
		{"UnchangedChannelsKeepTheirVersion", testUnchanged},
		{"DeltaChainsConcatenate", testDeltas},
		{"HeadIsCompareAndSet", testCAS},
		{"ConcurrentPutsOneWins", testConcurrentPuts},
		{"PendingWritesRoundTrip", testWrites},
		{"PutCarriesWrites", testPutWithWrites},
		{"ListNewestFirstPaged", testList},
		{"NamespacesAreSeparate", testNamespaces},
		{"DeleteThread", testDelete},
		{"PruneKeepLast", testPruneKeepLast},
		{"PruneOlderThan", testPruneOlderThan},
		{"GraphRunsOnSaver", testGraphRun},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			tc.fn(t, newSaver(t))
		})
	}
}

func id() string { return uuid.Must(uuid.NewV7()).String() }

// chain builds a linear thread of n checkpoints; checkpoint i writes channel
// "n" = i and appends i to channel "log"; channel "fixed" is written once.
func chain(t *testing.T, s graph.Checkpointer, thread string, n int) []graph.Checkpoint {
	t.Helper()
	ctx := context.Background()
	var out []graph.Checkpoint
	head := ""
	versions := map[string]string{}
	for i := 0; i < n; i++ {
		cid := id()
		blobs := []graph.Blob{{Channel: "n", Version: cid, Data: []byte(fmt.Sprint(i))}}
		if i == 0 {
			blobs = append(blobs, graph.Blob{Channel: "fixed", Version: cid, Data: []byte(`"constant"`)},
				graph.Blob{Channel: "log", Version: cid, Data: []byte(`[0]`)})
		} else {
			blobs = append(blobs, graph.Blob{Channel: "log", Version: cid, Delta: true, Base: versions["log"], Data: []byte(fmt.Sprintf("[%d]", i))})
		}
		nv := map[string]string{}
		for k, v := range versions {
			nv[k] = v
		}
		for _, b := range blobs {
			nv[b.Channel] = cid
		}
		versions = nv
		cp := graph.Checkpoint{ID: cid, ParentID: head, ThreadID: thread, Step: i, Source: graph.SourceLoop,
			CreatedAt: time.Now().UTC(), Versions: nv, Next: []graph.PlannedTask{{ID: "t" + fmt.Sprint(i), Node: "a"}}, Nodes: []string{"a"}}
		if err := s.Put(ctx, graph.PutRequest{Checkpoint: cp, Blobs: blobs, ExpectHead: head}); err != nil {
			t.Fatalf("put %d: %v", i, err)
		}
		head = cid
		out = append(out, cp)
	}
	return out
}

func testPutGet(t *testing.T, s graph.Checkpointer) {
	cps := chain(t, s, "th-1", 3)
	tup, err := s.GetTuple(context.Background(), "th-1", "", "")
	if err != nil {
		t.Fatal(err)
	}
	if tup.Checkpoint.ID != cps[2].ID || tup.Checkpoint.Step != 2 || tup.Checkpoint.ParentID != cps[1].ID {
		t.Fatalf("head = %+v, want checkpoint 2", tup.Checkpoint)
	}
	if got := string(tup.Values["n"]); got != "2" {
		t.Errorf("n = %s, want 2", got)
	}
	if len(tup.Checkpoint.Next) != 1 || tup.Checkpoint.Next[0].Node != "a" {
		t.Errorf("next = %+v", tup.Checkpoint.Next)
	}
	old, err := s.GetTuple(context.Background(), "th-1", "", cps[0].ID)
	if err != nil {
		t.Fatal(err)
	}
	if got := string(old.Values["n"]); got != "0" {
		t.Errorf("n at checkpoint 0 = %s, want 0", got)
	}
}

func testMissing(t *testing.T, s graph.Checkpointer) {
	ctx := context.Background()
	if _, err := s.GetTuple(ctx, "nope", "", ""); !errors.Is(err, graph.ErrNotFound) {
		t.Fatalf("missing thread: err = %v, want ErrNotFound", err)
	}
	chain(t, s, "th", 1)
	if _, err := s.GetTuple(ctx, "th", "", id()); !errors.Is(err, graph.ErrNotFound) {
		t.Fatalf("missing checkpoint: err = %v, want ErrNotFound", err)
	}
	if err := s.PutWrites(ctx, "th", "", id(), []graph.PendingWrite{{TaskID: "x", Channel: "n", Data: []byte("1")}}); !errors.Is(err, graph.ErrNotFound) {
		t.Fatalf("writes on a missing checkpoint: err = %v, want ErrNotFound", err)
	}
}

func testUnchanged(t *testing.T, s graph.Checkpointer) {
	chain(t, s, "th", 5)
	tup, err := s.GetTuple(context.Background(), "th", "", "")
	if err != nil {
		t.Fatal(err)
	}
	if got := string(tup.Values["fixed"]); got != `"constant"` {
		t.Fatalf("fixed (written once, at checkpoint 0) = %s at the head", got)
	}
}

func testDeltas(t *testing.T, s graph.Checkpointer) {
	cps := chain(t, s, "th", 6)
	ctx := context.Background()
	for i, cp := range cps {
		tup, err := s.GetTuple(ctx, "th", "", cp.ID)
		if err != nil {
			t.Fatal(err)
		}
		var got []int
		if err := json.Unmarshal(tup.Values["log"], &got); err != nil {
			t.Fatalf("log at %d: %v (%s)", i, err, tup.Values["log"])
		}
		if len(got) != i+1 || got[i] != i || got[0] != 0 {
			t.Fatalf("log at checkpoint %d = %v, want 0..%d", i, got, i)
		}
	}
}

func testCAS(t *testing.T, s graph.Checkpointer) {
	ctx := context.Background()
	cps := chain(t, s, "th", 2)
	stale := graph.Checkpoint{ID: id(), ParentID: cps[0].ID, ThreadID: "th", Step: 1, Source: graph.SourceLoop, CreatedAt: time.Now()}
	if err := s.Put(ctx, graph.PutRequest{Checkpoint: stale, ExpectHead: cps[0].ID}); !errors.Is(err, graph.ErrConflict) {
		t.Fatalf("put on a stale head: err = %v, want ErrConflict", err)
	}
	fresh := graph.Checkpoint{ID: id(), ThreadID: "th", Step: 0, Source: graph.SourceInput, CreatedAt: time.Now()}
	if err := s.Put(ctx, graph.PutRequest{Checkpoint: fresh, ExpectHead: ""}); !errors.Is(err, graph.ErrConflict) {
		t.Fatalf("put as a new thread over an existing one: err = %v, want ErrConflict", err)
	}
	tup, _ := s.GetTuple(ctx, "th", "", "")
	if tup.Checkpoint.ID != cps[1].ID {
		t.Fatalf("a rejected put moved the head to %s", tup.Checkpoint.ID)
	}
	if _, err := s.GetTuple(ctx, "th", "", stale.ID); !errors.Is(err, graph.ErrNotFound) {
		t.Fatalf("a rejected put left its checkpoint behind (err = %v)", err)
	}
}

func testConcurrentPuts(t *testing.T, s graph.Checkpointer) {
	cps := chain(t, s, "th", 1)
	const n = 20
	var wins, conflicts atomic.Int32
	var wg sync.WaitGroup
	for i := 0; i < n; i++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			cp := graph.Checkpoint{ID: id(), ParentID: cps[0].ID, ThreadID: "th", Step: 1, Source: graph.SourceResume, CreatedAt: time.Now()}
			err := s.Put(context.Background(), graph.PutRequest{Checkpoint: cp, ExpectHead: cps[0].ID})
			switch {
			case err == nil:
				wins.Add(1)
			case errors.Is(err, graph.ErrConflict):
				conflicts.Add(1)
			default:
				t.Errorf("put: %v", err)
			}
		}()
	}
	wg.Wait()
	if wins.Load() != 1 || conflicts.Load() != n-1 {
		t.Fatalf("%d concurrent puts on one head: %d won, %d conflicted; want exactly 1 winner", n, wins.Load(), conflicts.Load())
	}
}

func testWrites(t *testing.T, s graph.Checkpointer) {
	ctx := context.Background()
	cps := chain(t, s, "th", 1)
	w := []graph.PendingWrite{
		{TaskID: "t1", Node: "a", Seq: 0, Channel: "n", Data: []byte("7")},
		{TaskID: "t1", Node: "a", Seq: 1, Channel: "log", Data: []byte("[7]")},
	}
	if err := s.PutWrites(ctx, "th", "", cps[0].ID, w); err != nil {
		t.Fatal(err)
	}
	// Saving the same (task, seq) again replaces it.
	if err := s.PutWrites(ctx, "th", "", cps[0].ID, []graph.PendingWrite{{TaskID: "t1", Node: "a", Seq: 0, Channel: "n", Data: []byte("8")}}); err != nil {
		t.Fatal(err)
	}
	if err := s.PutWrites(ctx, "th", "", cps[0].ID, []graph.PendingWrite{{TaskID: "t2", Node: "b", Seq: 0, Channel: graph.WriteError, Data: []byte(`"boom"`)}}); err != nil {
		t.Fatal(err)
	}
	tup, err := s.GetTuple(ctx, "th", "", cps[0].ID)
	if err != nil {
		t.Fatal(err)
	}
	got := map[string]string{}
	for _, pw := range tup.Writes {
		got[pw.TaskID+"/"+pw.Channel] = string(pw.Data)
	}
	want := map[string]string{"t1/n": "8", "t1/log": "[7]", "t2/" + graph.WriteError: `"boom"`}
	if len(got) != len(want) {
		t.Fatalf("writes = %v, want %v", got, want)
	}
	for k, v := range want {
		if got[k] != v {
			t.Errorf("write %s = %q, want %q", k, got[k], v)
		}
	}
}

func testPutWithWrites(t *testing.T, s graph.Checkpointer) {
	ctx := context.Background()
	cp := graph.Checkpoint{ID: id(), ThreadID: "th", Source: graph.SourceResume, CreatedAt: time.Now(),
		Resume: map[string]json.RawMessage{"i1": json.RawMessage(`{"ok":true}`)}, SkipBefore: true}
	err := s.Put(ctx, graph.PutRequest{Checkpoint: cp, Writes: []graph.PendingWrite{{TaskID: "t", Node: "a", Channel: "n", Data: []byte("3")}}})
	if err != nil {
		t.Fatal(err)
	}
	tup, err := s.GetTuple(ctx, "th", "", "")
	if err != nil {
		t.Fatal(err)
	}
	if len(tup.Writes) != 1 || string(tup.Writes[0].Data) != "3" {
		t.Fatalf("writes saved with the checkpoint = %+v", tup.Writes)
	}
	if !tup.Checkpoint.SkipBefore || string(tup.Checkpoint.Resume["i1"]) != `{"ok":true}` {
		t.Fatalf("resume fields lost: %+v", tup.Checkpoint)
	}
}

func testList(t *testing.T, s graph.Checkpointer) {
	ctx := context.Background()
	cps := chain(t, s, "th", 7)
	page1, err := s.List(ctx, "th", "", graph.ListOptions{Limit: 3})
	if err != nil {
		t.Fatal(err)
	}
	if len(page1) != 3 || page1[0].ID != cps[6].ID || page1[2].ID != cps[4].ID {
		t.Fatalf("page 1 = %v", ids(page1))
	}
	page2, err := s.List(ctx, "th", "", graph.ListOptions{Limit: 3, Before: page1[2].ID})
	if err != nil {
		t.Fatal(err)
	}
	if len(page2) != 3 || page2[0].ID != cps[3].ID {
		t.Fatalf("page 2 = %v", ids(page2))
	}
	page3, _ := s.List(ctx, "th", "", graph.ListOptions{Limit: 3, Before: page2[2].ID})
	if len(page3) != 1 || page3[0].ID != cps[0].ID {
		t.Fatalf("page 3 = %v", ids(page3))
	}
	if page1[0].Versions["n"] == "" || len(page1[0].Next) != 1 {
		t.Errorf("listed checkpoints lose their metadata: %+v", page1[0])
	}
	// A cursor that is no checkpoint of the thread is refused, not read as "the start".
	other := chain(t, s, "th-other", 1)
	for _, before := range []string{other[0].ID, id(), "00000000-0000-0000-0000-000000000000"} {
		if got, err := s.List(ctx, "th", "", graph.ListOptions{Before: before}); !errors.Is(err, graph.ErrUnknownBefore) {
			t.Errorf("before %s (not of the thread): %v, %v; want ErrUnknownBefore", before, ids(got), err)
		}
	}
	if got, err := s.List(ctx, "no-such-thread", "", graph.ListOptions{Before: cps[0].ID}); !errors.Is(err, graph.ErrUnknownBefore) {
		t.Errorf("before on a thread without checkpoints: %v, %v; want ErrUnknownBefore", ids(got), err)
	}
	none, _ := s.List(ctx, "th", "", graph.ListOptions{Source: graph.SourceFork})
	if len(none) != 0 {
		t.Errorf("source filter: got %d", len(none))
	}
}

func ids(cps []graph.Checkpoint) []string {
	out := make([]string, len(cps))
	for i, c := range cps {
		out[i] = c.ID
	}
	return out
}

func testNamespaces(t *testing.T, s graph.Checkpointer) {
	ctx := context.Background()
	chain(t, s, "th", 2)
	sub := graph.Checkpoint{ID: id(), ThreadID: "th", NS: "child:abc", Source: graph.SourceInput, CreatedAt: time.Now(),
		Versions: map[string]string{}}
	if err := s.Put(ctx, graph.PutRequest{Checkpoint: sub}); err != nil {
		t.Fatalf("first checkpoint of a namespace expects an empty head: %v", err)
	}
	tup, err := s.GetTuple(ctx, "th", "child:abc", "")
	if err != nil || tup.Checkpoint.ID != sub.ID {
		t.Fatalf("namespace head = %v, %v", tup, err)
	}
	root, _ := s.GetTuple(ctx, "th", "", "")
	if root.Checkpoint.ID == sub.ID {
		t.Fatal("a subgraph checkpoint moved the root head")
	}
	if err := s.DeleteThread(ctx, "th"); err != nil {
		t.Fatal(err)
	}
	if _, err := s.GetTuple(ctx, "th", "child:abc", ""); !errors.Is(err, graph.ErrNotFound) {
		t.Fatalf("DeleteThread left a namespace behind: %v", err)
	}
}

func testDelete(t *testing.T, s graph.Checkpointer) {
	ctx := context.Background()
	chain(t, s, "a", 2)
	chain(t, s, "b", 2)
	if err := s.DeleteThread(ctx, "a"); err != nil {
		t.Fatal(err)
	}
	if _, err := s.GetTuple(ctx, "a", "", ""); !errors.Is(err, graph.ErrNotFound) {
		t.Fatalf("deleted thread still there: %v", err)
	}
	if _, err := s.GetTuple(ctx, "b", "", ""); err != nil {
		t.Fatalf("deleting a removed b: %v", err)
	}
	// A deleted thread can start again.
	chain(t, s, "a", 1)
}

func testPruneKeepLast(t *testing.T, s graph.Checkpointer) {
	ctx := context.Background()
	cps := chain(t, s, "th", 10)
	n, err := s.Prune(ctx, graph.PruneOptions{Threads: []string{"th"}, KeepLast: 3})
	if err != nil {
		t.Fatal(err)
	}
	if n != (graph.PruneResult{Checkpoints: 7}) {
		t.Errorf("pruned %+v, want 7 checkpoints and no thread", n)
	}
	left, _ := s.List(ctx, "th", "", graph.ListOptions{})
	if len(left) != 3 || left[0].ID != cps[9].ID {
		t.Fatalf("left = %v", ids(left))
	}
	// The kept checkpoints still read whole: delta chains and values written
	// by pruned checkpoints survive.
	tup, err := s.GetTuple(ctx, "th", "", cps[7].ID)
	if err != nil {
		t.Fatal(err)
	}
	var log []int
	_ = json.Unmarshal(tup.Values["log"], &log)
	if len(log) != 8 || string(tup.Values["fixed"]) != `"constant"` {
		t.Fatalf("after prune, checkpoint 7 reads log=%v fixed=%s", log, tup.Values["fixed"])
	}
}

func testPruneOlderThan(t *testing.T, s graph.Checkpointer) {
	ctx := context.Background()
	chain(t, s, "old", 2)
	cutoff := time.Now().Add(time.Hour)
	if n, err := s.Prune(ctx, graph.PruneOptions{Threads: []string{"old"}, OlderThan: cutoff}); err != nil || n != (graph.PruneResult{Checkpoints: 2, Threads: 1}) {
		t.Fatalf("pruned %+v (%v), want the old thread's 2 checkpoints and the thread", n, err)
	}
	if _, err := s.GetTuple(ctx, "old", "", ""); !errors.Is(err, graph.ErrNotFound) {
		t.Fatalf("thread older than the cutoff survived: %v", err)
	}
	chain(t, s, "new", 2)
	if _, err := s.Prune(ctx, graph.PruneOptions{Threads: []string{"new"}, OlderThan: time.Now().Add(-time.Hour)}); err != nil {
		t.Fatal(err)
	}
	if _, err := s.GetTuple(ctx, "new", "", ""); err != nil {
		t.Fatalf("thread newer than the cutoff was pruned: %v", err)
	}
}

// testGraphRun drives the engine itself on the saver: a loop that appends,
// an interrupt, a resume, and a fork from an old checkpoint.
func testGraphRun(t *testing.T, s graph.Checkpointer) {
	type st struct {
		Count int      `json:"count"`
		Log   []string `json:"log" weft:"append"`
		Note  string   `json:"note"`
	}
	ctx := context.Background()
	b := graph.New[st]()
	b.AddNode("inc", func(_ context.Context, s st) (graph.Command, error) {
		return graph.Update(graph.Set("count", s.Count+1), graph.Set("log", fmt.Sprintf("inc %d", s.Count+1))), nil
	})
	b.AddNode("ask", func(ctx context.Context, s st) (graph.Command, error) {
		note, err := graph.Interrupt[string](ctx, map[string]int{"count": s.Count})
		if err != nil {
			return graph.Command{}, err
		}
		return graph.Update(graph.Set("note", note)), nil
	})
	b.AddEdge(graph.START, "inc")
	b.AddConditionalEdges("inc", graph.Pick(func(s st) string {
		if s.Count < 3 {
			return "again"
		}
		return "ask"
	}), map[string]string{"again": "inc", "ask": "ask"})
	b.AddEdge("ask", graph.END)
	g, err := b.Compile(graph.WithCheckpointer(s))
	if err != nil {
		t.Fatal(err)
	}
	cfg := graph.Config{ThreadID: "graph-thread"}
	res, err := g.Invoke(ctx, cfg, graph.Update(graph.Set("count", 0)))
	if err != nil {
		t.Fatal(err)
	}
	if len(res.Interrupts) != 1 || res.State.Count != 3 || len(res.State.Log) != 3 {
		t.Fatalf("first run: %+v", res)
	}
	res, err = g.Invoke(ctx, cfg, graph.Resume("looks good"))
	if err != nil {
		t.Fatal(err)
	}
	if !res.Done() || res.State.Note != "looks good" || len(res.State.Log) != 3 {
		t.Fatalf("after resume: %+v", res)
	}
	hist, err := g.History(ctx, cfg, graph.ListOptions{})
	if err != nil {
		t.Fatal(err)
	}
	var afterFirst string
	for _, cp := range hist {
		if cp.Step == 1 && cp.Source == graph.SourceLoop {
			afterFirst = cp.ID
		}
	}
	if afterFirst == "" {
		t.Fatalf("no step-1 checkpoint in history %v", ids(hist))
	}
	forked, err := g.Invoke(ctx, graph.Config{ThreadID: cfg.ThreadID, CheckpointID: afterFirst}, graph.Command{})
	if err != nil {
		t.Fatal(err)
	}
	if len(forked.Interrupts) != 1 || forked.State.Count != 3 || forked.State.Note != "" {
		t.Fatalf("fork from step 1: %+v", forked)
	}
	hist, _ = g.History(ctx, cfg, graph.ListOptions{Limit: 50})
	found := false
	for _, cp := range hist {
		if cp.ForkOf == afterFirst {
			found = true
		}
	}
	if !found {
		t.Fatal("history does not show where the fork branched")
	}
}
