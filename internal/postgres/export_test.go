package postgres

import (
	"context"
	"sync/atomic"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"
)

// OpenCounting opens like Open and counts the round trips the pool makes: each statement
// sent alone, and each pipelined batch (a Put's, which carries its plan setting and the
// CheckpointPut statement in one implicit transaction) as one.
func OpenCounting(ctx context.Context, url string) (*DB, *atomic.Int64, error) {
	n := new(atomic.Int64)
	d, err := Open(ctx, url, func(o *options) {
		o.configure = func(c *pgxpool.Config) { c.ConnConfig.Tracer = counter{n} }
	})
	return d, n, err
}

type counter struct{ n *atomic.Int64 }

func (c counter) TraceQueryStart(ctx context.Context, _ *pgx.Conn, _ pgx.TraceQueryStartData) context.Context {
	c.n.Add(1)
	return ctx
}

func (counter) TraceQueryEnd(context.Context, *pgx.Conn, pgx.TraceQueryEndData) {}

func (c counter) TraceBatchStart(ctx context.Context, _ *pgx.Conn, _ pgx.TraceBatchStartData) context.Context {
	c.n.Add(1)
	return ctx
}

func (counter) TraceBatchQuery(context.Context, *pgx.Conn, pgx.TraceBatchQueryData) {}

func (counter) TraceBatchEnd(context.Context, *pgx.Conn, pgx.TraceBatchEndData) {}
