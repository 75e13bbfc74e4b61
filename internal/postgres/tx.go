package postgres

import (
	"context"

	"github.com/jackc/pgx/v5"

	"weft/db"
)

// inTx runs fn in one transaction, with queries bound to it. The transaction commits when fn
// returns nil and rolls back when it returns an error or panics. fn's errors come back as
// they are; translate them in fn or after.
func (d *DB) inTx(ctx context.Context, fn func(q *db.Queries) error) error {
	return pgx.BeginFunc(ctx, d.pool, func(tx pgx.Tx) error {
		return fn(d.q.WithTx(tx))
	})
}
