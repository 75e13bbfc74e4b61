-- job_counts is a few pages whose rows are folded every couple of seconds, so a vacuum
-- (CompactCounts runs one after each fold that removed rows, besides autovacuum) often finds
-- its last pages empty and would truncate them: that takes an ACCESS EXCLUSIVE lock on the
-- table, which stalls every job's status change (its trigger inserts a delta) and every
-- dashboard's count behind it (measured: such vacuums took 128 ms under load, and the
-- dashboard's p99 went with them). The freed pages are reused by the next deltas anyway.

-- +goose Up
ALTER TABLE job_counts SET (vacuum_truncate = false);

-- +goose Down
ALTER TABLE job_counts RESET (vacuum_truncate);
