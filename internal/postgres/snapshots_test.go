package postgres_test

import (
	"reflect"
	"slices"
	"testing"

	"weft/internal/graph"
)

// smallChain steps th n times, each appending one small item (or two, or none), and returns
// what each step appended.
func smallChain(th *thread, n, from int) [][]int {
	var items [][]int
	for i := range n {
		v := from + i
		it := []int{v}
		switch i % 7 {
		case 3:
			it = nil
		case 5:
			it = []int{v, -v}
		}
		items = append(items, it)
		th.step(it...)
	}
	return items
}

// TestChainSnapshots: a long chain of small deltas keeps one snapshot, its newest (at the
// last multiple of 32), and every checkpoint reads the same log as without it. The head's
// read joins that snapshot and the fewer than 32 deltas after it: with every older delta and
// segment gone, it still reads its whole log.
func TestChainSnapshots(t *testing.T) {
	t.Parallel()
	b := setup(t)
	th := newThread(t, b.cp, "th")
	items := smallChain(th, 211, 0) // positions 0..210: snapshots at 32, …, 192
	if n := b.count(t, `SELECT count(*) FROM checkpoint_snapshots`); n != 1 {
		t.Fatalf("%d snapshots, want the newest only", n)
	}
	if n := b.count(t, `SELECT pos FROM checkpoint_snapshots`); n != 192 {
		t.Fatalf("snapshot at %d, want 192", n)
	}
	readAll(t, b, th, items)

	// The head reads the snapshot and the deltas after it, nothing older.
	if _, err := b.db.Pool().Exec(b.ctx, `DELETE FROM checkpoint_blobs WHERE channel = 'log' AND pos BETWEEN 1 AND 192;
		DELETE FROM checkpoint_segments`); err != nil {
		t.Fatal(err)
	}
	tup, err := b.cp.GetTuple(b.ctx, "th", "", "")
	if err != nil {
		t.Fatal(err)
	}
	if got, want := logOf(t, tup), wantLog(items, 210); !slices.Equal(got, want) {
		t.Fatalf("head reads %v, want %v", got, want)
	}
	// A checkpoint before the snapshot needs the deltas, which are gone: an error, not a
	// wrong value.
	if _, err := b.cp.GetTuple(b.ctx, "th", "", th.cps[150].ID); err == nil {
		t.Fatal("a checkpoint before the snapshot read without its deltas")
	}
	if err := b.cp.DeleteThread(b.ctx, "th"); err != nil {
		t.Fatal(err)
	}
	if n := b.count(t, `SELECT count(*) FROM checkpoint_snapshots`); n != 0 {
		t.Fatalf("%d snapshots left after deleting the thread", n)
	}
}

// TestSnapshotsAndForks: forking from a checkpoint before the snapshot, and from one after
// it, keeps every checkpoint of every branch reading its own log.
func TestSnapshotsAndForks(t *testing.T) {
	t.Parallel()
	for _, at := range []int{100, 200} {
		b := setup(t)
		th := newThread(t, b.cp, "th")
		items := smallChain(th, 211, 0)
		main := slices.Clone(th.cps)
		th.versions = th.cps[at].Versions
		forkItems := slices.Clone(items[:at+1])
		forkItems = append(forkItems, smallChain(th, 80, 1000)...)
		for i, cp := range main {
			tup, err := b.cp.GetTuple(b.ctx, "th", "", cp.ID)
			if err != nil {
				t.Fatal(err)
			}
			if got, want := logOf(t, tup), wantLog(items, i); !reflect.DeepEqual(got, want) {
				t.Fatalf("fork at %d: main branch at %d: %v, want %v", at, i, got, want)
			}
		}
		for j, cp := range th.cps[len(main):] {
			tup, err := b.cp.GetTuple(b.ctx, "th", "", cp.ID)
			if err != nil {
				t.Fatal(err)
			}
			if got, want := logOf(t, tup), wantLog(forkItems, at+1+j); !reflect.DeepEqual(got, want) {
				t.Fatalf("fork at %d: fork at %d: %v, want %v", at, at+1+j, got, want)
			}
		}
	}
}

// TestSnapshotsAndPrune: a prune keeps the snapshot the kept checkpoints read and the
// deltas and root the older kept ones still need; a rewind's prune drops a snapshot no kept
// checkpoint reads any more.
func TestSnapshotsAndPrune(t *testing.T) {
	t.Parallel()
	b := setup(t)
	th := newThread(t, b.cp, "th")
	items := smallChain(th, 211, 0)
	// Keep the newest 30 (positions 181..210): 181..191 read the root, segments and deltas;
	// 192..210 the snapshot. The root's checkpoint is pruned, so its value moves out of it.
	if _, err := b.cp.Prune(b.ctx, graph.PruneOptions{Threads: []string{"th"}, KeepLast: 30}); err != nil {
		t.Fatal(err)
	}
	for i := 181; i <= 210; i++ {
		tup, err := b.cp.GetTuple(b.ctx, "th", "", th.cps[i].ID)
		if err != nil {
			t.Fatalf("kept checkpoint %d: %v", i, err)
		}
		if got, want := logOf(t, tup), wantLog(items, i); !slices.Equal(got, want) {
			t.Fatalf("kept checkpoint %d reads %v, want %v", i, got, want)
		}
	}
	if n := b.count(t, `SELECT count(*) FROM checkpoint_snapshots`); n != 1 {
		t.Fatalf("%d snapshots after the prune, want 1", n)
	}
	// Rewind to 181: a new branch from there, then keep only its head. No kept checkpoint
	// reads the snapshot at 192 any more.
	th.versions = th.cps[181].Versions
	th.head = th.cps[210].ID
	forkItems := slices.Clone(items[:182])
	forkItems = append(forkItems, smallChain(th, 3, 5000)...)
	if _, err := b.cp.Prune(b.ctx, graph.PruneOptions{Threads: []string{"th"}, KeepLast: 1}); err != nil {
		t.Fatal(err)
	}
	if n := b.count(t, `SELECT count(*) FROM checkpoint_snapshots`); n != 0 {
		t.Fatalf("%d snapshots after pruning every checkpoint that read one, want 0", n)
	}
	tup, err := b.cp.GetTuple(b.ctx, "th", "", "")
	if err != nil {
		t.Fatal(err)
	}
	if got, want := logOf(t, tup), wantLog(forkItems, len(forkItems)-1); !slices.Equal(got, want) {
		t.Fatalf("head after the rewind's prune reads %v, want %v", got, want)
	}
}

// TestSnapshotsSpacedOnLongChains: past 2,048 positions snapshots are spaced by pos / 32
// positions (64 here), so a head read joins the snapshot, the segments after it and fewer
// than 32 deltas; every checkpoint still reads its own log.
func TestSnapshotsSpacedOnLongChains(t *testing.T) {
	if testing.Short() {
		t.Skip("2,200 checkpoints")
	}
	t.Parallel()
	b := setup(t)
	th := newThread(t, b.cp, "th")
	var items [][]int
	for i := range 2200 { // positions 0..2199
		items = append(items, []int{i})
		th.step(i)
	}
	if n := b.count(t, `SELECT pos FROM checkpoint_snapshots`); n != 2144 {
		t.Fatalf("snapshot at %d, want 2144 (2080 + 64)", n)
	}
	for _, i := range []int{0, 31, 32, 1000, 2047, 2143, 2144, 2175, 2176, 2199} {
		tup, err := b.cp.GetTuple(b.ctx, "th", "", th.cps[i].ID)
		if err != nil {
			t.Fatal(err)
		}
		if got, want := logOf(t, tup), wantLog(items, i); !slices.Equal(got, want) {
			t.Fatalf("checkpoint %d reads %d items, want %d", i, len(got), len(want))
		}
	}
	// The head needs the snapshot, the segment at 2176 and the deltas after it only.
	if _, err := b.db.Pool().Exec(b.ctx, `DELETE FROM checkpoint_blobs WHERE channel = 'log' AND pos BETWEEN 1 AND 2176;
		DELETE FROM checkpoint_segments WHERE hi <= 2144`); err != nil {
		t.Fatal(err)
	}
	tup, err := b.cp.GetTuple(b.ctx, "th", "", "")
	if err != nil {
		t.Fatal(err)
	}
	if got, want := logOf(t, tup), wantLog(items, 2199); !slices.Equal(got, want) {
		t.Fatalf("head reads %d items, want %d", len(got), len(want))
	}
}
