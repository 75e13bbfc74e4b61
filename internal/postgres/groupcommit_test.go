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
	"weft/internal/runner"
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

// queue starts a Put of each request while the commit slot is held (see hold), and waits
// until they all wait in the queue. finish releases the slot, waits for the Puts and fails
// the test if any of them failed.
func (b gcBundle) queue(release func() error, reqs []graph.PutRequest) (finish func()) {
	b.t.Helper()
	errs := make([]error, len(reqs))
	var wg sync.WaitGroup
	for i := range reqs {
		wg.Go(func() { errs[i] = b.s.Put(b.ctx, reqs[i]) })
	}
	b.waitFor(fmt.Sprint(len(reqs), " queued Puts"), func() bool { return postgres.GroupCommitQueued(b.s) == len(reqs) })
	return func() {
		b.t.Helper()
		if err := release(); err != nil {
			b.t.Fatalf("holding Put: %v", err)
		}
		wg.Wait()
		for i, err := range errs {
			if err != nil {
				b.t.Fatalf("Put %d: %v", i, err)
			}
		}
	}
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

// rideWriters starts an event bus and a node-record writer on b's database, whose batches
// ride in the checkpoint batches' transactions, waiting up to rideWait for one. They flush
// 100ms after their first item, so what a test publishes at once makes one batch.
func (b gcBundle) rideWriters(rideWait time.Duration) (*postgres.EventBus, *postgres.NodeRecords) {
	b.t.Helper()
	postgres.SetRideWait(b.s, rideWait)
	o := postgres.BatchOptions{FlushInterval: 100 * time.Millisecond}
	bus := postgres.NewEventBus(b.d, postgres.EventBusOptions{BatchOptions: o})
	recs := postgres.NewNodeRecords(b.d, o)
	b.t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		_ = bus.Close(ctx)
		_ = recs.Close(ctx)
	})
	return bus, recs
}

// events returns the kinds of a thread's stored events, in order.
func (b gcBundle) events(bus *postgres.EventBus, thread string) []string {
	b.t.Helper()
	evs, err := bus.ListEvents(b.ctx, "acme", thread, 0, 100)
	if err != nil {
		b.t.Fatal(err)
	}
	var kinds []string
	for _, e := range evs {
		kinds = append(kinds, e.Kind)
	}
	return kinds
}

// waitRiders waits until n statements wait for a ride.
func (b gcBundle) waitRiders(n int) {
	b.t.Helper()
	b.waitFor(fmt.Sprint(n, " statements to wait for a ride"), func() bool {
		waiting, _ := postgres.GroupCommitRiders(b.s)
		return waiting == n
	})
}

// queued is n Puts of fresh threads waiting behind a held checkpoint commit, with the
// group committer's transaction and rider counts from before.
type queued struct {
	names          []string
	reqs           []graph.PutRequest
	finish         func() // releases the held commit and waits for the Puts
	txs0, carried0 int64
}

func (b gcBundle) queueBehindHolder(n int) queued {
	q := queued{}
	var heads []string
	q.names, heads = b.threads("th", n)
	_, holderHeads := b.threads("holder", 1)
	q.txs0, _, _ = postgres.GroupCommitStats(b.s)
	_, q.carried0 = postgres.GroupCommitRiders(b.s)
	q.reqs = make([]graph.PutRequest, n)
	for i, name := range q.names {
		q.reqs[i] = gcPut(name, heads[i])
	}
	q.finish = b.queue(b.hold("holder0", holderHeads[0]), q.reqs)
	return q
}

// TestGroupCommitCarriesWriters publishes an event batch and a node record while a
// checkpoint commit is in flight and Puts wait behind it: both ride in the Puts' batch,
// which commits all of it in one transaction, and a stream then reads the events.
func TestGroupCommitCarriesWriters(t *testing.T) {
	t.Parallel()
	b := gcSetup(t)
	bus, recs := b.rideWriters(time.Minute)
	q := b.queueBehindHolder(4)
	bus.Publish(b.ctx, "acme", graph.Event{Kind: "custom", Thread: "th0", Data: map[string]int{"done": 1}})
	bus.Publish(b.ctx, "acme", graph.Event{Kind: "custom", Thread: "th0", Data: map[string]int{"done": 2}})
	now := time.Now()
	recs.RecordNode(b.ctx, runner.NodeExecution{TenantID: "acme", JobID: "j1", Workflow: "w", TraceID: "tr",
		ThreadID: "th0", Node: "score", TaskID: "t1", StartedAt: now, EndedAt: now, Attempts: 1})
	b.waitRiders(2)
	if got := b.events(bus, "th0"); len(got) != 0 {
		t.Fatalf("events stored before the checkpoints committed: %v", got)
	}
	q.finish()
	if got := b.events(bus, "th0"); len(got) != 2 {
		t.Errorf("events stored = %v, want the two published", got)
	}
	execs, err := b.d.ListNodeExecutions(b.ctx, "acme", "th0")
	if err != nil || len(execs) != 1 || execs[0].Node != "score" {
		t.Errorf("node records = %+v, %v; want the one recorded", execs, err)
	}
	txs, _, _ := postgres.GroupCommitStats(b.s)
	_, carried := postgres.GroupCommitRiders(b.s)
	if txs-q.txs0 != 2 || carried-q.carried0 != 2 {
		t.Errorf("%d transactions carrying %d riders, want 2 (the holder's, and the Puts' with both riders)",
			txs-q.txs0, carried-q.carried0)
	}
}

// TestGroupCommitRiderAlone: an event batch waiting for a ride goes on alone, and is
// stored, when no checkpoint transaction will carry it: at once when the commit in flight
// ends with nothing queued, and after rideWait when that commit is stuck (here on a row
// lock), so one slow checkpoint does not hold up the process's events.
func TestGroupCommitRiderAlone(t *testing.T) {
	t.Parallel()
	b := gcSetup(t)
	bus, _ := b.rideWriters(time.Minute)
	_, holderHeads := b.threads("holder", 1)
	_, carried0 := postgres.GroupCommitRiders(b.s)

	// The commit in flight ends, nothing queued: sent away at once, not after a minute.
	release := b.hold("holder0", holderHeads[0])
	bus.Publish(b.ctx, "acme", graph.Event{Kind: "custom", Thread: "lonely"})
	b.waitRiders(1)
	if err := release(); err != nil {
		t.Fatalf("holding Put: %v", err)
	}
	b.waitFor("the event to be stored", func() bool { return len(b.events(bus, "lonely")) == 1 })

	// The commit in flight is stuck: the batch goes alone after rideWait.
	postgres.SetRideWait(b.s, 50*time.Millisecond)
	release = b.hold("holder0", b.head("holder0"))
	bus.Publish(b.ctx, "acme", graph.Event{Kind: "custom", Thread: "stuck"})
	b.waitFor("the event to be stored while the commit is stuck", func() bool { return len(b.events(bus, "stuck")) == 1 })
	if err := release(); err != nil {
		t.Fatalf("holding Put: %v", err)
	}
	if _, carried := postgres.GroupCommitRiders(b.s); carried != carried0 {
		t.Errorf("%d riders carried, want none (no batch followed)", carried-carried0)
	}
}

// TestGroupCommitRiderOutlivesCallers: every caller of a batch carrying an event batch
// gives up while the batch waits on a row lock. The transaction is not cancelled with them:
// it commits once the lock is released, the Put's checkpoint lands, and the event is stored
// once (cancelled, a commit that landed would look failed and the event be written again).
func TestGroupCommitRiderOutlivesCallers(t *testing.T) {
	t.Parallel()
	b := gcSetup(t)
	bus, _ := b.rideWriters(time.Minute)
	ctx, cancel := context.WithCancel(b.ctx)
	r := b.riderBehindLock(bus, ctx)
	b.waitFor("the batch to wait for the row lock", func() bool {
		waiting, _ := postgres.GroupCommitRiders(b.s)
		var locked int
		err := b.d.Pool().QueryRow(b.ctx, `SELECT count(*) FROM pg_stat_activity
			WHERE datname = current_database() AND wait_event_type = 'Lock'`).Scan(&locked)
		return waiting == 0 && err == nil && locked == 1
	})
	cancel()
	if err := <-r.putErr; !errors.Is(err, context.Canceled) {
		t.Fatalf("the Put whose caller gave up: err = %v, want context.Canceled", err)
	}
	time.Sleep(50 * time.Millisecond) // a cancelled transaction would end now
	if err := r.locker.Commit(b.ctx); err != nil {
		t.Fatal(err)
	}
	b.waitFor("the Put to land", func() bool { return b.head(r.thread) == r.req.Checkpoint.ID })
	b.waitFor("the bus to settle", func() bool { return bus.Stats().Rows >= 1 })
	time.Sleep(150 * time.Millisecond) // room for a second write, if one were coming
	if got := b.events(bus, "th0"); len(got) != 1 {
		t.Errorf("events stored = %v, want the one published, once", got)
	}
}

// TestGroupCommitRiderLockTimeout: a batch carrying a rider waits for a head row that another
// transaction holds longer than rideLockTimeout. The server ends the batch's transaction at
// the timeout: the rider is then written alone, without waiting for the row, and the Put, whose
// caller waits as long as it takes, runs again alone and lands once the row is free (it
// failed when the riding transaction had a deadline of its own).
func TestGroupCommitRiderLockTimeout(t *testing.T) {
	t.Parallel()
	b := gcSetup(t)
	bus, _ := b.rideWriters(time.Minute)
	r := b.riderBehindLock(bus, b.ctx)
	b.waitFor("the event, written alone", func() bool { return len(b.events(bus, "th0")) == 1 }) // row still held
	select {
	case err := <-r.putErr:
		t.Fatalf("the Put returned while its head row was still held: %v", err)
	default:
	}
	if err := r.locker.Commit(b.ctx); err != nil {
		t.Fatal(err)
	}
	if err := <-r.putErr; err != nil {
		t.Fatalf("a Put whose caller never gave up failed because a rider rode along: %v", err)
	}
	if h := b.head(r.thread); h != r.req.Checkpoint.ID {
		t.Errorf("the head is %s, want the Put's %s", h, r.req.Checkpoint.ID)
	}
	time.Sleep(150 * time.Millisecond) // room for a second write, if one were coming
	if got := b.events(bus, "th0"); len(got) != 1 {
		t.Errorf("events stored = %v, want the one published, once", got)
	}
}

// lockedRide is a Put (on ctx) waiting in a batch that carries an event as a rider, while
// another transaction (locker) holds the Put's head row.
type lockedRide struct {
	thread string
	req    graph.PutRequest
	putErr chan error
	locker pgx.Tx
}

func (b gcBundle) riderBehindLock(bus *postgres.EventBus, ctx context.Context) lockedRide {
	b.t.Helper()
	names, heads := b.threads("th", 1)
	_, holderHeads := b.threads("holder", 1)
	lock2, err := pgx.Connect(b.ctx, b.d.Pool().Config().ConnConfig.ConnString())
	if err != nil {
		b.t.Fatal(err)
	}
	b.t.Cleanup(func() { lock2.Close(context.Background()) })
	tx2, err := lock2.Begin(b.ctx)
	if err != nil {
		b.t.Fatal(err)
	}
	if _, err := tx2.Exec(b.ctx, `SELECT 1 FROM checkpoint_heads WHERE thread_id = $1 FOR UPDATE`, names[0]); err != nil {
		b.t.Fatal(err)
	}
	release := b.hold("holder0", holderHeads[0])
	r := lockedRide{thread: names[0], req: gcPut(names[0], heads[0]), putErr: make(chan error, 1), locker: tx2}
	go func() { r.putErr <- b.s.Put(ctx, r.req) }()
	b.waitFor("a queued Put", func() bool { return postgres.GroupCommitQueued(b.s) == 1 })
	bus.Publish(b.ctx, "acme", graph.Event{Kind: "custom", Thread: "th0"})
	b.waitRiders(1)
	if err := release(); err != nil {
		b.t.Fatalf("holding Put: %v", err)
	}
	return r
}

// TestGroupCommitRiderRejected rides an event batch that the database refuses (a trigger
// rejects rows holding an event of the thread "poison") with a batch of Puts: every Put still commits (the batch's transaction
// rolls back, and each Put runs again alone), and the bus stores the batch's good event and
// drops only the bad one, writing its halves alone rather than riding again.
func TestGroupCommitRiderRejected(t *testing.T) {
	t.Parallel()
	b := gcSetup(t)
	if _, err := b.d.Pool().Exec(b.ctx, `
		CREATE FUNCTION refuse_poison() RETURNS trigger LANGUAGE plpgsql AS $$
		BEGIN
			IF '4:acmepoison' = ANY (NEW.keys) THEN -- a row holding the poisoned event
				RAISE EXCEPTION 'poisoned event' USING ERRCODE = '22023';
			END IF;
			RETURN NEW;
		END $$;
		CREATE TRIGGER refuse_poison BEFORE INSERT ON events FOR EACH ROW EXECUTE FUNCTION refuse_poison();`); err != nil {
		t.Fatal(err)
	}
	bus, _ := b.rideWriters(time.Minute)
	q := b.queueBehindHolder(4)
	bus.Publish(b.ctx, "acme", graph.Event{Kind: "good", Thread: "th1"})
	bus.Publish(b.ctx, "acme", graph.Event{Kind: "poison", Thread: "poison"})
	b.waitRiders(1)
	q.finish()
	for i := range q.names {
		if h := b.head(q.names[i]); h != q.reqs[i].Checkpoint.ID {
			t.Errorf("thread %s: the head did not move", q.names[i])
		}
	}
	b.waitFor("the bus to settle the batch", func() bool {
		s := bus.Stats()
		return s.Rows+s.Dropped == 2
	})
	if got := b.events(bus, "th1"); len(got) != 1 || got[0] != "good" {
		t.Errorf("events stored = %v, want only the good one", got)
	}
	if s := bus.Stats(); s.Dropped != 1 {
		t.Errorf("events dropped = %d, want the poisoned one", s.Dropped)
	}
	// The holder's, the failed batch's, one per Put; the bus's retries went alone.
	txs, _, _ := postgres.GroupCommitStats(b.s)
	_, carried := postgres.GroupCommitRiders(b.s)
	if txs-q.txs0 != 2+int64(len(q.names)) || carried-q.carried0 != 1 {
		t.Errorf("%d transactions carrying %d riders, want %d carrying 1", txs-q.txs0, carried-q.carried0, 2+len(q.names))
	}
}
