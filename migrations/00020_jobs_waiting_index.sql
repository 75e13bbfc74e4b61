-- The dashboard lists each workflow's waiting reviews as the inbox does, longest waiting
-- first (by paused_at): one range of this index per workflow. Only waiting jobs have entries.

-- +goose Up
CREATE INDEX jobs_waiting ON jobs (tenant_id, workflow, paused_at, id) WHERE status = 'waiting_review';

-- +goose Down
DROP INDEX jobs_waiting;
