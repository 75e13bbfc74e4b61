package postgres

import (
	"context"
	"errors"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
	"github.com/jackc/pgx/v5/pgxpool"

	"weft/db"
)

// genericPlans makes the transaction's statements use their prepared statement's generic
// plan. Left to choose, PostgreSQL plans the checkpointer's statements afresh at every
// execution (their custom plans look cheaper than the generic one), which costs more server
// time than running them does: about 0.3 ms of the 0.45 ms a Put takes, 0.5 ms of a short
// GetTuple. set_config(…, true) lasts until the transaction ends (a batch's Sync), so other
// statements on the connection keep the default.
const genericPlans = "SELECT set_config('plan_cache_mode', 'force_generic_plan', true)"

// genericPlanTX is a db.DBTX whose QueryRow runs the statement on its generic plan: it sends
// genericPlans and the statement as one pipelined batch (one round trip, one implicit
// transaction), so the generated query methods (sqlc's scanning included) work unchanged.
// Only QueryRow is supported.
type genericPlanTX struct{ pool *pgxpool.Pool }

var errGenericPlanOnly = errors.New("genericPlanTX runs single-row queries only")

func (g genericPlanTX) QueryRow(ctx context.Context, sql string, args ...any) pgx.Row {
	batch := &pgx.Batch{}
	batch.Queue(genericPlans)
	batch.Queue(sql, args...)
	br := g.pool.SendBatch(ctx, batch)
	if _, err := br.Exec(); err != nil {
		_ = br.Close()
		return errRow{err}
	}
	return batchRow{br: br, row: br.QueryRow()}
}

func (genericPlanTX) Exec(context.Context, string, ...any) (pgconn.CommandTag, error) {
	return pgconn.CommandTag{}, errGenericPlanOnly
}

func (genericPlanTX) Query(context.Context, string, ...any) (pgx.Rows, error) {
	return nil, errGenericPlanOnly
}

// batchRow is the batch's last result: scanning it also ends the batch.
type batchRow struct {
	br  pgx.BatchResults
	row pgx.Row
}

func (r batchRow) Scan(dest ...any) error {
	err := r.row.Scan(dest...)
	if cerr := r.br.Close(); err == nil {
		err = cerr
	}
	return err
}

type errRow struct{ err error }

func (r errRow) Scan(...any) error { return r.err }

var _ db.DBTX = genericPlanTX{}
