package postgres

import (
	"context"
	"fmt"
	"time"

	"weft/db"
)

// eventsPruneBatch is how many rows (of up to eventsPerRow events) one delete statement
// removes, so a prune of a large backlog never holds one long transaction.
const eventsPruneBatch = 1_000

// Prune deletes the events published before cutoff, in batches, and returns how many it
// deleted. Events are stored packed, a batch of them per row, and a row goes once its newest
// event is before cutoff. Events only serve live streams and their replays (a subscriber resuming from an
// id): a replay from an id older than what is left starts at the oldest event kept.
// Checkpoints, node records and the audit log keep a run's history.
func (b *EventBus) Prune(ctx context.Context, cutoff time.Time) (int, error) {
	total := 0
	for after := int64(-1); ; { // row 0 holds events stored before migration 26
		r, err := b.db.q.EventsDeleteOlder(ctx, db.EventsDeleteOlderParams{AfterRow: after, Cutoff: cutoff, MaxRows: eventsPruneBatch})
		if err != nil {
			return total, fmt.Errorf("prune events: %w", translate(err))
		}
		total += int(r.N)
		if r.Rows < eventsPruneBatch {
			break
		}
		after = r.LastRow
	}
	// The thread index takes new entries into a pending list, which autovacuum moves into the
	// index proper; where it is off, this does, so that lookups by thread stay quick.
	if err := b.db.q.EventsCleanPendingKeys(ctx); err != nil {
		return total, fmt.Errorf("prune events: clean the thread index: %w", translate(err))
	}
	return total, nil
}
