package postgres

import (
	"context"

	"github.com/jackc/pgx/v5"

	"weft/db"
)

// inTx runs fn in one transaction, with queries bound to it. The transaction commits when fn
// returns nil and rolls back when it returns an error or panics. fn's errors come back as
// they are; translate them in fn or after.
// inThreadTx is inTx at READ COMMITTED whatever the server's default, for lockIdleThread:
// each statement after the lock sees what was committed before it.
func (d *DB) inThreadTx(ctx context.Context, fn func(q *db.Queries) error) error {
	return pgx.BeginTxFunc(ctx, d.pool, pgx.TxOptions{IsoLevel: pgx.ReadCommitted}, func(tx pgx.Tx) error {
		return fn(d.q.WithTx(tx))
	})
}

func (d *DB) inTx(ctx context.Context, fn func(q *db.Queries) error) error {
	return pgx.BeginFunc(ctx, d.pool, func(tx pgx.Tx) error {
		return fn(d.q.WithTx(tx))
	})
}
