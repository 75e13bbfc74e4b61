package postgres

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"sync"
	"sync/atomic"
	"time"

	"github.com/jackc/pgx/v5"

	"weft/db"
	"weft/internal/graph"
	"weft/internal/runner"
)

// StoredEvent is an event read back from the bus: its id (the SSE event id, and the afterID
// that resumes a subscription), its tenant, and the event, whose Data is the stored JSON as a
// json.RawMessage (nil when the event had none). It encodes to JSON as the event's fields
// plus "id" and "tenant_id".
type StoredEvent struct {
	ID       int64  `json:"id"`
	TenantID string `json:"tenant_id"`
	graph.Event

	// memo is shared by the copies of one event that the process's reader hands to every
	// subscription it matches (nil for an event read by ListEvents or a replay): see Encode.
	memo *eventMemo
}

// Encode returns encode(e), computed once per event for all the subscriptions the process's
// reader fans it out to, and shared by them (so N streams following a thread encode each of
// its events once, not N times); key names the encoding (a comparable value, distinct per
// encode function). For an event not from the fan-out (a replay, ListEvents) it is computed
// now. The bytes returned are shared: never modify them.
func (e StoredEvent) Encode(key any, encode func(StoredEvent) ([]byte, error)) ([]byte, error) {
	if e.memo == nil {
		return encode(e)
	}
	return e.memo.get(key, func() ([]byte, error) { return encode(e) })
}

// eventMemo holds an event's encodings, one per key; there are few keys (one per kind of
// stream), so a slice searched under a mutex does, and the encoding itself runs outside it,
// once (the subscribers asking meanwhile wait for it).
type eventMemo struct {
	mu      sync.Mutex
	entries []*memoEntry
}

type memoEntry struct {
	key  any
	once sync.Once
	b    []byte
	err  error
}

func (m *eventMemo) get(key any, encode func() ([]byte, error)) ([]byte, error) {
	m.mu.Lock()
	var ent *memoEntry
	for _, x := range m.entries {
		if x.key == key {
			ent = x
			break
		}
	}
	if ent == nil {
		ent = &memoEntry{key: key}
		m.entries = append(m.entries, ent)
	}
	m.mu.Unlock()
	ent.once.Do(func() { ent.b, ent.err = encode() })
	return ent.b, ent.err
}

// Subscription tuning.
const (
	readPage = 500 // events read per query
	readRows = 64  // rows (of up to eventsPerRow events) the reader reads per query
	// listenerCheck is how long the listener waits for a notification before it pings its
	// connection, so a dead connection is noticed and replaced.
	listenerCheck = 30 * time.Second
	pingTimeout   = 5 * time.Second
)

// Subscribe streams the events of one thread of a tenant (threadID "" : every thread of the
// tenant, for dashboards) with an id greater than afterID: first those already stored
// (replay: a late subscriber, or an SSE client reconnecting with Last-Event-ID), then new ones
// as they are written, by any process, in id order, without gaps or duplicates. The channel
// is closed when ctx ends or the bus closes.
//
// Fan-out: ONE reader per EventBus tails the events table (id > the last id it read, all
// tenants), woken by the process's LISTEN notification and every PollInterval in case a
// notification was lost, and hands each new event to the subscriptions of its (tenant,
// thread) and of its tenant in memory: a thousand idle subscriptions cost no query. A
// subscription registers with the reader before it replays from the table, so what the
// reader dispatches meanwhile waits in its buffer and is delivered after the replay, deduped
// by id (batches commit in id order: what the reader has read is in the table, and what it
// has not is dispatched later). A subscriber that does not keep up holds up nobody: its
// buffer is bounded (SubscriberBuffer), and on overflow it drops the buffer and replays from
// the table after the last id it delivered, then rejoins the live stream the same way.
func (b *EventBus) Subscribe(ctx context.Context, tenantID, threadID string, afterID int64) (<-chan StoredEvent, error) {
	out := make(chan StoredEvent, subOut)
	err := b.subscribe(ctx, tenantID, threadID, afterID, func(ctx context.Context, e StoredEvent) error {
		select {
		case out <- e:
			return nil
		case <-ctx.Done():
			return ctx.Err()
		}
	}, func() { close(out) })
	if err != nil {
		return nil, err
	}
	return out, nil
}

// SubscribeFunc is Subscribe with a callback instead of a channel: deliver is called with
// each event, in order, by the subscription's own goroutine. An error from deliver ends the
// subscription. The returned channel is closed once the subscription has ended (ctx ended,
// the bus closed, or deliver failed): deliver is not called after that. deliver must not
// block for long: Close waits for it. (OpenStream does the same on the caller's goroutine.)
func (b *EventBus) SubscribeFunc(ctx context.Context, tenantID, threadID string, afterID int64, deliver func(StoredEvent) error) (done <-chan struct{}, err error) {
	ended := make(chan struct{})
	err = b.subscribe(ctx, tenantID, threadID, afterID, func(_ context.Context, e StoredEvent) error { return deliver(e) },
		func() { close(ended) })
	if err != nil {
		return nil, err
	}
	return ended, nil
}

// subscribe starts a subscription that hands its events to deliver on a goroutine of its own
// (see serve) and calls end when it has ended.
func (b *EventBus) subscribe(ctx context.Context, tenantID, threadID string, afterID int64,
	deliver func(context.Context, StoredEvent) error, end func()) error {
	st, err := b.OpenStream(ctx, tenantID, threadID, afterID)
	if err != nil {
		return err
	}
	go b.serve(st, deliver, end)
	return nil
}

// Stream is a subscription (see Subscribe) without a goroutine of its own: its owner waits
// for Ready and then calls Deliver, which hands it the events available, on the owner's
// goroutine. So a server's SSE stream costs the handler's goroutine only, and an event is
// written by the goroutine that is woken for it. Close must be called once the owner is
// done with it (the bus's Close waits for that).
type Stream struct {
	b       *EventBus
	s       *subscription
	ctx     context.Context
	last    int64 // the last id delivered
	head    int64 // the reader's position when the stream joined
	begun   bool  // the first Deliver has checked last against the table
	replay  bool  // what is due must be read from the table
	wait    time.Duration
	retry   *time.Timer // a failed replay's wake-up, at retryAt
	retryAt time.Time
	spare   []*StoredEvent
}

// OpenStream opens a Stream of the events of one thread of a tenant (threadID "": the
// tenant's) after afterID, as Subscribe does. It ends when ctx ends or the bus closes (Done).
func (b *EventBus) OpenStream(ctx context.Context, tenantID, threadID string, afterID int64) (*Stream, error) {
	if tenantID == "" {
		return nil, errors.New("subscribe to events: tenant id is required")
	}
	ctx, cancel := context.WithCancel(ctx)
	s := &subscription{tenant: tenantID, thread: threadID, cancel: cancel, max: b.subBuf,
		wake: make(chan struct{}, 1)}
	head, err := b.subs.add(ctx, s, b.startReader)
	if err != nil {
		cancel()
		return nil, fmt.Errorf("subscribe to events: %w", err)
	}
	// Everything up to head is in the table; everything after it will be dispatched to s.
	last := max(afterID, 0)
	return &Stream{b: b, s: s, ctx: ctx, last: last, head: head, replay: last < head, wait: retryMin}, nil
}

// Ready is signalled when events may be due (Deliver then hands them over); a wake-up may
// find none.
func (st *Stream) Ready() <-chan struct{} { return st.s.wake }

// OnReady has f called whenever Ready is signalled and once the stream has ended (Done),
// for an owner that waits on no channel: f runs on the bus's goroutines and must not block.
// A wake-up before OnReady is not repeated: the owner calls Deliver after it.
func (st *Stream) OnReady(f func()) {
	st.s.notify.Store(&f)
	context.AfterFunc(st.ctx, f)
}

// Done is closed once the stream has ended: its context ended, the bus closed or a delivery
// failed.
func (st *Stream) Done() <-chan struct{} { return st.ctx.Done() }

// Deliver hands deliver every event due, in id order, without gaps or duplicates: a replay
// from the table first when the stream is behind the live events (it joined late, or its
// buffer overflowed), then the buffered live events. An error from deliver ends the stream
// and is returned; so is the end of the stream. A replay that fails is logged and tried again
// later (Ready is signalled then).
func (st *Stream) Deliver(deliver func(context.Context, StoredEvent) error) error {
	ctx, s := st.ctx, st.s
	if !st.begun {
		st.begun = true
		// An id beyond the table's newest names no event (made up, or from another
		// database): the client has seen nothing that is to come, so it gets everything
		// after head, what was written since it joined included. (Beyond head alone, it may
		// name an event this process's reader has not read yet: that one, and those before
		// it, are skipped.)
		if st.last > st.head {
			if newest, err := st.b.db.q.EventsMaxID(ctx); err == nil && st.last > newest {
				st.last = st.head
			} else if err != nil && ctx.Err() == nil {
				st.b.log.Warn("read the newest event id", "err", err)
			}
		}
	}
	var failed error
	send := func(e StoredEvent) bool {
		if e.ID <= st.last {
			return true // replayed already
		}
		if ctx.Err() != nil {
			return false
		}
		if err := deliver(ctx, e); err != nil {
			s.cancel() // the consumer is gone: end here
			failed = err
			return false
		}
		st.last = e.ID
		return true
	}
	for {
		if ctx.Err() != nil {
			return ctx.Err()
		}
		if st.replay {
			if time.Now().Before(st.retryAt) {
				return nil // a failed replay is tried again at retryAt (Ready is signalled then)
			}
			if err := st.b.replay(ctx, s, st.last, send); err != nil {
				if failed != nil {
					return failed
				}
				if ctx.Err() != nil {
					return ctx.Err()
				}
				st.b.log.Warn("read events failed, retrying", "tenant_id", s.tenant, "thread_id", s.thread,
					"retry_in_ms", st.wait.Milliseconds(), "err", err)
				st.retryAt = time.Now().Add(st.wait)
				if st.retry == nil {
					st.retry = time.AfterFunc(st.wait, s.poke)
				} else {
					st.retry.Reset(st.wait)
				}
				st.wait = min(2*st.wait, retryMax)
				return nil
			}
			st.replay, st.wait = false, retryMin
		}
		evs, lagged := s.take(st.spare)
		if lagged {
			// Every event dropped was read by the reader, so it is in the table; what is
			// dispatched from now on is buffered again.
			st.replay = true
			continue
		}
		for i, e := range evs {
			if !send(*e) {
				if failed != nil {
					return failed
				}
				return ctx.Err()
			}
			evs[i] = nil
		}
		if cap(evs) <= 64 {
			st.spare = evs[:0] // reuse small buffers; let a burst's big one go
		} else {
			st.spare = nil
		}
		if len(evs) == 0 {
			return nil
		}
	}
}

// Close ends the stream and releases it; no event is delivered after it.
func (st *Stream) Close() {
	st.release()
	st.b.subs.wg.Done()
}

func (st *Stream) release() {
	st.b.subs.remove(st.s)
	st.s.cancel()
	if st.retry != nil {
		st.retry.Stop()
	}
}

// serve delivers a Stream's events on a goroutine of its own until it ends, then calls end.
func (b *EventBus) serve(st *Stream, deliver func(context.Context, StoredEvent) error, end func()) {
	defer func() {
		st.release()
		end()
		b.subs.wg.Done()
	}()
	for {
		if st.Deliver(deliver) != nil {
			return
		}
		select {
		case <-st.Done():
			return
		case <-st.Ready():
		}
	}
}

// ListEvents pages through stored events of a tenant (of one thread, or all threads when
// threadID is ""), oldest first, after an id; limit <= 0 means 500. Fewer than limit events
// means there are no more.
func (b *EventBus) ListEvents(ctx context.Context, tenantID, threadID string, afterID int64, limit int) ([]StoredEvent, error) {
	if limit <= 0 {
		limit = readPage
	}
	limit = min(limit, math.MaxInt32-1)
	afterID = max(afterID, 0)
	keep := func(tenant, thread string, id int64) bool {
		return id > afterID && tenant == tenantID && (threadID == "" || thread == threadID)
	}
	var out []StoredEvent
	// Rows are read a few at a time, more each round: a busy thread's rows may each hold
	// hundreds of its events, a quiet one's one or two.
	rowsWanted := 4
	for from := rowOf(afterID); ; {
		var rows []db.Event
		var err error
		if threadID == "" {
			rows, err = b.db.q.EventsListTenant(ctx, db.EventsListTenantParams{
				TenantID: tenantID, FromRow: from, MaxRows: int32(rowsWanted)})
		} else {
			rows, err = b.db.q.EventsListThread(ctx, db.EventsListThreadParams{
				Key: threadKeyOf(tenantID, threadID), FromRow: from, MaxRows: int32(rowsWanted)})
		}
		if err != nil {
			return nil, fmt.Errorf("list events: %w", translate(err))
		}
		for _, r := range rows {
			if out, err = unpackRow(out, r, keep); err != nil {
				return nil, fmt.Errorf("list events: %w", err)
			}
			if len(out) >= limit {
				return out[:limit], nil
			}
		}
		if len(rows) < rowsWanted {
			return out, nil
		}
		from = rows[len(rows)-1].ID + 1
		rowsWanted = min(2*rowsWanted, limit+1, readRows)
	}
}

// subOut is the capacity of a Subscribe channel: the consumer's slack. Events waiting
// beyond it are held, up to SubscriberBuffer, by pointer in the subscription's buffer, which
// grows only while events wait (an idle subscription holds none).
const subOut = 4

type subscription struct {
	tenant, thread string
	cancel         context.CancelFunc
	max            int                    // the most buffered events
	wake           chan struct{}          // capacity 1: wake-ups coalesce
	notify         atomic.Pointer[func()] // called on every wake-up too (Stream.OnReady)

	mu      sync.Mutex
	pending []*StoredEvent // dispatched, not yet delivered, in id order
	lagging bool           // the buffer overflowed: replay from the table
}

// push buffers e for the subscription (called by the reader, which never waits for a
// subscriber): on overflow the buffer is dropped and the subscription marked lagging.
func (s *subscription) push(e *StoredEvent) {
	s.mu.Lock()
	switch {
	case s.lagging:
	case len(s.pending) >= s.max:
		s.lagging, s.pending = true, nil
	default:
		s.pending = append(s.pending, e)
	}
	s.mu.Unlock()
	s.poke()
}

// poke signals the subscription's wake channel (wake-ups coalesce).
func (s *subscription) poke() {
	select {
	case s.wake <- struct{}{}:
	default:
	}
	if f := s.notify.Load(); f != nil {
		(*f)()
	}
}

// take returns the buffered events and whether the subscription overflowed since the last
// take (then the events are gone and it must replay), and empties the buffer; spare is an
// empty slice to buffer into next.
func (s *subscription) take(spare []*StoredEvent) (evs []*StoredEvent, lagged bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	evs, lagged = s.pending, s.lagging
	s.pending, s.lagging = spare, false
	return evs, lagged
}

// replay delivers the stored events of s after last, page by page, until a short page.
func (b *EventBus) replay(ctx context.Context, s *subscription, last int64, send func(StoredEvent) bool) error {
	for {
		evs, err := b.ListEvents(ctx, s.tenant, s.thread, last, readPage)
		if err != nil {
			return err
		}
		for _, e := range evs {
			if !send(e) {
				return ctx.Err()
			}
			last = e.ID
		}
		if len(evs) < readPage {
			return nil
		}
	}
}

// sleep waits d unless ctx ends first (then it reports false).
func sleep(ctx context.Context, d time.Duration) bool {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-ctx.Done():
		return false
	case <-t.C:
		return true
	}
}

// subscribers is the process's registry of subscriptions, indexed for fan-out, and the
// state of its one reader (started, with the listener, by the first subscription).
type subscribers struct {
	mu       sync.Mutex
	closed   bool
	started  bool
	stop     context.CancelFunc // the reader's and the listener's
	head     int64              // the last id the reader dispatched
	wakeRead chan struct{}      // capacity 1
	byThread map[threadKey]map[*subscription]struct{}
	byTenant map[string]map[*subscription]struct{} // tenant-wide subscriptions
	wg       sync.WaitGroup                        // the reader, the listener and every subscription
}

func (r *subscribers) init() {
	r.byThread = map[threadKey]map[*subscription]struct{}{}
	r.byTenant = map[string]map[*subscription]struct{}{}
	r.wakeRead = make(chan struct{}, 1)
}

// add registers s and returns the reader's head: the events after it will be dispatched to
// s. The first subscription starts the reader at the table's newest id.
func (r *subscribers) add(ctx context.Context, s *subscription, start func(context.Context) (int64, context.CancelFunc, error)) (int64, error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.closed {
		return 0, ErrClosed
	}
	if !r.started {
		head, stop, err := start(ctx)
		if err != nil {
			return 0, err
		}
		r.started, r.head, r.stop = true, head, stop
	}
	if s.thread == "" {
		addTo(r.byTenant, s.tenant, s)
	} else {
		addTo(r.byThread, threadKey{s.tenant, s.thread}, s)
	}
	r.wg.Add(1)
	return r.head, nil
}

func addTo[K comparable](idx map[K]map[*subscription]struct{}, k K, s *subscription) {
	set := idx[k]
	if set == nil {
		set = map[*subscription]struct{}{}
		idx[k] = set
	}
	set[s] = struct{}{}
}

func removeFrom[K comparable](idx map[K]map[*subscription]struct{}, k K, s *subscription) {
	delete(idx[k], s)
	if len(idx[k]) == 0 {
		delete(idx, k)
	}
}

func (r *subscribers) remove(s *subscription) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if s.thread == "" {
		removeFrom(r.byTenant, s.tenant, s)
	} else {
		removeFrom(r.byThread, threadKey{s.tenant, s.thread}, s)
	}
}

// close ends every subscription, the reader and the listener, and waits for them.
func (r *subscribers) close() {
	r.mu.Lock()
	r.closed = true
	if r.stop != nil {
		r.stop()
	}
	for _, set := range r.byThread {
		for s := range set {
			s.cancel()
		}
	}
	for _, set := range r.byTenant {
		for s := range set {
			s.cancel()
		}
	}
	r.mu.Unlock()
	r.wg.Wait()
}

// headID is the last id the reader dispatched.
func (r *subscribers) headID() int64 {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.head
}

// dispatch hands events read from the table (in id order, all after head) to the
// subscriptions of their thread and of their tenant, and advances head to the last id read.
// It never waits for a subscriber.
func (r *subscribers) dispatch(evs []*StoredEvent, last int64) {
	r.mu.Lock()
	defer r.mu.Unlock()
	for _, e := range evs {
		for s := range r.byThread[threadKey{e.TenantID, e.Thread}] {
			s.push(e)
		}
		for s := range r.byTenant[e.TenantID] {
			s.push(e)
		}
	}
	r.head = max(r.head, last)
}

// wake makes the reader read the table.
func (r *subscribers) wake() {
	select {
	case r.wakeRead <- struct{}{}:
	default:
	}
}

// notified wakes the reader for a notification unless the reader already read past the
// batch it announces. A payload it cannot read wakes it too.
func (r *subscribers) notified(payload string) {
	var n notification
	if err := json.Unmarshal([]byte(payload), &n); err == nil && n.MaxID > 0 && n.MaxID <= r.headID() {
		return
	}
	r.wake()
}

// startReader starts the process's reader at the table's newest id, and the listener that
// wakes it; stop ends both.
func (b *EventBus) startReader(ctx context.Context) (head int64, stop context.CancelFunc, err error) {
	head, err = b.db.q.EventsMaxID(ctx)
	if err != nil {
		return 0, nil, fmt.Errorf("read newest event id: %w", translate(err))
	}
	rctx, cancel := context.WithCancel(context.Background())
	b.subs.wg.Add(2)
	go func() {
		defer b.subs.wg.Done()
		b.listen(rctx)
	}()
	go func() {
		defer b.subs.wg.Done()
		b.read(rctx)
	}()
	return head, cancel, nil
}

// read tails the events table for the process's subscriptions until ctx ends: on every
// wake-up (a notification, a new listener connection) and every PollInterval.
func (b *EventBus) read(ctx context.Context) {
	poll := time.NewTicker(b.poll)
	defer poll.Stop()
	wait := retryMin
	for {
		if err := b.readNew(ctx); err != nil {
			if ctx.Err() != nil {
				return
			}
			b.log.Warn("read events failed, retrying", "retry_in_ms", wait.Milliseconds(), "err", err)
			if !sleep(ctx, wait) {
				return
			}
			wait = min(2*wait, retryMax)
			continue
		}
		wait = retryMin
		select {
		case <-ctx.Done():
			return
		case <-b.subs.wakeRead:
		case <-poll.C:
		}
	}
}

// readNew reads and dispatches every event after the reader's head (the last event of a
// row: rows are written whole, and the reader reads them whole).
func (b *EventBus) readNew(ctx context.Context) error {
	for {
		rows, err := b.db.q.EventsListAfter(ctx, db.EventsListAfterParams{AfterRow: rowOf(b.subs.headID()), MaxRows: readRows})
		if err != nil {
			return fmt.Errorf("read new events: %w", translate(err))
		}
		var evs []StoredEvent
		for _, r := range rows {
			if evs, err = unpackRow(evs, r, nil); err != nil {
				b.log.Error("skip unreadable events", "err", err)
			}
		}
		memos := make([]eventMemo, len(evs))
		ptrs := make([]*StoredEvent, len(evs))
		for i := range evs {
			evs[i].memo = &memos[i]
			ptrs[i] = &evs[i]
		}
		if len(rows) > 0 {
			r := rows[len(rows)-1]
			b.subs.dispatch(ptrs, lastIDOf(r.ID, r.N))
		}
		if len(rows) < readRows {
			return nil
		}
	}
}

// listen holds the process's LISTEN connection, reconnecting with backoff, until ctx ends.
func (b *EventBus) listen(ctx context.Context) {
	wait := retryMin
	for {
		connected, err := b.listenOnce(ctx)
		if ctx.Err() != nil {
			return
		}
		if connected {
			wait = retryMin
		}
		b.log.Warn("event listener disconnected, reconnecting", "channel", b.channel,
			"retry_in_ms", wait.Milliseconds(), "err", err)
		t := time.NewTimer(wait)
		select {
		case <-ctx.Done():
			t.Stop()
			return
		case <-t.C:
		}
		wait = min(2*wait, retryMax)
	}
}

// listenOnce connects, listens and wakes the reader on notifications until the connection
// fails or ctx ends. Every (re)connection wakes the reader: notifications sent while nobody
// listened are lost.
func (b *EventBus) listenOnce(ctx context.Context) (connected bool, err error) {
	conn, err := pgx.ConnectConfig(ctx, b.db.pool.Config().ConnConfig.Copy())
	if err != nil {
		return false, fmt.Errorf("connect: %w", err)
	}
	defer func() {
		cctx, cancel := context.WithTimeout(context.Background(), pingTimeout)
		defer cancel()
		_ = conn.Close(cctx)
	}()
	if _, err := conn.Exec(ctx, "LISTEN "+pgx.Identifier{b.channel}.Sanitize()); err != nil {
		return false, fmt.Errorf("listen: %w", err)
	}
	b.connects.Add(1)
	b.subs.wake()
	for {
		wctx, cancel := context.WithTimeout(ctx, b.listenCheck)
		n, err := conn.WaitForNotification(wctx)
		cancel()
		switch {
		case err == nil:
			b.subs.notified(n.Payload)
		case ctx.Err() != nil:
			return true, nil
		case errors.Is(err, context.DeadlineExceeded):
			pctx, cancel := context.WithTimeout(ctx, pingTimeout)
			err := conn.Ping(pctx)
			cancel()
			if err != nil {
				return true, fmt.Errorf("ping: %w", err)
			}
		default:
			return true, fmt.Errorf("wait for notification: %w", err)
		}
	}
}

// RunEnded reports whether job's run has ended where the job says it rests: the runner
// publishes a runner.KindJob event once the run's last checkpoint is written, and a job the
// graph's error route failed (or rescheduled) is at rest a few milliseconds before that. It
// reads the thread's stored events, so it is for a thread of modest history (tests, tools).
func (b *EventBus) RunEnded(ctx context.Context, job runner.Job) (bool, error) {
	for after := int64(0); ; {
		evs, err := b.ListEvents(ctx, job.TenantID, job.ThreadID, after, readPage)
		if err != nil {
			return false, err
		}
		for _, e := range evs {
			if e.Kind != runner.KindJob {
				continue
			}
			raw, _ := json.Marshal(e.Data)
			var je runner.JobEvent
			if json.Unmarshal(raw, &je) == nil && je.JobID == job.ID && je.Status == job.Status {
				return true, nil
			}
		}
		if len(evs) < readPage {
			return false, nil
		}
		after = evs[len(evs)-1].ID
	}
}
