-- Job counts per (tenant, workflow, status), kept by triggers on jobs as signed delta rows.

-- name: JobCountsList :many
SELECT workflow, status, sum(n)::bigint AS n
FROM job_counts
WHERE tenant_id = @tenant_id
GROUP BY workflow, status
HAVING sum(n) <> 0
ORDER BY workflow, status;

-- name: JobCountsTryLock :one
-- Compactions take this transaction-scoped lock; a reader that cannot get it just sums.
SELECT pg_try_advisory_xact_lock(@key::bigint);

-- name: JobCountsCompact :execrows
-- Folds the delta rows (of one tenant, or of all when tenant_id is NULL) into one row per
-- key; keys that have one row already are left alone. For one tenant (the dashboard's
-- CountJobs, at every request) it folds only once the tenant has more than 256 rows: the
-- sums read that many rows in well under a millisecond, and a read that writes nothing
-- commits without a WAL flush, where folding at every request rewrote the rows, flushed
-- the WAL and left dead tuples at the dashboard's request rate. Deltas inserted concurrently
-- are not in this statement's snapshot and stay as they are.
WITH mine AS (
    SELECT tenant_id, workflow, status FROM job_counts
    WHERE sqlc.narg('tenant_id')::text IS NULL OR tenant_id = sqlc.narg('tenant_id')::text
), keys AS (
    SELECT tenant_id, workflow, status FROM mine
    WHERE sqlc.narg('tenant_id')::text IS NULL OR (SELECT count(*) FROM mine) > 256
    GROUP BY tenant_id, workflow, status
    HAVING count(*) > 1
), gone AS (
    DELETE FROM job_counts c USING keys k
    WHERE c.tenant_id = k.tenant_id AND c.workflow = k.workflow AND c.status = k.status
    RETURNING c.tenant_id, c.workflow, c.status, c.n
)
INSERT INTO job_counts (tenant_id, workflow, status, n)
SELECT tenant_id, workflow, status, sum(n)::bigint
FROM gone
GROUP BY tenant_id, workflow, status
HAVING sum(n) <> 0;
