-- The append-only audit log (internal/postgres.Audit). Its listings (Audit.List and Browse) are
-- not here: they are one statement per filter shape, built by internal/postgres.auditSelect,
-- so that each can use its filter's index under a generic plan.

-- name: AuditLogInsert :one
INSERT INTO audit_log (tenant_id, actor, action, subject, workflow, payload, at)
VALUES (@tenant_id, @actor, @action, @subject, @workflow, @payload,
        coalesce(sqlc.narg('at')::timestamptz, now()))
RETURNING id, at;

-- name: AuditLogSubjectThreads :many
-- The threads that audit subjects of a tenant stand for, for links: a job id (its thread), a
-- DLQ entry id (its job's thread) or a thread id itself (a workflow audits what it does to a
-- run on its thread's id: a bid evaluation's id is its thread's).
SELECT j.id::text AS subject, j.thread_id FROM jobs j
WHERE j.tenant_id = @tenant_id AND j.id = ANY(@ids::uuid[])
UNION ALL
SELECT d.id::text, j.thread_id FROM dlq d JOIN jobs j ON j.id = d.job_id
WHERE d.tenant_id = @tenant_id AND d.id = ANY(@ids::uuid[])
UNION ALL
SELECT DISTINCT j.thread_id, j.thread_id FROM jobs j
WHERE j.tenant_id = @tenant_id AND j.thread_id = ANY(@names::text[]);

-- name: AuditLogActorsOfKind :many
-- The distinct actors of a tenant's entries that are kind itself or kind:<something>, in
-- order, up to max_actors: a loose index scan of audit_log_actor (one probe per distinct
-- actor, however many entries each has) from kind on, while actors begin with kind.
WITH RECURSIVE found AS (
    (SELECT a.actor FROM audit_log a WHERE a.tenant_id = @tenant_id AND a.actor >= @kind::text ORDER BY a.actor LIMIT 1)
    UNION ALL
    SELECT (SELECT a.actor FROM audit_log a
            WHERE a.tenant_id = @tenant_id AND a.actor > found.actor ORDER BY a.actor LIMIT 1)
    FROM found WHERE starts_with(found.actor, @kind::text)
)
SELECT found.actor::text AS actor FROM found
WHERE found.actor = @kind::text OR starts_with(found.actor, @kind::text || ':')
LIMIT @max_actors::integer;
