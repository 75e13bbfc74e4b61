-- Flat reads of long append channels, and appending steps in one statement
-- (internal/postgres.Checkpointer).
--
-- Snapshots. Segments (00013) join 32 deltas a row, so a head read still costs a row per 32
-- steps: over 300 at 10,000. A snapshot holds the items of a whole chain, root included, up
-- to position pos (a multiple of 32), joined into one array body without brackets. It is
-- built with a segment that ends at pos, from the chain's previous snapshot and the segments
-- after it, when those span max(32, pos / 32) positions (so a snapshot's write costs at most
-- 32 times what the chain gained since the last one), and then replaces the chain's older
-- snapshots: a chain keeps one. A read at position p joins the newest snapshot at or before
-- p, the few segments after it (at most p / 1024) and the fewer than 32 deltas after those; a
-- read older than the newest snapshot (a fork from an old checkpoint, the history view) reads
-- the root, the segments and the deltas as before. Like segments, snapshots are only built where segments
-- are (linear chains of small items: large items cost a read their bytes, not their rows) and
-- duplicate what the deltas hold, so they can always be rebuilt or dropped.
--
-- Appending steps. checkpoint_put_append does what CheckpointPut does for a checkpoint without
-- pending writes (a step that appends to a channel, or a new thread's first checkpoint), in
-- one call: move the head (compare-and-set; no row back when it did not match, and nothing is
-- written) or, with no expected head, create it (no row back when it exists), save the checkpoint with its inline values, write each blob with its chain's
-- root and position resolved from its base (a missing base leaves root NULL and fails the NOT
-- NULL constraint), mark a chain forked when a delta's position is taken, and build the
-- segment and snapshot a delta completes. One round trip and one statement, like a
-- value-only step (CheckpointPutStep, which stays the cheapest for those); PL/pgSQL keeps its statements' plans for the connection, so no call plans
-- the big CTE afresh.

-- +goose Up
CREATE TABLE checkpoint_snapshots (
    space_id bigint NOT NULL,
    root     uuid NOT NULL,
    channel  text NOT NULL,
    pos      integer NOT NULL CHECK (pos > 0),
    items    bytea NOT NULL,
    PRIMARY KEY (space_id, root, channel, pos)
);

-- A snapshot is read whole at every head read: lz4 decompresses it several times faster than
-- the default pglz (measured: a 300 KB snapshot's read took half the time), where the server
-- has it.
-- +goose StatementBegin
DO $$
BEGIN
    IF EXISTS (SELECT 1 FROM pg_settings WHERE name = 'default_toast_compression' AND 'lz4' = ANY(enumvals)) THEN
        ALTER TABLE checkpoint_snapshots ALTER COLUMN items SET COMPRESSION lz4;
    END IF;
END $$;
-- +goose StatementEnd

-- +goose StatementBegin
-- checkpoint_chain_compact builds the segment of a chain ending at hi (a multiple of 32), as
-- CheckpointSegmentBuild did (see 00013 for when one is worth building), and then the chain's
-- snapshot at hi, which replaces its older ones. It returns whether the segment exists.
CREATE FUNCTION checkpoint_chain_compact(p_space bigint, p_root uuid, p_channel text, p_hi integer,
    p_max_bytes bigint) RETURNS boolean
LANGUAGE plpgsql AS $$
DECLARE
    seg bytea;
    prev bytea;
    root_data bytea;
    snap bytea;
    prev_pos integer;
    n bigint;
BEGIN
    IF p_hi % 32 <> 0 OR p_hi <= 0 THEN
        RETURN false;
    END IF;
    IF EXISTS (SELECT 1 FROM checkpoint_forked_chains f
               WHERE f.space_id = p_space AND f.root = p_root AND f.channel = p_channel) THEN
        RETURN false;
    END IF;
    IF p_hi > 32 AND NOT EXISTS (SELECT 1 FROM checkpoint_segments s
            WHERE s.space_id = p_space AND s.root = p_root AND s.channel = p_channel AND s.hi = p_hi - 32) THEN
        RETURN false;
    END IF;
    SELECT s.items INTO seg FROM checkpoint_segments s
    WHERE s.space_id = p_space AND s.root = p_root AND s.channel = p_channel AND s.hi = p_hi;
    IF NOT FOUND THEN
        INSERT INTO checkpoint_segments (space_id, root, channel, hi, items)
        SELECT p_space, p_root, p_channel, p_hi, COALESCE(agg.items, ''::bytea)
        FROM (
            SELECT count(*) AS n, COALESCE(bool_and(checkpoint_is_array(d.data)), false) AS ok,
                sum(length(d.data)) AS size,
                string_agg(checkpoint_array_items(d.data), ','::bytea ORDER BY d.pos) AS items
            FROM checkpoint_blobs d
            WHERE d.root = p_root AND d.channel = p_channel AND d.pos > p_hi - 32 AND d.pos <= p_hi
              AND d.space_id = p_space
        ) AS agg
        WHERE agg.n = 32 AND agg.ok AND agg.size <= p_max_bytes
        ON CONFLICT (space_id, root, channel, hi) DO NOTHING
        RETURNING items INTO seg;
        IF seg IS NULL THEN
            RETURN false;
        END IF;
    END IF;
    -- The snapshot at hi: the newest one (or the root) and the segments after it, once they
    -- are at least max(32, hi / 32) positions: a snapshot then costs at most 32 times the
    -- bytes its chain gained since the last one, whatever the chain's length, and a read joins
    -- at most hi / 1024 segments after it (under 10 at 10,000) and fewer than 32 deltas.
    SELECT s.pos, s.items INTO prev_pos, prev FROM checkpoint_snapshots s
    WHERE s.space_id = p_space AND s.root = p_root AND s.channel = p_channel AND s.pos < p_hi
    ORDER BY s.pos DESC LIMIT 1;
    IF FOUND THEN
        IF p_hi - prev_pos < greatest(32, (p_hi / 1024) * 32) THEN
            RETURN true;
        END IF;
        prev := NULLIF(prev, ''::bytea);
    ELSE
        prev_pos := 0;
        SELECT v.data INTO root_data FROM checkpoint_values v
        WHERE v.space_id = p_space AND v.version = p_root AND v.channel = p_channel LIMIT 1;
        IF root_data IS NULL OR NOT checkpoint_is_array(root_data) THEN
            RETURN true;
        END IF;
        prev := checkpoint_array_items(root_data);
    END IF;
    SELECT count(*), string_agg(NULLIF(s.items, ''::bytea), ','::bytea ORDER BY s.hi) INTO n, seg
    FROM checkpoint_segments s
    WHERE s.space_id = p_space AND s.root = p_root AND s.channel = p_channel
      AND s.hi > prev_pos AND s.hi <= p_hi;
    IF n <> (p_hi - prev_pos) / 32 THEN
        RETURN true; -- a segment is missing: no snapshot
    END IF;
    snap := CASE
        WHEN prev IS NULL THEN COALESCE(seg, ''::bytea)
        WHEN seg IS NULL THEN prev
        ELSE prev || ','::bytea || seg END;
    INSERT INTO checkpoint_snapshots (space_id, root, channel, pos, items)
    VALUES (p_space, p_root, p_channel, p_hi, snap)
    ON CONFLICT (space_id, root, channel, pos) DO NOTHING;
    DELETE FROM checkpoint_snapshots s
    WHERE s.space_id = p_space AND s.root = p_root AND s.channel = p_channel AND s.pos < p_hi;
    RETURN true;
END
$$;
-- +goose StatementEnd

-- +goose StatementBegin
CREATE FUNCTION checkpoint_put_append(p_id uuid, p_thread text, p_ns text, p_expect uuid,
    p_parent uuid, p_created timestamptz, p_step integer, p_source text, p_versions jsonb,
    p_meta json, p_inline_channels text[], p_inline_data bytea[], p_blob_channels text[],
    p_blob_versions uuid[], p_blob_bases uuid[], p_blob_data bytea[], p_max_bytes bigint)
RETURNS TABLE (space_id bigint)
LANGUAGE plpgsql AS $$
DECLARE
    sp bigint;
    i integer;
    b_root uuid;
    b_pos integer;
    b_base uuid;
BEGIN
    IF p_expect IS NULL THEN
        INSERT INTO checkpoint_heads AS h (thread_id, ns, head) VALUES (p_thread, p_ns, p_id)
        ON CONFLICT (thread_id, ns) DO NOTHING
        RETURNING h.space_id INTO sp;
    ELSE
        UPDATE checkpoint_heads h SET head = p_id
        WHERE h.thread_id = p_thread AND h.ns = p_ns AND h.head = p_expect
        RETURNING h.space_id INTO sp;
    END IF;
    IF sp IS NULL THEN
        RETURN; -- the head moved: no row, nothing written
    END IF;
    INSERT INTO checkpoints (space_id, id, parent_id, created_at, step, source, versions, meta,
        blob_channels, blob_data)
    VALUES (sp, p_id, p_parent, p_created, p_step, p_source, p_versions, p_meta,
        p_inline_channels, p_inline_data);
    FOR i IN 1 .. COALESCE(array_length(p_blob_channels, 1), 0) LOOP
        b_base := NULLIF(p_blob_bases[i], '00000000-0000-0000-0000-000000000000'::uuid);
        IF b_base IS NULL THEN
            b_root := p_blob_versions[i];
            b_pos := 0;
        ELSE
            -- The base: a delta or full blob row, or a value inline in its checkpoint's row.
            SELECT d.root, d.pos + 1 INTO b_root, b_pos FROM checkpoint_blobs d
            WHERE d.space_id = sp AND d.version = b_base AND d.channel = p_blob_channels[i];
            IF NOT FOUND THEN
                SELECT c.id, 1 INTO b_root, b_pos FROM checkpoints c
                WHERE c.space_id = sp AND c.id = b_base AND p_blob_channels[i] = ANY(c.blob_channels);
            END IF;
        END IF;
        IF b_pos > 0 AND EXISTS (
            SELECT 1 FROM checkpoint_blobs s
            WHERE s.root = b_root AND s.channel = p_blob_channels[i] AND s.pos = b_pos
              AND s.space_id = sp AND s.version <> p_blob_versions[i]
        ) THEN
            INSERT INTO checkpoint_forked_chains (space_id, root, channel)
            VALUES (sp, b_root, p_blob_channels[i])
            ON CONFLICT DO NOTHING;
        END IF;
        INSERT INTO checkpoint_blobs (space_id, version, root, base, pos, channel, data)
        VALUES (sp, p_blob_versions[i], b_root, b_base, COALESCE(b_pos, 1), p_blob_channels[i], p_blob_data[i])
        ON CONFLICT DO NOTHING;
        IF b_pos > 0 AND b_pos % 32 = 0 THEN
            PERFORM checkpoint_chain_compact(sp, b_root, p_blob_channels[i], b_pos, p_max_bytes);
        END IF;
    END LOOP;
    space_id := sp;
    RETURN NEXT;
END
$$;
-- +goose StatementEnd

-- +goose Down
DROP FUNCTION checkpoint_put_append(uuid, text, text, uuid, uuid, timestamptz, integer, text, jsonb,
    json, text[], bytea[], text[], uuid[], uuid[], bytea[], bigint);
DROP FUNCTION checkpoint_chain_compact(bigint, uuid, text, integer, bigint);
DROP TABLE checkpoint_snapshots;
