-- Reviewers' decisions on paused threads (internal/postgres.JobStore).

-- name: ReviewDecisionInsert :exec
INSERT INTO review_decisions (tenant_id, job_id, thread_id, interrupt_id, token_hash, actor, decision, at)
VALUES (@tenant_id, @job_id, @thread_id, @interrupt_id, @token_hash, @actor, @decision, @at);

-- name: ReviewDecisionListJobs :many
-- The decisions recorded on a tenant's jobs (a thread's runs), oldest first.
SELECT * FROM review_decisions
WHERE tenant_id = @tenant_id AND job_id = ANY(@job_ids::uuid[])
ORDER BY id;
