package postgres

import (
	"context"
	"errors"
	"fmt"

	"github.com/jackc/pgx/v5"

	"weft/db"
)

// Reads gathers reads of several stores and runs them in one round trip: a page that needs
// a handful of independent reads waits for the database once, not once per read. Under
// load every round trip also waits for a busy server process and a busy Go scheduler to get
// to it, so the number of round trips, not the statements' work, sets a page's tail latency.
//
// Each read is one generated query and the code that converts its rows (a step). Queueing
// a step runs it once on a recorder, which keeps the statement the generated code would
// send; Run sends every recorded statement in one pipeline and runs each step again on its
// result, in order. So the SQL is sqlc's, and each store keeps its own conversion. The
// statements run in one implicit transaction, and the first failure fails Run.
//
// The Queue methods of the stores (JobStore.QueueCountJobs, …) add steps; each writes its
// result through the pointer it was given, once Run returns nil. A Reads is used once, from
// one goroutine.
type Reads struct {
	d     *DB
	sql   []string
	args  [][]any
	steps []func(ctx context.Context, q *db.Queries) error
}

// Reads starts an empty set of reads on d.
func (d *DB) Reads() *Reads { return &Reads{d: d} }

// add queues step, which must call exactly one generated query and write its result only
// when that query succeeds (the recording call fails).
func (r *Reads) add(step func(ctx context.Context, q *db.Queries) error) {
	var rec recorder
	if err := step(context.Background(), db.New(&rec)); !errors.Is(err, errRecorded) {
		// A step that did not query would misalign every later result.
		panic(fmt.Sprintf("postgres: a queued read made no query (%v)", err))
	}
	r.sql, r.args = append(r.sql, rec.sql), append(r.args, rec.args)
	r.steps = append(r.steps, step)
}

// Len is the number of statements queued.
func (r *Reads) Len() int { return len(r.steps) }

// Run sends the queued statements in one round trip (none: nothing is sent) and converts
// their results. It can be called once.
func (r *Reads) Run(ctx context.Context) error {
	steps := r.steps
	r.steps = nil
	switch len(steps) {
	case 0:
		return nil
	case 1: // as plain a statement as it gets
		return steps[0](ctx, r.d.q)
	}
	batch := &pgx.Batch{}
	for i := range steps {
		batch.Queue(r.sql[i], r.args[i]...)
	}
	br := r.d.pool.SendBatch(ctx, batch)
	defer br.Close()
	q := db.New(batchReader{br})
	for _, step := range steps {
		if err := step(ctx, q); err != nil {
			return err
		}
	}
	if err := br.Close(); err != nil {
		return fmt.Errorf("read: %w", translate(err))
	}
	return nil
}
