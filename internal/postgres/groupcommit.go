package postgres

import (
	"cmp"
	"context"
	"errors"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"

	"weft/db"
)

// Group commit. Every Put is a commit, and with synchronous_commit on each commit waits for
// a WAL flush, so many threads stepping at once are bound by commits, not by work. The
// committer lets up to maxFlight commits run at once; a Put that finds a free slot and no
// queue runs its statement at once, on its own context, exactly as without the committer (at
// one thread it adds no latency). A Put that finds every slot busy queues; whichever slot
// frees first takes the whole queue (up to maxBatch) and sends it as one pipelined batch of
// the same per-request statements (CheckpointPutStep, CheckpointPutAppend or CheckpointPut) in one implicit
// transaction: one round trip, one commit, one WAL flush for all of them.
//
// Each request keeps its own compare-and-set outcome: a stale head makes its statement
// return no row (ErrConflict for that caller) without aborting the transaction, so the others
// commit. Every caller returns only after the transaction holding its request has committed,
// so a step's checkpoint is durable before the thread's next step starts; a thread has at
// most one Put in flight, so its order is kept. A statement that fails (a missing delta
// base, a deadlock with another process, …) aborts the whole transaction before anything is
// committed; the batch's requests are then run again one by one, so each gets the outcome
// it would have had alone. Statements are sorted by (thread, namespace) so that concurrent
// batches take the head rows' locks in one order.
//
// Riders. The background batch writers (event batches, node records) would each commit
// every few milliseconds on their own, and while threads are stepping those commits
// compete with the checkpoints' for the WAL flush and a connection: measured here
// (BenchmarkEventsOverhead, 8 threads), events on kept 0.82–0.87 of the steps alone and
// 0.86–0.91 riding. So while a checkpoint commit is in flight, such a statement waits to
// ride in the next batch's transaction (ride): it adds its rows to a commit that happens
// anyway. It waits at most rideWait, and less when the last commit in flight ends with no
// request queued; then it runs alone. Only a batch carries riders, never a Put running alone
// on its caller's context. A transaction carrying riders is never cancelled from here (a
// caller giving up must not cancel it, or a commit that landed would look failed and its
// riders would write their rows twice); the server bounds its lock waits instead
// (rideLockTimeout), and so the time one blocked batch holds up the writers. If the
// transaction fails, its riders run alone for their own outcome and its requests run again
// one by one on their callers' context, as above, so a rider never changes a Put's outcome;
// a batch writer's retry never rides. An event batch takes the events' advisory lock after
// the batch's Puts, so a checkpoint transaction carrying one waits for another process's
// event batch to commit: its Puts are delayed, not failed.
type groupCommitter struct {
	d         *DB
	maxFlight int // commits in flight at once (each holds a pool connection)
	maxBatch  int // requests per batch

	mu       sync.Mutex
	queue    []*putCall
	inFlight int
	riders   []*rider // statements waiting for the next batch's transaction
	rideWait time.Duration

	// For tests and benchmarks: transactions sent, requests they carried, largest batch,
	// riders carried.
	txs, puts, largest, rode atomic.Int64
}

// rider is a batch writer's statement waiting for a checkpoint transaction to carry it.
type rider struct {
	sql  string
	args []any
	// Set before done is closed: whether a transaction carried the statement, and that
	// transaction's error.
	carried bool
	err     error
	done    chan struct{}
}

// putCall is one queued Put: its parameters, and its outcome once done is closed.
type putCall struct {
	args  db.CheckpointPutParams
	row   db.CheckpointPutRow // the statement's result when err is nil
	err   error               // nil, pgx.ErrNoRows (head mismatch) or the statement's error
	done  chan struct{}
	batch *batchRun // set when taken into a batch; guarded by groupCommitter.mu
}

// batchRun is a batch in flight. Its context ends when every caller waiting for it has given
// up, so a batch no one waits for does not hold a connection forever.
type batchRun struct {
	ctx     context.Context
	cancel  context.CancelFunc
	waiting atomic.Int32
}

// Defaults: two commits in flight keep both of a small server's flushes and CPU busy (one
// batch executes while the other waits for its flush) and leave the rest of the pool to
// readers; 64 requests bound one transaction's length.
const (
	groupCommitFlight = 2
	groupCommitBatch  = 64
	// A rider waits this long for a batch to carry it, a few commits' time under load.
	groupCommitRideWait = 10 * time.Millisecond
	// rideLockTimeout bounds each lock wait of a transaction carrying riders (a head row
	// another transaction holds, the events' advisory lock), which its callers cannot cancel:
	// past it the server rolls it back, and its Puts run again alone.
	rideLockTimeout = "2s"
)

func newGroupCommitter(d *DB) *groupCommitter {
	flight := groupCommitFlight
	if n := int(d.pool.Config().MaxConns); n > 0 {
		flight = max(1, min(flight, n/2))
	}
	return &groupCommitter{d: d, maxFlight: flight, maxBatch: groupCommitBatch, rideWait: groupCommitRideWait}
}

// put runs one CheckpointPut, alone or in a batch, and returns its result and error: nil,
// pgx.ErrNoRows when the head did not match, or the statement's (or the transaction's) error.
func (g *groupCommitter) put(ctx context.Context, args db.CheckpointPutParams) (db.CheckpointPutRow, error) {
	g.mu.Lock()
	if g.inFlight < g.maxFlight {
		// A free slot means an empty queue (a slot that frees takes the queue): run now.
		g.inFlight++
		g.mu.Unlock()
		call := &putCall{args: args}
		g.commit(ctx, []*putCall{call}, false)
		g.release()
		return call.row, call.err
	}
	call := &putCall{args: args, done: make(chan struct{})}
	g.queue = append(g.queue, call)
	g.mu.Unlock()

	select {
	case <-call.done:
		return call.row, call.err
	case <-ctx.Done():
	}
	g.mu.Lock()
	if i := slices.Index(g.queue, call); i >= 0 {
		g.queue = slices.Delete(g.queue, i, i+1)
		g.mu.Unlock()
		return db.CheckpointPutRow{}, ctx.Err() // never sent
	}
	b := call.batch
	g.mu.Unlock()
	select {
	case <-call.done: // finished meanwhile: the outcome is known
		return call.row, call.err
	default:
	}
	if b.waiting.Add(-1) == 0 {
		b.cancel()
	}
	// Sent, outcome unknown: like a statement cancelled in flight.
	return db.CheckpointPutRow{}, ctx.Err()
}

// ride runs a statement that returns nothing the caller needs (sql with args, as recorded
// from a generated query) in the next batch's transaction. committed is true once that
// transaction has committed it. It is false, with a nil error, when the caller should run
// the statement alone: no checkpoint is being committed, none carried it within rideWait,
// or the transaction carrying it failed (it failed before committing, or with the
// connection, when the caller's retry may write the rows twice, as any batch writer's retry
// after a lost connection may). err is ctx's error when ctx ended after the statement was
// sent: its transaction may still commit it, so the caller must not run it again.
func (g *groupCommitter) ride(ctx context.Context, sql string, args []any) (committed bool, err error) {
	g.mu.Lock()
	if g.inFlight == 0 {
		g.mu.Unlock()
		return false, nil
	}
	r := &rider{sql: sql, args: args, done: make(chan struct{})}
	g.riders = append(g.riders, r)
	wait := g.rideWait
	g.mu.Unlock()
	t := time.NewTimer(wait)
	defer t.Stop()
	select {
	case <-r.done:
		return r.carried && r.err == nil, nil
	case <-t.C:
	case <-ctx.Done():
	}
	g.mu.Lock()
	if i := slices.Index(g.riders, r); i >= 0 {
		g.riders = slices.Delete(g.riders, i, i+1)
		g.mu.Unlock()
		return false, nil // never sent
	}
	g.mu.Unlock()
	select {
	case <-r.done:
		return r.carried && r.err == nil, nil
	case <-ctx.Done():
		return false, ctx.Err()
	}
}

// idle frees a commit slot with an empty queue; when it was the last one in flight, the
// riders waiting are sent away to run alone, since no transaction is coming to carry them.
// Call with mu held; it unlocks mu.
func (g *groupCommitter) idle() {
	g.inFlight--
	var left []*rider
	if g.inFlight == 0 {
		left, g.riders = g.riders, nil
	}
	g.mu.Unlock()
	for _, r := range left {
		close(r.done)
	}
}

// release frees the slot of a Put that ran alone; if requests queued meanwhile, the slot
// goes to a goroutine that commits them.
func (g *groupCommitter) release() {
	g.mu.Lock()
	if len(g.queue) == 0 {
		g.idle()
		return
	}
	calls, b := g.take()
	g.mu.Unlock()
	go g.drain(calls, b)
}

// take removes the next batch from the queue. Call with mu held.
func (g *groupCommitter) take() ([]*putCall, *batchRun) {
	n := min(len(g.queue), g.maxBatch)
	calls := slices.Clone(g.queue[:n])
	g.queue = slices.Delete(g.queue, 0, n)
	b := &batchRun{}
	b.ctx, b.cancel = context.WithCancel(context.Background())
	b.waiting.Store(int32(n))
	for _, c := range calls {
		c.batch = b
	}
	return calls, b
}

// drain commits batches while the queue has requests, then frees its slot.
func (g *groupCommitter) drain(calls []*putCall, b *batchRun) {
	for {
		g.commit(b.ctx, calls, true)
		b.cancel()
		for _, c := range calls {
			close(c.done)
		}
		g.mu.Lock()
		if len(g.queue) == 0 {
			g.idle()
			return
		}
		calls, b = g.take()
		g.mu.Unlock()
	}
}

// commit runs calls in one transaction and sets each one's outcome. With carry (a batch,
// whose callers wait on their own contexts) it takes the riders waiting along.
func (g *groupCommitter) commit(ctx context.Context, calls []*putCall, carry bool) {
	var riders []*rider
	if carry {
		g.mu.Lock()
		riders, g.riders = g.riders, nil
		g.mu.Unlock()
	}
	g.run(ctx, calls, riders)
}

// run runs calls and riders in one transaction, and hands the riders their outcome as soon
// as it is known. If the transaction fails after the server rolled it back, each call is
// run again alone, without the riders.
func (g *groupCommitter) run(ctx context.Context, calls []*putCall, riders []*rider) {
	g.txs.Add(1)
	g.rode.Add(int64(len(riders)))
	g.puts.Add(int64(len(calls)))
	for n := int64(len(calls)); ; {
		l := g.largest.Load()
		if n <= l || g.largest.CompareAndSwap(l, n) {
			break
		}
	}
	slices.SortStableFunc(calls, func(a, b *putCall) int {
		return cmp.Or(strings.Compare(a.args.ThreadID, b.args.ThreadID), strings.Compare(a.args.Ns, b.args.Ns))
	})
	batch := &pgx.Batch{}
	txCtx, settings := ctx, 0
	if len(riders) > 0 { // not cancelled from here (see groupCommitter): the server bounds it
		txCtx = context.WithoutCancel(ctx)
		batch.Queue(rideLocks)
		settings++
	}
	// Step statements plan well as they are; the full one needs the generic plan.
	if slices.ContainsFunc(calls, func(c *putCall) bool { return putKind(c.args) == putFull }) {
		batch.Queue(genericPlans)
		settings++
	}
	for _, c := range calls {
		sql, args := recordPut(c.args)
		batch.Queue(sql, args...)
	}
	for _, r := range riders {
		batch.Queue(r.sql, r.args...)
	}
	// One Sync ends the pipeline: the statements run in one implicit transaction, which
	// commits only if every one of them succeeds.
	br := g.d.pool.SendBatch(txCtx, batch)
	var failed error
	for range settings {
		if failed == nil {
			_, failed = br.Exec()
		}
	}
	for _, c := range calls {
		if failed != nil {
			break
		}
		r := &c.row
		if putKind(c.args) != putFull {
			c.err = br.QueryRow().Scan(&r.SpaceID)
		} else {
			c.err = br.QueryRow().Scan(&r.SpaceID, &r.SegmentChannels, &r.SegmentRoots, &r.SegmentHis)
		}
		if c.err != nil && !errors.Is(c.err, pgx.ErrNoRows) {
			failed = c.err
		}
	}
	for range riders {
		if failed != nil {
			break
		}
		_, failed = br.Exec()
	}
	if err := br.Close(); failed == nil {
		failed = err
	}
	for _, r := range riders {
		r.carried, r.err = true, failed
		close(r.done)
	}
	if failed == nil {
		return // committed: each call has its own outcome (nil or ErrNoRows)
	}
	var pgErr *pgconn.PgError
	if (len(calls) == 1 && len(riders) == 0) || !errors.As(failed, &pgErr) {
		// Alone, the error is the call's own. Otherwise the connection failed, and whether
		// the transaction committed is unknown.
		for _, c := range calls {
			c.err = failed
		}
		return
	}
	// The server rolled the transaction back: run each request alone for its own outcome.
	for _, c := range calls {
		g.run(ctx, []*putCall{c}, nil)
	}
}

// Statements a Put runs as, from the cheapest.
const (
	// putStep: CheckpointPutStep. It moves an existing head and all its values are inline
	// (no blob rows, no pending writes).
	putStep = iota
	// putAppend: CheckpointPutAppend. It writes no pending writes: it moves an existing head
	// and writes blob rows (an append channel's delta), or it creates the head.
	putAppend
	// putFull: CheckpointPut (pending writes).
	putFull
)

// putKind says which statement a Put runs as.
func putKind(args db.CheckpointPutParams) int {
	switch {
	case len(args.WriteTaskIds) > 0:
		return putFull
	case args.ExpectHead == nil || len(args.BlobChannels) > 0:
		return putAppend
	}
	return putStep
}

// genericPlans makes the transaction's CheckpointPut use the prepared statement's generic
// plan. Left to choose, PostgreSQL plans it afresh at every execution (its custom plans look
// cheaper than the generic one), which costs more server time than running it does: about
// 0.3 ms of the 0.45 ms a Put takes. set_config(…, true) lasts until the transaction ends
// (the batch's Sync), so other statements on the connection keep the default.
const genericPlans = "SELECT set_config('plan_cache_mode', 'force_generic_plan', true)"

// rideLocks sets rideLockTimeout for the rest of the transaction.
const rideLocks = "SELECT set_config('lock_timeout', '" + rideLockTimeout + "', true)"

// recordPut returns the SQL and arguments the generated CheckpointPut sends, so a batch
// queues the very statement a lone Put runs (db/ stays sqlc's only).
func recordPut(args db.CheckpointPutParams) (string, []any) {
	var r recorder
	switch putKind(args) {
	case putStep:
		_, _ = db.New(&r).CheckpointPutStep(context.Background(), db.CheckpointPutStepParams{
			ID: args.ID, ThreadID: args.ThreadID, Ns: args.Ns, ExpectHead: *args.ExpectHead,
			ParentID: args.ParentID, CreatedAt: args.CreatedAt, Step: args.Step, Source: args.Source,
			Versions: args.Versions, Meta: args.Meta, InlineChannels: args.InlineChannels, InlineData: args.InlineData,
		})
	case putAppend:
		_, _ = db.New(&r).CheckpointPutAppend(context.Background(), db.CheckpointPutAppendParams{
			ID: args.ID, ThreadID: args.ThreadID, Ns: args.Ns, ExpectHead: args.ExpectHead,
			ParentID: args.ParentID, CreatedAt: args.CreatedAt, Step: args.Step, Source: args.Source,
			Versions: args.Versions, Meta: args.Meta, InlineChannels: args.InlineChannels, InlineData: args.InlineData,
			BlobChannels: args.BlobChannels, BlobVersions: args.BlobVersions, BlobBases: args.BlobBases,
			BlobData: args.BlobData, MaxBytes: segmentMaxBytes,
		})
	default:
		_, _ = db.New(&r).CheckpointPut(context.Background(), args)
	}
	for i, a := range r.args {
		r.args[i] = rawUUIDs(a)
	}
	return r.sql, r.args
}

// rawUUIDs passes UUIDs to pgx as [16]byte, which it encodes directly: given a uuid.UUID
// it goes through driver.Valuer (a string, parsed back) and costs a tenth of a Put's
// client time.
func rawUUIDs(a any) any {
	switch v := a.(type) {
	case uuid.UUID:
		return [16]byte(v)
	case *uuid.UUID:
		if v == nil {
			return nil
		}
		return [16]byte(*v)
	case []uuid.UUID:
		out := make([][16]byte, len(v))
		for i, u := range v {
			out[i] = u
		}
		return out
	}
	return a
}

// recorder is a db.DBTX that keeps the statement it is given instead of running it.
type recorder struct {
	sql  string
	args []any
}

var errRecorded = errors.New("recorded, not run")

func (r *recorder) Exec(_ context.Context, sql string, args ...any) (pgconn.CommandTag, error) {
	r.sql, r.args = sql, args
	return pgconn.CommandTag{}, errRecorded
}

func (r *recorder) Query(_ context.Context, sql string, args ...any) (pgx.Rows, error) {
	r.sql, r.args = sql, args
	return nil, errRecorded
}

func (r *recorder) QueryRow(_ context.Context, sql string, args ...any) pgx.Row {
	r.sql, r.args = sql, args
	return recordedRow{}
}

type recordedRow struct{}

func (recordedRow) Scan(...any) error { return errRecorded }

// batchReader reads a sent batch's results in order through the generated queries: each
// query call takes the batch's next result (its SQL and arguments were queued already, as
// recorded by recorder), so db/ stays sqlc's only.
type batchReader struct{ br pgx.BatchResults }

func (r batchReader) Exec(context.Context, string, ...any) (pgconn.CommandTag, error) {
	return r.br.Exec()
}

func (r batchReader) Query(context.Context, string, ...any) (pgx.Rows, error) { return r.br.Query() }

func (r batchReader) QueryRow(context.Context, string, ...any) pgx.Row { return r.br.QueryRow() }
