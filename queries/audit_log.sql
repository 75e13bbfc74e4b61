-- The append-only audit log (internal/postgres.Audit).

-- name: AuditLogInsert :one
INSERT INTO audit_log (tenant_id, actor, action, subject, workflow, payload, at)
VALUES (@tenant_id, @actor, @action, @subject, @workflow, @payload,
        coalesce(sqlc.narg('at')::timestamptz, now()))
RETURNING id, at;

-- name: AuditLogList :many
-- A tenant's entries newest first, filtered, before the id cursor when given.
SELECT * FROM audit_log
WHERE tenant_id = @tenant_id
  AND (sqlc.narg('actor')::text IS NULL OR actor = sqlc.narg('actor')::text)
  AND (sqlc.narg('action')::text IS NULL OR action = sqlc.narg('action')::text)
  AND (sqlc.narg('subject')::text IS NULL OR subject = sqlc.narg('subject')::text)
  AND (sqlc.narg('workflow')::text IS NULL OR workflow = sqlc.narg('workflow')::text)
  AND (sqlc.narg('from_at')::timestamptz IS NULL OR at >= sqlc.narg('from_at')::timestamptz)
  AND (sqlc.narg('to_at')::timestamptz IS NULL OR at < sqlc.narg('to_at')::timestamptz)
  AND (sqlc.narg('before_id')::bigint IS NULL OR id < sqlc.narg('before_id')::bigint)
ORDER BY id DESC
LIMIT @max_rows::integer;

-- name: AuditLogBrowse :many
-- The console's listing: a tenant's entries newest first by (at, id), filtered, older than
-- the entry before_id when given (migrations/00008_audit_indexes.sql: one index per filter,
-- the time range and the cursor are ranges of it). A before_id that is not the tenant's
-- entry matches nothing.
SELECT a.* FROM audit_log a
WHERE a.tenant_id = @tenant_id
  AND (sqlc.narg('actor')::text IS NULL OR a.actor = sqlc.narg('actor')::text)
  AND (sqlc.narg('action')::text IS NULL OR a.action = sqlc.narg('action')::text)
  AND (sqlc.narg('subject')::text IS NULL OR a.subject = sqlc.narg('subject')::text)
  AND (sqlc.narg('workflow')::text IS NULL OR a.workflow = sqlc.narg('workflow')::text)
  AND (sqlc.narg('from_at')::timestamptz IS NULL OR a.at >= sqlc.narg('from_at')::timestamptz)
  AND (sqlc.narg('to_at')::timestamptz IS NULL OR a.at < sqlc.narg('to_at')::timestamptz)
  AND (sqlc.narg('before_id')::bigint IS NULL
       OR (a.at, a.id) < ((SELECT c.at FROM audit_log c WHERE c.id = sqlc.narg('before_id')::bigint AND c.tenant_id = @tenant_id),
                          sqlc.narg('before_id')::bigint))
ORDER BY a.at DESC, a.id DESC
LIMIT @max_rows::integer;

-- name: AuditLogSubjectThreads :many
-- The threads that audit subjects of a tenant stand for, for links: a job id (its thread), a
-- DLQ entry id (its job's thread), an evaluation id (its thread) or a thread id itself.
SELECT j.id::text AS subject, j.thread_id FROM jobs j
WHERE j.tenant_id = @tenant_id AND j.id = ANY(@ids::uuid[])
UNION ALL
SELECT d.id::text, j.thread_id FROM dlq d JOIN jobs j ON j.id = d.job_id
WHERE d.tenant_id = @tenant_id AND d.id = ANY(@ids::uuid[])
UNION ALL
SELECT e.id, e.thread_id FROM evaluations e
WHERE e.tenant_id = @tenant_id AND e.id = ANY(@names::text[])
UNION ALL
SELECT DISTINCT j.thread_id, j.thread_id FROM jobs j
WHERE j.tenant_id = @tenant_id AND j.thread_id = ANY(@names::text[]);
