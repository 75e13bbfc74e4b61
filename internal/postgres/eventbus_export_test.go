package postgres

import (
	"context"
	"time"
)

// NewEventBusHeld starts an event bus whose writer waits, before each batch, until release
// is called (once releases every batch): a test's way to fill the queue.
func NewEventBusHeld(d *DB, o EventBusOptions) (b *EventBus, release func()) {
	b = newEventBus(d, o)
	gate := make(chan struct{})
	flush := b.w.flush
	b.w.flush = func(ctx context.Context, batch []pendingEvent) error {
		select {
		case <-gate:
		case <-ctx.Done():
			return ctx.Err()
		}
		return flush(ctx, batch)
	}
	b.w.start()
	return b, func() { close(gate) }
}

// NewEventBusChecking starts an event bus whose listener pings its connection after every
// idle check of a notification wait, and returns a count of the LISTEN connections it made.
func NewEventBusChecking(d *DB, o EventBusOptions, check time.Duration) (*EventBus, func() int64) {
	b := newEventBus(d, o)
	b.listenCheck = check
	b.w.start()
	return b, b.connects.Load
}

// Plain returns copies of evs without what the fan-out shares between the copies of an
// event (Encode's memo), for comparing delivered events with stored ones.
func Plain(evs []StoredEvent) []StoredEvent {
	out := make([]StoredEvent, len(evs))
	for i, e := range evs {
		e.memo = nil
		out[i] = e
	}
	return out
}
