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

// Prune deletes the events published before cutoff, in batches, and returns how many it
// deleted. Events only serve live streams and their replays (a subscriber resuming from an
// id): a replay from an id older than what is left starts at the oldest event kept.
// Checkpoints, node records and the audit log keep a run's history.
func (b *EventBus) Prune(ctx context.Context, cutoff time.Time) (int, error) {
	total := 0
	for after := int64(0); ; {
		r, err := b.db.q.EventsDeleteOlder(ctx, db.EventsDeleteOlderParams{AfterID: after, Cutoff: cutoff, MaxRows: eventsPruneBatch})
		if err != nil {
			return total, fmt.Errorf("prune events: %w", translate(err))
		}
		total += int(r.N)
		if r.N < eventsPruneBatch {
			return total, nil
		}
		after = r.LastID
	}
}
