-- A job its own run moved to rest (the graph's error route: runner.RecordFailure scheduled a
-- retry or dead-lettered it) while that run still writes its last step and says where the job
-- rests. Until the run returns (settling cleared) or settling_until passes (its worker died;
-- heartbeats extend it meanwhile), no job of the same thread is claimed: an admin retry, a
-- retry due at once or a new run on the thread would otherwise start from the head before the
-- run's last checkpoint lands, and one of the two runs would fail on the head's
-- compare-and-set.

-- +goose Up
ALTER TABLE jobs
    ADD COLUMN settling_owner text,
    ADD COLUMN settling_until timestamptz,
    ADD CONSTRAINT jobs_settling CHECK ((settling_owner IS NULL) = (settling_until IS NULL));
-- Claims look for a settling job of each candidate's thread: an index holding only those.
CREATE INDEX jobs_settling ON jobs (tenant_id, thread_id) WHERE settling_until IS NOT NULL;

-- +goose Down
DROP INDEX jobs_settling;
ALTER TABLE jobs DROP CONSTRAINT jobs_settling, DROP COLUMN settling_until, DROP COLUMN settling_owner;
