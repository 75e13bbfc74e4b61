// Package dataagentpg is the data agent's PostgreSQL side: the demo
// analytics data set (its own schema, generated in SQL), the catalog reader
// (information_schema, pg_catalog comments and foreign keys) of any schema,
// the business notes with full-text search, and the read-only SQL executor.
//
// Every analysis query and catalog read runs as a dedicated role,
// weft_analyst_<schema> (NOLOGIN, USAGE and SELECT on that schema only),
// taken with SET LOCAL ROLE inside a READ ONLY transaction that is always
// rolled back, under a statement timeout. Queries are parsed first
// (dataagent.CheckSelect: one SELECT, nothing that writes or switches
// roles); the role's privileges are the barrier behind the parser.
//
// It imports pgx, internal/postgres (for its search tokens), dataagent and
// its nlsql types.
package dataagentpg

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
	"github.com/jackc/pgx/v5/pgxpool"

	"weft/internal/workflow/dataagent"
)

// CheckSchema is dataagent.CheckSchema.
var CheckSchema = dataagent.CheckSchema

// AnalystRole is the role analysis queries on schema run as.
func AnalystRole(schema string) string { return "weft_analyst_" + schema }

// Prepare makes schema's analyst role (if missing), grants it USAGE on the
// schema and SELECT on its tables (and on those created later by the
// current user), and makes the current user and members (the roles the
// application's pools log in as, when they differ) members of it, so that
// they can SET ROLE to it. The current user must own the schema and be
// allowed to create roles. Run it again after adding tables.
func Prepare(ctx context.Context, pool *pgxpool.Pool, schema string, members ...string) error {
	if err := CheckSchema(schema); err != nil {
		return err
	}
	role := pgx.Identifier{AnalystRole(schema)}.Sanitize()
	sch := pgx.Identifier{schema}.Sanitize()
	create := fmt.Sprintf(`DO $$
BEGIN
    IF NOT EXISTS (SELECT 1 FROM pg_roles WHERE rolname = %s) THEN
        CREATE ROLE %s NOLOGIN NOINHERIT;
    END IF;
EXCEPTION WHEN duplicate_object OR unique_violation THEN NULL;
END $$`, quoteLiteral(AnalystRole(schema)), role)
	stmts := []string{create,
		"GRANT USAGE ON SCHEMA " + sch + " TO " + role,
		"GRANT SELECT ON ALL TABLES IN SCHEMA " + sch + " TO " + role,
		"ALTER DEFAULT PRIVILEGES IN SCHEMA " + sch + " GRANT SELECT ON TABLES TO " + role,
		"GRANT " + role + " TO CURRENT_USER",
	}
	for _, m := range members {
		stmts = append(stmts, "GRANT "+role+" TO "+pgx.Identifier{m}.Sanitize())
	}
	for _, s := range stmts {
		if err := retryConcurrent(ctx, func() error { _, err := pool.Exec(ctx, s); return err }); err != nil {
			return fmt.Errorf("prepare analyst role for %s: %w", schema, err)
		}
	}
	return nil
}

// retryConcurrent retries a statement on the catalog races of concurrent
// role grants (tuple concurrently updated, XX000) a few times.
func retryConcurrent(ctx context.Context, f func() error) error {
	var err error
	for i := 0; i < 5; i++ {
		if err = f(); err == nil {
			return nil
		}
		var pe *pgconn.PgError
		if !errors.As(err, &pe) || (pe.Code != "XX000" && pe.Code != "40001" && pe.Code != "23505") {
			return err
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(time.Duration(20*(i+1)) * time.Millisecond):
		}
	}
	return err
}

func quoteLiteral(s string) string { return "'" + strings.ReplaceAll(s, "'", "''") + "'" }

// asAnalyst runs f in a READ ONLY transaction as schema's analyst role,
// with search_path set to the schema and the statement timeout; the
// transaction is always rolled back.
func asAnalyst(ctx context.Context, pool *pgxpool.Pool, schema string, timeout time.Duration, f func(pgx.Tx) error) error {
	if err := CheckSchema(schema); err != nil {
		return err
	}
	tx, err := pool.BeginTx(ctx, pgx.TxOptions{AccessMode: pgx.ReadOnly})
	if err != nil {
		return fmt.Errorf("begin read-only transaction: %w", err)
	}
	defer tx.Rollback(context.WithoutCancel(ctx))
	setup := fmt.Sprintf("SET LOCAL ROLE %s; SET LOCAL statement_timeout = %d; SET LOCAL search_path = %s; SET LOCAL lock_timeout = 1000",
		pgx.Identifier{AnalystRole(schema)}.Sanitize(), timeout.Milliseconds(), pgx.Identifier{schema}.Sanitize())
	if _, err := tx.Exec(ctx, setup, pgx.QueryExecModeSimpleProtocol); err != nil {
		return &setupError{fmt.Errorf("take the analyst role %s (run dataagentpg.Prepare for schema %s): %w", AnalystRole(schema), schema, err)}
	}
	return f(tx)
}

// setupError is a failure to set up the analyst's transaction: the
// executor's, never the query's.
type setupError struct{ err error }

func (e *setupError) Error() string { return e.err.Error() }
func (e *setupError) Unwrap() error { return e.err }
