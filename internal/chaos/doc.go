// Package chaos holds the durable-execution proofs: tests that kill worker processes with
// SIGKILL at random moments, restart PostgreSQL and cut every database connection while jobs
// run, then check that no job was lost, no side effect happened twice and no node ran again
// after its checkpoint. It has no code of its own: everything is in its tests, which import
// internal/graph, internal/runner, internal/postgres (and pgtest, pgcluster) and pgx.
package chaos
