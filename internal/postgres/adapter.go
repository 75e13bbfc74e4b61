package postgres

import (
	"context"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
)

// What a workflow's store adapter (internal/workflow/<name>/<name>pg, with its own sqlc
// package db/<name>) builds on: its statements run on Conn, inside the transactions that InTx
// and Effects.Once open, so that they commit or roll back with the core's (an audit row, a
// side effect's key), and its errors are translated as the core's are.

// Conn is what a store adapter's sqlc queries run on (sqlc's DBTX): the pool, or a
// transaction.
type Conn interface {
	Exec(ctx context.Context, sql string, args ...any) (pgconn.CommandTag, error)
	Query(ctx context.Context, sql string, args ...any) (pgx.Rows, error)
	QueryRow(ctx context.Context, sql string, args ...any) pgx.Row
}

// Conn returns what ctx's statements run on: the transaction ctx carries when it is one of
// d's (inside InTx or Effects.Once), else the pool.
func (d *DB) Conn(ctx context.Context) Conn {
	if v, ok := ctx.Value(txKey{}).(txValue); ok && v.db == d {
		return v.tx
	}
	return d.pool
}

// InTx runs fn in one transaction of d, which the ctx fn gets carries: the statements run
// on Conn(ctx), Audit.Append and Effects.Once join it. It commits when fn returns nil and
// rolls back when fn returns an error or panics; inside another transaction of d it is a
// savepoint of that one. fn's errors come back as they are.
func (d *DB) InTx(ctx context.Context, fn func(ctx context.Context) error) error {
	var begin interface {
		Begin(ctx context.Context) (pgx.Tx, error)
	} = d.pool
	if outer, ok := ctx.Value(txKey{}).(txValue); ok && outer.db == d {
		begin = outer.tx
	}
	return pgx.BeginFunc(ctx, begin, func(tx pgx.Tx) error {
		return fn(context.WithValue(ctx, txKey{}, txValue{db: d, tx: tx}))
	})
}

// Translate turns a driver error into a domain one, as this package's stores do: no rows is
// graph.ErrNotFound, a unique violation graph.ErrConflict, text the server cannot store a
// validation fault; other server errors carry their message and SQLSTATE, no pgx type.
func Translate(err error) error { return translate(err) }
