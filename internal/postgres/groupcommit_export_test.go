package postgres

import "time"

// SetGroupCommit sets how many commits c's Puts may have in flight and how many requests
// one batch carries (0 keeps the current value).
func SetGroupCommit(c *Checkpointer, flight, batch int) {
	c.put.mu.Lock()
	defer c.put.mu.Unlock()
	if flight > 0 {
		c.put.maxFlight = flight
	}
	if batch > 0 {
		c.put.maxBatch = batch
	}
}

// GroupCommitStats reports the transactions c's Puts were committed in, the requests they
// carried and the largest batch.
func GroupCommitStats(c *Checkpointer) (txs, puts, largest int64) {
	return c.put.txs.Load(), c.put.puts.Load(), c.put.largest.Load()
}

// GroupCommitQueued is the number of Puts waiting for a commit slot.
func GroupCommitQueued(c *Checkpointer) int {
	c.put.mu.Lock()
	defer c.put.mu.Unlock()
	return len(c.put.queue)
}

// GroupCommitRiders reports the statements waiting to ride in c's next transaction, and
// the statements its transactions have carried.
func GroupCommitRiders(c *Checkpointer) (waiting int, carried int64) {
	c.put.mu.Lock()
	defer c.put.mu.Unlock()
	return len(c.put.riders), c.put.rode.Load()
}

// SetRideWait sets how long a rider waits for a batch to carry it.
func SetRideWait(c *Checkpointer, d time.Duration) {
	c.put.mu.Lock()
	defer c.put.mu.Unlock()
	c.put.rideWait = d
}
