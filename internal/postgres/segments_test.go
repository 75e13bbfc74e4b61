package postgres_test

import (
	"reflect"
	"slices"
	"testing"

	"weft/internal/graph"
)

// wantLog is what thread th's log holds at checkpoint i when step j appended items[j].
func wantLog(items [][]int, i int) []int {
	var out []int
	for _, it := range items[:i+1] {
		out = append(out, it...)
	}
	return out
}

// readAll checks the log at every checkpoint of th and at its head.
func readAll(t *testing.T, b bundle, th *thread, items [][]int) {
	t.Helper()
	for i, cp := range th.cps {
		tup, err := b.cp.GetTuple(b.ctx, th.id, "", cp.ID)
		if err != nil {
			t.Fatal(err)
		}
		if got, want := logOf(t, tup), wantLog(items, i); !slices.Equal(got, want) {
			t.Fatalf("log at checkpoint %d = %v, want %v", i, got, want)
		}
	}
}

func (b bundle) count(t *testing.T, sql string, args ...any) int {
	t.Helper()
	var n int
	if err := b.db.Pool().QueryRow(b.ctx, sql, args...).Scan(&n); err != nil {
		t.Fatal(err)
	}
	return n
}

// TestChainSegments: a long chain of small deltas gets a segment per 32 positions, and
// every checkpoint (before, on and between segment ends) reads the same log as without them.
func TestChainSegments(t *testing.T) {
	t.Parallel()
	b := setup(t)
	th := newThread(t, b.cp, "th")
	var items [][]int
	for i := range 101 {
		it := []int{i}
		switch i % 7 {
		case 3:
			it = nil // an empty delta
		case 5:
			it = []int{i, -i}
		}
		items = append(items, it)
		th.step(it...)
	}
	if n := b.count(t, `SELECT count(*) FROM checkpoint_segments`); n != 3 {
		t.Fatalf("%d segments for a 100-position chain, want 3 (32, 64, 96)", n)
	}
	readAll(t, b, th, items)

	// Prune to the last checkpoint: the head still reads its whole log; its segments stay.
	if _, err := b.cp.Prune(b.ctx, graph.PruneOptions{Threads: []string{"th"}, KeepLast: 1}); err != nil {
		t.Fatal(err)
	}
	tup, err := b.cp.GetTuple(b.ctx, "th", "", "")
	if err != nil {
		t.Fatal(err)
	}
	if got := logOf(t, tup); !slices.Equal(got, wantLog(items, 100)) {
		t.Fatalf("after prune the head reads %v", got)
	}
	if n := b.count(t, `SELECT count(*) FROM checkpoint_segments`); n != 3 {
		t.Fatalf("%d segments after prune, want the head's 3", n)
	}
	if err := b.cp.DeleteThread(b.ctx, "th"); err != nil {
		t.Fatal(err)
	}
	if n := b.count(t, `SELECT count(*) FROM checkpoint_segments`); n != 0 {
		t.Fatalf("%d segments left after deleting the thread", n)
	}
}

// TestForkedChainSegments: a fork from a checkpoint inside a segment's range marks the chain
// forked; both branches then read their own items at every checkpoint, and the chain gets
// no more segments.
func TestForkedChainSegments(t *testing.T) {
	t.Parallel()
	b := setup(t)
	th := newThread(t, b.cp, "th")
	var items [][]int
	for i := range 70 {
		items = append(items, []int{i})
		th.step(i)
	}
	if n := b.count(t, `SELECT count(*) FROM checkpoint_segments`); n != 2 {
		t.Fatalf("%d segments, want 2", n)
	}
	main := slices.Clone(th.cps)
	// Fork from checkpoint 40 and run the fork past the next segment end (96).
	th.versions = th.cps[40].Versions
	forkItems := slices.Clone(items[:41])
	for i := range 60 {
		forkItems = append(forkItems, []int{1000 + i})
		th.step(1000 + i)
	}
	if n := b.count(t, `SELECT count(*) FROM checkpoint_forked_chains`); n != 1 {
		t.Fatalf("%d forked chains, want 1", n)
	}
	if n := b.count(t, `SELECT count(*) FROM checkpoint_segments`); n != 2 {
		t.Fatalf("%d segments after the fork, want still 2", n)
	}
	for i, cp := range main {
		tup, err := b.cp.GetTuple(b.ctx, "th", "", cp.ID)
		if err != nil {
			t.Fatal(err)
		}
		if got, want := logOf(t, tup), wantLog(items, i); !reflect.DeepEqual(got, want) {
			t.Fatalf("main branch at %d: %v, want %v", i, got, want)
		}
	}
	for j, cp := range th.cps[70:] {
		tup, err := b.cp.GetTuple(b.ctx, "th", "", cp.ID)
		if err != nil {
			t.Fatal(err)
		}
		if got, want := logOf(t, tup), wantLog(forkItems, 41+j); !reflect.DeepEqual(got, want) {
			t.Fatalf("fork at %d: %v, want %v", 41+j, got, want)
		}
	}
}

// TestLargeDeltasGetNoSegments: deltas too large for a segment (4 KB per 32 positions) are
// read one row each, as before.
func TestLargeDeltasGetNoSegments(t *testing.T) {
	t.Parallel()
	b := setup(t)
	th := newThread(t, b.cp, "th")
	var items [][]int
	for i := range 40 {
		it := make([]int, 40) // ~200 bytes of JSON
		for k := range it {
			it[k] = i*100 + k
		}
		items = append(items, it)
		th.step(it...)
	}
	if n := b.count(t, `SELECT count(*) FROM checkpoint_segments`); n != 0 {
		t.Fatalf("%d segments of large deltas, want 0", n)
	}
	readAll(t, b, th, items)
}
