package postgres_test

// Edge cases of delta chain segments (migration 00013), event pruning and job counts. Each test builds chains with
// a raw-JSON stepper that remembers the log every checkpoint must read, then reads every
// checkpoint back.

import (
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"sync"
	"testing"
	"time"

	"weft/internal/graph"
	"weft/internal/postgres"
)

// rcp is one checkpoint written by rthread and the log it must read.
type rcp struct {
	cp   graph.Checkpoint
	want []int
}

// rthread writes checkpoints with a "log" append channel whose deltas are given as raw
// JSON (so whitespace, null and empty arrays can be tested) and a "n" full-blob channel.
type rthread struct {
	t        *testing.T
	s        graph.Checkpointer
	id, ns   string
	head     string
	versions map[string]string
	log      []int // the log at versions
	cps      []rcp
}

func newRThread(t *testing.T, s graph.Checkpointer, id, ns string) *rthread {
	return &rthread{t: t, s: s, id: id, ns: ns, versions: map[string]string{}}
}

func (th *rthread) put(id string, blobs []graph.Blob, nv map[string]string, want []int) error {
	cp := graph.Checkpoint{ID: id, ParentID: th.head, ThreadID: th.id, NS: th.ns, Step: len(th.cps),
		Source: graph.SourceLoop, CreatedAt: time.Now().UTC(), Versions: nv}
	if err := th.s.Put(context.Background(), graph.PutRequest{Checkpoint: cp, Blobs: blobs, ExpectHead: th.head}); err != nil {
		return err
	}
	th.head, th.versions, th.log = id, nv, want
	th.cps = append(th.cps, rcp{cp, want})
	return nil
}

// stepID appends raw (a JSON array, or null) to the log as a delta (a full blob on the
// first step) whose items are items; the checkpoint gets id.
func (th *rthread) stepID(id string, raw string, items ...int) error {
	blobs := []graph.Blob{{Channel: "n", Version: id, Data: []byte(fmt.Sprint(len(th.cps)))}}
	if base, ok := th.versions["log"]; ok {
		blobs = append(blobs, graph.Blob{Channel: "log", Version: id, Delta: true, Base: base, Data: []byte(raw)})
	} else {
		blobs = append(blobs, graph.Blob{Channel: "log", Version: id, Data: []byte(raw)})
	}
	nv := maps(th.versions)
	nv["n"], nv["log"] = id, id
	return th.put(id, blobs, nv, append(slices.Clone(th.log), items...))
}

func (th *rthread) step(raw string, items ...int) {
	th.t.Helper()
	if err := th.stepID(newID(), raw, items...); err != nil {
		th.t.Fatalf("thread %s/%s step %d: %v", th.id, th.ns, len(th.cps), err)
	}
}

// stepInt appends one item written plainly.
func (th *rthread) stepInt(i int) { th.t.Helper(); th.step(fmt.Sprintf("[%d]", i), i) }

// overwrite writes the log as a full blob (a new chain root).
func (th *rthread) overwrite(items ...int) {
	th.t.Helper()
	id := newID()
	raw, _ := json.Marshal(items)
	nv := maps(th.versions)
	nv["n"], nv["log"] = id, id
	blobs := []graph.Blob{{Channel: "n", Version: id, Data: []byte("0")}, {Channel: "log", Version: id, Data: raw}}
	if err := th.put(id, blobs, nv, slices.Clone(items)); err != nil {
		th.t.Fatal(err)
	}
}

// forkFrom makes the next step branch from checkpoint k (the head stays, for the CAS).
func (th *rthread) forkFrom(k int) {
	th.versions, th.log = maps(th.cps[k].cp.Versions), slices.Clone(th.cps[k].want)
}

// forkCheckpoint writes an update-style checkpoint whose log is checkpoint k's (no append).
func (th *rthread) forkCheckpoint(k int) {
	th.t.Helper()
	th.forkFrom(k)
	id := newID()
	nv := maps(th.versions)
	nv["n"] = id
	if err := th.put(id, []graph.Blob{{Channel: "n", Version: id, Data: []byte("-1")}}, nv, th.log); err != nil {
		th.t.Fatal(err)
	}
}

func maps(m map[string]string) map[string]string {
	out := make(map[string]string, len(m))
	for k, v := range m {
		out[k] = v
	}
	return out
}

// readLog reads the log at checkpoint id ("" for the head).
func readLog(ctx context.Context, s graph.Checkpointer, thread, ns, id string) ([]int, error) {
	tup, err := s.GetTuple(ctx, thread, ns, id)
	if err != nil {
		return nil, err
	}
	var got []int
	if err := json.Unmarshal(tup.Values["log"], &got); err != nil {
		return nil, fmt.Errorf("log %q: %w", tup.Values["log"], err)
	}
	return got, nil
}

// verify reads every checkpoint th wrote (skipping those in skip) and its head.
func (th *rthread) verify(ctx context.Context, skip func(i int) bool) error {
	for i, c := range th.cps {
		if skip != nil && skip(i) {
			continue
		}
		got, err := readLog(ctx, th.s, th.id, th.ns, c.cp.ID)
		if err != nil {
			return fmt.Errorf("thread %s/%q checkpoint %d: %w", th.id, th.ns, i, err)
		}
		if !slices.Equal(got, c.want) && !(len(got) == 0 && len(c.want) == 0) {
			return fmt.Errorf("thread %s/%q checkpoint %d: log %v, want %v", th.id, th.ns, i, got, c.want)
		}
	}
	got, err := readLog(ctx, th.s, th.id, th.ns, "")
	if err != nil {
		return fmt.Errorf("thread %s/%q head: %w", th.id, th.ns, err)
	}
	if !slices.Equal(got, th.log) && !(len(got) == 0 && len(th.log) == 0) {
		return fmt.Errorf("thread %s/%q head: log %v, want %v", th.id, th.ns, got, th.log)
	}
	return nil
}

func (th *rthread) mustVerify(ctx context.Context) {
	th.t.Helper()
	if err := th.verify(ctx, nil); err != nil {
		th.t.Fatal(err)
	}
}

// TestEdgeSegmentsOddJSON: empty arrays, nulls, whitespace inside arrays, several items a
// delta and a root with items; every checkpoint of a 200-position chain.
func TestEdgeSegmentsOddJSON(t *testing.T) {
	t.Parallel()
	b := setup(t)
	th := newRThread(t, b.cp, "odd", "")
	th.step("[ -1 , -2 ]", -1, -2)
	for i := 1; i <= 200; i++ {
		switch i % 9 {
		case 1:
			th.step("null")
		case 2:
			th.step("[]")
		case 3:
			th.step("[ \n\t ]")
		case 4:
			th.step(fmt.Sprintf("[\n  %d,\r\n  %d\n]", i, i+1000), i, i+1000)
		case 5:
			th.step(fmt.Sprintf("[ %d ]", i), i)
		default:
			th.stepInt(i)
		}
	}
	if n := b.count(t, `SELECT count(*) FROM checkpoint_segments`); n != 6 {
		t.Errorf("%d segments for 200 positions, want 6", n)
	}
	th.mustVerify(b.ctx)

	// All-empty segment: 32 empty deltas in a row.
	e := newRThread(t, b.cp, "empty", "")
	e.step("null")
	for i := 1; i <= 70; i++ {
		if i%2 == 0 {
			e.step("[]")
		} else {
			e.step("null")
		}
	}
	e.stepInt(7)
	if n := b.count(t, `SELECT count(*) FROM checkpoint_segments s JOIN checkpoint_values r ON r.version = s.root AND r.channel = s.channel AND r.pos = 0 JOIN checkpoint_heads h ON h.space_id = r.space_id WHERE h.thread_id = 'empty'`); n != 2 {
		t.Errorf("%d segments for the empty chain, want 2", n)
	}
	e.mustVerify(b.ctx)
}

// TestEdgeSegmentsNonArrayPart: a delta with whitespace after its closing bracket (valid
// JSON the server cannot splice) in the middle of a chain: later reads fall back to rows.
func TestEdgeSegmentsNonArrayPart(t *testing.T) {
	t.Parallel()
	b := setup(t)
	for _, at := range []int{20, 32, 33, 40, 64} {
		th := newRThread(t, b.cp, fmt.Sprint("np", at), "")
		th.stepInt(0)
		for i := 1; i <= 100; i++ {
			if i == at {
				th.step(fmt.Sprintf(" [%d]\n", i), i)
				continue
			}
			th.stepInt(i)
		}
		th.mustVerify(b.ctx)
	}
}

// TestEdgeSegmentsForkAtBoundaries: a fork whose first delta lands at each position
// around a segment end, each branch run past the next two segment ends; every checkpoint
// of both branches.
func TestEdgeSegmentsForkAtBoundaries(t *testing.T) {
	t.Parallel()
	b := setup(t)
	for _, pos := range []int{1, 2, 31, 32, 33, 63, 64, 65, 96, 97} {
		th := newRThread(t, b.cp, fmt.Sprint("fk", pos), "")
		th.stepInt(0)
		for i := 1; i <= 100; i++ {
			th.stepInt(i)
		}
		// Checkpoint k holds positions 0..k; the fork's first delta is at pos.
		th.forkFrom(pos - 1)
		for i := range 80 {
			th.stepInt(10000 + i)
		}
		th.mustVerify(b.ctx)
		if n := b.count(t, `SELECT count(*) FROM checkpoint_forked_chains`); n == 0 {
			t.Errorf("fork at %d not marked", pos)
		}
	}
}

// TestEdgeSegmentsForkOfFork: a fork of a fork (each crossing segment ends), then a
// third from the main branch; then prune to the last few and read what is left; then
// continue the head past another segment end.
func TestEdgeSegmentsForkOfFork(t *testing.T) {
	t.Parallel()
	b := setup(t)
	th := newRThread(t, b.cp, "ff", "")
	th.stepInt(0)
	for i := 1; i <= 70; i++ {
		th.stepInt(i)
	}
	th.forkFrom(40) // next delta at 41
	for i := range 60 {
		th.stepInt(1000 + i) // positions 41..100
	}
	fork1 := len(th.cps) - 1
	th.forkFrom(fork1 - 36) // a checkpoint of the fork at position 64
	for i := range 40 {
		th.stepInt(2000 + i)
	}
	th.forkFrom(64) // main at 64
	for i := range 40 {
		th.stepInt(3000 + i)
	}
	th.mustVerify(b.ctx)

	if _, err := b.cp.Prune(b.ctx, graph.PruneOptions{Threads: []string{"ff"}, KeepLast: 3}); err != nil {
		t.Fatal(err)
	}
	last := len(th.cps) - 3
	if err := th.verify(b.ctx, func(i int) bool { return i < last }); err != nil {
		t.Fatal(err)
	}
	for i := range 70 {
		th.stepInt(4000 + i)
	}
	if err := th.verify(b.ctx, func(i int) bool { return i < last }); err != nil {
		t.Fatal(err)
	}
}

// TestEdgeSegmentsRewindPruneAppend: a checkpoint that takes the log back to an old
// version without appending, a prune that leaves only it (the later deltas and segments are
// collected), then appends past the old positions again: no fork is marked (the old rows
// are gone), new segments are built, and the log reads right.
func TestEdgeSegmentsRewindPruneAppend(t *testing.T) {
	t.Parallel()
	b := setup(t)
	for _, at := range []int{31, 32, 33, 40, 64} {
		id := fmt.Sprint("rw", at)
		th := newRThread(t, b.cp, id, "")
		th.stepInt(0)
		for i := 1; i <= 100; i++ {
			th.stepInt(i)
		}
		th.forkCheckpoint(at)
		if _, err := b.cp.Prune(b.ctx, graph.PruneOptions{Threads: []string{id}, KeepLast: 1}); err != nil {
			t.Fatal(err)
		}
		keep := len(th.cps) - 1
		for i := range 100 {
			th.stepInt(5000 + i)
		}
		if err := th.verify(b.ctx, func(i int) bool { return i < keep }); err != nil {
			t.Fatal(err)
		}
	}
}

// TestEdgeSegmentsOverwriteCollects: the log is overwritten (a new chain root) and the old
// chain pruned away: its segments (and its fork mark) go with it.
func TestEdgeSegmentsOverwriteCollects(t *testing.T) {
	t.Parallel()
	b := setup(t)
	th := newRThread(t, b.cp, "ow", "")
	th.stepInt(0)
	for i := 1; i <= 70; i++ {
		th.stepInt(i)
	}
	th.forkFrom(50)
	th.stepInt(-51)
	th.overwrite(1, 2, 3)
	for i := range 40 {
		th.stepInt(i)
	}
	if _, err := b.cp.Prune(b.ctx, graph.PruneOptions{Threads: []string{"ow"}, KeepLast: 1}); err != nil {
		t.Fatal(err)
	}
	th.verify(b.ctx, func(i int) bool { return i < len(th.cps)-1 })
	if n := b.count(t, `SELECT count(*) FROM checkpoint_segments s WHERE NOT EXISTS (SELECT 1 FROM checkpoint_values r WHERE r.version = s.root AND r.channel = s.channel AND r.space_id = s.space_id)`); n != 0 {
		t.Errorf("%d segments of a collected chain left", n)
	}
	if n := b.count(t, `SELECT count(*) FROM checkpoint_forked_chains f WHERE NOT EXISTS (SELECT 1 FROM checkpoint_values r WHERE r.version = f.root AND r.channel = f.channel AND r.space_id = f.space_id)`); n != 0 {
		t.Errorf("%d fork marks of a collected chain left (checkpoint_forked_chains is never collected)", n)
	}
}

// TestEdgeSegmentsConcurrentGroupCommit: 16 goroutines, each a thread (and a subgraph
// namespace of it) past 96 positions through one Checkpointer, with a fork in half of
// them; then every checkpoint of every thread.
func TestEdgeSegmentsConcurrentGroupCommit(t *testing.T) {
	t.Parallel()
	b := setup(t)
	const threads = 16
	var wg sync.WaitGroup
	ths := make([]*rthread, 0, 2*threads)
	errs := make(chan error, 2*threads)
	for g := range threads {
		for _, ns := range []string{"", "sub"} {
			th := newRThread(t, b.cp, fmt.Sprint("cc", g), ns)
			ths = append(ths, th)
			wg.Add(1)
			go func() {
				defer wg.Done()
				do := func(raw string, items ...int) bool {
					if err := th.stepID(newID(), raw, items...); err != nil {
						errs <- fmt.Errorf("%s/%q: %w", th.id, th.ns, err)
						return false
					}
					return true
				}
				for i := 0; i <= 110; i++ {
					raw, items := fmt.Sprintf("[%d]", g*100000+i), []int{g*100000 + i}
					if i%11 == 5 {
						raw, items = "null", nil
					}
					if !do(raw, items...) {
						return
					}
				}
				if g%2 == 0 {
					th.forkFrom(63 + g%3)
					for i := range 40 {
						if !do(fmt.Sprintf("[%d]", -i), -i) {
							return
						}
					}
				}
			}()
		}
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Fatal(err)
	}
	txs, puts, largest := postgres.GroupCommitStats(b.cp)
	t.Logf("group commit: %d puts in %d transactions, largest batch %d", puts, txs, largest)
	for _, th := range ths {
		if err := th.verify(b.ctx, nil); err != nil {
			t.Error(err)
		}
	}
	if err := b.cp.DeleteThread(b.ctx, "cc0"); err != nil {
		t.Fatal(err)
	}
	for _, tbl := range []string{"checkpoint_segments", "checkpoint_forked_chains"} {
		if n := b.count(t, `SELECT count(*) FROM `+tbl+` x WHERE NOT EXISTS (SELECT 1 FROM checkpoint_heads h WHERE h.space_id = x.space_id)`); n != 0 {
			t.Errorf("%d rows of %s left after DeleteThread", n, tbl)
		}
	}
}

// TestEdgeSegmentsSharedRootAcrossSpaces: two threads (and two namespaces of a thread)
// that hold checkpoints with the same ids (so chains with the same root UUID) but different
// items: each reads its own values, with segments (the segment and fork tables are keyed by
// space, like checkpoint_blobs).
func TestEdgeSegmentsSharedRootAcrossSpaces(t *testing.T) {
	t.Parallel()
	b := setup(t)
	ids := make([]string, 80)
	for i := range ids {
		ids[i] = newID()
	}
	for _, pair := range [][2][2]string{{{"A", ""}, {"B", ""}}, {{"C", ""}, {"C", "sub"}}} {
		x := newRThread(t, b.cp, pair[0][0], pair[0][1])
		y := newRThread(t, b.cp, pair[1][0], pair[1][1])
		for i, id := range ids {
			if err := x.stepID(id, fmt.Sprintf("[%d]", i), i); err != nil {
				t.Fatal(err)
			}
			if err := y.stepID(id, fmt.Sprintf("[%d]", -i), -i); err != nil {
				t.Fatal(err)
			}
		}
		if err := x.verify(b.ctx, nil); err != nil {
			t.Error(err)
		}
		if err := y.verify(b.ctx, nil); err != nil {
			t.Error(err)
		}
	}

	// A fork in one space marks the other space's chain forked (harmless but wrong), and
	// deleting the thread that owns the mark by space_id leaves... see below.
	d := newRThread(t, b.cp, "D", "")
	e := newRThread(t, b.cp, "E", "")
	for i := range 40 {
		id := newID()
		if err := d.stepID(id, fmt.Sprintf("[%d]", i), i); err != nil {
			t.Fatal(err)
		}
		if err := e.stepID(id, fmt.Sprintf("[%d]", i), i); err != nil {
			t.Fatal(err)
		}
	}
	e.forkFrom(10)
	e.stepInt(-11)
	// E's fork must not make D's reads differ; D keeps getting segments unless marked.
	for i := 40; i < 70; i++ {
		if err := d.stepID(newID(), fmt.Sprintf("[%d]", i), i); err != nil {
			t.Fatal(err)
		}
	}
	if err := d.verify(b.ctx, nil); err != nil {
		t.Error(err)
	}
	if err := e.verify(b.ctx, nil); err != nil {
		t.Error(err)
	}
	var dSegs int
	_ = b.db.Pool().QueryRow(b.ctx, `SELECT count(*) FROM checkpoint_segments s JOIN checkpoint_heads h ON h.space_id = s.space_id WHERE h.thread_id = 'D'`).Scan(&dSegs)
	t.Logf("thread D (linear, 69 positions) has %d segments after thread E (same root) forked", dSegs)
}

// TestEdgeSegmentsMissingDeltas: deltas between the last segment and the tip are gone
// (deleted behind the store's back): the read must fail, not return a shorter log.
func TestEdgeSegmentsMissingDeltas(t *testing.T) {
	t.Parallel()
	b := setup(t)
	th := newRThread(t, b.cp, "md", "")
	th.stepInt(0)
	for i := 1; i <= 40; i++ {
		th.stepInt(i)
	}
	if _, err := b.db.Pool().Exec(b.ctx, `DELETE FROM checkpoint_blobs WHERE channel = 'log' AND pos = 35`); err != nil {
		t.Fatal(err)
	}
	got, err := readLog(b.ctx, b.cp, "md", "", "")
	if err == nil {
		t.Fatalf("log read %v with position 35 missing; want an error", got)
	}
	t.Logf("missing delta: %v", err)
	// At the segment end itself, the deltas are not needed.
	got, err = readLog(b.ctx, b.cp, "md", "", th.cps[32].cp.ID)
	if err != nil || !slices.Equal(got, th.cps[32].want) {
		t.Fatalf("at 32: %v, %v", got, err)
	}
}

// TestEdgeSegmentsStaleSegmentRace: a segment build that overlaps a prune. An appending
// step builds the segment (and snapshot) it completes in its own transaction (migration
// 00030), under its head's lock. The build is made to wait on a conflicting uncommitted
// segment row (another session's) while a prune comes in: the prune must wait for the step,
// and after a rewind and a prune of the deltas it joined, a new branch appended over those
// positions reads its own items, not stale ones.
func TestEdgeSegmentsStaleSegmentRace(t *testing.T) {
	t.Parallel()
	b := setup(t)
	th := newRThread(t, b.cp, "race", "")
	th.stepInt(0)
	for i := 1; i <= 63; i++ {
		th.stepInt(i)
	}
	// Position 64's id is known ahead, so another session can hold its segment key.
	id64 := newID()
	var root string
	if err := b.db.Pool().QueryRow(b.ctx, `SELECT version::text FROM checkpoint_values WHERE channel = 'log' AND pos = 0`).Scan(&root); err != nil {
		t.Fatal(err)
	}
	blocker, err := b.db.Pool().Begin(b.ctx)
	if err != nil {
		t.Fatal(err)
	}
	released := false
	defer func() {
		if !released {
			_ = blocker.Rollback(b.ctx)
		}
	}()
	if _, err := blocker.Exec(b.ctx, `INSERT INTO checkpoint_segments (space_id, root, channel, hi, items) SELECT space_id, $1::uuid, 'log', 64, ''::bytea FROM checkpoint_heads WHERE thread_id = 'race'`, root); err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() { done <- th.stepID(id64, "[64]", 64) }()
	// The step waits on the segment key, holding its head.
	time.Sleep(300 * time.Millisecond)
	select {
	case err := <-done:
		t.Fatalf("the step at 64 finished while its segment's key was held: %v", err)
	default:
	}
	pruned := make(chan error, 1)
	go func() {
		_, err := b.cp.Prune(b.ctx, graph.PruneOptions{Threads: []string{"race"}, KeepLast: 60})
		pruned <- err
	}()
	select {
	case err := <-pruned:
		t.Fatalf("the prune ran while a step building a segment held the head: %v", err)
	case <-time.After(300 * time.Millisecond):
	}
	released = true
	_ = blocker.Rollback(b.ctx)
	if err := <-done; err != nil {
		t.Fatal(err)
	}
	if err := <-pruned; err != nil {
		t.Fatal(err)
	}
	// Rewind to 40 (another writer: the head is known) and prune to it.
	rw := newRThread(t, b.cp, "race", "")
	rw.head, rw.cps = id64, slices.Clone(th.cps[:64])
	rw.cps = append(rw.cps, rcp{graph.Checkpoint{ID: id64, Versions: map[string]string{}}, nil})
	rw.forkCheckpoint(40)
	if _, err := b.cp.Prune(b.ctx, graph.PruneOptions{Threads: []string{"race"}, KeepLast: 1}); err != nil {
		t.Fatal(err)
	}
	segs := b.count(t, `SELECT count(*) FROM checkpoint_segments WHERE hi = 64`)
	t.Logf("segment 64 present after the prune: %d", segs)
	keep := len(rw.cps) - 1
	for i := range 40 {
		rw.stepInt(7000 + i) // positions 41..80
	}
	if err := rw.verify(b.ctx, func(i int) bool { return i < keep }); err != nil {
		t.Fatal(err)
	}
}

// TestEdgeEventPruneUnorderedAt: events' at is the publisher's clock, ids the database's.
// Safety: no event at or after the cutoff is ever deleted. Liveness: an event whose at is
// ahead (a skewed clock, a workflow's own clock) does not keep older events from going.
func TestEdgeEventPruneUnorderedAt(t *testing.T) {
	t.Parallel()
	b := setupBus(t, postgres.EventBusOptions{})
	now := time.Now()
	old, ahead := now.Add(-10*24*time.Hour), now.Add(30*24*time.Hour)
	// ids 1..: old, fresh, old, old ... then one ahead, then old ones.
	ats := []time.Time{old, now, old, old, ahead}
	for range 10 {
		ats = append(ats, old)
	}
	for i, at := range ats {
		e := ev("th", i)
		e.At = at
		b.bus.Publish(b.ctx, "tenant", e)
		waitWritten(t, b.bus, uint64(i+1)) // one by one, so ids follow the slice
	}
	n, err := b.bus.Prune(b.ctx, now.Add(-7*24*time.Hour))
	if err != nil {
		t.Fatal(err)
	}
	got, err := b.bus.ListEvents(b.ctx, "tenant", "th", 0, 100)
	if err != nil {
		t.Fatal(err)
	}
	kept := map[int]bool{}
	for _, e := range got {
		kept[e.Step] = true
	}
	for i, at := range ats {
		if !at.Before(now.Add(-7*24*time.Hour)) && !kept[i] {
			t.Errorf("event %d (at %v) newer than the cutoff was deleted", i, at)
		}
	}
	oldLeft := 0
	for i, at := range ats {
		if at.Equal(old) && kept[i] {
			oldLeft++
		}
	}
	t.Logf("prune deleted %d events; %d of %d events older than the cutoff are left", n, oldLeft, 13)
	if oldLeft > 0 {
		t.Errorf("events older than the cutoff survive the prune behind the first newer id: %d of 13 left (not a safety issue; they go once the newer ones age out, or never while an event's at is ahead)", oldLeft)
	}
}

// TestEdgeCountJobsNeverCompacted: with no compaction at all (a process without workers),
// CountJobs still matches the jobs table after many moves, and it writes nothing.
func TestEdgeCountJobsNeverCompacted(t *testing.T) {
	t.Parallel()
	b := setupJobs(t)
	for i := range 40 {
		b.enqueue(t, tenantA, fmt.Sprint("wf", i%3))
	}
	for k := 0; ; k++ {
		got, err := b.store.Claim(b.ctx, "w", 3, time.Minute)
		if err != nil {
			t.Fatal(err)
		}
		if len(got) == 0 {
			break
		}
		for _, j := range got {
			switch k % 4 {
			case 0:
				err = b.store.Succeed(b.ctx, j.ID, "w")
			case 1:
				_, err = b.store.DeadLetter(b.ctx, j.ID, "w", jobError("E", j.RetryCount))
			case 2:
				err = b.store.Pause(b.ctx, j.ID, "w", []graph.PendingInterrupt{reviewInterrupt})
			default:
				err = b.store.Release(b.ctx, "w", []string{j.ID})
			}
			if err != nil {
				t.Fatal(err)
			}
		}
		if k > 60 {
			break
		}
	}
	rowsBefore := b.count(t, `SELECT count(*) FROM job_counts`)
	got := checkCounts(t, b, tenantA)
	if n := b.count(t, `SELECT count(*) FROM job_counts`); n != rowsBefore {
		t.Fatalf("CountJobs wrote: %d rows -> %d", rowsBefore, n)
	}
	t.Logf("%d counter rows, never compacted; counts %v", rowsBefore, got)
}
