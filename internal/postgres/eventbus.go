package postgres

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"log/slog"
	"strings"
	"sync"
	"sync/atomic"
	"time"
	"unicode/utf8"

	"weft/db"
	"weft/internal/graph"
	"weft/internal/runner"
)

// EventBus publishes the stream events of runs through PostgreSQL, so that any instance can
// stream any thread.
//
// Publishing: Publish queues the event and returns at once (a run is never held up by the
// bus). One writer goroutine inserts the queue in batches — every FlushInterval (5ms) or
// MaxBatch events, whichever comes first — into the events table, packed a batch per row
// (eventbus_pack.go), and each batch sends ONE
// pg_notify on the channel (default 'weft_events') in the same statement: notifications are
// coalesced per batch, never one per event or per checkpoint, so NOTIFY's commit-time lock
// is taken a few hundred times a second at most. While checkpoints are being committed, the
// batch rides in a checkpoint group commit's transaction instead of committing on its own
// (groupcommit.go, "Riders"). The payload says where to read:
//
//	{"max_id":123,"tenants":["acme"],"threads":["t1","t2"]}
//	{"max_id":123,"tenants":["acme"],"all_threads":true}   too many threads to list
//	{"max_id":123,"all":true}                              too many tenants as well
//
// When the queue is full (the database is down or far slower than the runs), events are
// dropped and counted, not waited for: the checkpoints are the source of truth for a
// thread's state, so a run must not stall for its telemetry. Each thread that lost events
// gets an event of kind KindEventsDropped in the stream where the loss happened, so a
// console knows to reload the state rather than trust its incremental view.
//
// Subscribing: see Subscribe. One LISTEN connection per EventBus wakes the process's one
// reader, which tails the table after the last id it read and fans the new events out to the
// subscriptions in memory; a subscription replays from the table when it starts behind or
// falls behind, so a lost, late or truncated notification never loses an event.
type EventBus struct {
	db      *DB
	log     *slog.Logger
	channel string
	poll    time.Duration
	subBuf  int
	w       *batcher[pendingEvent]

	dropMu    sync.Mutex
	dropped   map[threadKey]int // events lost per thread since the last batch
	dropExtra int               // losses of threads beyond maxDropKeys

	subs        subscribers
	listenCheck time.Duration // see listenerCheck
	connects    atomic.Int64  // LISTEN connections made
}

var _ runner.EventSink = (*EventBus)(nil)

// EventBusOptions configure an EventBus. The zero value is the default everywhere.
type EventBusOptions struct {
	BatchOptions
	// Channel is the LISTEN/NOTIFY channel. Default "weft_events".
	Channel string
	// PollInterval is how often the process's reader reads the table without being
	// notified, in case a notification is lost. Default 1s.
	PollInterval time.Duration
	// SubscriberBuffer is the most events held for a subscription whose consumer has not
	// taken them; beyond it the subscription drops them and replays from the table. Default
	// 1024 (held by pointer, only while they wait).
	SubscriberBuffer int
}

// DefaultEventChannel is the LISTEN/NOTIFY channel of the event bus.
const DefaultEventChannel = "weft_events"

// KindEventsDropped is the kind of the event written in place of events that were dropped
// because the bus's queue was full. Its Data is {"dropped": n}.
const KindEventsDropped = "events_dropped"

const (
	// eventsLockKey is the transaction-scoped advisory lock every event batch takes before
	// drawing ids ("weftevts"): batches commit in id order.
	eventsLockKey = 0x7765667465767473
	// maxPayload is the most bytes of notification payload we build; PostgreSQL refuses
	// 8000 and more, and jsonb's text form adds a space after every ',' and ':'.
	maxPayload  = 7000
	maxDropKeys = 1024
)

type threadKey struct{ tenant, thread string }

// pendingEvent is a queued event: its data already encoded, so the caller may reuse what it
// published.
type pendingEvent struct {
	tenant string
	ev     graph.Event // Data unused
	data   []byte      // nil: no data
}

// NewEventBus starts the writer of an event bus on d. Close it to flush.
func NewEventBus(d *DB, o EventBusOptions) *EventBus {
	b := newEventBus(d, o)
	b.w.start()
	return b
}

// newEventBus makes the bus without starting its writer.
func newEventBus(d *DB, o EventBusOptions) *EventBus {
	log := o.Logger
	if log == nil {
		log = d.log
	}
	if o.Channel == "" {
		o.Channel = DefaultEventChannel
	}
	if o.PollInterval <= 0 {
		o.PollInterval = time.Second
	}
	if o.SubscriberBuffer <= 0 {
		o.SubscriberBuffer = 1024
	}
	b := &EventBus{db: d, log: log, channel: o.Channel, poll: o.PollInterval, subBuf: o.SubscriberBuffer,
		dropped: map[threadKey]int{}, listenCheck: listenerCheck}
	b.subs.init()
	b.w = newBatcher("events", o.BatchOptions, log, b.flush)
	b.w.extra = b.dropMarkers
	return b
}

// Publish queues ev of tenantID for writing; it never blocks. ev.Data is encoded to JSON now.
// Events published after Close, or while the queue is full, are dropped and counted.
func (b *EventBus) Publish(_ context.Context, tenantID string, ev graph.Event) {
	p := pendingEvent{tenant: tenantID, ev: ev}
	p.ev.Data = nil
	if ev.Data != nil {
		data, err := json.Marshal(ev.Data)
		if err != nil {
			data, _ = json.Marshal(map[string]string{"encode_error": err.Error()})
		}
		p.data = jsonbSafe(data)
	}
	if !b.w.add(p) {
		b.noteDrop(tenantID, ev.Thread)
	}
}

// Flush waits until the events published before it are written (or dropped): the runner
// calls it before a job comes to rest, so a run's events are stored by the time its job
// says it ended, even if the process dies right after (runner.EventFlusher).
func (b *EventBus) Flush(ctx context.Context) error { return b.w.sync(ctx) }

// Stats reports what the writer did; Batches is also the number of notifications sent.
func (b *EventBus) Stats() BatchStats { return b.w.stats() }

// Close stops accepting events, writes the queued ones (until ctx ends), ends every
// subscription and stops the listener.
func (b *EventBus) Close(ctx context.Context) error {
	err := b.w.close(ctx)
	b.subs.close()
	return err
}

func (b *EventBus) noteDrop(tenant, thread string) {
	k := threadKey{tenant, thread}
	b.dropMu.Lock()
	if _, ok := b.dropped[k]; ok || len(b.dropped) < maxDropKeys {
		b.dropped[k]++
	} else {
		b.dropExtra++
	}
	b.dropMu.Unlock()
}

// dropMarkers returns one KindEventsDropped event per thread that lost events since the
// last call (run by the writer before each batch).
func (b *EventBus) dropMarkers() []pendingEvent {
	b.dropMu.Lock()
	defer b.dropMu.Unlock()
	if len(b.dropped) == 0 {
		return nil
	}
	if b.dropExtra > 0 {
		b.log.Warn("events dropped for threads not marked", "dropped", b.dropExtra)
		b.dropExtra = 0
	}
	now := time.Now()
	out := make([]pendingEvent, 0, len(b.dropped))
	for k, n := range b.dropped {
		data, _ := json.Marshal(map[string]int{"dropped": n})
		out = append(out, pendingEvent{tenant: k.tenant, data: data,
			ev: graph.Event{Kind: KindEventsDropped, Thread: k.thread, At: now}})
	}
	clear(b.dropped)
	return out
}

// flush writes one batch, packed into rows (eventbus_pack.go), and sends its notification,
// in one statement, riding in a checkpoint transaction when one is being committed.
func (b *EventBus) flush(ctx context.Context, batch []pendingEvent) error {
	rows := packEvents(batch, time.Now())
	p := db.EventsInsertParams{
		LockKey: eventsLockKey, Channel: b.channel, Payload: notifyPayload(rows.eventTenants, rows.eventThreads),
		Ns: rows.ns, Ats: rows.ats, Tenants: rows.tenants, Keys: rows.keys, Packed: rows.packed,
	}
	err := b.db.rideOrRun(ctx, func(q *db.Queries) error {
		_, err := q.EventsInsert(ctx, p)
		return err
	})
	if err != nil {
		return fmt.Errorf("insert %d events: %w", len(batch), err)
	}
	return nil
}

// notification is the payload of a notification on the event channel. MaxID is set by the
// database (the batch's largest id).
type notification struct {
	MaxID      int64    `json:"max_id"`
	All        bool     `json:"all,omitempty"`
	Tenants    []string `json:"tenants,omitempty"`
	AllThreads bool     `json:"all_threads,omitempty"`
	Threads    []string `json:"threads,omitempty"`
}

// notifyPayload lists the distinct tenants and threads of a batch, or says "all threads" or
// "all" when the list would not fit in a notification.
func notifyPayload(tenants, threads []string) []byte {
	n := notification{Tenants: distinct(tenants), Threads: distinct(threads)}
	b, _ := json.Marshal(n)
	if payloadLen(b) > maxPayload {
		n.Threads, n.AllThreads = nil, true
		b, _ = json.Marshal(n)
	}
	if payloadLen(b) > maxPayload {
		b, _ = json.Marshal(notification{All: true})
	}
	return b
}

// payloadLen bounds the length of b's jsonb text form, plus room for max_id.
func payloadLen(b []byte) int {
	return len(b) + bytes.Count(b, []byte{','}) + bytes.Count(b, []byte{':'}) + 32
}

func distinct(ss []string) []string {
	seen := make(map[string]struct{}, 8)
	out := make([]string, 0, 8)
	for _, s := range ss {
		if _, ok := seen[s]; !ok {
			seen[s] = struct{}{}
			out = append(out, s)
		}
	}
	return out
}

// cleanText makes s storable in a text column: valid UTF-8 without NUL.
func cleanText(s string) string {
	if utf8.ValidString(s) && strings.IndexByte(s, 0) < 0 {
		return s
	}
	return strings.ReplaceAll(strings.ToValidUTF8(s, "\uFFFD"), "\x00", "\uFFFD")
}

// jsonbSafe replaces the escape \u0000, which jsonb refuses, with \ufffd in encoded JSON.
// An escaped backslash followed by "u0000" is left alone.
func jsonbSafe(b []byte) []byte {
	const nul = `\u0000`
	if !bytes.Contains(b, []byte(nul)) {
		return b
	}
	out := make([]byte, 0, len(b))
	for i := 0; i < len(b); i++ {
		if b[i] != '\\' {
			out = append(out, b[i])
			continue
		}
		// b[i] starts an escape sequence: copy it whole.
		if bytes.HasPrefix(b[i:], []byte(nul)) {
			out = append(out, `\ufffd`...)
			i += len(nul) - 1
			continue
		}
		out = append(out, b[i])
		if i+1 < len(b) {
			out = append(out, b[i+1])
			i++
		}
	}
	return out
}
