-- Heads of checkpoint spaces: one row per (thread_id, ns).

-- name: CheckpointHeadsDeleteThread :many
-- Deletes a thread's heads (every namespace) and returns their spaces. Deleting the head row
-- waits for a Put or PutWrites in flight on it, and makes later ones fail.
DELETE FROM checkpoint_heads
WHERE thread_id = @thread_id::text
RETURNING space_id;

-- name: CheckpointHeadsDeleteExpired :many
-- Deletes, for at most max_threads threads whose root-namespace head checkpoint was created
-- before cutoff, the heads of every namespace; returns their spaces, and which are the
-- threads' roots (one per thread). threads NULL means all.
DELETE FROM checkpoint_heads d
WHERE d.thread_id IN (
    SELECT h.thread_id
    FROM checkpoint_heads h
    JOIN checkpoints c ON c.space_id = h.space_id AND c.id = h.head
    WHERE h.ns = '' AND c.created_at < @cutoff::timestamptz
      AND (sqlc.narg('threads')::text[] IS NULL OR h.thread_id = ANY(sqlc.narg('threads')::text[]))
    ORDER BY h.thread_id
    LIMIT @max_threads::integer
)
RETURNING d.space_id, d.ns = '' AS root;

-- name: CheckpointHeadsOverLimit :many
-- Lists, in space order after the given one, at most max_spaces spaces that hold more than
-- keep checkpoints. threads NULL means all.
SELECT c.space_id
FROM checkpoints c
JOIN checkpoint_heads h ON h.space_id = c.space_id
WHERE c.space_id > @after::bigint
  AND (sqlc.narg('threads')::text[] IS NULL OR h.thread_id = ANY(sqlc.narg('threads')::text[]))
GROUP BY c.space_id
HAVING count(*) > @keep::bigint
ORDER BY c.space_id
LIMIT @max_spaces::integer;

-- name: CheckpointHeadsLock :many
-- Locks the given spaces' heads for the rest of the transaction, so no Put or PutWrites
-- interleaves with a prune of them; returns the spaces still there.
SELECT space_id
FROM checkpoint_heads
WHERE space_id = ANY(@space_ids::bigint[])
ORDER BY space_id
FOR UPDATE;

-- name: CheckpointHeadKeyShare :one
-- Holds a space's head for the rest of the transaction against Prune and DeleteThread (which
-- lock or delete it) but not against Puts (which only update it): a segment build takes it
-- before reading the deltas it joins, so no prune deletes them under it.
SELECT space_id
FROM checkpoint_heads
WHERE space_id = @space_id::bigint
FOR KEY SHARE;
