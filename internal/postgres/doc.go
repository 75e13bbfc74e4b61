// Package postgres is Weft's PostgreSQL adapter: the connection pool with the embedded goose
// migrations applied at open, a transaction helper, the durable graph.Checkpointer, and (as
// they land) the job store, audit log, dead-letter queue, resume tokens and event bus.
//
// It is the only package, with internal/auth, that imports pgx and the sqlc-generated package
// db; nothing it exports mentions a pgx or sqlc type. Errors from the driver are translated at
// this boundary: a missing row becomes graph.ErrNotFound, a lost compare-and-set or a
// duplicate key graph.ErrConflict. It may import internal/graph and internal/runner (whose
// interfaces it implements), internal/fault, db, migrations, pgx, goose and the standard
// library, never anything above it (server, workflow, web).
//
// Subpackages: pgtest gives tests a fresh migrated database; pgcluster starts a private
// PostgreSQL server from the binaries on the machine when no server answers.
package postgres
