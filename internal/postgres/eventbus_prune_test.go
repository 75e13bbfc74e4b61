package postgres_test

import (
	"testing"
	"time"

	"weft/internal/postgres"
)

// TestEventBusPrune: events published before the cutoff go, later ones stay, and a replay
// from the start then begins at the oldest event kept.
func TestEventBusPrune(t *testing.T) {
	t.Parallel()
	b := setupBus(t, postgres.EventBusOptions{})
	old, fresh := time.Now().Add(-10*24*time.Hour), time.Now()
	for i := range 30 {
		e := ev("th", i)
		if i < 20 {
			e.At = old
		} else {
			e.At = fresh
		}
		if i == 20 {
			// Events are stored a batch per row, and a row goes when its newest event is
			// old enough: the old events are written before the fresh ones are published.
			if err := b.bus.Flush(b.ctx); err != nil {
				t.Fatal(err)
			}
		}
		b.bus.Publish(b.ctx, "tenant", e)
	}
	waitWritten(t, b.bus, 30)
	n, err := b.bus.Prune(b.ctx, time.Now().Add(-7*24*time.Hour))
	if err != nil || n != 20 {
		t.Fatalf("prune deleted %d events (%v), want 20", n, err)
	}
	got, err := b.bus.ListEvents(b.ctx, "tenant", "th", 0, 100)
	if err != nil {
		t.Fatal(err)
	}
	checkSeq(t, got, "tenant", "th", steps(20, 30))
	if n, err := b.bus.Prune(b.ctx, time.Now().Add(-7*24*time.Hour)); err != nil || n != 0 {
		t.Fatalf("a second prune deleted %d events (%v), want 0", n, err)
	}
	// A cutoff in the future takes the rest; an empty table is no error.
	if n, err := b.bus.Prune(b.ctx, time.Now().Add(time.Hour)); err != nil || n != 10 {
		t.Fatalf("prune of everything deleted %d (%v), want 10", n, err)
	}
	if n, err := b.bus.Prune(b.ctx, time.Now()); err != nil || n != 0 {
		t.Fatalf("prune of an empty table: %d, %v", n, err)
	}
}
