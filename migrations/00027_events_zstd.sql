-- Event rows are stored compressed (zstd, by the writer): a row's events JSON compresses five
-- to six times, and its bytes were most of what a batch riding in a checkpoint transaction
-- cost that transaction (BenchmarkEventsOverhead: rows of ~1.8 KB kept 0.97 of the steps
-- without events, rows of ~6.5 KB 0.89, in one session).
--
-- events.packed: the row's events as a zstd frame of the JSON array that events held (see
-- 00026). A row has either events (written before this migration) or packed, never both.
-- packed is compressed already, so PostgreSQL stores it as it is (STORAGE EXTERNAL: never
-- compressed again, moved out of line only past toast_tuple_target).

-- +goose Up
ALTER TABLE events
    ALTER COLUMN events DROP NOT NULL,
    ADD COLUMN packed bytea,
    ADD CONSTRAINT events_one_form CHECK ((events IS NULL) <> (packed IS NULL));
ALTER TABLE events ALTER COLUMN packed SET STORAGE EXTERNAL;

-- +goose Down
-- SQL cannot decompress zstd: rolling back deletes the compressed rows (stream events only;
-- a thread's state is in its checkpoints), so subscribers replaying past them find a gap.
DELETE FROM events WHERE packed IS NOT NULL;
ALTER TABLE events
    DROP CONSTRAINT events_one_form,
    DROP COLUMN packed,
    ALTER COLUMN events SET NOT NULL;
