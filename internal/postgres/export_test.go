package postgres

import (
	"context"
	"sync/atomic"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/jackc/pgx/v5/stdlib"
	"github.com/pressly/goose/v3"

	"weft/migrations"
)

// MigrateTo applies the migrations up to version (for tests of one migration's effect on
// the rows an earlier schema left).
func MigrateTo(ctx context.Context, url string, version int64) error {
	cfg, err := pgx.ParseConfig(url)
	if err != nil {
		return err
	}
	provider, err := goose.NewProvider(goose.DialectPostgres, stdlib.OpenDB(*cfg), migrations.FS,
		goose.WithDisableGlobalRegistry(true))
	if err != nil {
		return err
	}
	defer provider.Close()
	_, err = provider.UpTo(ctx, version)
	return err
}

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
