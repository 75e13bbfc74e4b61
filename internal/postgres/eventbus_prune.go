package postgres

import (
	"context"
	"fmt"
	"time"

	"weft/db"
)

// eventsPruneBatch is how many events one delete statement removes, so a prune of a large
// backlog never holds one long transaction.
const eventsPruneBatch = 10_000

// Prune deletes the events published before cutoff, oldest first, in batches, and returns
// how many it deleted. Events only serve live streams and their replays (a subscriber
// resuming from an id): a replay from an id older than what is left starts at the oldest
// event kept. Checkpoints, node records and the audit log keep a run's history.
func (b *EventBus) Prune(ctx context.Context, cutoff time.Time) (int, error) {
	before, err := b.db.q.EventsFirstIDSince(ctx, cutoff)
	if err != nil {
		return 0, fmt.Errorf("prune events: %w", translate(err))
	}
	total := 0
	for {
		n, err := b.db.q.EventsDeleteBefore(ctx, db.EventsDeleteBeforeParams{BeforeID: before, MaxRows: eventsPruneBatch})
		total += int(n)
		if err != nil {
			return total, fmt.Errorf("prune events: %w", translate(err))
		}
		if n < eventsPruneBatch {
			return total, nil
		}
	}
}
