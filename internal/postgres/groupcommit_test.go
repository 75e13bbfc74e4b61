package postgres_test

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"

	"weft/internal/graph"
	"weft/internal/postgres"
	"weft/internal/postgres/pgtest"
)

// gcBundle is a group-commit test's database: a saver with one commit slot, so that Puts
// arriving while it is busy queue deterministically, and a second connection that can hold
// a thread's head row locked (a Put on that thread then keeps the slot busy).
type gcBundle struct {
	t    *testing.T
	ctx  context.Context
	d    *postgres.DB
	s    *postgres.Checkpointer
	lock *pgx.Conn
}

func gcSetup(t *testing.T) gcBundle {
	t.Helper()
	ctx := context.Background()
	u := pgtest.URL(t)
	d, err := postgres.Open(ctx, u)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(d.Close)
	lock, err := pgx.Connect(ctx, u)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = lock.Close(context.Background()) })
	s := postgres.NewCheckpointer(d)
	postgres.SetGroupCommit(s, 1, 64)
	return gcBundle{t: t, ctx: ctx, d: d, s: s, lock: lock}
}

// cp is a checkpoint on thread after head, writing channel "n" (a full blob).
func gcPut(thread, head string) graph.PutRequest {
	id := newID()
	return graph.PutRequest{
		Checkpoint: graph.Checkpoint{ID: id, ParentID: head, ThreadID: thread, Source: graph.SourceLoop,
			CreatedAt: time.Now().UTC(), Versions: map[string]string{"n": id}},
		Blobs:      []graph.Blob{{Channel: "n", Version: id, Data: []byte(`"` + thread + `"`)}},
		ExpectHead: head,
	}
}

// threads starts n threads with one checkpoint each and returns their heads.
func (b gcBundle) threads(prefix string, n int) (names, heads []string) {
	b.t.Helper()
	for i := range n {
		name := fmt.Sprint(prefix, i)
		req := gcPut(name, "")
		if err := b.s.Put(b.ctx, req); err != nil {
			b.t.Fatal(err)
		}
		names, heads = append(names, name), append(heads, req.Checkpoint.ID)
	}
	return names, heads
}

// hold starts a Put on thread (head) that blocks on its head row, locked by the second
// connection, so it occupies the commit slot; release lets it finish and returns its error.
func (b gcBundle) hold(thread, head string) (release func() error) {
	b.t.Helper()
	tx, err := b.lock.Begin(b.ctx)
	if err != nil {
		b.t.Fatal(err)
	}
	if _, err := tx.Exec(b.ctx, `SELECT 1 FROM checkpoint_heads WHERE thread_id = $1 FOR UPDATE`, thread); err != nil {
		b.t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() { done <- b.s.Put(b.ctx, gcPut(thread, head)) }()
	b.waitFor("the holding Put to wait for the row lock", func() bool {
		var waiting int
		err := b.d.Pool().QueryRow(b.ctx, `SELECT count(*) FROM pg_stat_activity
			WHERE datname = current_database() AND wait_event_type = 'Lock'`).Scan(&waiting)
		return err == nil && waiting == 1
	})
	return func() error {
		if err := tx.Commit(b.ctx); err != nil {
			b.t.Fatal(err)
		}
		return <-done
	}
}

func (b gcBundle) waitFor(what string, cond func() bool) {
	b.t.Helper()
	for deadline := time.Now().Add(10 * time.Second); !cond(); time.Sleep(5 * time.Millisecond) {
		if time.Now().After(deadline) {
			b.t.Fatalf("timed out waiting for %s", what)
		}
	}
}

// head returns a thread's head id.
func (b gcBundle) head(thread string) string {
	b.t.Helper()
	tup, err := b.s.GetTuple(b.ctx, thread, "", "")
	if err != nil {
		b.t.Fatalf("head of %s: %v", thread, err)
	}
	return tup.Checkpoint.ID
}

// TestGroupCommitBatches queues 32 threads' Puts behind a busy commit slot and checks they
// are committed together, in one transaction, each with its own compare-and-set outcome:
// one Put with a stale head gets ErrConflict, the other 31 commit, and each caller returns
// only once its checkpoint is durable (visible on another connection).
func TestGroupCommitBatches(t *testing.T) {
	t.Parallel()
	b := gcSetup(t)
	names, heads := b.threads("th", 32)
	_, holderHeads := b.threads("holder", 1)
	txs0, puts0, _ := postgres.GroupCommitStats(b.s)

	release := b.hold("holder0", holderHeads[0])
	const stale = 7
	reqs := make([]graph.PutRequest, len(names))
	errs := make([]error, len(names))
	seen := make([]string, len(names))
	var wg sync.WaitGroup
	for i, name := range names {
		expect := heads[i]
		if i == stale {
			expect = newID() // not the head
		}
		reqs[i] = gcPut(name, expect)
		wg.Go(func() {
			errs[i] = b.s.Put(b.ctx, reqs[i])
			if errs[i] == nil {
				// Durable before the caller goes on: another connection sees it at once.
				var head string
				errs[i] = b.d.Pool().QueryRow(b.ctx, `SELECT head::text FROM checkpoint_heads WHERE thread_id = $1`, name).Scan(&head)
				seen[i] = head
			}
		})
	}
	b.waitFor("32 queued Puts", func() bool { return postgres.GroupCommitQueued(b.s) == len(names) })
	if err := release(); err != nil {
		t.Fatalf("holding Put: %v", err)
	}
	wg.Wait()

	for i, err := range errs {
		switch {
		case i == stale && !errors.Is(err, graph.ErrConflict):
			t.Errorf("Put with a stale head: err = %v, want ErrConflict", err)
		case i != stale && err != nil:
			t.Errorf("Put %d: %v", i, err)
		case i != stale && seen[i] != reqs[i].Checkpoint.ID:
			t.Errorf("thread %s: head seen after Put returned = %s, want %s", names[i], seen[i], reqs[i].Checkpoint.ID)
		}
	}
	if h := b.head(names[stale]); h != heads[stale] {
		t.Errorf("the conflicting Put moved its head to %s", h)
	}
	txs, puts, largest := postgres.GroupCommitStats(b.s)
	if txs-txs0 != 2 || puts-puts0 != 33 || largest != 32 {
		t.Errorf("33 Puts took %d transactions (largest batch %d), want 2: the holder's and one batch of 32",
			txs-txs0, largest)
	}
}

// TestGroupCommitFailingPut puts a Put that fails (a delta blob whose base is not stored)
// in a batch: the batch's transaction rolls back, and each request is run again alone, so
// the bad one gets its error and the others commit.
func TestGroupCommitFailingPut(t *testing.T) {
	t.Parallel()
	b := gcSetup(t)
	names, heads := b.threads("th", 8)
	_, holderHeads := b.threads("holder", 1)
	txs0, _, _ := postgres.GroupCommitStats(b.s)

	release := b.hold("holder0", holderHeads[0])
	const bad = 3
	reqs := make([]graph.PutRequest, len(names))
	errs := make([]error, len(names))
	var wg sync.WaitGroup
	for i, name := range names {
		reqs[i] = gcPut(name, heads[i])
		if i == bad {
			reqs[i].Blobs[0].Delta, reqs[i].Blobs[0].Base = true, newID()
		}
		wg.Go(func() { errs[i] = b.s.Put(b.ctx, reqs[i]) })
	}
	b.waitFor("8 queued Puts", func() bool { return postgres.GroupCommitQueued(b.s) == len(names) })
	if err := release(); err != nil {
		t.Fatalf("holding Put: %v", err)
	}
	wg.Wait()

	for i, err := range errs {
		switch {
		case i == bad && (err == nil || !strings.Contains(err.Error(), "base version is not stored")):
			t.Errorf("Put with a missing delta base: err = %v", err)
		case i != bad && err != nil:
			t.Errorf("Put %d: %v", i, err)
		case i != bad && b.head(names[i]) != reqs[i].Checkpoint.ID:
			t.Errorf("thread %s: the head did not move", names[i])
		}
	}
	if h := b.head(names[bad]); h != heads[bad] {
		t.Errorf("the failed Put moved its head to %s", h)
	}
	// The holder's, the failed batch's, then one per request.
	if txs, _, _ := postgres.GroupCommitStats(b.s); txs-txs0 != 2+int64(len(names)) {
		t.Errorf("%d transactions, want %d", txs-txs0, 2+len(names))
	}
}

// TestGroupCommitCancelQueued cancels a Put while it waits in the queue: it returns the
// context's error at once and is never sent.
func TestGroupCommitCancelQueued(t *testing.T) {
	t.Parallel()
	b := gcSetup(t)
	names, heads := b.threads("th", 1)
	_, holderHeads := b.threads("holder", 1)

	release := b.hold("holder0", holderHeads[0])
	ctx, cancel := context.WithCancel(b.ctx)
	done := make(chan error, 1)
	go func() { done <- b.s.Put(ctx, gcPut(names[0], heads[0])) }()
	b.waitFor("a queued Put", func() bool { return postgres.GroupCommitQueued(b.s) == 1 })
	cancel()
	if err := <-done; !errors.Is(err, context.Canceled) {
		t.Fatalf("cancelled queued Put: err = %v, want context.Canceled", err)
	}
	if n := postgres.GroupCommitQueued(b.s); n != 0 {
		t.Fatalf("%d Puts still queued", n)
	}
	if err := release(); err != nil {
		t.Fatalf("holding Put: %v", err)
	}
	if h := b.head(names[0]); h != heads[0] {
		t.Fatalf("the cancelled Put moved the head to %s", h)
	}
	// The slot is free again: a Put runs at once.
	if err := b.s.Put(b.ctx, gcPut(names[0], heads[0])); err != nil {
		t.Fatal(err)
	}
}
