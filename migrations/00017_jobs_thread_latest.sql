-- A thread's jobs newest first: its latest job (JobLatestByThread, the dashboard lists'
-- "latest job of its thread" test, a superseded DLQ entry) is the first entry of one range,
-- whatever plan a cached statement settled on. (tenant_id, thread_id) alone let a generic plan
-- made while the table was small walk the tenant's jobs by time instead, reading all of them
-- for every probe once they were many. None of these columns changes after insert, so job
-- updates stay HOT.

-- +goose Up
CREATE INDEX jobs_tenant_thread_latest ON jobs (tenant_id, thread_id, created_at DESC, id DESC);
DROP INDEX jobs_tenant_thread;

-- +goose Down
CREATE INDEX jobs_tenant_thread ON jobs (tenant_id, thread_id);
DROP INDEX jobs_tenant_thread_latest;
