-- Stream events (internal/postgres.EventBus).

-- name: EventsInsert :one
-- Inserts a batch of events in order and sends one notification, in one statement (one
-- round trip, one commit), in the order given (set-returning functions in a select list
-- yield rows in array order). The transaction-scoped advisory lock is taken before any id is
-- drawn and held until commit, so batches commit in id order: a reader paging with
-- id > last seen never skips a row that becomes visible later. The notification payload is
-- the caller's JSON with max_id set to the batch's largest id.
WITH lock AS (
    SELECT pg_advisory_xact_lock(@lock_key::bigint)
), inserted AS (
    INSERT INTO events (tenant_id, thread_id, ns, kind, step, node, task_id, at, data)
    SELECT e.tenant_id, e.thread_id, e.ns, e.kind, e.step, e.node, e.task_id, e.at, e.data
    FROM lock
    CROSS JOIN (
        SELECT unnest(@tenant_ids::text[]) AS tenant_id, unnest(@thread_ids::text[]) AS thread_id,
            unnest(@nss::text[]) AS ns, unnest(@kinds::text[]) AS kind,
            unnest(@steps::integer[]) AS step, unnest(@nodes::text[]) AS node,
            unnest(@task_ids::text[]) AS task_id, unnest(@ats::timestamptz[]) AS at,
            unnest(@data::json[]) AS data
    ) AS e
    RETURNING id
), batch AS (
    SELECT max(id)::bigint AS max_id FROM inserted
), notified AS (
    SELECT pg_notify(@channel::text, jsonb_set(@payload::jsonb, '{max_id}', to_jsonb(batch.max_id))::text)
    FROM batch
)
SELECT batch.max_id
FROM batch
CROSS JOIN notified;

-- name: EventsListThread :many
-- Pages through one thread's events of a tenant after an id, oldest first.
SELECT id, tenant_id, thread_id, ns, kind, step, node, task_id, at, data
FROM events
WHERE thread_id = @thread_id::text AND tenant_id = @tenant_id::text AND id > @after_id::bigint
ORDER BY id
LIMIT @max_rows::integer;

-- name: EventsListTenant :many
-- Pages through every event of a tenant after an id, oldest first.
SELECT id, tenant_id, thread_id, ns, kind, step, node, task_id, at, data
FROM events
WHERE tenant_id = @tenant_id::text AND id > @after_id::bigint
ORDER BY id
LIMIT @max_rows::integer;

-- name: EventsLatestID :one
-- The newest event id of a tenant (0 when none): where a page's live stream starts, so a
-- first connection does not replay the tenant's history.
SELECT coalesce(max(id), 0)::bigint AS id FROM events WHERE tenant_id = @tenant_id::text;

-- name: EventLastIDThread :one
-- The newest event id of a tenant's thread (0 without events): where a page rendered now
-- starts its live stream.
SELECT coalesce(max(id), 0)::bigint AS last_id
FROM events
WHERE thread_id = @thread_id::text AND tenant_id = @tenant_id::text;

-- name: EventsListAfter :many
-- Pages through every event of every tenant after an id, oldest first: the process's one
-- reader tailing the table for its subscriptions (the primary key serves it).
SELECT id, tenant_id, thread_id, ns, kind, step, node, task_id, at, data
FROM events
WHERE id > @after_id::bigint
ORDER BY id
LIMIT @max_rows::integer;

-- name: EventsMaxID :one
-- The newest event id of every tenant (0 when none): where the process's reader starts.
SELECT coalesce(max(id), 0)::bigint AS id FROM events;

-- name: EventsDeleteOlder :one
-- Deletes up to max_rows of the events published before cutoff (by their at, whatever their
-- ids' order) with ids after after_id, oldest id first: one batch of a prune, which carries
-- on after the returned last_id. Walks the primary key, so batches never rescan each other.
WITH gone AS (
    DELETE FROM events
    WHERE id IN (
        SELECT e.id FROM events e
        WHERE e.id > @after_id::bigint AND e.at < @cutoff::timestamptz
        ORDER BY e.id
        LIMIT @max_rows::integer
    )
    RETURNING id
)
SELECT count(*)::bigint AS n, COALESCE(max(id), 0)::bigint AS last_id FROM gone;
