-- Checkpoints (internal/postgres.Checkpointer). Every query is one statement, so it runs in
-- one snapshot and costs one round trip.

-- name: CheckpointPut :one
-- Saves a checkpoint, its blobs and the pending writes it carries, and moves the head of its
-- space, atomically. expect_head NULL creates the space (a new thread or namespace); otherwise
-- the head moves only if it still is expect_head (compare-and-set). No row back (pgx.ErrNoRows)
-- means the head did not match and nothing was written. A delta blob resolves its root and
-- position from its base; a missing base leaves root NULL and fails the NOT NULL constraint.
-- blob_bases uses the nil UUID for "no base" (a full blob).
WITH moved AS (
    UPDATE checkpoint_heads h
    SET head = @id::uuid
    WHERE h.thread_id = @thread_id::text AND h.ns = @ns::text
      AND h.head = sqlc.narg('expect_head')::uuid
    RETURNING h.space_id
), created AS (
    INSERT INTO checkpoint_heads (thread_id, ns, head)
    SELECT @thread_id::text, @ns::text, @id::uuid
    WHERE sqlc.narg('expect_head')::uuid IS NULL
    ON CONFLICT (thread_id, ns) DO NOTHING
    RETURNING space_id
), space AS (
    SELECT moved.space_id FROM moved
    UNION ALL
    SELECT created.space_id FROM created
), saved AS (
    INSERT INTO checkpoints (space_id, id, parent_id, created_at, step, source, versions, meta)
    SELECT space.space_id, @id::uuid, sqlc.narg('parent_id')::uuid, @created_at::timestamptz,
        @step::integer, @source::text, @versions::jsonb, @meta::json
    FROM space
), blobs AS (
    INSERT INTO checkpoint_blobs (space_id, version, root, base, pos, channel, data)
    SELECT space.space_id, b.version,
        CASE WHEN b.base = '00000000-0000-0000-0000-000000000000'::uuid THEN b.version ELSE p.root END,
        NULLIF(b.base, '00000000-0000-0000-0000-000000000000'::uuid),
        CASE WHEN b.base = '00000000-0000-0000-0000-000000000000'::uuid THEN 0 ELSE p.pos + 1 END,
        b.channel, b.data
    FROM space
    CROSS JOIN (
        SELECT unnest(@blob_channels::text[]) AS channel, unnest(@blob_versions::uuid[]) AS version,
            unnest(@blob_bases::uuid[]) AS base, unnest(@blob_data::bytea[]) AS data
    ) AS b
    LEFT JOIN LATERAL (
        SELECT p.root, p.pos
        FROM checkpoint_blobs p
        WHERE p.space_id = space.space_id AND p.version = b.base AND p.channel = b.channel
        LIMIT 1
    ) AS p ON true
    ON CONFLICT (space_id, version, channel) DO NOTHING
), writes AS (
    INSERT INTO checkpoint_writes (space_id, checkpoint_id, seq, task_id, channel, node, data)
    SELECT space.space_id, @id::uuid, w.seq, w.task_id, w.channel, w.node, w.data
    FROM space
    CROSS JOIN (
        SELECT unnest(@write_task_ids::text[]) AS task_id, unnest(@write_seqs::integer[]) AS seq,
            unnest(@write_channels::text[]) AS channel, unnest(@write_nodes::text[]) AS node,
            unnest(@write_data::bytea[]) AS data
    ) AS w
)
SELECT space.space_id FROM space;

-- name: CheckpointTupleGet :one
-- Loads a checkpoint (the head when id is NULL) with every blob its channel values need and
-- its pending writes, in one statement. For each channel, a unique-key probe finds the blob
-- at its version (the tip; "" in versions is the checkpoint's own id). A full blob (pos 0)
-- comes back as it is. A delta chain's root is another probe and its deltas up to the tip one
-- index range scan, joined here into one JSON array (the root's items, then each delta's in
-- position order) when the chain is linear: one row per position (no sibling fork branch
-- below the tip) and every part a JSON array (a null root counts as empty). Otherwise its
-- rows come back as they are and the caller follows base pointers. The LATERAL subqueries
-- keep these probes per channel whatever the planner's statistics say (a hash join over the
-- space's blobs would cost as much as the thread's history). Blobs and writes come back as
-- parallel arrays, filled in one aggregate pass each (so aligned).
WITH cp AS (
    SELECT c.space_id, c.id, c.parent_id, c.created_at, c.step, c.source, c.versions, c.meta
    FROM checkpoint_heads h
    JOIN checkpoints c ON c.space_id = h.space_id AND c.id = COALESCE(sqlc.narg('id')::uuid, h.head)
    WHERE h.thread_id = @thread_id::text AND h.ns = @ns::text
), tip AS (
    SELECT t.space_id, t.channel, t.version, t.root, t.pos
    FROM cp
    CROSS JOIN LATERAL jsonb_each_text(cp.versions) AS v (channel, version)
    CROSS JOIN LATERAL (
        SELECT b.space_id, b.channel, b.version, b.root, b.pos
        FROM checkpoint_blobs b
        WHERE b.space_id = cp.space_id AND b.channel = v.channel
          AND b.version = CASE WHEN v.version = '' THEN cp.id ELSE v.version::uuid END
        LIMIT 1
    ) AS t
), chain AS (
    SELECT b.channel, b.version, b.base, b.data
    FROM tip
    CROSS JOIN LATERAL (
        SELECT count(*) FILTER (WHERE p.pos > 0) = tip.pos AND bool_and(x.ok) AS linear,
            COALESCE(string_agg(x.items, ','::bytea ORDER BY p.pos), ''::bytea) AS items
        FROM (
            SELECT r.pos, r.data FROM checkpoint_blobs r
            WHERE tip.pos > 0 AND r.space_id = tip.space_id AND r.version = tip.root AND r.channel = tip.channel
            UNION ALL
            SELECT d.pos, d.data FROM checkpoint_blobs d
            WHERE tip.pos > 0 AND d.root = tip.root AND d.channel = tip.channel
              AND d.pos > 0 AND d.pos <= tip.pos AND d.space_id = tip.space_id
        ) AS p
        CROSS JOIN LATERAL (
            SELECT CASE WHEN p.data = 'null'::bytea THEN p.pos = 0
                    WHEN length(p.data) < 2 THEN false
                    ELSE get_byte(p.data, 0) = 91 AND get_byte(p.data, length(p.data) - 1) = 93 END AS ok,
                CASE WHEN p.data = 'null'::bytea OR length(p.data) < 2 THEN NULL
                    ELSE NULLIF(btrim(substring(p.data FROM 2 FOR length(p.data) - 2), '\x20090a0d'::bytea), ''::bytea) END AS items
        ) AS x
    ) AS joined
    CROSS JOIN LATERAL (
        SELECT r.channel,
            CASE WHEN tip.pos > 0 AND joined.linear THEN tip.version ELSE r.version END AS version,
            CASE WHEN tip.pos > 0 AND joined.linear THEN NULL ELSE r.base END AS base,
            CASE WHEN tip.pos > 0 AND joined.linear THEN '['::bytea || joined.items || ']'::bytea ELSE r.data END AS data
        FROM checkpoint_blobs r
        WHERE r.space_id = tip.space_id AND r.version = tip.root AND r.channel = tip.channel
        UNION ALL
        SELECT d.channel, d.version, d.base, d.data
        FROM checkpoint_blobs d
        WHERE tip.pos > 0 AND NOT joined.linear AND d.root = tip.root AND d.channel = tip.channel
          AND d.pos > 0 AND d.pos <= tip.pos AND d.space_id = tip.space_id
    ) AS b
)
SELECT cp.id, cp.parent_id, cp.created_at, cp.step, cp.source, cp.versions, cp.meta,
    bl.blob_channels, bl.blob_versions, bl.blob_bases, bl.blob_data,
    wr.write_task_ids, wr.write_seqs, wr.write_channels, wr.write_nodes, wr.write_data
FROM cp
CROSS JOIN LATERAL (
    SELECT COALESCE(array_agg(chain.channel), '{}')::text[] AS blob_channels,
        COALESCE(array_agg(chain.version), '{}')::uuid[] AS blob_versions,
        COALESCE(array_agg(COALESCE(chain.base, '00000000-0000-0000-0000-000000000000'::uuid)), '{}')::uuid[] AS blob_bases,
        COALESCE(array_agg(chain.data), '{}')::bytea[] AS blob_data
    FROM chain
) AS bl
CROSS JOIN LATERAL (
    SELECT COALESCE(array_agg(w.task_id), '{}')::text[] AS write_task_ids,
        COALESCE(array_agg(w.seq), '{}')::integer[] AS write_seqs,
        COALESCE(array_agg(w.channel), '{}')::text[] AS write_channels,
        COALESCE(array_agg(w.node), '{}')::text[] AS write_nodes,
        COALESCE(array_agg(w.data), '{}')::bytea[] AS write_data
    FROM checkpoint_writes w
    WHERE w.space_id = cp.space_id AND w.checkpoint_id = cp.id
) AS wr;

-- name: CheckpointList :many
-- Pages through a space's checkpoints newest first, without blobs. NULL filters match all;
-- a NULL limit means no limit.
SELECT c.id, c.parent_id, c.created_at, c.step, c.source, c.versions, c.meta
FROM checkpoint_heads h
JOIN checkpoints c ON c.space_id = h.space_id
WHERE h.thread_id = @thread_id::text AND h.ns = @ns::text
  AND (sqlc.narg('before')::uuid IS NULL OR c.id < sqlc.narg('before')::uuid)
  AND (sqlc.narg('source')::text IS NULL OR c.source = sqlc.narg('source')::text)
ORDER BY c.id DESC
LIMIT sqlc.narg('max_rows')::integer;

-- name: CheckpointExists :one
SELECT EXISTS (
    SELECT 1
    FROM checkpoint_heads h
    JOIN checkpoints c ON c.space_id = h.space_id AND c.id = @id::uuid
    WHERE h.thread_id = @thread_id::text AND h.ns = @ns::text
);

-- name: CheckpointsPrune :one
-- Deletes all but the newest keep checkpoints of each given space (the head always stays),
-- with their pending writes. Blobs are collected afterwards by CheckpointBlobsCollect.
WITH ranked AS (
    SELECT c.space_id, c.id,
        row_number() OVER (PARTITION BY c.space_id ORDER BY c.id = h.head DESC, c.id DESC) AS rank
    FROM checkpoint_heads h
    JOIN checkpoints c ON c.space_id = h.space_id
    WHERE h.space_id = ANY(@space_ids::bigint[])
), doomed AS (
    DELETE FROM checkpoints c
    USING ranked r
    WHERE c.space_id = r.space_id AND c.id = r.id AND r.rank > @keep::bigint
    RETURNING c.space_id, c.id
), writes AS (
    DELETE FROM checkpoint_writes w
    USING doomed d
    WHERE w.space_id = d.space_id AND w.checkpoint_id = d.id
)
SELECT count(*) FROM doomed;

-- name: CheckpointsDelete :execrows
-- Deletes everything stored in the given spaces but their heads; the rows affected count
-- the checkpoints.
WITH blobs AS (
    DELETE FROM checkpoint_blobs b WHERE b.space_id = ANY(@space_ids::bigint[])
), writes AS (
    DELETE FROM checkpoint_writes w WHERE w.space_id = ANY(@space_ids::bigint[])
)
DELETE FROM checkpoints c WHERE c.space_id = ANY(@space_ids::bigint[]);
