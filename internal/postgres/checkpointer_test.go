package postgres_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"reflect"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/google/uuid"

	"weft/internal/checkpoint/checkpointtest"
	"weft/internal/graph"
	"weft/internal/postgres"
	"weft/internal/postgres/pgtest"
)

func TestConformance(t *testing.T) {
	t.Parallel()
	checkpointtest.Run(t, func(t *testing.T) graph.Checkpointer {
		return postgres.NewCheckpointer(pgtest.DB(t))
	})
}

// bundle is one test's database and saver.
type bundle struct {
	db  *postgres.DB
	cp  *postgres.Checkpointer
	ctx context.Context
}

func setup(t *testing.T) bundle {
	t.Helper()
	d := pgtest.DB(t)
	return bundle{db: d, cp: postgres.NewCheckpointer(d), ctx: context.Background()}
}

func newID() string { return uuid.Must(uuid.NewV7()).String() }

// thread appends checkpoints to one thread: each step writes "n" (a full blob) and appends
// to "log" (a delta after the first step); "fixed" is written once.
type thread struct {
	t        *testing.T
	s        graph.Checkpointer
	id, ns   string
	head     string
	versions map[string]string
	cps      []graph.Checkpoint
}

func newThread(t *testing.T, s graph.Checkpointer, id string) *thread {
	return &thread{t: t, s: s, id: id, versions: map[string]string{}}
}

func (th *thread) step(items ...int) graph.Checkpoint {
	th.t.Helper()
	i := len(th.cps)
	cid := newID()
	blobs := []graph.Blob{{Channel: "n", Version: cid, Data: []byte(fmt.Sprint(i))}}
	logData, _ := json.Marshal(items)
	if i == 0 {
		blobs = append(blobs, graph.Blob{Channel: "fixed", Version: cid, Data: []byte(`"constant"`)},
			graph.Blob{Channel: "log", Version: cid, Data: logData})
	} else {
		blobs = append(blobs, graph.Blob{Channel: "log", Version: cid, Delta: true, Base: th.versions["log"], Data: logData})
	}
	nv := map[string]string{}
	for k, v := range th.versions {
		nv[k] = v
	}
	for _, b := range blobs {
		nv[b.Channel] = cid
	}
	cp := graph.Checkpoint{ID: cid, ParentID: th.head, ThreadID: th.id, NS: th.ns, Step: i, Source: graph.SourceLoop,
		CreatedAt: time.Now().UTC(), Versions: nv}
	if err := th.s.Put(context.Background(), graph.PutRequest{Checkpoint: cp, Blobs: blobs, ExpectHead: th.head}); err != nil {
		th.t.Fatalf("put step %d: %v", i, err)
	}
	th.head, th.versions = cid, nv
	th.cps = append(th.cps, cp)
	return cp
}

func logOf(t *testing.T, tup *graph.Tuple) []int {
	t.Helper()
	var got []int
	if err := json.Unmarshal(tup.Values["log"], &got); err != nil {
		t.Fatalf("log = %s: %v", tup.Values["log"], err)
	}
	return got
}

// TestConcurrentPutsAcrossPools races Puts on one head from two pools, as two processes
// would: in every round exactly one wins and the rest get ErrConflict.
func TestConcurrentPutsAcrossPools(t *testing.T) {
	t.Parallel()
	u := pgtest.URL(t)
	ctx := context.Background()
	savers := make([]*postgres.Checkpointer, 2)
	for i := range savers {
		d, err := postgres.Open(ctx, u)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(d.Close)
		savers[i] = postgres.NewCheckpointer(d)
	}
	const perPool, rounds = 10, 5
	head := ""
	for round := range rounds {
		var wins, conflicts atomic.Int32
		var winner atomic.Value
		var wg sync.WaitGroup
		start := make(chan struct{})
		for _, s := range savers {
			for range perPool {
				wg.Add(1)
				go func() {
					defer wg.Done()
					cp := graph.Checkpoint{ID: newID(), ParentID: head, ThreadID: "th", Step: round,
						Source: graph.SourceLoop, CreatedAt: time.Now(), Versions: map[string]string{}}
					<-start
					err := s.Put(ctx, graph.PutRequest{Checkpoint: cp, ExpectHead: head})
					switch {
					case err == nil:
						wins.Add(1)
						winner.Store(cp.ID)
					case errors.Is(err, graph.ErrConflict):
						conflicts.Add(1)
					default:
						t.Errorf("put: %v", err)
					}
				}()
			}
		}
		close(start)
		wg.Wait()
		if wins.Load() != 1 || conflicts.Load() != 2*perPool-1 {
			t.Fatalf("round %d (expect head %q): %d won, %d conflicted; want exactly one winner", round, head, wins.Load(), conflicts.Load())
		}
		head = winner.Load().(string)
		for _, s := range savers {
			tup, err := s.GetTuple(ctx, "th", "", "")
			if err != nil || tup.Checkpoint.ID != head {
				t.Fatalf("round %d: head = %v, %v; want the winner %s", round, tup, err, head)
			}
		}
	}
	all, err := savers[0].List(ctx, "th", "", graph.ListOptions{})
	if err != nil || len(all) != rounds {
		t.Fatalf("%d checkpoints stored (%v), want %d: losers must leave nothing behind", len(all), err, rounds)
	}
}

// TestStorageGrowsWithWhatChanged checks the rows a thread leaves: a channel written once is
// stored once, and an append channel's rows hold only the items each step appended.
func TestStorageGrowsWithWhatChanged(t *testing.T) {
	t.Parallel()
	b := setup(t)
	th := newThread(t, b.cp, "th")
	const n = 30
	for i := range n {
		th.step(i)
	}
	rows, err := b.db.Pool().Query(b.ctx, `SELECT channel, count(*), max(pos), max(length(data)), count(DISTINCT root)
		FROM checkpoint_values GROUP BY channel ORDER BY channel`)
	if err != nil {
		t.Fatal(err)
	}
	got := map[string][4]int{}
	for rows.Next() {
		var ch string
		var count, maxPos, maxLen, roots int
		if err := rows.Scan(&ch, &count, &maxPos, &maxLen, &roots); err != nil {
			t.Fatal(err)
		}
		got[ch] = [4]int{count, maxPos, maxLen, roots}
	}
	if err := rows.Err(); err != nil {
		t.Fatal(err)
	}
	want := map[string][4]int{
		"fixed": {1, 0, len(`"constant"`), 1},
		"n":     {n, 0, 2, n},               // a full blob each step
		"log":   {n, n - 1, len("[29]"), 1}, // one chain: the first full, then one item per delta
	}
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("blob rows per channel (count, max pos, max bytes, roots) = %v, want %v", got, want)
	}
	tup, err := b.cp.GetTuple(b.ctx, "th", "", "")
	if err != nil {
		t.Fatal(err)
	}
	if l := logOf(t, tup); len(l) != n || l[n-1] != n-1 {
		t.Fatalf("log at the head = %v", l)
	}
}

// TestReadsAreOneStatement: GetTuple, List and PutWrites send one statement whatever the
// thread's length.
func TestReadsAreOneStatement(t *testing.T) {
	t.Parallel()
	d, count, err := postgres.OpenCounting(context.Background(), pgtest.URL(t))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(d.Close)
	s := postgres.NewCheckpointer(d)
	ctx := context.Background()
	for _, n := range []int{2, 150} {
		th := newThread(t, s, fmt.Sprint("th-", n))
		for i := range n {
			th.step(i)
		}
		for _, id := range []string{"", th.cps[0].ID, th.cps[n/2].ID} {
			count.Store(0)
			tup, err := s.GetTuple(ctx, th.id, "", id)
			if err != nil {
				t.Fatal(err)
			}
			if got := count.Load(); got != 1 {
				t.Errorf("GetTuple(%q) on a %d-checkpoint thread sent %d statements, want 1", id, n, got)
			}
			want := n
			if id != "" {
				want = tup.Checkpoint.Step + 1
			}
			if l := logOf(t, tup); len(l) != want {
				t.Errorf("log has %d items, want %d", len(l), want)
			}
		}
		count.Store(0)
		if _, err := s.List(ctx, th.id, "", graph.ListOptions{Limit: 10}); err != nil {
			t.Fatal(err)
		}
		if err := s.PutWrites(ctx, th.id, "", th.head, []graph.PendingWrite{{TaskID: "t", Channel: "n", Data: []byte("1")}}); err != nil {
			t.Fatal(err)
		}
		if got := count.Load(); got != 2 {
			t.Errorf("List + PutWrites sent %d statements, want 2", got)
		}
		count.Store(0)
		next := th.step(n)
		if got := count.Load(); got != 1 {
			t.Errorf("Put sent %d statements, want 1 (%s)", got, next.ID)
		}
	}
}

// TestForkedDeltaChains: a fork appends to an old version of a chain; both branches read
// their own items, and pruning keeps what the kept branch needs.
func TestForkedDeltaChains(t *testing.T) {
	t.Parallel()
	b := setup(t)
	th := newThread(t, b.cp, "th")
	for i := range 6 {
		th.step(i)
	}
	// Fork from checkpoint 2: the next checkpoint appends to log@2, not to the head's log.
	th.versions = th.cps[2].Versions
	th.step(100)
	th.step(101)
	fork := th.cps[len(th.cps)-1]

	cases := map[string][]int{
		fork.ID:            {0, 1, 2, 100, 101},
		th.cps[6].ID:       {0, 1, 2, 100},
		th.cps[5].ID:       {0, 1, 2, 3, 4, 5},
		th.cps[2].ID:       {0, 1, 2},
		th.cps[0].ID:       {0},
		"" /* the head */ : {0, 1, 2, 100, 101},
	}
	for id, want := range cases {
		tup, err := b.cp.GetTuple(b.ctx, "th", "", id)
		if err != nil {
			t.Fatal(err)
		}
		if got := logOf(t, tup); !reflect.DeepEqual(got, want) {
			t.Errorf("log at %s = %v, want %v", id, got, want)
		}
	}

	n, err := b.cp.Prune(b.ctx, graph.PruneOptions{Threads: []string{"th"}, KeepLast: 2})
	if err != nil || n != (graph.PruneResult{Checkpoints: 6}) {
		t.Fatalf("prune = %+v, %v; want 6 removed", n, err)
	}
	tup, err := b.cp.GetTuple(b.ctx, "th", "", "")
	if err != nil {
		t.Fatal(err)
	}
	if got := logOf(t, tup); !reflect.DeepEqual(got, []int{0, 1, 2, 100, 101}) {
		t.Fatalf("after prune the head reads log = %v", got)
	}
	if string(tup.Values["fixed"]) != `"constant"` || string(tup.Values["n"]) != "7" {
		t.Fatalf("after prune the head reads fixed=%s n=%s", tup.Values["fixed"], tup.Values["n"])
	}
	var blobs int
	if err := b.db.Pool().QueryRow(b.ctx, `SELECT count(*) FROM checkpoint_values WHERE channel = 'log'`).Scan(&blobs); err != nil {
		t.Fatal(err)
	}
	// Needed: log@0..2 and the fork's two deltas. log@3 and log@4 sit below the live tip's
	// position on the pruned branch and may stay; log@5 must go.
	if blobs < 5 || blobs > 7 {
		t.Fatalf("%d log blobs left after prune, want 5 to 7", blobs)
	}
	if _, err := b.cp.GetTuple(b.ctx, "th", "", th.cps[5].ID); !errors.Is(err, graph.ErrNotFound) {
		t.Fatalf("pruned checkpoint still readable: %v", err)
	}
}

func TestDeltaWithMissingBaseFails(t *testing.T) {
	t.Parallel()
	b := setup(t)
	th := newThread(t, b.cp, "th")
	th.step(0)
	cid := newID()
	cp := graph.Checkpoint{ID: cid, ParentID: th.head, ThreadID: "th", Step: 1, Source: graph.SourceLoop, CreatedAt: time.Now(),
		Versions: map[string]string{"log": cid, "n": th.versions["n"], "fixed": th.versions["fixed"]}}
	err := b.cp.Put(b.ctx, graph.PutRequest{Checkpoint: cp, ExpectHead: th.head,
		Blobs: []graph.Blob{{Channel: "log", Version: cid, Delta: true, Base: newID(), Data: []byte("[1]")}}})
	if err == nil || errors.Is(err, graph.ErrConflict) || !strings.Contains(err.Error(), "base") {
		t.Fatalf("put with a missing delta base: err = %v", err)
	}
	tup, err := b.cp.GetTuple(b.ctx, "th", "", "")
	if err != nil || tup.Checkpoint.ID != th.head {
		t.Fatalf("a failed put moved the head: %v, %v", tup, err)
	}
}

// TestNullAndEmptyArraysInChains: an append channel's nil slice is stored as null; deltas
// onto it and empty deltas concatenate to a proper array.
func TestNullAndEmptyArraysInChains(t *testing.T) {
	t.Parallel()
	b := setup(t)
	parts := []string{"null", "[]", `[{"a": 1}]`, " [ ] ", `["x","y"]`}
	head, base := "", ""
	for i, p := range parts {
		cid := newID()
		blob := graph.Blob{Channel: "log", Version: cid, Data: []byte(p)}
		if i > 0 {
			blob.Delta, blob.Base = true, base
		}
		cp := graph.Checkpoint{ID: cid, ParentID: head, ThreadID: "th", Step: i, Source: graph.SourceLoop, CreatedAt: time.Now(),
			Versions: map[string]string{"log": cid}}
		if err := b.cp.Put(b.ctx, graph.PutRequest{Checkpoint: cp, Blobs: []graph.Blob{blob}, ExpectHead: head}); err != nil {
			t.Fatal(err)
		}
		head, base = cid, cid
	}
	tup, err := b.cp.GetTuple(b.ctx, "th", "", "")
	if err != nil {
		t.Fatal(err)
	}
	if got := string(tup.Values["log"]); got != `[{"a": 1},"x","y"]` {
		t.Fatalf("log = %s", got)
	}
}

func TestDuplicateCheckpointIDConflicts(t *testing.T) {
	t.Parallel()
	b := setup(t)
	th := newThread(t, b.cp, "th")
	cp := th.step(0)
	err := b.cp.Put(b.ctx, graph.PutRequest{Checkpoint: cp, ExpectHead: th.head})
	if !errors.Is(err, graph.ErrConflict) {
		t.Fatalf("saving a checkpoint id twice: err = %v, want ErrConflict", err)
	}
}

func TestMalformedIDs(t *testing.T) {
	t.Parallel()
	b := setup(t)
	th := newThread(t, b.cp, "th")
	th.step(0)
	upper := strings.ToUpper(th.head)
	for _, id := range []string{"nope", upper, "{" + th.head + "}"} {
		if _, err := b.cp.GetTuple(b.ctx, "th", "", id); !errors.Is(err, graph.ErrNotFound) {
			t.Errorf("GetTuple(%q): err = %v, want ErrNotFound", id, err)
		}
		if err := b.cp.PutWrites(b.ctx, "th", "", id, nil); !errors.Is(err, graph.ErrNotFound) {
			t.Errorf("PutWrites(%q): err = %v, want ErrNotFound", id, err)
		}
	}
	cp := graph.Checkpoint{ID: newID(), ThreadID: "th", Source: graph.SourceLoop, CreatedAt: time.Now()}
	if err := b.cp.Put(b.ctx, graph.PutRequest{Checkpoint: cp, ExpectHead: upper}); !errors.Is(err, graph.ErrConflict) {
		t.Errorf("put expecting a head that is no id: err = %v, want ErrConflict", err)
	}
	bad := cp
	bad.ID = "checkpoint-1"
	if err := b.cp.Put(b.ctx, graph.PutRequest{Checkpoint: bad, ExpectHead: th.head}); err == nil || errors.Is(err, graph.ErrConflict) {
		t.Errorf("put with id %q: err = %v, want a validation error", bad.ID, err)
	}
	bad = cp
	bad.Versions = map[string]string{"n": "v1"}
	if err := b.cp.Put(b.ctx, graph.PutRequest{Checkpoint: bad, ExpectHead: th.head}); err == nil || errors.Is(err, graph.ErrConflict) {
		t.Errorf("put with version %q: err = %v, want a validation error", "v1", err)
	}
	if _, err := b.cp.List(b.ctx, "th", "", graph.ListOptions{Before: "x"}); err == nil {
		t.Error("List before a malformed id: no error")
	}
}

// TestCheckpointRoundTrip: every checkpoint field comes back as saved (raw JSON compacted, as
// encoding/json writes it; the engine's is compact already, and comes back byte for byte);
// pending writes ordered by task, seq and channel, the last of duplicates kept.
func TestCheckpointRoundTrip(t *testing.T) {
	t.Parallel()
	b := setup(t)
	parent := newThread(t, b.cp, "th")
	parent.step(0)
	created := time.Date(2026, 3, 1, 12, 30, 45, 123456000, time.UTC)
	cp := graph.Checkpoint{ID: newID(), ParentID: parent.head, ThreadID: "th", Step: 7, Source: graph.SourceFork,
		CreatedAt: created, Versions: parent.versions,
		Next:       []graph.PlannedTask{{ID: "t1", Node: "a"}, {ID: "t2", Node: "b", Push: true, Arg: json.RawMessage(`{"k":  [1, 2]}`)}},
		Barriers:   map[string][]string{"join": {"a", "b"}},
		Resume:     map[string]json.RawMessage{"i1": json.RawMessage(`{"ok" : true}`)},
		SkipBefore: true, Nodes: []string{"a", "b"}, ForkOf: parent.head}
	writes := []graph.PendingWrite{
		{TaskID: "t2", Node: "b", Seq: 0, Channel: "n", Data: []byte("1")},
		{TaskID: "t1", Node: "a", Seq: 1, Channel: "n", Data: []byte("2")},
		{TaskID: "t1", Node: "a", Seq: 0, Channel: graph.WriteInterrupt, Data: []byte(`{"id":"i"}`)},
		{TaskID: "t2", Node: "b", Seq: 0, Channel: "n", Data: []byte("3")},
	}
	if err := b.cp.Put(b.ctx, graph.PutRequest{Checkpoint: cp, Writes: writes, ExpectHead: parent.head}); err != nil {
		t.Fatal(err)
	}
	tup, err := b.cp.GetTuple(b.ctx, "th", "", "")
	if err != nil {
		t.Fatal(err)
	}
	want := cp
	want.Next = []graph.PlannedTask{{ID: "t1", Node: "a"}, {ID: "t2", Node: "b", Push: true, Arg: json.RawMessage(`{"k":[1,2]}`)}}
	want.Resume = map[string]json.RawMessage{"i1": json.RawMessage(`{"ok":true}`)}
	got := tup.Checkpoint
	if !got.CreatedAt.Equal(created) {
		t.Errorf("created at = %v, want %v", got.CreatedAt, created)
	}
	got.CreatedAt = created
	if fmt.Sprintf("%+v", got) != fmt.Sprintf("%+v", want) {
		t.Errorf("checkpoint =\n%+v\nwant\n%+v", got, want)
	}
	wantWrites := []graph.PendingWrite{writes[2], writes[1], writes[3]}
	if !reflect.DeepEqual(tup.Writes, wantWrites) {
		t.Errorf("writes = %+v\nwant %+v", tup.Writes, wantWrites)
	}
	listed, err := b.cp.List(b.ctx, "th", "", graph.ListOptions{Limit: 1})
	if err != nil || len(listed) != 1 || listed[0].ID != cp.ID || string(listed[0].Resume["i1"]) != `{"ok":true}` {
		t.Fatalf("list = %+v, %v", listed, err)
	}
}

// A resume checkpoint stored with its base's fork mark (as the engine wrote them before it
// stopped copying the mark) reads back without it, in the head and in the history: only the
// checkpoint that branched shows as a fork, in the console and the API alike.
func TestResumeCheckpointDropsCopiedForkMark(t *testing.T) {
	t.Parallel()
	b := setup(t)
	th := newThread(t, b.cp, "resumed")
	first := th.step(0)
	cp := graph.Checkpoint{ID: newID(), ParentID: th.head, ThreadID: "resumed", Step: 1, Source: graph.SourceResume,
		CreatedAt: time.Now().UTC(), Versions: th.versions, ForkOf: first.ID}
	if err := b.cp.Put(b.ctx, graph.PutRequest{Checkpoint: cp, ExpectHead: th.head}); err != nil {
		t.Fatal(err)
	}
	tup, err := b.cp.GetTuple(b.ctx, "resumed", "", "")
	if err != nil || tup.Checkpoint.ID != cp.ID || tup.Checkpoint.ForkOf != "" {
		t.Fatalf("head = %+v, %v: want %s without a fork mark", tup, err, cp.ID)
	}
	listed, err := b.cp.List(b.ctx, "resumed", "", graph.ListOptions{Limit: 1})
	if err != nil || len(listed) != 1 || listed[0].ForkOf != "" {
		t.Fatalf("history = %+v, %v: want the resume without a fork mark", listed, err)
	}
}

// TestPruneAllThreads runs KeepLast and OlderThan over more threads than one batch holds.
func TestPruneAllThreads(t *testing.T) {
	t.Parallel()
	b := setup(t)
	const threads = 130
	for i := range threads {
		th := newThread(t, b.cp, fmt.Sprint("th-", i))
		th.step(0)
		th.step(1)
		th.step(2)
		if i%2 == 0 { // a subgraph namespace too
			sub := newThread(t, b.cp, th.id)
			sub.ns = "child"
			sub.step(0)
			sub.step(1)
		}
	}
	n, err := b.cp.Prune(b.ctx, graph.PruneOptions{KeepLast: 1})
	if err != nil {
		t.Fatal(err)
	}
	if want := (graph.PruneResult{Checkpoints: threads*2 + threads/2}); n != want {
		t.Fatalf("KeepLast 1 over every thread removed %+v, want %+v", n, want)
	}
	tup, err := b.cp.GetTuple(b.ctx, "th-7", "", "")
	if err != nil || len(logOf(t, tup)) != 3 {
		t.Fatalf("head after prune: %v, %v", tup, err)
	}
	n, err = b.cp.Prune(b.ctx, graph.PruneOptions{OlderThan: time.Now().Add(time.Hour)})
	if err != nil {
		t.Fatal(err)
	}
	if want := (graph.PruneResult{Checkpoints: threads + threads/2, Threads: threads}); n != want {
		t.Fatalf("OlderThan over every thread removed %+v, want %+v (a subgraph namespace is not a thread)", n, want)
	}
	var left int
	if err := b.db.Pool().QueryRow(b.ctx, `SELECT (SELECT count(*) FROM checkpoint_heads) + (SELECT count(*) FROM checkpoints)
		+ (SELECT count(*) FROM checkpoint_blobs) + (SELECT count(*) FROM checkpoint_writes)`).Scan(&left); err != nil {
		t.Fatal(err)
	}
	if left != 0 {
		t.Fatalf("%d rows left after pruning every thread", left)
	}
}

// TestOpenMigratesConcurrently: processes starting together on an empty database migrate it
// once, under goose's advisory lock.
func TestOpenMigratesConcurrently(t *testing.T) {
	t.Parallel()
	u := pgtest.EmptyURL(t)
	ctx := context.Background()
	var wg sync.WaitGroup
	dbs := make([]*postgres.DB, 4)
	errs := make([]error, len(dbs))
	for i := range dbs {
		wg.Add(1)
		go func() {
			defer wg.Done()
			dbs[i], errs[i] = postgres.Open(ctx, u)
		}()
	}
	wg.Wait()
	for i, err := range errs {
		if err != nil {
			t.Fatalf("open %d: %v", i, err)
		}
		t.Cleanup(dbs[i].Close)
	}
	var applied int
	if err := dbs[0].Pool().QueryRow(ctx, `SELECT count(*) FROM goose_db_version WHERE version_id > 0`).Scan(&applied); err != nil {
		t.Fatal(err)
	}
	if applied < 2 {
		t.Fatalf("%d migrations recorded", applied)
	}
	if err := postgres.Migrate(ctx, u, nil); err != nil {
		t.Fatalf("migrating a migrated database: %v", err)
	}
	th := newThread(t, postgres.NewCheckpointer(dbs[1]), "th")
	th.step(0)
}
