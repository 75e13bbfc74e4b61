package sqlite

import (
	"context"
	"database/sql"
	"sync"
)

// stmtCache holds the hot paths' queries (a Put per superstep, a GetTuple per run),
// prepared once when the file is opened; a transaction borrows a prepared statement
// (database/sql reuses it on the transaction's connection) and skips SQLite's parser.
// They are prepared up front, never while a transaction holds a connection: the writer
// pool has one connection, and preparing on the pool then would wait for it forever.
type stmtCache struct {
	db *sql.DB
	m  sync.Map // query -> *sql.Stmt
}

func newStmtCache(ctx context.Context, db *sql.DB, queries ...string) (*stmtCache, error) {
	s := &stmtCache{db: db}
	for _, q := range queries {
		st, err := db.PrepareContext(ctx, q)
		if err != nil {
			s.close()
			return nil, err
		}
		s.m.Store(q, st)
	}
	return s, nil
}

// get is the prepared statement of a query, or nil for one not prepared at Open.
func (s *stmtCache) get(query string) *sql.Stmt {
	if st, ok := s.m.Load(query); ok {
		return st.(*sql.Stmt)
	}
	return nil
}

func (s *stmtCache) close() {
	s.m.Range(func(_, v any) bool {
		_ = v.(*sql.Stmt).Close()
		return true
	})
}

// txq runs queries of one transaction through the cache's prepared statements.
type txq struct {
	tx    *sql.Tx
	cache *stmtCache
}

func (t txq) stmt(ctx context.Context, query string) *sql.Stmt {
	if st := t.cache.get(query); st != nil {
		return t.tx.StmtContext(ctx, st)
	}
	return nil
}

func (t txq) QueryContext(ctx context.Context, query string, args ...any) (*sql.Rows, error) {
	if st := t.stmt(ctx, query); st != nil {
		return st.QueryContext(ctx, args...)
	}
	return t.tx.QueryContext(ctx, query, args...)
}

func (t txq) QueryRowContext(ctx context.Context, query string, args ...any) *sql.Row {
	if st := t.stmt(ctx, query); st != nil {
		return st.QueryRowContext(ctx, args...)
	}
	return t.tx.QueryRowContext(ctx, query, args...)
}

func (t txq) ExecContext(ctx context.Context, query string, args ...any) (sql.Result, error) {
	if st := t.stmt(ctx, query); st != nil {
		return st.ExecContext(ctx, args...)
	}
	return t.tx.ExecContext(ctx, query, args...)
}
