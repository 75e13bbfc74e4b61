-- Checkpoints (internal/postgres.Checkpointer). Every query is one statement, so it runs in
-- one snapshot and costs one round trip.

-- name: CheckpointPut :one
-- Saves a checkpoint, its blobs and the pending writes it carries, and moves the head of its
-- space, atomically. expect_head NULL creates the space (a new thread or namespace); otherwise
-- the head moves only if it still is expect_head (compare-and-set). No row back (pgx.ErrNoRows)
-- means the head did not match and nothing was written. A delta blob resolves its root and
-- position from its base; a missing base leaves root NULL and fails the NOT NULL constraint.
-- A delta at a position its chain already has (a fork from an old checkpoint) marks the
-- chain forked (migration 00013). blob_bases uses the nil UUID for "no base" (a full blob).
-- The segment_* arrays list the deltas that end a 32-position segment of their chain, for
-- CheckpointSegmentBuild once the transaction has committed. Full blobs at the checkpoint's
-- own version go in its row (inline_*, migration 00014); blob_* holds the others (deltas).
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
    INSERT INTO checkpoints (space_id, id, parent_id, created_at, step, source, versions, meta,
        blob_channels, blob_data)
    SELECT space.space_id, @id::uuid, sqlc.narg('parent_id')::uuid, @created_at::timestamptz,
        @step::integer, @source::text, @versions::jsonb, @meta::json,
        @inline_channels::text[], @inline_data::bytea[]
    FROM space
), resolved AS (
    SELECT space.space_id, b.version, b.channel, b.data,
        NULLIF(b.base, '00000000-0000-0000-0000-000000000000'::uuid) AS base,
        CASE WHEN b.base = '00000000-0000-0000-0000-000000000000'::uuid THEN b.version ELSE p.root END AS root,
        CASE WHEN b.base = '00000000-0000-0000-0000-000000000000'::uuid THEN 0 ELSE p.pos + 1 END AS pos
    FROM space
    CROSS JOIN (
        SELECT unnest(@blob_channels::text[]) AS channel, unnest(@blob_versions::uuid[]) AS version,
            unnest(@blob_bases::uuid[]) AS base, unnest(@blob_data::bytea[]) AS data
    ) AS b
    LEFT JOIN LATERAL (
        SELECT p.root, p.pos
        FROM checkpoint_values p
        WHERE p.space_id = space.space_id AND p.version = b.base AND p.channel = b.channel
        LIMIT 1
    ) AS p ON true
), blobs AS (
    INSERT INTO checkpoint_blobs (space_id, version, root, base, pos, channel, data)
    SELECT r.space_id, r.version, r.root, r.base, r.pos, r.channel, r.data
    FROM resolved r
    ON CONFLICT (space_id, version, channel) DO NOTHING
), forked AS (
    -- A delta whose position is taken (its base already has a successor) forks its chain.
    INSERT INTO checkpoint_forked_chains (space_id, root, channel)
    SELECT r.space_id, r.root, r.channel
    FROM resolved r
    WHERE r.pos > 0 AND EXISTS (
        SELECT 1 FROM checkpoint_blobs s
        WHERE s.root = r.root AND s.channel = r.channel AND s.pos = r.pos AND s.pos > 0
          AND s.space_id = r.space_id AND s.version <> r.version
    )
    ON CONFLICT (space_id, root, channel) DO NOTHING
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
SELECT space.space_id,
    COALESCE(seg.channels, '{}')::text[] AS segment_channels,
    COALESCE(seg.roots, '{}')::uuid[] AS segment_roots,
    COALESCE(seg.his, '{}')::integer[] AS segment_his
FROM space
CROSS JOIN (
    SELECT array_agg(r.channel) AS channels, array_agg(r.root) AS roots, array_agg(r.pos) AS his
    FROM resolved r
    WHERE r.pos > 0 AND r.pos % 32 = 0
) AS seg;

-- name: CheckpointPutStep :one
-- CheckpointPut for the common step: it moves an existing head (compare-and-set) and saves a
-- checkpoint whose values are all inline, with no delta blobs and no pending writes. One row
-- written and one updated, as little as a durable step can do; no row back (pgx.ErrNoRows)
-- means the head did not match and nothing was written.
WITH moved AS (
    UPDATE checkpoint_heads h
    SET head = @id::uuid
    WHERE h.thread_id = @thread_id::text AND h.ns = @ns::text AND h.head = @expect_head::uuid
    RETURNING h.space_id
), saved AS (
    INSERT INTO checkpoints (space_id, id, parent_id, created_at, step, source, versions, meta,
        blob_channels, blob_data)
    SELECT moved.space_id, @id::uuid, sqlc.narg('parent_id')::uuid, @created_at::timestamptz,
        @step::integer, @source::text, @versions::jsonb, @meta::json,
        @inline_channels::text[], @inline_data::bytea[]
    FROM moved
)
SELECT moved.space_id FROM moved;

-- name: CheckpointTupleGet :one
-- Loads a checkpoint (the head when id is NULL) with every blob its channel values need and
-- its pending writes, in one statement. For each channel, a unique-key probe of
-- checkpoint_values (the writing checkpoint's row, or a blob row; migration 00014) finds the
-- value at its version (the tip; "" in versions is the checkpoint's own id). A full value
-- (pos 0) comes back as it is. A delta chain that is not forked (migration 00013) is read as
-- its newest snapshot at or before the tip (migration 00030: every item up to its position,
-- one row) or else its root (one probe), its segments after that up to the tip (one range
-- scan; at most one row per 32 positions) and the deltas after the last segment (one range
-- scan of fewer than 32 rows),
-- and joined here into one JSON array, in position order, when those deltas are one per
-- position and every part is a JSON array (null, an append channel's nil slice, counts as
-- empty). Otherwise (a forked
-- chain, a non-array part) the root and every delta up to the tip come back as rows and the
-- caller follows base pointers. The LATERAL subqueries keep these probes per channel
-- whatever the planner's statistics say (a hash join over the space's blobs would cost as
-- much as the thread's history). Blobs and writes come back as parallel arrays, filled in
-- one aggregate pass each (so aligned).
WITH cp AS (
    SELECT c.space_id, c.id, c.parent_id, c.created_at, c.step, c.source, c.versions, c.meta
    FROM checkpoint_heads h
    JOIN checkpoints c ON c.space_id = h.space_id AND c.id = COALESCE(sqlc.narg('id')::uuid, h.head)
    WHERE h.thread_id = @thread_id::text AND h.ns = @ns::text
), tip AS (
    SELECT t.space_id, t.channel, t.version, t.root, t.pos, t.data
    FROM cp
    CROSS JOIN LATERAL jsonb_each_text(cp.versions) AS v (channel, version)
    CROSS JOIN LATERAL (
        SELECT b.space_id, b.channel, b.version, b.root, b.pos, b.data
        FROM checkpoint_values b
        WHERE b.space_id = cp.space_id AND b.channel = v.channel
          AND b.version = CASE WHEN v.version = '' THEN cp.id ELSE v.version::uuid END
        LIMIT 1
    ) AS t
), chain AS (
    -- A full blob is the value.
    SELECT tip.channel, tip.version, NULL::uuid AS base, tip.data
    FROM tip
    WHERE tip.pos = 0
    UNION ALL
    -- A delta chain.
    SELECT b.channel, b.version, b.base, b.data
    FROM tip
    CROSS JOIN LATERAL (
        SELECT NOT EXISTS (
                SELECT 1 FROM checkpoint_forked_chains f
                WHERE f.space_id = tip.space_id AND f.root = tip.root AND f.channel = tip.channel
            ) AS unforked,
            COALESCE((
                SELECT max(s.hi) FROM checkpoint_segments s
                WHERE s.space_id = tip.space_id AND s.root = tip.root AND s.channel = tip.channel
                  AND s.hi <= tip.pos
            ), 0) AS seg_hi,
            (
                SELECT r.data FROM checkpoint_values r
                WHERE r.space_id = tip.space_id AND r.version = tip.root AND r.channel = tip.channel
                LIMIT 1
            ) AS root_data
        OFFSET 0 -- a fence: each probe runs once, not once per reference to its column
    ) AS c
    LEFT JOIN LATERAL (
        -- The chain's newest snapshot at or before the tip (migration 00030).
        SELECT s.pos, s.items FROM checkpoint_snapshots s
        WHERE c.unforked AND s.space_id = tip.space_id AND s.root = tip.root AND s.channel = tip.channel
          AND s.pos <= tip.pos
        ORDER BY s.pos DESC
        LIMIT 1
    ) AS snap ON true
    CROSS JOIN LATERAL (
        SELECT greatest(c.seg_hi, COALESCE(snap.pos, 0)) AS hi
    ) AS joined_to
    CROSS JOIN LATERAL (
        SELECT c.unforked AND count(*) FILTER (WHERE p.pos > joined_to.hi) = tip.pos - joined_to.hi
                AND COALESCE(bool_and(x.ok), false) AS linear,
            COALESCE(string_agg(x.items, ','::bytea ORDER BY p.pos), ''::bytea) AS items
        FROM (
            SELECT 0 AS pos, c.root_data AS data, false AS segment
            WHERE c.unforked AND c.root_data IS NOT NULL AND snap.pos IS NULL
            UNION ALL
            SELECT 0, snap.items, true
            WHERE snap.pos IS NOT NULL
            UNION ALL
            SELECT s.hi - 31, s.items, true FROM checkpoint_segments s
            WHERE c.unforked AND s.space_id = tip.space_id AND s.root = tip.root AND s.channel = tip.channel
              AND s.hi <= c.seg_hi AND s.hi > COALESCE(snap.pos, 0)
            UNION ALL
            SELECT d.pos, d.data, false FROM checkpoint_blobs d
            WHERE c.unforked AND d.root = tip.root AND d.channel = tip.channel
              AND d.pos > 0 AND d.pos > joined_to.hi AND d.pos <= tip.pos AND d.space_id = tip.space_id
        ) AS p
        CROSS JOIN LATERAL (
            SELECT p.segment OR checkpoint_is_array(p.data) AS ok,
                CASE WHEN p.segment THEN NULLIF(p.data, ''::bytea) ELSE checkpoint_array_items(p.data) END AS items
        ) AS x
    ) AS joined
    CROSS JOIN LATERAL (
        SELECT tip.channel, tip.version, NULL::uuid AS base, '['::bytea || joined.items || ']'::bytea AS data
        WHERE joined.linear AND c.root_data IS NOT NULL
        UNION ALL
        SELECT tip.channel, tip.root, NULL::uuid, c.root_data
        WHERE NOT joined.linear AND c.root_data IS NOT NULL
        UNION ALL
        SELECT d.channel, d.version, d.base, d.data
        FROM checkpoint_blobs d
        WHERE NOT joined.linear AND d.root = tip.root AND d.channel = tip.channel
          AND d.pos > 0 AND d.pos <= tip.pos AND d.space_id = tip.space_id
    ) AS b
    WHERE tip.pos > 0
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

-- name: CheckpointSegmentBuild :one
-- Builds the segment of a chain that ends at position hi (a multiple of 32): the items of its
-- deltas at (hi - 32, hi] joined into one array body, and then the chain's snapshot at hi
-- (checkpoint_chain_compact, migration 00030). Nothing is built (false) unless those
-- deltas are exactly one per position and all JSON arrays (or null), their size is at most max_bytes,
-- the chain's previous segment exists (segments cover a prefix) and the chain is not forked.
-- Segments and snapshots duplicate what the deltas hold: building one twice, or not at all,
-- changes no value read.
SELECT checkpoint_chain_compact(@space_id::bigint, @root::uuid, @channel::text, @hi::integer,
    @max_bytes::bigint)::boolean AS built;

-- name: CheckpointPutAppend :one
-- CheckpointPut for a checkpoint without pending writes (a step that appends to a channel, a
-- new thread's first checkpoint): one call of checkpoint_put_append (migration 00030), which
-- also builds the segment and snapshot a delta completes. expect_head NULL creates the space.
-- No row back (pgx.ErrNoRows) means the head did not match (or the space exists) and nothing
-- was written. blob_bases uses the nil UUID for "no base" (a full blob).
SELECT a.space_id::bigint AS space_id
FROM checkpoint_put_append(@id::uuid, @thread_id::text, @ns::text, sqlc.narg('expect_head')::uuid,
    sqlc.narg('parent_id')::uuid, @created_at::timestamptz, @step::integer, @source::text,
    @versions::jsonb, @meta::json, @inline_channels::text[], @inline_data::bytea[],
    @blob_channels::text[], @blob_versions::uuid[], @blob_bases::uuid[], @blob_data::bytea[],
    @max_bytes::bigint) AS a;

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
WITH numbered AS (
    SELECT c.space_id, c.id,
        row_number() OVER (PARTITION BY c.space_id ORDER BY c.id = h.head DESC, c.id DESC) AS rank
    FROM checkpoint_heads h
    JOIN checkpoints c ON c.space_id = h.space_id
    WHERE h.space_id = ANY(@space_ids::bigint[])
), ranked AS (
    SELECT n.space_id, n.id, n.rank > @keep::bigint AS doomed FROM numbered n
), doomed AS (
    DELETE FROM checkpoints c
    USING ranked r
    WHERE c.space_id = r.space_id AND c.id = r.id AND r.doomed
    RETURNING c.space_id, c.id
), spilled AS (
    -- Inline values (migration 00014) a remaining checkpoint may still need move to
    -- checkpoint_blobs (a value already there stays as it is): those a kept checkpoint's versions name, and delta chains' roots.
    -- CheckpointBlobsCollect then drops what no kept checkpoint reads after all.
    INSERT INTO checkpoint_blobs (space_id, version, root, base, pos, channel, data)
    SELECT u.space_id, u.version, u.root, NULL, 0, u.channel, u.data
    FROM ranked r
    JOIN checkpoint_values u ON u.space_id = r.space_id AND u.version = r.id AND u.pos = 0
    WHERE r.doomed
      AND (EXISTS (
              SELECT 1 FROM ranked k
              JOIN checkpoints kc ON kc.space_id = k.space_id AND kc.id = k.id
              WHERE k.space_id = u.space_id AND NOT k.doomed
                AND kc.versions ->> u.channel = u.version::text
          )
          OR EXISTS (
              SELECT 1 FROM checkpoint_blobs d
              WHERE d.root = u.version AND d.channel = u.channel AND d.pos > 0 AND d.space_id = u.space_id
          ))
    ON CONFLICT (space_id, version, channel) DO NOTHING
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
), snapshots AS (
    DELETE FROM checkpoint_snapshots s WHERE s.space_id = ANY(@space_ids::bigint[])
), segments AS (
    DELETE FROM checkpoint_segments s WHERE s.space_id = ANY(@space_ids::bigint[])
), forks AS (
    DELETE FROM checkpoint_forked_chains f WHERE f.space_id = ANY(@space_ids::bigint[])
), writes AS (
    DELETE FROM checkpoint_writes w WHERE w.space_id = ANY(@space_ids::bigint[])
)
DELETE FROM checkpoints c WHERE c.space_id = ANY(@space_ids::bigint[]);
