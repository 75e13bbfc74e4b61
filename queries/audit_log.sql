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
