-- The dashboard lists, per workflow, the newest jobs in a status (running, retrying, waiting
-- for review, failed: queries/jobs.sql JobList with a status and a workflow). With only
-- jobs_tenant (tenant_id, created_at DESC, id DESC) each list read the tenant's jobs newest
-- first until it found enough in the status, which for a rare status (the one failed job
-- among thousands waiting for review) is all of them, at every dashboard request and every
-- live refresh. With this index each list reads as many entries as it shows.

-- +goose Up
CREATE INDEX jobs_tenant_workflow_status ON jobs (tenant_id, workflow, status, created_at DESC, id DESC);

-- +goose Down
DROP INDEX jobs_tenant_workflow_status;
