-- Sessions (scs, pgxstore) are written on every request: the session manager's idle timeout
-- moves each session's expiry forward, so every page view upserts its row. On a logged table
-- each of those commits waits for a WAL flush, and under load that wait queues behind the
-- runner's checkpoints: a page view paid a durable commit to say "still here".
--
-- An unlogged table writes no WAL, so those commits do not wait for a flush. What that
-- gives up: after a crash of the database server (not a clean restart) the table is empty and
-- everyone signs in again; and sessions are not replicated to standbys. Nothing else is kept
-- here: users, roles and API tokens stay in logged tables.

-- +goose Up
ALTER TABLE sessions SET UNLOGGED;

-- +goose Down
ALTER TABLE sessions SET LOGGED;
