-- Stream events (internal/postgres.EventBus), stored packed: a row holds up to 256 events, and
-- an event's id is its row's id * 256 + its index in the row (migration 00026). A row's events
-- are in packed, zstd-compressed (00027; its events column then holds '[]'), or in events for
-- rows written before.

-- name: EventsInsert :one
-- Inserts a batch's rows in order and sends one notification, in one statement (one round
-- trip, one commit), in the order given (set-returning functions in a select list yield rows
-- in array order). The transaction-scoped advisory lock is taken before any id is drawn and
-- held until commit, so batches commit in id order: a reader paging with id > last seen never
-- skips a row that becomes visible later. tenants and keys hold each row's array as a JSON
-- array; packed, each row's events compressed. The notification payload is the caller's JSON with max_id set to the batch's largest
-- event id.
WITH lock AS (
    SELECT pg_advisory_xact_lock(@lock_key::bigint)
), inserted AS (
    INSERT INTO events (n, at, tenants, keys, events, packed)
    SELECT r.n, r.at,
        ARRAY(SELECT json_array_elements_text(r.tenants::json)),
        ARRAY(SELECT json_array_elements_text(r.keys::json)),
        '[]', r.packed
    FROM lock
    CROSS JOIN (
        SELECT unnest(@ns::integer[]) AS n, unnest(@ats::timestamptz[]) AS at,
            unnest(@tenants::text[]) AS tenants, unnest(@keys::text[]) AS keys,
            unnest(@packed::bytea[]) AS packed
    ) AS r
    RETURNING id, n
), batch AS (
    SELECT max(id * 256 + n - 1)::bigint AS max_id FROM inserted
), notified AS (
    SELECT pg_notify(@channel::text, jsonb_set(@payload::jsonb, '{max_id}', to_jsonb(batch.max_id))::text)
    FROM batch
)
SELECT batch.max_id
FROM batch
CROSS JOIN notified;

-- name: EventsListThread :many
-- Pages through the rows holding events of one thread (its threadKey) from a row id, oldest
-- first; the caller picks the thread's events out of them. The thread index finds the rows;
-- "id + 0" keeps the planner from also bitmapping the primary key from from_row on (every row
-- of the table for a replay from the start: 20-60 ms at 300,000 rows, instead of well under 1).
SELECT id, n, at, tenants, keys, events, packed
FROM events
WHERE keys @> ARRAY[@key::text] AND id + 0 >= @from_row::bigint
ORDER BY id
LIMIT @max_rows::integer;

-- name: EventsListTenant :many
-- Pages through the rows holding events of a tenant from a row id, oldest first (along the
-- primary key: callers start from a recent id); the caller picks the tenant's events.
SELECT id, n, at, tenants, keys, events, packed
FROM events
WHERE tenants @> ARRAY[@tenant_id::text] AND id >= @from_row::bigint
ORDER BY id
LIMIT @max_rows::integer;

-- name: EventsListAfter :many
-- Pages through every row after a row id, oldest first: the process's one reader tailing the
-- table for its subscriptions (the primary key serves it).
SELECT id, n, at, tenants, keys, events, packed
FROM events
WHERE id > @after_row::bigint
ORDER BY id
LIMIT @max_rows::integer;

-- name: EventsMaxID :one
-- The newest event id (0 when none): where the process's reader starts, and where a page
-- rendered now starts its live stream.
SELECT coalesce((SELECT id * 256 + n - 1 FROM events ORDER BY id DESC LIMIT 1), 0)::bigint AS id;

-- name: EventsDeleteOlder :one
-- Deletes up to max_rows rows whose newest event was published before cutoff (whatever their
-- ids' order) with row ids after after_row, oldest id first: one batch of a prune, which
-- carries on after the returned last_row. Walks the primary key, so batches never rescan each
-- other (the first batch passes after_row -1: row 0 holds migrated events). n counts the
-- events deleted.
WITH gone AS (
    DELETE FROM events
    WHERE id IN (
        SELECT e.id FROM events e
        WHERE e.id > @after_row::bigint AND e.at < @cutoff::timestamptz
        ORDER BY e.id
        LIMIT @max_rows::integer
    )
    RETURNING id, CASE WHEN packed IS NULL THEN json_array_length(events::json) ELSE n END AS n
)
SELECT coalesce(sum(n), 0)::bigint AS n, count(*)::bigint AS rows, COALESCE(max(id), 0)::bigint AS last_row FROM gone;

-- name: EventsCleanPendingKeys :exec
-- Moves the thread index's pending entries into the index proper (GIN's fast update list),
-- which autovacuum would otherwise do: the prune runs it, so lookups by thread stay quick
-- where autovacuum is off.
SELECT events_clean_pending_keys();
