-- A job that starts a new run on a thread which already ran (a re-run) must apply its input
-- once: on its first attempt, not again when a rescued attempt finds the thread finished by
-- its own run. The runner used to tell the two apart by comparing the head checkpoint's time
-- (the worker's clock) with the job's created_at (the database's clock), which clock skew
-- between machines gets wrong both ways. base_checkpoint is the thread's head when the job
-- was enqueued (NULL: the thread did not exist yet): while the head is still that checkpoint,
-- the job's run has not started.

-- +goose Up
ALTER TABLE jobs ADD COLUMN base_checkpoint uuid;
-- The jobs that can still run (a failed one by an admin's retry) get the base their run
-- started from. A job never touched since it was queued (updated_at is set at every change)
-- has not started: its base is the head now, whatever the clocks say. For the others the
-- old rule decides, clocks and all: their head predates them only if their run never began.
-- The backfill is no change of the jobs': jobs_guard, which stamps updated_at, stays out.
ALTER TABLE jobs DISABLE TRIGGER jobs_guard;
UPDATE jobs j SET base_checkpoint = h.head
FROM checkpoint_heads h
JOIN checkpoints c ON c.space_id = h.space_id AND c.id = h.head
WHERE h.thread_id = j.thread_id AND h.ns = '' AND j.input IS NOT NULL AND j.status <> 'succeeded'
    AND ((j.status = 'queued' AND j.updated_at = j.created_at) OR c.created_at < j.created_at);
ALTER TABLE jobs ENABLE TRIGGER jobs_guard;

-- +goose Down
ALTER TABLE jobs DROP COLUMN base_checkpoint;
