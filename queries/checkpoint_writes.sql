-- Pending writes of checkpoints.

-- name: CheckpointWritesPut :execrows
-- Upserts pending writes against a saved checkpoint. Zero rows with a non-empty input means
-- the checkpoint does not exist. The key share lock on the head makes a concurrent
-- DeleteThread or Prune of the space wait (or this find nothing), so no write outlives its
-- checkpoint; a concurrent Put is not blocked.
WITH target AS (
    SELECT c.space_id, c.id
    FROM checkpoint_heads h
    JOIN checkpoints c ON c.space_id = h.space_id AND c.id = @checkpoint_id::uuid
    WHERE h.thread_id = @thread_id::text AND h.ns = @ns::text
    FOR KEY SHARE OF h
)
INSERT INTO checkpoint_writes (space_id, checkpoint_id, seq, task_id, channel, node, data)
SELECT target.space_id, target.id, w.seq, w.task_id, w.channel, w.node, w.data
FROM target
CROSS JOIN (
    SELECT unnest(@task_ids::text[]) AS task_id, unnest(@seqs::integer[]) AS seq,
        unnest(@channels::text[]) AS channel, unnest(@nodes::text[]) AS node,
        unnest(@data::bytea[]) AS data
) AS w
ON CONFLICT (space_id, checkpoint_id, task_id, seq, channel)
DO UPDATE SET node = EXCLUDED.node, data = EXCLUDED.data;
