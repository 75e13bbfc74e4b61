-- Channel values of checkpoints: full blobs and delta chains.

-- name: CheckpointBlobsCollect :execrows
-- Deletes the blobs (and delta chain segments, snapshots and fork marks) of the given spaces that no
-- remaining checkpoint needs. A blob is needed when a checkpoint's version of its channel (a
-- tip) is in the same chain (root) at the same or a later position: that keeps every delta
-- chain's base and, conservatively, the rows of sibling fork branches below a live tip.
WITH tip AS (
    SELECT t.space_id, t.channel, t.root, max(t.pos) AS pos
    FROM checkpoints c
    CROSS JOIN LATERAL jsonb_each_text(c.versions) AS v (channel, version)
    JOIN checkpoint_blobs t
        ON t.space_id = c.space_id AND t.channel = v.channel
        AND t.version = CASE WHEN v.version = '' THEN c.id ELSE v.version::uuid END
    WHERE c.space_id = ANY(@space_ids::bigint[])
    GROUP BY t.space_id, t.channel, t.root
), segments AS (
    -- A segment is read by a tip of its chain at or after its last position.
    DELETE FROM checkpoint_segments s
    WHERE s.space_id = ANY(@space_ids::bigint[])
      AND NOT EXISTS (
          SELECT 1 FROM tip
          WHERE tip.space_id = s.space_id AND tip.channel = s.channel AND tip.root = s.root
            AND s.hi <= tip.pos
      )
), snapshots AS (
    -- So is a snapshot (migration 00030).
    DELETE FROM checkpoint_snapshots s
    WHERE s.space_id = ANY(@space_ids::bigint[])
      AND NOT EXISTS (
          SELECT 1 FROM tip
          WHERE tip.space_id = s.space_id AND tip.channel = s.channel AND tip.root = s.root
            AND s.pos <= tip.pos
      )
), forks AS (
    -- A fork mark goes with the last blob of its chain.
    DELETE FROM checkpoint_forked_chains f
    WHERE f.space_id = ANY(@space_ids::bigint[])
      AND NOT EXISTS (
          SELECT 1 FROM tip
          WHERE tip.space_id = f.space_id AND tip.channel = f.channel AND tip.root = f.root
      )
)
DELETE FROM checkpoint_blobs b
WHERE b.space_id = ANY(@space_ids::bigint[])
  AND NOT EXISTS (
      SELECT 1 FROM tip
      WHERE tip.space_id = b.space_id AND tip.channel = b.channel AND tip.root = b.root
        AND b.pos <= tip.pos
  );

