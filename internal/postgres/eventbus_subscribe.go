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
)

// StoredEvent is an event read back from the bus: its id (the SSE event id, and the afterID
// that resumes a subscription), its tenant, and the event, whose Data is the stored JSON as a
// json.RawMessage (nil when the event had none). It encodes to JSON as the event's fields
// plus "id" and "tenant_id".
type StoredEvent struct {
	ID       int64  `json:"id"`
	TenantID string `json:"tenant_id"`
	graph.Event
}

// Subscription tuning.
const (
	readPage = 500 // events read per query
	// listenerCheck is how long the listener waits for a notification before it pings its
	// connection, so a dead connection is noticed and replaced.
	listenerCheck = 30 * time.Second
	pingTimeout   = 5 * time.Second
)

// Subscribe streams the events of one thread of a tenant (threadID "" : every thread of the
// tenant, for dashboards) with an id greater than afterID: first those already stored
// (replay: a late subscriber, or an SSE client reconnecting with Last-Event-ID), then new ones
// as they are written, by any process, in id order and without gaps. The channel is closed
// when ctx ends or the bus closes.
//
// Each subscription reads the table itself, after the last id it delivered, when the
// process's listener hears of a batch for its thread or tenant, and every PollInterval in
// case a notification was lost. A subscriber that does not keep up only delays itself: it
// falls behind and catches up from the table, and never holds up the listener or others.
func (b *EventBus) Subscribe(ctx context.Context, tenantID, threadID string, afterID int64) (<-chan StoredEvent, error) {
	if tenantID == "" {
		return nil, errors.New("subscribe to events: tenant id is required")
	}
	ctx, cancel := context.WithCancel(ctx)
	s := &subscription{tenant: tenantID, thread: threadID, cancel: cancel,
		wake: make(chan struct{}, 1), out: make(chan StoredEvent, b.subBuf)}
	s.last.Store(max(afterID, 0))
	if err := b.subs.add(s, b.listen); err != nil {
		cancel()
		return nil, fmt.Errorf("subscribe to events: %w", err)
	}
	go b.serve(ctx, s)
	return s.out, nil
}

// ListEvents pages through stored events of a tenant (of one thread, or all threads when
// threadID is ""), oldest first, after an id; limit <= 0 means 500.
func (b *EventBus) ListEvents(ctx context.Context, tenantID, threadID string, afterID int64, limit int) ([]StoredEvent, error) {
	if limit <= 0 {
		limit = readPage
	}
	limit = min(limit, math.MaxInt32)
	var rows []db.Event
	var err error
	if threadID == "" {
		rows, err = b.db.q.EventsListTenant(ctx, db.EventsListTenantParams{
			TenantID: tenantID, AfterID: afterID, MaxRows: int32(limit)})
	} else {
		rows, err = b.db.q.EventsListThread(ctx, db.EventsListThreadParams{
			TenantID: tenantID, ThreadID: threadID, AfterID: afterID, MaxRows: int32(limit)})
	}
	if err != nil {
		return nil, fmt.Errorf("list events: %w", translate(err))
	}
	out := make([]StoredEvent, len(rows))
	for i, r := range rows {
		out[i] = StoredEvent{ID: r.ID, TenantID: r.TenantID, Event: graph.Event{
			Kind: r.Kind, Thread: r.ThreadID, NS: r.Ns, Step: int(r.Step), Node: r.Node,
			TaskID: r.TaskID, At: r.At}}
		if r.Data != nil {
			out[i].Data = json.RawMessage(r.Data)
		}
	}
	return out, nil
}

type subscription struct {
	tenant, thread string
	cancel         context.CancelFunc
	wake           chan struct{} // capacity 1: wake-ups coalesce
	out            chan StoredEvent
	last           atomic.Int64 // the last id delivered
}

// notify wakes the subscription unless it already delivered maxID (0: unknown).
func (s *subscription) notify(maxID int64) {
	if maxID > 0 && s.last.Load() >= maxID {
		return
	}
	select {
	case s.wake <- struct{}{}:
	default:
	}
}

// serve delivers a subscription's events until its context ends.
func (b *EventBus) serve(ctx context.Context, s *subscription) {
	defer func() {
		b.subs.remove(s)
		s.cancel()
		close(s.out)
		b.subs.wg.Done()
	}()
	poll := time.NewTicker(b.poll)
	defer poll.Stop()
	wait := retryMin
	for {
		if err := b.catchUp(ctx, s); err != nil {
			if ctx.Err() != nil {
				return
			}
			b.log.Warn("read events failed, retrying", "tenant_id", s.tenant, "thread_id", s.thread,
				"retry_in_ms", wait.Milliseconds(), "err", err)
			t := time.NewTimer(wait)
			select {
			case <-ctx.Done():
				t.Stop()
				return
			case <-t.C:
			}
			wait = min(2*wait, retryMax)
			continue
		}
		wait = retryMin
		select {
		case <-ctx.Done():
			return
		case <-s.wake:
		case <-poll.C:
		}
	}
}

// catchUp delivers every stored event after the subscription's last id.
func (b *EventBus) catchUp(ctx context.Context, s *subscription) error {
	for {
		evs, err := b.ListEvents(ctx, s.tenant, s.thread, s.last.Load(), readPage)
		if err != nil {
			return err
		}
		for _, e := range evs {
			select {
			case s.out <- e:
				s.last.Store(e.ID)
			case <-ctx.Done():
				return ctx.Err()
			}
		}
		if len(evs) < readPage {
			return nil
		}
	}
}

// subscribers is the process's registry of subscriptions, indexed for fan-out, and the
// owner of the listener goroutine (started with the first subscription).
type subscribers struct {
	mu        sync.Mutex
	closed    bool
	listening bool
	stop      context.CancelFunc // the listener's
	byThread  map[string]map[*subscription]struct{}
	byTenant  map[string]map[*subscription]struct{} // tenant-wide subscriptions
	wg        sync.WaitGroup                        // the listener and every subscription
}

func (r *subscribers) init() {
	r.byThread = map[string]map[*subscription]struct{}{}
	r.byTenant = map[string]map[*subscription]struct{}{}
}

func (r *subscribers) add(s *subscription, listen func(context.Context)) error {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.closed {
		return ErrClosed
	}
	if !r.listening {
		r.listening = true
		ctx, cancel := context.WithCancel(context.Background())
		r.stop = cancel
		r.wg.Add(1)
		go func() {
			defer r.wg.Done()
			listen(ctx)
		}()
	}
	idx, key := r.byThread, s.thread
	if s.thread == "" {
		idx, key = r.byTenant, s.tenant
	}
	set := idx[key]
	if set == nil {
		set = map[*subscription]struct{}{}
		idx[key] = set
	}
	set[s] = struct{}{}
	r.wg.Add(1)
	return nil
}

func (r *subscribers) remove(s *subscription) {
	r.mu.Lock()
	defer r.mu.Unlock()
	idx, key := r.byThread, s.thread
	if s.thread == "" {
		idx, key = r.byTenant, s.tenant
	}
	delete(idx[key], s)
	if len(idx[key]) == 0 {
		delete(idx, key)
	}
}

// close ends every subscription and the listener, and waits for them.
func (r *subscribers) close() {
	r.mu.Lock()
	r.closed = true
	if r.stop != nil {
		r.stop()
	}
	for _, idx := range []map[string]map[*subscription]struct{}{r.byThread, r.byTenant} {
		for _, set := range idx {
			for s := range set {
				s.cancel()
			}
		}
	}
	r.mu.Unlock()
	r.wg.Wait()
}

// wakeAll wakes every subscription that has not delivered maxID (0: every subscription).
func (r *subscribers) wakeAll(maxID int64) {
	r.mu.Lock()
	defer r.mu.Unlock()
	for _, idx := range []map[string]map[*subscription]struct{}{r.byThread, r.byTenant} {
		for _, set := range idx {
			for s := range set {
				s.notify(maxID)
			}
		}
	}
}

// dispatch wakes the subscriptions a notification concerns. A payload it cannot read wakes
// everyone.
func (r *subscribers) dispatch(payload string) {
	var n notification
	if err := json.Unmarshal([]byte(payload), &n); err != nil {
		r.wakeAll(0)
		return
	}
	if n.All {
		r.wakeAll(n.MaxID)
		return
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	for _, t := range n.Tenants {
		for s := range r.byTenant[t] {
			s.notify(n.MaxID)
		}
	}
	if !n.AllThreads {
		for _, th := range n.Threads {
			for s := range r.byThread[th] {
				s.notify(n.MaxID)
			}
		}
		return
	}
	tenants := make(map[string]struct{}, len(n.Tenants))
	for _, t := range n.Tenants {
		tenants[t] = struct{}{}
	}
	for _, set := range r.byThread {
		for s := range set {
			if _, ok := tenants[s.tenant]; ok {
				s.notify(n.MaxID)
			}
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

// listenOnce connects, listens and dispatches notifications until the connection fails or
// ctx ends. Every (re)connection wakes every subscription: notifications sent while nobody
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
	b.subs.wakeAll(0)
	for {
		wctx, cancel := context.WithTimeout(ctx, b.listenCheck)
		n, err := conn.WaitForNotification(wctx)
		cancel()
		switch {
		case err == nil:
			b.subs.dispatch(n.Payload)
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
