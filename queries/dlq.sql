-- The dead-letter queue (internal/postgres.JobStore).

-- name: DLQInsert :one
-- Records a dead-lettering; nothing when (job_id, retry_count) is already recorded.
INSERT INTO dlq (id, tenant_id, job_id, workflow, class, code, message, trace_id, node, retry_count)
VALUES (@id, @tenant_id, @job_id, @workflow, @class, @code, @message, @trace_id, @node, @retry_count)
ON CONFLICT (job_id, retry_count) DO NOTHING
RETURNING id;

-- name: DLQGetByAttempt :one
SELECT * FROM dlq
WHERE job_id = @job_id AND retry_count = @retry_count;

-- name: DLQGet :one
SELECT * FROM dlq
WHERE id = @id AND tenant_id = @tenant_id;

-- name: DLQLock :one
SELECT * FROM dlq
WHERE id = @id AND tenant_id = @tenant_id
FOR UPDATE;

-- name: DLQResolve :one
-- recorded → retried or discarded.
UPDATE dlq
SET status = @status::text, resolved_at = now(), resolved_by = @actor::text
WHERE id = @id AND status = 'recorded'
RETURNING *;

-- name: DLQList :many
-- A tenant's DLQ entries newest first, after the (created_at, id) cursor when given.
SELECT * FROM dlq
WHERE tenant_id = @tenant_id
  AND (sqlc.narg('status')::text IS NULL OR status = sqlc.narg('status')::text)
  AND (sqlc.narg('before_at')::timestamptz IS NULL
       OR (created_at, id) < (sqlc.narg('before_at')::timestamptz, sqlc.narg('before_id')::uuid))
ORDER BY created_at DESC, id DESC
LIMIT @max_rows::integer;

-- name: DLQListNewer :many
-- DLQList's page the other way: a tenant's DLQ entries just newer than the (created_at, id)
-- cursor, oldest first (the caller turns them around).
SELECT * FROM dlq
WHERE tenant_id = @tenant_id
  AND (sqlc.narg('status')::text IS NULL OR status = sqlc.narg('status')::text)
  AND (created_at, id) > (@after_at::timestamptz, @after_id::uuid)
ORDER BY created_at, id
LIMIT @max_rows::integer;

-- name: DLQOfJobs :many
-- A tenant's DLQ entries of some of its jobs, newest first (a job retried and failed again
-- has one per failure).
SELECT * FROM dlq
WHERE tenant_id = @tenant_id AND job_id = ANY(@job_ids::uuid[])
ORDER BY created_at DESC, id DESC;

-- name: DLQJobList :many
-- The jobs of a tenant's DLQ entries (thread, subject, current status), for the console,
-- each with the newest job of its thread when that is a later one (the thread was started
-- again since: the entry's job is superseded), else ''.
SELECT d.id AS dlq_id, j.id AS job_id, j.thread_id, j.subject, j.status, j.retry_count,
       coalesce((SELECT n.id::text FROM jobs n
                 WHERE n.tenant_id = j.tenant_id AND n.thread_id = j.thread_id
                   AND (n.created_at, n.id) > (j.created_at, j.id)
                 ORDER BY n.created_at DESC, n.id DESC LIMIT 1), '')::text AS superseded_by
FROM dlq d JOIN jobs j ON j.id = d.job_id
WHERE d.tenant_id = @tenant_id AND j.tenant_id = @tenant_id AND d.id = ANY(@ids::uuid[]);

-- name: ThreadAuditSubjects :many
-- The ids audit entries about a tenant's thread may carry as their subject besides the
-- thread's own: its jobs (a retry, a resume) and their DLQ entries (a discard), newest first.
(SELECT j.id::text AS id, j.created_at AS at FROM jobs j
 WHERE j.tenant_id = @tenant_id AND j.thread_id = @thread_id)
UNION ALL
(SELECT d.id::text, d.created_at FROM dlq d JOIN jobs j ON j.id = d.job_id
 WHERE d.tenant_id = @tenant_id AND j.tenant_id = @tenant_id AND j.thread_id = @thread_id)
ORDER BY at DESC
LIMIT @max_rows::integer;

-- name: JobAuditSubjects :many
-- The ids audit entries about a tenant's job or DLQ entry (given either id) may carry as
-- their subject: the job's (a retry, a resume) and its DLQ entries' (a discard).
WITH job AS (
    SELECT j.id FROM jobs j WHERE j.tenant_id = @tenant_id AND j.id = @id::uuid
    UNION
    SELECT d.job_id FROM dlq d WHERE d.tenant_id = @tenant_id AND d.id = @id::uuid
)
SELECT job.id::text AS id FROM job
UNION ALL
SELECT d.id::text FROM dlq d JOIN job ON d.job_id = job.id WHERE d.tenant_id = @tenant_id;

-- name: DLQCountByStatus :many
-- How many of a tenant's DLQ entries are in each of @statuses, each count stopping at
-- @max_rows (an index-only range of dlq_tenant_status apiece, however many entries the tenant
-- has).
SELECT s.status::text AS status,
       (SELECT count(*) FROM (SELECT 1 FROM dlq d
                              WHERE d.tenant_id = @tenant_id AND d.status = s.status
                              LIMIT @max_rows::integer) AS capped)::bigint AS n
FROM unnest(@statuses::text[]) AS s (status);
