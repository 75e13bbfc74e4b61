-- Jobs (internal/postgres.JobStore). Every status change names the status it leaves in its
-- WHERE clause (and, for a worker's change, the lease owner), after runner.CheckTransition
-- allowed it; the jobs_guard trigger checks the machine again.

-- name: JobInsert :one
-- base_checkpoint: the thread's head now (NULL for a new thread), so the runner knows whether
-- the job's run has started (the head moved) without comparing clocks. checkpoint_heads has
-- no tenant: thread ids are unique across tenants (new threads get a UUID, an evaluation's
-- thread is its id), and the job is the tenant's.
INSERT INTO jobs (id, tenant_id, workflow, thread_id, trace_id, subject, input, base_checkpoint, trace_parent)
VALUES (@id, @tenant_id, @workflow, @thread_id, @trace_id, @subject, sqlc.narg('input')::jsonb,
    (SELECT head FROM checkpoint_heads WHERE checkpoint_heads.thread_id = @thread_id AND ns = ''),
    @trace_parent::text)
RETURNING *;

-- name: JobGet :one
SELECT * FROM jobs
WHERE id = @id AND tenant_id = @tenant_id;

-- name: JobLock :one
-- Loads a tenant's job and locks it until the transaction ends.
SELECT * FROM jobs
WHERE id = @id AND tenant_id = @tenant_id
FOR UPDATE;

-- name: JobLockByID :one
SELECT * FROM jobs
WHERE id = @id
FOR UPDATE;

-- name: JobState :one
-- Where a job is now, to explain a refused change.
SELECT status, lease_owner, retry_count FROM jobs
WHERE id = @id;

-- name: JobClaim :many
-- Leases up to max_jobs runnable jobs to worker, oldest run_after first, but none of a thread
-- a run is still settling (see migration 00023). SKIP LOCKED: workers claiming at once take
-- disjoint sets and never wait for each other.
WITH picked AS (
    SELECT id FROM jobs j
    WHERE (j.status = 'queued' OR (j.status = 'retry_scheduled' AND j.run_after <= now()))
      AND NOT EXISTS (
          SELECT 1 FROM jobs s
          WHERE s.tenant_id = j.tenant_id AND s.thread_id = j.thread_id AND s.settling_until > now()
      )
    ORDER BY j.run_after, j.id
    LIMIT @max_jobs::integer
    FOR UPDATE SKIP LOCKED
)
UPDATE jobs
SET status = 'running', lease_owner = @worker::text,
    lease_until = now() + make_interval(secs => @lease_seconds::float8),
    settling_owner = NULL, settling_until = NULL -- (only an expired mark can be left: a dead worker's)
FROM picked
WHERE jobs.id = picked.id
RETURNING jobs.*;

-- name: JobHeartbeat :many
-- Extends the leases worker still holds, and the settling of the jobs in settling it marked;
-- returns the ids of the leases.
WITH settling AS (
    UPDATE jobs
    SET settling_until = now() + make_interval(secs => @lease_seconds::float8)
    WHERE id = ANY(@settling::uuid[]) AND settling_owner = @worker::text
)
UPDATE jobs
SET lease_until = now() + make_interval(secs => @lease_seconds::float8)
WHERE id = ANY(@ids::uuid[]) AND status = 'running' AND lease_owner = @worker::text
RETURNING id;

-- name: JobRescue :many
-- Requeues running jobs whose lease expired (their worker died or stalled) and counts the
-- rescue. Jobs locked by a transaction in flight are left for the next rescue.
WITH expired AS (
    SELECT id FROM jobs
    WHERE status = 'running' AND lease_until < now()
    ORDER BY lease_until
    LIMIT @max_jobs::integer
    FOR UPDATE SKIP LOCKED
)
UPDATE jobs
SET status = 'queued', lease_owner = NULL, lease_until = NULL, run_after = now(),
    rescues = jobs.rescues + 1
FROM expired
WHERE jobs.id = expired.id AND jobs.status = 'running' AND jobs.lease_until < now()
RETURNING jobs.id;

-- name: JobExpirePauses :many
-- waiting_review → running leased to worker, for jobs paused before the cutoff (no reviewer
-- answered in time: their tokens have expired), in the transaction that dead-letters them;
-- with the interrupts they were paused at. A job locked by a resume in flight is left for the
-- next sweep (which finds it resumed).
WITH expired AS (
    SELECT id, interrupts AS paused_interrupts FROM jobs
    WHERE status = 'waiting_review' AND paused_at < @paused_before::timestamptz
    ORDER BY paused_at
    LIMIT @max_jobs::integer
    FOR UPDATE SKIP LOCKED
)
UPDATE jobs
SET status = 'running', lease_owner = @worker::text,
    lease_until = now() + make_interval(secs => @lease_seconds::float8),
    interrupts = '[]', paused_at = NULL
FROM expired
WHERE jobs.id = expired.id AND jobs.status = 'waiting_review'
RETURNING jobs.id, jobs.tenant_id, jobs.thread_id, jobs.workflow, jobs.trace_id, jobs.retry_count,
    expired.paused_interrupts;

-- name: JobSettling :execrows
-- Marks the running job leased to worker as settling (see migration 00023), before its run
-- moves it to rest.
UPDATE jobs
SET settling_owner = @worker::text, settling_until = now() + make_interval(secs => @lease_seconds::float8)
WHERE id = @id AND status = 'running' AND lease_owner = @worker::text;

-- name: JobSettled :exec
-- Ends the settling worker marked, and wakes idle workers when a job of the thread is
-- runnable (it was held back meanwhile).
WITH settled AS (
    UPDATE jobs
    SET settling_owner = NULL, settling_until = NULL
    WHERE jobs.id = @id AND jobs.settling_owner = @worker::text
    RETURNING jobs.tenant_id, jobs.thread_id
)
SELECT pg_notify('weft_jobs', '')
FROM settled
WHERE EXISTS (
    SELECT 1 FROM jobs j
    WHERE j.tenant_id = settled.tenant_id AND j.thread_id = settled.thread_id
      AND (j.status = 'queued' OR (j.status = 'retry_scheduled' AND j.run_after <= now()))
);

-- name: JobRelease :many
-- Requeues the jobs a stopping worker still holds.
UPDATE jobs
SET status = 'queued', lease_owner = NULL, lease_until = NULL, run_after = now()
WHERE id = ANY(@ids::uuid[]) AND status = 'running' AND lease_owner = @worker::text
RETURNING id;

-- name: JobSucceed :execrows
UPDATE jobs
SET status = 'succeeded', lease_owner = NULL, lease_until = NULL
WHERE id = @id AND status = 'running' AND lease_owner = @worker::text;

-- name: JobPause :execrows
-- running → waiting_review with the pending interrupts; a resume value from an earlier
-- pause is spent. The run ended in its worker's hands, so the rescue count starts again.
UPDATE jobs
SET status = 'waiting_review', lease_owner = NULL, lease_until = NULL, paused_at = now(),
    interrupts = @interrupts::jsonb, resume = NULL, rescues = 0
WHERE id = @id AND status = 'running' AND lease_owner = @worker::text;

-- name: JobRetry :execrows
-- running → retry_scheduled: the error joins the history, retry_count grows by one, and the
-- retry forks from retry_from when the graph recorded the failure on its error route. The
-- run ended in its worker's hands (retry_count bounds these), so the rescue count starts
-- again.
UPDATE jobs
SET status = 'retry_scheduled', lease_owner = NULL, lease_until = NULL,
    errors = errors || jsonb_build_array(@error::jsonb), retry_count = retry_count + 1,
    run_after = @run_after, retry_from = sqlc.narg('retry_from')::text, rescues = 0
WHERE id = @id AND status = 'running' AND lease_owner = @worker::text;

-- name: JobDeadLetterStart :one
-- running → dlq_pending: the error joins the history; the lease is kept for the next steps.
UPDATE jobs
SET status = 'dlq_pending', errors = errors || jsonb_build_array(@error::jsonb),
    retry_from = sqlc.narg('retry_from')::text
WHERE id = @id AND status = 'running' AND lease_owner = @worker::text
RETURNING *;

-- name: JobDeadLetterRecorded :execrows
UPDATE jobs
SET status = 'dlq_recorded'
WHERE id = @id AND status = 'dlq_pending' AND lease_owner = @worker::text;

-- name: JobDeadLetterFail :execrows
UPDATE jobs
SET status = 'failed', lease_owner = NULL, lease_until = NULL
WHERE id = @id AND status = 'dlq_recorded' AND lease_owner = @worker::text;

-- name: JobResume :one
-- waiting_review → running leased to worker, with the reviewer's decision (and the resume
-- caller's traceparent, when it sent one).
UPDATE jobs
SET status = 'running', lease_owner = @worker::text,
    lease_until = now() + make_interval(secs => @lease_seconds::float8),
    resume = @resume::jsonb, interrupts = '[]', paused_at = NULL,
    trace_parent = COALESCE(NULLIF(@trace_parent::text, ''), trace_parent)
WHERE id = @id AND status = 'waiting_review'
RETURNING *;

-- name: JobRequeue :one
-- failed → queued (an admin retry). retry_count grows by one, so the next dead-lettering
-- has its own (job_id, retry_count) key; the rescue count starts again.
UPDATE jobs
SET status = 'queued', run_after = now(), retry_count = retry_count + 1, resume = NULL, rescues = 0
WHERE id = @id AND tenant_id = @tenant_id AND status = 'failed'
RETURNING *;

-- name: JobList :many
-- A tenant's jobs newest first, after the (created_at, id) cursor when given.
SELECT * FROM jobs
WHERE tenant_id = @tenant_id
  AND (sqlc.narg('status')::text IS NULL OR status = sqlc.narg('status')::text)
  AND (sqlc.narg('workflow')::text IS NULL OR workflow = sqlc.narg('workflow')::text)
  AND (sqlc.narg('before_at')::timestamptz IS NULL
       OR (created_at, id) < (sqlc.narg('before_at')::timestamptz, sqlc.narg('before_id')::uuid))
ORDER BY created_at DESC, id DESC
LIMIT @max_rows::integer;

-- name: JobListNewer :many
-- JobList's page the other way: a tenant's jobs just newer than the (created_at, id) cursor,
-- oldest first (the caller turns them around), along the same index.
SELECT * FROM jobs
WHERE tenant_id = @tenant_id
  AND (sqlc.narg('status')::text IS NULL OR status = sqlc.narg('status')::text)
  AND (sqlc.narg('workflow')::text IS NULL OR workflow = sqlc.narg('workflow')::text)
  AND (created_at, id) > (@after_at::timestamptz, @after_id::uuid)
ORDER BY created_at, id
LIMIT @max_rows::integer;

-- name: JobDashboardLists :many
-- The dashboard's lists in one statement. List k (counting from 1) is the newest (or longest waiting) limits[k]
-- of the tenant's jobs of workflows[k] in statuses[k] that are their thread's latest job (a
-- failure whose thread was started again since is history, not news), each one range of
-- jobs_tenant_workflow_status, and, for jobs that run or wait to retry, the nodes they
-- completed without error (from the node execution records, which are written shortly after
-- each node ends).
SELECT l.list::integer AS list, sqlc.embed(j), coalesce(d.nodes, '{}')::text[] AS nodes_done
-- The lists come through a subquery so that no plan knows how many there are: a custom plan
-- would look cheaper than the generic one and the statement would be planned again at
-- every execution (about a millisecond, several times its run).
FROM unnest((SELECT @workflows::text[])) WITH ORDINALITY AS l (workflow, list)
-- Each list's ids first, then their rows by primary key (joined on the ids of a list rather
-- than on a subquery, whose row count a generic plan cannot know and may hash all of jobs for).
-- A list is the newest jobs, or with longest_waiting the waiting reviews that waited longest
-- (by paused_at, as the inbox lists them; a range of jobs_waiting): two scans, of which the
-- list's flag runs only one (the flag is a one-time filter).
JOIN jobs j ON j.id = ANY (ARRAY(
    SELECT k.id FROM jobs k
    WHERE NOT (@longest_waiting::boolean[])[l.list]
      AND k.tenant_id = @tenant_id AND k.workflow = l.workflow AND k.status = (@statuses::text[])[l.list]
      -- A correlated scalar subquery, each probe the first entry of a range of
      -- jobs_tenant_thread_latest (as an anti join, a plan made while the table was small
      -- probed by tenant alone and read all of its jobs for every candidate). k is one of
      -- its thread's jobs, so no later than the latest: at least the latest means it is the
      -- latest. Written as k.id = (the latest's id), the planner takes it for a unique-key
      -- match, expects one row, and once the table has statistics (after an ANALYZE, by
      -- autovacuum or by hand) may read every job of the status, then sort (2.5-5 ms and a
      -- thousand buffers measured under load), since a LIMIT seems to stop nothing early; an
      -- inequality it estimates at a third of the rows, which keeps the ordered index scan.
      AND (k.created_at, k.id) >= (SELECT n.created_at, n.id FROM jobs n
          WHERE n.tenant_id = k.tenant_id AND n.thread_id = k.thread_id
          ORDER BY n.created_at DESC, n.id DESC LIMIT 1)
    ORDER BY k.created_at DESC, k.id DESC
    LIMIT (@limits::integer[])[l.list]) || ARRAY(
    SELECT k.id FROM jobs k
    WHERE (@longest_waiting::boolean[])[l.list]
      AND k.tenant_id = @tenant_id AND k.workflow = l.workflow AND k.status = 'waiting_review'
      AND (k.created_at, k.id) >= (SELECT n.created_at, n.id FROM jobs n
          WHERE n.tenant_id = k.tenant_id AND n.thread_id = k.thread_id
          ORDER BY n.created_at DESC, n.id DESC LIMIT 1)
    ORDER BY k.paused_at, k.id
    LIMIT (@limits::integer[])[l.list]))
LEFT JOIN LATERAL (
    SELECT array_agg(DISTINCT n.node ORDER BY n.node) AS nodes
    FROM node_executions n
    WHERE j.status IN ('running', 'retry_scheduled') AND n.tenant_id = j.tenant_id
      AND n.thread_id = j.thread_id AND n.job_id = j.id::text AND n.error_code = ''
) d ON true
ORDER BY l.list, CASE WHEN (@longest_waiting::boolean[])[l.list] THEN j.paused_at END,
    CASE WHEN (@longest_waiting::boolean[])[l.list] THEN j.id END, j.created_at DESC, j.id DESC;

-- name: JobFinishedThreads :many
-- A page of the threads whose every job has ended (succeeded or failed), the ones Prune may
-- trim: up to max_rows of them after the thread id after, in thread id order (jobs_thread).
-- A thread whose latest job's dead letter waits for an admin is left whole: its retry goes
-- on from the last checkpoint (an older run's entry can only be discarded).
SELECT DISTINCT j.thread_id FROM jobs j
WHERE j.thread_id > @after::text AND j.status IN ('succeeded', 'failed')
  AND NOT EXISTS (SELECT 1 FROM jobs k WHERE k.thread_id = j.thread_id AND k.status NOT IN ('succeeded', 'failed'))
  AND NOT EXISTS (SELECT 1 FROM dlq d
                  WHERE d.status = 'recorded' AND d.job_id = (SELECT k.id FROM jobs k WHERE k.thread_id = j.thread_id
                                                              ORDER BY k.created_at DESC, k.id DESC LIMIT 1))
ORDER BY j.thread_id
LIMIT @max_rows::integer;

-- name: JobLatestOfThreads :many
-- The newest job of each of a tenant's threads among thread_ids (one range of
-- jobs_tenant_thread_latest per thread).
SELECT t.thread_id::text AS thread_id, l.id
FROM unnest(@thread_ids::text[]) AS t (thread_id)
CROSS JOIN LATERAL (
    SELECT j.id FROM jobs j
    WHERE j.tenant_id = @tenant_id AND j.thread_id = t.thread_id
    ORDER BY j.created_at DESC, j.id DESC
    LIMIT 1
) AS l;

-- name: JobLatestByThread :one
-- The newest job of a tenant's thread: which workflow it runs, and proof the thread is the tenant's.
SELECT * FROM jobs WHERE tenant_id = @tenant_id AND thread_id = @thread_id ORDER BY created_at DESC, id DESC LIMIT 1;

-- name: JobReviewList :many
-- The review inbox: a tenant's jobs waiting for review, longest waiting first; of one
-- workflow when workflow is not NULL.
SELECT * FROM jobs j
WHERE j.tenant_id = @tenant_id AND j.status = 'waiting_review'
  AND (sqlc.narg('workflow')::text IS NULL OR j.workflow = sqlc.narg('workflow')::text)
ORDER BY j.paused_at, j.id
LIMIT @max_rows::integer;

-- name: JobListByIDs :many
-- A tenant's jobs among ids (the console's project page: each evaluation's current job).
SELECT * FROM jobs WHERE tenant_id = @tenant_id AND id = ANY(@ids::uuid[]);

-- name: JobListByThread :many
-- A tenant's jobs of one thread, newest first (the console's thread page).
SELECT * FROM jobs
WHERE tenant_id = @tenant_id AND thread_id = @thread_id
ORDER BY created_at DESC, id DESC
LIMIT @max_rows::integer;

-- name: JobSetRetryFrom :execrows
-- Marks a queued job as a fork: its run starts from the checkpoint retry_from.
UPDATE jobs
SET retry_from = @retry_from::text
WHERE id = @id AND tenant_id = @tenant_id AND status = 'queued';

-- name: JobThreadLock :exec
-- Serializes the transactions that start a job on one thread of a tenant (a
-- transaction-scoped advisory lock on it, held until commit). Run JobThreadActive after it,
-- as its own statement: its snapshot then includes a job another such transaction committed
-- while this one waited for the lock.
SELECT pg_advisory_xact_lock(hashtextextended(@tenant_id::text || '/' || @thread_id::text, 0));

-- name: JobThreadActive :one
-- How many of a tenant's jobs on the thread have a status that is not one of the terminal
-- ones, or are settling (their run still writes its last step: a job started now would take
-- a head about to move), 0 when every job of the thread has finished.
SELECT count(*) FROM jobs
WHERE tenant_id = @tenant_id AND thread_id = @thread_id
  AND (status <> ALL(@terminal::text[]) OR settling_until > now());
