-- Resume tokens (internal/postgres.JobStore): stored hashed, single use, expiring.

-- name: ResumeTokenInsert :execrows
-- Binds a token to a tenant's job, its thread and one interrupt: a pending interrupt of a job
-- waiting for review (a reviewer's form), or the interrupt a running job's node is about to
-- raise (seed 000 §7.1 puts the token in the interrupt payload). Consuming it still needs the
-- interrupt pending. No row when the job is neither.
INSERT INTO resume_tokens (hash, tenant_id, job_id, thread_id, interrupt_id, expires_at)
SELECT @hash::text, j.tenant_id, j.id, j.thread_id, @interrupt_id::text, @expires_at::timestamptz
FROM jobs j
WHERE j.id = @job_id AND j.tenant_id = @tenant_id
  AND (j.status = 'running'
       OR (j.status = 'waiting_review' AND j.interrupts @> jsonb_build_array(jsonb_build_object('id', @interrupt_id::text))));

-- name: ResumeTokenConsume :one
-- Uses a token up: only an unused, unexpired token of the tenant matches (expiry by the
-- caller's clock). Concurrent consumers of one token wait on its row; one wins.
UPDATE resume_tokens
SET used_at = @now::timestamptz, used_by = @actor::text
WHERE hash = @hash AND tenant_id = @tenant_id AND used_at IS NULL AND expires_at > @now::timestamptz
RETURNING job_id, thread_id, interrupt_id;

-- name: ResumeTokenGet :one
SELECT * FROM resume_tokens
WHERE hash = @hash AND tenant_id = @tenant_id;

-- name: ResumeTokensPrune :execrows
-- Deletes up to max_rows resume tokens that expired before the cutoff, oldest first (every
-- tenant's: upkeep).
DELETE FROM resume_tokens
WHERE hash IN (
    SELECT t.hash FROM resume_tokens t
    WHERE t.expires_at < @cutoff::timestamptz
    ORDER BY t.expires_at
    LIMIT @max_rows::integer
);
