-- Event rows are stored compressed (zstd, by the writer): a row's events JSON compresses five
-- to six times, and its bytes were most of what a batch riding in a checkpoint transaction
-- cost that transaction (BenchmarkEventsOverhead: rows of ~1.8 KB kept 0.97 of the steps
-- without events, rows of ~6.5 KB 0.89, in one session).
--
-- events.packed: the row's events as a zstd frame of the JSON array that events held (see
-- 00026); readers take packed when it is set. Such a row's events column holds '[]', so a
-- process still running the code before this migration (a rolling upgrade) reads it as a
-- row without events and carries on, rather than failing on every read. packed is compressed
-- already, so PostgreSQL stores it as it is (STORAGE EXTERNAL: never compressed again, moved
-- out of line only past toast_tuple_target).

-- +goose Up
ALTER TABLE events ADD COLUMN packed bytea;
ALTER TABLE events ALTER COLUMN packed SET STORAGE EXTERNAL;

-- +goose Down
-- SQL cannot decompress zstd: rolling back deletes the compressed rows (stream events only;
-- a thread's state is in its checkpoints), so subscribers replaying past them find a gap.
DELETE FROM events WHERE packed IS NOT NULL;
ALTER TABLE events DROP COLUMN packed;
