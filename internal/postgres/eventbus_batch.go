package postgres

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"sync"
	"sync/atomic"
	"time"

	"github.com/jackc/pgx/v5/pgconn"
)

// BatchOptions tune a background batch writer (EventBus, NodeRecords). The zero value is the
// default everywhere.
type BatchOptions struct {
	// Buffer is how many items may wait for the writer; when it is full, new items are
	// dropped and counted (BatchStats.Dropped), never waited for. Default 8192.
	Buffer int
	// MaxBatch is the most items written by one statement. Default 512.
	MaxBatch int
	// FlushInterval is how long the first item of a batch waits for company before the
	// batch is written. Default 5ms.
	FlushInterval time.Duration
	// Logger receives flush failures and drops. Default: the DB's logger.
	Logger *slog.Logger
}

// Batch writer defaults.
const (
	defaultBuffer        = 8192
	defaultMaxBatch      = 512
	defaultFlushInterval = 5 * time.Millisecond
	flushTimeout         = 30 * time.Second
	retryMin             = 50 * time.Millisecond
	retryMax             = 5 * time.Second
	dropLogEvery         = 10 * time.Second
)

// ErrClosed is returned by calls on a closed EventBus or NodeRecords.
var ErrClosed = errors.New("postgres: closed")

// BatchStats counts what a batch writer did since it started.
type BatchStats struct {
	Queued  uint64 // items accepted
	Dropped uint64 // items dropped: buffer full, closed, or rejected by the database
	Batches uint64 // statements that wrote at least one item (for EventBus: notifications sent)
	Rows    uint64 // items written
	Errors  uint64 // failed write attempts (retried or dropped)
}

// batcher queues items in a bounded buffer and writes them from one goroutine, in batches
// of up to maxBatch, each flushed at most interval after its first item arrived. add never
// blocks; it wakes the writer only for the first item of a batch (or a full one), not for
// every item, so publishing costs a mutex and an append. One writer means batches are
// written one after another, in the order added.
type batcher[T any] struct {
	what     string // for logs: "events", "node executions"
	maxBatch int
	limit    int // items waiting before add drops
	interval time.Duration
	log      *slog.Logger
	// flush writes one batch; it is called from the writer goroutine only.
	flush func(ctx context.Context, batch []T) error
	// extra, if set, returns items to append to the next batch (called by the writer).
	extra func() []T

	mu     sync.Mutex
	buf    []T  // waiting items
	closed bool // add drops

	pending chan struct{} // capacity 1: the buffer went from empty to not empty
	full    chan struct{} // capacity 1: the buffer holds a full batch
	quit    chan struct{} // closed by close: drain and stop
	done    chan struct{} // closed when the writer has returned
	ctx     context.Context
	cancel  context.CancelFunc
	once    sync.Once

	queued, dropped, batches, rows, errs atomic.Uint64
	lastDropLog                          atomic.Int64 // unix nanos

	// settled counts the queued items the writer has written or dropped, in the order they
	// were queued; settledCh is closed (and replaced) each time it grows. See sync.
	smu       sync.Mutex
	settled   uint64
	settledCh chan struct{}
}

func newBatcher[T any](what string, o BatchOptions, log *slog.Logger, flush func(context.Context, []T) error) *batcher[T] {
	if o.Buffer <= 0 {
		o.Buffer = defaultBuffer
	}
	if o.MaxBatch <= 0 {
		o.MaxBatch = defaultMaxBatch
	}
	if o.FlushInterval <= 0 {
		o.FlushInterval = defaultFlushInterval
	}
	ctx, cancel := context.WithCancel(context.Background())
	return &batcher[T]{
		what: what, maxBatch: o.MaxBatch, limit: o.Buffer, interval: o.FlushInterval, log: log, flush: flush,
		pending: make(chan struct{}, 1), full: make(chan struct{}, 1),
		quit: make(chan struct{}), done: make(chan struct{}), ctx: ctx, cancel: cancel,
		settledCh: make(chan struct{}),
	}
}

func (b *batcher[T]) start() { go b.run() }

// add queues it without blocking; false means it was dropped (the buffer is full, or the
// batcher closed).
func (b *batcher[T]) add(it T) bool {
	b.mu.Lock()
	if b.closed || len(b.buf) >= b.limit {
		b.mu.Unlock()
		b.drop(1, "buffer full or closed")
		return false
	}
	b.buf = append(b.buf, it)
	n := len(b.buf)
	b.queued.Add(1)
	b.mu.Unlock()
	switch n {
	case 1:
		signal(b.pending)
	case b.maxBatch:
		signal(b.full)
	}
	return true
}

func signal(c chan struct{}) {
	select {
	case c <- struct{}{}:
	default:
	}
}

func (b *batcher[T]) drop(n int, why string) {
	b.dropped.Add(uint64(n))
	now := time.Now().UnixNano()
	last := b.lastDropLog.Load()
	if now-last >= int64(dropLogEvery) && b.lastDropLog.CompareAndSwap(last, now) {
		b.log.Warn("batch writer dropped items", "what", b.what, "reason", why,
			"dropped_total", b.dropped.Load())
	}
}

// sync waits until every item queued before it was called has been written (or dropped),
// asking the writer to write now rather than after its interval. It returns ctx's error if
// ctx ends first, and ErrClosed if the writer has stopped with items unsettled.
func (b *batcher[T]) sync(ctx context.Context) error {
	b.mu.Lock()
	target := b.queued.Load()
	b.mu.Unlock()
	signal(b.pending)
	signal(b.full)
	for {
		b.smu.Lock()
		settled, ch := b.settled, b.settledCh
		b.smu.Unlock()
		if settled >= target {
			return nil
		}
		select {
		case <-ch:
		case <-ctx.Done():
			return fmt.Errorf("wait for the %s writer: %w", b.what, ctx.Err())
		case <-b.done:
			return ErrClosed
		}
	}
}

func (b *batcher[T]) stats() BatchStats {
	return BatchStats{Queued: b.queued.Load(), Dropped: b.dropped.Load(), Batches: b.batches.Load(),
		Rows: b.rows.Load(), Errors: b.errs.Load()}
}

// close stops accepting items, writes what is queued and waits for the writer. When ctx ends
// first, the write in progress is abandoned, what is left is dropped and ctx's error returned.
func (b *batcher[T]) close(ctx context.Context) error {
	b.once.Do(func() {
		b.mu.Lock()
		b.closed = true
		b.mu.Unlock()
		context.AfterFunc(ctx, b.cancel)
		close(b.quit)
	})
	select {
	case <-b.done:
		return nil
	case <-ctx.Done():
		b.cancel()
		<-b.done
		return fmt.Errorf("close %s writer: %w", b.what, ctx.Err())
	}
}

func (b *batcher[T]) run() {
	defer close(b.done)
	defer b.cancel()
	var spare []T
	timer := time.NewTimer(time.Hour)
	timer.Stop()
	for {
		select {
		case <-b.pending:
		case <-b.quit:
			b.writeAll(spare)
			return
		}
		timer.Reset(b.interval)
		select {
		case <-timer.C:
		case <-b.full:
			timer.Stop()
		case <-b.quit:
			timer.Stop()
			b.writeAll(spare)
			return
		}
		spare = b.writeAll(spare)
	}
}

// writeAll takes every waiting item, leaving spare (emptied) as the buffer, and writes them
// in batches of at most maxBatch. It returns the taken slice, emptied, as the next spare.
func (b *batcher[T]) writeAll(spare []T) []T {
	b.mu.Lock()
	items := b.buf
	b.buf = spare[:0]
	b.mu.Unlock()
	select { // a full signal for the items just taken is stale
	case <-b.full:
	default:
	}
	for rest := items; ; {
		n := min(len(rest), b.maxBatch)
		batch := rest[:n:n]
		rest = rest[n:]
		if b.extra != nil && len(rest) == 0 {
			batch = append(batch, b.extra()...)
		}
		if len(batch) > 0 {
			b.writeRetrying(batch, false)
		}
		if len(rest) == 0 {
			break
		}
	}
	b.smu.Lock()
	b.settled += uint64(len(items))
	close(b.settledCh)
	b.settledCh = make(chan struct{})
	b.smu.Unlock()
	clear(items) // let the items be collected
	return items[:0]
}

// writeRetrying writes batch, retrying transient failures with backoff until the writer's
// context ends. A batch the database rejects (bad data, a limit) is split in halves and
// retried, so one bad item costs only itself. Retries and halves are written alone (see
// DB.rideOrRun), never riding in a checkpoint transaction they could fail.
func (b *batcher[T]) writeRetrying(batch []T, retry bool) {
	wait := retryMin
	for {
		ctx, cancel := context.WithTimeout(b.ctx, flushTimeout)
		if retry {
			ctx = alone(ctx)
		}
		err := b.flush(ctx, batch)
		retry = true
		cancel()
		if err == nil {
			b.batches.Add(1)
			b.rows.Add(uint64(len(batch)))
			return
		}
		b.errs.Add(1)
		if b.ctx.Err() != nil {
			b.log.Error("batch write abandoned at close", "what", b.what, "items", len(batch), "err", err)
			b.drop(len(batch), "closed while writing")
			return
		}
		if rejected(err) {
			if len(batch) > 1 {
				h := len(batch) / 2
				b.writeRetrying(batch[:h], true)
				b.writeRetrying(batch[h:], true)
				return
			}
			b.log.Error("batch write rejected", "what", b.what, "err", err)
			b.drop(1, "rejected by the database")
			return
		}
		b.log.Warn("batch write failed, retrying", "what", b.what, "items", len(batch),
			"retry_in_ms", wait.Milliseconds(), "err", err)
		t := time.NewTimer(wait)
		select {
		case <-t.C:
		case <-b.ctx.Done():
			t.Stop()
		}
		wait = min(2*wait, retryMax)
	}
}

// rejected reports whether the database refused the data itself (retrying cannot help):
// data exceptions (22), integrity violations (23), syntax or undefined objects (42) and
// program limits (54).
func rejected(err error) bool {
	var pgErr *pgconn.PgError
	if !errors.As(err, &pgErr) || len(pgErr.Code) < 2 {
		return false
	}
	switch pgErr.Code[:2] {
	case "22", "23", "42", "54":
		return true
	}
	return false
}
